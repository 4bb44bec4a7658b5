// The CUDA backend of a Plan (src/core/plan_impl.hpp): binding a plan to its
// device, the device path (device memory in, split into pieces a strategy can
// take) and the host path (host memory staged through pinned buffers, then the
// device path on each packed chunk). Every request kind takes these same two
// paths; the CUB-style wrappers of cuda.hpp are at the end.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/env_knob.hpp"
#include "core/plan_impl.hpp"
#include "cpu/cpu_parallel_fork_join.hpp"
#include "cuda/cuda_common.cuh"
#include "cuda/general_common.cuh"
#include "cuda/weight_bound.cuh"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "levelhist/levelhist.hpp"
#include "levelhist/source.hpp"

namespace levelhist {
namespace detail {
namespace {

using cuda_detail::DeviceGuard;

// A strategy sees at most this many samples per run() call (RunArgs), so its
// 32-bit per-block counts cannot overflow.
constexpr std::uint64_t kMaxSamplesPerCall = std::uint64_t{1} << 31;

std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// ---- the host path's staging, one set per device ----------------------------------

// The host path's knobs (core/env_knob.hpp): the bytes of one chunk (each
// staging buffer holds one) and the threads that stage pageable memory or read
// a source.
using ::levelhist::detail::env_knob;

// LEVELHIST_STAGING_CHUNK_BYTES: 64 KiB .. 1 GiB, a multiple of 256 bytes.
// 4 MiB by default: on an H100 host (16 cores, 1 GiB pageable, 8 threads)
// 4 MiB chunks staged at 45.5 GB/s, 16 MiB at 31.0 and 64 MiB at 26.6, the
// smaller chunks' memcpy staying in the cores' caches (docs/BENCHMARKS.md).
// Wide histograms get larger chunks: each chunk is one run of the strategy,
// whose fixed cost grows with the bins (a run of gpu_bucket_sort into 2^24
// bins costs about a millisecond however few its keys): half the result's
// bytes, at most 64 MiB.
std::size_t staging_chunk_bytes(const Plan::Impl& plan) {
  const std::uint64_t result_bytes = plan.request.output_slots() * 8;
  const std::uint64_t fallback =
      std::clamp<std::uint64_t>(result_bytes / 2, std::uint64_t{4} << 20, std::uint64_t{64} << 20);
  return static_cast<std::size_t>(env_knob("LEVELHIST_STAGING_CHUNK_BYTES", fallback, std::uint64_t{64} << 10,
                                       std::uint64_t{1} << 30) / 256 * 256);
}
// LEVELHIST_STAGING_THREADS: 1 .. 64; by default the cores, at most 8 (eight
// threads of memcpy or pread already outrun the PCIe copy).
unsigned staging_threads() {
  return static_cast<unsigned>(
      env_knob("LEVELHIST_STAGING_THREADS", std::min(8u, cpu_parallel_detail::hardware_cores()), 1, 64));
}

// Device buffers in the ring: the copy of one chunk, the count of another and
// one of each waiting keep the copy engine and the SMs busy.
constexpr unsigned kDeviceSlots = 4;

// A pinned host buffer (samples, weights) that one staging thread fills, and
// the event recorded after the copy that reads it: the thread waits for it
// before filling the buffer again.
struct PinnedSlot {
  unsigned char* host[2] = {};  // [0 samples, 1 weights]
  cudaEvent_t copied = nullptr;
};

// A device buffer (samples, weights) of the ring: `filled` is recorded on the
// copy stream once a chunk is in it (its count waits for that), `free` on the
// count stream once it is counted (the next copy into it waits for that).
struct DeviceSlot {
  unsigned char* device[2] = {};
  cudaEvent_t filled = nullptr;
  cudaEvent_t free = nullptr;
};

// Events order work on the device; `host_waits`: a host thread also waits
// for this one, and sleeps while it does (blocking sync) instead of spinning
// on a core that the other staging threads, or a CPU plan counting beside
// the GPU, could use. A copy takes far longer than the wake-up.
cudaEvent_t make_event(bool host_waits) {
  cudaEvent_t e = nullptr;
  LEVELHIST_CUDA_CHECK(
      cudaEventCreateWithFlags(&e, cudaEventDisableTiming | (host_waits ? cudaEventBlockingSync : 0u)));
  return e;
}

// The host path's buffers and streams on one device. Copies run on one
// stream and counts on another, so that the copy of chunk k+1 overlaps the
// count of chunk k; the events of the slots order them. Made on first use and
// kept: allocating pinned memory costs milliseconds, far more than counting a
// few megabytes.
struct Staging {
  std::mutex mutex;  // one host-path call at a time per device
  cudaStream_t copy_stream = nullptr;
  cudaStream_t count_stream = nullptr;
  std::size_t chunk_bytes = 0;  // of every buffer below
  std::vector<PinnedSlot> pinned;
  DeviceSlot device[kDeviceSlots];

