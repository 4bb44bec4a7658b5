// levelhist bench --sort (sort_sections.hpp): the CPU sides timed with
// steady_clock (median of reps after one warm-up call), the GPU sides with
// GpuTimer (CUDA events; gpu_timer.hpp), all into one Results, printed by
// report.hpp like every other section.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>

#include "bench.hpp"
#include "cuda/cuda_common.cuh"
#include "gpu_bench.hpp"
#include "gpu_timer.hpp"
#include "side_bench.cuh"
#include "levelhist/cuda.hpp"
#include "levelhist/cuda_sort.hpp"
#include "levelhist/cuda_sparse.hpp"
#include "levelhist/sort.hpp"
#include "levelhist/sparse.hpp"
#include "report.hpp"
#include "sort_sections.hpp"

namespace levelhist::bench {
namespace {

using u64 = std::uint64_t;

// std::sort on one core is timed on at most this many samples.
constexpr u64 kStdSortMaxSamples = u64{1} << 24;

u64 mix64(u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Runner : SideBench {
  using SideBench::SideBench;

  void record(Measurement m, const std::string& wrong) {
    if (!wrong.empty()) {
      m.ok = false;
      m.note = "wrong result: " + wrong;
      bench.results().failures.push_back(m.strategy + ", " + m.section + " / " + m.dataset + ": " + wrong);
      std::fprintf(stderr, "\nlevelhist bench: *** FAILED *** %s %s: %s\n\n", m.section.c_str(), m.strategy.c_str(),
                   wrong.c_str());
    } else if (!options.quiet && m.timing) {
      std::fprintf(stderr, "[%s] %s: %s %.4g GB/s, %.4g ms\n", m.section.c_str(), m.dataset.c_str(),
                   m.strategy.c_str(), m.gbps(), m.timing->median_ms);
    }
    bench.results().rows.push_back(std::move(m));
  }

  // A host call: one warm-up, then the median of the reps.
  void cpu(Measurement m, const std::function<void()>& call, const std::function<std::string()>& check) {
    call();
    const std::string wrong = check ? check() : "";
    if (wrong.empty()) {
      const int reps = options.quick ? 3 : 5;
      std::vector<double> ms;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      m.timing = Timing{ms[ms.size() / 2], ms.front(), ms.back(), reps, 1, false};
    }
    record(std::move(m), wrong);
  }

  // A device call on `stream`: one checked call, then GpuTimer's warm-up and samples.
  void gpu(Measurement m, const EnqueueCall& call, const std::function<std::string()>& check) {
    const double first_ms = timer->time_calls(call, 0, 1);
    const std::string wrong = check ? check() : "";
    if (wrong.empty()) m.timing = timer->measure(call, 1, first_ms, policy);
    record(std::move(m), wrong);
  }
};

std::string first_difference(const void* want, const void* got, u64 bytes) {
  if (std::memcmp(want, got, bytes) == 0) return "";
  u64 i = 0;
  while (static_cast<const unsigned char*>(want)[i] == static_cast<const unsigned char*>(got)[i]) ++i;
  return "differs from the CPU's sorted output at byte " + std::to_string(i) + " of " + std::to_string(bytes);
}

template <class T>
void sort_section(Runner& r, u64 bytes) {
  const SampleType type = sample_type_of<T>();
  const std::string name = "sort_" + std::string(to_string(type));
  r.bench.begin_section({name, "counting sort of " + std::to_string(bytes >> 20) + " MiB of " +
                                   std::string(to_string(type)) + " samples",
                         "", XKind::none});
  const u64 n = bytes / sizeof(T);
  std::vector<T> in(n), out(n), check_out(n);
  DeviceMemory d_in(bytes), d_out(bytes);
  for (const std::string dataset : {"uniform", "4 values"}) {
    for (u64 i = 0; i < n; ++i)
      in[i] = static_cast<T>(dataset == "uniform" ? mix64(i) : (mix64(i) & 3) * (sizeof(T) == 1 ? 60 : 16000));
    LEVELHIST_CUDA_CHECK(cudaMemcpy(d_in.get(), in.data(), bytes, cudaMemcpyHostToDevice));
    const std::string problem = std::string(to_string(type)) + ", " + std::to_string(n) + " samples";
    const Measurement p = proto(name, dataset, problem, n, bytes);
    Measurement m = p;
    // The limit of an out-of-place sort: every sample read once and written once,
    // as a device-to-device copy of the same bytes moves them.
    m.strategy = "limit";
    r.gpu(m, [&](u64) {
      LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(d_out.get(), d_in.get(), bytes, cudaMemcpyDeviceToDevice, r.stream));
    }, nullptr);
    m.strategy = "cpu_counting_sort";
    r.cpu(m, [&] { counting_sort(type, in.data(), out.data(), n, Options{"auto", BackendChoice::cpu, 0}); },
          [&]() -> std::string { return std::is_sorted(out.begin(), out.end()) ? "" : "not sorted"; });
    auto check_device = [&](const void* d) {
      return [&, d]() -> std::string {
        LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(r.stream));
        LEVELHIST_CUDA_CHECK(cudaMemcpy(check_out.data(), d, bytes, cudaMemcpyDeviceToHost));
        LEVELHIST_CUDA_CHECK(cudaMemset(const_cast<void*>(d), 0, bytes));
        return first_difference(out.data(), check_out.data(), bytes);
      };
    };
    std::size_t temp_bytes = 0;
    cuda::counting_sort(nullptr, temp_bytes, type, nullptr, nullptr, n);
    {
      DeviceMemory temp(temp_bytes);
      LEVELHIST_CUDA_CHECK(cudaMemset(temp.get(), 0, temp_bytes));  // zeroed once (cuda_sort.hpp)
      m.strategy = "gpu_counting_sort";
      r.gpu(m, [&](u64) {
        std::size_t t = temp_bytes;
        cuda::counting_sort(temp.get(), t, type, d_in.get(), d_out.get(), n, r.stream);
      }, check_device(d_out.get()));
    }
    std::size_t cub_bytes = 0;
    LEVELHIST_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, d_in.get<const T>(), d_out.get<T>(),
                                                        static_cast<int>(n)));
    DeviceMemory cub_temp(cub_bytes);
    m.strategy = "cub";
    r.gpu(m, [&](u64) {
      std::size_t t = cub_bytes;
      LEVELHIST_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(cub_temp.get(), t, d_in.get<const T>(), d_out.get<T>(),
                                                          static_cast<int>(n), 0, static_cast<int>(sizeof(T) * 8),
                                                          r.stream));
    }, check_device(d_out.get()));
    // std::sort, one core, on a prefix when the whole would take long.
    {
      const u64 k = std::min(n, kStdSortMaxSamples);
      Measurement m = proto(name, dataset, problem, k, k * sizeof(T));
      m.strategy = "std_sort";
      if (k < n) m.note = "one core, timed on the first " + std::to_string(k) + " samples (2^24), not all " + std::to_string(n);
      std::vector<T> scratch(k);
      r.cpu(m, [&] {
        std::copy(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k), scratch.begin());
        std::sort(scratch.begin(), scratch.end());
      }, nullptr);
    }
  }
}

