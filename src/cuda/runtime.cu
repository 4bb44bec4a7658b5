// The CUDA backend's dispatch layer: device discovery, the two-phase
// device-pointer API (cuda.hpp) and the host-pointer path through pinned
// staging buffers. Strategies (one file each in src/cuda/) sit below it.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cuda_common.cuh"
#include "cuda/runtime_shared.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"

namespace levelhist {
namespace cuda_detail {

void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line) {
  (void)file;
  (void)line;
  cudaGetLastError();  // clear a sticky launch error so later calls can report their own
  throw Error(ErrorKind::cuda, std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
}

int sm_count() {
  static int count = [] {
    int device = 0, value = 0;
    LEVELHIST_CUDA_CHECK(cudaGetDevice(&device));
    LEVELHIST_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device));
    return value;
  }();
  return count;
}

}  // namespace cuda_detail

using namespace cuda_detail;

bool backend_available(Backend backend, std::string* why_not) {
  if (backend == Backend::cpu) return true;
  if (cuda::device_count() > 0) return true;
  if (why_not) *why_not = "no CUDA GPU is available (" + cuda::describe_device() + ")";
  return false;
}

namespace cuda {
namespace {

using dispatch::kMaxSamplesPerCall;  // at most 2^31 samples per run() call (runtime_shared.hpp)

std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t edges_bytes(const Binning& b) {
  return b.kind() == BinKind::edges ? round_up(b.edge_values().size() * sizeof(double)) : 0;
}

const Strategy& pick(const Problem& problem, const Strategy* strategy) {
  if (!strategy) return choose_strategy(problem, Backend::cuda);
  if (strategy->backend != Backend::cuda)
    throw Error(ErrorKind::usage, std::string("strategy '") + strategy->name + "' is not a CUDA strategy");
  std::string why;
  if (!strategy_accepts(*strategy, problem, &why))
    throw Error(ErrorKind::unsupported, std::string("strategy '") + strategy->name + "' cannot count this problem: " + why);
  return *strategy;
}

}  // namespace

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::string describe_device() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("CUDA reports: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "CUDA reports no device";
  int device = 0, runtime = 0, driver = 0;
  cudaDeviceProp prop{};
  LEVELHIST_CUDA_CHECK(cudaGetDevice(&device));
  LEVELHIST_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  return std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
         std::to_string(prop.l2CacheSize >> 20) + " MiB L2, runtime " + std::to_string(runtime / 1000) + "." +
         std::to_string(runtime % 1000 / 10) + ", driver " + std::to_string(driver / 1000) + "." +
         std::to_string(driver % 1000 / 10);
}

std::size_t workspace_bytes(const Problem& problem, const Strategy* strategy) {
  const Strategy& s = pick(problem, strategy);
  Problem per_call = problem;
  per_call.n = std::min(problem.n, kMaxSamplesPerCall);
  return edges_bytes(*problem.binning) + round_up(s.workspace_bytes ? s.workspace_bytes(per_call) : 0);
}

void histogram(void* d_workspace, std::size_t ws_bytes, const void* d_samples, std::uint64_t n, SampleType type,
               const Binning& binning, std::uint64_t* d_slots, bool accumulate, void* stream,
               const Strategy* strategy) {
  Problem problem{type, &binning, n};
  const Strategy& s = pick(problem, strategy);
  if (ws_bytes < workspace_bytes(problem, &s))
    throw Error(ErrorKind::usage, "the CUDA workspace is too small: " + std::to_string(ws_bytes) + " bytes given, " +
                                      std::to_string(workspace_bytes(problem, &s)) + " needed");
  if (n == 0) {
    if (!accumulate)
      LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_slots, 0, binning.slots() * sizeof(std::uint64_t),
                                           static_cast<cudaStream_t>(stream)));
    return;
  }
  RunArgs args = dispatch::prepare(d_workspace, ws_bytes, type, binning, stream);
  args.slots = d_slots;
  const std::size_t size = sample_size(type);
  try {
    for (std::uint64_t done = 0; done < n; done += kMaxSamplesPerCall) {
      args.samples = static_cast<const unsigned char*>(d_samples) + done * size;
      args.n = std::min(kMaxSamplesPerCall, n - done);
      args.accumulate = accumulate || done > 0;
      s.run(args);
    }
  } catch (...) {
    dispatch::clear_edges_quietly(args, d_workspace, binning, stream);
    throw;
  }
  dispatch::clear_edges(args, d_workspace, binning, stream);
}

