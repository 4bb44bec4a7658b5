// Counting by raw 16-bit value: 65536 16-bit counters (two to a 32-bit word,
// 128 KiB of shared memory, one block of 1024 threads an SM), each axis's or
// binning's map applied to the raw values once, at the end. Two sources use
// it: the joint histogram of two 8-bit columns (gpu_joint: the value is the
// byte pair (a, b), a << 8 | b) and 16-bit samples into more bins than 32-bit
// shared counters hold (gpu_raw_values: the value is the sample's bits).
//
// Value v is half v & 1 of word v >> 1. A step of a thread is two 16-byte
// loads, 16 values: each value an address, an increment (1 or 1 << 16) and
// the atomic, and the old values are tested together after the step's 16
// atomics: a half crossing a multiple of 2^14 flips its bit 14, so the OR of
// old ^ new over the step, tested at bits 14 and 30, says whether one of the
// 16 words must be listed (all 16 are then; the drain moves a listed word's
// halves, whatever they hold). A step whose 16 values are one value extends
// the thread's run instead (a constant input costs one exact addition a run).
// A chunk adds at most 3 x 2^14 values, and a half that reaches 2^14 is moved
// to the output at the barrier after the chunk, so no half passes 2^16 - 1:
// the counts are exact on any data; a drain list that fills makes that
// barrier scan every half.
//
// The end: each block adds its words' halves as floats into a sum per raw
// value in the workspace (256 KiB; one 16-byte reduction per four values), and
// a second kernel, launched as a dependent launch, adds the sums to the slots
// through the map and leaves the workspace zero. After a block's last drain
// every half is below 2^14, so up to 1024 blocks' sums stay below 2^24, where
// every float sum of integers is exact. Larger grids, and calls without the
// workspace, add each block's halves to the slots with 64-bit atomics.
// Design and measurements: docs/PERFORMANCE-shapes.md (N-d changes 10-14)
// and docs/PERFORMANCE-general.md (section 21).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "cuda/general_common.cuh"

