// gpu_lane_columns: levelhist's 256-bin byte histogram at the memory-bandwidth
// limit, level on every distribution (issue 4; design study in
// docs/PERFORMANCE.md, bench/experiments/level256_study.cu).
//
// The idea. The slow case of a per-block shared histogram (004 Fig. 9.10, CUB)
// is uniform data: 32 random bins of one warp collide in shared-memory banks.
// Wilt's per-thread counters (000) avoid that by giving each thread a column,
// but pay a load and a store per byte plus periodic merges. Here every block
// keeps 32 copies of the histogram interleaved as h[bin][lane]: lane l of every
// warp increments only column l, so the 32 accesses of a warp instruction always
// fall in 32 different banks, whatever the data — zeros, one value, uniform
// noise or a photograph. The warps of a block share the columns through shared
// atomics (ATOMS.POPC.INC: one instruction per byte, no read-modify-write, no
// overflow flushes with 32-bit counters). 16-byte loads, four in flight per
// thread, through the non-coherent path as the limit kernel reads.
//
// One launch, no zeroing kernel, two ways to end a call (docs/PERFORMANCE.md,
// section 4, changes 5 and 6), both through the shared BinIndexer so any binning
// of 8-bit samples runs at the same speed:
// - small grids (small calls): block 0 clears the caller's 64-bit slots as it
//   starts and raises a flag in the workspace; every block adds its 256 row sums
//   straight into the slots once it has seen the flag. No fold at the end.
// - large grids: blocks add their row sums into 32-bit accumulators in the
//   workspace; the last block to finish (a ticket, as in the CUDA samples'
//   threadFenceReduction) folds them into the slots. Three round trips to L2
//   more at the end, but 256 addresses see one 32-bit addition per block, not a
//   64-bit one: with hundreds of blocks that serialization is what costs.
// Either way the workspace is left zero, as the contract requires.
#include <cstdint>

#include "core/strategies.hpp"
#include "cuda/cuda_common.cuh"

