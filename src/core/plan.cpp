// Plans (plan.hpp): a request resolved once, and the CPU backend's run path.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "core/hybrid.hpp"
#include "core/plan_impl.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "levelhist/plan.hpp"

namespace levelhist {
namespace {

const char* const kStrategyFix = "leave Options::strategy \"auto\", or name a strategy of all_strategies() that can";

Backend default_backend() { return backend_available(Backend::cuda) ? Backend::cuda : Backend::cpu; }

void require_cuda() {
  std::string why;
  if (!backend_available(Backend::cuda, &why))
    throw Error(ErrorKind::unsupported, "the cuda backend cannot run here: " + why, "use the CPU backend",
                ErrorSubject::backend);
}

// The strategy `options` ask for on `problem`: a named one (checked against
// the backend and the problem) or auto's choice from the selection table.
const Strategy& resolve(const Problem& problem, const Options& options) {
  if (options.strategy != "auto") {
    const Strategy* s = find_strategy(options.strategy);
    if (!s)
      throw Error(ErrorKind::usage, "unknown strategy '" + options.strategy + "'",
                  "name one of all_strategies(), or \"auto\"", ErrorSubject::strategy);
    if ((options.backend == BackendChoice::cpu && s->backend != Backend::cpu) ||
        (options.backend == BackendChoice::cuda && s->backend != Backend::cuda))
      throw Error(ErrorKind::usage,
                  "strategy '" + options.strategy + "' runs on the " + std::string(to_string(s->backend)) +
                      " backend, not the one asked for",
                  "ask for its backend, or for the automatic one", ErrorSubject::strategy);
    std::string why;
    if (!backend_available(s->backend, &why))
      throw Error(ErrorKind::unsupported, "strategy '" + options.strategy + "' cannot run here: " + why,
                  kStrategyFix, ErrorSubject::strategy);
    if (!strategy_accepts(*s, problem, &why))
      throw Error(ErrorKind::unsupported, "strategy '" + options.strategy + "' cannot count this problem: " + why,
                  kStrategyFix, ErrorSubject::strategy);
    return *s;
  }
  switch (options.backend) {
    case BackendChoice::cpu: return choose_strategy(problem, Backend::cpu);
    case BackendChoice::cuda: require_cuda(); return choose_strategy(problem, Backend::cuda);
    case BackendChoice::automatic: break;
  }
  if (default_backend() == Backend::cuda) {
    try {
      return choose_strategy(problem, Backend::cuda);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unsupported) throw;  // no CUDA strategy takes it: the CPU does
    }
  }
  return choose_strategy(problem, Backend::cpu);
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// A CPU strategy's workspace: 256-byte aligned, as RunArgs promises.
std::unique_ptr<void, FreeDeleter> cpu_workspace(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  std::unique_ptr<void, FreeDeleter> ws(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  if (!ws)
    throw Error(ErrorKind::resource, "out of memory: the workspace needs " + std::to_string(bytes) + " bytes",
                "free memory, or count fewer bins", ErrorSubject::memory);
  return ws;
}


template <class Hist>
void check_histograms(const Request& request, std::span<Hist> hists) {
  const std::uint64_t wanted = request.histograms() * (request.weight_squares ? 2 : 1);
  if (hists.size() != wanted) {
    const char* per = request.is_batch() ? " (one per segment or tile)"
                      : request.weight_squares ? " (sums and sums of squares per active channel)"
                                               : " (one per active channel)";
    throw Error(ErrorKind::usage,
                "the request makes " + std::to_string(wanted) + " histogram" + (wanted == 1 ? "" : "s") + per +
                    ", and " + std::to_string(hists.size()) + " were given",
                std::string("pass ") + (request.is_batch() ? "one histogram per segment or tile"
                                        : request.weight_squares ? "the sums' histograms, then the squares'"
                                                                 : "one histogram per active channel"),
                request.is_batch() ? ErrorSubject::batch : ErrorSubject::layout);
  }
  for (const Hist& h : hists)
    if (!(h.binning() == request.binning))
      throw Error(ErrorKind::usage, "a histogram's binning is not the request's",
                  "make the histograms with the request's Binning", ErrorSubject::binning);
}

}  // namespace

namespace detail {

// The CPU path: the strategy runs on the call's host memory. Strategies with
// the pixels capability take rows with a pitch; others get one run per row
// (a one-channel image with a pitch), or one run for packed rows. Batches,
// N-d points and deterministic sums are one run for the whole call.
void cpu_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* out, bool accumulate) {
  cpu_fill(plan, g, input, out, accumulate, plan.base.threads);
}

void cpu_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* out, bool accumulate,
              unsigned threads) {
  const Request& request = plan.request;
  const bool weighted = g.weight_bytes != 0;
  RunArgs args = plan.base;
  args.threads = threads;
  args.slots = weighted ? nullptr : static_cast<std::uint64_t*>(out);
  args.weight_sums = weighted ? static_cast<double*>(out) : nullptr;
  if (weighted && request.weight_squares)
    args.weight_squares = static_cast<double*>(out) + request.histograms() * request.histogram_slots();
  args.weights = input.weights;
  args.batch = detail::batch_of(request, g, input);
  double bound = 0.0;  // deterministic sums: the call's largest finite |weight|
  if (weighted && request.deterministic) {
    bound = detail::weight_bound(*request.weight_type, input.weights, g.items());
    args.weight_bound = &bound;
  }
  if (request.batch.kind == BatchKind::offsets) detail::check_offsets(input.offsets, request.batch.segments, g.samples());
  const bool strategy_takes_rows = (plan.strategy->capabilities & kCapabilityPixels) != 0;
  auto run = [&](const unsigned char* p, std::uint64_t width, std::uint64_t height, std::uint64_t pitch,
                 bool acc) {
    args.samples = p;
    args.n = width * height * g.channels;
    args.accumulate = acc;
    if (request.is_pixels() || (strategy_takes_rows && height > 1) || request.batch.kind == BatchKind::tiles)
      args.layout = PixelLayout{g.channels, request.layout.active, width, height, pitch};
    Problem problem = plan.problem;
    problem.n = args.n;
    problem.layout = args.layout;
    std::size_t bytes = plan.strategy->workspace_bytes ? plan.strategy->workspace_bytes(problem) : 0;
    auto ws = cpu_workspace(bytes);
    args.workspace = ws.get();
    args.workspace_bytes = bytes;
    plan.strategy->run(args);
  };
  const auto* base = static_cast<const unsigned char*>(input.samples);
  if (request.is_nd()) {
    detail::set_columns(args.axes, g, input);
    args.samples = args.axes.columns[0];
    args.n = g.items();  // points
    args.accumulate = accumulate;
    plan.strategy->run(args);
    return;
  }
  if (g.items() == 0 && !request.is_batch()) {
    if (!accumulate) std::memset(out, 0, request.output_slots() * 8);  // 8 bytes: u64 counts, double sums
    return;
  }
  if (request.batch.kind == BatchKind::tiles) {
    run(base, g.width, g.height, g.pitch, accumulate);
  } else if (g.packed()) {
    run(base, g.items(), g.items() ? 1 : 0, g.items() * g.item_bytes(), accumulate);
  } else if (request.is_pixels() || strategy_takes_rows) {
    run(base, g.width, g.height, g.pitch, accumulate);
  } else {
    for (std::uint64_t r = 0; r < g.height; ++r) run(base + r * g.pitch, g.width, 1, g.row_bytes(), accumulate || r > 0);
  }
}


const Strategy& resolve_strategy_for(const Problem& problem, const Options& options) { return resolve(problem, options); }

}  // namespace detail

