// The entry points of sort.hpp and sparse.hpp: check the arguments, resolve
// the backend (the rules and errors of a Plan's), run the CPU method
// (src/cpu/) or the CUDA one (src/cuda/).
#include <string>

#include "cpu/sort_methods.hpp"
#include "levelhist/cuda_sort.hpp"
#include "levelhist/cuda_sparse.hpp"
#include "levelhist/sort.hpp"
#include "levelhist/sparse.hpp"

namespace levelhist {
namespace {

// automatic: CUDA when a GPU is present (and the build has the backend), else
// the CPU. These methods have no strategies to choose from: `method` names
// the caller in the error for a named one.
Backend resolve_backend(const Options& options, const char* method) {
  if (options.strategy != "auto")
    throw Error(ErrorKind::usage,
                std::string(method) + " has no strategies to choose from (strategy '" + options.strategy + "' given)",
                "leave Options::strategy \"auto\"", ErrorSubject::strategy);
  switch (options.backend) {
    case BackendChoice::cpu: return Backend::cpu;
    case BackendChoice::cuda: {
      std::string why;
      if (!backend_available(Backend::cuda, &why))
        throw Error(ErrorKind::unsupported, "the cuda backend cannot run here: " + why, "use the CPU backend",
                    ErrorSubject::backend);
      return Backend::cuda;
    }
    case BackendChoice::automatic: break;
  }
  return backend_available(Backend::cuda) ? Backend::cuda : Backend::cpu;
}

}  // namespace

std::string_view to_string(KeyType type) {
  switch (type) {
    case KeyType::u32: return "u32";
    case KeyType::i32: return "i32";
    case KeyType::u64: return "u64";
    case KeyType::i64: return "i64";
  }
  return "?";
}

std::optional<KeyType> parse_key_type(std::string_view name) {
  for (KeyType t : kAllKeyTypes)
    if (to_string(t) == name) return t;
  return std::nullopt;
}

Backend counting_sort(SampleType type, const void* in, void* out, std::uint64_t n, const Options& options) {
  if (!counting_sort_supports(type))
    throw Error(ErrorKind::usage, "counting_sort takes u8, i8, u16 or i16 samples, not " + std::string(to_string(type)),
                "sort 8- or 16-bit samples", ErrorSubject::data);
  const Backend backend = resolve_backend(options, "counting_sort");
  if (n == 0) return backend;
  if (backend == Backend::cuda) cuda::counting_sort_from_host(type, in, out, n, options.threads);
  else cpu_sort::counting_sort(type, in, out, n, options.threads);
  return backend;
}

std::vector<ValueCount> sparse_histogram(KeyType type, const void* keys, std::uint64_t n, const Options& options,
                                         Backend* ran) {
  const Backend backend = resolve_backend(options, "sparse_histogram");
  if (ran) *ran = backend;
  if (n == 0) return {};
  if (backend == Backend::cuda) return cuda::sparse_histogram_from_host(type, keys, n);
  return cpu_sort::sparse_histogram(type, keys, n, options.threads);
}

std::vector<ValueCount> sparse_histogram(KeyType type, const void* keys, std::uint64_t n, const Options& options) {
  return sparse_histogram(type, keys, n, options, nullptr);
}

namespace cuda {

// Not CUDA code: the counting runs on the GPU through levelhist::fill's CUDA
// path (cuda_sort.hpp says why the runs are written by the CPU). In a build
// without CUDA, fill throws the library's usual error.
void counting_sort_from_host(SampleType type, const void* in, void* out, std::uint64_t n, unsigned threads) {
  Histogram hist(Binning::per_value(type));
  Options options;
  options.backend = BackendChoice::cuda;
  options.threads = threads;
  fill(hist, type, in, n, options);
  cpu_sort::expand_runs(type, hist.counts(), out, n, threads);
}

}  // namespace cuda
}  // namespace levelhist
