// One shared-memory histogram per block for 16-, 32- and 64-bit samples and
// float samples, any binning, through the exact maps of general_common.cuh
// (design study and measurements in docs/PERFORMANCE-general.md).
// Three layouts of the per-block counters, one policy each, one kernel:
//
//   swizzled  one copy of the bins + 3 slots, word a at a ^ ((a >> 5) & 31):
//             structured data (a ramp read 8 samples per thread) would put
//             lanes l and l + 4 in one bank; the XOR spreads them, for two
//             instructions (u16 in 4096 bins: 3531-3987 GB/s on every
//             distribution, H200, one block of 1024 threads an SM).
//   lanes     32 copies interleaved by lane, h[slot][lane]: a warp's 32
//             atomics always hit 32 different banks, whatever the data; for
//             small slot counts (f32 by 64 explicit edges, 1 GiB, H200:
//             3270-3672 GB/s on every distribution).
//   split     the slots in P parts of at most ~56 K counters (65536 bins: two
//             halves of 128 KB); blocks come in groups of P that read the same
//             16-byte words, block p of a group counting part p, so the input
//             is read from DRAM once and from L2 P times (u16 per value:
//             1763-2523 GB/s).
//
// Two ways to end a call, one launch either way (a cell table for explicit
// edges is prepared once per plan):
//   fold    every block adds its counts into 32-bit per-call accumulators in
//           the workspace (n <= 2^31 per call); the last block to finish (a
//           ticket) folds them into the caller's 64-bit slots and leaves the
//           workspace zeroed.
//   direct  block 0 clears the slots as it starts and raises a flag; every
//           block adds its counts straight into the slots once it has seen
//           the flag (gpu_lane_columns' direct path). No last block: its
//           serial round trips to L2 are what a 16 MiB call's tail waits for.
//           Calls up to SharedPolicy::kDirectMaxBytes (the choice and its
//           measurements: docs/PERFORMANCE-general.md, section 14).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/env_knob.hpp"
#include "core/strategies.hpp"
#include "cuda/general_common.cuh"

