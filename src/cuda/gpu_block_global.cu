// gpu_block_global: per-block private histograms in global memory, Kirk &
// Hwu's Fig. 9.9 (PMPP ch. 9). Each block counts into its own
// copy of bins+3 32-bit counters in the workspace (contention only within the
// block), then commits it into the 64-bit output and clears it, leaving the
// workspace zero. One thread per sample up to the grid cap; the grid is also
// capped so the copies stay within 32 MiB (one copy at least, for any bin
// count), beyond which threads grid-stride. Takes every problem, any bin count:
// auto's textbook fallback when the bins do not fit in shared memory.
#include "cuda/textbook_common.cuh"

namespace levelhist::cuda_detail::textbook {

// The kernel template is instantiated on this type, so it lives in a named namespace.
struct BlockGlobalPolicy {
  static constexpr TextbookPolicy value{.privatization = Privatization::global_per_block,
                                        .partition = Partition::interleaved,
                                        .samples_per_thread = 1,
                                        .cap_grid_at_resident_blocks = false,
                                        .aggregate_runs = false,
                                        .four_samples_per_load = false};
};

}  // namespace levelhist::cuda_detail::textbook

namespace levelhist::strategies {

using namespace cuda_detail::textbook;

const Strategy gpu_block_global = make_strategy<BlockGlobalPolicy>(
    "gpu_block_global", "a private 32-bit histogram per block in global memory, committed by the block",
    "Kirk & Hwu, PMPP ch. 9, Fig. 9.9");

}  // namespace levelhist::strategies