  // Makes what a call needs and is missing: `pinned_slots` pinned buffers (0
  // for a call that copies from the caller's pinned memory), the device ring,
  // with weight buffers when `weights`. Each piece is made when it is missing,
  // so a call that ran out of memory half-way leaves what it made, and the
  // next call makes the rest. A new chunk size frees the old buffers first.
  void ensure(std::size_t chunk, unsigned pinned_slots, bool weights) {
    if (chunk != chunk_bytes) {
      release();
      chunk_bytes = chunk;
    }
    for (cudaStream_t* s : {&copy_stream, &count_stream})
      if (!*s) LEVELHIST_CUDA_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    const int buffers = weights ? 2 : 1;
    for (DeviceSlot& d : device) {
      if (!d.filled) d.filled = make_event(false);
      if (!d.free) d.free = make_event(false);
      for (int which = 0; which < buffers; ++which)
        if (!d.device[which])
          d.device[which] = static_cast<unsigned char*>(
              cuda_detail::device_alloc(chunk, "a staging buffer of the host path"));
    }
    if (pinned.size() < pinned_slots) pinned.resize(pinned_slots);
    for (unsigned k = 0; k < pinned_slots; ++k) {
      PinnedSlot& p = pinned[k];
      if (!p.copied) p.copied = make_event(true);
      for (int which = 0; which < buffers; ++which)
        if (!p.host[which])
          p.host[which] = static_cast<unsigned char*>(
              cuda_detail::pinned_alloc(chunk, "a staging buffer of the host path"));
    }
  }

  // Frees the buffers (the caller holds `mutex`); the next call makes them
  // again. The streams and the events stay: they hold next to no memory.
  void release() {
    drain();
    for (PinnedSlot& p : pinned)
      for (unsigned char*& h : p.host)
        if (h) cudaFreeHost(std::exchange(h, nullptr));
    for (DeviceSlot& d : device)
      for (unsigned char*& b : d.device)
        if (b) cudaFree(std::exchange(b, nullptr));
    cudaGetLastError();
  }

