// The weighted shared-memory histogram (gpu_weighted_shared; its x4 variant
// gpu_weighted_shared_x4 lives in the lab): weighted histograms (sums
// of f32 or f64 weights, one per sample, in double) with one double per slot
// in shared memory per block (16 copies of it by lane where they fit, for
// 4-byte samples with f32 weights), the exact bin maps of general_common.cuh.
//
// Shared f64 atomics (atom.shared.add.f64) on one address serialize: on
// constant data a plain shared f64 histogram ran at 60 GB/s (H200 study). So a
// warp whose 32 samples all fall into one slot sums its weights with five
// shuffles and adds once (warp aggregation: 2061/2099/1691 GB/s of samples +
// weights on uniform/constant/skewed data, 14-460x torch.bincount's global
// atomics). The _x4 variant also keeps 4 copies of the histogram interleaved
// by lane % 4, which spreads a warp's mixed slots over 4 addresses per slot
// (the x4 layout alone: 2616 uniform, 2428 skewed, but 221 constant); with the
// warp aggregation it should take the better of both (not yet measured).
//
// Blocks add their sums into per-call double accumulators in the workspace,
// four sets of them (block b into set b % 4); the last block (a ticket) adds
// the four into the caller's sums and clears them. With one set, every block's
// global f64 atomics went to the same slot_count addresses at the same time,
// and the L2 serializes atomics on one address: 396-660 blocks' flushes cost
// microseconds a call. Four sets: 1.16-1.19x on uniform data at 4-16 MiB, 0.95-
// 0.99x on constant data (one slot a block, and the last block reads 4 sets),
// the same at 1 GiB (H100; docs/PERFORMANCE-general.md, section 8).
// Sums are exact to f64 rounding; their order of addition depends on the
// hardware (histogram.hpp).
//
// Three tunings (WeightedPolicy). 4-byte samples with f32 weights take the
// column calls wherever 16 copies of the slots fit in shared memory (1024
// bins: 128 KiB): 16 copies by lane, 1024 threads, one vote a trip (the
// policy says why). Against one copy (H100, f32 + f32 into 1024 bins, GB/s
// uniform / constant / skewed, one binary, LEVELHIST_WEIGHTED_COLUMNS=0 by
// turns): 1 GiB 2719-2743 / 2785-2814 / 2650-2653 against 2027-2042 /
// 2285-2307 / 1874-1875 (91-92% of the read limit; 1.34 / 1.22 / 1.41x),
// 16 MiB 1.40 / 1.50 / 1.53x (docs/PERFORMANCE-general.md, "Weighted sums in
// 16 lane copies"). Other calls below 64 MiB of samples + weights take
// blocks of 512 threads; larger calls of 4-byte samples with f32 weights (where
// the columns do not fit) take blocks of 256 threads that load the next trip's
// vectors before they add the current ones: more loads in flight while the
// shared atomics (each a compare-and-swap loop in the SASS: sm_90 has no
// shared f64 add, nor a shared f32 one) wait. Against the 512-thread tuning,
// both with four sets (H100, f32 + f32 into 1024 bins, uniform / constant /
// skewed): 1 GiB 1.07 / 1.11 / 1.15x, 64 MiB 1.04 / 1.10 / 1.14x, but 32 MiB
// 0.93 / 1.08 / 1.10x and 16 MiB 0.85 / 1.11 / 1.03x.
//
// Register spills, examined and kept (so the files that instantiate it,
// gpu_weighted_shared.cu and the lab's gpu_weighted_shared_x4.cu, are built
// without ptxas's -warn-spills, CMakeLists.txt). With 512 threads (the small
// calls' tuning) and no minimum of blocks, ptxas (CUDA 13.0, sm_80 and sm_90)
// holds 9 (sm_80) to 13 (sm_90) of its 89 kernel instantiations at 64 or 40
// registers, 2 or 3 resident blocks per SM, by spilling 4 to 16 bytes: one to three
// loop-invariant 32-bit values (halves of the sample and weight base
// pointers), stored once before the grid-stride loop and reloaded from L1
// once per trip, beside the trip's 16-byte sample load, its 16 to 128 bytes of
// weights and its 4 to 16 shared f64 atomics (read in the SASS). Removing them
// costs more than they do: __launch_bounds__(512, 1) spills nothing but takes
// 88 to 128 registers, one block per SM; stepping pointers instead of an
// index, or the copy count as a template argument, remove some spills but
// move other instantiations across an occupancy step (40 -> 48 or 64 -> 78
// registers), a change that only a device run could justify. The large calls'
// 9 instantiations take 32 to 48 registers and spill nothing; forcing 40 on the
// ones that take 48 (__launch_bounds__ with a minimum of blocks) spilled 12-20
// bytes and ran 2-8% slower at 1 GiB (H100).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/env_knob.hpp"
#include "cuda/general_common.cuh"
#include "levelhist/strategy.hpp"