namespace levelhist::cuda_detail::general {

enum class Layout : std::uint8_t { swizzled, lanes, split };

// Tuning per layout (H200 studies: one block of 1024 threads an SM for all
// three; 2 loads in flight for the swizzled layout and the lane copies, 4 for
// the 128 KB halves).
// One block of 1024 threads an SM has the warps of the two of 512 that the
// swizzled layout and the lane copies had before, but half the blocks'
// partial counts to add at a call's end, and one block's clearing and setup
// an SM (H200: u16 into 4096 bins 1.17x on uniform data at 16 MiB, 1.19-1.26x
// at 4 MiB, 1.00-1.07x at 1 GiB; f32 into 1024 bins 0.97-1.13x; f32 by 64
// uneven edges in lane copies 1.00-1.02x at 16 MiB, 1.01-1.07x at 1 GiB;
// docs/PERFORMANCE-general.md, section 18).
// Prefetch: the next trip's loads are issued before this trip's samples are
// counted, so a warp has loads in flight while it counts (f32 into 1024 bins
// at 1 GiB, H200: 81% -> 93% of the read; docs/PERFORMANCE-general.md,
// section 13). Not yet the split layout's (its 1024-thread blocks keep four
// loads a trip at 64 registers; early loads there are not measured).
template <Layout L, bool Prefetch = L != Layout::split>
struct SharedPolicy {
  static constexpr Layout kLayout = L;
  static constexpr int kThreads = 1024;
  static constexpr int kUnroll = L == Layout::split ? 4 : 2;
  static constexpr bool kPrefetch = Prefetch;
  // The bytes a block counts: 16 per counter it adds into the accumulators at
  // its end, within [16 KiB, 64 KiB], up to the resident blocks. Small enough that
  // a 4-16 MiB call fills the GPU; the upper end where the additions of
  // thousands of counters by every block start to cost (u16 into 4096 bins,
  // H200, 16 MiB: 18.1 us at 64 KiB a block, 22.4 at 16 KiB; the rule this
  // replaced, 16x the counters' shared bytes, gave a 16 MiB call 8 to 256
  // blocks and up to 8x the time: docs/PERFORMANCE-general.md, the small calls).
  // With one block an SM, a 4 MiB call of 4099 slots takes 64 blocks, so 64
  // SMs; 16 or 32 KiB a block there (every SM) measured 0.96-0.97x on uniform data
  // and 1.07-1.11x on constant (H200, with the fold's end, before the direct
  // end took calls up to 4 MiB; docs/BENCHMARKS.md, 2026-11-29 fifth session):
  // not taken, the uniform case being the slower one.
  static constexpr std::uint64_t kMinBytesPerBlock = 16 * 1024;
  static constexpr std::uint64_t kMaxBytesPerBlock = 64 * 1024;
  static constexpr std::uint64_t kBytesPerCounter = 16;
  static constexpr std::uint32_t kMaxParts = 8;  // split: the input is read P times (once from DRAM)
  // Without this ptxas caps a 1024-thread block at 32 registers (and
  // spilled); one block an SM: 64 registers (ptxas would take 66 for u16
  // with even bins and the early loads, which that kernel therefore leaves out).
  static constexpr int kMinBlocksPerSM = 1;
  // The direct end up to this many bytes a call (the fold above), and in the
  // swizzled layout only up to kDirectMaxSlots, or at any slot count up to
  // kDirectAnySlotsMaxBytes. With one block of 1024 threads an SM (H200, the
  // two ends by turns in one binary; docs/PERFORMANCE-general.md, section 18):
  // f32 into 1024 bins (1027 slots) 1.05-1.15x direct at 16 MiB, 1.07-1.23x at
  // 4 MiB, 1.00-1.06x at 64 MiB; u16 into 4096 bins direct 1.01-1.23x at 4 MiB
  // but 0.96-0.98x on uniform data at 16 and 64 MiB, where every block's
  // 64-bit additions of 4099 slots cost more than the fold's 32-bit ones and
  // its last block. 2048 lies between the two measured slot counts.
  static constexpr std::uint64_t kDirectMaxBytes = std::uint64_t{64} << 20;
  static constexpr std::uint32_t kDirectMaxSlots = L == Layout::swizzled ? 2048 : ~0u;
  static constexpr std::uint64_t kDirectAnySlotsMaxBytes = L == Layout::swizzled ? std::uint64_t{4} << 20 : kDirectMaxBytes;
  static __device__ void mark(int) {}  // a timing hook (thread 0 of each block; SharedMark)
};

// The points of a block's life that a timeline study records
// (bench/experiments/shared_timeline.cu; Policy::mark, empty in the library).
enum SharedMark : int {
  kSharedMarkStart,    // the block's first instruction
  kSharedMarkWaited,   // the kernel before it in the stream has completed (wait_for_prior_grid)
  kSharedMarkCleared,  // counters cleared, the map set up: counting starts
  kSharedMarkCounted,  // every sample of the block counted
  kSharedMarkAdded,    // thread 0's additions to the accumulators (or slots) issued
  kSharedMarkTicket,   // the fold: the block's ticket taken (after the fence)
  kSharedMarkFolded,   // the last block: the fold into the slots done
  kSharedMarks
};

struct SharedArgs {
  const unsigned char* samples;
  std::uint64_t n;
  unsigned* accum;       // workspace: slot_count per-call 32-bit counts
  unsigned* ticket;      // workspace: blocks done (fold)
  unsigned* cleared;     // workspace (direct): 0 until block 0 has cleared the slots, then 1 + blocks that saw it
  std::uint64_t* slots;  // the caller's 64-bit slots
  bool accumulate;
  bool direct;      // the direct end (above); the fold's otherwise
  bool fold_batch;  // the fold: eight slots a thread at once (fold_into_slots)
  bool setup_early; // the map's setup before the wait for the kernel ahead
  bool flag_early;  // direct: the flag read before the counting, its answer used after
  bool fence_sc;    // __threadfence at the flag and the ticket, else fence_acq_rel_gpu
  std::uint32_t slot_count;  // bins + 3
  std::uint32_t parts;       // split: blocks per group; else 1
  std::uint32_t width;       // slots per part
};

__device__ __forceinline__ std::uint32_t swizzle(std::uint32_t a) { return a ^ ((a >> 5) & 31u); }

// Shared 32-bit words of the counters of one block.
template <Layout L>
constexpr std::size_t counter_words(std::uint32_t width) {
  return L == Layout::lanes ? std::size_t{width} * 32 : round_up(width, 32);
}

// Whether a map finds a vector's slots at once (Map::slots<N>).
template <class Map, class T, int N, class = void>
inline constexpr bool kHasSlots = false;
template <class Map, class T, int N>
inline constexpr bool kHasSlots<Map, T, N,
                                std::void_t<decltype(std::declval<const Map&>().template slots<N>(
                                    std::declval<const T (&)[N]>(), std::declval<std::uint32_t (&)[N]>()))>> = true;

// Launched as a programmatic dependent launch (cuda_common.cuh): the next call
// may start as this one does; this one clears its counters and sets up its
// map before it waits for the kernel ahead of it, and touches global memory
// that a kernel may write only after.
template <class Policy, class T, class Map>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerSM) shared_histogram_kernel(SharedArgs a, Map map) {
  constexpr Layout L = Policy::kLayout;
  if (threadIdx.x == 0) Policy::mark(kSharedMarkStart);
  allow_dependent_launch();
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* h = reinterpret_cast<unsigned*>(smem);
  const std::uint32_t words = static_cast<std::uint32_t>(counter_words<L>(a.width));
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) h[i] = 0;
  // The map's setup reads no memory a kernel writes (an even map computes its
  // thresholds; a cell table is the plan's, uploaded synchronously when the
  // plan was made), so it too runs while the kernel ahead ends: f32 into 1024
  // even bins spent 0.64 us of a 16 MiB call's 8.7 between the wait and the
  // counting (H200, shared_timeline; docs/PERFORMANCE-general.md, section 19).
  // (One call of setup, the wait moved around it: with two calls, one on
  // each side, the table's pointer could be the plan's or shared memory, and
  // ptxas read the cell table with generic loads instead of LDS.)
  if (!a.setup_early) wait_for_prior_grid();
  map.setup(smem + round_up(std::size_t{words} * 4, 16));
  wait_for_prior_grid();  // returns at once if it has already
  if (threadIdx.x == 0) Policy::mark(kSharedMarkWaited);
  // Direct: block 0 clears the slots; its thread 0 raises the flag after the
  // barrier (its fence waits for the stores; the other warps count meanwhile).
  const bool clear_slots = a.direct && !a.accumulate;
  if (clear_slots && blockIdx.x == 0)
    for (std::uint32_t s = threadIdx.x; s < a.slot_count; s += blockDim.x) a.slots[s] = 0;
  __syncthreads();
  if (clear_slots && blockIdx.x == 0 && threadIdx.x == 0) {
    if (a.fence_sc) __threadfence();
    else fence_acq_rel_gpu();  // the clearing, before the flag (a release)
    atomicAdd(a.cleared, 1u);
  }
  // Direct: the flag read now, while the block counts, so that its round
  // trip to L2 is not on the block's path at the end. Block 0 raised it as it
  // started, so only blocks that started with block 0 may see it still down
  // (they read it again after counting).
  unsigned flag_seen = 0;
  if (clear_slots && a.flag_early && threadIdx.x == 0) flag_seen = *static_cast<volatile unsigned*>(a.cleared);
  if (threadIdx.x == 0) Policy::mark(kSharedMarkCleared);

  const std::uint32_t part = blockIdx.x % a.parts;
  const std::uint32_t first = part * a.width;
  const std::uint32_t lane = threadIdx.x & 31;
  // Even bins remember the last sample a thread found next to an edge
  // (EvenMap's NearEdgeMemo: a constant on an edge otherwise takes the
  // near-edge comparison on every sample; docs/PERFORMANCE-general.md, section 10).
  [[maybe_unused]] typename EvenMap<T>::NearEdgeMemo memo;
  auto slot_of = [&](T x) -> std::uint32_t {
    if constexpr (std::is_same_v<Map, EvenMap<T>>) return map(x, memo);
    else return map(x);
  };
  auto add = [&](std::uint32_t s) {
    if constexpr (L == Layout::split) {
      const std::uint32_t j = s - first;  // wraps for slots of other parts
      if (j < a.width) atomicAdd(h + swizzle(j), 1u);
    } else if constexpr (L == Layout::lanes) {
      atomicAdd(h + s * 32 + lane, 1u);
    } else {
      atomicAdd(h + swizzle(s), 1u);
    }
  };
  auto count = [&](T x) { add(slot_of(x)); };
  // A vector's samples: through the map's slots() where it has one (a cell
  // table: the vector's table loads in flight together), else one by one.
  auto count_vector = [&](const uint4& v) {
    T x[kPerVector<T>];
    unpack(v, x);
    if constexpr (kHasSlots<Map, T, kPerVector<T>>) {
      std::uint32_t s[kPerVector<T>];
      map.slots(x, s);
#pragma unroll
      for (int k = 0; k < kPerVector<T>; ++k) add(s[k]);
    } else {
#pragma unroll
      for (int k = 0; k < kPerVector<T>; ++k) count(x[k]);
    }
  };

  const std::uint32_t group = blockIdx.x / a.parts, groups = gridDim.x / a.parts;
  const std::uint64_t stride = std::uint64_t{groups} * Policy::kThreads;
  std::uint64_t i = std::uint64_t{group} * Policy::kThreads + threadIdx.x;
  if (reinterpret_cast<std::uintptr_t>(a.samples) % sizeof(T) == 0) {
    const Split16 sp = split16<T>(a.samples, a.n);
    if (group == 0) {  // at most 15 samples before the first and after the last 16-byte boundary
      if (threadIdx.x < sp.head) count(reinterpret_cast<const T*>(a.samples)[threadIdx.x]);
      if (sp.tail + threadIdx.x < a.n) count(reinterpret_cast<const T*>(a.samples)[sp.tail + threadIdx.x]);
    }
    const uint4* body = reinterpret_cast<const uint4*>(a.samples + sp.head * sizeof(T));
    // 16-bit samples with even bins keep the plain loop: with the early loads
    // ptxas (sm_90) spills them at 64 registers.
    constexpr bool early_loads = Policy::kPrefetch && !(sizeof(T) == 2 && std::is_same_v<Map, EvenMap<T>>);
    if constexpr (early_loads) {
      i = for_each_vector_early<Policy::kUnroll>(
          i, stride, sp.vectors, [&](std::uint64_t j) { return __ldcs(body + j); },  // read once: evict first
          [&](const uint4& v, std::uint64_t) { count_vector(v); });
    }
    // After the early loads no whole trip is left, so this loop does not run;
    // written as an else, the f32 even-bins kernel measured in section 13 took
    // 64 registers instead of 60 (ptxas, sm_90), so it stays as it was timed.
    for (; i + (Policy::kUnroll - 1) * stride < sp.vectors; i += Policy::kUnroll * stride) {
      uint4 v[Policy::kUnroll];
#pragma unroll
      for (int u = 0; u < Policy::kUnroll; ++u) v[u] = __ldcs(body + i + u * stride);  // read once: evict first
#pragma unroll
      for (int u = 0; u < Policy::kUnroll; ++u) count_vector(v[u]);
    }
    for (; i < sp.vectors; i += stride) count_vector(__ldcs(body + i));
  } else {  // samples not aligned to their size: one unaligned load each
    for (; i < a.n; i += stride) count(load_unaligned<T>(a.samples + i * sizeof(T)));
  }
  __syncthreads();
  if (threadIdx.x == 0) Policy::mark(kSharedMarkCounted);

  const std::uint32_t owned = min(a.width, a.slot_count - first);
  auto block_count = [&](std::uint32_t j) {
    if constexpr (L == Layout::lanes) {
      unsigned c = 0;
#pragma unroll 8
      for (std::uint32_t col = 0; col < 32; ++col) c += h[j * 32 + ((col + j) & 31)];  // staggered: no conflicts
      return c;
    } else {
      return h[swizzle(j)];
    }
  };

  if (a.direct) {
    // Block 0 raises the flag as it starts, waiting for no other block of
    // this call, and is dispatched first: a block that waits here never
    // holds its place.
    if (clear_slots) {
      if (threadIdx.x == 0) {
        if (flag_seen == 0)
          while (*static_cast<volatile unsigned*>(a.cleared) == 0) {
          }
        // The clearing, before this block's additions (an acquire; the
        // barrier orders the other threads' after it).
        if (a.fence_sc) __threadfence();
        else fence_acq_rel_gpu();
      }
      __syncthreads();
    }
    for (std::uint32_t j = threadIdx.x; j < owned; j += blockDim.x) add_to_slot(a.slots + first + j, block_count(j));
    if (threadIdx.x == 0) Policy::mark(kSharedMarkAdded);
    // The last block to have seen the flag (block 0's raise + every block)
    // leaves it zero for the next call.
    if (clear_slots && threadIdx.x == 0 && atomicAdd(a.cleared, 1u) == gridDim.x) *a.cleared = 0;
    return;
  }

  // This block's counts into the per-call accumulators.
  for (std::uint32_t j = threadIdx.x; j < owned; j += blockDim.x) {
    const unsigned c = block_count(j);
    if (c) atomicAdd(a.accum + first + j, c);
  }
  if (threadIdx.x == 0) Policy::mark(kSharedMarkAdded);

  // The last block folds the call's counts into the 64-bit slots and leaves
  // the workspace zero (as gpu_lane_columns does).
  const bool last = a.fence_sc ? last_block_to_finish<true>(a.ticket) : last_block_to_finish<false>(a.ticket);
  if (threadIdx.x == 0) Policy::mark(kSharedMarkTicket);
  if (!last) return;
  if (a.fold_batch) fold_into_slots<8>(a.accum, a.slots, a.slot_count, a.accumulate);
  else fold_into_slots<1>(a.accum, a.slots, a.slot_count, a.accumulate);
  if (threadIdx.x == 0) {
    *a.ticket = 0;
    Policy::mark(kSharedMarkFolded);
  }
}

