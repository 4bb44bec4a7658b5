// Internal: what a Plan holds, and the one run path of each backend.
//
//   Plan(request, options)            src/core/plan.cpp: validate, choose, bind
//     -> the CPU path                 src/core/plan.cpp: cpu_fill (strategy.run on host memory)
//     -> the CUDA paths               src/cuda/plan_cuda.cu: cuda_run (device memory, split into
//                                     pieces of at most 2^31 samples) and cuda_fill (host memory,
//                                     staged through pinned buffers, then cuda_run's pieces)
//
// Every request kind (plain arrays, pixels, weights) goes through the same
// path of its backend: a call is a Geometry (rows of items) plus pointers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "levelhist/plan.hpp"

namespace levelhist::detail {

// A call's data as rows of items: an item is one sample, or one pixel of
// `channels` samples. A plain array is one row of n items.
struct Geometry {
  std::uint32_t channels = 1;      // samples per item
  std::uint64_t width = 0;         // items per row
  std::uint64_t height = 0;        // rows
  std::uint64_t pitch = 0;         // bytes from one row's first sample to the next's
  std::size_t sample_bytes = 1;    // bytes of one sample
  std::size_t weight_bytes = 0;    // bytes of one item's weight (0: unweighted)
  unsigned axes = 1;               // N-d: coordinates per item (interleaved: channels == axes)
  bool separate_columns = false;   // N-d: one array per axis (Input::columns), channels == 1

  std::size_t item_bytes() const { return channels * sample_bytes; }
  std::uint64_t row_bytes() const { return width * item_bytes(); }
  std::uint64_t items() const { return width * height; }
  std::uint64_t samples() const { return items() * channels; }
  // Rows follow each other without gaps: the whole call is one long row.
  bool packed() const { return height <= 1 || pitch == row_bytes(); }
};

// The geometry of `input` for `request`; throws Error(usage) for an input that
// does not fit the request (a frame on a plain request, weights missing...).
Geometry geometry_of(const Request& request, const Input& input);

// Backend state a CUDA plan owns (device memory with the edges and the
// prepared data; the host path's workspace and output); src/cuda/plan_cuda.cu.
struct CudaPlanState;
struct CudaPlanStateDeleter {
  void operator()(CudaPlanState* state) const noexcept;
};

}  // namespace levelhist::detail

namespace levelhist {

struct Plan::Impl {
  Request request;
  Options options;
  const Strategy* strategy = nullptr;
  Backend backend = Backend::cpu;
  int device = -1;
  // The problem the strategy accepted (binning points into request); n is
  // set per call for workspace sizes.
  Problem problem{};
  // Every RunArgs field a call shares: type, binning, indexer (edges where the
  // strategy runs), threads, layout's channels and active, weight type, prepared.
  RunArgs base{};
  // What the strategy's prepare() wrote (CPU plans use it from here).
  std::vector<unsigned char> prepared;
  std::unique_ptr<detail::CudaPlanState, detail::CudaPlanStateDeleter> cuda;
  // Automatic CUDA plans: the CPU plan of the same request that shares host
  // calls (src/core/hybrid.cpp).
  std::unique_ptr<Impl> cpu_partner;
  // What the last host call gave each backend (Plan::last_host_split).
  mutable std::mutex split_mutex;
  mutable HostSplit last_split;
  void record_split(std::uint64_t cpu_items, std::uint64_t cuda_items) const {
    std::lock_guard<std::mutex> lock(split_mutex);
    last_split = HostSplit{cpu_items, cuda_items};
  }
};

}  // namespace levelhist

namespace levelhist::detail {

// The CUDA backend of a plan (src/cuda/plan_cuda.cu; src/core/no_cuda.cpp
// in builds without it).
void cuda_bind(Plan::Impl& plan);  // device, edges and prepared data on the device
std::size_t cuda_workspace_bytes(const Plan::Impl& plan, std::uint64_t max_samples);
void cuda_run(const Plan::Impl& plan, const Geometry& g, const Input& input, void* d_out, bool accumulate,
              void* d_workspace, std::size_t workspace_bytes, void* stream);
// Host memory in, host slots out (added to).
void cuda_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* host_out);

