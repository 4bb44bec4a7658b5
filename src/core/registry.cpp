// The one explicit list of strategies. Adding a method is one file under
// src/cpu or src/cuda defining `const Strategy <name>` and one line here.
#include <array>

#include "core/strategies.hpp"
#include "levelhist/error.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist {
namespace {

constexpr std::array kRegistry = {
    &strategies::cpu_serial,
    &strategies::cpu_parallel,
#if LEVELHIST_HAVE_CUDA
    // CUDA, textbook kernels (Kirk & Hwu, PMPP ch. 9; Wilt part 1)
    &strategies::gpu_global_atomic,
    &strategies::gpu_global_atomic_unrolled,
    &strategies::gpu_block_global,
    &strategies::gpu_block_shared,
    &strategies::gpu_coarse_contiguous,
    &strategies::gpu_coarse_interleaved,
    &strategies::gpu_aggregated,
    // CUDA, per-thread and per-warp 256-bin methods (Wilt part 2; Brown & Snoeyink, TRISH)
    &strategies::gpu_thread_packed,
    &strategies::gpu_thread_packed_avoid,
    &strategies::gpu_trish,
    &strategies::gpu_trish_k63,
    &strategies::gpu_warp_podlozhnyuk,
    &strategies::gpu_thread_nugteren,
    // CUDA, levelhist's own kernels
    &strategies::gpu_lane_columns,
    &strategies::gpu_lane_columns_fold,  // the instructive loser: small calls through the fold
    &strategies::gpu_pixel_lane_columns,
    &strategies::gpu_shared_swizzle,
    &strategies::gpu_shared_lanes,
    &strategies::gpu_split_bins,
    &strategies::gpu_bucket_sort,
    &strategies::gpu_weighted_shared,
    &strategies::gpu_weighted_shared_x4,
    // CUDA, external baseline
    &strategies::cub,
#endif
};

}  // namespace

std::string_view to_string(Backend backend) { return backend == Backend::cpu ? "cpu" : "cuda"; }

std::span<const Strategy* const> all_strategies() { return {kRegistry.data(), kRegistry.size()}; }

const Strategy* find_strategy(std::string_view name) {
  for (const Strategy* s : kRegistry)
    if (name == s->name) return s;
  return nullptr;
}

bool built_with_cuda() {
#if LEVELHIST_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool strategy_accepts(const Strategy& s, const Problem& problem, std::string* why_not) {
  unsigned missing = problem.needs() & ~s.capabilities;
  if (missing) {
    if (why_not)
      *why_not = std::string(s.name) + " does not handle " +
                 ((missing & kCapabilityPixels) ? "multi-channel or pitched pixel layouts" : "weighted histograms");
    return false;
  }
  return s.supports(problem, why_not);
}

const Strategy& choose_strategy(const Problem& problem, Backend backend) {
  const Strategy* best = nullptr;
  int best_rank = 0;
  for (const Strategy* s : kRegistry) {
    if (s->backend != backend) continue;
    int rank = s->auto_rank ? s->auto_rank(problem) : 0;
    if (rank <= best_rank || !strategy_accepts(*s, problem)) continue;
    best = s;
    best_rank = rank;
  }
  if (!best)
    throw Error(ErrorKind::unsupported, "no " + std::string(to_string(backend)) + " strategy can count " +
                                            std::string(to_string(problem.type)) + " samples into " +
                                            problem.binning->describe());
  return *best;
}

}  // namespace levelhist
