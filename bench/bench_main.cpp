// PLACEHOLDER: the GPU benchmark (owned by the benchmark work).
#include <cstdio>
#include "bench.hpp"
namespace levelhist::bench {
int bench_main(const std::vector<std::string>& args) {
  for (const auto& a : args) if (a == "--cpu") return cpu_bench_main(args);
  std::fprintf(stderr, "levelhist bench: not built yet\n");
  return 1;
}
}  // namespace levelhist::bench