// The CPU path (src/core/plan.cpp): host memory in, host slots out (added to
// when `accumulate`).
void cpu_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* out, bool accumulate);
// The same with `threads` for the strategy instead of the plan's
// (Options::threads): 1 where the caller already runs one call per thread.
void cpu_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* out, bool accumulate,
              unsigned threads);

// Plan::fill from a Source, plain samples or packed pixels: read to the end,
// counted into `out` (output_slots() values, overwritten); returns the bytes
// read. Each backend reads sources its own way: cpu_fill_source in
// src/cpu/source_fill.cpp, cuda_fill_source in src/cuda/plan_cuda.cu.
std::uint64_t cpu_fill_source(const Plan::Impl& plan, Source& source, void* out);
// The bytes of one of cpu_fill_source's buffers for `request` (a whole number
// of its samples or pixels): where a source's reads and counts are cut.
std::size_t cpu_source_buffer_bytes(const Request& request);
std::uint64_t cuda_fill_source(const Plan::Impl& plan, Source& source, void* out);
// The plain way any backend can take (src/core/source.cpp): whole items read
// into one buffer, `count`ed a buffer at a time (accumulate false the first time).
using CountItems = std::function<void(const Geometry& g, const Input& input, bool accumulate)>;
std::uint64_t fill_source_in_chunks(const Plan::Impl& plan, Source& source, void* out, const CountItems& count);
// The error of a source whose `total` bytes end inside a sample or pixel
// (every backend's source path says it the same way).
[[noreturn]] void throw_partial_item(const Request& request, const Source& source, std::uint64_t total);
// Items (packed calls) or rows (rows with a pitch) [begin, end) of a call as
// an Input of its own: a share of the call for another backend or device.
// part_units: the call's items when packed, else its rows.
Input part_of(const Request& request, const Geometry& g, const Input& input, std::uint64_t begin, std::uint64_t end);
inline std::uint64_t part_units(const Geometry& g) { return g.packed() ? g.items() : g.height; }
// Whether [p, p + bytes) is page-locked host memory (cudaMallocHost,
// cudaHostAlloc, cudaHostRegister), which the host path copies from without
// staging; false in a build without CUDA.
bool host_memory_is_pinned(const void* p, std::size_t bytes);
// The threads that copy pageable host memory into the host path's pinned
// buffers (LEVELHIST_STAGING_THREADS, by default the cores, at most 8); 0 in a
// build without CUDA.
unsigned host_path_staging_threads();
// Frees the host path's staging buffers of `device` (by default two pinned
// chunks of 16 MiB per staging thread and four device chunks, twice that with
// weights; made again by the next call that needs them). Waits for a call in
// progress.
void release_host_path_staging(int device);
// Test hook (tests/test_gpu_faults.cpp): the `pieces`-th piece the CUDA device
// path counts from now on, in any plan, fails the way a kernel launch can
// (Error(cuda), "too many resources requested for launch") after its strategy
// ran, leaving the workspace dirty as a strategy that fails between its
// kernels would. Once; 0 disarms. Both do nothing in a build without CUDA.
void inject_cuda_fault_after(unsigned pieces);

// Makes CUDA device `device` current for a scope (nothing for -1, or in a
// build without CUDA), so that a strategy is chosen for the device a plan will
// run on; throws Error(usage) for a device that does not exist.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
};

// A plan for (request, options) from a small per-process cache: the
// convenience functions of levelhist.hpp and cuda.hpp resolve through it.
std::shared_ptr<const Plan> cached_plan(const Request& request, const Options& options);

// The request kind's strategy-facing problem.
Problem problem_of(const Request& request, std::uint64_t n);

// A call's batch as strategies see it (strategy.hpp BatchArgs): the tile
// sizes from its frame, its offsets (where they are: host or device memory).
BatchArgs batch_of(const Request& request, const Geometry& g, const Input& input);
// Host entry points: throws Error(input) unless the segments + 1 offsets are
// non-decreasing and at most n.
void check_offsets(const std::uint64_t* offsets, std::uint64_t segments, std::uint64_t n);
// Sets the columns and the stride of an N-d call (strategy.hpp AxesArgs).
void set_columns(AxesArgs& axes, const Geometry& g, const Input& input);
// The largest finite |weight| of n weights of `type` in host memory (0 when none).
double weight_bound(SampleType type, const void* weights, std::uint64_t n);

}  // namespace levelhist::detail
