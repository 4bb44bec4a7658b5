// gpu_joint: N-d histograms (Request::joint): 2 to 4 coordinates per point,
// interleaved or in separate arrays; auto's choice for N-d points on the GPU.
//
// A point's slot is the sum of its axes' slots times their strides, each
// axis's slot by the exact bin maps of general_common.cuh (one kind for all
// axes: direct, integer shift or even bins when every axis can take it, else
// BinIndexer::slot). A grid of resident blocks takes chunks of points in turn
// and counts them into a shared-memory histogram that it keeps for the whole
// call, adding it to the output once, at the end (a block's work is then
// its points, not its chunks times the histogram's slots).
//
// The counters' width decides how many slots fit on chip:
// - 32 bits, when the histogram fits (small ones in several copies that the
//   warps take in turn, so warps do not contend for one counter);
// - 16 bits, two to a word, when only that fits: the 256 x 256 joint histogram
//   of two 8-bit images (259^2 = 67081 slots, 134 KB instead of 268 KB). A
//   16-bit half that an addition takes to 2^14 or more is put on a short list
//   (the atomic's old value says so), and at the barrier after each chunk the
//   block moves the listed halves to the output. A chunk adds at most 3 x 2^14
//   points, so no half passes 2^16 - 1 before its barrier: the counts are
//   exact on any data; a list that fills makes that barrier scan every half.
//   (Sweeping every half instead, without reading the atomics' old values,
//   measured 25-30% slower: docs/PERFORMANCE-shapes.md, N-d change 7.)
//   Two byte columns at 16-byte boundaries take byte_pairs_kernel instead: the
//   same bound and drains, counted by raw byte pair, its blocks' counts summed
//   as floats in the workspace (256 KiB) and folded into the slots by a second
//   kernel (below).
// - 32 bits in parts when neither fits: each chunk is counted by one block per
//   part, the blocks of one chunk next to each other (the second reads it from
//   L2), each block keeping its one part.
//
// Level performance: each thread keeps the slot and the length of its current
// run of equal slots and adds the run when it ends, so a constant image costs
// one shared atomic per run, not per point; with the generic map it also
// keeps its last point, and maps a point equal to it no more, and with even
// bins the last coordinate of each axis that fell next to an edge (points
// piled on an edge would take the near-edge comparison on every coordinate).
// Separate 8/16-bit or f32 columns aligned to 16 bytes are read with 16-byte
// loads (16 points of u8 per load per column), and so are 2-D points side by side (x0 y0 x1 y1 ...: 2 points
// of f32 per load), the next ones in flight while the current ones are
// counted. Even bins keep their edges' float thresholds in shared memory (the
// near-edge comparison of general_common.cuh).
#include <algorithm>
#include <string>

#include "core/env_knob.hpp"
#include "core/strategies.hpp"
#include "cuda/general_common.cuh"

namespace levelhist::cuda_detail::joint {
namespace {

using namespace general;

// Threads per block: 1024 for 2-D points (at most 64 registers there, and
// the one block an SM holds with a 16-bit 256 x 256 histogram then has 32
// warps to hide its loads), 512 for 3 and 4 axes (more registers).
constexpr int threads_for(unsigned axes) { return axes == 2 ? 1024 : 512; }
constexpr std::uint64_t kChunkPoints = 64 * 1024;        // points per chunk (32-bit counters)
// 16-bit counters: at most 3 x 2^14 points between barriers, and a half that
// reaches 2^14 drained at the next one (below it, a chunk cannot take a half
// past 2^16 - 1): three 16-byte loads of u8 a thread between barriers. With
// 2^15 points (two loads) and 2^15 the limit, two u8 images measured 32% /
// 48% of the read limit (noise / constant), 33% / 55% this way (H200;
// docs/PERFORMANCE-shapes.md).
constexpr std::uint64_t kPackedChunkPoints = 48 * 1024;
constexpr std::uint32_t kMaxCopies = 8;
constexpr std::uint32_t kHalfLimit = 0x10000 - kPackedChunkPoints;  // a 16-bit half at or above this is drained
static_assert(kPackedChunkPoints < 0x10000 && kPackedChunkPoints % 16 == 0);
constexpr std::uint32_t kDrainListDefault = 1024;    // halves listed per chunk before a full scan

__device__ __forceinline__ std::uint64_t umin(std::uint64_t a, std::uint64_t b) { return a < b ? a : b; }

// wide: 32-bit; packed: 16-bit with the drain list.
enum class Counters { wide, packed };

struct Work {
  const unsigned char* columns[kMaxAxes];
  std::uint64_t stride;  // bytes from one point's coordinate to the next's, per column
  std::uint64_t n;       // points
  unsigned axes;
  std::uint32_t axis_stride[kMaxAxes];  // flat stride of each axis
  std::uint32_t part_slots;             // slots per part (the last part may have fewer)
  std::uint32_t parts;
  std::uint64_t total_slots;
  std::uint64_t chunks;
  std::uint64_t chunk_points;
  std::uint32_t copies;
  std::uint32_t counter_words;  // 32-bit words of one copy
  std::uint32_t drain_capacity; // packed: entries of the drain list
  bool vector;          // separate columns, all 16-byte aligned: 16-byte loads
  bool pairs;           // 2-D points side by side (x0 y0 x1 y1 ..): 16-byte loads of whole points
  bool two_values;      // byte pairs: vectors of at most two values a column counted by class (below)
  std::uint32_t two_values_skip;  // vectors a thread skips that test for after a vector fails it
  bool aligned;         // every coordinate aligned to its size: plain loads
  std::uint32_t lead;   // pairs: points before the first 16-byte boundary, at columns[0] - lead points
  std::uint32_t table_offset[kMaxAxes];  // where each axis's map keeps its table in shared memory
  std::uint64_t* out;
  float* pair_sums;     // byte pairs: the workspace's float sum per raw pair (nullptr: the 64-bit end)
};

// This block's counters: the slots [lo, lo + count) of the histogram, in one
// copy (`mine`) of `copies`.
template <Counters C>
struct BlockCounters {
  unsigned* words;  // all copies
  unsigned* mine;   // this warp's copy
  std::uint32_t lo, count;
  // packed: the drain list and its two counters (one per chunk parity)
  unsigned* list;
  unsigned* listed;
  unsigned parity;
  std::uint32_t capacity;