namespace levelhist::cuda_detail::weighted {

using namespace cuda_detail::general;
using cuda_detail::load_unaligned;
using cuda_detail::stream_of;

// One tuning of the kernel (plain data, as CUB's policies): threads per block,
// whether a thread loads its next trip's vectors before adding the current,
// and whether the warp votes once a trip (all its samples in one slot: one
// add for the warp) instead of once a sample.
// kStages > 0: the loop of for_each_staged_vector, which copies each trip's
// vectors into shared memory asynchronously, kStages - 1 trips ahead.
template <int Threads, bool Prefetch, bool TripVote = false, int Stages = 0>
struct WeightedTuning {
  static constexpr int kThreads = Threads;
  static constexpr bool kPrefetch = Prefetch;
  static constexpr bool kTripVote = TripVote;
  static constexpr int kStages = Stages;
  // Shared memory of the staging: a warp's trip is 32 vectors of samples and
  // 32 of weights (16 bytes each), kStages of them.
  static constexpr std::size_t kStageBytes = std::size_t{Threads} / 32 * Stages * 64 * 16;
};

struct WeightedPolicy {
  using SmallCalls = WeightedTuning<512, false>;
  using LargeCalls = WeightedTuning<256, true>;
  // Column calls: kColumnCopies copies of the histogram, copy = lane % 16, so
  // the 16 lanes of a half-warp (a 64-bit shared access is served a
  // half-warp at a time, 16 x 8 bytes = all 32 banks) always touch 16
  // different bank pairs, whatever their slots: each warp's load and
  // compare-and-swap take the two wavefronts 32 doubles need, where one copy
  // takes about three times that on uniform slots (the busiest of 16 bank
  // pairs among 16 random slots) and four copies about twice. 16 copies of
  // 1024 slots are 128 KiB, one block a multiprocessor: 1024 threads keep
  // 32 warps there. Lanes that share a slot then share its copy only in
  // pairs (lanes l and l + 16), so the warp need not vote on each sample to
  // keep 32 compare-and-swaps off one address: it votes once a trip, which
  // constant data needs (one add for the warp's 4 x 32 samples).
  // LEVELHIST_WEIGHTED_COLUMNS=0 turns them off.
  using ColumnCalls = WeightedTuning<1024, false, true>;
  static constexpr std::uint32_t kColumnCopies = 16;
  // The column calls with their loads staged in shared memory where it has
  // room beside the 16 copies and the map's table (64 KiB: up to about 1250
  // slots): one block of 1024 threads a multiprocessor at 64 registers has no
  // room for a prefetch in registers, so a warp's trip waits for its own
  // loads, and nothing is in flight while it adds. Asynchronous copies
  // (cp.async) a trip ahead keep 1 KiB a warp in flight without registers:
  // 32 KiB a multiprocessor, more than the H200's memory needs (its rate x
  // its latency / 132 multiprocessors is about 25 KiB). Three stages (96 KiB)
  // do not fit beside 1024 bins' 16 copies (128 KiB) and their 4 KiB table.
  // Taken from kLargeCallBytes up: H200, f32 + f32 into 1024 bins, 1 GiB
  // 1.21 / 1.21 / 1.15x uniform / constant / skewed, but 16 MiB 0.98 / 0.99 /
  // 0.97x (a warp makes about four trips there, and the stage's copy and read
  // cost more than the wait they hide; docs/PERFORMANCE-general.md, section 8).
  // LEVELHIST_WEIGHTED_STAGED=0 turns them off.
  using StagedColumnCalls = WeightedTuning<1024, false, true, 2>;
  // Calls of at least this many bytes of samples + weights take LargeCalls:
  // measured ahead at 64 MiB and 1 GiB, behind at 32 MiB and below (H100).
  // LEVELHIST_WEIGHTED_LARGE_CALL_BYTES sets it for the tests and studies.
  static constexpr std::uint64_t kLargeCallBytes = std::uint64_t{64} << 20;
  // LargeCalls serves 4-byte samples with f32 weights: measured on f32 + f32;
  // 32-bit integers have the same trip (4 samples, 16 bytes of weights). With
  // narrower samples or f64 weights a trip holds 32 to 128 bytes of weights,
  // and prefetching them takes 54 to 127 registers (ptxas, sm_90): unmeasured.
  template <class T, class W>
  static constexpr bool kHasLargeCalls = sizeof(T) == 4 && std::is_same_v<W, float>;
  // Sets of accumulators in the workspace that the blocks' sums go to.
  static constexpr std::uint32_t kAccumulatorSets = 4;
  // The bytes (of samples + weights) a block counts: 16 per sum it adds at its
  // end, within [16 KiB, 64 KiB], up to the resident blocks (the rule of the
  // shared-histogram strategies, shared_histogram.cuh). The rule before, 16x
  // the sums' shared bytes, gave a 16 MiB call into 1024 bins 128 blocks, or
  // 32 with the 4 copies of the _x4 variant.
  static constexpr std::uint64_t kMinBytesPerBlock = 16 * 1024;
  static constexpr std::uint64_t kMaxBytesPerBlock = 64 * 1024;
  static constexpr std::uint64_t kBytesPerSum = 16;
};

struct WeightedArgs {
  std::uint32_t stage_offset;  // bytes from the start of shared memory to the staging (kStages > 0)
  const unsigned char* samples;
  const unsigned char* weights;
  std::uint64_t n;
  double* accum;  // workspace: kAccumulatorSets x slot_count per-call sums
  unsigned* ticket;
  double* sums;  // the caller's sums
  bool accumulate;
  std::uint32_t slot_count;
  std::uint32_t copies;  // 1 or 4 (power of two)
};

// K weights of type W starting at byte p: 16-byte (or 8-byte) loads when
// `vector` (p aligned to them), else one unaligned load each.
template <class W, int K>
__device__ __forceinline__ void load_weights(const unsigned char* p, bool vector, W (&w)[K]) {
  constexpr int kBytes = K * static_cast<int>(sizeof(W));
  if (vector) {
    unsigned words[kBytes / 4];
    if constexpr (kBytes % 16 == 0) {
#pragma unroll
      for (int q = 0; q < kBytes / 16; ++q) {
        const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p) + q);
        words[4 * q] = v.x, words[4 * q + 1] = v.y, words[4 * q + 2] = v.z, words[4 * q + 3] = v.w;
      }
    } else {
      static_assert(kBytes == 8, "weights of one 16-byte sample vector are 8 or a multiple of 16 bytes");
      const uint2 v = __ldcs(reinterpret_cast<const uint2*>(p));
      words[0] = v.x, words[1] = v.y;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if constexpr (std::is_same_v<W, float>) w[k] = __uint_as_float(words[k]);
      else w[k] = __hiloint2double(static_cast<int>(words[2 * k + 1]), static_cast<int>(words[2 * k]));
    }
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) w[k] = load_unaligned<W>(p + k * sizeof(W));
  }
}

