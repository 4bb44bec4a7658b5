// levelhist bench: the GPU harness. One GpuBench owns the device state of a
// run (stream, timer, input buffers, one workspace per strategy) and turns a
// case (an input, a binning, n) into measurements of the streaming-read limit
// and of every selected CUDA strategy that supports the case, each checked
// against the CPU before it is timed.
//
// A section is a small function that makes inputs and hands cases to the
// harness (gpu_sections.cu); strategies come from the registry, never a list.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "datasets.hpp"
#include "levelhist/binning.hpp"
#include "levelhist/histogram.hpp"
#include "options.hpp"
#include "results.hpp"

namespace levelhist::bench {

// Where a case's measurements go in the report.
struct CaseLabel {
  std::string section;  // SectionInfo::name
  std::string series;   // one curve / sub-table
  double x = 0;         // the section's sweep parameter
  std::string dataset;  // Dataset::name
};

class GpuBench {
 public:
  // Selects options.device, reads its properties, creates the stream and picks
  // the strategies (options.strategies, or every CUDA one; cub always). Throws
  // Error(usage) for an unknown or non-CUDA strategy name or a bad device.
  explicit GpuBench(const BenchOptions& options);
  ~GpuBench();
  GpuBench(const GpuBench&) = delete;
  GpuBench& operator=(const GpuBench&) = delete;

  void begin_section(const SectionInfo& section);

  // Copies `input` to the device; later run_case calls count prefixes of it.
  void upload(const HostSamples& input);
  // Measures the limit and each selected strategy that supports (type, binning,
  // n) on the first n samples of the uploaded input. A strategy whose slots
  // differ from `expected` (before or after timing) or that throws is recorded
  // as failed; a device left unusable throws Error(cuda).
  void run_case(const CaseLabel& label, std::uint64_t n, const Binning& binning, const Histogram& expected);
  // Records under `label` the measurements an earlier section took of the same
  // dataset, sample type, binning and n, instead of measuring again; false when there are none.
  bool reuse_case(const CaseLabel& label, SampleType type, std::uint64_t n, const Binning& binning);

  const Results& results() const;
  Results& results();
  bool any_failure() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace levelhist::bench
