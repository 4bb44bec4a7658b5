#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include "bench.hpp"
#include "gpu_sections.hpp"
#include "levelhist/error.hpp"
#include "reference.hpp"
#include "report.hpp"

namespace levelhist::bench {
namespace {

constexpr std::uint64_t pow2(unsigned e) { return std::uint64_t{1} << e; }

// Most sections count bytes into one bin per value.
Binning byte_bins() { return Binning::per_value(SampleType::u8); }

// k uneven bins over [0.1, 1): e_i = 0.1 + 0.9 (i/k)^2, narrow near 0.1.
Binning uneven_edges(unsigned k) {
  std::vector<double> edges(k + 1);
  for (unsigned i = 0; i <= k; ++i) edges[i] = 0.1 + 0.9 * (double(i) / k) * (double(i) / k);
  return Binning::explicit_edges(std::move(edges));
}

// The inputs of the benchmark that come from files (or from the generator), loaded before
// any GPU time is spent, so a missing file stops the run at once.
struct Images {
  Image coins, camera, synthetic;
};

Images load_images(const BenchOptions& o) {
  const std::filesystem::path dir = find_data_dir(o.data_dir);
  return {read_pgm((dir / "coins.pgm").string()), read_pgm((dir / "camera.pgm").string()),
          smooth_synthetic_image(512, 512, o.seed)};
}

void sizes_section(GpuBench& bench, const SectionPoints& plan, const BenchOptions& o) {
  bench.begin_section({"sizes", "GB/s against n, u8 samples, 256 bins (Brown & Snoeyink, TRISH, Fig. 6)",
                       "n (samples = bytes)", XKind::samples});
  const Binning bins = byte_bins();
  for (const Dataset& d : {zeros(SampleType::u8), uniform(SampleType::u8, o.seed), linear_bytes()})
    sweep_sizes(bench, "sizes", d, bins, plan.sizes);
}

void distinct_section(GpuBench& bench, const SectionPoints& plan, const BenchOptions& o) {
  bench.begin_section({"distinct",
                       "GB/s against the number of distinct random values, n = 2^" +
                           std::to_string(std::countr_zero(plan.distinct_n)) +
                           ", u8, 256 bins (Wilt part 1, Table 3, its --random parameter)",
                       "distinct values", XKind::count});
  const Binning bins = byte_bins();
  for (unsigned count : plan.distinct_counts) {
    Dataset d = distinct_bytes(count, o.seed);
    measure_point(bench, {"distinct", "distinct values", static_cast<double>(count), d.name}, d, bins,
                  plan.distinct_n);
  }
}

void images_section(GpuBench& bench, const SectionPoints& plan, const Images& images) {
  bench.begin_section({"images",
                       "natural photographs and a smooth synthetic image, tiled, u8, 256 bins "
                       "(Brown & Snoeyink, TRISH, Fig. 7)",
                       "image side (side x side pixels)", XKind::side});
  const Binning bins = byte_bins();
  for (const Image* image : {&images.coins, &images.camera, &images.synthetic}) {
    Dataset d = tiled_image(*image);
    for (std::uint64_t side : plan.image_sides)
      measure_point(bench, {"images", image->name, static_cast<double>(side), d.name}, d, bins, side * side);
  }
}

void headline_section(GpuBench& bench, const SectionPoints& plan, const BenchOptions& o, const Images& images) {
  bench.begin_section({"headline",
                       "1 GiB resident on the GPU, each distribution; the photograph is coins.pgm tiled", "",
                       XKind::none});
  const Binning bins = byte_bins();
  const std::vector<Dataset> columns = {uniform(SampleType::u8, o.seed), zeros(SampleType::u8),
                                        distinct_bytes(1, o.seed),      distinct_bytes(2, o.seed),
                                        distinct_bytes(4, o.seed),      distinct_bytes(16, o.seed),
                                        linear_bytes(),                 tiled_image(images.coins)};
  for (const Dataset& d : columns)
    measure_point(bench, {"headline", "headline", static_cast<double>(plan.headline_n), d.name}, d, bins,
                  plan.headline_n);
}

// The small-input figures of the headline 256-bin kernel: one call's time as a
// caller in a loop sees it (launch included), against CUB's two-kernel calls
// (12.2 us at 4 KiB .. 135 us at 256 MiB on an H200, measured before
// levelhist had its own small-call path).
void latency_section(GpuBench& bench, const SectionPoints& plan, const BenchOptions& o) {
  bench.begin_section({"latency", "microseconds per call, back to back, u8 uniform, 256 bins", "n (samples = bytes)",
                       XKind::samples, Metric::microseconds});
  sweep_sizes(bench, "latency", uniform(SampleType::u8, o.seed), byte_bins(), plan.latency_sizes);
}

// `auto` against the measured best, one case per problem class: the rule in the
// strategies' auto_rank functions is only as good as this table says.
void auto_section(GpuBench& bench, const SectionPoints& plan, const BenchOptions& o) {
  bench.begin_section({"auto", "auto's choice next to the measured best", "case", XKind::none, Metric::auto_choice});
  struct Case {
    std::string name;
    Dataset dataset;
    Binning binning;
    std::uint64_t n;
  };
  const std::uint64_t big = plan.auto_n;
  std::vector<Case> cases = {
      {"u8 per value, uniform, 1 GiB", uniform(SampleType::u8, o.seed), byte_bins(), big},
      {"u8 per value, zeros, 1 GiB", zeros(SampleType::u8), byte_bins(), big},
      {"u8 per value, uniform, 1 MiB", uniform(SampleType::u8, o.seed), byte_bins(), pow2(20)},
      {"u8 64 even bins over [0, 256), uniform", uniform(SampleType::u8, o.seed), Binning::even(64, 0, 256), big},
      {"i8 per value, uniform", uniform(SampleType::i8, o.seed), Binning::per_value(SampleType::i8), big},
      {"u16 per value, uniform", uniform(SampleType::u16, o.seed), Binning::per_value(SampleType::u16), big / 2},
      {"u16 4096 even bins, uniform", uniform(SampleType::u16, o.seed), Binning::even(4096, 0, 65536), big / 2},
      {"u16 4096 even bins, zeros", zeros(SampleType::u16), Binning::even(4096, 0, 65536), big / 2},
      {"f32 1024 even bins over [0, 1), uniform", uniform(SampleType::f32, o.seed), Binning::even(1024, 0, 1), big / 4},
      {"f32 64 explicit edges, uniform", uniform(SampleType::f32, o.seed), uneven_edges(64), big / 4},
      {"i32 1000 even bins, uniform", uniform(SampleType::i32, o.seed), Binning::even(1000, -2147483648.0, 2147483648.0),
       big / 4},
      {"f64 256 even bins, uniform", uniform(SampleType::f64, o.seed), Binning::even(256, 0, 1), big / 8},
  };
  for (const Case& c : cases)
    measure_point(bench, {"auto", c.name, 0, c.dataset.name}, c.dataset, c.binning, c.n, false);
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void write_outputs(const BenchOptions& o, Results& results, Clock::time_point start) {
  results.wall_seconds = seconds_since(start);
  if (!o.out_dir.empty()) write_all_formats(o.out_dir, results);
}

}  // namespace

SectionPoints SectionPoints::make(bool quick) {
  SectionPoints p;
  // TRISH (Brown & Snoeyink, §6) sweeps n = 8192 .. 2^28; this goes on to
  // 2^30, the headline's size, which --quick keeps too (every 4th power
  // counted down from it).
  for (unsigned e = quick ? 14 : 13; e <= 30; e += quick ? 4 : 1) p.sizes.push_back(pow2(e));
  p.distinct_n = pow2(28);
  for (unsigned k = 1; k <= 256; k *= quick ? 4 : 2) p.distinct_counts.push_back(k);
  for (std::uint64_t side = 256; side <= 4096; side *= quick ? 4 : 2) p.image_sides.push_back(side);
  p.headline_n = pow2(30);
  // The middle sizes, 4-32 MiB, are most real calls (a photograph, a video frame).
  p.latency_sizes = {pow2(12), pow2(16), pow2(20), pow2(21), pow2(22), pow2(23), pow2(24), pow2(25), pow2(28)};
  p.auto_n = quick ? pow2(28) : pow2(30);
  return p;
}

void sweep_sizes(GpuBench& bench, const std::string& section, const Dataset& dataset, const Binning& binning,
                 std::span<const std::uint64_t> sizes) {
  if (sizes.empty()) return;
  HostSamples input = dataset.make(sizes.back());
  bench.upload(input);
  CpuReference reference(input, binning);
  for (std::uint64_t n : sizes)
    bench.run_case({section, dataset.name, static_cast<double>(n), dataset.name}, n, binning,
                   reference.of_first(n));
}

void measure_point(GpuBench& bench, const CaseLabel& label, const Dataset& dataset, const Binning& binning,
                   std::uint64_t n, bool reuse) {
  if (reuse && bench.reuse_case(label, dataset.type, n, binning)) return;
  HostSamples input = dataset.make(n);
  bench.upload(input);
  CpuReference reference(input, binning);
  bench.run_case(label, n, binning, reference.of_first(n));
}

int run_gpu_benchmark(const BenchOptions& o) {
  const auto start = Clock::now();
  auto wants = [&](const char* name) { return std::find(o.sections.begin(), o.sections.end(), name) != o.sections.end(); };
  Images images;
  if (wants("images") || wants("headline")) images = load_images(o);

  GpuBench bench(o);
  const SectionPoints plan = SectionPoints::make(o.quick);
  std::fprintf(stderr, "levelhist bench on %s\n", bench.results().device.describe().c_str());

  // A device fault stops the sections, but what was measured until then is still reported.
  std::string fatal;
  try {
    using Section = std::function<void()>;
    const std::pair<const char*, Section> sections[] = {
        {"sizes", [&] { sizes_section(bench, plan, o); }},
        {"distinct", [&] { distinct_section(bench, plan, o); }},
        {"images", [&] { images_section(bench, plan, images); }},
        {"latency", [&] { latency_section(bench, plan, o); }},
        {"auto", [&] { auto_section(bench, plan, o); }},
        {"headline", [&] { headline_section(bench, plan, o, images); }},
    };
    for (const auto& [name, run] : sections) {
      if (!wants(name)) continue;
      const auto section_start = Clock::now();
      run();
      std::fprintf(stderr, "== %s done in %.0f s\n", name, seconds_since(section_start));
      write_outputs(o, bench.results(), start);  // a run cut short still leaves its finished sections on disk
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::cuda) throw;
    fatal = e.what();
  }

  Results& results = bench.results();
  write_outputs(o, results, start);
  write_report(std::cout, results, o.format);
  std::cout.flush();
  if (!o.out_dir.empty()) std::fprintf(stderr, "levelhist bench: wrote bench.md, bench.csv, bench.json to %s\n", o.out_dir.c_str());
  if (!o.plot_dir.empty())
    for (const std::string& path : write_plots(o.plot_dir, results))
      std::fprintf(stderr, "levelhist bench: wrote %s\n", path.c_str());

  if (!fatal.empty()) {
    print_error("bench: " + fatal, "the results so far are above; check the GPU (nvidia-smi) and run again");
    return 1;
  }
  if (bench.any_failure()) {
    print_error("bench: " + std::to_string(results.failures.size()) + " strategy runs FAILED",
                "see the FAILED list above: those strategies' results differ from the CPU's");
    return 1;
  }
  return 0;
}

}  // namespace levelhist::bench