// The slot of one sample of each of the warp's 32 lanes: `slot` (lane 0's for
// a lane without a sample), lane 0's slot `first` (lane 0 always has one), and
// whether all 32 share it (then the warp adds once: warp aggregation).
struct WarpSlot {
  std::uint32_t slot, first;
  bool uniform;
};
__device__ __forceinline__ WarpSlot warp_slot(std::uint32_t slot, bool valid) {
  const std::uint32_t first = __shfl_sync(0xFFFFFFFFu, slot, 0);
  if (!valid) slot = first;
  return {slot, first, __all_sync(0xFFFFFFFFu, slot == first) != 0};
}

// Calls visit(x, w, valid) for each 16-byte vector of samples (x: its K
// samples, w: their weights) that this lane takes: vectors first + lane,
// first + stride + lane, ... below `vectors`. The trip count is the warp's
// (first is lane 0's), so the 32 lanes step together and can vote; `valid`
// says whether this lane has a vector in the trip. With Prefetch the loads of
// the next trip are issued before visit() of the current one.
template <class T, class W, bool Prefetch, class Visit>
__device__ __forceinline__ void for_each_vector(const uint4* body, const unsigned char* wbody, bool vector_weights,
                                                std::uint64_t vectors, std::uint64_t first, std::uint64_t stride,
                                                Visit&& visit) {
  constexpr int K = kPerVector<T>;
  constexpr std::size_t kWeightBytes = K * sizeof(W);
  const std::uint32_t lane = threadIdx.x & 31;
  if constexpr (Prefetch) {
    bool valid = first + lane < vectors;
    uint4 next_x{};
    W next_w[K];
    if (valid) {
      next_x = __ldcs(body + first + lane);
      load_weights<W, K>(wbody + (first + lane) * kWeightBytes, vector_weights, next_w);
    }
    for (std::uint64_t base = first; base < vectors; base += stride) {
      const uint4 xv = next_x;
      W w[K];
#pragma unroll
      for (int k = 0; k < K; ++k) w[k] = next_w[k];
      const bool has = valid;
      const std::uint64_t next = base + stride + lane;
      valid = next < vectors;
      if (valid) {
        next_x = __ldcs(body + next);
        load_weights<W, K>(wbody + next * kWeightBytes, vector_weights, next_w);
      }
      T x[K];
      if (has) unpack(xv, x);
      visit(x, w, has);
    }
  } else {
    for (std::uint64_t base = first; base < vectors; base += stride) {
      const std::uint64_t i = base + lane;
      const bool valid = i < vectors;
      T x[K];
      W w[K];
      if (valid) {
        unpack(__ldcs(body + i), x);
        load_weights<W, K>(wbody + i * kWeightBytes, vector_weights, w);
      }
      visit(x, w, valid);
    }
  }
}

