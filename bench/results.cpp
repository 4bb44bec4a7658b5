#include "results.hpp"

#include <cstdio>

namespace levelhist::bench {
namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

double DeviceInfo::peak_dram_gbps() const {
  if (memory_clock_mhz <= 0 || memory_bus_bits <= 0) return 0.0;
  return 2.0 * memory_clock_mhz * 1e6 * (memory_bus_bits / 8.0) / 1e9;
}

std::string DeviceInfo::describe() const {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (device %d): %d SMs, %llu MiB L2, %.1f GiB", name.c_str(), index, sm_count,
                static_cast<unsigned long long>(l2_bytes >> 20), static_cast<double>(memory_bytes) / (1u << 30));
  std::string out = buf;
  if (sm_clock_mhz > 0) out += ", SM clock " + std::to_string(sm_clock_mhz) + " MHz";
  if (memory_clock_mhz > 0) {
    std::snprintf(buf, sizeof buf, ", memory %d MHz x %d bit (%.0f GB/s theoretical)", memory_clock_mhz,
                  memory_bus_bits, peak_dram_gbps());
    out += buf;
  }
  out += "; CUDA runtime " + version_text(runtime_version) + ", driver " + version_text(driver_version);
  return out;
}

double Measurement::gbps() const { return static_cast<double>(bytes) / (timing->median_ms * 1e-3) / 1e9; }

const SectionInfo* Results::section(const std::string& name) const {
  for (const SectionInfo& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

const Measurement* Results::sibling(const Measurement& m, const std::string& strategy) const {
  for (const Measurement& r : rows)
    if (r.strategy == strategy && r.section == m.section && r.dataset == m.dataset && r.n == m.n &&
        r.problem == m.problem)
      return &r;
  return nullptr;
}

std::optional<double> Results::fraction_of_limit(const Measurement& m) const {
  const Measurement* limit = sibling(m, kLimitName);
  if (!m.timed_ok() || !limit || !limit->timed_ok()) return std::nullopt;
  return m.gbps() / limit->gbps();
}

std::optional<double> Results::ratio_to_baseline(const Measurement& m) const {
  const Measurement* base = sibling(m, kBaselineName);
  if (!m.timed_ok() || !base || !base->timed_ok()) return std::nullopt;
  return m.gbps() / base->gbps();
}

}  // namespace levelhist::bench
