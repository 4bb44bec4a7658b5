#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda/cuda_common.cuh"
#include "gpu_timer.hpp"

namespace levelhist::bench {
namespace {

cudaEvent_t event(void* e) { return static_cast<cudaEvent_t>(e); }

// With the caller's budget spent, a slow case stops once its samples took this long.
constexpr double kSpentSoftSeconds = 0.5;

int calls_for(double per_call_ms, const TimingPolicy& policy) {
  if (!(per_call_ms > 0)) return policy.max_calls_per_sample;
  double calls = std::ceil(policy.min_sample_ms / per_call_ms);
  return static_cast<int>(std::clamp(calls, 1.0, static_cast<double>(policy.max_calls_per_sample)));
}

}  // namespace

GpuTimer::GpuTimer(void* stream) : stream_(stream), start_(nullptr), stop_(nullptr) {
  cudaEvent_t start = nullptr, stop = nullptr;
  LEVELHIST_CUDA_CHECK(cudaEventCreate(&start));
  start_ = start;
  LEVELHIST_CUDA_CHECK(cudaEventCreate(&stop));
  stop_ = stop;
}

GpuTimer::~GpuTimer() {
  // Destructors must not throw; a failure here can only mean the context is already gone.
  if (start_) cudaEventDestroy(event(start_));
  if (stop_) cudaEventDestroy(event(stop_));
}

double GpuTimer::time_calls(const EnqueueCall& enqueue, std::uint64_t first_call, int count) {
  auto stream = static_cast<cudaStream_t>(stream_);
  LEVELHIST_CUDA_CHECK(cudaEventRecord(event(start_), stream));
  for (int i = 0; i < count; ++i) enqueue(first_call + static_cast<std::uint64_t>(i));
  LEVELHIST_CUDA_CHECK(cudaEventRecord(event(stop_), stream));
  LEVELHIST_CUDA_CHECK(cudaEventSynchronize(event(stop_)));
  float ms = 0;
  LEVELHIST_CUDA_CHECK(cudaEventElapsedTime(&ms, event(start_), event(stop_)));
  return static_cast<double>(ms);
}

Timing GpuTimer::measure(const EnqueueCall& enqueue, std::uint64_t first_call, double first_call_ms,
                         const TimingPolicy& policy) {
  std::uint64_t call = first_call;
  double per_call_ms = first_call_ms;
  int calls = calls_for(per_call_ms, policy);

  // Warm-up: whole samples, untimed, each refining the estimate of one call
  // (the first call also loaded the module, so it overestimates).
  if (first_call_ms < policy.first_call_warms_ms) {
    double warm_ms = 0;
    do {
      double ms = time_calls(enqueue, call, calls);
      call += static_cast<std::uint64_t>(calls);
      warm_ms += ms;
      per_call_ms = ms / calls;
      calls = calls_for(per_call_ms, policy);
    } while (warm_ms < policy.warmup_ms);
  }

  // How many samples: as asked, unless min_reps of them would break the hard cap.
  const int wanted = policy.reps;
  const int promised = std::min(policy.min_reps, wanted);  // what the report calls a full measurement
  const int guaranteed = policy.budget_spent ? std::min(kFewestReps, wanted) : promised;
  const double soft_seconds = policy.budget_spent ? std::min(policy.soft_seconds, kSpentSoftSeconds)
                                                  : policy.soft_seconds;
  const double sample_ms = per_call_ms * calls;
  int reps = wanted;
  if (guaranteed * sample_ms > policy.hard_seconds * 1e3)
    reps = std::min(wanted, std::max(kFewestReps, static_cast<int>(policy.hard_seconds * 1e3 / sample_ms)));

  std::vector<double> samples;
  double timed_ms = 0;
  for (int s = 0; s < reps; ++s) {
    double ms = time_calls(enqueue, call, calls);
    call += static_cast<std::uint64_t>(calls);
    timed_ms += ms;
    samples.push_back(ms / calls);
    const int done = s + 1;
    if (done >= guaranteed && timed_ms >= soft_seconds * 1e3) break;
    // The estimate was low (clocks dropped, contention grew): the hard cap still holds.
    if (done >= kFewestReps && timed_ms >= policy.hard_seconds * 1e3) break;
  }

  Timing t;
  std::sort(samples.begin(), samples.end());
  const std::size_t k = samples.size();
  t.median_ms = k % 2 ? samples[k / 2] : (samples[k / 2 - 1] + samples[k / 2]) / 2;
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  t.reps = static_cast<int>(k);
  t.calls_per_sample = calls;
  t.fewer_reps = t.reps < promised;
  return t;
}

}  // namespace levelhist::bench