namespace levelhist::strategies {
namespace {

using cuda_detail::stream_of;

// Tuning policy per GPU generation (plain data, as in CUB's dispatch layer).
// sm_80 and sm_90 measured the same shape best; see docs/PERFORMANCE.md.
struct LaneColumnsPolicy {
  static constexpr int kBlockThreads = 512;
  static constexpr int kMinBlocksPerSM = 4;  // 2048 threads per SM: keeps registers at <= 32
  static constexpr int kUnroll = 4;  // 16-byte loads in flight per thread per iteration
  // Bytes per block below which no further block is launched: one full step of
  // kUnroll 16-byte loads per thread (32 KiB). A small call then costs one
  // memory round trip per thread (all its loads in flight at once) and as few
  // blocks as can carry them, so the per-block tail (row sums, 256 global
  // additions, the ticket) is paid as few times as possible. 4 KiB per block
  // (256 blocks at 1 MiB) measured no faster at 1 MiB and slower at 16 MiB
  // (docs/PERFORMANCE.md section 4).
  static constexpr std::uint64_t kMinBytesPerBlock = std::uint64_t{kBlockThreads} * 16 * kUnroll;
  // Grids up to this many blocks add straight into the slots (2 MiB at 32 KiB a
  // block). Measured: 32 blocks (1 MiB) 4.9 us direct against 5.1 folded; 512
  // blocks (16 MiB) 12.2 us direct against 10.5 folded. The crossover is placed
  // from those two points, assuming the direct path's loss grows with the
  // blocks adding to each address (~5 ns each).
  static constexpr unsigned int kMaxDirectBlocks = 64;
};

constexpr int kBins = 256;
constexpr int kLanes = 32;

// Per-call state in the workspace: zero between calls.
struct LaneColumnsWorkspace {
  // Large grids: this call's counts per byte value (n <= 2^31 per call), and
  // the blocks that have added theirs.
  unsigned int byte_counts[kBins];
  unsigned int blocks_done;
  // Small grids: 0 until block 0 has cleared the slots; then 1 + the blocks
  // that have added their counts. The last of them (it reads gridDim.x) sets it
  // back to 0.
  unsigned int cleared;
};

template <class Policy>
__global__ void __launch_bounds__(Policy::kBlockThreads, Policy::kMinBlocksPerSM)
    lane_columns_kernel(const unsigned char* samples, std::uint64_t n, LaneColumnsWorkspace* ws,
                        std::uint64_t* slots, bool accumulate, bool is_signed, BinIndexer indexer) {
  constexpr int kThreads = Policy::kBlockThreads;
  static_assert(kThreads >= kBins, "thread b adds the row sum of byte value b");
  __shared__ alignas(16) unsigned int columns[kBins * kLanes];  // columns[bin * 32 + lane]

  for (int i = threadIdx.x; i < kBins * kLanes / 4; i += kThreads)
    reinterpret_cast<uint4*>(columns)[i] = make_uint4(0, 0, 0, 0);
  const bool direct = gridDim.x <= Policy::kMaxDirectBlocks;
  if (direct && blockIdx.x == 0 && !accumulate)
    for (std::uint64_t s = threadIdx.x; s < indexer.bins + 3; s += kThreads) slots[s] = 0;
  __syncthreads();
  if (direct && blockIdx.x == 0 && threadIdx.x == 0) {
    __threadfence();  // the cleared slots, before the flag says so
    atomicAdd(&ws->cleared, 1u);
  }

  // The slot of byte value b (thread b), found now so that an explicit-edge
  // search's loads overlap the data's.
  const bool per_value = indexer.kind == BinKind::even && indexer.bins == kBins &&
                         indexer.lower == (is_signed ? -128.0 : 0.0) && indexer.upper == indexer.lower + kBins;
  std::uint64_t my_slot = 0;
  if (threadIdx.x < kBins) {
    const int byte = threadIdx.x;
    if (per_value) my_slot = is_signed ? static_cast<std::uint64_t>(byte ^ 0x80) : byte;  // two's complement order
    else my_slot = indexer.slot(is_signed ? static_cast<double>(static_cast<signed char>(byte)) : static_cast<double>(byte));
  }

  unsigned int* my_column = columns + (threadIdx.x & (kLanes - 1));
  auto count_byte = [&](unsigned int byte) { atomicAdd(my_column + (byte << 5), 1u); };
  auto count_word = [&](unsigned int w) {
    count_byte(w & 0xff);
    count_byte((w >> 8) & 0xff);
    count_byte((w >> 16) & 0xff);
    count_byte(w >> 24);
  };
  auto count_vector = [&](uint4 v) {
    count_word(v.x);
    count_word(v.y);
    count_word(v.z);
    count_word(v.w);
  };

  // Bytes before the first 16-byte boundary and after the last one: block 0
  // counts them (at most 15 + 15 bytes).
  const std::uint64_t head = std::min<std::uint64_t>((16 - (reinterpret_cast<std::uintptr_t>(samples) & 15)) & 15, n);
  const std::uint64_t words = (n - head) / 16;
  const std::uint64_t tail_begin = head + words * 16;
  if (blockIdx.x == 0) {
    if (threadIdx.x < head) count_byte(samples[threadIdx.x]);
    if (threadIdx.x < n - tail_begin) count_byte(samples[tail_begin + threadIdx.x]);
  }

  const uint4* body = reinterpret_cast<const uint4*>(samples + head);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kThreads;
  std::uint64_t i = std::uint64_t{blockIdx.x} * kThreads + threadIdx.x;
  for (; i + (Policy::kUnroll - 1) * stride < words; i += Policy::kUnroll * stride) {
    uint4 v[Policy::kUnroll];
#pragma unroll
    for (int u = 0; u < Policy::kUnroll; ++u) v[u] = __ldg(body + i + u * stride);
#pragma unroll
    for (int u = 0; u < Policy::kUnroll; ++u) count_vector(v[u]);
  }
  // The last, partial step (fewer than kUnroll words left for this thread):
  // the same loads, each guarded, all in flight together. A plain remainder
  // loop would wait one memory round trip per word, which is what a 16 MiB
  // call did with the whole grid in it (13.4 us, docs/PERFORMANCE.md).
  if (i < words) {
    uint4 v[Policy::kUnroll];
#pragma unroll
    for (int u = 0; u < Policy::kUnroll; ++u)
      if (i + u * stride < words) v[u] = __ldg(body + i + u * stride);
#pragma unroll
    for (int u = 0; u < Policy::kUnroll; ++u)
      if (i + u * stride < words) count_vector(v[u]);
  }
  __syncthreads();

  // Row sums: thread b adds bin b's 32 columns, starting at column b so the
  // lanes of a warp read 32 different banks (TRISH's staggered indexing, 003).
  unsigned int sum = 0;
  if (threadIdx.x < kBins) {
    const int bin = threadIdx.x;
#pragma unroll 8
    for (int c = 0; c < kLanes; ++c) sum += columns[bin * kLanes + ((c + bin) & (kLanes - 1))];
  }

  if (direct) {
    // Add into the slots once block 0 has cleared them. It did so at its start,
    // a memory round trip ago at least, so the wait is one load of the flag.
    // The grid never exceeds the blocks that fit the GPU at once, and block 0
    // is dispatched first, so it cannot be waiting for a spinning block's place.
    if (threadIdx.x == 0) {
      while (*static_cast<volatile unsigned int*>(&ws->cleared) == 0) {
      }
      __threadfence();  // the clearing, before this block's additions
    }
    __syncthreads();
    if (sum) cuda_detail::add_to_slot(&slots[my_slot], sum);
    // The last block to say it is done (block 0's raise + every block = gridDim.x
    // before it) leaves the flag at zero for the next call.
    if (threadIdx.x == 0 && atomicAdd(&ws->cleared, 1u) == gridDim.x) ws->cleared = 0;
    return;
  }

  // Large grids: the row sums into the accumulators; the last block to finish
  // folds them into the slots. One fence by the thread that takes the ticket
  // orders the whole block's additions before it (the barrier makes them its
  // own; as cooperative groups' grid sync does).
  __shared__ bool is_last_block;
  if (sum) atomicAdd(&ws->byte_counts[threadIdx.x], sum);
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    is_last_block = atomicAdd(&ws->blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last_block) return;
  __threadfence();
  // Taking each total leaves its accumulator zero for the next call.
  if (per_value) {
    // One byte value per slot: each thread owns its slot, a plain store, no clearing pass.
    if (threadIdx.x < kBins) {
      const unsigned int count = atomicExch(&ws->byte_counts[threadIdx.x], 0u);
      slots[my_slot] = (accumulate ? slots[my_slot] : 0) + count;
    }
    if (!accumulate && threadIdx.x < 3) slots[kBins + threadIdx.x] = 0;  // underflow, overflow, NaN: none
  } else {
    if (!accumulate) {
      for (std::uint64_t s = threadIdx.x; s < indexer.bins + 3; s += kThreads) slots[s] = 0;
      __syncthreads();
    }
    if (threadIdx.x < kBins) cuda_detail::add_to_slot(&slots[my_slot], atomicExch(&ws->byte_counts[threadIdx.x], 0u));
  }
  if (threadIdx.x == 0) ws->blocks_done = 0;
}

bool supports(const Problem& p, std::string* why_not) {
  if (p.type == SampleType::u8 || p.type == SampleType::i8) return true;
  if (why_not) *why_not = "gpu_lane_columns counts 8-bit samples (u8, i8) only";
  return false;
}

std::size_t workspace_bytes(const Problem&) { return sizeof(LaneColumnsWorkspace); }

int grid_size(std::uint64_t n) {
  using Policy = LaneColumnsPolicy;
  // Never more blocks than fit at once: blocks wait for block 0 (above).
  static const int resident = cuda_detail::resident_blocks(lane_columns_kernel<Policy>, Policy::kBlockThreads);
  std::uint64_t wanted = (n + Policy::kMinBytesPerBlock - 1) / Policy::kMinBytesPerBlock;
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(wanted, resident)));
}