  __device__ __forceinline__ void add(std::uint32_t slot, std::uint32_t length) {
    const std::uint32_t s = slot - lo;
    if (s >= count) return;  // another part's slot
    if constexpr (C == Counters::wide) {
      atomicAdd(mine + s, length);
    } else {
      const unsigned shift = (s & 1) * 16;
      const unsigned old = atomicAdd(mine + s / 2, length << shift);
      const unsigned half = (old >> shift) & 0xFFFFu;
      if (half < kHalfLimit && half + length >= kHalfLimit) {
        const unsigned i = atomicAdd(listed + parity, 1u);
        if (i < capacity) list[i] = static_cast<unsigned>(mine - words) * 2 + s;
      }
    }
  }
};

// The run of equal slots a thread is adding up.
struct Run {
  std::uint32_t slot = 0xFFFFFFFFu;
  unsigned length = 0;
  template <class Sink>
  __device__ __forceinline__ void add(std::uint32_t s, Sink& c) {
    if (s == slot) {
      ++length;
      return;
    }
    flush(c);
    slot = s;
    length = 1;
  }
  // Two points at once, as the vector loops read them: equal slots go on
  // with the run (a constant costs one comparison a pair, no atomic); two
  // different ones end it and are added singly, without the run's
  // bookkeeping for each (uniform data: about 4 instructions a point where
  // add() took about 15; docs/PERFORMANCE-shapes.md, N-d change 10).
  template <class Sink>
  __device__ __forceinline__ void add2(std::uint32_t s0, std::uint32_t s1, Sink& c) {
    if (s0 == s1) {
      if (s0 == slot) {
        length += 2;
        return;
      }
      flush(c);
      slot = s0;
      length = 2;
      return;
    }
    flush(c);
    c.add(s0, 1u);
    c.add(s1, 1u);
  }
  template <class Sink>
  __device__ __forceinline__ void flush(Sink& c) {
    if (length) c.add(slot, length);
    length = 0;
  }
};

template <class T, class Map>
__device__ __forceinline__ std::uint32_t slot_of(const T (&x)[kMaxAxes], const Map (&maps)[kMaxAxes], const Work& w,
                                                 unsigned axes) {
  std::uint32_t s = 0;
#pragma unroll
  for (unsigned a = 0; a < kMaxAxes; ++a)
    if (a < axes) s += maps[a](x[a]) * w.axis_stride[a];
  return s;
}

// What a thread remembers so that a constant region or points piled on one
// spot are not mapped again and again:
// - the generic map keeps the last point and its slot, and maps a point
//   equal to it no more;
// - even bins keep, per axis, the last coordinate that fell next to an edge
//   and its bin (EvenMap's NearEdgeMemo): only such a coordinate costs more
//   than its float guess, so coordinates the guess decides compare with
//   nothing. Comparing every point, as the generic map does, measured 9%
//   slower on uniform 2-D f32 points (and 1.2x faster on a constant point on
//   an edge); comparing the whole point only after one next to an edge, 17%
//   slower on uniform points and no faster on the constant (H200;
//   docs/PERFORMANCE-shapes.md, N-d change 8).
// NaN never equals itself, so such a point or coordinate is always mapped.
template <class T, class Map, bool kPairGuess = true>
struct LastPoint {
  T x[kMaxAxes];
  std::uint32_t slot = 0;
  bool valid = false;
  typename EvenMap<T>::NearEdgeMemo memo[kMaxAxes];
  // Even maps of 2-D points: the last point the float guesses did not decide
  // (its slot in `slot`); NaN, which equals nothing, at first.
  float undecided[2] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()};
  __device__ __forceinline__ std::uint32_t slot_of(const T (&p)[kMaxAxes], const Map (&maps)[kMaxAxes], const Work& w,
                                                   unsigned axes) {
    if constexpr (std::is_same_v<Map, GenericMap<T>>) {
      bool same = valid;
#pragma unroll
      for (unsigned a = 0; a < kMaxAxes; ++a)
        if (a < axes) same = same && p[a] == x[a];
      if (same) return slot;
      slot = joint::slot_of(p, maps, w, axes);
#pragma unroll
      for (unsigned a = 0; a < kMaxAxes; ++a) x[a] = p[a];
      valid = true;
      return slot;
    } else if constexpr (std::is_same_v<Map, EvenMap<T>>) {
      if constexpr (binmap::exact_in_float<T>) {
        // 2-D points: both coordinates' float guesses, and one test that both
        // decide (each guess's bin test also refuses a coordinate outside the
        // range or NaN: its bin is then >= bins), before any per-axis branch.
        // The per-axis path below tests the range, then the guess, with a
        // branch each: about 42 instructions for the two coordinates and the
        // slot, against about 31 here, in a kernel bound by its instructions
        // (docs/PERFORMANCE-shapes.md, N-d change 9).
        // A point the guesses do not decide is compared with the last such
        // point first: a constant point on an edge pays the guesses and one
        // comparison, not the per-axis path as well.
        if (kPairGuess && axes == 2) {
          if (!(maps[0].p.margin && maps[1].p.margin))
            return maps[0](p[0]) * w.axis_stride[0] + maps[1](p[1]) * w.axis_stride[1];
          const float x0 = static_cast<float>(p[0]), x1 = static_cast<float>(p[1]);
          const binmap::EvenGuess e0 = binmap::even_guess(x0, maps[0].p);
          const binmap::EvenGuess e1 = binmap::even_guess(x1, maps[1].p);
          if (binmap::even_guess_decides(e0, maps[0].p) & binmap::even_guess_decides(e1, maps[1].p))
            return e0.bin * w.axis_stride[0] + e1.bin * w.axis_stride[1];
          if ((x0 == undecided[0]) & (x1 == undecided[1])) return slot;
          undecided[0] = x0;
          undecided[1] = x1;
          slot = maps[0](p[0]) * w.axis_stride[0] + maps[1](p[1]) * w.axis_stride[1];
          return slot;
        }
      }
      std::uint32_t s = 0;
#pragma unroll
      for (unsigned a = 0; a < kMaxAxes; ++a)
        if (a < axes) s += maps[a](p[a], memo[a]) * w.axis_stride[a];
      return s;
    } else {
      return joint::slot_of(p, maps, w, axes);
    }
  }
};

// Moves every listed half (or, when the list overflowed, every half at or
// above the limit) to the output. Between two barriers: no addition runs.
__device__ void drain_packed(BlockCounters<Counters::packed>& c, const Work& w) {
  const unsigned listed = c.listed[c.parity];
  if (threadIdx.x == 0) c.listed[c.parity ^ 1u] = 0;  // the next chunk's list (the last chunk's, read before)
  const std::uint32_t halves_per_copy = w.counter_words * 2;
  auto drain = [&](unsigned h) {
    const unsigned shift = (h & 1) * 16;
    const unsigned old = atomicAnd(c.words + h / 2, ~(0xFFFFu << shift));  // both halves of a word may be listed
    add_to_slot(w.out + c.lo + h % halves_per_copy, (old >> shift) & 0xFFFFu);
  };
  if (listed <= c.capacity) {
    for (unsigned i = threadIdx.x; i < listed; i += blockDim.x) drain(c.list[i]);
  } else {
    for (std::uint32_t word = threadIdx.x; word < w.counter_words * w.copies; word += blockDim.x) {
      const unsigned v = c.words[word];
      if ((v & 0xFFFFu) >= kHalfLimit) drain(word * 2);
      if ((v >> 16) >= kHalfLimit) drain(word * 2 + 1);
    }
  }
}

// kAxes: 2 for the common 2-D case (the compiler then maps two coordinates a
// point, not four with two discarded), 0 for a count read from w (2 to 4).
// kPairGuess: false only for the study of the 2-D even path and the pairs of
// points added at once against the per-axis path and the point-by-point run
// (LEVELHIST_JOINT_PAIR_GUESS=0, even maps of 2-D points).
template <class T, class Map, Counters C, unsigned kAxes, bool kPairGuess = true>
__global__ void __launch_bounds__(threads_for(kAxes)) joint_kernel(Work w, Map m0, Map m1, Map m2, Map m3) {
  const unsigned axes = kAxes ? kAxes : w.axes;
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* words = reinterpret_cast<unsigned*>(smem);
  Map maps[kMaxAxes] = {m0, m1, m2, m3};
  const std::uint32_t all_words = w.counter_words * w.copies;
  BlockCounters<C> c;
  c.words = words;
  c.mine = words + ((threadIdx.x / 32) % w.copies) * w.counter_words;
  const std::uint32_t part = blockIdx.x % w.parts;
  c.lo = part * w.part_slots;
  c.count = static_cast<std::uint32_t>(umin(w.part_slots, w.total_slots - c.lo));
  c.list = words + all_words;
  c.listed = c.list + w.drain_capacity;
  c.parity = 0;
  c.capacity = w.drain_capacity;
  for (std::uint32_t i = threadIdx.x; i < all_words; i += blockDim.x) words[i] = 0;
  if (C == Counters::packed && threadIdx.x < 2) c.listed[threadIdx.x] = 0;
#pragma unroll
  for (unsigned a = 0; a < kMaxAxes; ++a)  // the maps' tables (even bins' edge thresholds)
    if (a < axes) maps[a].setup(smem + w.table_offset[a]);
  __syncthreads();
  if constexpr (kAxes == 2) {
    // Side-by-side points before the first 16-byte boundary: block 0 adds them
    // to the output itself, not to its counters (whose chunks of 16-bit
    // counters may take no more than kPackedChunkPoints points).
    if (w.pairs && blockIdx.x == 0 && threadIdx.x < w.lead) {
      const T* at = reinterpret_cast<const T*>(w.columns[0]) - 2 * std::uint64_t{w.lead} + 2 * threadIdx.x;
      const T x[kMaxAxes] = {at[0], at[1], T{}, T{}};
      add_to_slot(w.out + slot_of(x, maps, w, 2), 1u);
    }
  }
  // Block b counts part b % parts of chunks b / parts, b / parts + groups, ...
  const std::uint64_t groups = gridDim.x / w.parts;
  constexpr int K = kPerVector<T>;  // points per 16-byte load of each column (vector path)
  uint4 next[kMaxAxes] = {};
  // Loads vector v (16-byte loads, one per axis) of the chunk whose first point is p0.
  auto load = [&](std::uint64_t p0, std::uint64_t v) {
#pragma unroll
    for (unsigned a = 0; a < kMaxAxes; ++a)
      if (a < axes) next[a] = __ldcs(reinterpret_cast<const uint4*>(w.columns[a]) + (p0 / K + v));
  };
  bool loaded = false;  // next[] holds this thread's first vector of the chunk about to start
  LastPoint<T, Map, kPairGuess> last;
  for (std::uint64_t chunk = blockIdx.x / w.parts; chunk < w.chunks; chunk += groups) {
    const std::uint64_t p0 = chunk * w.chunk_points, p1 = umin(w.n, p0 + w.chunk_points);
    Run run;
    if (w.vector) {
      // p0 is a multiple of 16 points. The next vector's loads are in flight
      // while these are counted, across the chunks' barriers too.
      const std::uint64_t vectors = (p1 - p0) / K;
      std::uint64_t v = threadIdx.x;
      if (!loaded && v < vectors) load(p0, v);
      loaded = false;
      for (; v < vectors; v += blockDim.x) {
        T x_all[kMaxAxes][K];
#pragma unroll
        for (unsigned a = 0; a < kMaxAxes; ++a)
          if (a < axes) unpack(next[a], x_all[a]);
        if (v + blockDim.x < vectors) {
          load(p0, v + blockDim.x);
        } else if (chunk + groups < w.chunks) {
          const std::uint64_t q0 = (chunk + groups) * w.chunk_points;
          if (threadIdx.x < (umin(w.n, q0 + w.chunk_points) - q0) / K) {
            load(q0, threadIdx.x);
            loaded = true;
          }
        }
#pragma unroll
        for (int k = 0; k < K; k += 2) {  // K is even (16 bytes of 1- to 8-byte samples)
          T x[kMaxAxes], y[kMaxAxes];
#pragma unroll
          for (unsigned a = 0; a < kMaxAxes; ++a) {
            x[a] = a < axes ? x_all[a][k] : T{};
            y[a] = a < axes ? x_all[a][k + 1] : T{};
          }
          if constexpr (kPairGuess) {
            const std::uint32_t s0 = last.slot_of(x, maps, w, axes);
            run.add2(s0, last.slot_of(y, maps, w, axes), c);
          } else {
            run.add(last.slot_of(x, maps, w, axes), c);
            run.add(last.slot_of(y, maps, w, axes), c);
          }
        }
      }
      for (std::uint64_t i = p0 + vectors * K + threadIdx.x; i < p1; i += blockDim.x) {
        T x[kMaxAxes];
#pragma unroll
        for (unsigned a = 0; a < kMaxAxes; ++a) x[a] = a < axes ? reinterpret_cast<const T*>(w.columns[a])[i] : T{};
        run.add(last.slot_of(x, maps, w, axes), c);
      }
    } else if (kAxes == 2 && w.pairs) {
      // Points side by side, 16-byte aligned: P whole points a load, two loads
      // a thread in flight while the two before them are counted. Read a
      // coordinate at a time (the path below), 2-D f32 points kept ~8 KB an
      // SM in flight and ran at 32% of the read limit, 60-62% this way (H200;
      // docs/PERFORMANCE-shapes.md).
      constexpr int E = kPerVector<T>, P = E / 2;
      const uint4* base = reinterpret_cast<const uint4*>(w.columns[0]);
      const std::uint64_t vectors = (p1 - p0) / P;  // p0 is a multiple of 16 points
      const std::uint64_t step = blockDim.x;
      auto load2 = [&](std::uint64_t first, std::uint64_t v, std::uint64_t count) {
        if (v < count) next[0] = __ldcs(base + first + v);
        if (v + step < count) next[1] = __ldcs(base + first + v + step);
      };
      std::uint64_t v = threadIdx.x;
      if (!loaded) load2(p0 / P, v, vectors);
      loaded = false;
      for (; v < vectors; v += 2 * step) {
        T e0[E], e1[E];
        unpack(next[0], e0);
        unpack(next[1], e1);
        const bool second = v + step < vectors;
        if (v + 2 * step < vectors) {
          load2(p0 / P, v + 2 * step, vectors);
        } else if (chunk + groups < w.chunks) {
          const std::uint64_t q0 = (chunk + groups) * w.chunk_points;
          load2(q0 / P, threadIdx.x, (umin(w.n, q0 + w.chunk_points) - q0) / P);
          loaded = true;
        }
        // P points a vector: P is 1 for 8-byte coordinates, else even.
        auto count_vector = [&](const T (&e)[E]) {
          if constexpr (kPairGuess && P % 2 == 0) {
#pragma unroll
            for (int k = 0; k < P; k += 2) {
              const T x[kMaxAxes] = {e[2 * k], e[2 * k + 1], T{}, T{}};
              const T y[kMaxAxes] = {e[2 * k + 2], e[2 * k + 3], T{}, T{}};
              const std::uint32_t s0 = last.slot_of(x, maps, w, 2);
              run.add2(s0, last.slot_of(y, maps, w, 2), c);
            }
          } else {
#pragma unroll
            for (int k = 0; k < P; ++k) {
              const T x[kMaxAxes] = {e[2 * k], e[2 * k + 1], T{}, T{}};
              run.add(last.slot_of(x, maps, w, 2), c);
            }
          }
        };
        count_vector(e0);
        if (second) count_vector(e1);
      }
      const T* points = reinterpret_cast<const T*>(w.columns[0]);
      for (std::uint64_t i = p0 + vectors * P + threadIdx.x; i < p1; i += blockDim.x) {
        const T x[kMaxAxes] = {points[2 * i], points[2 * i + 1], T{}, T{}};
        run.add(last.slot_of(x, maps, w, 2), c);
      }
    } else {
      for (std::uint64_t i = p0 + threadIdx.x; i < p1; i += blockDim.x) {
        T x[kMaxAxes];
#pragma unroll
        for (unsigned a = 0; a < kMaxAxes; ++a) {
          const unsigned char* at = w.columns[a] + i * w.stride;
          x[a] = a >= axes ? T{} : w.aligned ? *reinterpret_cast<const T*>(at) : load_unaligned<T>(at);
        }
        run.add(last.slot_of(x, maps, w, axes), c);
      }
    }
    run.flush(c);  // a chunk's additions end with it (the bounds count chunks)
    if constexpr (C == Counters::packed) {
      __syncthreads();
      drain_packed(c, w);
      c.parity ^= 1u;
      __syncthreads();
    }
  }
  __syncthreads();
  // The block's counts, every copy summed, added to the output once.
  for (std::uint32_t s = threadIdx.x; s < c.count; s += blockDim.x) {
    unsigned v = 0;
    for (std::uint32_t k = 0; k < w.copies; ++k) {
      if constexpr (C == Counters::wide) v += words[k * w.counter_words + s];
      else v += (words[k * w.counter_words + s / 2] >> ((s & 1) * 16)) & 0xFFFFu;
    }
    add_to_slot(w.out + c.lo + s, v);
  }
}

// ---- two columns of bytes: the raw pairs ---------------------------------------------
// Two 8-bit columns whose histogram needs the 16-bit counters (256 x 256 bins
// of one value each, the joint histogram of two images) are counted by raw
// pair: pair (a, b) is half b & 1 of word (a << 7) | (b >> 1), 65536 halves in
// 128 KiB, and each axis's map is applied to the 256 byte values once a
// block, into a table read when a half moves to the output. In joint_kernel
// each point took its slot's map-and-stride arithmetic, the run's
// bookkeeping, the part test and an atomic whose old value a branch tested
// before the next point's atomic could go out. Here a vector of 16 pairs is
// one byte permutation a pair (the
// pair's 16 bits from the two columns' words), an address, an increment (1 or
// 1 << 16) and the atomic, and the old values are tested together, after the
// vector's 16 atomics: a half crossing a multiple of 2^14 flips its bit 14,
// so the OR of old ^ new over the vector, tested at bits 14 and 30, says
// whether one of the 16 words must be listed (all 16 are then; the drain
// moves a listed word's halves, whatever they hold). A vector whose 16 pairs
// are one pair extends the thread's run instead (a constant image costs one
// exact addition a run), and the block's chunks, barriers and drains are
// joint_kernel's: a chunk adds at most 3 x 2^14 pairs, so a half below 2^14
// at its start cannot pass 2^16 - 1 before the drain.
constexpr std::uint32_t kPairWords = 32768;              // 65536 16-bit halves
constexpr std::size_t kPairTableBytes = 2 * 256 * 4;     // each axis's slot (times its stride) per byte value

// Pair k of two columns' words: byte k of b's word in bits 0-7, byte k of
// a's in bits 8-15 (bits 16-31: don't care).
__device__ __forceinline__ unsigned pair_bits(unsigned a_word, unsigned b_word, int k) {
  return __byte_perm(b_word, a_word, k | (4 + k) << 4);
}

__device__ __forceinline__ bool all_bytes_equal(const uint4& v) {
  const unsigned m = (v.x & 0xFFu) * 0x01010101u;
  return ((v.x ^ m) | (v.y ^ m) | (v.z ^ m) | (v.w ^ m)) == 0;
}

// Adds the two words' four halves (pairs 2k .. 2k + 3 of word k and k + 1)
// to their float sums: one 16-byte reduction on sm_90 (PTX red.global.add.v4.f32).
__device__ __forceinline__ void add_four_sums(float* sums, unsigned w0, unsigned w1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(sums), "f"(float(w0 & 0xFFFFu)),
               "f"(float(w0 >> 16)), "f"(float(w1 & 0xFFFFu)), "f"(float(w1 >> 16))
               : "memory");
#else
  const float v[4] = {float(w0 & 0xFFFFu), float(w0 >> 16), float(w1 & 0xFFFFu), float(w1 >> 16)};
  for (int q = 0; q < 4; ++q)
    if (v[q] != 0.f) atomicAdd(sums + q, v[q]);
#endif
}