// cp.async: a 16-byte copy from global to shared memory that needs no
// register for the data (L2 only: the input is read once).
__device__ __forceinline__ void copy_async16(void* shared_dst, const void* global_src) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(global_src) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most Pending of this thread's committed groups are in flight.
template <int Pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

// for_each_vector with f32 weights 16-byte aligned beside 4-byte samples (K
// = 4: a trip is one 16-byte vector of each), its loads staged in shared
// memory: each lane copies its own vectors of trip t + Stages - 1 into the
// warp's `stage` (Stages x 64 vectors) while it visits trip t, then reads
// trip t's back. A lane reads only what it copied, so no barrier: its own
// wait_group makes its copies visible to it.
template <class T, int Stages, class Visit>
__device__ __forceinline__ void for_each_staged_vector(const uint4* body, const uint4* wbody, std::uint64_t vectors,
                                                       std::uint64_t first, std::uint64_t stride, uint4* stage,
                                                       Visit&& visit) {
  static_assert(kPerVector<T> == 4 && Stages >= 2, "staged trips are a vector of 4-byte samples and one of weights");
  const std::uint32_t lane = threadIdx.x & 31;
  auto issue = [&](std::uint64_t base, int s) {
    const std::uint64_t i = base + lane;
    if (i < vectors) {
      copy_async16(stage + s * 64 + lane, body + i);
      copy_async16(stage + s * 64 + 32 + lane, wbody + i);
    }
    commit_copies();  // an empty group too: wait_copies counts groups
  };
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) issue(first + s * stride, s);
  int s = 0;
  for (std::uint64_t base = first; base < vectors; base += stride) {
    // Into the stage visited last trip: this lane's reads of it are done.
    issue(base + (Stages - 1) * stride, s == 0 ? Stages - 1 : s - 1);
    wait_copies<Stages - 1>();
    const bool valid = base + lane < vectors;
    T x[4];
    float w[4];
    if (valid) {
      unpack(stage[s * 64 + lane], x);
      const uint4 wv = stage[s * 64 + 32 + lane];
      w[0] = __uint_as_float(wv.x), w[1] = __uint_as_float(wv.y), w[2] = __uint_as_float(wv.z),
      w[3] = __uint_as_float(wv.w);
    }
    visit(x, w, valid);
    s = s + 1 == Stages ? 0 : s + 1;
  }
  wait_copies<0>();
}

