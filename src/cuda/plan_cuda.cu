// The CUDA backend of a Plan (src/core/plan_impl.hpp): binding a plan to its
// device, the device path (device memory in, split into pieces a strategy can
// take) and the host path (host memory staged through pinned buffers, then the
// device path on each packed chunk). Every request kind takes these same two
// paths; the CUB-style wrappers of cuda.hpp are at the end.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/plan_impl.hpp"
#include "cpu/cpu_parallel_fork_join.hpp"
#include "cuda/cuda_common.cuh"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist {
namespace detail {
namespace {

using cuda_detail::DeviceGuard;

// A strategy sees at most this many samples per run() call (RunArgs), so its
// 32-bit per-block counts cannot overflow.
constexpr std::uint64_t kMaxSamplesPerCall = std::uint64_t{1} << 31;

std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// ---- the host path's staging, one set per device ----------------------------------

// Pinned buffers for samples and for weights, two of each so that the CPU
// packs chunk k+1 while the GPU copies and counts chunk k, and a stream. Made on
// first use and kept: allocating pinned memory costs milliseconds, far more
// than counting a few megabytes.
struct Staging {
  static constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
  std::mutex mutex;  // one host-path call at a time per device
  cudaStream_t stream = nullptr;
  unsigned char* pinned[2][2] = {};     // [buffer][0 samples, 1 weights]
  unsigned char* device_in[2][2] = {};
  cudaEvent_t done[2] = {nullptr, nullptr};

  // Each piece is made when it is missing, so a call that ran out of memory
  // half-way leaves what it made, and the next call makes the rest.
  void ensure(bool weights) {
    if (!stream) {
      cudaStream_t s = nullptr;
      LEVELHIST_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      stream = s;
    }
    for (int k = 0; k < 2; ++k)
      if (!done[k]) {
        cudaEvent_t e = nullptr;
        LEVELHIST_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        done[k] = e;
      }
    for (int which = 0; which <= (weights ? 1 : 0); ++which)
      for (int k = 0; k < 2; ++k) {
        if (!pinned[k][which])
          pinned[k][which] = static_cast<unsigned char*>(
              cuda_detail::pinned_alloc(kChunkBytes, "a staging buffer of the host path"));
        if (!device_in[k][which])
          device_in[k][which] = static_cast<unsigned char*>(
              cuda_detail::device_alloc(kChunkBytes, "a staging buffer of the host path"));
      }
  }

  // Frees the buffers (the caller holds `mutex`); the next call makes them
  // again. The stream and the events stay: they hold next to no memory.
  void release() {
    if (stream) cudaStreamSynchronize(stream);
    for (auto& buffer : pinned)
      for (unsigned char*& p : buffer)
        if (p) cudaFreeHost(std::exchange(p, nullptr));
    for (auto& buffer : device_in)
      for (unsigned char*& p : buffer)
        if (p) cudaFree(std::exchange(p, nullptr));
    cudaGetLastError();
  }
};

Staging& staging_of(int device) {
  static std::mutex mutex;
  static auto* by_device = new std::map<int, std::unique_ptr<Staging>>;  // never destroyed: the driver may be gone at exit
  std::lock_guard<std::mutex> lock(mutex);
  auto& s = (*by_device)[device];
  if (!s) s = std::make_unique<Staging>();
  return *s;
}

// Copies host memory into a pinned staging buffer with several threads: one
// thread's memcpy from a freshly mapped file (page faults included) runs at a
// few GB/s, far below the ~50 GB/s the PCIe copy that follows can take.
// fork_join runs the parts a thread cannot be started for on the calling
// thread, so running out of threads slows the copy down instead of failing it.
void parallel_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  constexpr std::size_t kBytesPerThread = std::size_t{4} << 20;
  const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(
      std::max(1u, std::min(8u, std::thread::hardware_concurrency())), bytes / kBytesPerThread + 1));
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  cpu_parallel_detail::fork_join(threads, [&](unsigned t) {
    const std::size_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
    std::memcpy(dst + begin, src + begin, end - begin);
  });
}

