// `levelhist bench`: the command-line entry of the benchmark. The GPU
// benchmark itself lives in the bench/*.cu files, compiled only with the CUDA
// backend; this file builds everywhere, so a CPU-only build still answers
// --help and says why it cannot run.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "bench.hpp"
#include "lab.hpp"
#include "link_bench.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "options.hpp"
#if LEVELHIST_HAVE_CUDA
#include "general_sections.hpp"
#include "gpu_sections.hpp"
#include "shape_sections.hpp"
#include "sort_sections.hpp"
#endif

namespace levelhist::bench {

void print_error(const std::string& message, const std::string& fix) {
  std::string line = "levelhist: ";
  // One line whatever the message holds (a system's or CUDA's text): control
  // characters escaped as the CLI's quote() does.
  for (char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      line += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      line += c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : escaped;
    }
  }
  if (message.find("; ") == std::string::npos) line += "; " + fix;
  line += '\n';
  std::fputs(line.c_str(), stderr);
}

int report_error(const std::exception& e, const std::string& help) {
  const auto* error = dynamic_cast<const Error*>(&e);
  print_error(e.what(), "see '" + help + "'");
  return error && error->kind() == ErrorKind::usage ? 2 : 1;
}

std::optional<int> begin_gpu_mode(const std::vector<std::string>& args, const std::string& flag,
                                  const std::string& usage, BenchOptions& o) {
  std::vector<std::string> rest;
  for (const std::string& a : args)
    if (a != flag) rest.push_back(a);
  o = parse_bench_options(rest);
  if (o.help) {
    std::cout << usage << bench_help();
    return 0;
  }
  if (cuda::device_count() == 0) {
    print_error("bench " + flag + ": no CUDA GPU (" + cuda::describe_device() + ")",
                "run it on a machine with an NVIDIA GPU");
    return 1;
  }
  return std::nullopt;
}

int bench_main(const std::vector<std::string>& args) {
  // The CPU benchmark has its own options: hand everything over untouched.
  if (std::find(args.begin(), args.end(), "--cpu") != args.end()) return cpu_bench_main(args);
  // Host data to the GPU (link_bench.hpp): its CPU rows run without a GPU too.
  if (std::find(args.begin(), args.end(), "--link") != args.end()) return link_bench_main(args);
  try {
#if LEVELHIST_HAVE_CUDA
    // The general-histogram cases (u16, f32, pixels, weights, u32 keys) have their own runner.
    if (std::find(args.begin(), args.end(), "--general") != args.end()) return general_bench_main(args);
    // Counting sort and sparse histograms: sort_sections.hpp.
    if (std::find(args.begin(), args.end(), "--sort") != args.end()) return sort_bench_main(args);
    // Batches, N-d histograms and deterministic sums: shape_sections.hpp.
    if (std::find(args.begin(), args.end(), "--shapes") != args.end()) return shape_bench_main(args);
#else
    for (const char* runner : {"--general", "--sort", "--shapes"})
      if (std::find(args.begin(), args.end(), runner) != args.end()) {
        print_error(std::string("bench ") + runner + " needs the CUDA backend, which this build does not have",
                    "rebuild where nvcc is installed, or run 'levelhist bench --cpu'");
        return 1;
      }
#endif
    BenchOptions options = parse_bench_options(args);
    if (options.help) {
      std::cout << bench_help();
      return 0;
    }
    if (cuda::device_count() == 0) {
      print_error("bench: no CUDA GPU (" + cuda::describe_device() + ")",
                  "run it on a machine with an NVIDIA GPU, or use 'levelhist bench --cpu'");
      return 1;
    }
#if LEVELHIST_HAVE_CUDA
    return run_gpu_benchmark(options);
#else
    return 1;  // unreachable: a build without the CUDA backend reports no device above
#endif
  } catch (const std::exception& e) {  // a bad option, out of memory, a file system error: one line, not a crash
    return report_error(e, "levelhist bench --help");
  }
}

}  // namespace levelhist::bench

// The benchmark program, levelhist-bench (`levelhist bench` runs it): the
// lab's strategies join the registry, then the benchmark runs.
int main(int argc, char** argv) {
  levelhist::lab::install();
  return levelhist::bench::bench_main(std::vector<std::string>(argv + 1, argv + argc));
}
