// CPU and GPU together on one host call: the split and the two sides at once
// (src/core/hybrid.hpp).
#include "core/hybrid.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/env_knob.hpp"
#include "cpu/cpu_parallel_fork_join.hpp"

namespace levelhist::detail {

UnitSplit choose_split(std::uint64_t units, double unit_bytes, const SideModel& cpu, const SideModel& cuda,
                       const SideModel& cpu_shared, const SideModel& cuda_shared, double min_shared_bytes) {
  const double bytes = static_cast<double>(units) * unit_bytes;
  if (units == 0 || bytes < min_shared_bytes) return {units, 0};
  const double cpu_alone = cpu.seconds(bytes), cuda_alone = cuda.seconds(bytes);
  // Both finish together: cuda.fixed + x / r_cuda = cpu.fixed + (bytes - x) / r_cpu, at the shared rates.
  const double x = (cpu_shared.fixed_seconds - cuda_shared.fixed_seconds + bytes / cpu_shared.bytes_per_second) /
                   (1.0 / cpu_shared.bytes_per_second + 1.0 / cuda_shared.bytes_per_second);
  double best = std::min(cpu_alone, cuda_alone);
  UnitSplit split = cpu_alone <= cuda_alone ? UnitSplit{units, 0} : UnitSplit{0, units};
  if (x > 0 && x < bytes) {
    const auto cuda_units = static_cast<std::uint64_t>(std::llround(x / unit_bytes));
    if (cuda_units > 0 && cuda_units < units) {
      const double cuda_bytes = static_cast<double>(cuda_units) * unit_bytes;
      const double together = std::max(cpu_shared.seconds(bytes - cuda_bytes), cuda_shared.seconds(cuda_bytes));
      if (together < best) {
        best = together;
        split = {units - cuda_units, cuda_units};
      }
    }
  }
  return split;
}

UnitSplit choose_split(std::uint64_t units, double unit_bytes, const SideModel& cpu, const SideModel& cuda,
                       double min_shared_bytes) {
  return choose_split(units, unit_bytes, cpu, cuda, cpu, cuda, min_shared_bytes);
}

void RateEstimate::add(double bytes, double seconds, double fixed_seconds) {
  if (bytes < kMinBytes || !(seconds > 0)) return;
  // At least a tenth of the time is the rate's: a call whose time the fixed
  // cost all but explains must not claim an unbounded rate.
  const double rate = bytes / std::max(seconds - fixed_seconds, seconds / 10);
  std::lock_guard<std::mutex> lock(mutex_);
  rate_ = (1 - kWeight) * rate_ + kWeight * rate;
}

namespace {

double env_number(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return *end == '\0' && std::isfinite(v) && v >= 0 ? v : fallback;
}

// The CPU side's threads in a shared call: LEVELHIST_HYBRID_CPU_THREADS
// where set (a study knob), else the CPU plan's own where it names a number.
// With all cores (Options::threads 0) and a pageable source, the cores less
// the GPU side's staging threads: those copy every byte the GPU counts into
// pinned buffers at the same time, and 16 counting threads beside 8 staging
// ones on 16 cores shared worse than 8 beside 8 (H200 machine, 1 GiB, seven
// runs each: median 1.04x the better side alone, 0.97-1.21, against 1.18x,
// 1.08-1.33; docs/BENCHMARKS.md, docs/PERFORMANCE.md). A pinned source is
// copied without staging: every core counts.
unsigned shared_cpu_threads(const Plan::Impl& cpu_plan, bool pinned) {
  const auto knob = static_cast<unsigned>(env_knob("LEVELHIST_HYBRID_CPU_THREADS", 0, 0, 1024));
  if (knob) return knob;
  if (cpu_plan.base.threads != 0 || pinned) return cpu_plan.base.threads;
  const unsigned cores = cpu_parallel_detail::hardware_cores(), staging = host_path_staging_threads();
  return cores > staging ? cores - staging : 0;
}

}  // namespace

HybridModel& hybrid_model() {
  // Defaults (docs/PERFORMANCE.md, "Host data to the GPU"): the CPU backend
  // counted ~4.5 GB/s a thread (71 GB/s on 16 cores of an H200 host, 53 on an
  // H100 host), the CUDA host path ~45-50 GB/s from pageable memory (4 MiB
  // chunks, 8 staging threads) and ~53 GB/s from pinned memory (the PCIe
  // copy), both measured on an H100 host; a GPU call
  // costs ~0.3 ms before its first byte (threads, events, the histogram's copy
  // back), a CPU call ~0.05 ms.
  static const double cpu_rate = 4.5e9 * cpu_parallel_detail::hardware_cores();
  static HybridModel model{
      RateEstimate(cpu_rate),
      RateEstimate(45e9),
      RateEstimate(50e9),
      50e-6,
      300e-6,
      env_number("LEVELHIST_HYBRID_MIN_BYTES", 4.0 * (1 << 20)),
      RateEstimate(cpu_rate),
      RateEstimate(45e9),
      RateEstimate(50e9),
      ShareRetry(),
      ShareRetry(),
  };
  return model;
}

bool shares_host_calls(const Request& request, const Options& options) {
  if (options.backend != BackendChoice::automatic || options.strategy != "auto") return false;
  if (request.is_weighted() || request.is_batch() || request.is_nd()) return false;
  const char* off = std::getenv("LEVELHIST_HYBRID");
  return !(off && std::string(off) == "0");
}

void hybrid_fill(const Plan::Impl& plan, const Geometry& g, const Input& input, void* out) {
  using Clock = std::chrono::steady_clock;
  HybridModel& model = hybrid_model();
  const std::uint64_t units = part_units(g);
  const double unit_bytes = static_cast<double>(g.packed() ? g.item_bytes() : g.row_bytes());
  const std::uint64_t items_per_unit = g.packed() ? 1 : g.width;
  const double bytes = static_cast<double>(units) * unit_bytes;
  const bool pinned = host_memory_is_pinned(input.samples, static_cast<std::size_t>(bytes));
  RateEstimate& cuda_rate = pinned ? model.cuda_pinned : model.cuda_pageable;
  RateEstimate& cuda_shared = pinned ? model.cuda_pinned_shared : model.cuda_pageable_shared;
  ShareRetry& retry = pinned ? model.retry_pinned : model.retry_pageable;
  const SideModel cpu_alone{model.cpu_fixed_seconds, model.cpu.rate()};
  const SideModel cuda_alone{model.cuda_fixed_seconds, cuda_rate.rate()};
  UnitSplit split = choose_split(units, unit_bytes, cpu_alone, cuda_alone,
                                 SideModel{model.cpu_fixed_seconds, model.cpu_shared.rate()},
                                 SideModel{model.cuda_fixed_seconds, cuda_shared.rate()}, model.min_shared_bytes);
  // One side alone although the call is large enough to share: now and then
  // share it anyway, cut where the alone rates say both finish together, so
  // the shared estimates see calls again (ShareRetry).
  if ((split.cuda == 0 || split.cpu == 0) && bytes >= model.min_shared_bytes && retry.due()) {
    const UnitSplit cut = choose_split(units, unit_bytes, cpu_alone, cuda_alone, model.min_shared_bytes);
    if (cut.cpu > 0 && cut.cuda > 0) split = cut;
  }
  const std::size_t out_bytes = plan.request.output_slots() * 8;
  // One side alone: straight into `out`, as its own plan would.
  if (split.cuda == 0 || split.cpu == 0) {
    const auto start = Clock::now();
    if (split.cuda == 0) cpu_fill(*plan.cpu_partner, g, input, out, /*accumulate=*/true);
    else cuda_fill(plan, g, input, out);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (split.cuda == 0) model.cpu.add(bytes, seconds, model.cpu_fixed_seconds);
    else cuda_rate.add(bytes, seconds, model.cuda_fixed_seconds);
    plan.record_split(split.cpu * items_per_unit, split.cuda * items_per_unit);
    return;
  }
  // Both: the CPU takes the first units, the GPU the rest, each into slots of
  // its own, added once both are done.
  std::vector<std::uint64_t> cpu_out(out_bytes / 8, 0), cuda_out(out_bytes / 8, 0);
  double seconds[2] = {0, 0};
  const auto shared_start = Clock::now();
  const Input cpu_part = part_of(plan.request, g, input, 0, split.cpu);
  const Input cuda_part = part_of(plan.request, g, input, split.cpu, units);
  cpu_parallel_detail::fork_join(2, [&](unsigned side) {
    const auto start = Clock::now();
    if (side == 0) cuda_fill(plan, geometry_of(plan.request, cuda_part), cuda_part, cuda_out.data());
    else
      cpu_fill(*plan.cpu_partner, geometry_of(plan.request, cpu_part), cpu_part, cpu_out.data(), /*accumulate=*/false,
               shared_cpu_threads(*plan.cpu_partner, pinned));
    seconds[side] = std::chrono::duration<double>(Clock::now() - start).count();
  });
  const double wall = std::chrono::duration<double>(Clock::now() - shared_start).count();
  auto* slots = static_cast<std::uint64_t*>(out);
  for (std::size_t i = 0; i < cpu_out.size(); ++i) slots[i] += cpu_out[i] + cuda_out[i];
  retry.shared(wall < std::min(cpu_alone.seconds(bytes), cuda_alone.seconds(bytes)));
  cuda_shared.add(split.cuda * unit_bytes, seconds[0], model.cuda_fixed_seconds);
  model.cpu_shared.add(split.cpu * unit_bytes, seconds[1], model.cpu_fixed_seconds);
  plan.record_split(split.cpu * items_per_unit, split.cuda * items_per_unit);
}

Input part_of(const Request& request, const Geometry& g, const Input& input, std::uint64_t begin, std::uint64_t end) {
  const auto* samples = static_cast<const unsigned char*>(input.samples);
  const auto* weights = static_cast<const unsigned char*>(input.weights);
  if (g.packed()) {
    const void* w = weights ? weights + begin * g.weight_bytes : nullptr;
    if (request.is_pixels()) {
      Input in = Input::image(samples + begin * g.item_bytes(), end - begin, end > begin ? 1 : 0);
      in.weights = w;
      return in;
    }
    return Input::array(samples + begin * g.item_bytes(), end - begin, w);
  }
  Input in = Input::image(samples + begin * g.pitch, g.width, end - begin, g.pitch);
  in.weights = weights ? weights + begin * g.width * g.weight_bytes : nullptr;
  return in;
}

}  // namespace levelhist::detail
