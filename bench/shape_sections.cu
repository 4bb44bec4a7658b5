// levelhist bench --shapes (shape_sections.hpp): the batch, N-d and
// deterministic-sum kernels on device memory through Plan::run, timed with
// GpuTimer (CUDA events) beside the streaming-read limit and CUB where CUB
// has an equivalent; into one Results, printed by report.hpp.
#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>

#include "../tools/args.hpp"
#include "bench.hpp"
#include "cuda/cuda_common.cuh"
#include "gpu_bench.hpp"
#include "gpu_timer.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"
#include "report.hpp"
#include "shape_sections.hpp"
#include "side_bench.cuh"
#include "stream_read.hpp"

namespace levelhist::bench {
namespace {

using u64 = std::uint64_t;

u64 mix64(u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Runner : SideBench {
  using SideBench::SideBench;
  DeviceMemory sink{256};

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

  // One checked call, then GpuTimer's warm-up and samples.
  void gpu(Measurement m, const EnqueueCall& call, const std::function<std::string()>& check) {
    const double first_ms = timer->time_calls(call, 0, 1);
    const std::string wrong = check ? check() : "";
    if (wrong.empty()) m.timing = timer->measure(call, 1, first_ms, policy);
    record(std::move(m), wrong);
  }

  // The streaming-read limit of the buffers: each read once.
  void limit(Measurement m, const std::vector<std::pair<const void*, u64>>& buffers) {
    m.strategy = kLimitName;
    gpu(m, [&, buffers](u64) {
      for (const auto& [p, bytes] : buffers) stream_read(p, bytes, sink.get<unsigned>(), stream);
    }, nullptr);
  }

  // A plan's Plan::run on device memory, checked against `want` (8-byte
  // values) on the first call. With `odd_calls`, calls 1, 3, 5, ... count it
  // instead of `input`.
  void plan_run(Measurement m, const Plan& plan, const Input& input, u64 n, const std::vector<u64>& want,
                const Input* odd_calls = nullptr) {
    m.strategy = plan.strategy().name;
    const u64 values = plan.request().output_slots();
    const std::size_t ws_bytes = std::max<std::size_t>(plan.workspace_bytes(n), 256);
    DeviceMemory ws(ws_bytes), out(values * 8);
    LEVELHIST_CUDA_CHECK(cudaMemset(ws.get(), 0, ws_bytes));
    gpu(m, [&](u64 call) {
      plan.run(odd_calls && call % 2 ? *odd_calls : input, out.get(), false, ws.get(), ws_bytes, stream);
    }, [&]() -> std::string {
      LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<u64> got(values);
      LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), values * 8, cudaMemcpyDeviceToHost));
      for (u64 i = 0; i < values; ++i)
        if (got[i] != want[i]) return "value " + std::to_string(i) + " differs from the CPU's";
      return "";
    });
  }
};

std::string summary_of(const char* name) {
  const Strategy* s = find_strategy(name);
  return s ? s->summary : "not in this build";
}

Options cuda_strategy(const char* name) {
  Options o;
  o.strategy = name;
  o.backend = BackendChoice::cuda;
  return o;
}
Options cpu_auto() {
  Options o;
  o.backend = BackendChoice::cpu;
  return o;
}

// ---- batches ------------------------------------------------------------------------------

