// The one explicit list of the library's strategies: what `auto` can choose
// (src/core/selection.cpp names each in its table) and cpu_serial, the
// reference. Adding a strategy is one file under src/cpu or src/cuda defining
// `const Strategy <name>`, one line here and its rows in the selection table.
#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

#include "core/registry.hpp"
#include "core/strategies.hpp"
#include "levelhist/error.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist {
namespace {

constexpr std::array kLibraryStrategies = {
    &strategies::cpu_serial,
    &strategies::cpu_parallel,
#if LEVELHIST_HAVE_CUDA
    &strategies::gpu_lane_columns,
    &strategies::gpu_pixel_lane_columns,
    &strategies::gpu_shared_swizzle,
    &strategies::gpu_shared_lanes,
    &strategies::gpu_split_bins,
    &strategies::gpu_bucket_sort,
    &strategies::gpu_partition_count,
    &strategies::gpu_weighted_shared,
    &strategies::gpu_block_global,
    &strategies::gpu_segments,
    &strategies::gpu_joint,
    &strategies::gpu_weighted_exact,
#endif
};

struct Registry {
  std::vector<const Strategy*> all{kLibraryStrategies.begin(), kLibraryStrategies.end()};
  std::mutex mutex;  // guards install_strategies only: the registry is read without it
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

namespace detail {

void install_strategies(std::span<const Strategy* const> strategies) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Strategy* s : strategies)
    if (std::find(r.all.begin(), r.all.end(), s) == r.all.end()) r.all.push_back(s);
}

}  // namespace detail

std::string_view to_string(Backend backend) { return backend == Backend::cpu ? "cpu" : "cuda"; }

std::span<const Strategy* const> all_strategies() { return registry().all; }

const Strategy* find_strategy(std::string_view name) {
  for (const Strategy* s : registry().all)
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
    if (why_not) {
      const char* what = (missing & kCapabilityPixels)          ? "multi-channel or pitched pixel layouts"
                         : (missing & kCapabilityWeights)       ? "weighted histograms"
                         : (missing & kCapabilitySegments)      ? "batches of segments"
                         : (missing & kCapabilityTiles)         ? "batches of tiles"
                         : (missing & kCapabilityAxes)          ? "N-d histograms"
                         : (missing & kCapabilityDeterministic) ? "deterministic weighted sums"
                                                                : "sums of squared weights";
      *why_not = std::string(s.name) + " does not handle " + what;
    }
    return false;
  }
  return s.supports(problem, why_not);
}

}  // namespace levelhist