// After an error part-way through a call, the call's copies and kernels may
// still be in its stream, reading the pinned buffers and writing the plan's
// output: wait for them before another call can touch those buffers. Best
// effort: after a sticky error (the context is lost) these calls fail too.
void settle_after_error(cudaStream_t stream) {
  if (stream) cudaStreamSynchronize(stream);
  cudaGetLastError();
}

// The test hook inject_cuda_fault_after: pieces left before the injected failure (0: none armed).
std::atomic<unsigned> g_fault_countdown{0};

bool injected_fault_due() {
  unsigned left = g_fault_countdown.load(std::memory_order_relaxed);
  while (left != 0)
    if (g_fault_countdown.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return left == 1;
  return false;
}

}  // namespace

void inject_cuda_fault_after(unsigned pieces) { g_fault_countdown.store(pieces, std::memory_order_relaxed); }

void release_host_path_staging(int device) {
  DeviceGuard guard(device);
  Staging& st = staging_of(device);
  std::lock_guard<std::mutex> lock(st.mutex);
  st.release();
}

// What a CUDA plan owns on its device.
struct CudaPlanState {
  int device = -1;
  unsigned char* plan_memory = nullptr;  // edges, then the strategy's prepared data
  // The host path's workspace and output, made on its first call.
  std::mutex host_mutex;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  void* out = nullptr;
};

