// gpu_thread_nugteren: Nugteren et al.'s per-thread histograms (as described
// in Brown & Snoeyink, TRISH §4.2): blocks of 32 threads, each thread with its
// own 256-bin histogram of 16-bit counters, two to a 32-bit word (128 words a
// thread, 16 KB a block); at the end each block sums its 32 per-thread
// histograms into one per-block histogram in the workspace, and a tail kernel
// (launch_block_sum) adds the per-block histograms into the output.
// Deterministic, no atomics, data independent.
//
// Layout: bin v of thread t is 16-bit half (v & 1) of word priv[(v >> 1) * 32 + t]:
// a thread only touches its own column, bank t, so the increments never
// conflict. The per-block sums sit in a register array (8 per thread, bins
// 8t .. 8t+7) until the final store.
//
// Overflow bound: a 16-bit counter holds 65535. Each thread flushes its
// counters into the register array before a batch would take it past
// kMaxWords = 16383 words (65532 bytes) since the last flush: the same
// grid-uniform check-then-merge as Wilt's periodic merge. (On an H100, 2^31
// bytes over 1716 blocks x 32 threads are 39 KB per thread, so the flush only
// fires on smaller GPUs; the final flush is the same code, and a build with
// kMaxWords = 19 — a flush every 2 batches — agreed with the CPU count.) Flushed sums: 32
// counters of at most 65532 each fit 32 bits; per-block sums hold at most n <= 2^31.
#include "lab.hpp"
#include "byte_histogram_common.cuh"

namespace levelhist::cuda_detail::nugteren {

constexpr int kThreads = 32;
constexpr int kRows = kByteBins / 2;                     // 128 words per thread
constexpr int kBatch = 8;                                // words loaded per thread before counting them
constexpr int kMaxWords = 65535 / 4;                     // 16383 words between flushes
constexpr int kBinsPerThread = kByteBins / kThreads;     // 8
constexpr int kRowsPerThread = kRows / kThreads;         // 4

// priv[(v >> 1) * 32 + t] += 1 << 16 * (v & 1), the address as a byte offset:
// row (v >> 1) * 128 = (v & 0xfe) << 6 in bits 7..13, col = 4 t in bits 2..6.
__device__ __forceinline__ void increment(std::uint32_t* priv, unsigned col, unsigned v) {
  *reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(priv) + (((v & 0xfeu) << 6) | col)) +=
      1u << ((v & 1u) << 4);
}

// Thread t adds rows 4t .. 4t+3 (bins 8t .. 8t+7) over the 32 columns into
// its registers. Staggered start: in step i thread t reads column (i + t) % 32,
// bank (i + t) % 32, so a warp never conflicts. Barrier before; with Clear,
// barrier after.
template <bool Clear>
__device__ __forceinline__ void flush(std::uint32_t* priv, unsigned tid, std::uint32_t (&count)[kBinsPerThread]) {
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    std::uint32_t* row = priv + (kRowsPerThread * tid + k) * kThreads;
    std::uint32_t lo = 0, hi = 0;
#pragma unroll 8
    for (int i = 0; i < kThreads; ++i) {
      const unsigned c = (i + tid) & (kThreads - 1);
      const std::uint32_t v = row[c];
      if constexpr (Clear) row[c] = 0;
      lo += v & 0xffffu;
      hi += v >> 16;
    }
    count[2 * k] += lo;
    count[2 * k + 1] += hi;
  }
}

__global__ void __launch_bounds__(kThreads) histogram_per_thread16(ByteWords in, std::uint32_t* __restrict__ block_counts) {
  __shared__ std::uint32_t priv[kRows * kThreads];  // 16 KB
  const unsigned tid = threadIdx.x;
  const unsigned col = 4 * tid;  // byte offset of this thread's column
#pragma unroll 16
  for (int r = 0; r < kRows; ++r) priv[r * kThreads + tid] = 0;  // own column: no barrier needed
  std::uint32_t count[kBinsPerThread] = {};

  int since = 0;  // words per thread since the last flush, the same in every thread
  for_each_batch<kThreads, kBatch, true>(
      in,
      [&] {
        if (since + kBatch > kMaxWords) {
          __syncthreads();
          flush<true>(priv, tid, count);
          __syncthreads();
          since = 0;
        }
        since += kBatch;
      },
      [&](const auto& w, int m) {
        constexpr int kN = std::extent_v<std::remove_reference_t<decltype(w)>>;
#pragma unroll
        for (int u = 0; u < kN; ++u) {
          if (u < m) {
            const std::uint32_t v = w[u];
            increment(priv, col, v & 0xffu);
            increment(priv, col, (v >> 8) & 0xffu);
            increment(priv, col, (v >> 16) & 0xffu);
            increment(priv, col, v >> 24);
          }
        }
      });
  __syncthreads();
  flush<false>(priv, tid, count);
  // Coalesced: the block's 1 KB row, thread t writes bins 8t .. 8t+7.
  uint4* out = reinterpret_cast<uint4*>(block_counts + static_cast<std::size_t>(blockIdx.x) * kByteBins) + 2 * tid;
  out[0] = make_uint4(count[0], count[1], count[2], count[3]);
  out[1] = make_uint4(count[4], count[5], count[6], count[7]);
}

unsigned grid_for(std::uint64_t nwords) {
  prefer_max_shared(histogram_per_thread16);
  const int resident = resident_blocks(histogram_per_thread16, kThreads);
  return clamp_grid(static_cast<std::uint64_t>(resident), nwords, std::uint64_t{kThreads} * kBatch);
}

std::size_t workspace_bytes(const Problem& problem) { return block_counts_bytes(grid_for(max_words(problem.n))); }

void run(const RunArgs& a) {
  run_count_then_block_sum(a, "gpu_thread_nugteren", histogram_per_thread16, kThreads, grid_for);
}

std::vector<std::uint64_t> boundary_sizes(const Problem&) {
  std::uint64_t grid = 1;
  try {
    grid = grid_for(~std::uint64_t{0} / 2);  // the persistent grid
  } catch (const Error&) {
    // no device: the sizes that do not depend on it
  }
  const std::uint64_t flush_words = kMaxWords / kBatch * kBatch;  // 16376 words per thread
  return batch_boundaries(kThreads, grid, kBatch, flush_words, 1);
}


}  // namespace levelhist::cuda_detail::nugteren

namespace levelhist::strategies {

const Strategy gpu_thread_nugteren{
    "gpu_thread_nugteren",
    Backend::cuda,
    "per-thread histograms of 16-bit counters (two a word, 16 KB per 32-thread block), then a tail kernel",
    "Nugteren et al. 2011 (GPGPU-4), per-thread method, as described in Brown & Snoeyink, TRISH §4.2",
    cuda_detail::supports_byte_per_value,
    cuda_detail::nugteren::workspace_bytes,
    cuda_detail::nugteren::run,
    cuda_detail::nugteren::boundary_sizes};

}  // namespace levelhist::strategies
