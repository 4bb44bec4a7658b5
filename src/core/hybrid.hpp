// Internal: CPU and GPU together on one host call (Plan::shares_host_calls).
//
// An automatic plan that runs on CUDA keeps a CPU plan of the same request
// (Plan::Impl::cpu_partner). Each host call of plain samples or pixels is
// cut in two, the CPU plan counting its share on one thread while the CUDA
// host path counts the other, and the two results are added once both are
// done (counts: exact whatever the cut). Where to cut comes from a model of
// each side, a fixed cost per call plus bytes at a rate, the rates being
// per-process running estimates from the calls that completed, each side's
// rate alone apart from its rate beside the other: the cut that makes both
// sides finish together, unless one side alone is faster (a small call, where
// the GPU's fixed cost loses; or a host where the two sides slow each other).
// A model that chose one side alone stops learning the shared rates, so one
// bad early estimate (a shared call slowed by something else on the host)
// would keep the sides apart for good; every so often such a plan shares a
// call anyway, at the alone rates' cut, and backs off while sharing loses.
#pragma once
#include <algorithm>
#include <cstdint>
#include <mutex>

#include "core/plan_impl.hpp"

namespace levelhist::detail {

// One side's model: seconds = fixed_seconds + bytes / bytes_per_second.
struct SideModel {
  double fixed_seconds = 0.0;
  double bytes_per_second = 1.0;
  double seconds(double bytes) const { return bytes > 0 ? fixed_seconds + bytes / bytes_per_second : 0.0; }
};

// A call's units (items, or rows: part_units) for each side.
struct UnitSplit {
  std::uint64_t cpu = 0;
  std::uint64_t cuda = 0;
};

// The split of `units` units of `unit_bytes` bytes each that the models say
// finishes first: the CPU alone, the GPU alone, or the cut where both finish
// together. Calls of fewer than `min_shared_bytes` bytes go to the CPU alone;
// a share of less than one unit goes to the other side.
UnitSplit choose_split(std::uint64_t units, double unit_bytes, const SideModel& cpu, const SideModel& cuda,
                       double min_shared_bytes);
// The same where each side runs at another rate beside the other than alone:
// `cpu` and `cuda` model each side alone, `cpu_shared` and `cuda_shared` each
// side while both run (the cut comes from these). On a host whose cores and
// memory bandwidth the two sides share (staging threads copying pageable
// memory while the CPU counts), both run slower together, and one side alone
// can beat any cut: then that side alone.
UnitSplit choose_split(std::uint64_t units, double unit_bytes, const SideModel& cpu, const SideModel& cuda,
                       const SideModel& cpu_shared, const SideModel& cuda_shared, double min_shared_bytes);

// A running estimate of a rate in bytes per second: an exponentially weighted
// mean of the rates of completed calls (their bytes over their seconds beyond
// the fixed cost), from a default. Shares smaller than `min_bytes` say more
// about the fixed cost than the rate and are left out.
class RateEstimate {
 public:
  explicit RateEstimate(double initial) : rate_(initial) {}
  double rate() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return rate_;
  }
  void add(double bytes, double seconds, double fixed_seconds);
  // Starts over from `rate` (tests, and the benchmark between its cases).
  void reset(double rate) {
    std::lock_guard<std::mutex> lock(mutex_);
    rate_ = rate;
  }
  static constexpr double kWeight = 0.3;   // of the newest call
  static constexpr double kMinBytes = 4.0 * (1 << 20);

 private:
  mutable std::mutex mutex_;
  double rate_;
};

// When a model that keeps to one side alone tries sharing again: after
// `interval` eligible calls alone, one shared call; a shared call that beat
// the model's better side alone starts the count over from kFirstInterval, one
// that lost doubles the interval (at most kMaxInterval), so on a host where
// sharing always loses the tries cost a vanishing share of the calls (the
// 1/256th of them at most, once backed off).
class ShareRetry {
 public:
  // Counts a call that the model sent to one side alone; true when this one
  // should be shared instead.
  bool due() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (++alone_ < interval_) return false;
    alone_ = 0;
    return true;
  }
  // A shared call ended: `won` when it took less than the better side alone
  // was expected to.
  void shared(bool won) {
    std::lock_guard<std::mutex> lock(mutex_);
    alone_ = 0;
    interval_ = won ? kFirstInterval : std::min(interval_ * 2, kMaxInterval);
  }
  std::uint64_t interval() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return interval_;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    alone_ = 0;
    interval_ = kFirstInterval;
  }
  static constexpr std::uint64_t kFirstInterval = 8;
  static constexpr std::uint64_t kMaxInterval = 256;

 private:
  mutable std::mutex mutex_;
  std::uint64_t alone_ = 0;
  std::uint64_t interval_ = kFirstInterval;
};

// The process's estimates and fixed costs (defaults from docs/PERFORMANCE.md;
// LEVELHIST_HYBRID_MIN_BYTES overrides the smallest shared call's bytes, and
// LEVELHIST_HYBRID=0 turns sharing off for plans made afterwards).
struct HybridModel {
  // Each side alone, from the calls it ran alone.
  RateEstimate cpu;
  RateEstimate cuda_pageable;  // the caller's memory staged through pinned buffers
  RateEstimate cuda_pinned;    // the caller's memory page-locked: copied straight from it
  double cpu_fixed_seconds;
  double cuda_fixed_seconds;
  double min_shared_bytes;
  // Each side while the other runs, from the shared calls; they start at the
  // alone defaults. Kept apart because the sides slow each other down (an H100
  // host with 16 cores, pageable memory: 59 GB/s on the CPU alone, 49 on the
  // GPU alone, 30 together; docs/BENCHMARKS.md).
  RateEstimate cpu_shared;
  RateEstimate cuda_pageable_shared;
  RateEstimate cuda_pinned_shared;
  // The tries at sharing again, per kind of host memory.
  ShareRetry retry_pageable;
  ShareRetry retry_pinned;
  // Starts every estimate over (tests and benchmarks): alone and shared alike.
  void reset(double cpu_rate, double cuda_pageable_rate, double cuda_pinned_rate) {
    retry_pageable.reset();
    retry_pinned.reset();
    cpu.reset(cpu_rate);
    cpu_shared.reset(cpu_rate);
    cuda_pageable.reset(cuda_pageable_rate);
    cuda_pageable_shared.reset(cuda_pageable_rate);
    cuda_pinned.reset(cuda_pinned_rate);
    cuda_pinned_shared.reset(cuda_pinned_rate);
  }
};
HybridModel& hybrid_model();

// Whether a plan of `request` made with `options` (and resolved to a CUDA
// strategy) keeps a CPU partner: the automatic backend and strategy, plain
// or pixel counts (no weights, batches or N-d points), sharing not turned off.
bool shares_host_calls(const Request& request, const Options& options);

// Plan::fill_slots of a plan with a CPU partner: the split, both sides at
// once, their results added into `out` once both are done (nothing added
// when either fails), the estimates updated, the split recorded.
void hybrid_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* out);

}  // namespace levelhist::detail