ScopedDevice::ScopedDevice(int device) {
  if (device < 0 || cuda::device_count() == 0) return;
  const int count = cuda::device_count();
  if (device >= count)
    throw Error(ErrorKind::usage,
                "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) + " device" +
                    (count == 1 ? "" : "s") + ")",
                "give a device index below " + std::to_string(count), ErrorSubject::device);
  const int current = cuda_detail::current_device();
  if (current == device) return;
  LEVELHIST_CUDA_CHECK(cudaSetDevice(device));
  previous_ = current;
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

void CudaPlanStateDeleter::operator()(CudaPlanState* state) const noexcept {
  if (!state) return;
  int previous = -1;
  // Best effort: at process exit the driver may already be gone.
  if (cudaGetDevice(&previous) == cudaSuccess && previous != state->device) cudaSetDevice(state->device);
  if (state->plan_memory) cudaFree(state->plan_memory);
  if (state->workspace) cudaFree(state->workspace);
  if (state->out) cudaFree(state->out);
  if (previous >= 0 && previous != state->device) cudaSetDevice(previous);
  cudaGetLastError();
  delete state;
}

void cuda_bind(Plan::Impl& plan) {
  std::unique_ptr<CudaPlanState, CudaPlanStateDeleter> state(new CudaPlanState);
  const int count = cuda::device_count();
  state->device = plan.options.device >= 0 ? plan.options.device : cuda_detail::current_device();
  if (state->device >= count)
    throw Error(ErrorKind::usage,
                "CUDA device " + std::to_string(state->device) + " does not exist (" + std::to_string(count) +
                    " device" + (count == 1 ? "" : "s") + ")",
                "give a device index below " + std::to_string(count), ErrorSubject::device);
  DeviceGuard guard(state->device);
  // The explicit edges of every axis (one axis but for N-d requests), then the prepared data.
  const unsigned axes = plan.request.axis_count();
  std::size_t edge_offset[kMaxAxes] = {};
  std::size_t edge_bytes = 0;
  for (unsigned k = 0; k < axes; ++k) {
    const Binning& b = *plan.problem.axes[k];
    edge_offset[k] = edge_bytes;
    if (b.kind() == BinKind::edges) edge_bytes += round_up(b.edge_values().size() * sizeof(double));
  }
  const std::size_t total = edge_bytes + plan.prepared.size();
  if (total > 0) {
    state->plan_memory = static_cast<unsigned char*>(cuda_detail::device_alloc(total, "the plan's bin edges and tables"));
    for (unsigned k = 0; k < axes; ++k) {
      const Binning& b = *plan.problem.axes[k];
      if (b.kind() == BinKind::edges)
        LEVELHIST_CUDA_CHECK(cudaMemcpy(state->plan_memory + edge_offset[k], b.edge_values().data(),
                                        b.edge_values().size() * sizeof(double), cudaMemcpyHostToDevice));
    }
    if (!plan.prepared.empty())
      LEVELHIST_CUDA_CHECK(cudaMemcpy(state->plan_memory + edge_bytes, plan.prepared.data(), plan.prepared.size(),
                                      cudaMemcpyHostToDevice));
  }
  plan.device = state->device;
  for (unsigned k = 0; k < axes; ++k) {
    const Binning& b = *plan.problem.axes[k];
    plan.base.axes.indexers[k] = make_indexer(
        b, b.kind() == BinKind::edges ? reinterpret_cast<const double*>(state->plan_memory + edge_offset[k]) : nullptr);
  }
  plan.base.indexer = plan.base.axes.indexers[0];
  plan.base.prepared = plan.prepared.empty() ? nullptr : state->plan_memory + edge_bytes;
  plan.base.prepared_host = plan.prepared.empty() ? nullptr : plan.prepared.data();
  plan.cuda = std::move(state);
}

// Sums whose strategy rounds every weight alike (deterministic ones) need the
// call's largest |weight| before any piece runs: the plan finds it into the
// first bytes of the workspace (kBoundBytes), the strategy's own workspace follows.
bool needs_bound(const Plan::Impl& plan) {
  return plan.request.is_weighted() && (plan.strategy->capabilities & kCapabilityDeterministic) != 0;
}
constexpr std::size_t kBoundBytes = 256;

std::size_t cuda_workspace_bytes(const Plan::Impl& plan, std::uint64_t max_samples) {
  Problem per_call = plan.problem;
  per_call.n = std::min(max_samples, kMaxSamplesPerCall);
  DeviceGuard guard(plan.device);
  return round_up(plan.strategy->workspace_bytes ? plan.strategy->workspace_bytes(per_call) : 0) +
         (needs_bound(plan) ? kBoundBytes : 0);
}

namespace {

// The largest finite |weight| of n weights into *bound (a double, zero on
// entry), as the bits of a non-negative double, which order as integers.
template <class W>
__global__ void weight_bound_kernel(const unsigned char* weights, std::uint64_t n, unsigned long long* bound) {
  double m = 0.0;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += std::uint64_t{gridDim.x} * blockDim.x) {
    const double w = fabs(static_cast<double>(cuda_detail::load_unaligned<W>(weights + i * sizeof(W))));
    if (w > m && w != INFINITY) m = w;  // NaN fails the first test
  }
  for (int o = 16; o; o >>= 1) m = fmax(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
  if ((threadIdx.x & 31) == 0 && m > 0.0) atomicMax(bound, static_cast<unsigned long long>(__double_as_longlong(m)));
}

void find_weight_bound(SampleType weight_type, const void* weights, std::uint64_t n, void* bound, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::clamp<std::uint64_t>(n / 4096 + 1, 1, 4 * cuda_detail::sm_count()));
  auto* w = static_cast<const unsigned char*>(weights);
  auto* b = static_cast<unsigned long long*>(bound);
  if (weight_type == SampleType::f64) weight_bound_kernel<double><<<blocks, 256, 0, stream>>>(w, n, b);
  else weight_bound_kernel<float><<<blocks, 256, 0, stream>>>(w, n, b);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

}  // namespace

// The device path: the call's rows of items in pieces of at most 2^31 samples,
// never inside an item (a pixel); rows with a pitch go to the strategy as rows
// when it takes them (the pixels capability), else one row per piece.
void cuda_run(const Plan::Impl& plan, const Geometry& g, const Input& input, void* d_out, bool accumulate,
              void* d_workspace, std::size_t workspace_bytes, void* stream) {
  DeviceGuard guard(plan.device);
  const std::uint64_t per_call = std::min<std::uint64_t>(g.samples(), kMaxSamplesPerCall);
  Problem problem = plan.problem;
  problem.n = per_call;
  const std::size_t needed = (plan.strategy->workspace_bytes ? plan.strategy->workspace_bytes(problem) : 0) +
                             (needs_bound(plan) ? kBoundBytes : 0);
  if (workspace_bytes < needed)
    throw Error(ErrorKind::usage,
                "the CUDA workspace is too small: " + std::to_string(workspace_bytes) + " bytes given, " +
                    std::to_string(needed) + " needed",
                "allocate Plan::workspace_bytes(n) bytes (zeroed once)", ErrorSubject::workspace);
  const bool weighted = g.weight_bytes != 0;
  const Request& request = plan.request;
  if (g.items() == 0 && !request.is_batch()) {
    if (!accumulate)
      LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_out, 0, request.output_slots() * 8, static_cast<cudaStream_t>(stream)));
    return;
  }
  RunArgs args = plan.base;
  args.slots = weighted ? nullptr : static_cast<std::uint64_t*>(d_out);
  args.weight_sums = weighted ? static_cast<double*>(d_out) : nullptr;
  if (weighted && request.weight_squares)
    args.weight_squares = static_cast<double*>(d_out) + request.histograms() * request.histogram_slots();
  args.workspace = d_workspace;
  args.workspace_bytes = workspace_bytes;
  args.stream = stream;
  // Batches and N-d points: one run for the whole call (a batch's segments
  // and tiles, a point's coordinates, cannot be cut into pieces).
  if (request.is_batch() || request.is_nd()) {
    if (g.samples() > kMaxSamplesPerCall)
      throw Error(ErrorKind::unsupported,
                  "a GPU call of a batch or of N-d points takes at most 2^31 samples, and this one has " +
                      std::to_string(g.samples()),
                  "count the data in several calls", request.is_batch() ? ErrorSubject::batch : ErrorSubject::axes);
    args.batch = batch_of(request, g, input);
    args.accumulate = accumulate;
    if (request.is_nd()) {
      set_columns(args.axes, g, input);
      args.samples = args.axes.columns[0];
      args.n = g.items();
    } else if (request.batch.kind == BatchKind::tiles) {
      args.samples = input.samples;
      args.n = g.items();
      args.layout = PixelLayout{1, 1, g.width, g.height, g.pitch};
    } else {
      args.samples = input.samples;
      args.n = g.samples();
    }
    plan.strategy->run(args);
    return;
  }
  // Deterministic sums: every piece rounds with the whole call's bound.
  if (weighted && needs_bound(plan)) {
    if (workspace_bytes < kBoundBytes)
      throw Error(ErrorKind::usage, "the CUDA workspace is too small for deterministic sums",
                  "allocate Plan::workspace_bytes(n) bytes (zeroed once)", ErrorSubject::workspace);
    find_weight_bound(*request.weight_type, input.weights, g.items(), d_workspace, static_cast<cudaStream_t>(stream));
    args.deterministic = true;
    args.weight_bound = static_cast<const double*>(d_workspace);
    args.workspace = static_cast<unsigned char*>(d_workspace) + kBoundBytes;
    args.workspace_bytes = workspace_bytes - kBoundBytes;
  }
  const bool pixels = plan.request.is_pixels();
  const bool takes_rows = (plan.strategy->capabilities & kCapabilityPixels) != 0;
  const auto* base = static_cast<const unsigned char*>(input.samples);
  const auto* weights = static_cast<const unsigned char*>(input.weights);
  bool first = true;
  // Items [x, x + w) of rows [r, r + h), which are `pitch` bytes apart.
  auto run = [&](std::uint64_t r, std::uint64_t x, std::uint64_t w, std::uint64_t h, std::uint64_t pitch) {
    args.samples = base + r * g.pitch + x * g.item_bytes();
    args.n = w * h * g.channels;
    if (weights) args.weights = weights + (r * g.width + x) * g.weight_bytes;
    if (pixels || h > 1) args.layout = PixelLayout{g.channels, plan.request.layout.active, w, h, pitch};
    args.accumulate = accumulate || !first;
    first = false;
    plan.strategy->run(args);
    if (injected_fault_due()) {
      // What a strategy that fails between its kernels leaves: a dirty workspace.
      if (args.workspace && args.workspace_bytes)
        cudaMemsetAsync(args.workspace, 0xFF, args.workspace_bytes, static_cast<cudaStream_t>(stream));
      cuda_detail::throw_cuda_error(cudaErrorLaunchOutOfResources, "a kernel launch (injected by a test)", __FILE__,
                                    __LINE__);
    }
  };
  try {
    // Packed rows are one long row: strategies then stream it as a plain array.
    const std::uint64_t width = g.packed() ? g.items() : g.width, height = g.packed() ? 1 : g.height;
    const std::uint64_t row_samples = width * g.channels;
    if (row_samples <= kMaxSamplesPerCall && (height == 1 || takes_rows)) {
      const std::uint64_t rows_per_call = kMaxSamplesPerCall / row_samples;
      for (std::uint64_t r = 0; r < height; r += rows_per_call)
        run(r, 0, width, std::min(rows_per_call, height - r), g.pitch);
    } else {
      const std::uint64_t items_per_call = kMaxSamplesPerCall / g.channels;
      for (std::uint64_t r = 0; r < height; ++r)
        for (std::uint64_t x = 0; x < width; x += items_per_call)
          run(r, x, std::min(items_per_call, width - x), 1, g.row_bytes());
    }
  } catch (...) {
    // A strategy that failed between its kernels may have left the workspace
    // dirty; clearing it (in stream order, after whatever did run) keeps the
    // promise that every call finds it zero. Best effort, as in settle_after_error.
    if (d_workspace && workspace_bytes)
      cudaMemsetAsync(d_workspace, 0, workspace_bytes, static_cast<cudaStream_t>(stream));
    cudaGetLastError();
    throw;
  }
  if (args.weight_bound)  // the workspace is left zero, as every call leaves it
    LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_workspace, 0, sizeof(double), static_cast<cudaStream_t>(stream)));
}

