// Probe of gpu_segments on one case, for a profiler: 256 MiB of random bytes
// on the device, counted as segments by offsets of 0-8 KiB each (as
// `levelhist bench --shapes`' "offsets" case) or as equal segments of 4 KiB,
// `calls` times back to back, with one line of CUDA-event timing (median).
// The benchmark adapts its number of calls to their time, so a launch index
// found in one ncu run does not name the same case in another; here launch k
// is call k. The first call's counts are checked against the CPU.
//
// Build (CMake, with the benchmark): target segments_probe.
// Usage: segments_probe offsets|equal4k [calls]    (default 5)
// E.g.: ncu --clock-control none --kernel-name regex:batch_kernel --launch-skip 2 --launch-count 1 \
//         --section WarpStateStats ./segments_probe offsets
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "levelhist/plan.hpp"
#include "levelhist/request.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "segments_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace levelhist;
  const std::string mode = argc > 1 ? argv[1] : "offsets";
  const int calls = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  if (mode != "offsets" && mode != "equal4k") {
    std::fprintf(stderr, "usage: segments_probe offsets|equal4k [calls]\n");
    return 2;
  }
  const std::uint64_t n = std::uint64_t{256} << 20;
  std::vector<unsigned char> host(n);
  std::mt19937_64 rng(20121114);
  for (auto& b : host) b = static_cast<unsigned char>(rng() >> 56);
  std::vector<std::uint64_t> offsets = {0};
  if (mode == "offsets")
    while (offsets.back() < n) offsets.push_back(std::min<std::uint64_t>(n, offsets.back() + rng() % (8 << 10)));
  const std::uint64_t segments = mode == "offsets" ? offsets.size() - 1 : n / 4096;
  const Binning bins = Binning::per_value(SampleType::u8);
  const Request request = mode == "offsets" ? Request::segments_by_offsets(SampleType::u8, bins, segments)
                                            : Request::segments(SampleType::u8, bins, segments);
  Options options;
  options.strategy = "gpu_segments";
  const Plan plan(request, options);

  unsigned char* d_samples = nullptr;
  std::uint64_t* d_offsets = nullptr;
  void* d_out = nullptr;
  void* d_workspace = nullptr;
  const std::size_t ws = std::max<std::size_t>(plan.workspace_bytes(n), 256);
  check(cudaMalloc(&d_samples, n), "cudaMalloc");
  check(cudaMalloc(&d_offsets, offsets.size() * 8), "cudaMalloc");
  check(cudaMalloc(&d_out, request.output_slots() * 8), "cudaMalloc");
  check(cudaMalloc(&d_workspace, ws), "cudaMalloc");
  check(cudaMemset(d_workspace, 0, ws), "cudaMemset");
  check(cudaMemcpy(d_samples, host.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice), "cudaMemcpy");
  const Input input = mode == "offsets" ? Input::segments(d_samples, n, d_offsets) : Input::array(d_samples, n);

  std::vector<float> ms;
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int k = 0; k < calls; ++k) {
    check(cudaEventRecord(start), "cudaEventRecord");
    plan.run(input, d_out, false, d_workspace, ws);
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
    if (k == 0) {  // the counts, against the CPU
      std::vector<std::uint64_t> got(request.output_slots()), want(request.output_slots(), 0);
      check(cudaMemcpy(got.data(), d_out, got.size() * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
      Options cpu;
      cpu.backend = BackendChoice::cpu;
      const Input host_input = mode == "offsets" ? Input::segments(host.data(), n, offsets.data()) : Input::array(host.data(), n);
      Plan(request, cpu).fill_slots(want.data(), host_input, false);
      if (got != want) {
        std::fprintf(stderr, "segments_probe: the counts differ from the CPU's\n");
        return 1;
      }
    }
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("%s: %llu segments, %d calls, median %.1f us, %.0f GB/s of input\n", mode.c_str(),
              static_cast<unsigned long long>(segments), calls, median * 1000, n / (median * 1e6));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "segments_probe: %s\n", e.what());
  return 1;
}
