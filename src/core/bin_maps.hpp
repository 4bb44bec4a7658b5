// Fast sample -> slot maps that are exactly BinIndexer::slot() (bin_index.hpp),
// for the general-histogram GPU kernels (docs/PERFORMANCE-general.md, section 3).
// Host and device code: the unit tests run every map on the CPU against
// slot() (exhaustively for 16-bit samples, on edges +-2 ulps, specials and
// random probes for floats), and the kernels run the very same functions.
//
//   IntShiftMap  integer samples, even bins of width 2^k on integer bounds:
//                a subtraction, a compare and a shift.
//   even_slot    even bins, any sample type. Samples that are exactly floats
//                (8/16-bit integers, f32) first try a float guess whose error
//                is bounded on the host (margin path); a guess near an edge,
//                or any sample of a wider type, takes the exact double path
//                (guess from one multiply, both neighbouring edges checked,
//                numpy.linspace's edge arithmetic); a guess off by one there
//                takes slot() itself.
//   cells_slot   explicit edges, samples that are exactly floats: a table of
//                cells over the range, built on the host with the very same
//                float arithmetic as the lookup, so it is exact by
//                construction; a cell holding more than one edge falls back to
//                a binary search over float thresholds.
// Everything else (explicit edges of u32/i32/f64 samples, tables too large)
// uses slot() directly.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "levelhist/bin_index.hpp"
#include "levelhist/binning.hpp"
#include "levelhist/sample_type.hpp"

#if defined(__CUDACC__)
#define LEVELHIST_NOINLINE __noinline__
#else
#define LEVELHIST_NOINLINE __attribute__((noinline))
#endif