  // Waits for everything queued on both streams. Best effort: after a sticky
  // error (the context is lost) these calls fail too.
  void drain() {
    if (copy_stream) cudaStreamSynchronize(copy_stream);
    if (count_stream) cudaStreamSynchronize(count_stream);
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

// Copies host memory with `threads` threads: one thread's memcpy from a
// freshly mapped file (page faults included) runs at a few GB/s, far below
// the ~50 GB/s the PCIe copy that follows can take. fork_join runs the parts
// a thread cannot be started for on the calling thread, so running out of
// threads slows the copy down instead of failing it.
void parallel_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes, unsigned threads) {
  constexpr std::size_t kBytesPerThread = std::size_t{4} << 20;
  threads = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, threads), bytes / kBytesPerThread + 1));
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  cpu_parallel_detail::fork_join(threads, [&](unsigned t) {
    const std::size_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
    std::memcpy(dst + begin, src + begin, end - begin);
  });
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

unsigned host_path_staging_threads() { return staging_threads(); }

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
  unsigned char* plan_memory = nullptr;  // edges, then the strategy's prepared data, then the bound's guess
  // Deterministic sums: the largest |weight| of the last call, which the next
  // call of one piece rounds with while it finds its own (RunArgs::bound_guess).
  unsigned long long* bound_guess = nullptr;
  // The host path's workspace and output, made on its first call.
  std::mutex host_mutex;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  void* out = nullptr;
  unsigned char* result_host = nullptr;  // pinned: the host path's result, output_slots() * 8 bytes
  // Options::devices: a plan of the same request on each device after the
  // first, each with its own memory, staging and stream; host calls are
  // shared among this plan and them.
  std::vector<std::unique_ptr<Plan>> replicas;
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
  if (state->result_host) cudaFreeHost(state->result_host);
  if (previous >= 0 && previous != state->device) cudaSetDevice(previous);
  cudaGetLastError();
  delete state;
}

// Sums whose strategy rounds every weight alike (deterministic ones) need the
// call's largest |weight|: its word is the first bytes of the workspace
// (kBoundBytes), the strategy's own workspace follows. A call of several
// pieces finds it before any piece runs; a call of one piece lets the
// strategy find it while it counts, from the plan's guess (RunArgs::bound_guess).
bool needs_bound(const Plan::Impl& plan) {
  return plan.request.is_weighted() && (plan.strategy->capabilities & kCapabilityDeterministic) != 0;
}
constexpr std::size_t kBoundBytes = 256;

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
  const std::size_t guess_offset = edge_bytes + round_up(plan.prepared.size());
  const std::size_t total = guess_offset + (needs_bound(plan) ? sizeof(unsigned long long) : 0);
  if (total > 0) {
    state->plan_memory = static_cast<unsigned char*>(cuda_detail::device_alloc(total, "the plan's bin edges and tables"));
    if (needs_bound(plan)) {
      state->bound_guess = reinterpret_cast<unsigned long long*>(state->plan_memory + guess_offset);
      LEVELHIST_CUDA_CHECK(cudaMemset(state->bound_guess, 0, sizeof(unsigned long long)));
    }
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
  // The other devices of Options::devices (validated by the Plan): one plan each.
  for (std::size_t k = 1; k < plan.options.devices.size(); ++k) {
    Options one = plan.options;
    one.devices.clear();
    one.device = plan.options.devices[k];
    one.backend = BackendChoice::cuda;
    state->replicas.push_back(std::make_unique<Plan>(plan.request, one));
  }
  plan.cuda = std::move(state);
}

std::size_t cuda_workspace_bytes(const Plan::Impl& plan, std::uint64_t max_samples) {
  Problem per_call = plan.problem;
  per_call.n = std::min(max_samples, kMaxSamplesPerCall);
  DeviceGuard guard(plan.device);
  return round_up(plan.strategy->workspace_bytes ? plan.strategy->workspace_bytes(per_call) : 0) +
         (needs_bound(plan) ? kBoundBytes : 0);
}

namespace {

// The call's largest finite |weight| into *bound (zero on entry; bounds of
// weight_bound.cuh), before the pieces of a call too long for one run count:
// the weights are read once more here, 16-byte loads, four in flight a thread.
using namespace cuda_detail::bound;

constexpr int kBoundThreads = 256;

template <class W>
__global__ void __launch_bounds__(kBoundThreads) weight_bound_kernel(const unsigned char* weights, std::uint64_t n,
                                                                     unsigned long long* bound) {
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  fold_into<W>(range_bound<W>(weights, n, thread, std::uint64_t{gridDim.x} * blockDim.x), bound);
}

template <class W>
void launch_weight_bound(const unsigned char* weights, std::uint64_t n, unsigned long long* bound, cudaStream_t stream) {
  auto kernel = weight_bound_kernel<W>;
  const std::uint64_t per_block = std::uint64_t{kBoundThreads} * kRangeLoads * (16 / sizeof(W));
  const int resident = std::max(1, cuda_detail::resident_blocks(kernel, kBoundThreads));
  const auto blocks = static_cast<unsigned>(std::clamp<std::uint64_t>(n / per_block + 1, 1, resident));
  kernel<<<blocks, kBoundThreads, 0, stream>>>(weights, n, bound);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

void find_weight_bound(SampleType weight_type, const void* weights, std::uint64_t n, void* bound, cudaStream_t stream) {
  if (n == 0) return;
  auto* w = static_cast<const unsigned char*>(weights);
  auto* b = static_cast<unsigned long long*>(bound);
  if (weight_type == SampleType::f64) launch_weight_bound<double>(w, n, b, stream);
  else launch_weight_bound<float>(w, n, b, stream);
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
  const bool pixels = plan.request.is_pixels();
  const bool takes_rows = (plan.strategy->capabilities & kCapabilityPixels) != 0;
  // Packed rows are one long row: strategies then stream it as a plain array.
  const std::uint64_t width = g.packed() ? g.items() : g.width, height = g.packed() ? 1 : g.height;
  const std::uint64_t row_samples = width * g.channels;
  const bool rows_per_run = row_samples <= kMaxSamplesPerCall && (height == 1 || takes_rows);
  // Deterministic sums: every piece rounds with the whole call's bound, found
  // first where the call has several pieces, else by the strategy as it counts.
  bool bound_found_first = false;
  if (weighted && needs_bound(plan)) {
    if (workspace_bytes < kBoundBytes)
      throw Error(ErrorKind::usage, "the CUDA workspace is too small for deterministic sums",
                  "allocate Plan::workspace_bytes(n) bytes (zeroed once)", ErrorSubject::workspace);
    const bool one_run = rows_per_run && height <= kMaxSamplesPerCall / row_samples;
    args.deterministic = true;
    args.weight_bound = static_cast<double*>(d_workspace);
    if (one_run && plan.cuda->bound_guess && env_knob("LEVELHIST_EXACT_SPECULATE", 1, 0, 1) != 0) {
      args.bound_guess = plan.cuda->bound_guess;
    } else {
      find_weight_bound(*request.weight_type, input.weights, g.items(), d_workspace, static_cast<cudaStream_t>(stream));
      bound_found_first = true;
    }
    args.workspace = static_cast<unsigned char*>(d_workspace) + kBoundBytes;
    args.workspace_bytes = workspace_bytes - kBoundBytes;
  }
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
    if (rows_per_run) {
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
    // promise that every call finds it zero. Best effort, as in Staging::drain.
    if (d_workspace && workspace_bytes)
      cudaMemsetAsync(d_workspace, 0, workspace_bytes, static_cast<cudaStream_t>(stream));
    cudaGetLastError();
    throw;
  }
  if (bound_found_first)  // the workspace is left zero, as every call leaves it (the strategy clears its own find)
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

// The plan's workspace and device output for host calls whose pieces hold up
// to `piece_samples` samples (the caller holds state.host_mutex).
void ensure_host_call_memory(const Plan::Impl& plan, CudaPlanState& state, std::uint64_t piece_samples) {
  const std::size_t ws_bytes = std::max<std::size_t>(cuda_workspace_bytes(plan, piece_samples), 256);
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
  if (!state.out)
    state.out = cuda_detail::device_alloc(plan.request.output_slots() * 8, "the plan's device histograms for host memory");
}

// One host-path call on one device. Chunks of whole items, packed, go from
// pinned host memory into the device ring (copy stream) and are counted from
// there into the plan's device output (count stream): the copy of one chunk
// overlaps the count of the one before. Several staging threads may enqueue
// at once; the ring's events keep each device buffer's copy after the count
// that last read it, and each count after its copy.
class ChunkPipeline {
 public:
  ChunkPipeline(const Plan::Impl& plan, const Geometry& g, Staging& st, CudaPlanState& state)
      : plan_(plan), g_(g), st_(st), state_(state) {}

  // Items per chunk: a chunk's samples, and its weights, each fit one buffer.
  static std::uint64_t chunk_items(const Geometry& g, std::size_t chunk_bytes) {
    return std::max<std::uint64_t>(1, chunk_bytes / std::max<std::size_t>(g.item_bytes(), g.weight_bytes));
  }

  // Makes the buffers (`pinned_slots` staging buffers; 0 when the caller's
  // memory is pinned) and clears the plan's output: every chunk adds to it.
  void start(std::size_t chunk_bytes, unsigned pinned_slots) {
    st_.ensure(chunk_bytes, pinned_slots, g_.weight_bytes != 0);
    ensure_host_call_memory(plan_, state_, chunk_items(g_, chunk_bytes) * g_.channels);
    LEVELHIST_CUDA_CHECK(
        cudaMemsetAsync(state_.out, 0, plan_.request.output_slots() * 8, st_.count_stream));
  }

  // Queues the copy of `items` packed items at `samples` (and their weights)
  // from pinned host memory into the next device buffer, then their count.
  // `copied`, when given, is recorded once the copy has read the host memory,
  // so the caller knows when it may fill that memory again.
  void enqueue(const unsigned char* samples, const unsigned char* weights, std::uint64_t items, cudaEvent_t copied) {
    if (items == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceSlot& d = st_.device[next_slot_++ % kDeviceSlots];
    const cudaStream_t copy_stream = st_.copy_stream, count_stream = st_.count_stream;
    LEVELHIST_CUDA_CHECK(cudaStreamWaitEvent(copy_stream, d.free, 0));
    LEVELHIST_CUDA_CHECK(
        cudaMemcpyAsync(d.device[0], samples, items * g_.item_bytes(), cudaMemcpyHostToDevice, copy_stream));
    if (weights)
      LEVELHIST_CUDA_CHECK(
          cudaMemcpyAsync(d.device[1], weights, items * g_.weight_bytes, cudaMemcpyHostToDevice, copy_stream));
    if (copied) LEVELHIST_CUDA_CHECK(cudaEventRecord(copied, copy_stream));
    LEVELHIST_CUDA_CHECK(cudaEventRecord(d.filled, copy_stream));
    LEVELHIST_CUDA_CHECK(cudaStreamWaitEvent(count_stream, d.filled, 0));
    Geometry packed = g_;
    packed.width = items;
    packed.height = 1;
    packed.pitch = items * g_.item_bytes();
    Input piece;
    piece.samples = d.device[0];
    piece.weights = weights ? d.device[1] : nullptr;
    cuda_run(plan_, packed, piece, state_.out, /*accumulate=*/true, state_.workspace, state_.workspace_bytes,
             count_stream);
    LEVELHIST_CUDA_CHECK(cudaEventRecord(d.free, count_stream));
  }

  // Waits for every chunk and returns the counts (or sums), output_slots()
  // values of 8 bytes, in the plan's pinned result buffer (valid while the
  // plan's host lock is held). Pinned and kept: a 2^24-bin result is 128 MiB,
  // which a fresh pageable vector took ~80 ms to receive and zero (H100 host,
  // docs/BENCHMARKS.md); into pinned memory the copy runs at the link's rate.
  const unsigned char* finish_pinned() {
    const std::size_t bytes = plan_.request.output_slots() * 8;
    if (!state_.result_host) {
      void* p = nullptr;
      LEVELHIST_CUDA_CHECK(cudaMallocHost(&p, bytes));
      state_.result_host = static_cast<unsigned char*>(p);
    }
    LEVELHIST_CUDA_CHECK(
        cudaMemcpyAsync(state_.result_host, state_.out, bytes, cudaMemcpyDeviceToHost, st_.count_stream));
    LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(st_.count_stream));
    return state_.result_host;
  }
  // The same, as the caller's own copy.
  std::vector<unsigned char> finish() {
    const unsigned char* p = finish_pinned();
    return std::vector<unsigned char>(p, p + plan_.request.output_slots() * 8);
  }

 private:
  const Plan::Impl& plan_;
  const Geometry g_;
  Staging& st_;
  CudaPlanState& state_;
  std::mutex mutex_;
  unsigned next_slot_ = 0;
};

// Adds the output_slots() values (u64 counts, or double sums) of each result
// into `host_out`, in one pass over it. A 2^24-bin histogram is 128 MiB a
// result: the pass is split over the cores (one core adds about 5 GB/s).
void add_results(const Plan::Impl& plan, const std::vector<const unsigned char*>& results, void* host_out) {
  const std::uint64_t values = plan.request.output_slots();
  const unsigned parts = static_cast<unsigned>(
      std::clamp<std::uint64_t>(values * results.size() / (std::uint64_t{1} << 20), 1, staging_threads()));
  const bool weighted = plan.request.is_weighted();
  cpu_parallel_detail::fork_join(parts, [&](unsigned k) {
    const std::uint64_t begin = values * k / parts, end = values * (k + 1) / parts;
    for (const unsigned char* r : results) {
      if (weighted) {
        auto* out = static_cast<double*>(host_out);
        const auto* got = reinterpret_cast<const double*>(r);
        for (std::uint64_t i = begin; i < end; ++i) out[i] += got[i];
      } else {
        auto* out = static_cast<std::uint64_t*>(host_out);
        const auto* got = reinterpret_cast<const std::uint64_t*>(r);
        for (std::uint64_t i = begin; i < end; ++i) out[i] += got[i];
      }
    }
  });
}
void add_result(const Plan::Impl& plan, const std::vector<unsigned char>& result, void* host_out) {
  add_results(plan, {result.data()}, host_out);
}

// Runs `lane(index)` for lanes 0 .. lanes-1, lane 0 on the calling thread,
// each on the plan's device (the current device is per thread). The first
// lane to fail sets `stop`, so the others stop taking chunks; every lane is
// joined before the first error is rethrown.
template <class Lane>
void run_lanes(int device, unsigned lanes, std::atomic<bool>& stop, const Lane& lane) {
  cpu_parallel_detail::fork_join(lanes, [&](unsigned index) {
    try {
      DeviceGuard guard(device);
      lane(index);
    } catch (...) {
      stop.store(true, std::memory_order_relaxed);
      throw;
    }
  });
}

// The staging of pageable host memory: `lanes` threads, each with two pinned
// buffers of its own, take the call's chunks in turn; each gathers its chunk
// (rows with a pitch packed) into one buffer while the copy of its other one
// runs, and queues the chunk. Fewer chunks than threads: each lane copies with
// several threads.
void stage_host_memory(const Plan::Impl& plan, const Geometry& g, const Input& input, ChunkPipeline& pipeline,
                       Staging& st, std::uint64_t chunk_items, unsigned threads, unsigned lanes) {
  const std::uint64_t items = g.items();
  const std::uint64_t chunks = (items + chunk_items - 1) / chunk_items;
  const unsigned copy_threads = std::max(1u, threads / lanes);
  const auto* src = static_cast<const unsigned char*>(input.samples);
  const auto* wsrc = static_cast<const unsigned char*>(input.weights);
  std::atomic<std::uint64_t> next_chunk{0};
  std::atomic<bool> stop{false};
  run_lanes(plan.device, lanes, stop, [&](unsigned lane) {
    for (unsigned use = 0; !stop.load(std::memory_order_relaxed); ++use) {
      const std::uint64_t c = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) break;
      PinnedSlot& slot = st.pinned[2 * lane + use % 2];
      LEVELHIST_CUDA_CHECK(cudaEventSynchronize(slot.copied));  // its last copy has read it
      const std::uint64_t begin = c * chunk_items, count = std::min(chunk_items, items - begin);
      unsigned char* dst = slot.host[0];
      for (std::uint64_t item = begin; item < begin + count;) {
        const std::uint64_t row = item / g.width, x = item % g.width;
        const std::uint64_t run = g.packed() ? begin + count - item : std::min(g.width - x, begin + count - item);
        parallel_copy(dst, src + row * g.pitch + x * g.item_bytes(), run * g.item_bytes(), copy_threads);
        dst += run * g.item_bytes();
        item += run;
      }
      if (wsrc) parallel_copy(slot.host[1], wsrc + begin * g.weight_bytes, count * g.weight_bytes, copy_threads);
      pipeline.enqueue(slot.host[0], wsrc ? slot.host[1] : nullptr, count, slot.copied);
    }
  });
}

// Whether [p, p + bytes) is page-locked host memory (cudaMallocHost,
// cudaHostAlloc or cudaHostRegister): its first and last bytes are. A range
// that spans several registrations with a gap between them passes too; the
// copy is still right (the driver stages pageable memory itself), only slower.
bool pinned_range(const void* p, std::size_t bytes) {
  if (!p || bytes == 0) return false;
  for (const void* q : {p, static_cast<const void*>(static_cast<const unsigned char*>(p) + bytes - 1)}) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, q) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    if (a.type != cudaMemoryTypeHost) return false;
  }
  return true;
}

// One device's host-path call, with the staging and the plan's host state
// locked: from pinned memory the chunks are copied straight from it; anything
// else is staged.
void fill_on_device(const Plan::Impl& plan, const Geometry& g, const Input& input, void* host_out) {
  DeviceGuard guard(plan.device);
  Staging& st = staging_of(plan.device);
  CudaPlanState& state = *plan.cuda;
  std::lock_guard<std::mutex> lock_staging(st.mutex);
  std::lock_guard<std::mutex> lock_plan(state.host_mutex);
  try {
    const std::size_t chunk_bytes = staging_chunk_bytes(plan);
    const std::uint64_t chunk_items = ChunkPipeline::chunk_items(g, chunk_bytes);
    ChunkPipeline pipeline(plan, g, st, state);
    const bool weighted = g.weight_bytes != 0;
    const bool direct = g.packed() && pinned_range(input.samples, g.items() * g.item_bytes()) &&
                        (!weighted || pinned_range(input.weights, g.items() * g.weight_bytes));
    if (direct) {
      pipeline.start(chunk_bytes, 0);
      const auto* src = static_cast<const unsigned char*>(input.samples);
      const auto* wsrc = static_cast<const unsigned char*>(input.weights);
      for (std::uint64_t begin = 0; begin < g.items(); begin += chunk_items)
        pipeline.enqueue(src + begin * g.item_bytes(), wsrc ? wsrc + begin * g.weight_bytes : nullptr,
                         std::min(chunk_items, g.items() - begin), nullptr);
    } else {
      const std::uint64_t chunks = (g.items() + chunk_items - 1) / chunk_items;
      const unsigned threads = staging_threads();
      const unsigned lanes = static_cast<unsigned>(std::min<std::uint64_t>(threads, chunks));
      pipeline.start(chunk_bytes, 2 * lanes);  // two pinned buffers a lane
      stage_host_memory(plan, g, input, pipeline, st, chunk_items, threads, lanes);
    }
    add_results(plan, {pipeline.finish_pinned()}, host_out);
  } catch (...) {
    // Nothing of the call may still read a pinned buffer or write the plan's
    // output when the next call starts.
    st.drain();
    throw;
  }
}

// Options::devices: the call's items (rows, for rows with a pitch) shared
// equally among the plan's device and its replicas, each counted by its own
// staging and streams on a thread of its own, the partial results added once
// all are done (exact: integer counts; sums in double in an order that
// depends on the split, as the weighted histograms document).
void fill_on_devices(const Plan::Impl& plan, const Geometry& g, const Input& input, void* host_out) {
  const auto& replicas = plan.cuda->replicas;
  const std::uint64_t units = part_units(g);
  // A device joins when its share of the data is worth its partial result:
  // each one adds a copy of output_slots() values back to the host and their
  // addition (128 MiB for 2^24 bins), so a call of a few thousand keys into
  // 2^24 bins stays on one device. Shares of at least the larger of the
  // result and 32 MiB (LEVELHIST_DEVICE_SHARE_BYTES: 1 .. 2^40, the tests'
  // way to split small calls).
  const std::uint64_t out_bytes = plan.request.output_slots() * 8;
  const std::uint64_t share = env_knob("LEVELHIST_DEVICE_SHARE_BYTES", std::max<std::uint64_t>(out_bytes, 32u << 20), 1,
                                   std::uint64_t{1} << 40);
  const std::uint64_t in_bytes = g.items() * (g.item_bytes() + g.weight_bytes);
  const unsigned devices = static_cast<unsigned>(
      std::clamp<std::uint64_t>(std::min<std::uint64_t>(in_bytes / share, units), 1, replicas.size() + 1));
  if (devices == 1) return fill_on_device(plan, g, input, host_out);
  // Each device's counts (or sums): output_slots() values of 8 bytes, zero.
  std::vector<std::vector<unsigned char>> partial(devices, std::vector<unsigned char>(out_bytes));
  cpu_parallel_detail::fork_join(devices, [&](unsigned k) {
    const std::uint64_t begin = units * k / devices, end = units * (k + 1) / devices;
    if (begin == end) return;
    const Input part = part_of(plan.request, g, input, begin, end);
    if (k == 0) fill_on_device(plan, geometry_of(plan.request, part), part, partial[0].data());
    else replicas[k - 1]->fill_slots(partial[k].data(), part, /*accumulate=*/false);
  });
  std::vector<const unsigned char*> results;
  for (const auto& p : partial) results.push_back(p.data());
  add_results(plan, results, host_out);
}

}  // namespace

