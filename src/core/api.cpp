// The factory layer: resolves Options to a backend and a strategy, then runs it.
#include <cstdlib>
#include <memory>
#include <new>

#include "core/backend_choice.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist {
namespace {

Backend default_backend() { return backend_available(Backend::cuda) ? Backend::cuda : Backend::cpu; }

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

namespace detail {

void require_cuda_backend() {
  std::string why;
  if (!backend_available(Backend::cuda, &why)) throw Error(ErrorKind::unsupported, "--backend cuda: " + why);
}

Backend resolve_backend(const Options& options, const char* method) {
  if (options.strategy != "auto")
    throw Error(ErrorKind::usage, std::string(method) + " has no strategies to choose from (strategy '" +
                                      options.strategy + "' given; leave it \"auto\")");
  switch (options.backend) {
    case BackendChoice::cpu: return Backend::cpu;
    case BackendChoice::cuda: require_cuda_backend(); return Backend::cuda;
    case BackendChoice::automatic: break;
  }
  return default_backend();
}

}  // namespace detail

const char* version() { return LEVELHIST_VERSION; }

const Strategy& resolve_strategy(const Problem& problem, const Options& options) {
  if (options.strategy != "auto") {
    const Strategy* s = find_strategy(options.strategy);
    if (!s)
      throw Error(ErrorKind::usage, "unknown strategy '" + options.strategy + "' (`levelhist list` shows them all)");
    if ((options.backend == BackendChoice::cpu && s->backend != Backend::cpu) ||
        (options.backend == BackendChoice::cuda && s->backend != Backend::cuda))
      throw Error(ErrorKind::usage, "strategy '" + options.strategy + "' runs on the " +
                                        std::string(to_string(s->backend)) + " backend, not the one asked for");
    std::string why;
    if (!backend_available(s->backend, &why))
      throw Error(ErrorKind::unsupported, "strategy '" + options.strategy + "' cannot run here: " + why);
    if (!strategy_accepts(*s, problem, &why))
      throw Error(ErrorKind::unsupported, "strategy '" + options.strategy + "' cannot count this problem: " + why);
    return *s;
  }
  if (options.backend == BackendChoice::cuda) {
    detail::require_cuda_backend();
    return choose_strategy(problem, Backend::cuda);
  }
  if (options.backend == BackendChoice::cpu) return choose_strategy(problem, Backend::cpu);
  Backend backend = default_backend();
  if (backend == Backend::cuda) {
    try {
      return choose_strategy(problem, Backend::cuda);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unsupported) throw;
    }
  }
  return choose_strategy(problem, Backend::cpu);
}

const Strategy& fill(Histogram& hist, SampleType type, const void* samples, std::uint64_t n, const Options& options) {
  Problem problem{type, &hist.binning(), n};
  const Strategy& s = resolve_strategy(problem, options);
  if (n == 0) return s;
  if (s.backend == Backend::cuda) {
    cuda::fill_from_host(hist, type, samples, n, s);
    return s;
  }
  std::size_t bytes = s.workspace_bytes ? s.workspace_bytes(problem) : 0;
  std::unique_ptr<void, AlignedFree> workspace;
  if (bytes) {
    workspace.reset(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
    if (!workspace) throw Error(ErrorKind::input, "out of memory: the workspace needs " + std::to_string(bytes) + " bytes");
  }
  RunArgs args{};
  args.samples = samples;
  args.n = n;
  args.type = type;
  args.binning = &hist.binning();
  args.indexer = make_indexer(hist.binning());
  args.slots = hist.slots().data();
  args.accumulate = true;
  args.workspace = workspace.get();
  args.workspace_bytes = bytes;
  args.threads = options.threads;
  args.stream = nullptr;
  s.run(args);
  return s;
}

Histogram histogram(SampleType type, const void* samples, std::uint64_t n, const Binning& binning,
                    const Options& options) {
  Histogram h(binning);
  fill(h, type, samples, n, options);
  return h;
}

}  // namespace levelhist
