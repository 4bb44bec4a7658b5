// levelhist bench: what the benchmark's side sections (--general, --sort) share
// for timing work that is not a registered strategy: device buffers, a stream
// with its CUDA-event timer and timing policy, and strategy descriptions.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cuda/cuda_common.cuh"
#include "gpu_bench.hpp"
#include "gpu_timer.hpp"
#include "options.hpp"
#include "report.hpp"

namespace levelhist::bench {

// A device allocation freed on scope exit (at least 256 bytes, so a size of 0
// still gives a valid pointer).
class DeviceMemory {
 public:
  explicit DeviceMemory(std::size_t bytes) { LEVELHIST_CUDA_CHECK(cudaMalloc(&p_, std::max<std::size_t>(bytes, 256))); }
  ~DeviceMemory() { cudaFree(p_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  template <class T = unsigned char>
  T* get() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
};

// A row of a side section, before its strategy and timing are filled in.
inline Measurement proto(const std::string& section, const std::string& dataset, const std::string& problem,
                         std::uint64_t n, std::uint64_t bytes) {
  Measurement m;
  m.section = section;
  m.series = section;
  m.x = static_cast<double>(n);
  m.dataset = dataset;
  m.problem = problem;
  m.n = n;
  m.bytes = bytes;
  return m;
}

// A non-blocking stream, its timer, and the timing policy the options ask for.
struct SideBench {
  GpuBench& bench;
  const BenchOptions& options;
  cudaStream_t stream = nullptr;
  std::unique_ptr<GpuTimer> timer;
  TimingPolicy policy;

  SideBench(GpuBench& b, const BenchOptions& o) : bench(b), options(o) {
    LEVELHIST_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    timer = std::make_unique<GpuTimer>(stream);
    policy.reps = o.reps;
    policy.hard_seconds = o.case_seconds;
    policy.soft_seconds = std::min(3.0, 0.3 * o.case_seconds);
    policy.warmup_ms = o.quick ? 5.0 : 10.0;
  }
  ~SideBench() {
    timer.reset();
    if (stream) cudaStreamDestroy(stream);
  }
  SideBench(const SideBench&) = delete;
  SideBench& operator=(const SideBench&) = delete;

  // The report's "what" line of a strategy, once.
  void describe(const std::string& name, const std::string& summary) {
    for (const StrategyInfo& s : bench.results().strategies)
      if (s.name == name) return;
    bench.results().strategies.push_back({name, summary});
  }
};

// The end of a side section's run: write the report (and the files under
// --out), then the exit status: 1 after a fatal error or any wrong result.
inline int finish_side_run(const char* command, GpuBench& bench, const BenchOptions& o, const std::string& fatal) {
  Results& results = bench.results();
  if (!o.out_dir.empty()) write_all_formats(o.out_dir, results);
  write_report(std::cout, results, o.format);
  std::cout.flush();
  if (!fatal.empty()) {
    std::fprintf(stderr, "%s: %s\n", command, fatal.c_str());
    return 1;
  }
  if (!results.failures.empty()) {
    std::fprintf(stderr, "%s: %zu runs FAILED\n", command, results.failures.size());
    return 1;
  }
  return 0;
}

}  // namespace levelhist::bench