bool host_memory_is_pinned(const void* p, std::size_t bytes) { return pinned_range(p, bytes); }

// The host path: chunks of whole items, copied from the caller's pinned
// memory or gathered (rows with a pitch packed) into pinned buffers, copied
// to the device and counted by the device path into the plan's device output;
// added into `host_out` at the end, so a call that fails adds nothing. After a
// failure both streams are drained (nothing of the call is left running), the
// workspace is zero (cuda_run) and the plan's output is cleared by the next
// call: the next call starts clean.
void cuda_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* host_out) {
  DeviceGuard guard(plan.device);
  if (plan.request.is_batch() || plan.request.is_nd() || needs_bound(plan))
    return cuda_fill_whole(plan, g, input, host_out);
  if (g.items() == 0) return;
  if (!plan.cuda->replicas.empty()) return fill_on_devices(plan, g, input, host_out);
  fill_on_device(plan, g, input, host_out);
}

namespace {

// A byte range [begin, begin + bytes) of a positional source, as a source of
// its own: one device's share of a file.
class SourceRange : public Source {
 public:
  SourceRange(Source& whole, std::uint64_t begin, std::uint64_t bytes) : whole_(whole), begin_(begin), bytes_(bytes) {}
  std::string name() const override { return whole_.name(); }
  std::size_t read(void* dst, std::size_t bytes) override {
    const std::size_t got = read_at(dst, bytes, pos_);
    pos_ += got;
    return got;
  }
  std::optional<std::uint64_t> remaining() const override { return bytes_ - std::min(pos_, bytes_); }
  bool positional() const override { return true; }
  std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset) override {
    if (offset >= bytes_) return 0;
    return whole_.read_at(dst, static_cast<std::size_t>(std::min<std::uint64_t>(bytes, bytes_ - offset)), begin_ + offset);
  }