// ---- the host side of the three strategies ------------------------------------------

// Which shared layouts can count a problem, with why not.
template <Layout L>
struct SharedStrategy {
  using Policy = SharedPolicy<L>;

  // Slots per part and parts for a problem; parts 0 when it does not fit.
  static void shape(const Problem& p, std::uint32_t* width, std::uint32_t* parts) {
    const std::uint64_t slots = p.binning->slots();
    const std::size_t smem = max_shared_bytes();
    const std::size_t tables = map_table_bytes(p);
    *width = 0;
    *parts = 0;
    if (smem <= tables + 1024) return;
    const std::size_t words = (smem - tables - 64) / 4;  // counters that fit next to the tables
    if constexpr (L == Layout::split) {
      const std::uint64_t per_part = words / 32 * 32;
      const std::uint64_t P = (slots + per_part - 1) / per_part;
      if (P > Policy::kMaxParts) return;
      *parts = static_cast<std::uint32_t>(std::max<std::uint64_t>(P, 1));
      *width = static_cast<std::uint32_t>((slots + *parts - 1) / *parts);
    } else {
      if (counter_words<L>(static_cast<std::uint32_t>(std::min<std::uint64_t>(slots, 1u << 30))) > words) return;
      *parts = 1;
      *width = static_cast<std::uint32_t>(slots);
    }
  }

