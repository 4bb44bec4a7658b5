// levelhist bench: the benchmark behind `levelhist bench`.
#pragma once
#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace levelhist::bench {

// `levelhist bench [options]`: the GPU benchmark (bench_main.cpp), or the CPU
// benchmark with --cpu (cpu_bench.cpp). Returns the process exit status.
int bench_main(const std::vector<std::string>& args);
int cpu_bench_main(const std::vector<std::string>& args);

// Prints `message` as every levelhist error is printed: one line
// "levelhist: <what>; <fix>" on stderr (`fix` added when the message has none).
void print_error(const std::string& message, const std::string& fix);
// print_error for a caught exception; returns the exit status: 2 for a usage
// error, 1 for anything else. `help` is the command whose --help says more.
int report_error(const std::exception& e, const std::string& help);

// The median of `v` (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct BenchOptions;
// The start of a GPU mode of the benchmark (`levelhist bench --sort`, ...):
// parses `args`, less the mode's own `flag`, into `o`; prints the help
// (`usage`, then the options every mode takes), or says that there is no GPU.
// Returns the exit status where the mode stops there (0 after the help, 1
// without a GPU), nothing where it runs.
std::optional<int> begin_gpu_mode(const std::vector<std::string>& args, const std::string& flag,
                                  const std::string& usage, BenchOptions& o);

}  // namespace levelhist::bench