// The host path of batches, N-d points and deterministic sums: the whole call
// at once in device memory (segments, tiles and points cannot be cut into the
// staging chunks, and a deterministic sum rounds with the whole call's bound).
// The device memory is the call's own, freed at the end.
void cuda_fill_whole(const Plan::Impl& plan, const Geometry& g, const Input& input, void* host_out) {
  const Request& request = plan.request;
  const std::size_t out_bytes = request.output_slots() * 8;
  // Every coordinate of the call: separate N-d columns are one sample per
  // item each (Geometry counts one channel), so all `axes` of them.
  const std::size_t sample_bytes = (g.separate_columns ? g.items() * g.axes : g.samples()) * g.sample_bytes;
  const std::size_t weight_bytes = g.items() * g.weight_bytes;
  const std::uint64_t offsets = request.batch.kind == BatchKind::offsets ? request.batch.segments + 1 : 0;
  if (offsets) check_offsets(input.offsets, request.batch.segments, g.samples());
  const std::size_t ws_bytes = std::max<std::size_t>(cuda_workspace_bytes(plan, g.samples()), 256);
  const std::size_t total = round_up(sample_bytes) + round_up(weight_bytes) + round_up(offsets * 8) +
                            round_up(out_bytes) + ws_bytes;
  auto* memory = static_cast<unsigned char*>(
      cuda_detail::device_alloc(total, "the call's data and histograms (counted whole on the GPU)"));
  struct Free {
    unsigned char* p;
    ~Free() { cudaFree(p); }
  } owner{memory};
  unsigned char* d_samples = memory;
  unsigned char* d_weights = d_samples + round_up(sample_bytes);
  auto* d_offsets = reinterpret_cast<std::uint64_t*>(d_weights + round_up(weight_bytes));
  unsigned char* d_out = reinterpret_cast<unsigned char*>(d_offsets) + round_up(offsets * 8);
  unsigned char* d_ws = d_out + round_up(out_bytes);
  LEVELHIST_CUDA_CHECK(cudaMemset(d_ws, 0, ws_bytes));
  Input piece;
  Geometry packed = g;
  if (g.separate_columns) {
    const std::size_t column = g.items() * g.sample_bytes;
    for (unsigned k = 0; k < g.axes; ++k) {
      if (column) LEVELHIST_CUDA_CHECK(cudaMemcpy(d_samples + k * column, input.columns[k], column, cudaMemcpyHostToDevice));
      piece.columns[k] = d_samples + k * column;
    }
    piece.samples = piece.columns[0];
  } else {
    if (g.items())
      LEVELHIST_CUDA_CHECK(cudaMemcpy2D(d_samples, g.row_bytes(), input.samples, g.pitch, g.row_bytes(), g.height,
                                        cudaMemcpyHostToDevice));
    piece.samples = d_samples;
    packed.pitch = g.row_bytes();
  }
  if (weight_bytes) LEVELHIST_CUDA_CHECK(cudaMemcpy(d_weights, input.weights, weight_bytes, cudaMemcpyHostToDevice));
  if (offsets) LEVELHIST_CUDA_CHECK(cudaMemcpy(d_offsets, input.offsets, offsets * 8, cudaMemcpyHostToDevice));
  piece.weights = weight_bytes ? d_weights : nullptr;
  piece.offsets = offsets ? d_offsets : nullptr;
  if (request.is_nd() || request.batch.kind == BatchKind::tiles) {
    piece.n = input.n;
    piece.frame = input.frame;
    piece.frame.row_pitch = input.frame.width ? g.row_bytes() : 0;
  } else {
    piece.n = g.samples();
  }
  cuda_run(plan, packed, piece, d_out, /*accumulate=*/false, d_ws, ws_bytes, nullptr);
  std::vector<unsigned char> result(out_bytes);
  LEVELHIST_CUDA_CHECK(cudaMemcpy(result.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
  const std::uint64_t values = request.output_slots();
  if (g.weight_bytes) {
    auto* out = static_cast<double*>(host_out);
    const auto* got = reinterpret_cast<const double*>(result.data());
    for (std::uint64_t i = 0; i < values; ++i) out[i] += got[i];
  } else {
    auto* out = static_cast<std::uint64_t*>(host_out);
    const auto* got = reinterpret_cast<const std::uint64_t*>(result.data());
    for (std::uint64_t i = 0; i < values; ++i) out[i] += got[i];
  }
}

namespace {

// cuda_fill's work, with the staging and the plan's host state locked.
void fill_through_staging(const Plan::Impl& plan, const Geometry& g, const Input& input, void* host_out, Staging& st,
                          CudaPlanState& state) {
  const bool weighted = g.weight_bytes != 0;
  st.ensure(weighted);
  const std::uint64_t chunk_items = std::max<std::uint64_t>(
      1, Staging::kChunkBytes / std::max<std::size_t>(g.item_bytes(), weighted ? g.weight_bytes : 1));
  const std::size_t ws_bytes = std::max<std::size_t>(cuda_workspace_bytes(plan, chunk_items * g.channels), 256);
  if (ws_bytes > state.workspace_bytes) {
    // The old workspace goes first (it is smaller), and the state says "none"
    // until the new one is zeroed, so a failure here leaves a plan whose next
    // call simply tries again.
    if (state.workspace) cudaFree(std::exchange(state.workspace, nullptr));
    state.workspace_bytes = 0;
    state.workspace = cuda_detail::device_alloc(ws_bytes, "the plan's workspace for host memory");
    LEVELHIST_CUDA_CHECK(cudaMemset(state.workspace, 0, ws_bytes));  // zeroed once: calls leave it zero
    state.workspace_bytes = ws_bytes;
  }
  const std::size_t out_bytes = plan.request.output_slots() * 8;
  if (!state.out) state.out = cuda_detail::device_alloc(out_bytes, "the plan's device histograms for host memory");
  const auto* src = static_cast<const unsigned char*>(input.samples);
  const auto* wsrc = static_cast<const unsigned char*>(input.weights);
  Geometry packed = g;
  packed.height = 1;
  int k = 0;
  bool first = true;
  for (std::uint64_t done = 0; done < g.items(); done += chunk_items, k ^= 1) {
    const std::uint64_t count = std::min(chunk_items, g.items() - done);
    LEVELHIST_CUDA_CHECK(cudaEventSynchronize(st.done[k]));
    // Gather the chunk's items row piece by row piece (one copy when rows are packed).
    unsigned char* dst = st.pinned[k][0];
    for (std::uint64_t item = done; item < done + count;) {
      const std::uint64_t row = item / g.width, x = item % g.width;
      const std::uint64_t run = g.packed() ? done + count - item : std::min(g.width - x, done + count - item);
      parallel_copy(dst, src + row * g.pitch + x * g.item_bytes(), run * g.item_bytes());
      dst += run * g.item_bytes();
      item += run;
    }
    const cudaStream_t stream = st.stream;
    LEVELHIST_CUDA_CHECK(
        cudaMemcpyAsync(st.device_in[k][0], st.pinned[k][0], count * g.item_bytes(), cudaMemcpyHostToDevice, stream));
    if (weighted) {
      parallel_copy(st.pinned[k][1], wsrc + done * g.weight_bytes, count * g.weight_bytes);
      LEVELHIST_CUDA_CHECK(
          cudaMemcpyAsync(st.device_in[k][1], st.pinned[k][1], count * g.weight_bytes, cudaMemcpyHostToDevice, stream));
    }
    packed.width = count;
    packed.pitch = count * g.item_bytes();
    Input piece;
    piece.samples = st.device_in[k][0];
    piece.weights = weighted ? st.device_in[k][1] : nullptr;
    cuda_run(plan, packed, piece, state.out, /*accumulate=*/!first, state.workspace, state.workspace_bytes, stream);
    first = false;
    LEVELHIST_CUDA_CHECK(cudaEventRecord(st.done[k], stream));
  }
  std::vector<unsigned char> result(out_bytes);
  LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(result.data(), state.out, out_bytes, cudaMemcpyDeviceToHost, st.stream));
  LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(st.stream));
  const std::uint64_t values = plan.request.output_slots();
  if (weighted) {
    auto* out = static_cast<double*>(host_out);
    const auto* got = reinterpret_cast<const double*>(result.data());
    for (std::uint64_t i = 0; i < values; ++i) out[i] += got[i];
  } else {
    auto* out = static_cast<std::uint64_t*>(host_out);
    const auto* got = reinterpret_cast<const std::uint64_t*>(result.data());
    for (std::uint64_t i = 0; i < values; ++i) out[i] += got[i];
  }
}

}  // namespace