  static bool supports(const Problem& p, std::string* why_not, const char* name) {
    auto no = [&](const std::string& why) {
      if (why_not) *why_not = std::string(name) + ": " + why;
      return false;
    };
    if (sample_size(p.type) == 1) return no("8-bit samples are gpu_lane_columns' (any binning, at the read limit)");
    if (max_shared_bytes() == 0) return no("no CUDA device to size shared memory for");
    std::uint32_t width = 0, parts = 0;
    shape(p, &width, &parts);
    if (parts == 0) {
      if constexpr (L == Layout::split)
        return no(std::to_string(p.binning->slots()) + " slots need more than " + std::to_string(Policy::kMaxParts) +
                  " parts of shared memory (the input would be read more than 8 times); see gpu_bucket_sort");
      else if constexpr (L == Layout::lanes)
        return no("32 lane copies of " + std::to_string(p.binning->slots()) + " slots do not fit in shared memory");
      else
        return no(std::to_string(p.binning->slots()) + " 32-bit counters do not fit in shared memory (gpu_split_bins)");
    }
    return true;
  }

  // The workspace: the 32-bit accumulators, then the ticket and the direct end's flag.
  static std::size_t accumulator_bytes(std::uint64_t slots) { return round_up(slots * 4, 256); }
  static std::size_t workspace_bytes(const Problem& p) { return accumulator_bytes(p.binning->slots()) + 256; }