Plan::Plan(Request request, const Options& options) : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  request.validate();
  p.request = std::move(request);
  p.options = options;
  if (options.device < -1)
    throw Error(ErrorKind::usage, "device " + std::to_string(options.device) + " does not exist",
                "give a device index from 0, or -1 for the current device", ErrorSubject::device);
  if (!options.devices.empty() && options.backend != BackendChoice::cpu) {
    for (std::size_t k = 0; k < options.devices.size(); ++k) {
      const int d = options.devices[k];
      if (d < 0)
        throw Error(ErrorKind::usage, "device " + std::to_string(d) + " in Options::devices does not exist",
                    "give device indices from 0", ErrorSubject::device);
      for (std::size_t j = 0; j < k; ++j)
        if (options.devices[j] == d)
          throw Error(ErrorKind::usage, "device " + std::to_string(d) + " is twice in Options::devices",
                      "name each device once", ErrorSubject::device);
    }
    if (options.device >= 0 && options.device != options.devices[0])
      throw Error(ErrorKind::usage,
                  "Options::device is " + std::to_string(options.device) + " and Options::devices starts with " +
                      std::to_string(options.devices[0]),
                  "leave Options::device -1 with a device list (the plan is bound to its first device)",
                  ErrorSubject::device);
    // Only CUDA plans use the list; without a GPU an automatic plan runs on the CPU.
    if (backend_available(Backend::cuda)) p.options.device = options.devices[0];
  }
  p.problem = detail::problem_of(p.request, 0);
  {
    // A CUDA strategy is chosen for the device the plan will run on.
    detail::ScopedDevice on_device(options.backend == BackendChoice::cpu ? -1 : p.options.device);
    p.strategy = &resolve(p.problem, p.options);
  }
  p.backend = p.strategy->backend;

  RunArgs& a = p.base;
  a.type = p.request.type;
  a.binning = &p.request.binning;
  a.indexer = make_indexer(p.request.binning);
  a.threads = options.threads;
  a.layout = p.request.layout;
  a.weight_type = p.request.weight_type.value_or(SampleType::f32);
  a.deterministic = p.problem.deterministic;
  a.axes.count = p.request.axis_count();
  for (unsigned k = 0; k < a.axes.count; ++k) {
    a.axes.binnings[k] = p.problem.axes[k];
    a.axes.indexers[k] = make_indexer(*p.problem.axes[k]);
  }
  if (p.strategy->prepare) {
    p.prepared.resize(p.strategy->prepared_bytes(p.problem));
    p.strategy->prepare(p.problem, p.prepared.data());
    a.prepared = a.prepared_host = p.prepared.data();
  }
  if (p.backend == Backend::cuda) {
    detail::cuda_bind(p);  // edges and prepared data to the device
    // CPU and GPU together (src/core/hybrid.cpp): the CPU plan of the same request.
    if (detail::shares_host_calls(p.request, p.options)) {
      Options cpu = p.options;
      cpu.backend = BackendChoice::cpu;
      cpu.devices.clear();
      cpu.device = -1;
      Plan partner(p.request, cpu);
      p.cpu_partner = std::move(partner.impl_);
    }
  }
}

Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