namespace levelhist::cuda_detail::raw_pairs {

using general::round_up;

// 16-bit counters: at most 3 x 2^14 values between barriers, and a half that
// reaches 2^14 drained at the next one (below it, a chunk cannot take a half
// past 2^16 - 1): three steps of two 16-byte loads of u8 a thread between
// barriers. With 2^15 values (two loads) and 2^15 the limit, two u8 images
// measured 32% / 48% of the read limit (noise / constant), 33% / 55% this way
// (H200; docs/PERFORMANCE-shapes.md).
constexpr std::uint64_t kPackedChunkPoints = 48 * 1024;
constexpr std::uint32_t kHalfLimit = 0x10000 - kPackedChunkPoints;  // a 16-bit half at or above this is drained
static_assert(kPackedChunkPoints < 0x10000 && kPackedChunkPoints % 16 == 0);
constexpr std::uint32_t kDrainListDefault = 1024;  // halves listed per chunk before a full scan
// The drain list's bytes: its entries and its two counters (one per chunk parity).
inline std::size_t drain_bytes(std::uint32_t capacity) { return (std::size_t{capacity} + 2) * 4; }

constexpr std::uint32_t kPairWords = 32768;  // 65536 16-bit halves
// The workspace of the float end: one float sum per raw value.
constexpr std::size_t kPairSumBytes = 2 * std::size_t{kPairWords} * sizeof(float);
// The most blocks whose float sums stay exact: each adds less than kHalfLimit a value.
constexpr std::uint64_t kFloatEndMostBlocks = (std::uint64_t{1} << 24) / kHalfLimit;
static_assert(kFloatEndMostBlocks * (kHalfLimit - 1) < (std::uint64_t{1} << 24));

__device__ __forceinline__ std::uint64_t umin(std::uint64_t a, std::uint64_t b) { return a < b ? a : b; }

// What the counting kernel needs besides its source and its slots.
struct RawWork {
  std::uint64_t n;             // values (after the source's lead)
  std::uint64_t chunks;
  std::uint64_t chunk_points;  // kPackedChunkPoints
  std::uint32_t drain_capacity;
  bool two_values;                // sources of two byte columns: vectors of at most two values a column by class
  std::uint32_t two_values_skip;  // steps a thread skips that test for after a step fails it
  std::uint64_t* out;
  float* pair_sums;  // the workspace's float sum per raw value (nullptr: the 64-bit end)
};

// Pair k of two columns' words: byte k of b's word in bits 0-7, byte k of
// a's in bits 8-15 (bits 16-31: don't care).
__device__ __forceinline__ unsigned pair_bits(unsigned a_word, unsigned b_word, int k) {
  return __byte_perm(b_word, a_word, k | (4 + k) << 4);
}

__device__ __forceinline__ bool all_bytes_equal(const uint4& v) {
  const unsigned m = (v.x & 0xFFu) * 0x01010101u;
  return ((v.x ^ m) | (v.y ^ m) | (v.z ^ m) | (v.w ^ m)) == 0;
}

// Adds the two words' four halves (values 2k .. 2k + 3 of word k and k + 1)
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

// ---- sources: where the raw values come from -------------------------------------
// A source gives a chunk of `count` values as `steps(count)` steps of two
// 16-byte loads (16 values) and the rest one by one; `lead` values before the
// first (16-byte aligned) value are counted by the kernel's end, outside the
// chunks' bound.

// Two columns of bytes, 16-byte aligned: value (a, b) is a << 8 | b; a step
// is 16 pairs, a's and b's 16 bytes at the same points.
struct BytePairColumns {
  const unsigned char* a;
  const unsigned char* b;
  static constexpr bool kTwoValueColumns = true;
  static constexpr bool kHasLead = false;  // the kernel asks for lead_value only where kHasLead
  static constexpr std::uint32_t lead = 0;
  __device__ __forceinline__ std::uint64_t steps(std::uint64_t count) const { return count / 16; }
  __device__ __forceinline__ void load(std::uint64_t p0, std::uint64_t, std::uint64_t v, uint4 (&x)[2]) const {
    x[0] = __ldcs(reinterpret_cast<const uint4*>(a) + (p0 / 16 + v));
    x[1] = __ldcs(reinterpret_cast<const uint4*>(b) + (p0 / 16 + v));
  }
  // Value j of a step (bits 16-31: don't care).
  template <int j>
  __device__ __forceinline__ unsigned value(const uint4 (&x)[2]) const {
    const unsigned wa[4] = {x[0].x, x[0].y, x[0].z, x[0].w}, wb[4] = {x[1].x, x[1].y, x[1].z, x[1].w};
    return pair_bits(wa[j / 4], wb[j / 4], j % 4);
  }
  // Whether the step's 16 values are one, and which.
  __device__ __forceinline__ bool one_value(const uint4 (&x)[2], unsigned& value) const {
    if (!(all_bytes_equal(x[0]) && all_bytes_equal(x[1]))) return false;
    value = pair_bits(x[0].x, x[1].x, 0) & 0xFFFFu;
    return true;
  }
  __device__ __forceinline__ unsigned value_at(std::uint64_t i) const {
    return static_cast<unsigned>(a[i]) << 8 | b[i];
  }
};

// 16-bit samples: the value is the sample's bits. A step is the chunk's
// first half's 8 samples at v and its second half's 8 at v (two coalesced
// loads). `samples` is 16-byte aligned where `vector`; else (an odd address)
// every sample is read bytewise, one by one.
struct SixteenBitSamples {
  const unsigned char* samples;  // the first sample after the lead
  const unsigned char* lead_at;  // the lead's first sample
  std::uint32_t lead;
  bool vector;
  static constexpr bool kTwoValueColumns = false;
  static constexpr bool kHasLead = true;
  __device__ __forceinline__ std::uint64_t steps(std::uint64_t count) const { return vector ? count / 16 : 0; }
  __device__ __forceinline__ void load(std::uint64_t p0, std::uint64_t steps, std::uint64_t v, uint4 (&x)[2]) const {
    const uint4* at = reinterpret_cast<const uint4*>(samples + 2 * p0);
    x[0] = __ldcs(at + v);
    x[1] = __ldcs(at + steps + v);
  }
  template <int j>
  __device__ __forceinline__ unsigned value(const uint4 (&x)[2]) const {
    const uint4& h = x[j / 8];
    const unsigned words[4] = {h.x, h.y, h.z, h.w};
    return (j % 2) ? words[(j / 2) % 4] >> 16 : words[(j / 2) % 4];
  }
  __device__ __forceinline__ bool one_value(const uint4 (&x)[2], unsigned& value) const {
    const unsigned m = (x[0].x & 0xFFFFu) * 0x10001u;
    if (((x[0].x ^ m) | (x[0].y ^ m) | (x[0].z ^ m) | (x[0].w ^ m) | (x[1].x ^ m) | (x[1].y ^ m) | (x[1].z ^ m) |
         (x[1].w ^ m)) != 0)
      return false;
    value = m & 0xFFFFu;
    return true;
  }
  __device__ __forceinline__ unsigned value_at(std::uint64_t i) const {
    if (vector) return reinterpret_cast<const std::uint16_t*>(samples)[i];
    return static_cast<unsigned>(samples[2 * i]) | static_cast<unsigned>(samples[2 * i + 1]) << 8;
  }
  __device__ __forceinline__ unsigned lead_value(std::uint32_t t) const {
    return reinterpret_cast<const std::uint16_t*>(lead_at)[t];  // a lead exists only at an even address
  }
};

// ---- the counting kernel ----------------------------------------------------------
// Slots: the map from a raw value to its slot (an offset into w.out), with
// `setup(smem)` building its shared tables (a barrier follows it) and
// `place(at)` laying them out from byte `at` on (host).

template <class Source, class Slots>
__global__ void __launch_bounds__(1024, 1) raw_pairs_kernel(RawWork w, Source src, Slots slots) {
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* words = reinterpret_cast<unsigned*>(smem);
  unsigned* list = words + kPairWords;
  unsigned* listed = list + w.drain_capacity;
  for (std::uint32_t i = threadIdx.x; i < kPairWords; i += blockDim.x) words[i] = 0;
  if (threadIdx.x < 2) listed[threadIdx.x] = 0;
  slots.setup(smem);
  __syncthreads();
  allow_dependent_launch();  // fold_pair_sums_kernel may launch (it waits for this grid's end)
  unsigned parity = 0;
  auto list_word = [&](unsigned word) {
    const unsigned i = atomicAdd(listed + parity, 1u);
    if (i < w.drain_capacity) list[i] = word;
  };
  // An exact addition of `length` (at most a chunk's values) to value v,
  // listed when it takes the half to kHalfLimit.
  auto add = [&](unsigned v, unsigned length) {
    const unsigned shift = (v & 1u) * 16;
    const unsigned old = atomicAdd(words + (v >> 1), length << shift);
    const unsigned half = (old >> shift) & 0xFFFFu;
    if (half < kHalfLimit && half + length >= kHalfLimit) list_word(v >> 1);
  };
  // Adds a word's two halves, `value`, to their slots (the caller clears the word).
  auto move = [&](unsigned word, unsigned value) {
    add_to_slot(w.out + slots(word * 2), value & 0xFFFFu);
    add_to_slot(w.out + slots(word * 2 + 1), value >> 16);
  };

  const std::uint64_t groups = gridDim.x;
  uint4 next[2] = {};
  bool loaded = false;
  unsigned run_value = 0xFFFFFFFFu, run_length = 0;
  unsigned two_values_skip = 0;
  // Carried classes (two byte columns): the key (two values of a, two of b)
  // and the four counts a byte each (at most 16 a step, 3 steps a thread a chunk).
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
    const std::uint64_t steps = src.steps(p1 - p0);
    std::uint64_t v = threadIdx.x;
    if (!loaded && v < steps) src.load(p0, steps, v, next);
    loaded = false;
    for (; v < steps; v += blockDim.x) {
      const uint4 x[2] = {next[0], next[1]};
      if (v + blockDim.x < steps) {
        src.load(p0, steps, v + blockDim.x, next);
      } else if (chunk + groups < w.chunks) {
        const std::uint64_t q0 = (chunk + groups) * w.chunk_points;
        const std::uint64_t q_steps = src.steps(umin(w.n, q0 + w.chunk_points) - q0);
        if (threadIdx.x < q_steps) {
          src.load(q0, q_steps, threadIdx.x, next);
          loaded = true;
        }
      }
      unsigned one;
      if (src.one_value(x, one)) {
        if (one != run_value) {
          if (run_length) add(run_value, run_length);
          run_value = one;
          run_length = 0;
        }
        run_length += 16;
        continue;
      }
      if constexpr (Source::kTwoValueColumns) {
        // At most two values a column (binary masks): the 16 pairs fall into
        // at most four, counted by popcounts; a thread carries its four
        // counts while its next steps hold the same four pairs, and at the
        // chunk's end the warp sums them where its lanes agree and one lane
        // adds them (random masks: every lane's 16 atomics on the same four
        // words took a clock a lane each, 18% of the read; counted by class,
        // 53-54%, noise within 0-4 points of the pair path:
        // docs/PERFORMANCE-shapes.md, N-d change 14).
        if (w.two_values) {
          TwoValues ta, tb;
          if (two_values_skip > 0) {
            --two_values_skip;
          } else if (two_values_of(x[0], ta) && two_values_of(x[1], tb)) {
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
      }
      unsigned flips = 0;
      auto count_value = [&](unsigned value) {
        const unsigned increment = 1u + (value & 1u) * 0xFFFFu;
        unsigned* at = reinterpret_cast<unsigned*>(smem + ((value & 0xFFFEu) << 1));
        const unsigned old = atomicAdd(at, increment);
        flips |= old ^ (old + increment);
      };
      [&]<int... j>(std::integer_sequence<int, j...>) {
        (count_value(src.template value<j>(x)), ...);
      }(std::make_integer_sequence<int, 16>{});
      if (flips & 0x40004000u) {
        [&]<int... j>(std::integer_sequence<int, j...>) {
          (list_word((src.template value<j>(x) & 0xFFFEu) >> 1), ...);
        }(std::make_integer_sequence<int, 16>{});
      }
    }
    for (std::uint64_t i = p0 + steps * 16 + threadIdx.x; i < p1; i += blockDim.x) add(src.value_at(i), 1u);
    if (run_length) add(run_value, run_length);  // a chunk's additions end with it (the bound counts chunks)
    if constexpr (Source::kTwoValueColumns) {
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
    }
    run_value = 0xFFFFFFFFu;
    run_length = 0;
    __syncthreads();
    // The drain (by word).
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
  // The values before the source's first aligned one: straight to their slots.
  if constexpr (Source::kHasLead)
    if (blockIdx.x == 0 && threadIdx.x < src.lead) add_to_slot(w.out + slots(src.lead_value(threadIdx.x)), 1u);
  // The block's counts, added to the output once.
  // With the workspace (w.pair_sums): four values' counts as one 16-byte float
  // add into the sum of each raw value, folded into the slots by
  // fold_pair_sums_kernel. On noise this is 8.7 M 64-bit atomics on 67081
  // slots replaced by 2.2 M vector adds on 65536 sums: bench/experiments/
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

// The raw values' float sums into their slots, leaving the sums zero: a
// dependent launch after raw_pairs_kernel (its launch and each block's map
// tables overlap the counting's end). One float4 a thread: 64 blocks of 256.
constexpr int kFoldThreads = 256;
constexpr unsigned kFoldBlocks = 2 * kPairWords / 4 / kFoldThreads;
template <class Slots>
__global__ void __launch_bounds__(kFoldThreads) fold_pair_sums_kernel(float* pair_sums, std::uint64_t* out,
                                                                      Slots slots) {
  extern __shared__ __align__(16) unsigned char smem[];
  slots.setup(smem);  // from the plan's maps: before the wait
  __syncthreads();
  wait_for_prior_grid();
  const unsigned value = (blockIdx.x * kFoldThreads + threadIdx.x) * 4;
  float4* at = reinterpret_cast<float4*>(pair_sums + value);
  const float4 f = __ldcg(at);
  if (f.x == 0.f && f.y == 0.f && f.z == 0.f && f.w == 0.f) return;
  *at = make_float4(0.f, 0.f, 0.f, 0.f);
  const float sums[4] = {f.x, f.y, f.z, f.w};
#pragma unroll
  for (unsigned q = 0; q < 4; ++q)
    if (sums[q] != 0.f)
      atomicAdd(reinterpret_cast<unsigned long long*>(out + slots(value + q)),
                static_cast<unsigned long long>(sums[q]));
}

// Shared memory of raw_pairs_kernel with these slots (which it lays out).
template <class Slots>
std::size_t counting_shared_bytes(Slots& slots, std::uint32_t drain_capacity) {
  return slots.place(round_up(std::size_t{kPairWords} * 4 + drain_bytes(drain_capacity), 16));
}

// Counts w.n values of `src` into w.out (cleared by the caller unless it
// accumulates) with `smem` bytes of shared memory (counting_shared_bytes):
// the float end where `workspace` holds kPairSumBytes (zero, and left zero)
// and `float_end`, else each block's 64-bit atomics.
template <class Source, class Slots>
void count(RawWork w, const Source& src, Slots slots, std::size_t smem, void* workspace, std::size_t workspace_bytes,
           bool float_end_wanted, cudaStream_t stream) {
  w.chunk_points = kPackedChunkPoints;
  w.chunks = (w.n + w.chunk_points - 1) / w.chunk_points;
  if (w.chunks == 0 && src.lead == 0) return;
  auto kernel = raw_pairs_kernel<Source, Slots>;
  general::allow_large_shared(kernel);
  const int resident = std::max(general::resident_blocks_with(kernel, 1024, smem), 1);
  const std::uint64_t blocks = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(resident), 1,
                                                         std::max<std::uint64_t>(w.chunks, 1));
  const bool float_end = workspace != nullptr && workspace_bytes >= kPairSumBytes && blocks <= kFloatEndMostBlocks &&
                         float_end_wanted;
  w.pair_sums = float_end ? static_cast<float*>(workspace) : nullptr;
  kernel<<<static_cast<unsigned>(blocks), 1024, smem, stream>>>(w, src, slots);
  LEVELHIST_CUDA_CHECK_LAUNCH();
  if (!float_end) return;
  // The fold's shared memory: the slots' tables alone.
  Slots fold_slots = slots;
  const std::size_t fold_smem = fold_slots.place(0);
  auto fold_kernel = fold_pair_sums_kernel<Slots>;
  general::allow_large_shared(fold_kernel);
  launch_kernel<true>(fold_kernel, kFoldBlocks, kFoldThreads, fold_smem, stream, w.pair_sums, w.out, fold_slots);
}

}  // namespace levelhist::cuda_detail::raw_pairs