// A vector of 16 bytes that takes at most two values: `low` and `high` (low
// <= high; equal for one value) and `at_high`, 0x80 in each byte of a word
// that holds `high` where high != low. With d = each byte ^ the first byte,
// the bytes of d are 0 or one value u, u is the OR of d's bytes. (Byte tests
// by carries within bytes: the SIMD intrinsics __vcmpeq4 and __vcmpne4 are
// several instructions each on sm_90, and with them this test cost random
// masks half of what it saved.)
struct TwoValues {
  unsigned low, high;
  uint4 at_high;
};
// 0x80 in each byte of d that is not zero.
__device__ __forceinline__ unsigned nonzero_bytes(unsigned d) {
  return (((d & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | d) & 0x80808080u;
}
__device__ __forceinline__ bool two_values_of(const uint4& v, TwoValues& t) {
  const unsigned first = v.x & 0xFFu, spread = first * 0x01010101u;
  const uint4 d = make_uint4(v.x ^ spread, v.y ^ spread, v.z ^ spread, v.w ^ spread);
  unsigned u = d.x | d.y | d.z | d.w;
  u |= u >> 16;
  u = (u | u >> 8) & 0xFFu;
  const unsigned us = u * 0x01010101u;
  const uint4 nz = make_uint4(nonzero_bytes(d.x), nonzero_bytes(d.y), nonzero_bytes(d.z), nonzero_bytes(d.w));
  // Each byte of d is 0 or u: d equals u where it is not zero.
  auto zero_or_u = [&](unsigned dw, unsigned nzw) { return dw == (((nzw >> 7) * 0xFFu) & us); };
  if (!(zero_or_u(d.x, nz.x) & zero_or_u(d.y, nz.y) & zero_or_u(d.z, nz.z) & zero_or_u(d.w, nz.w))) return false;
  // `high` where the byte differs from the first one when that is the low
  // value, else where it equals it (one value: nowhere, u being 0).
  const unsigned other = first ^ u;
  const unsigned flip = first <= other ? 0u : 0x80808080u;
  t.low = min(first, other);
  t.high = max(first, other);
  t.at_high = make_uint4(nz.x ^ flip, nz.y ^ flip, nz.z ^ flip, nz.w ^ flip);
  return true;
}
__device__ __forceinline__ unsigned bytes_marked(const uint4& m) {
  return __popc(m.x) + __popc(m.y) + __popc(m.z) + __popc(m.w);
}
// After a vector that is not of two values a column, a thread skips the test
// for this many (noise pays the test on one vector in kTwoValuesSkip + 1;
// LEVELHIST_JOINT_TWO_VALUES_SKIP sets it for studies).
constexpr unsigned kTwoValuesSkip = 8;

// Each axis's slot times its stride for the 256 byte values, into
// slot_of_byte[axis * 256 + byte] (shared memory; the maps' tables at
// w.table_offset[0] and [1]); ends with a barrier.
template <class T, class Map>
__device__ void byte_slots(const Work& w, Map& m0, Map& m1, unsigned char* smem, std::uint32_t* slot_of_byte) {
  m0.setup(smem + w.table_offset[0]);
  m1.setup(smem + w.table_offset[1]);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < 512; i += blockDim.x) {
    const unsigned axis = i / 256;
    const T x = static_cast<T>(static_cast<unsigned char>(i % 256));
    slot_of_byte[i] = (axis == 0 ? m0(x) : m1(x)) * w.axis_stride[axis];
  }
  __syncthreads();
}

template <class T, class Map>
__global__ void __launch_bounds__(1024, 1) byte_pairs_kernel(Work w, Map m0, Map m1) {
  static_assert(sizeof(T) == 1);
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* words = reinterpret_cast<unsigned*>(smem);
  unsigned* list = words + kPairWords;
  unsigned* listed = list + w.drain_capacity;
  auto* slot_of_byte = reinterpret_cast<std::uint32_t*>(smem + w.table_offset[2]);  // [axis * 256 + byte]
  for (std::uint32_t i = threadIdx.x; i < kPairWords; i += blockDim.x) words[i] = 0;
  if (threadIdx.x < 2) listed[threadIdx.x] = 0;
  byte_slots<T>(w, m0, m1, smem, slot_of_byte);
  allow_dependent_launch();  // fold_pair_sums_kernel may launch (it waits for this grid's end)
  const std::uint32_t* slot_of_a = slot_of_byte;
  const std::uint32_t* slot_of_b = slot_of_byte + 256;
  unsigned parity = 0;
  auto list_word = [&](unsigned word) {
    const unsigned i = atomicAdd(listed + parity, 1u);
    if (i < w.drain_capacity) list[i] = word;
  };
  // An exact addition of `length` (at most a chunk's pairs) to pair v, listed
  // when it takes the half to kHalfLimit.
  auto add = [&](unsigned v, unsigned length) {
    const unsigned shift = (v & 1u) * 16;
    const unsigned old = atomicAdd(words + (v >> 1), length << shift);
    const unsigned half = (old >> shift) & 0xFFFFu;
    if (half < kHalfLimit && half + length >= kHalfLimit) list_word(v >> 1);
  };
  // Adds a word's two halves, `value`, to their slots (the caller clears the word).
  auto move = [&](unsigned word, unsigned value) {
    const unsigned v = word * 2;
    add_to_slot(w.out + slot_of_a[v >> 8] + slot_of_b[v & 0xFFu], value & 0xFFFFu);
    add_to_slot(w.out + slot_of_a[v >> 8] + slot_of_b[(v + 1) & 0xFFu], value >> 16);
  };

  const std::uint64_t groups = gridDim.x;
  uint4 next[2] = {};
  auto load = [&](std::uint64_t p0, std::uint64_t v) {
    next[0] = __ldcs(reinterpret_cast<const uint4*>(w.columns[0]) + (p0 / 16 + v));
    next[1] = __ldcs(reinterpret_cast<const uint4*>(w.columns[1]) + (p0 / 16 + v));
  };
  bool loaded = false;
  unsigned run_pair = 0xFFFFFFFFu, run_length = 0;
  unsigned two_values_skip = 0;
  // Carried classes: the key (two values of a, two of b) and the four counts a
  // byte each (at most 16 a vector, 3 vectors a thread a chunk).
  static_assert(kPackedChunkPoints / 16 / 1024 * 16 < 256);
  constexpr unsigned kNoClasses = 0xFFFFFFFFu;  // a key only a constant vector of (255, 255) has: never carried
  unsigned class_key = kNoClasses, class_counts = 0;
  // The four pairs of `key` (a low or high, b low or high) get their counts.
  auto add_classes = [&](unsigned key, unsigned ll, unsigned lh, unsigned hl, unsigned hh) {
    const unsigned a_low = key & 0xFFu, a_high = key >> 8 & 0xFFu, b_low = key >> 16 & 0xFFu, b_high = key >> 24;
    if (ll) add(a_low << 8 | b_low, ll);
    if (lh) add(a_low << 8 | b_high, lh);
    if (hl) add(a_high << 8 | b_low, hl);
    if (hh) add(a_high << 8 | b_high, hh);
  };
  auto add_carried = [&] {
    if (class_key != kNoClasses)
      add_classes(class_key, class_counts & 0xFFu, class_counts >> 8 & 0xFFu, class_counts >> 16 & 0xFFu,
                  class_counts >> 24);
  };
  for (std::uint64_t chunk = blockIdx.x; chunk < w.chunks; chunk += groups) {
    const std::uint64_t p0 = chunk * w.chunk_points, p1 = umin(w.n, p0 + w.chunk_points);
    const std::uint64_t vectors = (p1 - p0) / 16;
    std::uint64_t v = threadIdx.x;
    if (!loaded && v < vectors) load(p0, v);
    loaded = false;
    for (; v < vectors; v += blockDim.x) {
      const uint4 a = next[0], b = next[1];
      if (v + blockDim.x < vectors) {
        load(p0, v + blockDim.x);
      } else if (chunk + groups < w.chunks) {
        const std::uint64_t q0 = (chunk + groups) * w.chunk_points;
        if (threadIdx.x < (umin(w.n, q0 + w.chunk_points) - q0) / 16) {
          load(q0, threadIdx.x);
          loaded = true;
        }
      }
      if (all_bytes_equal(a) && all_bytes_equal(b)) {
        const unsigned pair = pair_bits(a.x, b.x, 0) & 0xFFFFu;
        if (pair != run_pair) {
          if (run_length) add(run_pair, run_length);
          run_pair = pair;
          run_length = 0;
        }
        run_length += 16;
        continue;
      }
      // At most two values a column (binary masks): the 16 pairs fall into at
      // most four, counted by popcounts; a thread carries its four counts
      // while its next vectors hold the same four pairs, and at the chunk's
      // end the warp sums them where its lanes agree and one lane adds them
      // (random masks: every lane's 16 atomics on the same four words took a
      // clock a lane each, 18% of the read; counted by class, 53-54%, noise
      // within 0-4 points of the pair path: docs/PERFORMANCE-shapes.md, N-d
      // change 14).
      if (w.two_values) {
        TwoValues ta, tb;
        if (two_values_skip > 0) {
          --two_values_skip;
        } else if (two_values_of(a, ta) && two_values_of(b, tb)) {
          const unsigned high_a = bytes_marked(ta.at_high), high_b = bytes_marked(tb.at_high);
          const unsigned hh = bytes_marked(make_uint4(ta.at_high.x & tb.at_high.x, ta.at_high.y & tb.at_high.y,
                                                      ta.at_high.z & tb.at_high.z, ta.at_high.w & tb.at_high.w));
          const unsigned lh = high_b - hh, hl = high_a - hh, ll = 16 - high_a - high_b + hh;
          const unsigned key = ta.low | ta.high << 8 | tb.low << 16 | tb.high << 24;
          if (key != class_key) {
            add_carried();
            class_key = key;
            class_counts = 0;
          }
          class_counts += ll | lh << 8 | hl << 16 | hh << 24;
          continue;
        } else {
          two_values_skip = w.two_values_skip;
        }
      }
      const unsigned wa[4] = {a.x, a.y, a.z, a.w}, wb[4] = {b.x, b.y, b.z, b.w};
      unsigned flips = 0;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const unsigned pair = pair_bits(wa[q], wb[q], k);
          const unsigned increment = 1u + (pair & 1u) * 0xFFFFu;
          unsigned* at = reinterpret_cast<unsigned*>(smem + ((pair & 0xFFFEu) << 1));
          const unsigned old = atomicAdd(at, increment);
          flips |= old ^ (old + increment);
        }
      }
      if (flips & 0x40004000u) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
          for (int k = 0; k < 4; ++k) list_word((pair_bits(wa[q], wb[q], k) & 0xFFFEu) >> 1);
      }
    }
    for (std::uint64_t i = p0 + vectors * 16 + threadIdx.x; i < p1; i += blockDim.x)
      add(static_cast<unsigned>(w.columns[0][i]) << 8 | w.columns[1][i], 1u);
    if (run_length) add(run_pair, run_length);  // a chunk's additions end with it (the bound counts chunks)
    if (w.two_values) {
      // The classes carried: summed over the warp where its holders agree.
      __syncwarp();
      const bool holds = class_key != kNoClasses;
      const unsigned holders = __ballot_sync(0xFFFFFFFFu, holds);
      if (holders) {
        const int leader = __ffs(holders) - 1;
        const unsigned lead_key = __shfl_sync(0xFFFFFFFFu, class_key, leader);
        if (__all_sync(0xFFFFFFFFu, !holds || class_key == lead_key)) {
          // Each class at most 32 x 48 a warp: two classes a word.
          const unsigned c = holds ? class_counts : 0u;
          const unsigned s0 = __reduce_add_sync(0xFFFFFFFFu, (c & 0xFFu) | (c >> 8 & 0xFFu) << 16);
          const unsigned s1 = __reduce_add_sync(0xFFFFFFFFu, (c >> 16 & 0xFFu) | (c >> 24) << 16);
          if ((threadIdx.x & 31) == static_cast<unsigned>(leader))
            add_classes(lead_key, s0 & 0xFFFFu, s0 >> 16, s1 & 0xFFFFu, s1 >> 16);
        } else {
          add_carried();
        }
      }
      class_key = kNoClasses;
      class_counts = 0;
    }
    run_pair = 0xFFFFFFFFu;
    run_length = 0;
    __syncthreads();
    // The drain (joint_kernel's drain_packed, by word).
    const unsigned n_listed = listed[parity];
    if (threadIdx.x == 0) listed[parity ^ 1u] = 0;
    if (n_listed <= w.drain_capacity) {
      for (unsigned i = threadIdx.x; i < n_listed; i += blockDim.x) {
        const unsigned word = list[i];
        const unsigned value = atomicExch(words + word, 0u);  // a word may be listed more than once
        if (value) move(word, value);
      }
    } else {
      for (std::uint32_t word = threadIdx.x; word < kPairWords; word += blockDim.x) {
        const unsigned value = words[word];
        if ((value & 0xFFFFu) >= kHalfLimit || (value >> 16) >= kHalfLimit) {
          words[word] = 0;
          move(word, value);
        }
      }
    }
    parity ^= 1u;
    __syncthreads();
  }
  // The block's counts, added to the output once.
  // With the workspace (w.pair_sums): four pairs' counts as one 16-byte float
  // add into the sum of each raw pair, folded into the slots by
  // fold_pair_sums_kernel. A half holds less than kHalfLimit = 2^14 after the
  // last drain, so at most 1024 blocks' sums stay below 2^24, where every
  // float sum of integers is exact (launch_byte_pairs takes the 64-bit end for
  // larger grids). On noise this is 8.7 M 64-bit atomics on 67081 slots
  // replaced by 2.2 M vector adds on 65536 sums: bench/experiments/
  // joint_end_probe timed the 64-bit end at 36-71 us a block after counting
  // that ends within 10 us on every block, the float end at 5-10 us
  // (docs/PERFORMANCE-shapes.md, N-d change 13; what was tried before it:
  // the blocks' copies summed by a second kernel, change 11, and each block
  // of a thread-block cluster summing a slice over the cluster's shared
  // memories, change 12).
  if (w.pair_sums != nullptr) {
    for (std::uint32_t word = threadIdx.x * 2; word < kPairWords; word += blockDim.x * 2) {
      const uint2 two = *reinterpret_cast<const uint2*>(words + word);
      if ((two.x | two.y) == 0) continue;
      add_four_sums(w.pair_sums + 2 * word, two.x, two.y);
    }
    return;
  }
  for (std::uint32_t word = threadIdx.x; word < kPairWords; word += blockDim.x) {
    const unsigned value = words[word];
    if (value) move(word, value);
  }
}