const Request& Plan::request() const { return impl_->request; }
const Options& Plan::options() const { return impl_->options; }
const Strategy& Plan::strategy() const { return *impl_->strategy; }
Backend Plan::backend() const { return impl_->backend; }
int Plan::device() const { return impl_->device; }
bool Plan::shares_host_calls() const { return impl_->cpu_partner != nullptr; }
HostSplit Plan::last_host_split() const {
  std::lock_guard<std::mutex> lock(impl_->split_mutex);
  return impl_->last_split;
}

void Plan::fill_slots(void* slots, const Input& input, bool accumulate) const {
  const detail::Geometry g = detail::geometry_of(impl_->request, input);
  if (impl_->backend == Backend::cpu) {
    detail::cpu_fill(*impl_, g, input, slots, accumulate);
    impl_->record_split(g.items(), 0);
    return;
  }
  if (!accumulate) std::memset(slots, 0, impl_->request.output_slots() * 8);
  if (g.items() == 0) return impl_->record_split(0, 0);
  if (impl_->cpu_partner) return detail::hybrid_fill(*impl_, g, input, slots);
  detail::cuda_fill(*impl_, g, input, slots);
  impl_->record_split(0, g.items());
}

void Plan::fill(std::span<Histogram> hists, const Input& input) const {
  if (impl_->request.is_weighted())
    throw Error(ErrorKind::usage, "a weighted request fills WeightedHistograms", "pass WeightedHistograms",
                ErrorSubject::weights);
  if (impl_->request.is_nd())
    throw Error(ErrorKind::usage, "an N-d request fills a HistogramNd", "pass a HistogramNd of the request's axes",
                ErrorSubject::axes);
  check_histograms(impl_->request, hists);
  if (hists.size() == 1) return fill_slots(hists[0].slots().data(), input, true);
  std::vector<std::uint64_t> out;
  try {
    out.assign(impl_->request.output_slots(), 0);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::resource, "out of memory for " + std::to_string(hists.size()) + " histograms' counters",
                "count fewer segments or tiles per call", ErrorSubject::memory);
  }
  fill_slots(out.data(), input, false);
  const std::uint64_t slots = impl_->request.binning.slots();
  for (std::size_t h = 0; h < hists.size(); ++h) {
    auto dst = hists[h].slots();
    for (std::uint64_t i = 0; i < slots; ++i) dst[i] += out[h * slots + i];
  }
}

