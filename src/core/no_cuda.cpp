// The CUDA side of a build without the CUDA backend: every entry says so.
#if !LEVELHIST_HAVE_CUDA
#include "core/plan_impl.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/cuda_sort.hpp"
#include "levelhist/cuda_sparse.hpp"
#include "levelhist/error.hpp"

namespace levelhist {
namespace {

const char* const kNoCuda = "this build of levelhist has no CUDA backend";
const char* const kRebuild = "rebuild where nvcc is installed, or use the CPU backend";

[[noreturn]] void no_cuda() { throw Error(ErrorKind::unsupported, kNoCuda, kRebuild, ErrorSubject::backend); }

}  // namespace

bool backend_available(Backend backend, std::string* why_not) {
  if (backend == Backend::cpu) return true;
  if (why_not) *why_not = std::string(kNoCuda) + " (" + kRebuild + ")";
  return false;
}

namespace detail {

struct CudaPlanState {};
void CudaPlanStateDeleter::operator()(CudaPlanState* state) const noexcept { delete state; }
ScopedDevice::ScopedDevice(int) {}
ScopedDevice::~ScopedDevice() = default;
void cuda_bind(Plan::Impl&) { no_cuda(); }
std::size_t cuda_workspace_bytes(const Plan::Impl&, std::uint64_t) { no_cuda(); }
void cuda_run(const Plan::Impl&, const Geometry&, const Input&, void*, bool, void*, std::size_t, void*) { no_cuda(); }
void cuda_fill(const Plan::Impl&, const Geometry&, const Input&, void*) { no_cuda(); }
std::uint64_t cuda_fill_source(const Plan::Impl&, Source&, void*) { no_cuda(); }
void release_host_path_staging(int) {}
unsigned host_path_staging_threads() { return 0; }
bool host_memory_is_pinned(const void*, std::size_t) { return false; }
void inject_cuda_fault_after(unsigned) {}

}  // namespace detail

namespace cuda {

std::size_t workspace_bytes(const Problem&, const Strategy*) { no_cuda(); }
void histogram(void*, std::size_t, const void*, std::uint64_t, SampleType, const Binning&, std::uint64_t*, bool, void*,
               const Strategy*) {
  no_cuda();
}
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
void counting_sort(void*, std::size_t&, SampleType, const void*, void*, std::uint64_t, void*) { no_cuda(); }
void sparse_histogram(void*, std::size_t&, KeyType, const void*, std::uint64_t, void*, std::uint64_t*, std::uint64_t*,
                      void*) {
  no_cuda();
}
std::vector<ValueCount> sparse_histogram_from_host(KeyType, const void*, std::uint64_t) { no_cuda(); }
int device_count() { return 0; }
int current_device() { return -1; }
int compute_capability() { return 0; }
std::string describe_device() { return "no CUDA backend in this build"; }

}  // namespace cuda
}  // namespace levelhist
#endif