// The raw pairs' float sums into their slots, leaving the sums zero: a
// dependent launch after byte_pairs_kernel (its launch and each block's map
// tables overlap the counting's end). One float4 a thread: 64 blocks of 256.
constexpr int kFoldThreads = 256;
constexpr unsigned kFoldBlocks = 2 * kPairWords / 4 / kFoldThreads;
template <class T, class Map>
__global__ void __launch_bounds__(kFoldThreads) fold_pair_sums_kernel(Work w, Map m0, Map m1) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* slot_of_byte = reinterpret_cast<std::uint32_t*>(smem + w.table_offset[2]);
  byte_slots<T>(w, m0, m1, smem, slot_of_byte);  // from the plan's maps: before the wait
  wait_for_prior_grid();
  const unsigned pair = (blockIdx.x * kFoldThreads + threadIdx.x) * 4;
  float4* at = reinterpret_cast<float4*>(w.pair_sums + pair);
  const float4 f = __ldcg(at);
  if (f.x == 0.f && f.y == 0.f && f.z == 0.f && f.w == 0.f) return;
  *at = make_float4(0.f, 0.f, 0.f, 0.f);
  const float sums[4] = {f.x, f.y, f.z, f.w};
#pragma unroll
  for (unsigned q = 0; q < 4; ++q)
    if (sums[q] != 0.f)
      atomicAdd(reinterpret_cast<unsigned long long*>(w.out + slot_of_byte[(pair + q) >> 8] +
                                                      slot_of_byte[256 + ((pair + q) & 0xFFu)]),
                static_cast<unsigned long long>(sums[q]));
}

