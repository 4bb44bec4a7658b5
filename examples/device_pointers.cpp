// levelhist with device pointers: one Plan, a stream, a workspace, calls that
// accumulate. Built where the CUDA backend is; run by the tests on a GPU (exit
// status 77, "skipped", on a machine without one).
//
// A program that counts frame after frame resolves its request once (the
// Plan: strategy chosen, edges on the device), asks once how much workspace the
// largest call needs, allocates and zeroes it once, and then each call is one
// asynchronous launch on its stream.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include <levelhist/cuda.hpp>
#include <levelhist/plan.hpp>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    cudaError_t status_ = (call);                                                           \
    if (status_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(status_));                \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

int main() {
  if (levelhist::cuda::device_count() == 0) {
    std::printf("no CUDA GPU: skipped\n");
    return 77;
  }
  using levelhist::SampleType;
  // Floats in 4 even bins over [0, 1); values outside go to underflow and overflow.
  const levelhist::Plan plan(levelhist::Request::counts(SampleType::f32, levelhist::Binning::even(4, 0.0, 1.0)));
  constexpr std::uint64_t n = 1 << 20;  // per frame
  std::vector<float> frame(n);
  for (std::uint64_t i = 0; i < n; ++i) frame[i] = static_cast<float>(i % 8) / 4.0f - 0.25f;  // -0.25 .. 1.5

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  float* d_frame = nullptr;
  std::uint64_t* d_slots = nullptr;
  void* d_workspace = nullptr;
  const std::size_t workspace_bytes = plan.workspace_bytes(n);
  const std::uint64_t slots = plan.request().output_slots();  // 4 bins + underflow, overflow, NaN
  CHECK(cudaMalloc(&d_frame, n * sizeof(float)));
  CHECK(cudaMalloc(&d_slots, slots * sizeof(std::uint64_t)));
  CHECK(cudaMalloc(&d_workspace, workspace_bytes > 0 ? workspace_bytes : 1));
  CHECK(cudaMemset(d_workspace, 0, workspace_bytes));  // zeroed once: every call leaves it zero

  constexpr int kFrames = 3;
  for (int f = 0; f < kFrames; ++f) {
    CHECK(cudaMemcpyAsync(d_frame, frame.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
    plan.run(levelhist::Input::array(d_frame, n), d_slots, /*accumulate=*/f > 0, d_workspace, workspace_bytes, stream);
  }
  std::vector<std::uint64_t> counts(slots);
  CHECK(cudaMemcpyAsync(counts.data(), d_slots, slots * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::printf("strategy %s: bins %llu %llu %llu %llu, underflow %llu, overflow %llu\n", plan.strategy().name,
              (unsigned long long)counts[0], (unsigned long long)counts[1], (unsigned long long)counts[2],
              (unsigned long long)counts[3], (unsigned long long)counts[4], (unsigned long long)counts[5]);
  cudaFree(d_frame);
  cudaFree(d_slots);
  cudaFree(d_workspace);
  cudaStreamDestroy(stream);
  // Of every 8 samples: -0.25 (underflow), 0, 0.25, 0.5, 0.75 (one per bin), 1.0, 1.25, 1.5 (overflow).
  const std::uint64_t per_value = kFrames * n / 8;
  const bool right = counts[0] == per_value && counts[1] == per_value && counts[2] == per_value &&
                     counts[3] == per_value && counts[4] == per_value && counts[5] == 3 * per_value && counts[6] == 0;
  return right ? 0 : 1;
}