  // The study knobs, for comparisons in one binary (docs/PERFORMANCE-general.md;
  // docs/ARCHITECTURE.md lists them), read once:
  //   LEVELHIST_SHARED_BLOCK_BYTES   4 KiB .. 1 GiB: the bytes a block counts (unset or 0: the policy's rule)
  //   LEVELHIST_SHARED_DIRECT        0: the fold at every size, 1: the direct end at every size (unset or 2: the rule)
  //   LEVELHIST_SHARED_FOLD_BATCH=0  the fold one slot a thread at a time
  //   LEVELHIST_SHARED_PREFETCH=0    the loop without the early loads
  //   LEVELHIST_SHARED_EARLY_SETUP=0 the map's setup after the wait for the kernel ahead
  //   LEVELHIST_SHARED_EARLY_FLAG=0  the direct end reads its flag after the counting
  //   LEVELHIST_SHARED_FENCE_SC=1    __threadfence at the flag and the ticket
  struct Knobs {
    std::uint64_t block_bytes = 0;
    int direct = 2;
    bool fold_batch = true, prefetch = true, setup_early = true, flag_early = true, fence_sc = false;
  };
  static const Knobs& knobs() {
    static const Knobs k = [] {
      using ::levelhist::detail::env_knob;
      auto on = [](const char* name, bool fallback) { return env_knob(name, fallback ? 1 : 0, 0, 1) != 0; };
      Knobs r;
      const std::uint64_t bytes = env_knob("LEVELHIST_SHARED_BLOCK_BYTES", 0, 0, std::uint64_t{1} << 30);
      r.block_bytes = bytes ? std::max<std::uint64_t>(bytes, 4096) : 0;
      r.direct = static_cast<int>(env_knob("LEVELHIST_SHARED_DIRECT", 2, 0, 2));
      r.fold_batch = on("LEVELHIST_SHARED_FOLD_BATCH", true);
      r.prefetch = on("LEVELHIST_SHARED_PREFETCH", true);
      r.setup_early = on("LEVELHIST_SHARED_EARLY_SETUP", true);
      r.flag_early = on("LEVELHIST_SHARED_EARLY_FLAG", true);
      r.fence_sc = on("LEVELHIST_SHARED_FENCE_SC", false);
      return r;
    }();
    return k;
  }

