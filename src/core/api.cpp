// The convenience functions of levelhist.hpp: each builds its Request, finds
// the plan for it in a small per-process cache, and calls the plan.
#include <list>
#include <memory>
#include <mutex>

#include "core/plan_impl.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist {
namespace detail {

const Strategy& resolve_strategy_for(const Problem& problem, const Options& options);

namespace {

// Plans most recently used first. A plan holds device memory (edges, tables,
// the host path's buffers): a few dozen are plenty for a program that counts
// the same kinds of data over and over, and bound what a program that asks for
// ever new binnings keeps.
constexpr std::size_t kCachedPlans = 16;

struct PlanCache {
  std::mutex mutex;
  std::list<std::shared_ptr<const Plan>> plans;
};

PlanCache& plan_cache() {
  static PlanCache* cache = new PlanCache;  // never destroyed: plans hold device memory the driver may have freed at exit
  return *cache;
}

bool same_options(const Options& a, const Options& b) {
  return a.strategy == b.strategy && a.backend == b.backend && a.threads == b.threads && a.device == b.device &&
         a.devices == b.devices;
}

}  // namespace

std::shared_ptr<const Plan> cached_plan(const Request& request, const Options& options) {
  // -1 means the current device: a plan bound to another device must not serve.
  Options key = options;
  if (key.device < 0 && options.backend != BackendChoice::cpu && cuda::device_count() > 0)
    key.device = key.devices.empty() ? cuda::current_device() : key.devices[0];  // a list binds to its first
  PlanCache& cache = plan_cache();
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    for (auto it = cache.plans.begin(); it != cache.plans.end(); ++it)
      if ((*it)->request() == request && same_options((*it)->options(), key)) {
        cache.plans.splice(cache.plans.begin(), cache.plans, it);
        return cache.plans.front();
      }
  }
  auto plan = std::make_shared<const Plan>(request, key);  // outside the lock: binding may take milliseconds
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.plans.push_front(plan);
  if (cache.plans.size() > kCachedPlans) cache.plans.pop_back();
  return plan;
}

}  // namespace detail

const char* version() { return LEVELHIST_VERSION; }

const Strategy& resolve_strategy(const Problem& problem, const Options& options) {
  return detail::resolve_strategy_for(problem, options);
}

const Strategy& fill(Histogram& hist, SampleType type, const void* samples, std::uint64_t n, const Options& options) {
  auto plan = detail::cached_plan(Request::counts(type, hist.binning()), options);
  plan->fill(hist, Input::array(samples, n));
  return plan->strategy();
}

Histogram histogram(SampleType type, const void* samples, std::uint64_t n, const Binning& binning,
                    const Options& options) {
  Histogram h(binning);
  fill(h, type, samples, n, options);
  return h;
}

const Strategy& fill_pixels(std::span<Histogram> hists, SampleType type, const void* pixels, const PixelLayout& layout,
                            const Options& options) {
  if (hists.empty())
    throw Error(ErrorKind::usage, "no histogram to fill", "pass one histogram per active channel", ErrorSubject::layout);
  if (layout.width == 0)
    throw Error(ErrorKind::usage, "the image width is 0", "give PixelLayout::width (pixels per row) and height (rows)",
                ErrorSubject::layout);
  auto plan = detail::cached_plan(Request::pixels(type, layout.channels, layout.active, hists[0].binning()), options);
  plan->fill(hists, Input::image(pixels, layout.width, layout.height, layout.row_pitch));
  return plan->strategy();
}

std::vector<Histogram> histogram_pixels(SampleType type, const void* pixels, const PixelLayout& layout,
                                        const Binning& binning, const Options& options) {
  Request request = Request::pixels(type, layout.channels, layout.active, binning);
  request.validate();
  std::vector<Histogram> hists(request.histograms(), Histogram(binning));
  fill_pixels(hists, type, pixels, layout, options);
  return hists;
}

const Strategy& fill_weighted(WeightedHistogram& hist, SampleType type, const void* samples, std::uint64_t n,
                              SampleType weight_type, const void* weights, const Options& options) {
  auto plan = detail::cached_plan(Request::weighted(type, weight_type, hist.binning()), options);
  plan->fill(hist, Input::array(samples, n, weights));
  return plan->strategy();
}

WeightedHistogram histogram_weighted(SampleType type, const void* samples, std::uint64_t n, SampleType weight_type,
                                     const void* weights, const Binning& binning, const Options& options) {
  WeightedHistogram h(binning);
  fill_weighted(h, type, samples, n, weight_type, weights, options);
  return h;
}

}  // namespace levelhist
