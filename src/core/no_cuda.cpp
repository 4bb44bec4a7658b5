// The CUDA entry points of a build without the CUDA backend: each says so.
#if !LEVELHIST_HAVE_CUDA
#include "levelhist/cuda.hpp"
#include "levelhist/cuda_sort.hpp"
#include "levelhist/cuda_sparse.hpp"
#include "levelhist/error.hpp"

namespace levelhist {

bool backend_available(Backend backend, std::string* why_not) {
  if (backend == Backend::cpu) return true;
  if (why_not) *why_not = "this build of levelhist has no CUDA backend (rebuild where nvcc is installed)";
  return false;
}

namespace cuda {
namespace {
[[noreturn]] void no_cuda() {
  throw Error(ErrorKind::unsupported, "this build of levelhist has no CUDA backend (rebuild where nvcc is installed)");
}
}  // namespace

std::size_t workspace_bytes(const Problem&, const Strategy*) { no_cuda(); }
void histogram(void*, std::size_t, const void*, std::uint64_t, SampleType, const Binning&, std::uint64_t*, bool, void*,
               const Strategy*) {
  no_cuda();
}
void fill_from_host(Histogram&, SampleType, const void*, std::uint64_t, const Strategy&) { no_cuda(); }
std::size_t workspace_bytes_pixels(SampleType, const PixelLayout&, const Binning&, const Strategy*) { no_cuda(); }
void histogram_pixels(void*, std::size_t, const void*, SampleType, const PixelLayout&, const Binning&, std::uint64_t*,
                      bool, void*, const Strategy*) {
  no_cuda();
}
std::size_t workspace_bytes_weighted(SampleType, std::uint64_t, SampleType, const Binning&, const Strategy*) {
  no_cuda();
}
void histogram_weighted(void*, std::size_t, const void*, std::uint64_t, SampleType, const void*, SampleType,
                        const Binning&, double*, bool, void*, const Strategy*) {
  no_cuda();
}
void fill_pixels_from_host(std::span<Histogram>, SampleType, const void*, const PixelLayout&, const Strategy&) {
  no_cuda();
}
void fill_weighted_from_host(WeightedHistogram&, SampleType, const void*, std::uint64_t, const void*, SampleType,
                             const Strategy&) {
  no_cuda();
}
void counting_sort(void*, std::size_t&, SampleType, const void*, void*, std::uint64_t, void*) { no_cuda(); }
void sparse_histogram(void*, std::size_t&, KeyType, const void*, std::uint64_t, void*, std::uint64_t*, std::uint64_t*,
                      void*) {
  no_cuda();
}
std::vector<ValueCount> sparse_histogram_from_host(KeyType, const void*, std::uint64_t) { no_cuda(); }
int device_count() { return 0; }
std::string describe_device() { return "no CUDA backend in this build"; }

}  // namespace cuda
}  // namespace levelhist
#endif
