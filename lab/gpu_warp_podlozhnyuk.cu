// gpu_warp_podlozhnyuk: Podlozhnyuk's per-warp 256-bin histograms (the CUDA
// SDK's histogram256, as described in Brown & Snoeyink, TRISH §4.1): blocks
// of 192 threads = 6 warps, one 256-bin sub-histogram of 32-bit counters per
// warp in shared memory (6 KB), updated with hardware shared-memory atomics
// (Brown & Snoeyink used those in place of the SDK's software tagging); at the end each block
// adds its 6 sub-histograms into one per-block histogram in the workspace, and
// the merge kernel (launch_block_sum) adds the per-block histograms into the
// output. Performance depends on the data: the 32 lanes of a warp collide on
// equal bins and on equal banks.
//
// Overflow bound: a per-warp counter counts at most the bytes its warp reads,
// a per-block sum at most n <= 2^31 (the dispatcher's per-call limit): 32 bits
// suffice, no merge is needed inside the loop.
#include "lab.hpp"
#include "byte_histogram_common.cuh"

namespace levelhist::cuda_detail::podlozhnyuk {

constexpr int kWarps = 6;
constexpr int kThreads = 32 * kWarps;  // 192
constexpr int kBatch = 4;              // words loaded per thread before counting them
// 10 blocks (1920 threads) fit an SM's 2048 threads; ask for registers to match.
constexpr int kMinBlocks = 10;

__global__ void __launch_bounds__(kThreads, kMinBlocks)
    histogram256_per_warp(ByteWords in, std::uint32_t* __restrict__ block_counts) {
  __shared__ std::uint32_t hist[kWarps * kByteBins];
  for (unsigned i = threadIdx.x; i < kWarps * kByteBins; i += kThreads) hist[i] = 0;
  __syncthreads();
  std::uint32_t* mine = hist + (threadIdx.x / 32) * kByteBins;
  for_each_batch<kThreads, kBatch, false>(
      in, [] {},
      [&](const auto& w, int m) {
        constexpr int kN = std::extent_v<std::remove_reference_t<decltype(w)>>;
#pragma unroll
        for (int u = 0; u < kN; ++u) {
          if (u < m) {
            const std::uint32_t v = w[u];
            atomicAdd(mine + (v & 0xffu), 1u);
            atomicAdd(mine + ((v >> 8) & 0xffu), 1u);
            atomicAdd(mine + ((v >> 16) & 0xffu), 1u);
            atomicAdd(mine + (v >> 24), 1u);
          }
        }
      });
  __syncthreads();
  // The block's sum of its 6 warp histograms, one coalesced 1 KB row.
  for (unsigned v = threadIdx.x; v < kByteBins; v += kThreads) {
    std::uint32_t sum = 0;
#pragma unroll
    for (int k = 0; k < kWarps; ++k) sum += hist[k * kByteBins + v];
    block_counts[static_cast<std::size_t>(blockIdx.x) * kByteBins + v] = sum;
  }
}

unsigned grid_for(std::uint64_t nwords) {
  const int resident = resident_blocks(histogram256_per_warp, kThreads);
  return clamp_grid(static_cast<std::uint64_t>(resident), nwords, std::uint64_t{kThreads} * kBatch);
}

std::size_t workspace_bytes(const Problem& problem) { return block_counts_bytes(grid_for(max_words(problem.n))); }

void run(const RunArgs& a) {
  run_count_then_block_sum(a, "gpu_warp_podlozhnyuk", histogram256_per_warp, kThreads, grid_for);
}

std::vector<std::uint64_t> boundary_sizes(const Problem&) {
  std::uint64_t grid = 1;
  try {
    grid = grid_for(~std::uint64_t{0} / 2);  // the persistent grid
  } catch (const Error&) {
    // no device: the sizes that do not depend on it
  }
  return batch_boundaries(kThreads, grid, kBatch, 0, 0);
}


}  // namespace levelhist::cuda_detail::podlozhnyuk

namespace levelhist::strategies {

const Strategy gpu_warp_podlozhnyuk{
    "gpu_warp_podlozhnyuk",
    Backend::cuda,
    "one 256-bin sub-histogram per warp in shared memory, shared atomics, 6 warps a block, then a merge kernel",
    "Podlozhnyuk 2007 (Histogram calculation in CUDA), per-warp method with hardware atomics, as described in "
    "Brown & Snoeyink, TRISH §4.1",
    cuda_detail::supports_byte_per_value,
    cuda_detail::podlozhnyuk::workspace_bytes,
    cuda_detail::podlozhnyuk::run,
    cuda_detail::podlozhnyuk::boundary_sizes};

}  // namespace levelhist::strategies