namespace levelhist::binmap {

// ---- arithmetic that is the same on both sides ------------------------------
// Round-to-nearest float operations, never contracted into FMA (the host build
// has -ffp-contract=off; on the device the intrinsics forbid it).
LEVELHIST_HD inline float f_sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
LEVELHIST_HD inline float f_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
LEVELHIST_HD inline std::uint32_t f_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
LEVELHIST_HD inline float f_from_bits(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
// 2^23 + floor(t) for 0 <= t < 2^23: one add rounded toward zero instead of a
// float-to-int conversion (conversions issue at 16/clk/SM, adds at 128).
LEVELHIST_HD inline float f_floor_magic(float t) {
#if defined(__CUDA_ARCH__)
  return __fadd_rz(t, 8388608.f);
#else
  return std::floor(t) + 8388608.f;
#endif
}

// Whether every value of T is exactly a float (so float comparisons decide its bin).
template <class T>
constexpr bool exact_in_float = sizeof(T) <= 2 || std::is_same_v<T, float>;

// The rare path of every map: THE binning function itself, kept out of line
// so the fast paths stay small.
LEVELHIST_HD LEVELHIST_NOINLINE inline std::uint32_t slow_slot(double x, BinIndexer ix) {
  return static_cast<std::uint32_t>(ix.slot(x));
}

// The smallest float >= d (host).
inline float ceil_f(double d) {
  if (d > static_cast<double>(std::numeric_limits<float>::max())) return std::numeric_limits<float>::infinity();
  if (d < -static_cast<double>(std::numeric_limits<float>::max())) return -std::numeric_limits<float>::max();
  float f = static_cast<float>(d);
  if (static_cast<double>(f) < d) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

// Range tests in float are exact for samples that are floats: x >= lower <=>
// x >= ceil_f(lower), x < upper <=> x < ceil_f(upper); NaN fails both.
struct FloatRange {
  float lo;        // ceil_f(lower)
  float hi;        // ceil_f(upper)
  float up;        // float(upper), with incl_eq: the one sample equal to upper
  bool incl_eq;    // numpy's rule and upper is a float: x == upper counts in bins - 1
  std::uint32_t bins;
  LEVELHIST_HD bool inside(float x) const { return x >= lo && x < hi; }
  // The slot of a sample that is not inside().
  LEVELHIST_HD std::uint32_t outside(float x) const {
    if (x != x) return bins + 2;
    if (x < lo) return bins;
    if (incl_eq && x == up) return bins - 1;
    return bins + 1;
  }
};
inline FloatRange make_float_range(const Binning& b) {
  FloatRange r;
  r.lo = ceil_f(b.lower());
  r.hi = ceil_f(b.upper());
  r.up = static_cast<float>(b.upper());
  r.incl_eq = b.last_bin_inclusive() && static_cast<double>(r.up) == b.upper();
  r.bins = static_cast<std::uint32_t>(b.bins());
  return r;
}

// ---- integer samples, even bins of width 2^k on integer bounds ----------------
// Edges lower + i * 2^k are exact doubles, so for an integer x slot(x) is
// floor((x - lower) / 2^k) inside [lower, upper). Narrow (32-bit arithmetic)
// serves 8/16-bit samples when |lower| <= 2^30 and the span fits; Wide 64-bit.
template <bool Wide>
struct IntShiftMap {
  using Int = std::conditional_t<Wide, std::int64_t, std::int32_t>;
  using UInt = std::make_unsigned_t<Int>;
  Int lower;
  UInt last;  // in range: 0 <= x - lower <= last (span - 1; span with numpy's rule)
  std::uint32_t shift;
  std::uint32_t bins;
  // Without branches, every case computed and one selected: in a GPU loop the
  // two early returns cost a convergence barrier, a branch and a reload of
  // `shift` a sample (sm_90 SASS: 17 instructions a sample of u16 into 4096
  // bins in gpu_shared_swizzle, the add included).
  LEVELHIST_HD std::uint32_t operator()(Int x) const {
    const Int d = x - lower;
    const UInt u = static_cast<UInt>(d);  // d < 0 wraps to >= 2^(bits - 1), above `last`
    const UInt b = u >> shift;
    const std::uint32_t in_range = b < bins ? static_cast<std::uint32_t>(b) : bins - 1;  // numpy's x == upper
    const std::uint32_t flow = bins + 1 - static_cast<std::uint32_t>(u >> (8 * sizeof(UInt) - 1));  // d < 0: bins
    return u <= last ? in_range : flow;
  }
};

// The shift k when `b`'s bins are [lower + i 2^k, lower + (i+1) 2^k) with exact
// integer edges, else -1.
inline int int_shift_of(const Binning& b) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (b.kind() != BinKind::even || b.rounding() != EdgeRounding::none) return -1;
  const double lo = b.lower(), hi = b.upper();
  if (std::floor(lo) != lo || std::fabs(lo) > kExact || std::fabs(hi) > kExact || hi - lo > kExact) return -1;
  const double step = (hi - lo) / static_cast<double>(b.bins());
  int e = 0;
  if (std::frexp(step, &e) != 0.5 || e < 1 || e > 63) return -1;  // step = 2^(e-1) >= 1
  if (step * static_cast<double>(b.bins()) != hi - lo) return -1;
  return e - 1;
}

// Whether IntShiftMap serves samples of `type` on `b` (integer samples; for the
// narrow map of 8/16-bit samples also the 32-bit bounds).
inline bool int_shift_applies(SampleType type, const Binning& b) {
  if (!is_integer(type) || int_shift_of(b) < 0) return false;
  if (sample_size(type) == 4) return true;
  const double span = b.upper() - b.lower();
  return std::fabs(b.lower()) <= 1073741824.0 && span <= 2147483647.0;
}

template <bool Wide>
IntShiftMap<Wide> make_int_shift(const Binning& b) {
  using M = IntShiftMap<Wide>;
  M m{};
  const double span = b.upper() - b.lower();
  m.lower = static_cast<typename M::Int>(b.lower());
  m.last = static_cast<typename M::UInt>(b.last_bin_inclusive() ? span : span - 1);
  m.shift = static_cast<std::uint32_t>(int_shift_of(b));
  m.bins = static_cast<std::uint32_t>(b.bins());
  return m;
}

// Unit-width bins that cover every value of an 8/16-bit sample type (one bin
// per value, or wider ranges around it): the slot is the sample minus the lower
// bound, no range checks. One subtraction instead of IntShiftMap's five
// operations matters where the loop is issue-bound: u16 with 65536 bins in
// gpu_split_bins counts every sample in two blocks (docs/PERFORMANCE-general.md).
struct DirectMap {
  std::int32_t lower;
  LEVELHIST_HD std::uint32_t operator()(std::int32_t x) const { return static_cast<std::uint32_t>(x - lower); }
};

inline bool direct_applies(SampleType type, const Binning& b) {
  if (!int_shift_applies(type, b) || int_shift_of(b) != 0 || sample_size(type) > 2) return false;
  const bool is_signed = type == SampleType::i8 || type == SampleType::i16;
  const int bits = 8 * static_cast<int>(sample_size(type));
  const double type_min = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double type_max = (is_signed ? -type_min : std::ldexp(1.0, bits)) - 1;
  return b.lower() <= type_min && b.upper() > type_max;  // every value in [lower, upper): no under/overflow
}

inline DirectMap make_direct(const Binning& b) { return DirectMap{static_cast<std::int32_t>(b.lower())}; }

// ---- even bins, any sample type -------------------------------------------------
// The least float at or above e (a finite double): for a float x, x >= e
// exactly when x >= this float.
LEVELHIST_HD inline float float_at_or_above(double e) {
  float f = static_cast<float>(e);  // nearest
  if (static_cast<double>(f) < e) f = ::nextafterf(f, INFINITY);
  return f;
}

struct EvenParams {
  BinIndexer ix;  // even binning: no edge pointer
  FloatRange range;
  // The float guess t = fl(fl(x - flo) * fsc) is within `delta` bins of the
  // exact coordinate, edge rounding included (docs/PERFORMANCE-general.md): a
  // fractional part in [delta, 1 - delta] proves floor(t) is the bin.
  bool margin;
  float flo, fsc, delta, one_minus_delta;
};

inline EvenParams make_even_params(const Binning& b) {
  EvenParams p{};
  p.ix = make_indexer(b);
  p.range = make_float_range(b);
  const double bins = static_cast<double>(b.bins());
  const double lower = b.lower(), upper = b.upper();
  const double W = (upper - lower) / bins;
  p.flo = static_cast<float>(lower);
  p.fsc = static_cast<float>(p.ix.scale);
  const double flo_err = std::fabs(static_cast<double>(p.flo) - lower);
  // |t - u| <= 3.0001 * 2^-24 * bins + 1.0001 * |flo - lower| / W (three float
  // roundings and flo's offset); the double edges deviate from lower + i W by
  // at most 3.02 * 2^-53 * bins + 1.02 * 2^-53 * max|bound| / W bins.
  const double largest = std::max(std::fabs(lower), std::fabs(upper));
  double delta = 3.0001 * 0x1p-24 * bins + 1.0001 * flo_err / W + 3.02 * 0x1p-53 * bins +
                 1.02 * 0x1p-53 * largest / W + 0x1p-40;
  // Float32 edges (EdgeRounding) move further from lower + i W:
  //  * f32: the double edge origin + i step is rounded, by at most 2^-24 |e_i|
  //    (2^-150 below the normal range); origin and step were computed from the
  //    unrounded bounds, which lie within 2^-24 `largest` of lower and upper, so
  //    origin + i step is within 3 * 2^-24 `largest` of lower + i W: 4 in all;
  //  * f32_arithmetic: s = f32(f32(upper - lower) / f32(k)) is W within three
  //    float roundings (3.0001 * 2^-24 k bins at edge k); f32(i s) is off by at
  //    most 2^-24 * 2 `largest`, and the final rounding by 2^-24 `largest`.
  switch (b.rounding()) {
    case EdgeRounding::none: break;
    case EdgeRounding::f32: delta += 4.01 * 0x1p-24 * largest / W + 0x1p-149 / W; break;
    case EdgeRounding::f32_arithmetic:
      delta += 3.0001 * 0x1p-24 * bins + 3.01 * 0x1p-24 * largest / W + 0x1p-148 / W;
      break;
  }
  float df = static_cast<float>(delta);
  if (static_cast<double>(df) < delta) df = std::nextafter(df, std::numeric_limits<float>::infinity());
  p.delta = df;
  p.one_minus_delta = std::nextafter(static_cast<float>(1.0 - static_cast<double>(df)), 0.0f);
  p.margin = delta < 0.25 && b.bins() <= (std::uint64_t{1} << 22) && std::isnormal(p.fsc) && std::isfinite(p.flo) &&
             std::fabs(lower) < 1e37 && std::fabs(upper) < 1e37;
  return p;
}

// The exact double path for a sample inside [lower, upper): guess, check both
// neighbouring edges (numpy.linspace's arithmetic, even_edge()), else slot().
template <EdgeRounding R>
LEVELHIST_HD inline std::uint32_t even_slot_double_as(double x, const BinIndexer& ix) {
#if defined(__CUDA_ARCH__)
  const double t = __dmul_rn(__dsub_rn(x, ix.lower), ix.scale);
#else
  const double t = (x - ix.lower) * ix.scale;
#endif
  const std::uint32_t last = static_cast<std::uint32_t>(ix.bins - 1);
  std::uint32_t b = t < static_cast<double>(last) ? static_cast<std::uint32_t>(t) : last;
  bool ok = x >= ix.template even_edge_as<R>(b);
  if (b < last) ok = ok && x < ix.template even_edge_as<R>(b + 1);
  return ok ? b : slow_slot(x, ix);
}
// The edge rounding is the same for every sample of a call: one branch, then
// a path with only that rounding's arithmetic.
LEVELHIST_HD inline std::uint32_t even_slot_double(double x, const BinIndexer& ix) {
  switch (ix.rounding) {
    case EdgeRounding::f32: return even_slot_double_as<EdgeRounding::f32>(x, ix);
    case EdgeRounding::f32_arithmetic: return even_slot_double_as<EdgeRounding::f32_arithmetic>(x, ix);
    default: return even_slot_double_as<EdgeRounding::none>(x, ix);
  }
}
// The same, out of line: the float margin's rare path, so the fast loop stays small.
LEVELHIST_HD LEVELHIST_NOINLINE inline std::uint32_t even_slot_double_call(double x, BinIndexer ix) {
  return even_slot_double(x, ix);
}

// The float margin's two steps, apart for a GPU kernel that remembers its last
// sample next to an edge (general_common.cuh, EvenMap): the guess, which
// decides every sample at least `delta` of a bin from an edge, and the
// comparison with the nearest edge for the others. x inside the range.
struct EvenGuess {
  std::uint32_t bin;  // floor(t)
  float fraction;     // t - floor(t), exact
};
LEVELHIST_HD inline EvenGuess even_guess(float xf, const EvenParams& p) {
  const float t = f_mul(f_sub(xf, p.flo), p.fsc);
  const float tm = f_floor_magic(t);
  return {f_bits(tm) - 0x4B000000u, f_sub(t, f_sub(tm, 8388608.f))};
}
LEVELHIST_HD inline bool even_guess_decides(const EvenGuess& e, const EvenParams& p) {
  return e.fraction >= p.delta && e.fraction <= p.one_minus_delta && e.bin < p.range.bins;
}
// Next to an edge (every sample of data that sits on edges): t is within
// delta < 1/4 of the exact coordinate, so only the edge nearest t can lie
// between x and floor(t); one exact comparison with that edge (even_edge(),
// numpy's arithmetic) decides. t >= 0 inside the range (x >= ceil_f(lower) >=
// flo), so the guess's bin is floor(t). A sample in the first or last
// half-bin's margin is in bin 0 or bins - 1: inside() holds.
template <class T>
LEVELHIST_HD inline std::uint32_t even_near_edge(T x, float xf, const EvenGuess& e, const EvenParams& p,
                                                 const float* thresholds) {
  const std::uint32_t near = e.fraction < 0.5f ? e.bin : e.bin + 1;
  if (near == 0) return 0;
  if (near >= p.range.bins) return p.range.bins - 1;
  // With the edges' float thresholds at hand (the GPU kernels keep them in
  // shared memory): x >= edge exactly when the float x >= the least float at
  // or above the edge, one float comparison instead of the edge's double
  // arithmetic.
  if (thresholds) return xf >= thresholds[near] ? near : near - 1;
  return static_cast<double>(x) >= p.ix.even_edge(near) ? near : near - 1;
}

template <class T>
LEVELHIST_HD inline std::uint32_t even_slot(T x, const EvenParams& p, const float* thresholds = nullptr) {
  if constexpr (exact_in_float<T>) {
    const float xf = static_cast<float>(x);
    if (!p.range.inside(xf)) return p.range.outside(xf);
    if (p.margin) {
      const EvenGuess e = even_guess(xf, p);
      if (even_guess_decides(e, p)) return e.bin;
      return even_near_edge(x, xf, e, p, thresholds);
    }
    return even_slot_double_call(static_cast<double>(x), p.ix);
  } else {
    const double xd = static_cast<double>(x);
    if (!(xd >= p.ix.lower && xd < p.ix.upper)) {
      if (xd != xd) return p.range.bins + 2;
      if (xd < p.ix.lower) return p.range.bins;
      return (p.ix.last_bin_inclusive && xd == p.ix.upper) ? p.range.bins - 1 : p.range.bins + 1;
    }
    return even_slot_double(xd, p.ix);
  }
}

// ---- explicit edges, samples that are floats: the cell table -------------------
struct alignas(8) CellEntry {
  std::uint32_t base;       // bin of the cell's first float, or kSearch
  std::uint32_t threshold;  // bits of the one edge threshold inside the cell (+inf if none)
};
inline constexpr std::uint32_t kSearch = 0xFFFFFFFFu;

struct CellParams {
  FloatRange range;
  std::uint32_t half;   // binary search over thresholds[0 .. 2 * half): half a power of two >= bins
  std::uint32_t cells;  // table entries
  float csc;            // cells / (hi - lo)
  float cmax;           // cells - 0.5
};

LEVELHIST_HD inline std::uint32_t cell_of(float x, float lo, float csc, float cmax) {
  float t = f_mul(f_sub(x, lo), csc);
  t = ::fminf(::fmaxf(t, 0.f), cmax);
  return f_bits(f_floor_magic(t)) - 0x4B000000u;
}

// The last threshold <= x (thresholds[0] <= x assumed; +inf padding beyond bins).
LEVELHIST_HD inline std::uint32_t search_thresholds(float x, const float* thresholds, std::uint32_t half) {
  std::uint32_t pos = 0;
  for (std::uint32_t s = half; s; s >>= 1)
    if (thresholds[pos + s] <= x) pos += s;
  return pos;
}

LEVELHIST_HD inline std::uint32_t cells_slot(float x, const CellParams& p, const CellEntry* table,
                                             const float* thresholds) {
  if (!p.range.inside(x)) return p.range.outside(x);
  const CellEntry e = table[cell_of(x, p.range.lo, p.csc, p.cmax)];
  if (e.base == kSearch) return search_thresholds(x, thresholds, p.half);
  return e.base + (x >= f_from_bits(e.threshold) ? 1u : 0u);
}

// The slots of N samples at once, equal to cells_slot of each: every table
// load first, then the compares, the rare search only where a sample needs
// it, and the samples outside the range by selects. In a GPU loop cells_slot's
// two branches a sample end the scheduler's block at each sample, so each
// sample's shared load waited for the one before it; here the N loads go out
// together (docs/PERFORMANCE-general.md, section 20).
template <int N>
LEVELHIST_HD inline void cells_slots(const float (&x)[N], std::uint32_t (&slot)[N], const CellParams& p,
                                     const CellEntry* table, const float* thresholds) {
  CellEntry e[N];
  for (int k = 0; k < N; ++k) e[k] = table[cell_of(x[k], p.range.lo, p.csc, p.cmax)];  // any x: the cell clamped, NaN to 0
  bool search = false;
  for (int k = 0; k < N; ++k) {
    slot[k] = e[k].base + (x[k] >= f_from_bits(e[k].threshold) ? 1u : 0u);
    search |= e[k].base == kSearch;
  }
  if (search)
    for (int k = 0; k < N; ++k)
      if (e[k].base == kSearch) slot[k] = search_thresholds(x[k], thresholds, p.half);
  // FloatRange::outside, as selects. outside() itself keeps its branches: its
  // callers take it for one sample already outside, and written as selects
  // it gave the even-map kernels other registers (the split layout's u16
  // kernel a spill). The CPU test holds the two to the same slots.
  for (int k = 0; k < N; ++k) {
    const FloatRange& r = p.range;
    std::uint32_t out = r.incl_eq && x[k] == r.up ? r.bins - 1 : r.bins + 1;
    out = x[k] < r.lo ? r.bins : out;
    out = x[k] != x[k] ? r.bins + 2 : out;
    slot[k] = r.inside(x[k]) ? slot[k] : out;
  }
}

// The host side of a cell table: parameters, entries and thresholds.
struct CellTable {
  CellParams params{};
  std::vector<CellEntry> entries;
  std::vector<float> thresholds;  // 2 * half floats (at least 2), +inf padded
  std::uint32_t searched = 0;     // cells that need the binary search
};

// The largest table build_cell_table makes (8 bytes per cell).
inline constexpr std::uint32_t kMaxCells = 8192;

// A table for explicit edges `b`, with at least 2 cells per bin (64 at least)
// and more until no cell holds two thresholds or kMaxCells is reached.
inline CellTable build_cell_table(const Binning& b) {
  CellTable t;
  CellParams& p = t.params;
  p.range = make_float_range(b);
  const std::uint32_t bins = p.range.bins;
  std::vector<float> thr(bins + 1);
  for (std::uint32_t i = 0; i <= bins; ++i) thr[i] = ceil_f(b.edge(i));
  std::uint32_t P = 1;
  while (P < bins) P *= 2;
  p.half = P / 2;
  t.thresholds.assign(std::max<std::uint32_t>(P, 2), std::numeric_limits<float>::infinity());
  for (std::uint32_t i = 0; i < bins; ++i) t.thresholds[i] = thr[i];
  const float lo = p.range.lo, hi = p.range.hi;
  const float inf_bits_as = std::numeric_limits<float>::infinity();
  std::uint32_t cells = 64;
  while (cells < 2 * bins && cells < kMaxCells) cells *= 2;
  for (;; cells *= 2) {
    p.cells = cells;
    // csc so that the cell of the largest in-range float stays below `cells`: clamped anyway.
    p.csc = static_cast<float>(static_cast<double>(cells) / (static_cast<double>(hi) - static_cast<double>(lo)));
    if (!std::isfinite(p.csc) || !(p.csc > 0)) p.csc = 0.0f;  // degenerate range: one cell, all searched
    p.cmax = static_cast<float>(cells) - 0.5f;
    // For each cell: the bin of its first in-range float and the thresholds inside it.
    std::vector<int> diff(cells + 1, 0);
    std::vector<std::vector<float>> inside(cells);
    for (std::uint32_t i = 1; i < bins; ++i) {
      const float e = thr[i];
      if (!(e < hi)) continue;  // no in-range float reaches it
      if (e <= lo) {            // every in-range float is at or above it
        diff[0]++;
        continue;
      }
      const float before = std::nextafter(e, -std::numeric_limits<float>::infinity());
      const std::uint32_t cb = cell_of(before, lo, p.csc, p.cmax), ce = cell_of(e, lo, p.csc, p.cmax);
      diff[cb + 1]++;  // floats in later cells are all >= e (cell_of is monotone)
      if (cb == ce) inside[ce].push_back(e);
    }
    t.entries.assign(cells, CellEntry{});
    t.searched = 0;
    int running = 0;
    for (std::uint32_t c = 0; c < cells; ++c) {
      running += diff[c];
      if (inside[c].size() > 1) {
        t.entries[c] = CellEntry{kSearch, 0};
        ++t.searched;
      } else {
        t.entries[c] = CellEntry{static_cast<std::uint32_t>(running),
                                 f_bits(inside[c].empty() ? inf_bits_as : inside[c][0])};
      }
    }
    if (t.searched == 0 || cells >= kMaxCells) break;
  }
  return t;
}

}  // namespace levelhist::binmap
