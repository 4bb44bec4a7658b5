// gpu_coarse_contiguous: Fig. 9.10's shared-memory histogram with thread
// coarsening by contiguous partitioning, Kirk & Hwu's Fig. 9.12
// (PMPP ch. 9): thread t counts samples [t*CFACTOR,
// (t+1)*CFACTOR), CFACTOR = 16, so there are 16 times fewer blocks to commit.
// Kept as the book's counter-example: a warp's loads are CFACTOR samples apart,
// which does not coalesce on a GPU (PMPP ch. 9, section on coarsening); never
// auto's choice.
#include "cuda/textbook_common.cuh"
#include "lab.hpp"

namespace levelhist::cuda_detail::textbook {

// The kernel template is instantiated on this type, so it lives in a named namespace.
struct CoarseContiguousPolicy {
  static constexpr TextbookPolicy value{.privatization = Privatization::shared_per_block,
                                        .partition = Partition::contiguous,
                                        .samples_per_thread = kCoarseningFactor,
                                        .cap_grid_at_resident_blocks = false,
                                        .aggregate_runs = false,
                                        .four_samples_per_load = false};
};

}  // namespace levelhist::cuda_detail::textbook

namespace levelhist::strategies {

using namespace cuda_detail::textbook;

const Strategy gpu_coarse_contiguous = make_strategy<CoarseContiguousPolicy>(
    "gpu_coarse_contiguous", "shared-memory histogram per block, CFACTOR=16 contiguous samples per thread",
    "Kirk & Hwu, PMPP ch. 9, Fig. 9.12");

}  // namespace levelhist::strategies
