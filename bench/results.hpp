// levelhist bench: what a benchmark run measured. Plain data, no CUDA: the
// GPU harness fills it, report.cpp prints it as markdown, CSV, JSON and SVG.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace levelhist::bench {

// The measured device, as cudaGetDeviceProperties and the attributes report it.
struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t memory_bytes = 0;
  int sm_clock_mhz = 0;      // 0 when the driver does not say
  int memory_clock_mhz = 0;  // 0 when the driver does not say
  int memory_bus_bits = 0;
  int runtime_version = 0;   // e.g. 13000
  int driver_version = 0;
  // Theoretical DRAM bandwidth (2 transfers per memory clock over the bus), or 0 if unknown.
  double peak_dram_gbps() const;
  std::string describe() const;  // one line
};

// The timing of one strategy on one case: statistics over timed samples, each
// the events-measured time of `calls_per_sample` back-to-back calls divided by it.
struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int reps = 0;              // timed samples
  int calls_per_sample = 1;  // back-to-back calls per sample
  bool fewer_reps = false;   // fewer samples than asked: the case was too slow for its time cap
};

// How a section's x axis reads.
enum class XKind {
  samples,   // n, a power of two: "2^20"
  count,     // a plain count: the number of distinct values
  side,      // an image's side: "1024^2"
  none,      // a table by dataset (the headline)
};

// What a section's table cells show.
enum class Metric {
  gbps,          // input GB/s (most sections)
  microseconds,  // median time per call, back to back (the small-input latency section)
  auto_choice,   // auto's choice next to the measured best, one row per case (--auto)
};

struct SectionInfo {
  std::string name;     // "sizes": what --section and the CSV call it
  std::string title;    // a heading
  std::string x_label;  // axis and column name
  XKind x_kind = XKind::none;
  Metric metric = Metric::gbps;
};

// The special strategy name of the streaming-read limit.
inline constexpr const char* kLimitName = "limit";
// The same read as a programmatic dependent launch (the GPU sections):
// a second limit, never a candidate for "best".
inline constexpr const char* kDependentLimitName = "limit_dependent";
inline bool is_limit(const std::string& strategy) {
  return strategy == kLimitName || strategy == kDependentLimitName;
}
// The baseline strategy every ratio refers to.
inline constexpr const char* kBaselineName = "cub";

struct Measurement {
  std::string section;
  std::string series;   // one curve / sub-table of the section: "uniform", "coins.pgm"
  double x = 0;         // the section's sweep parameter (n, distinct values, side)
  std::string dataset;  // the input: "uniform", "4 distinct", "coins.pgm"
  std::string problem;  // "u8, 256 even bins over [0, 256)"
  std::uint64_t n = 0;
  std::uint64_t bytes = 0;
  int input_buffers = 1;  // copies the calls rotate among (more than 1 when the input fits in L2)
  std::string strategy;   // a registry name, or kLimitName
  bool ok = true;         // the result equalled the CPU's (the limit has no result and is always ok)
  std::string note;       // what went wrong, or what is special about the figure
  std::optional<Timing> timing;  // empty when the strategy failed before it could be timed
  std::string auto_choice;       // the CUDA strategy `auto` picks for this case's problem ("" if none)

  bool timed_ok() const { return ok && timing.has_value(); }
  double gbps() const;  // input bytes / median time; requires timing
};

struct StrategyInfo {
  std::string name;
  std::string summary;
};

struct Results {
  DeviceInfo device;
  std::vector<std::string> settings;  // lines: how it was timed
  std::vector<StrategyInfo> strategies;
  std::vector<SectionInfo> sections;
  std::vector<Measurement> rows;
  std::vector<std::string> failures;  // one line per wrong or crashed strategy run
  double wall_seconds = 0;

  const SectionInfo* section(const std::string& name) const;
  // The measurement of `strategy` on the same case as `m` (same section, dataset and n).
  const Measurement* sibling(const Measurement& m, const std::string& strategy) const;
  // m's throughput over the limit's, or over cub's, on the same case; empty when either is missing or failed.
  std::optional<double> fraction_of_limit(const Measurement& m) const;
  std::optional<double> ratio_to_baseline(const Measurement& m) const;
};

}  // namespace levelhist::bench