 private:
  Source& whole_;
  std::uint64_t begin_, bytes_, pos_ = 0;
};

// What one device's share of a source gave: its counts, the bytes read, and
// the bytes after its last whole item (not counted).
struct SourceShare {
  std::vector<unsigned char> result;
  std::uint64_t bytes = 0;
  std::uint64_t partial = 0;
};

// Reads a source straight into the pinned staging buffers and counts it on
// the plan's device. A positional source with a known length is read by
// several threads, each at the offsets of the chunks it takes and into its
// own two buffers; any other in order by the calling thread, which fills one
// buffer while the copy of the other runs. Does not call consumed().
SourceShare source_on_device(const Plan::Impl& plan, Source& source) {
  DeviceGuard guard(plan.device);
  const Request& r = plan.request;
  Geometry g;
  g.channels = r.layout.channels;
  g.sample_bytes = sample_size(r.type);
  Staging& st = staging_of(plan.device);
  CudaPlanState& state = *plan.cuda;
  std::lock_guard<std::mutex> lock_staging(st.mutex);
  std::lock_guard<std::mutex> lock_plan(state.host_mutex);
  SourceShare share;
  try {
    const std::size_t item = g.item_bytes();
    const std::size_t chunk_bytes = staging_chunk_bytes(plan);
    const std::uint64_t chunk_items = ChunkPipeline::chunk_items(g, chunk_bytes);
    const std::size_t chunk_read = chunk_items * item;  // whole items: only the end can cut one
    ChunkPipeline pipeline(plan, g, st, state);
    const std::optional<std::uint64_t> length = source.positional() ? source.remaining() : std::nullopt;
    if (length) {
      const std::uint64_t chunks = (*length + chunk_read - 1) / chunk_read;
      const unsigned lanes = static_cast<unsigned>(std::clamp<std::uint64_t>(chunks, 1, staging_threads()));
      pipeline.start(chunk_bytes, 2 * lanes);
      std::atomic<std::uint64_t> next_chunk{0}, bytes_read{0}, partial{0};
      std::atomic<bool> stop{false};
      run_lanes(plan.device, lanes, stop, [&](unsigned lane) {
        for (unsigned use = 0; !stop.load(std::memory_order_relaxed); ++use) {
          const std::uint64_t c = next_chunk.fetch_add(1, std::memory_order_relaxed);
          if (c >= chunks) break;
          PinnedSlot& slot = st.pinned[2 * lane + use % 2];
          LEVELHIST_CUDA_CHECK(cudaEventSynchronize(slot.copied));
          const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_read, *length - c * chunk_read));
          const std::size_t got = source.read_at(slot.host[0], want, c * chunk_read);
          bytes_read.fetch_add(got, std::memory_order_relaxed);
          partial.fetch_add(got % item, std::memory_order_relaxed);
          pipeline.enqueue(slot.host[0], nullptr, got / item, slot.copied);
        }
      });
      share.bytes = bytes_read.load();
      share.partial = partial.load();
    } else {
      pipeline.start(chunk_bytes, 2);
      for (unsigned use = 0;; ++use) {
        PinnedSlot& slot = st.pinned[use % 2];
        LEVELHIST_CUDA_CHECK(cudaEventSynchronize(slot.copied));
        std::size_t have = 0;
        bool end = false;
        while (have < chunk_read && !end) {
          const std::size_t got = source.read(slot.host[0] + have, chunk_read - have);
          end = got == 0;
          have += got;
        }
        share.bytes += have;
        pipeline.enqueue(slot.host[0], nullptr, have / item, slot.copied);
        if (end) {
          share.partial = have % item;
          break;
        }
      }
    }
    share.result = pipeline.finish();
  } catch (...) {
    st.drain();
    throw;
  }
  return share;
}

}  // namespace

