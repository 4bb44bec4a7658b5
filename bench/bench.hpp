// levelhist bench: the benchmark behind `levelhist bench`.
#pragma once
#include <exception>
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

}  // namespace levelhist::bench