void batch_section(Runner& r, u64 bytes) {
  const std::string name = "batches";
  r.bench.begin_section({name, "batches of u8 histograms (256 bins), " + std::to_string(bytes >> 20) + " MiB in all",
                         "", XKind::none});
  const Binning bins = Binning::per_value(SampleType::u8);
  std::vector<std::uint8_t> host(bytes);
  for (u64 i = 0; i < bytes; i += 8) {
    const u64 v = mix64(i);
    std::memcpy(host.data() + i, &v, std::min<u64>(8, bytes - i));
  }
  DeviceMemory d(bytes);
  LEVELHIST_CUDA_CHECK(cudaMemcpy(d.get(), host.data(), bytes, cudaMemcpyHostToDevice));
  for (u64 segment : {u64{4} << 10, u64{16} << 10, u64{64} << 10, u64{1} << 20, u64{16} << 20}) {
    const u64 segments = bytes / segment;
    const std::string dataset = "equal segments of " + std::to_string(segment >> 10) + " KiB";
    const Measurement p = proto(name, dataset, std::to_string(segments) + " histograms", bytes, bytes);
    r.limit(p, {{d.get(), bytes}});
    const Request req = Request::segments(SampleType::u8, bins, segments);
    std::vector<u64> want(req.output_slots(), 0);
    Plan(req, cpu_auto()).fill_slots(want.data(), Input::array(host.data(), bytes), false);
    r.plan_run(p, Plan(req, cuda_strategy("gpu_segments")), Input::array(d.get(), bytes), bytes, want);
    // CUB: one HistogramEven call per segment (256 int counters each; no flow slots).
    DeviceMemory counts(segments * 256 * 4);
    std::size_t temp_bytes = 0;
    LEVELHIST_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, d.get<const std::uint8_t>(),
                                                             counts.get<int>(), 257, 0, 256, static_cast<int>(segment)));
    DeviceMemory temp(temp_bytes);
    Measurement m = p;
    m.strategy = kBaselineName;
    m.note = "a loop of " + std::to_string(segments) + " cub::DeviceHistogram::HistogramEven calls";
    r.gpu(m, [&](u64) {
      for (u64 s = 0; s < segments; ++s) {
        std::size_t t = temp_bytes;
        LEVELHIST_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp.get(), t, d.get<const std::uint8_t>() + s * segment,
                                                                 counts.get<int>() + s * 256, 257, 0, 256,
                                                                 static_cast<int>(segment), r.stream));
      }
    }, [&]() -> std::string {
      std::vector<int> got(segments * 256);
      LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(r.stream));
      LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), counts.get(), got.size() * 4, cudaMemcpyDeviceToHost));
      for (u64 s = 0; s < segments; ++s)
        for (u64 v = 0; v < 256; ++v)
          if (static_cast<u64>(got[s * 256 + v]) != want[s * bins.slots() + v]) return "CUB's counts differ";
      return "";
    });
  }
  {  // level: the same segments of 64 KiB, every byte the same
    const u64 segment = u64{64} << 10, segments = bytes / segment;
    const Measurement p = proto(name, "equal segments of 64 KiB, constant", std::to_string(segments) + " histograms",
                                bytes, bytes);
    DeviceMemory c(bytes);
    LEVELHIST_CUDA_CHECK(cudaMemset(c.get(), 0x5c, bytes));
    r.limit(p, {{c.get(), bytes}});
    const Request req = Request::segments(SampleType::u8, bins, segments);
    std::vector<u64> want(req.output_slots(), 0);
    const std::vector<std::uint8_t> same(bytes, 0x5c);
    Plan(req, cpu_auto()).fill_slots(want.data(), Input::array(same.data(), bytes), false);
    r.plan_run(p, Plan(req, cuda_strategy("gpu_segments")), Input::array(c.get(), bytes), bytes, want);
  }
  // Segments by offsets, counted against the CPU's counts first.
  auto offsets_case = [&](const std::string& dataset, const std::vector<u64>& offsets) {
    const u64 segments = offsets.size() - 1;
    const Measurement p = proto(name, dataset, std::to_string(segments) + " histograms", bytes, bytes);
    r.limit(p, {{d.get(), bytes}});
    const Request req = Request::segments_by_offsets(SampleType::u8, bins, segments);
    std::vector<u64> want(req.output_slots(), 0);
    Plan(req, cpu_auto()).fill_slots(want.data(), Input::segments(host.data(), bytes, offsets.data()), false);
    DeviceMemory d_offsets(offsets.size() * 8);
    LEVELHIST_CUDA_CHECK(cudaMemcpy(d_offsets.get(), offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice));
    r.plan_run(p, Plan(req, cuda_strategy("gpu_segments")),
               Input::segments(d.get(), bytes, d_offsets.get<const u64>()), bytes, want);
  };
  {  // random lengths of 0 to 8 KiB
    std::mt19937_64 rng(7);
    std::vector<u64> offsets = {0};
    while (offsets.back() < bytes) offsets.push_back(std::min<u64>(bytes, offsets.back() + rng() % (8 << 10)));
    offsets_case("offsets, 0-8 KiB each", offsets);
  }
  {  // level: half the bytes in one segment, the rest in segments of 0-2 KiB
     // (short on average, so a rule on the average length alone would give
     // the long one to one warp)
    std::mt19937_64 rng(8);
    std::vector<u64> offsets = {0, bytes / 2};
    while (offsets.back() < bytes) offsets.push_back(std::min<u64>(bytes, offsets.back() + rng() % (2 << 10)));
    offsets_case("offsets, one of half the bytes, 0-2 KiB", offsets);
  }
  {  // 8 x 8 tiles of a square image
    u64 side = 1;
    while (side * side * 4 <= bytes) side *= 2;
    const u64 pixels = side * side;
    const Measurement p = proto(name, "8 x 8 tiles of " + std::to_string(side) + "^2", "64 histograms", pixels, pixels);
    r.limit(p, {{d.get(), pixels}});
    const Request req = Request::tiles(SampleType::u8, bins, 8, 8);
    std::vector<u64> want(req.output_slots(), 0);
    Plan(req, cpu_auto()).fill_slots(want.data(), Input::image(host.data(), side, side), false);
    r.plan_run(p, Plan(req, cuda_strategy("gpu_segments")), Input::image(d.get(), side, side), pixels, want);
  }
}