void run(const RunArgs& a) {
  using Policy = LaneColumnsPolicy;
  lane_columns_kernel<Policy><<<grid_size(a.n), Policy::kBlockThreads, 0, stream_of(a)>>>(
      static_cast<const unsigned char*>(a.samples), a.n, static_cast<LaneColumnsWorkspace*>(a.workspace), a.slots,
      a.accumulate, a.type == SampleType::i8, a.indexer);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

// auto's choice for every 8-bit problem: measured at the read limit on every
// distribution (docs/BENCHMARKS.md).
int rank(const Problem& p) { return supports(p, nullptr) ? 100 : 0; }

std::vector<std::uint64_t> boundaries(const Problem&) {
  using Policy = LaneColumnsPolicy;
  const std::uint64_t block_bytes = std::uint64_t{Policy::kBlockThreads} * 16;
  return {15, 16, 31, 32, block_bytes, block_bytes * Policy::kUnroll, Policy::kMinBytesPerBlock,
          2 * Policy::kMinBytesPerBlock, Policy::kMaxDirectBlocks * Policy::kMinBytesPerBlock,
          Policy::kMaxDirectBlocks * Policy::kMinBytesPerBlock + 1, std::uint64_t{1} << 24, std::uint64_t{1} << 26};
}

}  // namespace

const Strategy gpu_lane_columns{
    "gpu_lane_columns",
    Backend::cuda,
    "32 lane-column copies per block (h[bin][lane]), shared atomics, conflict-free for any data; one launch",
    "levelhist (issue 4); builds on 000_c3bc3bf1a09915a1.txt's interleaved per-thread layout and 003's staggered row sums",
    supports,
    workspace_bytes,
    run,
    rank,
    boundaries};

}  // namespace levelhist::strategies