// One map kind for every axis: the cheapest exact one they all take.
MapKind common_kind(const RunArgs& a) {
  MapKind kind = choose_map(a.type, *a.axes.binnings[0]);
  for (unsigned k = 1; k < a.axes.count; ++k)
    if (choose_map(a.type, *a.axes.binnings[k]) != kind) return MapKind::generic;
  return kind == MapKind::cells ? MapKind::generic : kind;  // cell tables need prepared data per axis
}

// The map of `kind` for axis k (the kinds common_kind returns).
template <class Map, class T>
Map map_of(const RunArgs& a, unsigned k) {
  const Binning& b = *a.axes.binnings[std::min(k, a.axes.count - 1)];
  if constexpr (std::is_same_v<Map, GenericMap<T>>) return GenericMap<T>{a.axes.indexers[std::min(k, a.axes.count - 1)]};
  else if constexpr (std::is_same_v<Map, EvenMap<T>>) return make_even_map<T>(b);  // with its edge thresholds
  else if constexpr (std::is_same_v<Map, DirectSlotMap<T>>) return DirectSlotMap<T>{binmap::make_direct(b)};
  else return ShiftMap<T>{binmap::make_int_shift<(sizeof(T) == 4)>(b)};
}

// Shared memory for the histogram: parts of at most this many bytes.
std::size_t histogram_budget() { return max_shared_bytes(); }

