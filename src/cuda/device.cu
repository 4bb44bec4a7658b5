// What the library knows about each CUDA device, kept per device: a process
// may drive several GPUs, from several threads, and each thread has its own
// current device. Facts (multiprocessors, shared memory, compute capability),
// occupancy answers and per-kernel attributes are all keyed by device.
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "cuda/cuda_common.cuh"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"

namespace levelhist {
namespace cuda_detail {
namespace {

struct DeviceCaches {
  std::mutex mutex;
  std::map<int, std::unique_ptr<DeviceFacts>> facts;
  std::map<std::tuple<int, const void*, int, std::size_t>, int> resident;
  std::map<std::pair<int, const void*>, std::size_t> dynamic_shared;
  std::map<std::pair<int, const void*>, bool> carveout;
  std::map<const void*, std::size_t> static_shared;
};

DeviceCaches& caches() {
  static DeviceCaches* c = new DeviceCaches;  // never destroyed: used until the process ends
  return *c;
}

DeviceFacts read_facts(int device) {
  cudaDeviceProp p{};
  LEVELHIST_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceFacts f;
  f.device = device;
  f.name = p.name;
  f.sm_count = p.multiProcessorCount;
  f.compute_capability = p.major * 10 + p.minor;
  f.max_shared_optin = p.sharedMemPerBlockOptin;
  f.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  return f;
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line) {
  (void)file;
  (void)line;
  cudaGetLastError();  // clear a non-sticky error so later calls can report their own
  const bool memory = status == cudaErrorMemoryAllocation;
  throw Error(memory ? ErrorKind::resource : ErrorKind::cuda,
              std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status),
              memory ? "free device memory, or count smaller pieces"
                     : "if it happens again, check the GPU and its driver, or count on the CPU backend",
              ErrorSubject::device);
}

namespace {

std::string byte_text(std::size_t bytes) {
  char buf[48];
  if (bytes < (std::size_t{1} << 20)) std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  else if (bytes < (std::size_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

}  // namespace

void* device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaSuccess) return p;
  if (status != cudaErrorMemoryAllocation) throw_cuda_error(status, "cudaMalloc", __FILE__, __LINE__);
  cudaGetLastError();  // out of memory is not sticky: clear it so later calls report their own
  int device = -1;
  std::size_t free_bytes = 0, total_bytes = 0;
  std::string where = "CUDA device";
  if (cudaGetDevice(&device) == cudaSuccess) where += " " + std::to_string(device);
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
    where += " (" + byte_text(free_bytes) + " free of " + byte_text(total_bytes) + ")";
  cudaGetLastError();
  throw Error(ErrorKind::resource, std::string("out of device memory: ") + what + ", " + byte_text(bytes) + ", on " + where,
              "free device memory (other allocations or programs on this GPU), or count smaller pieces",
              ErrorSubject::device);
}

void* pinned_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t status = cudaMallocHost(&p, bytes);
  if (status == cudaSuccess) return p;
  if (status != cudaErrorMemoryAllocation) throw_cuda_error(status, "cudaMallocHost", __FILE__, __LINE__);
  cudaGetLastError();
  throw Error(ErrorKind::resource, std::string("out of pinned host memory: ") + what + ", " + byte_text(bytes),
              "free host memory, or pass device memory (Plan::run) instead of host memory", ErrorSubject::memory);
}

int current_device() {
  int device = -1;
  LEVELHIST_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

const DeviceFacts& device_facts(int device) {
  DeviceCaches& c = caches();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.facts.find(device);
    if (it != c.facts.end()) return *it->second;
  }
  auto facts = std::make_unique<DeviceFacts>(read_facts(device));
  std::lock_guard<std::mutex> lock(c.mutex);
  auto [it, inserted] = c.facts.emplace(device, std::move(facts));
  return *it->second;  // another thread may have inserted first: its copy is as good
}

DeviceGuard::DeviceGuard(int device) {
  const int current = current_device();
  if (current != device) {
    LEVELHIST_CUDA_CHECK(cudaSetDevice(device));
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);  // no throwing from a destructor
}

int resident_blocks_of(const void* kernel, int threads, std::size_t dynamic_smem) {
  const int device = current_device();
  DeviceCaches& c = caches();
  const auto key = std::make_tuple(device, kernel, threads, dynamic_smem);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.resident.find(key);
    if (it != c.resident.end()) return it->second;
  }
  int per_sm = 0;
  LEVELHIST_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_smem));
  const int blocks = (per_sm > 0 ? per_sm : 1) * device_facts(device).sm_count;
  // None fit: asked before allow_dynamic_shared raised the kernel's limit
  // (more than 48 KiB). Not kept, so that the answer after it is right.
  if (per_sm == 0) return blocks;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.resident[key] = blocks;
  return blocks;
}

void allow_dynamic_shared_of(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;  // every device allows this much without asking
  const int device = current_device();
  DeviceCaches& c = caches();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::size_t& allowed = c.dynamic_shared[{device, kernel}];
  if (allowed >= bytes) return;
  LEVELHIST_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  allowed = bytes;
  // Occupancy answers are keyed by the dynamic size, and one that found no
  // block fitting (asked under the old limit) was not kept.
}

std::size_t static_shared_bytes_of(const void* kernel) {
  DeviceCaches& c = caches();
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto known = c.static_shared.find(kernel);
  if (known != c.static_shared.end()) return known->second;
  cudaFuncAttributes attributes{};
  LEVELHIST_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  return c.static_shared[kernel] = attributes.sharedSizeBytes;
}

void prefer_max_shared_of(const void* kernel) {
  const int device = current_device();
  DeviceCaches& c = caches();
  std::lock_guard<std::mutex> lock(c.mutex);
  bool& done = c.carveout[{device, kernel}];
  if (done) return;
  LEVELHIST_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            static_cast<int>(cudaSharedmemCarveoutMaxShared)));
  done = true;
}

}  // namespace cuda_detail

bool backend_available(Backend backend, std::string* why_not) {
  if (backend == Backend::cpu) return true;
  if (cuda::device_count() > 0) return true;
  if (why_not) *why_not = "no CUDA GPU is available (" + cuda::describe_device() + ")";
  return false;
}

namespace cuda {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

int current_device() {
  if (device_count() == 0) return -1;
  return cuda_detail::current_device();
}

int compute_capability() {
  if (device_count() == 0) return 0;
  return cuda_detail::current_device_facts().compute_capability;
}

std::string describe_device() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("CUDA reports: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "CUDA reports no device";
  const cuda_detail::DeviceFacts& f = cuda_detail::current_device_facts();
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  return f.name + ", " + std::to_string(f.sm_count) + " SMs, " + std::to_string(f.l2_bytes >> 20) +
         " MiB L2, runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
         ", driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
}

}  // namespace cuda
}  // namespace levelhist