void Plan::fill(HistogramNd& hist, const Input& input) const {
  if (!impl_->request.is_nd())
    throw Error(ErrorKind::usage, "an N-d histogram is filled by an N-d request", "make the plan with Request::joint",
                ErrorSubject::axes);
  if (!(hist.axes() == impl_->request.axes))
    throw Error(ErrorKind::usage, "the N-d histogram's axes are not the request's",
                "make the histogram with the request's axes", ErrorSubject::axes);
  fill_slots(hist.slots().data(), input, true);
}

void Plan::fill(std::span<WeightedHistogram> hists, const Input& input) const {
  if (!impl_->request.is_weighted())
    throw Error(ErrorKind::usage, "a request without weights fills Histograms of counts", "pass Histograms",
                ErrorSubject::weights);
  check_histograms(impl_->request, hists);
  if (hists.size() == 1) return fill_slots(hists[0].slots().data(), input, true);
  std::vector<double> out(impl_->request.output_slots(), 0.0);
  fill_slots(out.data(), input, false);
  const std::uint64_t slots = impl_->request.binning.slots();
  for (std::size_t h = 0; h < hists.size(); ++h) {
    auto dst = hists[h].slots();
    for (std::uint64_t i = 0; i < slots; ++i) dst[i] += out[h * slots + i];
  }
}

std::uint64_t Plan::fill(std::span<Histogram> hists, Source& source) const {
  check_histograms(impl_->request, hists);
  std::vector<std::uint64_t> out(impl_->request.output_slots(), 0);
  const std::uint64_t bytes = fill_slots(out.data(), source, false);  // checks the request's kind
  const std::uint64_t slots = impl_->request.binning.slots();
  for (std::size_t h = 0; h < hists.size(); ++h) {
    auto dst = hists[h].slots();
    for (std::uint64_t i = 0; i < slots; ++i) dst[i] += out[h * slots + i];
  }
  return bytes;
}

std::size_t Plan::workspace_bytes(std::uint64_t max_samples) const {
  if (impl_->backend != Backend::cuda)
    throw Error(ErrorKind::usage, "a CPU plan has no device workspace",
                "make the plan with the CUDA backend to count device memory", ErrorSubject::backend);
  return detail::cuda_workspace_bytes(*impl_, max_samples);
}

void Plan::run(const Input& input, void* d_out, bool accumulate, void* d_workspace, std::size_t workspace_bytes,
               void* stream) const {
  if (impl_->backend != Backend::cuda)
    throw Error(ErrorKind::usage, "Plan::run counts device memory, and this plan runs on the CPU",
                "use Plan::fill for host memory, or make the plan with the CUDA backend", ErrorSubject::backend);
  const detail::Geometry g = detail::geometry_of(impl_->request, input);
  detail::cuda_run(*impl_, g, input, d_out, accumulate, d_workspace, workspace_bytes, stream);
}

}  // namespace levelhist
