// `levelhist bench`: the command-line entry of the benchmark. The GPU
// benchmark itself lives in the bench/*.cu files, compiled only with the CUDA
// backend; this file builds everywhere, so a CPU-only build still answers
// --help and says why it cannot run.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "bench.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "options.hpp"
#if LEVELHIST_HAVE_CUDA
#include "general_sections.hpp"
#include "gpu_sections.hpp"
#include "sort_sections.hpp"
#endif

namespace levelhist::bench {

int bench_main(const std::vector<std::string>& args) {
  // The CPU benchmark has its own options: hand everything over untouched.
  if (std::find(args.begin(), args.end(), "--cpu") != args.end()) return cpu_bench_main(args);
  try {
#if LEVELHIST_HAVE_CUDA
    // The general-histogram cases (u16, f32, pixels, weights, u32 keys) have their own runner.
    if (std::find(args.begin(), args.end(), "--general") != args.end()) return general_bench_main(args);
    // Counting sort and sparse histograms: sort_sections.hpp.
    if (std::find(args.begin(), args.end(), "--sort") != args.end()) return sort_bench_main(args);
#else
    for (const char* runner : {"--general", "--sort"})
      if (std::find(args.begin(), args.end(), runner) != args.end()) {
        std::fprintf(stderr, "levelhist bench %s: this build has no CUDA backend; rebuild where nvcc is installed\n",
                     runner);
        return 1;
      }
#endif
    BenchOptions options = parse_bench_options(args);
    if (options.help) {
      std::cout << bench_help();
      return 0;
    }
    if (cuda::device_count() == 0) {
      std::fprintf(stderr, "levelhist: no CUDA GPU (%s); run on a machine with an NVIDIA GPU or use --cpu\n",
                   cuda::describe_device().c_str());
      return 1;
    }
#if LEVELHIST_HAVE_CUDA
    return run_gpu_benchmark(options);
#else
    return 1;  // unreachable: a build without the CUDA backend reports no device above
#endif
  } catch (const Error& e) {
    std::fprintf(stderr, "levelhist bench: %s\n", e.what());
    return e.kind() == ErrorKind::usage ? 2 : 1;
  } catch (const std::exception& e) {  // out of memory, a file system error: still one line, not a crash
    std::fprintf(stderr, "levelhist bench: %s\n", e.what());
    return 1;
  }
}

}  // namespace levelhist::bench