// A Source on a CUDA plan: read into the pinned staging buffers (no copy in
// between), copied and counted as it comes; with Options::devices, a
// positional source's bytes are shared among the devices. Data that ends
// inside an item is an input error, and nothing is counted then.
std::uint64_t cuda_fill_source(const Plan::Impl& plan, Source& source, void* out) {
  const Request& r = plan.request;
  const std::size_t item = r.layout.channels * sample_size(r.type);
  const auto& replicas = plan.cuda->replicas;
  const std::optional<std::uint64_t> length = source.positional() ? source.remaining() : std::nullopt;
  std::vector<SourceShare> shares;
  if (replicas.empty() || !length) {
    shares.push_back(source_on_device(plan, source));
  } else {
    const unsigned devices = static_cast<unsigned>(replicas.size() + 1);
    const std::uint64_t items = *length / item;
    shares.resize(devices);
    cpu_parallel_detail::fork_join(devices, [&](unsigned k) {
      // Whole items each. The last range, which also holds the bytes after
      // the last whole item, is this plan's own (range devices - 1): its
      // source_on_device reports such bytes instead of throwing, so that the
      // error below names the whole source's length.
      const std::uint64_t j = (k + devices - 1) % devices;
      const std::uint64_t begin = items * j / devices * item;
      const std::uint64_t end = j + 1 == devices ? *length : items * (j + 1) / devices * item;
      SourceRange range(source, begin, end - begin);
      if (k == 0) {
        shares[0] = source_on_device(plan, range);
      } else {
        // The replica's own Source path reads the range; its counts come back as slots.
        std::vector<std::uint64_t> counts(r.output_slots(), 0);
        shares[k].bytes = replicas[k - 1]->fill_slots(counts.data(), range, /*accumulate=*/false);
        shares[k].result.resize(counts.size() * 8);
        std::memcpy(shares[k].result.data(), counts.data(), shares[k].result.size());
      }
    });
  }
  std::uint64_t total = 0, partial = 0;
  for (const SourceShare& s : shares) {
    total += s.bytes;
    partial += s.partial;
  }
  if (partial != 0 || total % item != 0) throw_partial_item(r, source, total);
  std::memset(out, 0, r.output_slots() * 8);
  for (const SourceShare& s : shares) add_result(plan, s.result, out);
  if (source.positional()) source.consumed(total);
  return total;
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
