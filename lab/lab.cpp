// The lab's list of strategies and its installation into the registry.
#include "lab.hpp"

#include <array>

#include "core/registry.hpp"

namespace levelhist::lab {
namespace {

#if LEVELHIST_HAVE_CUDA
constexpr std::array<const Strategy*, 16> kLab = {
    &strategies::gpu_global_atomic,     &strategies::gpu_global_atomic_unrolled,
    &strategies::gpu_block_shared,      &strategies::gpu_coarse_contiguous,
    &strategies::gpu_coarse_interleaved, &strategies::gpu_aggregated,
    &strategies::gpu_thread_packed,     &strategies::gpu_thread_packed_avoid,
    &strategies::gpu_trish,             &strategies::gpu_trish_k63,
    &strategies::gpu_warp_podlozhnyuk,  &strategies::gpu_thread_nugteren,
    &strategies::gpu_lane_columns_fold, &strategies::gpu_weighted_shared_x4,
    &strategies::gpu_raw_values,
    &strategies::cub,
};
#else
constexpr std::array<const Strategy*, 0> kLab = {};
#endif

}  // namespace

std::span<const Strategy* const> strategies() { return {kLab.data(), kLab.size()}; }

void install() { detail::install_strategies(strategies()); }

}  // namespace levelhist::lab