// ---- N-d ------------------------------------------------------------------------------------

void joint_section(Runner& r, u64 bytes) {
  const std::string name = "joint";
  r.bench.begin_section({name, "N-d histograms: two u8 images (256 x 256 bins) and f32 points (100 x 100 bins)", "",
                         XKind::none});
  const Binning u8 = Binning::per_value(SampleType::u8);
  const u64 n = bytes / 2;  // pixels per image
  std::vector<std::uint8_t> a(n), b(n);
  DeviceMemory da(n), db(n);
  // "two values": masks of 0 and 255 at random, four pairs in all (a
  // segmentation against a segmentation: the pairs' counters hit by many
  // lanes of a warp at once).
  for (const std::string dataset : {"noise", "constant", "b = a / 2", "two values"}) {
    for (u64 i = 0; i < n; ++i) {
      a[i] = dataset == "constant"     ? 100
             : dataset == "two values" ? static_cast<std::uint8_t>(mix64(i) >> 63 ? 255 : 0)
                                       : static_cast<std::uint8_t>(mix64(i));
      b[i] = dataset == "constant"     ? 7
             : dataset == "noise"      ? static_cast<std::uint8_t>(mix64(i ^ 0x777))
             : dataset == "two values" ? static_cast<std::uint8_t>(mix64(i ^ 0x777) >> 63 ? 255 : 0)
                                       : a[i] / 2;
    }
    LEVELHIST_CUDA_CHECK(cudaMemcpy(da.get(), a.data(), n, cudaMemcpyHostToDevice));
    LEVELHIST_CUDA_CHECK(cudaMemcpy(db.get(), b.data(), n, cudaMemcpyHostToDevice));
    const Measurement p = proto(name, "u8 pairs, " + dataset, "256 x 256 joint", n, 2 * n);
    r.limit(p, {{da.get(), n}, {db.get(), n}});
    const Request req = Request::joint(SampleType::u8, {u8, u8});
    std::vector<u64> want(req.output_slots(), 0);
    Plan(req, cpu_auto()).fill_slots(want.data(), Input::columns_of({a.data(), b.data()}, n), false);
    r.plan_run(p, Plan(req, cuda_strategy("gpu_joint")), Input::columns_of({da.get(), db.get()}, n), n, want);
  }
  const u64 points = bytes / 8;
  std::vector<float> xy(2 * points);
  DeviceMemory dxy(bytes);
  const Binning hundred = Binning::even(100, 0.0, 1.0);
  for (const std::string dataset : {"uniform", "constant"}) {
    for (u64 i = 0; i < 2 * points; ++i)
      xy[i] = dataset == "constant" ? 0.37f : static_cast<float>(mix64(i) >> 40) * 0x1p-24f;
    LEVELHIST_CUDA_CHECK(cudaMemcpy(dxy.get(), xy.data(), bytes, cudaMemcpyHostToDevice));
    const Measurement p = proto(name, "f32 (x, y), " + dataset, "100 x 100 even bins", points, bytes);
    r.limit(p, {{dxy.get(), bytes}});
    const Request req = Request::joint(SampleType::f32, {hundred, hundred});
    std::vector<u64> want(req.output_slots(), 0);
    Plan(req, cpu_auto()).fill_slots(want.data(), Input::array(xy.data(), points), false);
    r.plan_run(p, Plan(req, cuda_strategy("gpu_joint")), Input::array(dxy.get(), points), points, want);
  }
}

