// levelhist bench: the benchmark behind `levelhist bench`.
#pragma once
#include <string>
#include <vector>

namespace levelhist::bench {

// `levelhist bench [options]`: the GPU benchmark (bench_main.cpp), or the CPU
// benchmark with --cpu (cpu_bench.cpp). Returns the process exit status.
int bench_main(const std::vector<std::string>& args);
int cpu_bench_main(const std::vector<std::string>& args);

}  // namespace levelhist::bench
