// Design study: the CPU backend's joint histogram of two 8-bit columns (256 x
// 256 bins, what `levelhist joint` counts), through the public API on three
// images: noise, random 0 / 255 masks and a constant pair. Every result's
// total is checked; the best of 7 fills is printed (docs/PERFORMANCE-shapes.md,
// "CPU (measured here)").
//
// Build (CMake, with the benchmark): target cpu_joint_probe. Usage:
// cpu_joint_probe [log2 points] [threads] (defaults 27 and 0 = all cores).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <vector>

#include "levelhist/levelhist.hpp"

int main(int argc, char** argv) try {
  using namespace levelhist;
  const int log2_points = argc > 1 ? std::atoi(argv[1]) : 27;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
  if (log2_points < 10 || log2_points > 32 || threads < 0 || threads > 1024) {
    std::fprintf(stderr, "cpu_joint_probe: usage: cpu_joint_probe [log2 points, 10-32] [threads, 0-1024]\n");
    return 2;
  }
  const std::size_t n = std::size_t{1} << log2_points;
  std::vector<std::uint8_t> a(n), b(n);
  std::mt19937_64 rng(1);
  const Binning u8 = Binning::per_value(SampleType::u8);
  Options options;
  options.backend = BackendChoice::cpu;
  options.threads = static_cast<unsigned>(threads);
  const Plan plan(Request::joint(SampleType::u8, {u8, u8}), options);
  const char* const images[] = {"noise", "masks", "constant"};
  for (int image = 0; image < 3; ++image) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t r = rng();
      const auto x = static_cast<std::uint8_t>(r), y = static_cast<std::uint8_t>(r >> 8);
      a[i] = image == 0 ? x : image == 1 ? (x & 1 ? 255 : 0) : 7;
      b[i] = image == 0 ? y : image == 1 ? (y & 1 ? 255 : 0) : 9;
    }
    double best = 1e30;
    for (int run = 0; run < 7; ++run) {
      HistogramNd h({u8, u8});
      const auto t0 = std::chrono::steady_clock::now();
      plan.fill(h, Input::columns_of({a.data(), b.data()}, n));
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (h.total() != n) {
        std::fprintf(stderr, "cpu_joint_probe: %s: counted %llu of %zu points\n", images[image],
                     static_cast<unsigned long long>(h.total()), n);
        return 1;
      }
    }
    std::printf("%-8s %s, %d thread(s): %.1f ms, %.2f GB/s of input\n", images[image], plan.strategy().name,
                threads, best * 1e3, 2.0 * static_cast<double>(n) / best / 1e9);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cpu_joint_probe: %s\n", e.what());
  return 1;
}