void sparse_section(Runner& r, u64 n) {
  const std::string name = "sparse_u32";
  r.bench.begin_section({name, "sparse histogram of " + std::to_string(n) + " u32 keys", "", XKind::none});
  std::vector<std::uint32_t> keys(n);
  DeviceMemory d_keys(n * 4), d_values(n * 4), d_counts(n * 8), d_pairs(8);
  for (const std::string dataset : {"uniform over 2^32", "uniform over 2^20"}) {
    const u64 mask = dataset == "uniform over 2^32" ? 0xFFFFFFFFull : 0xFFFFFull;
    for (u64 i = 0; i < n; ++i) keys[i] = static_cast<std::uint32_t>(mix64(i ^ 0x5151) & mask);
    LEVELHIST_CUDA_CHECK(cudaMemcpy(d_keys.get(), keys.data(), n * 4, cudaMemcpyHostToDevice));
    Measurement m = proto(name, dataset, "u32 keys, (value, count) pairs", n, n * 4);
    std::vector<ValueCount> want;
    m.strategy = "cpu_sparse";
    r.cpu(m, [&] { want = sparse_histogram(KeyType::u32, keys.data(), n, Options{"auto", BackendChoice::cpu, 0}); },
          nullptr);
    std::size_t temp_bytes = 0;
    cuda::sparse_histogram(nullptr, temp_bytes, KeyType::u32, nullptr, n, nullptr, nullptr, nullptr);
    DeviceMemory temp(temp_bytes);
    m.strategy = "gpu_sparse";
    r.gpu(m, [&](u64) {
      std::size_t t = temp_bytes;
      cuda::sparse_histogram(temp.get(), t, KeyType::u32, d_keys.get(), n, d_values.get(), d_counts.get<u64>(),
                             d_pairs.get<u64>(), r.stream);
    }, [&]() -> std::string {
      LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(r.stream));
      u64 pairs = 0;
      LEVELHIST_CUDA_CHECK(cudaMemcpy(&pairs, d_pairs.get(), 8, cudaMemcpyDeviceToHost));
      if (pairs != want.size()) return std::to_string(pairs) + " pairs, the CPU found " + std::to_string(want.size());
      std::vector<std::uint32_t> values(pairs);
      std::vector<u64> counts(pairs);
      LEVELHIST_CUDA_CHECK(cudaMemcpy(values.data(), d_values.get(), pairs * 4, cudaMemcpyDeviceToHost));
      LEVELHIST_CUDA_CHECK(cudaMemcpy(counts.data(), d_counts.get(), pairs * 8, cudaMemcpyDeviceToHost));
      for (u64 i = 0; i < pairs; ++i)
        if (values[i] != want[i].value || counts[i] != want[i].count) return "pair " + std::to_string(i) + " differs";
      return "";
    });
  }
}

}  // namespace