// The host path: chunks of whole items, gathered (rows with a pitch packed)
// into pinned buffers, copied to the device and counted by the device path
// into the plan's device output; added into `host_out` at the end, so a call
// that fails adds nothing. After a failure the stream is drained (nothing of
// the call is left running), the workspace zero (cuda_run) and the plan's
// output rewritten by the next call's first chunk: the next call starts clean.
void cuda_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* host_out) {
  DeviceGuard guard(plan.device);
  if (plan.request.is_batch() || plan.request.is_nd() || needs_bound(plan))
    return cuda_fill_whole(plan, g, input, host_out);
  Staging& st = staging_of(plan.device);
  CudaPlanState& state = *plan.cuda;
  std::lock_guard<std::mutex> lock_staging(st.mutex);
  std::lock_guard<std::mutex> lock_plan(state.host_mutex);
  try {
    fill_through_staging(plan, g, input, host_out, st, state);
  } catch (...) {
    settle_after_error(st.stream);
    throw;
  }
}

// A Source on a CUDA plan: for now read into host memory a buffer at a time
// and counted by the host path.
std::uint64_t cuda_fill_source(const Plan::Impl& plan, Source& source, void* out) {
  bool cleared = false;
  return fill_source_in_chunks(plan, source, out, [&](const Geometry& g, const Input& input, bool accumulate) {
    if (!accumulate && !cleared) {
      std::memset(out, 0, plan.request.output_slots() * 8);
      cleared = true;
    }
    cuda_fill(plan, g, input, out);
  });
}

}  // namespace detail

