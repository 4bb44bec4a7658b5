// gpu_thread_packed_avoid: Wilt's per-thread packed 8-bit histograms with
// overflow avoidance by grid sizing (Wilt part 2, "Managing Overflow"): one
// block per 64 * 63 words, one merge per block. The kernel and its overflow
// bound are in thread_packed.cuh.
#include "lab.hpp"
#include "thread_packed.cuh"

namespace levelhist::strategies {
namespace {

using namespace cuda_detail;
constexpr auto kPolicy = thread_packed::Overflow::avoid_by_grid;

std::size_t no_workspace(const Problem&) { return 0; }

}  // namespace

const Strategy gpu_thread_packed_avoid{
    "gpu_thread_packed_avoid",
    Backend::cuda,
    "per-thread packed 8-bit counters (64x64 interleaved), overflow avoided by one block per 16128 bytes",
    "Wilt part 2, Listings 5-7, Managing Overflow: overflow avoidance by grid sizing (<= 63 words per thread)",
    supports_byte_per_value,
    no_workspace,
    thread_packed::run<kPolicy>,
    thread_packed::boundary_sizes<kPolicy>};

}  // namespace levelhist::strategies