template <class T, class W, class Map, class Tuning>
__global__ void __launch_bounds__(Tuning::kThreads) weighted_kernel(WeightedArgs a, Map map) {
  constexpr int K = kPerVector<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  double* h = reinterpret_cast<double*>(smem);
  const std::uint32_t copies = a.copies;
  const std::uint32_t words = a.slot_count * copies;
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) h[i] = 0.0;
  map.setup(smem + round_up(std::size_t{words} * 8, 16));
  __syncthreads();
  const std::uint32_t lane = threadIdx.x & 31, column = lane & (copies - 1);
  constexpr unsigned kAll = 0xFFFFFFFFu;

  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (reinterpret_cast<std::uintptr_t>(a.samples) % sizeof(T) == 0) {
    const Split16 sp = split16<T>(a.samples, a.n);
    const T* xs = reinterpret_cast<const T*>(a.samples);
    if (blockIdx.x == 0) {  // head and tail: at most 2 x 15 samples
      if (threadIdx.x < sp.head)
        atomicAdd(h + map(xs[threadIdx.x]) * copies + column,
                  static_cast<double>(load_unaligned<W>(a.weights + threadIdx.x * sizeof(W))));
      if (sp.tail + threadIdx.x < a.n)
        atomicAdd(h + map(xs[sp.tail + threadIdx.x]) * copies + column,
                  static_cast<double>(load_unaligned<W>(a.weights + (sp.tail + threadIdx.x) * sizeof(W))));
    }
    const uint4* body = reinterpret_cast<const uint4*>(a.samples + sp.head * sizeof(T));
    const unsigned char* wbody = a.weights + sp.head * sizeof(W);
    constexpr std::size_t kWeightBytes = K * sizeof(W);
    const bool vector_weights = reinterpret_cast<std::uintptr_t>(wbody) % (kWeightBytes < 16 ? kWeightBytes : 16) == 0;
    auto visit = [&](const T(&x)[K], const W(&w)[K], bool valid) {
      // Into copy warp mod copies, a warp's one add: with 16 copies a block
      // is 32 warps on one multiprocessor, and constant data would have
      // them all retrying compare-and-swaps on one address.
      const std::uint32_t warp_column = (threadIdx.x >> 5) & (copies - 1);
      if constexpr (Tuning::kTripVote) {
        std::uint32_t slot[K];
#pragma unroll
        for (int k = 0; k < K; ++k) slot[k] = valid ? map(x[k]) : 0;
        const std::uint32_t first = __shfl_sync(kAll, slot[0], 0);  // lane 0 always has a vector
        bool same = true;
#pragma unroll
        for (int k = 0; k < K; ++k) same = same && (!valid || slot[k] == first);
        if (__all_sync(kAll, same)) {  // the warp's whole trip in one slot
          double v = 0.0;
          if (valid) {
#pragma unroll
            for (int k = 0; k < K; ++k) v += static_cast<double>(w[k]);
          }
#pragma unroll
          for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(kAll, v, o);
          if (lane == 0) atomicAdd(h + first * copies + warp_column, v);
        } else if (valid) {
#pragma unroll
          for (int k = 0; k < K; ++k) atomicAdd(h + slot[k] * copies + column, static_cast<double>(w[k]));
        }
      } else {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const WarpSlot s = warp_slot(valid ? map(x[k]) : 0, valid);
          if (s.uniform) {  // one slot for the whole warp: sum, then one atomic
            double v = valid ? static_cast<double>(w[k]) : 0.0;
#pragma unroll
            for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(kAll, v, o);
            if (lane == 0) atomicAdd(h + s.first * copies + warp_column, v);
          } else if (valid) {
            atomicAdd(h + s.slot * copies + column, static_cast<double>(w[k]));
          }
        }
      }
    };
    bool staged = false;
    if constexpr (Tuning::kStages > 0 && std::is_same_v<W, float> && K == 4) {
      if (vector_weights) {
        uint4* stage = reinterpret_cast<uint4*>(smem + a.stage_offset) + (threadIdx.x >> 5) * (Tuning::kStages * 64);
        for_each_staged_vector<T, Tuning::kStages>(body, reinterpret_cast<const uint4*>(wbody), sp.vectors,
                                                  thread - lane, stride, stage, visit);
        staged = true;
      }
    }
    if (!staged) for_each_vector<T, W, Tuning::kPrefetch>(body, wbody, vector_weights, sp.vectors, thread - lane, stride, visit);
  } else {  // samples not aligned to their size: one unaligned load each
    for (std::uint64_t i = thread; i < a.n; i += stride)
      atomicAdd(h + map(load_unaligned<T>(a.samples + i * sizeof(T))) * copies + column,
                static_cast<double>(load_unaligned<W>(a.weights + i * sizeof(W))));
  }
  __syncthreads();

  double* accum = a.accum + (blockIdx.x % WeightedPolicy::kAccumulatorSets) * a.slot_count;
  for (std::uint32_t s = threadIdx.x; s < a.slot_count; s += blockDim.x) {
    // Copy (c + s) mod copies: neighbouring threads read different copies, so
    // a warp's 32 reads spread over the banks instead of landing copies
    // doubles apart (with 16 copies, all 32 in one bank pair).
    double v = 0.0;
    for (std::uint32_t c = 0; c < copies; ++c) v += h[s * copies + ((c + s) & (copies - 1))];
    if (v != 0.0 || v != v) atomicAdd(accum + s, v);
  }

  if (!last_block_to_finish(a.ticket)) return;
  for (std::uint32_t s = threadIdx.x; s < a.slot_count; s += blockDim.x) {
    double v = 0.0;
    for (std::uint32_t set = 0; set < WeightedPolicy::kAccumulatorSets; ++set)
      v += __longlong_as_double(static_cast<long long>(
          atomicExch(reinterpret_cast<unsigned long long*>(a.accum + set * a.slot_count + s), 0ull)));
    a.sums[s] = (a.accumulate ? a.sums[s] : 0.0) + v;
  }
  if (threadIdx.x == 0) *a.ticket = 0;
}