// Entries of the packed counters' drain list (LEVELHIST_JOINT_DRAIN_LIST: the
// tests make it 1 to take the full scan).
std::uint32_t drain_capacity() {
  return static_cast<std::uint32_t>(
      ::levelhist::detail::env_knob("LEVELHIST_JOINT_DRAIN_LIST", kDrainListDefault, 1, 1u << 14));
}
// LEVELHIST_JOINT_PAIR_GUESS=0: even maps of 2-D points take the per-axis
// path (the study of docs/PERFORMANCE-shapes.md, N-d change 9).
bool pair_guess() {
  static const bool on = ::levelhist::detail::env_knob("LEVELHIST_JOINT_PAIR_GUESS", 1, 0, 1) != 0;
  return on;
}
std::size_t drain_bytes(std::uint32_t capacity) { return (std::size_t{capacity} + 2) * 4; }

// The fewest parts whose 32-bit counters each fit `budget` bytes (0: none do).
std::uint64_t parts_for(std::uint64_t total, std::size_t budget) {
  if (budget < 16) return 0;
  std::uint64_t parts = std::max<std::uint64_t>(1, total * 4 / budget);
  while (round_up((total + parts - 1) / parts * 4, 16) > budget) ++parts;
  return parts;
}

// How a histogram of `total` slots is laid out on chip.
struct Layout {
  Counters counters = Counters::wide;
  std::uint64_t parts = 0;  // 0: it cannot be
};
Layout layout_for(std::uint64_t total, std::size_t budget, std::uint32_t capacity) {
  Layout l;
  if (round_up(total * 4, 16) <= budget) {
    l.parts = 1;
  } else if (budget > drain_bytes(capacity) && round_up((total + 1) / 2 * 4, 16) <= budget - drain_bytes(capacity)) {
    l.counters = Counters::packed;
    l.parts = 1;
  } else {
    l.parts = parts_for(total, budget);
  }
  return l;
}

