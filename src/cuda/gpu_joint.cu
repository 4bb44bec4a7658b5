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
//   Two byte columns at 16-byte boundaries take raw_pairs.cuh's kernel
//   instead: the same bound and drains, counted by raw byte pair, its blocks'
//   counts summed as floats in the workspace (256 KiB) and folded into the
//   slots by a second kernel (below).
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
#include "cuda/raw_pairs.cuh"

namespace levelhist::cuda_detail::joint {
namespace {

using namespace general;

// Threads per block: 1024 for 2-D points (at most 64 registers there, and
// the one block an SM holds with a 16-bit 256 x 256 histogram then has 32
// warps to hide its loads), 512 for 3 and 4 axes (more registers).
constexpr int threads_for(unsigned axes) { return axes == 2 ? 1024 : 512; }
constexpr std::uint64_t kChunkPoints = 64 * 1024;        // points per chunk (32-bit counters)
// 16-bit counters: raw_pairs.cuh's chunks, limit and drain list (kPackedChunkPoints,
// kHalfLimit, drain_bytes).
using raw_pairs::drain_bytes;
using raw_pairs::kDrainListDefault;
using raw_pairs::kHalfLimit;
using raw_pairs::kPackedChunkPoints;
using raw_pairs::umin;
constexpr std::uint32_t kMaxCopies = 8;

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
  bool aligned;         // every coordinate aligned to its size: plain loads
  std::uint32_t lead;   // pairs: points before the first 16-byte boundary, at columns[0] - lead points
  std::uint32_t table_offset[kMaxAxes];  // where each axis's map keeps its table in shared memory
  std::uint64_t* out;
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
// pair (raw_pairs.cuh: pair (a, b) is value a << 8 | b), and each axis's map
// is applied to the 256 byte values once a block, into a table read when a
// half moves to the output. In joint_kernel each point took its slot's
// map-and-stride arithmetic, the run's bookkeeping, the part test and an
// atomic whose old value a branch tested before the next point's atomic could
// go out; there a step of 16 pairs is one byte permutation a pair, an address,
// an increment and the atomic, the old values tested together.
constexpr std::size_t kPairTableBytes = 2 * 256 * 4;  // each axis's slot (times its stride) per byte value

// A raw pair's slot: axis 0's slot of its high byte plus axis 1's of its low
// byte, each times its stride, from a table of the 256 byte values per axis
// that setup fills in shared memory (the maps' own tables first).
template <class T, class Map>
struct BytePairSlots {
  Map m0, m1;
  std::uint32_t stride0, stride1;
  std::uint32_t map_table[2], byte_table;  // byte offsets in shared memory
  const std::uint32_t* slot_of_byte;       // [axis * 256 + byte], set by setup
  // Lays the tables out from byte `at` on; returns their end.
  std::size_t place(std::size_t at) {
    map_table[0] = static_cast<std::uint32_t>(at);
    at = round_up(at + m0.table_bytes(), 16);
    map_table[1] = static_cast<std::uint32_t>(at);
    at = round_up(at + m1.table_bytes(), 16);
    byte_table = static_cast<std::uint32_t>(at);
    return at + kPairTableBytes;
  }
  __device__ void setup(unsigned char* smem) {
    m0.setup(smem + map_table[0]);
    m1.setup(smem + map_table[1]);
    __syncthreads();
    auto* table = reinterpret_cast<std::uint32_t*>(smem + byte_table);
    for (unsigned i = threadIdx.x; i < 512; i += blockDim.x) {
      const unsigned axis = i / 256;
      const T x = static_cast<T>(static_cast<unsigned char>(i % 256));
      table[i] = axis == 0 ? m0(x) * stride0 : m1(x) * stride1;
    }
    slot_of_byte = table;  // read after the barrier that follows setup
  }
  __device__ __forceinline__ std::uint32_t operator()(unsigned pair) const {
    return slot_of_byte[pair >> 8] + slot_of_byte[256 + (pair & 0xFFu)];
  }
};

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

// Two 8-bit axes: the float sum of each raw pair (raw_pairs_kernel's end,
// where its counters are the 16-bit ones), whatever the binning.
std::size_t workspace_bytes(const Problem& p) {
  const bool bytes = p.type == SampleType::u8 || p.type == SampleType::i8;
  return p.axis_count == 2 && bytes ? raw_pairs::kPairSumBytes : 0;
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
// counters: raw_pairs_kernel (LEVELHIST_JOINT_BYTE_PAIRS=0: joint_kernel, for
// comparisons).
bool byte_pairs_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_JOINT_BYTE_PAIRS", 1, 0, 1) != 0; }
// raw_pairs_kernel's vectors of at most two values a column counted by class
// (LEVELHIST_JOINT_TWO_VALUES=0: by pair, for comparisons).
bool two_values_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_JOINT_TWO_VALUES", 1, 0, 1) != 0; }
// raw_pairs_kernel's end: float sums in the workspace, folded by a second
// kernel (LEVELHIST_JOINT_FLOAT_END=0: each block's 64-bit atomics, for comparisons).
bool float_end_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_JOINT_FLOAT_END", 1, 0, 1) != 0; }
// Two byte columns: raw_pairs::count with each axis's map, from the call's
// workspace where it holds the float sums; false (nothing launched) where its
// shared memory does not fit beside the maps' tables.
template <class T, class Map>
bool launch_byte_pairs(const RunArgs& a, const Work& w, const Map (&maps)[kMaxAxes]) {
  BytePairSlots<T, Map> slots{maps[0], maps[1], w.axis_stride[0], w.axis_stride[1], {}, 0, nullptr};
  const std::size_t smem = raw_pairs::counting_shared_bytes(slots, w.drain_capacity);
  if (smem > max_shared_bytes()) return false;
  raw_pairs::RawWork rw{};
  rw.n = w.n;
  rw.drain_capacity = w.drain_capacity;
  rw.two_values = two_values_wanted();
  rw.two_values_skip = static_cast<std::uint32_t>(
      ::levelhist::detail::env_knob("LEVELHIST_JOINT_TWO_VALUES_SKIP", raw_pairs::kTwoValuesSkip, 0, 1u << 20));
  rw.out = w.out;
  const raw_pairs::BytePairColumns src{w.columns[0], w.columns[1]};
  raw_pairs::count(rw, src, slots, smem, a.workspace, a.workspace_bytes, float_end_wanted(), stream_of(a));
  return true;
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
    if (ax.count == 2 && w.vector && !w.pairs && layout.counters == Counters::packed && byte_pairs_wanted() &&
        launch_byte_pairs<T, Map>(a, w, maps))
      return;
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
