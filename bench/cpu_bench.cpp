// PLACEHOLDER: the CPU benchmark (owned by the CPU work).
#include <cstdio>
#include "bench.hpp"
namespace levelhist::bench {
int cpu_bench_main(const std::vector<std::string>&) { std::fprintf(stderr, "levelhist bench --cpu: not built yet\n"); return 1; }
}  // namespace levelhist::bench
