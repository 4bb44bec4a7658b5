// gpu_global_atomic: one histogram, global atomics. Every thread adds its
// sample straight into the 64-bit output slot with atomicAdd: Kirk & Hwu's
// Fig. 9.6 (PMPP ch. 9, one thread per sample) and Wilt's Listing 2 (part 1,
// the same loop grid-striding). The
// baseline of chapter 9: every sample is one global atomic, so it is slow and
// data-dependent (contention on skewed data); never auto's choice.
#include "cuda/textbook_common.cuh"
#include "lab.hpp"

namespace levelhist::cuda_detail::textbook {

// The kernel template is instantiated on this type, so it lives in a named namespace.
struct GlobalAtomicPolicy {
  static constexpr TextbookPolicy value{.privatization = Privatization::none,
                                        .partition = Partition::interleaved,
                                        .samples_per_thread = 1,
                                        .cap_grid_at_resident_blocks = false,
                                        .aggregate_runs = false,
                                        .four_samples_per_load = false};
};

}  // namespace levelhist::cuda_detail::textbook

namespace levelhist::strategies {

using namespace cuda_detail::textbook;

const Strategy gpu_global_atomic = make_strategy<GlobalAtomicPolicy>(
    "gpu_global_atomic", "one histogram in global memory, one global atomic per sample",
    "Kirk & Hwu, PMPP ch. 9, Fig. 9.6; Wilt part 1, Listing 2");

}  // namespace levelhist::strategies
