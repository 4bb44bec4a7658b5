// levelhist bench: the sections of the GPU benchmark and the run that strings
// them together. Each section is a short function over datasets, a binning and
// the harness; the building blocks below (a size sweep of one dataset, one
// point per dataset) are what a new section (u16 with 4096 bins, f32, RGBA,
// small-n latency, auto's choice) is made of.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "datasets.hpp"
#include "gpu_bench.hpp"
#include "options.hpp"

namespace levelhist::bench {

// What the sections measure: the points of each sweep.
struct SectionPoints {
  std::vector<std::uint64_t> sizes;            // sizes: n
  std::uint64_t distinct_n = 0;                // distinct: n of every point
  std::vector<unsigned> distinct_counts;       // distinct: values per point
  std::vector<std::uint64_t> image_sides;      // images: side of the square tiling
  std::uint64_t headline_n = 0;                // headline: n of every column
  std::vector<std::uint64_t> latency_sizes;    // latency: n
  std::uint64_t auto_n = 0;                    // auto: bytes of the large cases
  static SectionPoints make(bool quick);
};

// One dataset at growing n (ascending): the data is made once at the largest
// n and every point counts a prefix of it, so the CPU reference grows with it.
void sweep_sizes(GpuBench& bench, const std::string& section, const Dataset& dataset, const Binning& binning,
                 std::span<const std::uint64_t> sizes);
// One dataset at one n, as the point x of a series; unless `reuse` is false,
// a measurement of the same dataset, binning and n from an earlier section is
// reused instead of measured again.
void measure_point(GpuBench& bench, const CaseLabel& label, const Dataset& dataset, const Binning& binning,
                   std::uint64_t n, bool reuse = true);

// The benchmark: loads the images, runs the sections of `options`, prints the
// report; returns the exit status (1 when anything failed).
int run_gpu_benchmark(const BenchOptions& options);

}  // namespace levelhist::bench