bool supports(const Problem& p, std::string* why_not) {
  auto no = [&](const std::string& why) {
    if (why_not) *why_not = "gpu_joint: " + why;
    return false;
  };
  if (p.axis_count < 2) return no("counts N-d points only (Request::joint)");
  if (histogram_budget() == 0) return no("no CUDA device to size shared memory for");
  if (p.histogram_slots() > (std::uint64_t{1} << 30)) return no("more than 2^30 slots");
  // Parts beyond 16 read each chunk 16 times: the CPU is then the better place.
  const std::uint64_t parts = layout_for(p.histogram_slots(), histogram_budget(), drain_capacity()).parts;
  if (parts > 16)
    return no(std::to_string(p.histogram_slots()) + " slots need " + std::to_string(parts) +
              " parts of shared memory (at most 16)");
  return true;
}

// Two 8-bit axes: the float sum of each raw pair (byte_pairs_kernel's end,
// where its counters are the 16-bit ones), whatever the binning.
constexpr std::size_t kPairSumBytes = 2 * std::size_t{kPairWords} * sizeof(float);
std::size_t workspace_bytes(const Problem& p) {
  const bool bytes = p.type == SampleType::u8 || p.type == SampleType::i8;
  return p.axis_count == 2 && bytes ? kPairSumBytes : 0;
}

template <class T, class Map, Counters C>
void launch_with(const RunArgs& a, Work& w, const Layout& layout, std::size_t budget, std::size_t tables,
                 const Map (&maps)[kMaxAxes]) {
  w.parts = static_cast<std::uint32_t>(layout.parts);
  w.part_slots = static_cast<std::uint32_t>((w.total_slots + layout.parts - 1) / layout.parts);
  w.counter_words = C == Counters::wide ? w.part_slots : (w.part_slots + 1) / 2;
  const std::size_t list_bytes = C == Counters::packed ? drain_bytes(w.drain_capacity) : 0;
  w.copies = 1;
  while (w.copies < kMaxCopies &&
         round_up(std::uint64_t{w.counter_words} * w.copies * 2 * 4, 16) + list_bytes <= budget)
    w.copies *= 2;
  w.chunk_points = C == Counters::packed ? kPackedChunkPoints : kChunkPoints;
  w.chunks = (w.n + w.chunk_points - 1) / w.chunk_points;
  auto kernel = w.axes == 2 ? joint_kernel<T, Map, C, 2> : joint_kernel<T, Map, C, 0>;
  if constexpr (std::is_same_v<Map, EvenMap<T>> && binmap::exact_in_float<T>)
    if (w.axes == 2 && !pair_guess()) kernel = joint_kernel<T, Map, C, 2, false>;
  allow_large_shared(kernel);
  std::size_t smem = round_up(round_up(std::size_t{w.counter_words} * w.copies * 4, 16) + list_bytes, 16);
  for (unsigned k = 0; k < a.axes.count; ++k) {
    w.table_offset[k] = static_cast<std::uint32_t>(smem);
    smem += maps[k].table_bytes();
  }
  if (smem > budget + tables)
    throw Error(ErrorKind::internal, "gpu_joint: the counters and tables overrun shared memory");
  const int threads = threads_for(w.axes);
  const int resident = std::max(resident_blocks_with(kernel, threads, smem), 1);
  // Whole groups of one block per part; no more groups than chunks.
  const std::uint64_t groups = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(resident) / layout.parts, 1,
                                                         std::max<std::uint64_t>(w.chunks, 1));
  const std::uint64_t blocks = groups * layout.parts;
  kernel<<<static_cast<unsigned>(blocks), threads, smem, stream_of(a)>>>(w, maps[0], maps[1], maps[2], maps[3]);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

// Two byte columns at 16-byte boundaries whose histogram takes the 16-bit
// counters: byte_pairs_kernel (LEVELHIST_JOINT_BYTE_PAIRS=0: joint_kernel, for
// comparisons).
bool byte_pairs_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_JOINT_BYTE_PAIRS", 1, 0, 1) != 0; }
// byte_pairs_kernel's vectors of at most two values a column counted by class
// (LEVELHIST_JOINT_TWO_VALUES=0: by pair, for comparisons).
bool two_values_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_JOINT_TWO_VALUES", 1, 0, 1) != 0; }
// byte_pairs_kernel's end: float sums in the workspace, folded by a second
// kernel (LEVELHIST_JOINT_FLOAT_END=0: each block's 64-bit atomics, for comparisons).
bool float_end_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_JOINT_FLOAT_END", 1, 0, 1) != 0; }
// The most blocks whose float sums stay exact: each adds less than kHalfLimit a pair.
constexpr std::uint64_t kFloatEndMostBlocks = (std::uint64_t{1} << 24) / kHalfLimit;
static_assert(kFloatEndMostBlocks * (kHalfLimit - 1) < (std::uint64_t{1} << 24));

// byte_pairs_kernel's shared memory: the counters and the drain list, each
// axis's map table (w.table_offset[0] and [1]), the byte slots ([2]).
template <class Map>
std::size_t byte_pairs_shared_bytes(Work& w, const Map (&maps)[kMaxAxes]) {
  std::size_t smem = round_up(std::size_t{kPairWords} * 4 + drain_bytes(w.drain_capacity), 16);
  for (unsigned k = 0; k < 2; ++k) {
    w.table_offset[k] = static_cast<std::uint32_t>(smem);
    smem = round_up(smem + maps[k].table_bytes(), 16);
  }
  w.table_offset[2] = static_cast<std::uint32_t>(smem);
  return smem + kPairTableBytes;
}

