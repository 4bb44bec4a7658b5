// The host's cost of one small call, part by part: what Plan::run spends on
// the CPU for 1000 f32 samples into 1024 even bins (device pointers, the
// legacy default stream) beside the CUDA runtime calls it is made of: an empty
// kernel's launch, a launch with a 256-byte argument block, cudaMemsetAsync,
// cudaGetDevice, cudaGetDeviceCount. Each is timed on the host over batches of
// 200 calls (fewer than the launch queue holds, so the host is what is timed,
// not the GPU), the device synchronized between batches; median of 25 batches.
// The Python binding's call (bench_python.py, "1000 samples per call") adds
// its own cost on top of Plan::run.
//
// Build (CMake, with the benchmark): target call_overhead.
// Usage: call_overhead
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <vector>

#include "levelhist/plan.hpp"
#include "levelhist/request.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "call_overhead: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void empty_kernel() {}

struct Args256 {
  unsigned char bytes[256];
};
__global__ void args_kernel(Args256 a) {
  if (a.bytes[0] == 1 && threadIdx.x == 1024) printf("unreachable\n");
}

// Median microseconds per call of fn, on the host.
template <class Fn>
double host_us(Fn&& fn) {
  constexpr int kBatch = 200, kBatches = 25;
  for (int i = 0; i < kBatch; ++i) fn();  // warm-up
  check(cudaDeviceSynchronize(), "synchronize");
  std::vector<double> us;
  for (int b = 0; b < kBatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    check(cudaDeviceSynchronize(), "synchronize");
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kBatch);
  }
  std::nth_element(us.begin(), us.begin() + kBatches / 2, us.end());
  return us[kBatches / 2];
}

}  // namespace

int main() try {
  using namespace levelhist;
  const std::uint64_t n = 1000;
  std::vector<float> host(n);
  std::mt19937 rng(5);
  for (auto& x : host) x = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
  const Request request = Request::counts(SampleType::f32, Binning::even(1024, 0.0, 1.0));
  const Plan plan(request);
  float* d_samples = nullptr;
  std::uint64_t* d_out = nullptr;
  void* d_ws = nullptr;
  const std::size_t ws_bytes = plan.workspace_bytes(n);
  check(cudaMalloc(&d_samples, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&d_out, plan.request().output_slots() * 8), "cudaMalloc");
  check(cudaMalloc(&d_ws, std::max<std::size_t>(ws_bytes, 256)), "cudaMalloc");
  check(cudaMemset(d_ws, 0, std::max<std::size_t>(ws_bytes, 256)), "cudaMemset");
  check(cudaMemcpy(d_samples, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  const Input input = Input::array(d_samples, n);
  const Input none = Input::array(d_samples, 0);

  // The counts first: the call must be right before it is timed.
  plan.run(input, d_out, false, d_ws, ws_bytes);
  std::vector<std::uint64_t> got(plan.request().output_slots());
  check(cudaMemcpy(got.data(), d_out, got.size() * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::vector<std::uint64_t> want(got.size(), 0);
  Options on_cpu;
  on_cpu.backend = BackendChoice::cpu;
  Plan(request, on_cpu).fill_slots(want.data(), Input::array(host.data(), n), false);
  if (got != want) {
    std::fprintf(stderr, "call_overhead: Plan::run's counts differ from the CPU's\n");
    return 1;
  }

  Args256 args{};
  int device = 0, count = 0;
  std::printf("| host microseconds per call (median of 25 batches of 200) | us |\n|---|---:|\n");
  std::printf("| empty kernel launch <<<1, 32>>> | %.2f |\n", host_us([] { empty_kernel<<<1, 32>>>(); }));
  std::printf("| kernel launch with 256 bytes of arguments | %.2f |\n", host_us([&] { args_kernel<<<1, 32>>>(args); }));
  std::printf("| cudaMemsetAsync of the 1027 slots | %.2f |\n",
              host_us([&] { cudaMemsetAsync(d_out, 0, got.size() * 8, nullptr); }));
  std::printf("| cudaGetDevice | %.3f |\n", host_us([&] { cudaGetDevice(&device); }));
  std::printf("| cudaGetDeviceCount | %.3f |\n", host_us([&] { cudaGetDeviceCount(&count); }));
  std::printf("| cudaGetLastError | %.3f |\n", host_us([] { (void)cudaGetLastError(); }));
  std::printf("| Plan::run, n = 0 (a cudaMemsetAsync) | %.2f |\n",
              host_us([&] { plan.run(none, d_out, false, d_ws, ws_bytes); }));
  std::printf("| Plan::run, 1000 f32 into 1024 bins (one launch) | %.2f |\n",
              host_us([&] { plan.run(input, d_out, false, d_ws, ws_bytes); }));
  cudaFree(d_samples);
  cudaFree(d_out);
  cudaFree(d_ws);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "call_overhead: %s\n", e.what());
  return 1;
}