// ---- the CUB-style wrappers of cuda.hpp --------------------------------------------

namespace cuda {
namespace {

Options options_for(const Strategy* strategy) {
  Options o;
  o.backend = BackendChoice::cuda;
  if (strategy) {
    if (strategy->backend != Backend::cuda)
      throw Error(ErrorKind::usage, std::string("strategy '") + strategy->name + "' is not a CUDA strategy",
                  "pass a CUDA strategy, or none for auto's choice", ErrorSubject::strategy);
    o.strategy = strategy->name;
  }
  return o;
}

Request request_of(const Problem& problem) {
  Request r;
  r.type = problem.type;
  r.binning = *problem.binning;
  if (!problem.layout.is_plain()) {
    r.layout.channels = problem.layout.channels;
    r.layout.active = problem.layout.active;
  }
  if (problem.weighted) r.weight_type = problem.weight_type;
  return r;
}

}  // namespace

std::size_t workspace_bytes(const Problem& problem, const Strategy* strategy) {
  return detail::cached_plan(request_of(problem), options_for(strategy))->workspace_bytes(problem.n);
}

void histogram(void* d_workspace, std::size_t ws_bytes, const void* d_samples, std::uint64_t n, SampleType type,
               const Binning& binning, std::uint64_t* d_slots, bool accumulate, void* stream, const Strategy* strategy) {
  detail::cached_plan(Request::counts(type, binning), options_for(strategy))
      ->run(Input::array(d_samples, n), d_slots, accumulate, d_workspace, ws_bytes, stream);
}

std::size_t workspace_bytes_pixels(SampleType type, const PixelLayout& layout, const Binning& binning,
                                   const Strategy* strategy) {
  auto plan = detail::cached_plan(Request::pixels(type, layout.channels, layout.active, binning), options_for(strategy));
  return plan->workspace_bytes(layout.width * layout.height * layout.channels);
}

void histogram_pixels(void* d_workspace, std::size_t ws_bytes, const void* d_pixels, SampleType type,
                      const PixelLayout& layout, const Binning& binning, std::uint64_t* d_slots, bool accumulate,
                      void* stream, const Strategy* strategy) {
  if (layout.width == 0)
    throw Error(ErrorKind::usage, "the image width is 0", "give PixelLayout::width (pixels per row) and height (rows)",
                ErrorSubject::layout);
  detail::cached_plan(Request::pixels(type, layout.channels, layout.active, binning), options_for(strategy))
      ->run(Input::image(d_pixels, layout.width, layout.height, layout.row_pitch), d_slots, accumulate, d_workspace,
            ws_bytes, stream);
}

std::size_t workspace_bytes_weighted(SampleType type, std::uint64_t n, SampleType weight_type, const Binning& binning,
                                     const Strategy* strategy) {
  return detail::cached_plan(Request::weighted(type, weight_type, binning), options_for(strategy))->workspace_bytes(n);
}

void histogram_weighted(void* d_workspace, std::size_t ws_bytes, const void* d_samples, std::uint64_t n,
                        SampleType type, const void* d_weights, SampleType weight_type, const Binning& binning,
                        double* d_sums, bool accumulate, void* stream, const Strategy* strategy) {
  detail::cached_plan(Request::weighted(type, weight_type, binning), options_for(strategy))
      ->run(Input::array(d_samples, n, d_weights), d_sums, accumulate, d_workspace, ws_bytes, stream);
}

}  // namespace cuda
}  // namespace levelhist
