// gpu_aggregated: Fig. 9.14's coarsened, interleaved shared-memory histogram
// plus aggregation, Kirk & Hwu's Fig. 9.15 (PMPP ch. 9): a
// thread counts a run of samples that fall into the same slot in a register and
// adds the run with one shared atomic when the slot changes (and once more
// after its loop). Fewer atomics on one address for skewed data (an image's
// flat sky, all zeros), a few more instructions on uniform data (PMPP ch. 9,
// section on aggregation).
#include "cuda/textbook_common.cuh"
#include "lab.hpp"

namespace levelhist::cuda_detail::textbook {

// The kernel template is instantiated on this type, so it lives in a named namespace.
struct AggregatedPolicy {
  static constexpr TextbookPolicy value{.privatization = Privatization::shared_per_block,
                                        .partition = Partition::interleaved,
                                        .samples_per_thread = kCoarseningFactor,
                                        .cap_grid_at_resident_blocks = true,
                                        .aggregate_runs = true,
                                        .four_samples_per_load = false};
};

}  // namespace levelhist::cuda_detail::textbook

namespace levelhist::strategies {

using namespace cuda_detail::textbook;

const Strategy gpu_aggregated = make_strategy<AggregatedPolicy>(
    "gpu_aggregated", "shared-memory histogram per block, grid-stride, runs of equal bins added at once",
    "Kirk & Hwu, PMPP ch. 9, Fig. 9.15");

}  // namespace levelhist::strategies
