// gpu_coarse_interleaved: Fig. 9.10's shared-memory histogram with thread
// coarsening by interleaved partitioning, Kirk & Hwu's Fig. 9.14
// (PMPP ch. 9): a grid-stride loop, so a warp reads consecutive
// samples (coalesced), over a grid of at most the blocks the GPU runs at once
// (and at least 16 samples per thread), so no block commits for nothing.
#include "cuda/textbook_common.cuh"
#include "lab.hpp"

namespace levelhist::cuda_detail::textbook {

// The kernel template is instantiated on this type, so it lives in a named namespace.
struct CoarseInterleavedPolicy {
  static constexpr TextbookPolicy value{.privatization = Privatization::shared_per_block,
                                        .partition = Partition::interleaved,
                                        .samples_per_thread = kCoarseningFactor,
                                        .cap_grid_at_resident_blocks = true,
                                        .aggregate_runs = false,
                                        .four_samples_per_load = false};
};

}  // namespace levelhist::cuda_detail::textbook

namespace levelhist::strategies {
namespace {

using namespace cuda_detail::textbook;

// The second-best textbook kernel for any binning that fits in shared memory.

}  // namespace

const Strategy gpu_coarse_interleaved = make_strategy<CoarseInterleavedPolicy>(
    "gpu_coarse_interleaved", "shared-memory histogram per block, grid-stride loop over a resident grid",
    "Kirk & Hwu, PMPP ch. 9, Fig. 9.14");

}  // namespace levelhist::strategies
