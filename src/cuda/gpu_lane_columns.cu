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
// One launch, no zeroing kernel: blocks add their 256 row sums into 32-bit
// per-call accumulators in the workspace; the last block to finish (a ticket
// counter, as in the CUDA samples' threadFenceReduction) folds the 256 byte
// counts into the caller's 64-bit slots through the shared BinIndexer — so any
// binning of 8-bit samples (per value, even bins, explicit edges, numpy rule)
// runs at the same speed — and leaves the accumulators and the ticket at zero,
// as the workspace contract requires.
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
};

// Small calls: one thread-block cluster (Hopper) whose blocks add their row sums
// into block 0's shared memory (distributed shared memory), then block 0 writes
// the slots: no global additions, no fence, no ticket, no exchange of totals,
// which were the ~1.7 us a 1 MiB call spent after its read (docs/PERFORMANCE.md,
// section 4). Up to 16 blocks (a non-portable cluster size Hopper allows) of
// 1024 threads, one step of four 16-byte loads per thread: 1 MiB in one round
// trip. One block per SM (56 registers), so 16 blocks need 16 SMs of one GPC;
// where the device offers only smaller clusters, fewer blocks take more steps.
struct LaneColumnsClusterPolicy {
  static constexpr int kBlockThreads = 1024;
  static constexpr int kMinBlocksPerSM = 1;  // up to 64 registers: at 32 (two blocks per SM) it spilled
  static constexpr int kUnroll = 4;
  static constexpr int kMaxClusterBlocks = 16;
  static constexpr std::uint64_t kBytesPerBlock = std::uint64_t{kBlockThreads} * 16 * kUnroll;  // 64 KiB
  static constexpr std::uint64_t kMaxBytes = kBytesPerBlock * kMaxClusterBlocks;                // 1 MiB
};

constexpr int kBins = 256;
constexpr int kLanes = 32;

// Cluster primitives (sm_90 PTX). The kernel that uses them is launched only on
// devices of compute capability 9.0 or newer; older targets compile a trap.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define LEVELHIST_HAVE_CLUSTERS 1
#else
#define LEVELHIST_HAVE_CLUSTERS 0
#endif

// A barrier over every thread of the cluster; additions before it (release)
// are visible after it (acquire).
__device__ __forceinline__ void cluster_barrier() {
#if LEVELHIST_HAVE_CLUSTERS
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  __trap();
#endif
}

__device__ __forceinline__ unsigned int cluster_block_rank() {
  unsigned int rank = 0;
#if LEVELHIST_HAVE_CLUSTERS
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
#endif
  return rank;
}

// `value` added to the 32-bit word at shared address p of the cluster's block 0.
__device__ __forceinline__ void add_to_block0(const unsigned int* p, unsigned int value) {
#if LEVELHIST_HAVE_CLUSTERS
  unsigned int local = static_cast<unsigned int>(__cvta_generic_to_shared(p)), remote = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote) : "r"(local));
  asm volatile("red.shared::cluster.add.u32 [%0], %1;" ::"r"(remote), "r"(value) : "memory");
#else
  (void)p, (void)value;
  __trap();
#endif
}


// Per-call state in the workspace: zero between calls.
struct LaneColumnsWorkspace {
  unsigned int byte_counts[kBins];  // this call's counts per byte value (n <= 2^31 per call)
  unsigned int blocks_done;         // ticket: blocks that have added their counts
};

// The call's 256 byte counts (take(byte) returns each once) into the caller's
// 64-bit slots through the shared BinIndexer, by the threads of one block.
template <int kThreads, class Take>
__device__ __forceinline__ void fold_byte_counts(Take take, std::uint64_t* slots, bool accumulate, bool is_signed,
                                                 const BinIndexer& indexer) {
  const std::uint64_t slot_count = indexer.bins + 3;
  const bool per_value = indexer.kind == BinKind::even && indexer.bins == kBins &&
                         indexer.lower == (is_signed ? -128.0 : 0.0) && indexer.upper == indexer.lower + kBins;
  if (per_value) {
    // One byte value per slot: each thread owns its slots, plain stores, no atomics.
    for (int byte = threadIdx.x; byte < kBins; byte += kThreads) {
      unsigned int count = take(byte);
      std::uint64_t slot = is_signed ? static_cast<std::uint64_t>(byte ^ 0x80) : byte;  // two's complement order
      slots[slot] = (accumulate ? slots[slot] : 0) + count;
    }
    if (!accumulate && threadIdx.x < 3) slots[kBins + threadIdx.x] = 0;  // underflow, overflow, NaN: none
  } else {
    if (!accumulate) {
      for (std::uint64_t s = threadIdx.x; s < slot_count; s += kThreads) slots[s] = 0;
      __syncthreads();
    }
    for (int byte = threadIdx.x; byte < kBins; byte += kThreads) {
      unsigned int count = take(byte);
      if (!count) continue;
      double value = is_signed ? static_cast<double>(static_cast<signed char>(byte)) : static_cast<double>(byte);
      cuda_detail::add_to_slot(&slots[indexer.slot(value)], count);
    }
  }
}

