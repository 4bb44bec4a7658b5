// levelhist: a Request resolved once, for many calls.
//
//   levelhist::Plan plan(levelhist::Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)));
//   levelhist::Histogram h(plan.request().binning);
//   for (const Frame& f : frames) plan.fill(h, Input::array(f.data(), f.size()));   // adds
//
// Making a plan validates the request, chooses the backend and the strategy
// (Options; `auto` reads the selection table), binds the plan to a device and
// puts what the strategy derives from the request (edges, lookup tables) where
// it runs. Each call is then only the counting. A plan is not copyable; it is
// safe to call from several threads at once (host calls on one plan take turns).
//
// Host entry points (fill) take host memory and work on every backend: a CUDA
// plan stages the data through pinned buffers. Device entry points (run) take
// device memory and a stream, and run asynchronously, CUB-style: ask
// workspace_bytes() once, allocate and zero that much device memory once, and
// pass it to every call; each call leaves it zero again.
//
// A call that throws leaves the plan usable: a CUDA plan's fill adds nothing
// to the histograms (the counts arrive when the whole call has counted); run
// has queued the clearing of the workspace on its stream, so the workspace
// serves the next call. Out of memory (host or device) is
// Error(resource); once memory is free, the same plan counts. Only an error
// that loses the CUDA context (an illegal address) ends the device's use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "levelhist/histogram.hpp"
#include "levelhist/request.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist {

class Source;  // levelhist/source.hpp

enum class BackendChoice : std::uint8_t { automatic, cpu, cuda };

struct Options {
  std::string strategy = "auto";                     // a strategy's name, or "auto"
  BackendChoice backend = BackendChoice::automatic;  // automatic: CUDA when a GPU is present and can take it
  unsigned threads = 0;                              // CPU worker threads; 0 = all cores
  int device = -1;                                   // CUDA device; -1 = the current device when the plan is made
  // Several CUDA devices for host memory: each host call (fill) is shared
  // among them, each with its own staging buffers and streams, and their
  // partial histograms are added exactly. The plan is bound to the first
  // (device(), run() and workspace_bytes() use it); `device` must be -1 or
  // the first. Empty: `device` alone. A CPU plan ignores it.
  std::vector<int> devices = {};
};

// What a plan's last host call (fill) gave each backend, in items (samples,
// pixels, points; rows' items for rows with a pitch).
struct HostSplit {
  std::uint64_t cpu_items = 0;
  std::uint64_t cuda_items = 0;
};

class Plan {
 public:
  // Resolves `request`. Throws Error(usage) for a bad request or options,
  // Error(unsupported) when the asked strategy or backend cannot take it,
  // Error(cuda)/Error(resource) when the device cannot hold the plan's data.
  explicit Plan(Request request, const Options& options = {});
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  const Request& request() const;
  const Options& options() const;
  const Strategy& strategy() const;
  Backend backend() const;
  int device() const;  // the CUDA device the plan is bound to; -1 for the CPU
  // A plan made with the automatic backend and strategy that runs on CUDA also
  // has a CPU plan of the same request, and shares each host call of plain
  // samples or pixels (counts) between the two, run at once, by the rates each
  // side reached in earlier calls; small calls go to the CPU alone
  // (docs/ARCHITECTURE.md, "CPU and GPU together"). Options::backend cpu or
  // cuda, or a named strategy, asks for one side only.
  bool shares_host_calls() const;
  // Which backend(s) counted the last host call of this plan, and how much.
  HostSplit last_host_split() const;

  // ---- host memory: adds into the histograms -----------------------------------
  // `hists`: one per histogram of the request (request().histograms()), each with
  // the request's binning. Plain arrays pass Input::array(samples, n); pixels
  // Input::image(pixels, width, height, row_pitch).
  void fill(std::span<Histogram> hists, const Input& input) const;
  void fill(Histogram& hist, const Input& input) const { fill(std::span<Histogram>(&hist, 1), input); }
  // Batches: one histogram per segment or tile (request().histograms()).
  // Weighted requests: sums of the weights (Input::weights); with
  // weight_squares, the sums of every histogram then their sums of squares
  // (2 x request().histograms() of them).
  void fill(std::span<WeightedHistogram> hists, const Input& input) const;
  void fill(WeightedHistogram& hist, const Input& input) const { fill(std::span<WeightedHistogram>(&hist, 1), input); }
  // N-d requests (Request::joint): the histogram of the axes.
  void fill(HistogramNd& hist, const Input& input) const;
  // Into raw host slots: request().output_slots() values (std::uint64_t counts,
  // or double sums for weighted requests), added to unless `accumulate` is false.
  void fill_slots(void* slots, const Input& input, bool accumulate = true) const;

  // ---- a Source (levelhist/source.hpp): read to its end, counted as it comes ------
  // Plain and pixel requests (pixels packed, channels samples each). The counts
  // are added once the whole source is counted: a read error, or data that
  // ends inside a sample or pixel (Error(input)), adds nothing. Returns the
  // bytes read.
  std::uint64_t fill(std::span<Histogram> hists, Source& source) const;
  std::uint64_t fill(Histogram& hist, Source& source) const { return fill(std::span<Histogram>(&hist, 1), source); }
  std::uint64_t fill_slots(void* slots, Source& source, bool accumulate = true) const;

  // ---- device memory (CUDA plans) -------------------------------------------------
  // Workspace bytes for calls of up to `max_samples` samples (any n for most
  // strategies; a few need more for larger calls).
  std::size_t workspace_bytes(std::uint64_t max_samples) const;
  // Counts the device data of `input` into `d_out` (request().output_slots()
  // values in device memory: std::uint64_t counts, or double sums), clearing it
  // first unless `accumulate`; asynchronous on `stream` (a cudaStream_t; null:
  // the legacy default stream). `d_workspace`: workspace_bytes(n) bytes, zero.
  void run(const Input& input, void* d_out, bool accumulate, void* d_workspace, std::size_t workspace_bytes,
           void* stream = nullptr) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace levelhist