// ---- host side --------------------------------------------------------------------

template <std::uint32_t Copies>
bool supports(const Problem& p, std::string* why_not) {
  const char* name = Copies == 1 ? "gpu_weighted_shared" : "gpu_weighted_shared_x4";
  auto no = [&](const std::string& why) {
    if (why_not) *why_not = std::string(name) + ": " + why;
    return false;
  };
  if (!p.weighted) return no("counts weighted histograms only (Problem::weighted)");
  if (p.weight_type != SampleType::f32 && p.weight_type != SampleType::f64) return no("weights must be f32 or f64");
  if (max_shared_bytes() == 0) return no("no CUDA device to size shared memory for");
  const std::size_t need = round_up(p.binning->slots() * Copies * 8, 16) + map_table_bytes(p);
  if (need > max_shared_bytes())
    return no(std::to_string(Copies) + " copies of " + std::to_string(p.binning->slots()) +
              " double sums do not fit in shared memory");
  return true;
}

inline std::size_t accumulator_bytes(std::size_t slot_count) {
  return round_up(WeightedPolicy::kAccumulatorSets * slot_count * 8, 256);
}

inline std::size_t workspace_bytes(const Problem& p) { return accumulator_bytes(p.binning->slots()) + 256; }

// A block's shared memory: `copies` of the double sums, the map's table, then
// (kStages > 0) the stages from stage_offset() on.
template <class Map>
std::size_t stage_offset(std::size_t slot_count, std::uint32_t copies, const Map& map) {
  return round_up(slot_count * copies * 8, 16) + round_up(map.table_bytes(), 16);
}
template <class Tuning, class Map>
std::size_t shared_bytes(std::size_t slot_count, std::uint32_t copies, const Map& map) {
  return Tuning::kStages > 0 ? stage_offset(slot_count, copies, map) + Tuning::kStageBytes
                             : round_up(slot_count * copies * 8, 16) + map.table_bytes();
}