// kClusterFold: the grid is one cluster and block 0 folds (small calls); else
// any grid, the workspace's accumulators and the last block's ticket.
template <class Policy, bool kClusterFold>
__global__ void __launch_bounds__(Policy::kBlockThreads, Policy::kMinBlocksPerSM)
    lane_columns_kernel(const unsigned char* samples, std::uint64_t n, LaneColumnsWorkspace* ws,
                        std::uint64_t* slots, bool accumulate, bool is_signed, BinIndexer indexer) {
  constexpr int kThreads = Policy::kBlockThreads;
  __shared__ alignas(16) unsigned int columns[kBins * kLanes];  // columns[bin * 32 + lane]
  __shared__ unsigned int cluster_counts[kClusterFold ? kBins : 1];  // block 0's: the cluster's totals
  __shared__ bool is_last_block;

  for (int i = threadIdx.x; i < kBins * kLanes / 4; i += kThreads)
    reinterpret_cast<uint4*>(columns)[i] = make_uint4(0, 0, 0, 0);
  if constexpr (kClusterFold) {
    for (int b = threadIdx.x; b < kBins; b += kThreads) cluster_counts[b] = 0;
    cluster_barrier();  // every block has started (its shared memory exists) and block 0's totals are zero
  } else {
    __syncthreads();
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
  for (int bin = threadIdx.x; bin < kBins; bin += kThreads) {
    unsigned int sum = 0;
#pragma unroll 8
    for (int c = 0; c < kLanes; ++c) sum += columns[bin * kLanes + ((c + bin) & (kLanes - 1))];
    if (!sum) continue;
    if constexpr (kClusterFold) add_to_block0(&cluster_counts[bin], sum);
    else atomicAdd(&ws->byte_counts[bin], sum);
  }

  // Block 0 of a cluster folds the totals in its shared memory once every block
  // has added its rows (the barrier orders the additions); the others are done.
  if constexpr (kClusterFold) {
    cluster_barrier();
    if (cluster_block_rank() == 0)
      fold_byte_counts<kThreads>([&](int byte) { return cluster_counts[byte]; }, slots, accumulate, is_signed, indexer);
    return;
  }

  // The last block to finish folds the call's counts into the output. One
  // fence by the thread that takes the ticket orders the whole block's
  // additions before it (the barrier makes them its own; as cooperative groups'
  // grid sync does).
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    is_last_block = atomicAdd(&ws->blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last_block) return;
  __threadfence();
  // Taking each total also leaves the accumulator zero for the next call.
  fold_byte_counts<kThreads>([&](int byte) { return atomicExch(&ws->byte_counts[byte], 0u); }, slots, accumulate,
                             is_signed, indexer);
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
  static const int resident =
      cuda_detail::resident_blocks(lane_columns_kernel<Policy, false>, Policy::kBlockThreads);
  std::uint64_t wanted = (n + Policy::kMinBytesPerBlock - 1) / Policy::kMinBytesPerBlock;
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(wanted, resident)));
}

// The launch of the one-cluster kernel over `blocks` blocks (a power of two).
struct ClusterLaunch {
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t config{};
  ClusterLaunch(int blocks, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(blocks);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(LaneColumnsClusterPolicy::kBlockThreads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // config points at attribute
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// The largest cluster (16, 8, ... blocks) this device can run the one-cluster
// kernel in; 0 before compute capability 9.0 (no clusters).
int largest_cluster() {
  int device = 0, major = 0;
  LEVELHIST_CUDA_CHECK(cudaGetDevice(&device));
  LEVELHIST_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9) return 0;
  auto kernel = lane_columns_kernel<LaneColumnsClusterPolicy, true>;
  const bool non_portable = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
  for (int blocks = LaneColumnsClusterPolicy::kMaxClusterBlocks; blocks >= 1; blocks /= 2) {
    if (blocks > 8 && !non_portable) continue;
    ClusterLaunch launch(blocks, nullptr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config) == cudaSuccess && clusters > 0) return blocks;
  }
  (void)cudaGetLastError();  // a refused size is an answer, not an error to report later
  return 0;
}

// Blocks of the one-cluster kernel for a call of n bytes (one 64 KiB step per
// block, fewer blocks and more steps where the device's clusters are smaller),
// or 0: the grid-wide kernel then takes it.
int cluster_blocks(std::uint64_t n) {
  static const int largest = largest_cluster();
  if (largest == 0 || n > LaneColumnsClusterPolicy::kMaxBytes) return 0;
  int blocks = 1;
  while (blocks < largest && static_cast<std::uint64_t>(blocks) * LaneColumnsClusterPolicy::kBytesPerBlock < n) blocks *= 2;
  return blocks;
}

void run(const RunArgs& a) {
  const auto* samples = static_cast<const unsigned char*>(a.samples);
  auto* ws = static_cast<LaneColumnsWorkspace*>(a.workspace);
  const bool is_signed = a.type == SampleType::i8;
  if (const int blocks = cluster_blocks(a.n)) {
    ClusterLaunch launch(blocks, stream_of(a));
    LEVELHIST_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, lane_columns_kernel<LaneColumnsClusterPolicy, true>,
                                            samples, a.n, ws, a.slots, a.accumulate, is_signed, a.indexer));
    return;
  }
  using Policy = LaneColumnsPolicy;
  lane_columns_kernel<Policy, false><<<grid_size(a.n), Policy::kBlockThreads, 0, stream_of(a)>>>(
      samples, a.n, ws, a.slots, a.accumulate, is_signed, a.indexer);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

// auto's choice for every 8-bit problem: measured at the read limit on every
// distribution (docs/BENCHMARKS.md).
int rank(const Problem& p) { return supports(p, nullptr) ? 100 : 0; }

std::vector<std::uint64_t> boundaries(const Problem&) {
  using Policy = LaneColumnsPolicy;
  const std::uint64_t block_bytes = std::uint64_t{Policy::kBlockThreads} * 16;
  using Cluster = LaneColumnsClusterPolicy;
  return {15, 16, 31, 32, block_bytes, block_bytes * Policy::kUnroll, Policy::kMinBytesPerBlock,
          2 * Policy::kMinBytesPerBlock, Cluster::kBytesPerBlock, 3 * Cluster::kBytesPerBlock, Cluster::kMaxBytes,
          Cluster::kMaxBytes + 1, std::uint64_t{1} << 24, std::uint64_t{1} << 26};
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