int sort_bench_main(const std::vector<std::string>& args) {
  BenchOptions o;
  if (const auto status = begin_gpu_mode(args, "--sort",
                                         "Usage: levelhist bench --sort [--quick] [OPTION]...\n"
                                         "Counting sort (u8, u16) and sparse histograms (u32 keys): CPU and GPU side "
                                         "by side with\nstd::sort and CUB's radix sort; see "
                                         "bench/sort_sections.hpp.\n\n",
                                         o))
    return *status;
  GpuBench bench(o);
  std::fprintf(stderr, "levelhist bench --sort on %s\n", bench.results().device.describe().c_str());
  Runner r(bench, o);
  // None of the registry's histogram strategies is timed here: describe only what is.
  bench.results().strategies.clear();
  r.describe("std_sort", "std::sort on one core (the comparison-sort baseline)");
  r.describe("cpu_counting_sort", "levelhist::counting_sort on the CPU: per-value fill, scan, parallel run expansion");
  r.describe("gpu_counting_sort", "levelhist::cuda::counting_sort: histogram strategy, CUB scan, run expansion kernel");
  r.describe("limit", "cudaMemcpyAsync device to device of the same bytes: each sample read once and written once, the least an out-of-place sort moves");
  r.describe("cub", "cub::DeviceRadixSort::SortKeys (the GPU sorting baseline)");
  r.describe("cpu_sparse", "levelhist::sparse_histogram on the CPU: parallel LSD radix sort + run count");
  r.describe("gpu_sparse", "levelhist::cuda::sparse_histogram: CUB SortKeys + ReduceByKey, 64-bit counts");
  const u64 bytes = o.quick ? u64{64} << 20 : u64{256} << 20;
  std::string fatal;
  try {
    sort_section<std::uint8_t>(r, bytes);
    sort_section<std::uint16_t>(r, bytes);
    sparse_section(r, o.quick ? u64{1} << 24 : u64{1} << 26);
  } catch (const Error& e) {
    fatal = e.what();
  }
  return finish_side_run("levelhist bench --sort", bench, o, fatal);
}

}  // namespace levelhist::bench