namespace {

// Buffers of the host path, kept between calls: allocating pinned memory and
// workspaces costs milliseconds, far more than counting a few megabytes.
struct HostPathBuffers {
  static constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
  std::mutex mutex;
  unsigned char* pinned[2] = {nullptr, nullptr};
  unsigned char* device_in[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_size = 0;
  std::uint64_t* d_slots = nullptr;
  std::size_t slots_size = 0;

  void ensure_base() {
    if (stream) return;
    LEVELHIST_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int i = 0; i < 2; ++i) {
      LEVELHIST_CUDA_CHECK(cudaMallocHost(&pinned[i], kChunkBytes));
      LEVELHIST_CUDA_CHECK(cudaMalloc(&device_in[i], kChunkBytes));
      LEVELHIST_CUDA_CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    }
  }
  void ensure_workspace(std::size_t bytes) {
    if (bytes <= workspace_size) return;
    if (workspace) LEVELHIST_CUDA_CHECK(cudaFree(workspace));
    workspace = nullptr;
    workspace_size = 0;
    LEVELHIST_CUDA_CHECK(cudaMalloc(&workspace, bytes));
    LEVELHIST_CUDA_CHECK(cudaMemset(workspace, 0, bytes));  // the zeroed-once contract of cuda.hpp
    workspace_size = bytes;
  }
  void ensure_slots(std::size_t count) {
    if (count <= slots_size) return;
    if (d_slots) LEVELHIST_CUDA_CHECK(cudaFree(d_slots));
    d_slots = nullptr;
    slots_size = 0;
    LEVELHIST_CUDA_CHECK(cudaMalloc(&d_slots, count * sizeof(std::uint64_t)));
    slots_size = count;
  }
};

// Copies host memory into a pinned staging buffer with several threads: one
// thread's memcpy from a freshly mapped file (page faults included) runs at a few
// GB/s, far below the ~50 GB/s the PCIe copy that follows can take.
void parallel_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  constexpr std::size_t kBytesPerThread = std::size_t{4} << 20;
  unsigned threads = static_cast<unsigned>(std::min<std::size_t>(
      std::max(1u, std::min(8u, std::thread::hardware_concurrency())), bytes / kBytesPerThread + 1));
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    std::size_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
    pool.emplace_back([=] { std::memcpy(dst + begin, src + begin, end - begin); });
  }
  std::memcpy(dst, src, bytes / threads);
  for (auto& th : pool) th.join();
}

HostPathBuffers& host_path() {
  static HostPathBuffers* buffers = new HostPathBuffers;  // never destroyed: the driver may be gone at exit
  return *buffers;
}

}  // namespace

void fill_from_host(Histogram& hist, SampleType type, const void* samples, std::uint64_t n, const Strategy& strategy) {
  HostPathBuffers& b = host_path();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.ensure_base();
  const Binning& binning = hist.binning();
  const std::size_t size = sample_size(type);
  const std::uint64_t chunk_samples = HostPathBuffers::kChunkBytes / size;
  Problem problem{type, &binning, std::min<std::uint64_t>(n, chunk_samples)};
  b.ensure_workspace(std::max<std::size_t>(workspace_bytes(problem, &strategy), 256));
  b.ensure_slots(binning.slots());
  LEVELHIST_CUDA_CHECK(cudaMemsetAsync(b.d_slots, 0, binning.slots() * sizeof(std::uint64_t), b.stream));
  const auto* src = static_cast<const unsigned char*>(samples);
  // Double buffering: while the GPU copies and counts chunk k, the CPU stages
  // chunk k+1 into the other pinned buffer.
  int k = 0;
  for (std::uint64_t done = 0; done < n; done += chunk_samples, k ^= 1) {
    std::uint64_t count = std::min(chunk_samples, n - done);
    LEVELHIST_CUDA_CHECK(cudaEventSynchronize(b.done[k]));
    parallel_copy(b.pinned[k], src + done * size, count * size);
    LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(b.device_in[k], b.pinned[k], count * size, cudaMemcpyHostToDevice, b.stream));
    histogram(b.workspace, b.workspace_size, b.device_in[k], count, type, binning, b.d_slots, true, b.stream, &strategy);
    LEVELHIST_CUDA_CHECK(cudaEventRecord(b.done[k], b.stream));
  }
  std::vector<std::uint64_t> result(binning.slots());
  LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(result.data(), b.d_slots, result.size() * sizeof(std::uint64_t),
                                       cudaMemcpyDeviceToHost, b.stream));
  LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(b.stream));
  auto out = hist.slots();
  for (std::size_t i = 0; i < result.size(); ++i) out[i] += result[i];
}

namespace dispatch {

// For runtime_general.cu (runtime_shared.hpp): the same helpers, not copies.
std::size_t edges_bytes(const Binning& binning) { return cuda::edges_bytes(binning); }
const Strategy& pick(const Problem& problem, const Strategy* strategy) { return cuda::pick(problem, strategy); }
void copy_to_staging(unsigned char* dst, const unsigned char* src, std::size_t bytes) { parallel_copy(dst, src, bytes); }

// Copies explicit edges into the head of the workspace and fills the RunArgs
// fields every call shares.
RunArgs prepare(void* d_workspace, std::size_t ws_bytes, SampleType type, const Binning& binning, void* stream) {
  auto* ws = static_cast<unsigned char*>(d_workspace);
  const double* d_edges = nullptr;
  if (std::size_t eb = cuda::edges_bytes(binning)) {
    LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(ws, binning.edge_values().data(), binning.edge_values().size() * sizeof(double),
                                         cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)));
    d_edges = reinterpret_cast<const double*>(ws);
    ws += eb;
    ws_bytes -= eb;
  }
  RunArgs args{};
  args.type = type;
  args.binning = &binning;
  args.indexer = make_indexer(binning, d_edges);
  args.workspace = ws;
  args.workspace_bytes = ws_bytes;
  args.stream = stream;
  return args;
}

// The edges prepare() staged were the call's alone: clear them, so the
// workspace is zero again for whichever strategy or problem uses it next (cuda.hpp).
void clear_edges(const RunArgs& args, void* d_workspace, const Binning& binning, void* stream) {
  if (args.indexer.edges)
    LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_workspace, 0, cuda::edges_bytes(binning), static_cast<cudaStream_t>(stream)));
}

// The same when a strategy threw: unchecked, the strategy's error is the one to report.
void clear_edges_quietly(const RunArgs& args, void* d_workspace, const Binning& binning, void* stream) {
  if (args.indexer.edges) cudaMemsetAsync(d_workspace, 0, cuda::edges_bytes(binning), static_cast<cudaStream_t>(stream));
}

}  // namespace dispatch
}  // namespace cuda
}  // namespace levelhist
