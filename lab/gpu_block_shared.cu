// gpu_block_shared: per-block private histograms in shared memory, Kirk &
// Hwu's Fig. 9.10 (PMPP ch. 9): a block clears bins+3 32-bit
// counters in shared memory, counts one sample per thread with shared atomics
// (latency of a few cycles instead of hundreds: PMPP ch. 9, section on
// privatization), and commits the
// non-zero counters to the 64-bit output. Supported while bins+3 counters fit
// in the device's per-block shared memory (about 58,000 bins on an H100).
#include "cuda/textbook_common.cuh"
#include "lab.hpp"

namespace levelhist::cuda_detail::textbook {

// The kernel template is instantiated on this type, so it lives in a named namespace.
struct BlockSharedPolicy {
  static constexpr TextbookPolicy value{.privatization = Privatization::shared_per_block,
                                        .partition = Partition::interleaved,
                                        .samples_per_thread = 1,
                                        .cap_grid_at_resident_blocks = false,
                                        .aggregate_runs = false,
                                        .four_samples_per_load = false};
};

}  // namespace levelhist::cuda_detail::textbook

namespace levelhist::strategies {

using namespace cuda_detail::textbook;

const Strategy gpu_block_shared = make_strategy<BlockSharedPolicy>(
    "gpu_block_shared", "a private 32-bit histogram per block in shared memory, one sample per thread",
    "Kirk & Hwu, PMPP ch. 9, Fig. 9.10");

}  // namespace levelhist::strategies
