// levelhist bench: timing asynchronous GPU work with CUDA events, the way a
// caller that calls in a loop sees it. Reusable for any enqueue-able call:
// the histogram strategies, the streaming-read limit, later sections' kernels.
//
// One sample = events around R back-to-back calls, divided by R, with R chosen
// so a sample lasts at least `min_sample_ms` (event resolution is about half a
// microsecond; a 5 us call alone would be noise). The median over samples is
// the figure; min and max show the spread.
//
// Slow calls are capped: timing stops after `min_reps` samples once the samples
// took `soft_seconds`, and a call so slow that `min_reps` samples would exceed
// `hard_seconds` gets fewer samples (never fewer than kFewestReps). A caller
// whose time budget is spent sets `budget_spent`: then slow calls stop after
// kFewestReps samples and half a second, while fast ones still get all their
// samples (they cost nothing). Fewer samples than min_reps are flagged in the
// Timing so the report can say so. The whole run stays predictable.
#pragma once
#include <cstdint>
#include <functional>

#include "results.hpp"

namespace levelhist::bench {

struct TimingPolicy {
  int reps = 15;               // timed samples wanted
  int min_reps = 10;           // never fewer, unless the hard cap says so
  double soft_seconds = 3.0;   // after min_reps samples, stop once the samples took this long
  double hard_seconds = 10.0;  // fewer samples when min_reps of them would take longer
  double min_sample_ms = 0.2;  // a sample spans back-to-back calls until it lasts this long
  double warmup_ms = 20.0;     // untimed calls first, for clocks and caches of code and TLB
  // A first call at least this slow was warm-up enough: one more would cost seconds.
  double first_call_warms_ms = 100.0;
  int max_calls_per_sample = 1 << 14;
  bool budget_spent = false;  // the caller's time for this strategy is used up: see above
};

// The fewest samples a case may get, however slow.
inline constexpr int kFewestReps = 3;

// Enqueues call number `call` (0, 1, 2, ... across a whole measurement, so
// the caller can rotate inputs) asynchronously on the timer's stream; throws
// levelhist::Error on failure.
using EnqueueCall = std::function<void(std::uint64_t call)>;

class GpuTimer {
 public:
  explicit GpuTimer(void* stream);  // a cudaStream_t
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Milliseconds of `count` back-to-back calls first_call, first_call+1, ...,
  // measured by events on the stream; waits for them.
  double time_calls(const EnqueueCall& enqueue, std::uint64_t first_call, int count);

  // Warm-up, then timed samples of calls first_call, first_call+1, ... under
  // `policy`. `first_call_ms` is the time of the call just before (the checked
  // one): the first estimate of a call's duration.
  Timing measure(const EnqueueCall& enqueue, std::uint64_t first_call, double first_call_ms,
                 const TimingPolicy& policy);

 private:
  void* stream_;
  void* start_;  // cudaEvent_t
  void* stop_;
};

}  // namespace levelhist::bench