// ---- deterministic sums ------------------------------------------------------------------

void weighted_section(Runner& r, u64 n) {
  const std::string name = "deterministic";
  r.bench.begin_section({name, "weighted sums, f32 samples and f32 weights, 256 bins: deterministic vs today's", "",
                         XKind::none});
  const Binning bins = Binning::even(256, 0.0, 1.0);
  std::vector<float> x(n), w(n);
  DeviceMemory dx(n * 4), dw(n * 4);
  for (const std::string dataset : {"uniform", "constant"}) {
    for (u64 i = 0; i < n; ++i) {
      x[i] = dataset == "constant" ? 0.5f : static_cast<float>(mix64(i) >> 40) * 0x1p-24f;
      w[i] = static_cast<float>(mix64(i ^ 0xABC) >> 40) * 0x1p-23f - 1.0f;
    }
    LEVELHIST_CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), n * 4, cudaMemcpyHostToDevice));
    LEVELHIST_CUDA_CHECK(cudaMemcpy(dw.get(), w.data(), n * 4, cudaMemcpyHostToDevice));
    const Measurement p = proto(name, dataset, "f32 + f32 weights", n, n * 8);
    r.limit(p, {{dx.get(), n * 4}, {dw.get(), n * 4}});
    Request det = Request::weighted(SampleType::f32, SampleType::f32, bins);
    det.deterministic = true;
    std::vector<u64> want(det.output_slots(), 0);  // the reference's doubles, as bits
    Plan(det, Options{"cpu_serial", BackendChoice::cpu, 0}).fill_slots(want.data(), Input::array(x.data(), n, w.data()), false);
    r.plan_run(p, Plan(det, cuda_strategy("gpu_weighted_exact")), Input::array(dx.get(), n, dw.get()), n, want);
    if (dataset == "uniform") {
      // The worst case for the plan's guess of the bound: calls alternate
      // between w and 4 w, whose largest |weight| differ in exponent, so
      // every call after the first either misses (counts twice) or, after a
      // miss, finds its bound before it counts. Checked on the first call (w).
      DeviceMemory dw4(n * 4);
      std::vector<float> w4(w);
      for (float& v : w4) v *= 4.0f;
      LEVELHIST_CUDA_CHECK(cudaMemcpy(dw4.get(), w4.data(), n * 4, cudaMemcpyHostToDevice));
      const Measurement m = proto(name, "uniform, weights w and 4 w by turns", "f32 + f32 weights", n, n * 8);
      r.limit(m, {{dx.get(), n * 4}, {dw.get(), n * 4}});
      const Input w4_input = Input::array(dx.get(), n, dw4.get());
      r.plan_run(m, Plan(det, cuda_strategy("gpu_weighted_exact")), Input::array(dx.get(), n, dw.get()), n, want,
                 &w4_input);
    }
    // Today's kernel: sums in double whose last bits depend on the order; checked loosely.
    const Plan today(Request::weighted(SampleType::f32, SampleType::f32, bins), cuda_strategy("gpu_weighted_shared"));
    Measurement m = p;
    m.strategy = today.strategy().name;
    const std::size_t ws_bytes = std::max<std::size_t>(today.workspace_bytes(n), 256);
    DeviceMemory ws(ws_bytes), out(bins.slots() * 8);
    LEVELHIST_CUDA_CHECK(cudaMemset(ws.get(), 0, ws_bytes));
    r.gpu(m, [&](u64) { today.run(Input::array(dx.get(), n, dw.get()), out.get(), false, ws.get(), ws_bytes, r.stream); },
          [&]() -> std::string {
            LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(r.stream));
            std::vector<double> got(bins.slots()), ref(bins.slots());
            LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size() * 8, cudaMemcpyDeviceToHost));
            std::memcpy(ref.data(), want.data(), ref.size() * 8);
            for (u64 s = 0; s < got.size(); ++s)
              if (std::fabs(got[s] - ref[s]) > 1e-6 * (1 + std::fabs(ref[s]))) return "sum " + std::to_string(s) + " is off";
            return "";
          });
  }
}

}  // namespace

