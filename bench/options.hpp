// levelhist bench: the command line of the GPU benchmark.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace levelhist::bench {

enum class OutputFormat { markdown, csv, json };

// The sections, in the order they run and print (the headline last, so the
// tail of a long log carries it).
inline const std::vector<std::string> kSectionNames = {"sizes", "distinct", "images", "latency", "auto", "headline"};

struct BenchOptions {
  std::vector<std::string> sections = kSectionNames;
  std::vector<std::string> strategies;  // CUDA strategy names; empty = every one in the registry
  bool quick = false;
  int reps = 15;               // timed samples per case (median taken)
  int device = 0;
  OutputFormat format = OutputFormat::markdown;
  std::string plot_dir;        // --plot DIR: SVG figures
  std::string out_dir;         // --out DIR: bench.md, bench.csv and bench.json
  std::string data_dir;        // --data DIR: the PGM images
  double case_seconds = 10.0;     // at most this long timing one strategy on one case (fewer reps beyond)
  double section_seconds = 8.0;   // one strategy's time in one section; beyond it, slow cases get the fewest reps
  std::uint64_t seed = 20121114;
  bool quiet = false;          // no progress lines on stderr
  bool help = false;
};

// The most timed samples per case (--reps) and runs per method (--cpu --runs).
inline constexpr std::uint64_t kMaxReps = 1000;

// Parses the arguments after `levelhist bench`. Throws the CLI's errors
// ("<what>; <fix>"): Error(usage) for an unknown option or name, a missing
// value; Error(input) for a value out of its range (--reps 1..1000, --device
// 0..1023, seconds finite and positive, --section-seconds 0 or more).
BenchOptions parse_bench_options(const std::vector<std::string>& args);
std::string bench_help();

// levelhist bench --link (link_bench.hpp): host data to the GPU.
struct LinkOptions {
  std::size_t bytes = std::size_t{1} << 30;  // --mib N: the data, 1..65536 MiB
  int reps = 5;                              // --reps N: timed runs per row (median), 1..1000
  // --chunks-kib A,B,..: staging chunk sizes the pageable rows sweep (64 KiB .. 1 GiB)
  std::vector<std::size_t> chunks = {std::size_t{4} << 20, std::size_t{16} << 20, std::size_t{64} << 20};
  bool multi = false;        // --devices all|LIST: the rows of several GPUs
  std::vector<int> devices;  // empty with multi: every device
  std::string cli;           // --cli PATH: the levelhist program (default: next to levelhist-bench)
  bool skip_cli = false;     // --no-cli
  bool devices_only = false; // --devices-only: only the rows of several GPUs
  bool help = false;
};
// Errors as parse_bench_options: usage for an unknown option or a missing
// value, input for a value out of its range.
LinkOptions parse_link_options(const std::vector<std::string>& args);
std::string link_help();

// The runners' own name lists (`--general --cases`, `--shapes --sections`):
// takes every `option LIST` and `option=LIST` out of `args` and returns the
// names of the last one, each checked against `known` (a usage error names
// an unknown one and `help_fix`); `known` itself when the option is absent.
std::vector<std::string> take_name_list(std::vector<std::string>& args, const std::string& option,
                                        const std::vector<std::string>& known, const std::string& help_fix);

}  // namespace levelhist::bench