template <class T, class W, class Map, class Tuning>
void launch_tuned(const RunArgs& a, const Map& map, std::uint32_t copies, std::uint64_t bytes) {
  auto kernel = weighted_kernel<T, W, Map, Tuning>;
  allow_large_shared(kernel);
  const std::size_t slot_count = a.binning->slots();
  const std::size_t smem = shared_bytes<Tuning>(slot_count, copies, map);
  const int resident = resident_blocks_with(kernel, Tuning::kThreads, smem);
  const std::uint64_t per_block = std::clamp<std::uint64_t>(
      WeightedPolicy::kBytesPerSum * slot_count, WeightedPolicy::kMinBytesPerBlock, WeightedPolicy::kMaxBytesPerBlock);
  const std::uint64_t blocks = std::clamp<std::uint64_t>((bytes + per_block - 1) / per_block, 1, resident);
  auto* ws = static_cast<unsigned char*>(a.workspace);
  WeightedArgs args{};
  args.stage_offset = static_cast<std::uint32_t>(stage_offset(slot_count, copies, map));
  args.samples = static_cast<const unsigned char*>(a.samples);
  args.weights = static_cast<const unsigned char*>(a.weights);
  args.n = a.n;
  args.accum = reinterpret_cast<double*>(ws);
  args.ticket = reinterpret_cast<unsigned*>(ws + accumulator_bytes(slot_count));
  args.sums = a.weight_sums;
  args.accumulate = a.accumulate;
  args.slot_count = static_cast<std::uint32_t>(slot_count);
  args.copies = copies;
  kernel<<<static_cast<unsigned>(blocks), Tuning::kThreads, smem, stream_of(a)>>>(args, map);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

inline std::uint64_t large_call_bytes() {
  return ::levelhist::detail::env_knob("LEVELHIST_WEIGHTED_LARGE_CALL_BYTES", WeightedPolicy::kLargeCallBytes, 0,
                                       ~std::uint64_t{0});
}

inline bool columns_allowed() { return ::levelhist::detail::env_knob("LEVELHIST_WEIGHTED_COLUMNS", 1, 0, 1) != 0; }
inline bool staging_allowed() { return ::levelhist::detail::env_knob("LEVELHIST_WEIGHTED_STAGED", 1, 0, 1) != 0; }

// Copies = 1: the library's strategy, which takes the column calls' 16 copies
// where they fit in shared memory (else one); other counts (the lab's x4) are
// fixed.
template <class T, class W, class Map>
void launch(const RunArgs& a, const Map& map, std::uint32_t copies) {
  using Policy = WeightedPolicy;
  const std::uint64_t bytes = a.n * (sizeof(T) + sizeof(W));
  if constexpr (Policy::kHasLargeCalls<T, W>) {
    const std::size_t slots = a.binning->slots();
    if (copies == 1 && columns_allowed() &&
        shared_bytes<Policy::ColumnCalls>(slots, Policy::kColumnCopies, map) <= max_shared_bytes()) {
      if (bytes >= large_call_bytes() && staging_allowed() &&
          shared_bytes<Policy::StagedColumnCalls>(slots, Policy::kColumnCopies, map) <= max_shared_bytes())
        return launch_tuned<T, W, Map, Policy::StagedColumnCalls>(a, map, Policy::kColumnCopies, bytes);
      return launch_tuned<T, W, Map, Policy::ColumnCalls>(a, map, Policy::kColumnCopies, bytes);
    }
    if (bytes >= large_call_bytes()) return launch_tuned<T, W, Map, Policy::LargeCalls>(a, map, copies, bytes);
  }
  launch_tuned<T, W, Map, Policy::SmallCalls>(a, map, copies, bytes);
}

template <std::uint32_t Copies>
void run(const RunArgs& a) {
  const MapKind kind = choose_map(a.type, *a.binning);
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_map<T>(a, kind, [&](const auto& map) {
      if (a.weight_type == SampleType::f64) launch<T, double>(a, map, Copies);
      else launch<T, float>(a, map, Copies);
    });
  });
}

inline std::vector<std::uint64_t> boundaries(const Problem& p) {
  const std::uint64_t per_vector = 16 / sample_size(p.type);
  const std::uint64_t tile = per_vector * WeightedPolicy::SmallCalls::kThreads;
  return {per_vector - 1, per_vector, per_vector + 1, 32 * per_vector + 1, tile, 2 * tile + 3,
          WeightedPolicy::kMinBytesPerBlock / (sample_size(p.type) + sample_size(p.weight_type))};
}


// A Strategy of this kernel with `Copies` interleaved copies of the histogram.
template <std::uint32_t Copies>
constexpr Strategy make_strategy(const char* name, const char* summary, const char* source) {
  return Strategy{name,
                  Backend::cuda,
                  summary,
                  source,
                  supports<Copies>,
                  workspace_bytes,
                  run<Copies>,
                  boundaries,
                  kCapabilityWeights,
                  prepared_tables_bytes,
                  prepare_tables};
}

}  // namespace levelhist::cuda_detail::weighted