int shape_bench_main(const std::vector<std::string>& args) {
  const std::vector<std::string> all = {"batches", "joint", "deterministic"};
  std::vector<std::string> rest = args;
  const std::vector<std::string> sections =
      take_name_list(rest, "--sections", all, "see levelhist bench --shapes --help");
  auto wanted = [&](const char* name) { return std::find(sections.begin(), sections.end(), name) != sections.end(); };
  std::uint64_t mib = 0;  // 0: 256 MiB, 64 MiB with --quick
  for (auto it = rest.begin(); it != rest.end();) {
    if (*it == "--mib" || it->rfind("--mib=", 0) == 0) {
      const bool joined = *it != "--mib";
      const std::string value = joined ? it->substr(6) : (it + 1 != rest.end() ? *(it + 1) : "");
      mib = cli::parse_count("--mib", value, 16, 16384);
      it = rest.erase(it, it + (joined || it + 1 == rest.end() ? 1 : 2));
      continue;
    }
    ++it;
  }
  BenchOptions o;
  if (const auto status = begin_gpu_mode(rest, "--shapes",
                                         "Usage: levelhist bench --shapes [--sections LIST] [--quick] [OPTION]...\n"
                                         "Batches (segments, offsets, tiles), N-d histograms (joint u8, 2-D f32) and "
                                         "deterministic\nweighted sums, beside the read limit and CUB where it has an "
                                         "equivalent; see\nbench/shape_sections.hpp.\n"
                                         "  --sections LIST  some of batches,joint,deterministic (default: all)\n"
                                         "  --mib N          the data of a case, 16 to 16384 MiB (default 256; 64 with --quick)\n\n",
                                         o))
    return *status;
  GpuBench bench(o);
  std::fprintf(stderr, "levelhist bench --shapes on %s\n", bench.results().device.describe().c_str());
  Runner r(bench, o);
  bench.results().strategies.clear();
  r.describe("limit", "stream_read of every input buffer once: the least any histogram reads");
  r.describe("cub", "a loop of cub::DeviceHistogram::HistogramEven calls, one per segment (CUB has no batched histogram)");
  r.describe("gpu_segments", summary_of("gpu_segments"));
  r.describe("gpu_joint", summary_of("gpu_joint"));
  r.describe("gpu_weighted_exact", summary_of("gpu_weighted_exact"));
  r.describe("gpu_weighted_shared", summary_of("gpu_weighted_shared"));
  const u64 bytes = mib ? mib << 20 : o.quick ? u64{64} << 20 : u64{256} << 20;
  std::string fatal;
  try {
    if (wanted("batches")) batch_section(r, bytes);
    if (wanted("joint")) joint_section(r, bytes);
    if (wanted("deterministic")) weighted_section(r, bytes / 8);
  } catch (const Error& e) {
    fatal = e.what();
  }
  return finish_side_run("levelhist bench --shapes", bench, o, fatal);
}

}  // namespace levelhist::bench