  // The direct end or the fold, by the call's size and slots (the policy's rule).
  static bool direct_end(std::uint64_t bytes, std::uint64_t slots) {
    if (knobs().direct != 2) return knobs().direct == 1;
    return bytes <= Policy::kDirectAnySlotsMaxBytes || (bytes <= Policy::kDirectMaxBytes && slots <= Policy::kDirectMaxSlots);
  }

  template <class T, class Map>
  static void launch(const RunArgs& a, const Map& map, std::uint32_t width, std::uint32_t parts) {
    if constexpr (Policy::kPrefetch) {
      if (!knobs().prefetch) return launch_as<SharedPolicy<L, false>, T>(a, map, width, parts);
    }
    launch_as<Policy, T>(a, map, width, parts);
  }

  template <class P, class T, class Map>
  static void launch_as(const RunArgs& a, const Map& map, std::uint32_t width, std::uint32_t parts) {
    auto kernel = shared_histogram_kernel<P, T, Map>;
    allow_large_shared(kernel);
    const std::size_t smem = round_up(counter_words<L>(width) * 4, 16) + map.table_bytes();
    const int resident = resident_blocks_with(kernel, P::kThreads, smem);
    const std::uint64_t bytes = a.n * sizeof(T);
    const std::uint64_t per_block =
        knobs().block_bytes ? knobs().block_bytes
                            : std::clamp<std::uint64_t>(P::kBytesPerCounter * width, P::kMinBytesPerBlock,
                                                        P::kMaxBytesPerBlock);
    const std::uint64_t groups = std::clamp<std::uint64_t>((bytes + per_block - 1) / per_block, 1,
                                                           std::max<std::uint64_t>(resident / parts, 1));
    SharedArgs args{};
    args.samples = static_cast<const unsigned char*>(a.samples);
    args.n = a.n;
    auto* ws = static_cast<unsigned char*>(a.workspace);
    const std::size_t slot_count = a.binning->slots();
    args.accum = reinterpret_cast<unsigned*>(ws);
    args.ticket = reinterpret_cast<unsigned*>(ws + accumulator_bytes(slot_count));
    args.cleared = args.ticket + 1;
    args.slots = a.slots;
    args.accumulate = a.accumulate;
    args.direct = direct_end(bytes, slot_count);
    args.fold_batch = knobs().fold_batch;
    args.setup_early = knobs().setup_early;
    args.flag_early = knobs().flag_early;
    args.fence_sc = knobs().fence_sc;
    args.slot_count = static_cast<std::uint32_t>(slot_count);
    args.parts = parts;
    args.width = width;
    launch_kernel<true>(kernel, static_cast<int>(groups * parts), P::kThreads, smem, stream_of(a), args, map);
  }

  static void run(const RunArgs& a) {
    Problem p{a.type, a.binning, a.n};
    std::uint32_t width = 0, parts = 0;
    shape(p, &width, &parts);
    if (parts == 0) throw Error(ErrorKind::internal, "shared histogram: the problem does not fit");
    const MapKind kind = choose_map(a.type, *a.binning);
    visit_sample_type(a.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (sizeof(T) == 1) {
        throw Error(ErrorKind::internal, "shared histogram: 8-bit samples");
      } else {
        with_map<T>(a, kind, [&](const auto& map) { launch<T>(a, map, width, parts); });
      }
    });
  }

  static std::vector<std::uint64_t> boundaries(const Problem& p) {
    const std::uint64_t per_vector = 16 / sample_size(p.type);
    const std::uint64_t tile = per_vector * Policy::kThreads;
    return {per_vector - 1, per_vector, 2 * per_vector + 1, tile, tile * Policy::kUnroll,
            Policy::kMinBytesPerBlock / sample_size(p.type), Policy::kMaxBytesPerBlock / sample_size(p.type),
            std::uint64_t{1} << 22};
  }
};

}  // namespace levelhist::cuda_detail::general