template <class T, class Map>
void launch_byte_pairs(const RunArgs& a, Work& w, const Map (&maps)[kMaxAxes], std::size_t smem) {
  w.chunk_points = kPackedChunkPoints;
  w.chunks = (w.n + w.chunk_points - 1) / w.chunk_points;
  w.two_values = two_values_wanted();
  w.two_values_skip = static_cast<std::uint32_t>(
      ::levelhist::detail::env_knob("LEVELHIST_JOINT_TWO_VALUES_SKIP", kTwoValuesSkip, 0, 1u << 20));
  auto kernel = byte_pairs_kernel<T, Map>;
  allow_large_shared(kernel);
  const int resident = std::max(resident_blocks_with(kernel, 1024, smem), 1);
  const std::uint64_t blocks = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(resident), 1,
                                                         std::max<std::uint64_t>(w.chunks, 1));
  const bool float_end = a.workspace != nullptr && a.workspace_bytes >= kPairSumBytes &&
                         blocks <= kFloatEndMostBlocks && float_end_wanted();
  w.pair_sums = float_end ? static_cast<float*>(a.workspace) : nullptr;
  kernel<<<static_cast<unsigned>(blocks), 1024, smem, stream_of(a)>>>(w, maps[0], maps[1]);
  LEVELHIST_CUDA_CHECK_LAUNCH();
  if (!float_end) return;
  // The fold's shared memory: the maps' tables, then the byte slots.
  Work fold = w;
  std::size_t fold_smem = 0;
  for (unsigned k = 0; k < 2; ++k) {
    fold.table_offset[k] = static_cast<std::uint32_t>(fold_smem);
    fold_smem = round_up(fold_smem + maps[k].table_bytes(), 16);
  }
  fold.table_offset[2] = static_cast<std::uint32_t>(fold_smem);
  fold_smem += kPairTableBytes;
  auto fold_kernel = fold_pair_sums_kernel<T, Map>;
  allow_large_shared(fold_kernel);
  launch_kernel<true>(fold_kernel, kFoldBlocks, kFoldThreads, fold_smem, stream_of(a), fold, maps[0], maps[1]);
}

template <class T, class Map>
void launch(const RunArgs& a) {
  const AxesArgs& ax = a.axes;
  Work w{};
  w.axes = ax.count;
  w.n = a.n;
  w.stride = ax.stride;
  w.out = a.slots;
  std::uint64_t total = 1;
  for (unsigned k = 0; k < ax.count; ++k) total *= ax.binnings[k]->slots();
  w.total_slots = total;
  std::uint64_t stride = total;
  bool aligned16 = ax.stride == sizeof(T) && sizeof(T) <= 4;  // separate columns of 8/16/32-bit samples
  w.aligned = ax.stride % sizeof(T) == 0;
  for (unsigned k = 0; k < kMaxAxes; ++k) {
    const unsigned src = std::min(k, ax.count - 1);
    w.columns[k] = static_cast<const unsigned char*>(ax.columns[src]);
    if (k < ax.count) {
      stride /= ax.binnings[k]->slots();
      w.axis_stride[k] = static_cast<std::uint32_t>(stride);
      aligned16 = aligned16 && reinterpret_cast<std::uintptr_t>(ax.columns[k]) % 16 == 0;
      w.aligned = w.aligned && reinterpret_cast<std::uintptr_t>(ax.columns[k]) % sizeof(T) == 0;
    }
  }
  constexpr bool loads_vectors = (std::is_integral_v<T> && sizeof(T) <= 4) || std::is_floating_point_v<T>;
  w.vector = aligned16 && loads_vectors;
  // 2-D points side by side whose size divides 16: whole points a 16-byte load
  // from the first 16-byte boundary on; the `lead` points before it apart.
  constexpr std::uint64_t point_bytes = 2 * sizeof(T);
  const auto first = reinterpret_cast<std::uintptr_t>(ax.columns[0]);
  if (loads_vectors && ax.count == 2 && ax.stride == point_bytes && 16 % point_bytes == 0 &&
      reinterpret_cast<std::uintptr_t>(ax.columns[1]) == first + sizeof(T) && first % point_bytes == 0) {
    const std::uint64_t lead = std::min<std::uint64_t>((16 - first % 16) % 16 / point_bytes, w.n);
    w.pairs = true;
    w.lead = static_cast<std::uint32_t>(lead);
    w.n -= lead;
    w.columns[0] += lead * point_bytes;
    w.columns[1] = w.columns[0] + sizeof(T);
  }
  w.drain_capacity = drain_capacity();
  // Each axis's map, made once (its tables' bytes set the shared memory left for the histogram).
  const Map maps[kMaxAxes] = {map_of<Map, T>(a, 0), map_of<Map, T>(a, 1), map_of<Map, T>(a, 2), map_of<Map, T>(a, 3)};
  std::size_t tables = 0;
  for (unsigned k = 0; k < ax.count; ++k) tables += maps[k].table_bytes();
  const std::size_t budget = histogram_budget() > tables + 1024 ? histogram_budget() - tables : 0;
  const Layout layout = layout_for(total, budget, w.drain_capacity);
  if (layout.parts == 0) throw Error(ErrorKind::internal, "gpu_joint: the histogram does not fit beside its tables");
  if (!a.accumulate) LEVELHIST_CUDA_CHECK(cudaMemsetAsync(a.slots, 0, total * sizeof(std::uint64_t), stream_of(a)));
  if (w.n == 0 && w.lead == 0) return;
  if constexpr (sizeof(T) == 1) {
    if (ax.count == 2 && w.vector && !w.pairs && layout.counters == Counters::packed && byte_pairs_wanted()) {
      const std::size_t smem = byte_pairs_shared_bytes(w, maps);
      if (smem <= max_shared_bytes()) return launch_byte_pairs<T, Map>(a, w, maps, smem);
    }
  }
  if (layout.counters == Counters::wide) launch_with<T, Map, Counters::wide>(a, w, layout, budget, tables, maps);
  else launch_with<T, Map, Counters::packed>(a, w, layout, budget, tables, maps);
}

void run(const RunArgs& a) {
  const MapKind kind = common_kind(a);
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (kind) {
      case MapKind::direct:
        if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) return launch<T, DirectSlotMap<T>>(a);
        break;
      case MapKind::int_shift:
        if constexpr (std::is_integral_v<T>) return launch<T, ShiftMap<T>>(a);
        break;
      case MapKind::even: return launch<T, EvenMap<T>>(a);
      default: break;
    }
    launch<T, GenericMap<T>>(a);
  });
}

std::vector<std::uint64_t> boundaries(const Problem&) {
  return {kPackedChunkPoints - 1, kPackedChunkPoints + 1, kChunkPoints - 1, kChunkPoints, kChunkPoints + 17};
}

}  // namespace
}  // namespace levelhist::cuda_detail::joint

namespace levelhist::strategies {

const Strategy gpu_joint{"gpu_joint",
                         Backend::cuda,
                         "N-d histograms (2 to 4 axes) in shared memory kept for the whole call: 32-bit counters, "
                         "16-bit ones drained at 2^14 where only those fit, else parts that fit, a block per part; "
                         "runs of equal slots added once",
                         "levelhist (docs/PERFORMANCE-shapes.md)",
                         cuda_detail::joint::supports,
                         cuda_detail::joint::workspace_bytes,
                         cuda_detail::joint::run,
                         cuda_detail::joint::boundaries,
                         kCapabilityAxes};

}  // namespace levelhist::strategies
