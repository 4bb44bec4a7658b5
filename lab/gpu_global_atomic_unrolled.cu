// gpu_global_atomic_unrolled: Wilt's Listing 3 (part 1):
// Listing 2's global atomics, but each iteration loads four samples with one
// wide load (32 bits for bytes, 64 for 16-bit samples, 128 for 32-bit ones, two
// of 128 for f64) instead of one narrow load each. The head before the first
// aligned group and the n mod 4 tail are counted one by one. Samples not
// aligned to their own size (possible for multi-byte types) cannot be grouped
// into aligned loads at all, so those calls count one sample per load.
#include "cuda/textbook_common.cuh"
#include "lab.hpp"

namespace levelhist::cuda_detail::textbook {

// The kernel template is instantiated on this type, so it lives in a named namespace.
struct GlobalAtomicUnrolledPolicy {
  static constexpr TextbookPolicy value{.privatization = Privatization::none,
                                        .partition = Partition::interleaved,
                                        .samples_per_thread = 4,
                                        .cap_grid_at_resident_blocks = false,
                                        .aggregate_runs = false,
                                        .four_samples_per_load = true};
};

}  // namespace levelhist::cuda_detail::textbook

namespace levelhist::strategies {

using namespace cuda_detail::textbook;

const Strategy gpu_global_atomic_unrolled = make_strategy<GlobalAtomicUnrolledPolicy>(
    "gpu_global_atomic_unrolled", "one histogram in global memory, four samples per load, one atomic each",
    "Wilt part 1, Listing 3");

}  // namespace levelhist::strategies
