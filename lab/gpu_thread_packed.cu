// gpu_thread_packed: Wilt's per-thread packed 8-bit histograms with periodic
// merge (Wilt part 2, Listings 5-8, bPeriodicMerge = true). The
// kernel and its overflow bound are in thread_packed.cuh.
#include "lab.hpp"
#include "thread_packed.cuh"

namespace levelhist::strategies {
namespace {

using namespace cuda_detail;
constexpr auto kPolicy = thread_packed::Overflow::periodic_merge;

std::size_t no_workspace(const Problem&) { return 0; }

}  // namespace

const Strategy gpu_thread_packed{
    "gpu_thread_packed",
    Backend::cuda,
    "per-thread packed 8-bit counters (64x64 interleaved), merged every 252 bytes per thread with 256 atomics",
    "Wilt part 2, Listings 5-8 (Fig. 6 layout, periodic merge)",
    supports_byte_per_value,
    no_workspace,
    thread_packed::run<kPolicy>,
    thread_packed::boundary_sizes<kPolicy>};

}  // namespace levelhist::strategies
