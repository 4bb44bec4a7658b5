// GpuSanitize.*: a small, fast slice of the GPU tests for compute-sanitizer
// (scripts/gpu_sanitize.sh runs it under memcheck, racecheck, synccheck and
// initcheck). It reaches every CUDA strategy of all_strategies(), the library's
// and the lab's, with every sample type and binning kind it takes, at a ragged
// tail, at an unaligned pointer and at a size of several blocks; the pixel and
// weighted kernels; both plan paths (device memory split into pieces, host
// memory staged, and the recovery after an error part-way); the counting sort
// and the sparse histogram.
//
// Every device buffer ends at the last byte the call may touch (samples,
// workspace, counters), so memcheck sees any access past it; every buffer is
// written whole before use (the bytes around an unaligned start included), so
// initcheck flags only memory the library reads before it wrote it. Results
// are checked against the reference too: the slice is an ordinary test as well.
//
// LEVELHIST_SANITIZE_SAMPLES sets the larger size (default 40009: a few blocks
// of every kernel; racecheck's time grows with it). Without a GPU every test
// skips and says why.
#include <gtest/gtest.h>

#if !LEVELHIST_HAVE_CUDA

TEST(GpuSanitize, NeedsACudaBuild) { GTEST_SKIP() << "this build has no CUDA backend (LEVELHIST_CUDA=OFF or no nvcc)"; }

#else

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/plan_impl.hpp"
#include "gpu_test_support.hpp"
#include "levelhist/cuda_sort.hpp"
#include "levelhist/cuda_sparse.hpp"
#include "sort_test_support.hpp"

namespace levelhist::test {
namespace {

constexpr std::uint64_t kTail = 1027;  // a ragged tail for every vector width, tile and warp

std::uint64_t large_samples() {
  if (const char* env = std::getenv("LEVELHIST_SANITIZE_SAMPLES"); env && *env) return std::strtoull(env, nullptr, 0);
  return 40009;
}

// Device memory of exactly `bytes` bytes (at least one), filled with `fill`.
DeviceBytes exact(std::size_t bytes, int fill) {
  DeviceBytes d(std::max<std::size_t>(bytes, 1));
  LEVELHIST_TEST_CUDA(cudaMemset(d.get(), fill, d.size()));
  return d;
}

// `bytes` copied to device memory `offset` bytes past an aligned start, in an
// allocation that ends with them; the bytes before them are written too.
DeviceBytes upload_at(const std::vector<unsigned char>& bytes, std::size_t offset) {
  DeviceBytes d = exact(offset + bytes.size(), 0x5A);
  if (!bytes.empty()) LEVELHIST_TEST_CUDA(cudaMemcpy(d.get() + offset, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  return d;
}

std::vector<std::uint64_t> download_u64(const DeviceBytes& d, std::size_t count) {
  std::vector<std::uint64_t> v(count);
  LEVELHIST_TEST_CUDA(cudaMemcpy(v.data(), d.get(), count * 8, cudaMemcpyDeviceToHost));
  return v;
}

bool all_zero(const DeviceBytes& d, std::size_t bytes) {
  std::vector<unsigned char> host(bytes);
  if (bytes) LEVELHIST_TEST_CUDA(cudaMemcpy(host.data(), d.get(), bytes, cudaMemcpyDeviceToHost));
  return std::all_of(host.begin(), host.end(), [](unsigned char b) { return b == 0; });
}

// Per type: the binning of the most common use first, then the other kinds
// the strategies take (explicit edges; many bins; power-of-two bins of 32-bit
// keys for the bucket sort).
std::vector<NamedBinning> sanitize_binnings(SampleType type) {
  std::vector<NamedBinning> out;
  auto add = [&](const char* name) {
    for (const NamedBinning& nb : standard_binnings(type))
      if (nb.name == name) out.push_back(nb);
  };
  if (sample_size(type) <= 2) add("per_value");
  else if (is_integer(type)) add("even256_full");
  else add("even256_unit");
  add("explicit_uneven");
  if (sample_size(type) == 2) add("even4096_narrow");
  if (!is_integer(type)) add("even65536");
  if (type == SampleType::u32) out.push_back({"pow2_2e20", Binning::even(std::uint64_t{1} << 20, 0, 4294967296.0)});
  if (type == SampleType::i32)
    out.push_back({"pow2_2e20", Binning::even(std::uint64_t{1} << 20, -2147483648.0, 2147483648.0)});
  return out;
}

// Counts n samples of `data` with `s` (device samples at `offset`), checks the
// counts and the workspace; returns false when `s` does not take the problem.
bool count_and_check(const Strategy& s, SampleType type, const Binning& b, const std::vector<unsigned char>& data,
                     std::uint64_t n, std::size_t offset, const std::string& where) {
  n = std::min<std::uint64_t>(n, data.size() / sample_size(type));
  const Problem problem{type, &b, n};
  if (!strategy_accepts(s, problem)) return false;
  const std::size_t bytes = n * sample_size(type);
  const std::vector<unsigned char> head(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(bytes));
  const auto want = reference_slots(type, head.data(), n, b);
  const DeviceBytes d = upload_at(head, offset);
  const std::size_t ws = cuda::workspace_bytes(problem, &s);
  const DeviceBytes workspace = exact(ws, 0);
  const DeviceBytes slots = exact(b.slots() * 8, 0xC3);  // garbage that the call must overwrite
  try {
    cuda::histogram(ws ? workspace.get() : nullptr, ws, d.get() + offset, n, type, b,
                    reinterpret_cast<std::uint64_t*>(slots.get()), false, nullptr, &s);
    LEVELHIST_TEST_CUDA(cudaDeviceSynchronize());
  } catch (const Error& e) {
    ADD_FAILURE() << where << ": threw " << e.what();
    return true;
  }
  EXPECT_TRUE(slots_equal(want, download_u64(slots, b.slots()), b)) << where;
  EXPECT_TRUE(all_zero(workspace, ws)) << where << ": the workspace is not zero after the call";
  return true;
}

TEST(GpuSanitize, EveryStrategyTailsUnalignedAndBlocks) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const std::uint64_t large = large_samples();
  std::map<std::string, int> runs;
  for (const Strategy* s : cuda_strategies()) runs[s->name] = 0;
  for (SampleType type : kAllSampleTypes) {
    bool primary = true;
    for (const NamedBinning& nb : sanitize_binnings(type)) {
      const GenSpec g{type, is_integer(type) ? Dist::uniform_window : Dist::specials, large,
                      seed_for("sanitize " + nb.name), window_around(nb.binning, type), &nb.binning};
      const std::vector<unsigned char> data = generate(g);
      for (const Strategy* s : cuda_strategies()) {
        const std::string where = std::string(s->name) + ", " + nb.name + ", " + describe(g);
        // A ragged tail at an unaligned start with every binning; several
        // blocks' worth, aligned, with the type's first binning.
        runs[s->name] += count_and_check(*s, type, nb.binning, data, kTail, 3, where + ", tail at offset 3");
        if (primary) runs[s->name] += count_and_check(*s, type, nb.binning, data, large, 0, where + ", aligned");
      }
      primary = false;
    }
  }
  // The weighted strategies take weighted problems only: PixelsAndWeights reaches them.
  for (const Strategy* s : cuda_strategies())
    // Weighted, batch-only and N-d-only strategies take no plain counts: the
    // sanitizer sees them through GpuShapes and the weighted tests (scripts/gpu_sanitize.sh).
    if (!(s->capabilities & (kCapabilityWeights | kCapabilitySegments | kCapabilityTiles | kCapabilityAxes))) {
      EXPECT_GT(runs[s->name], 0) << s->name << " was not reached by the slice";
    }
}

TEST(GpuSanitize, PixelsAndWeights) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  std::map<std::string, int> pixel_runs, weighted_runs;
  // Pixels: three channels with channels 0 and 2 active, rows with a pitch, unaligned; four packed.
  struct Frame {
    std::uint32_t channels, active;
    std::uint64_t width, height, pad;
  };
  for (const Frame& f : {Frame{3, 0b101, 37, 5, 5}, Frame{4, 0b1111, 300, 3, 0}}) {
    const SampleType type = SampleType::u8;
    const Binning b = Binning::per_value(type);
    const std::uint64_t pitch = f.width * f.channels + f.pad;
    const std::uint64_t bytes = (f.height - 1) * pitch + f.width * f.channels;
    const GenSpec g{type, Dist::uniform_full, bytes, seed_for("sanitize pixels", f.channels), full_window(type)};
    const std::vector<unsigned char> image = generate(g);
    const PixelLayout layout{f.channels, f.active, f.width, f.height, f.pad ? pitch : 0};
    const std::vector<Histogram> want = histogram_pixels(type, image.data(), layout, b, Options{"cpu_serial", BackendChoice::cpu, 1});
    for (const Strategy* s : cuda_strategies()) {
      if (!strategy_accepts(*s, Problem{type, &b, f.width * f.height * f.channels, layout})) continue;
      const DeviceBytes d = upload_at(image, 1);
      const std::size_t ws = cuda::workspace_bytes_pixels(type, layout, b, s);
      const DeviceBytes workspace = exact(ws, 0), slots = exact(want.size() * b.slots() * 8, 0xC3);
      cuda::histogram_pixels(ws ? workspace.get() : nullptr, ws, d.get() + 1, type, layout, b,
                             reinterpret_cast<std::uint64_t*>(slots.get()), false, nullptr, s);
      LEVELHIST_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = download_u64(slots, want.size() * b.slots());
      for (std::size_t h = 0; h < want.size(); ++h)
        EXPECT_TRUE(slots_equal(want[h].slots(), std::span<const std::uint64_t>(got).subspan(h * b.slots(), b.slots()), b))
            << s->name << ", " << f.channels << " channels, histogram " << h;
      EXPECT_TRUE(all_zero(workspace, ws)) << s->name << ": the workspace is not zero after the call";
      ++pixel_runs[s->name];
    }
  }
  // Weights: small integers, so every order of summation gives the same sums exactly.
  for (SampleType type : {SampleType::u8, SampleType::f32}) {
    for (SampleType wtype : {SampleType::f32, SampleType::f64}) {
      const Binning b = type == SampleType::u8 ? Binning::even(300, 0.0, 256.0) : Binning::even(64, -1.0, 1.0);
      const std::uint64_t n = kTail;
      const GenSpec g{type, is_integer(type) ? Dist::uniform_full : Dist::specials, n, seed_for("sanitize weights"),
                      window_around(b, type), &b};
      const std::vector<unsigned char> samples = generate(g);
      std::vector<unsigned char> weights(n * sample_size(wtype));
      for (std::uint64_t i = 0; i < n; ++i) {
        const double w = static_cast<double>(static_cast<int>(i % 7) - 3);
        if (wtype == SampleType::f32) {
          const float v = static_cast<float>(w);
          std::memcpy(&weights[i * 4], &v, 4);
        } else {
          std::memcpy(&weights[i * 8], &w, 8);
        }
      }
      const WeightedHistogram want = histogram_weighted(type, samples.data(), n, wtype, weights.data(), b,
                                                        Options{"cpu_serial", BackendChoice::cpu, 1});
      for (const Strategy* s : cuda_strategies()) {
        Problem p{type, &b, n};
        p.weighted = true;
        p.weight_type = wtype;
        if (!strategy_accepts(*s, p)) continue;
        const DeviceBytes d = upload_at(samples, 0), dw = upload_at(weights, 0);
        const std::size_t ws = cuda::workspace_bytes_weighted(type, n, wtype, b, s);
        const DeviceBytes workspace = exact(ws, 0), sums = exact(b.slots() * 8, 0xC3);
        cuda::histogram_weighted(ws ? workspace.get() : nullptr, ws, d.get(), n, type, dw.get(), wtype, b,
                                 reinterpret_cast<double*>(sums.get()), false, nullptr, s);
        LEVELHIST_TEST_CUDA(cudaDeviceSynchronize());
        std::vector<double> got(b.slots());
        LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), sums.get(), got.size() * 8, cudaMemcpyDeviceToHost));
        for (std::uint64_t i = 0; i < b.slots(); ++i)
          EXPECT_EQ(got[i], want.slots()[i]) << s->name << ", " << to_string(type) << " samples, " << to_string(wtype)
                                             << " weights, " << slot_name(b, i);
        EXPECT_TRUE(all_zero(workspace, ws)) << s->name << ": the workspace is not zero after the call";
        ++weighted_runs[s->name];
      }
    }
  }
  for (const Strategy* s : cuda_strategies()) {
    if (s->capabilities & kCapabilityPixels) {
      EXPECT_GT(pixel_runs[s->name], 0) << s->name << " counted no pixels";
    }
    if (s->capabilities & kCapabilityWeights) {
      EXPECT_GT(weighted_runs[s->name], 0) << s->name << " summed no weights";
    }
  }
}

// Plan::run split into pieces (rows with a pitch for a strategy that does not
// take rows), Plan::fill staged through pinned buffers (a pitched image
// gathered, weights), and both after an injected error part-way.
TEST(GpuSanitize, PlanPathsAndRecovery) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning b = Binning::per_value(SampleType::u8);
  constexpr std::uint64_t kWidth = 999, kHeight = 6, kPitch = kWidth + 13;
  const GenSpec g{SampleType::u8, Dist::uniform_full, kPitch * kHeight, seed_for("sanitize plan"),
                  full_window(SampleType::u8)};
  const std::vector<unsigned char> image = generate(g);
  std::vector<unsigned char> packed;
  for (std::uint64_t r = 0; r < kHeight; ++r)
    packed.insert(packed.end(), image.begin() + r * kPitch, image.begin() + r * kPitch + kWidth);
  const auto want = reference_slots(SampleType::u8, packed.data(), packed.size(), b);
  const std::uint64_t bytes = (kHeight - 1) * kPitch + kWidth;
  const std::vector<unsigned char> frame_bytes(image.begin(), image.begin() + bytes);
  for (const Strategy* s : cuda_strategies()) {
    if (!strategy_accepts(*s, Problem{SampleType::u8, &b, kWidth * kHeight})) continue;
    Options o;
    o.strategy = s->name;
    o.backend = BackendChoice::cuda;
    std::unique_ptr<Plan> made;
    try {
      made = std::make_unique<Plan>(Request::counts(SampleType::u8, b), o);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unsupported) throw;
      continue;  // takes the calls' problem, not the plan's (n unknown)
    }
    const Plan& plan = *made;
    const DeviceBytes d = upload_at(frame_bytes, 5);
    const Input frame = Input::image(d.get() + 5, kWidth, kHeight, kPitch);
    const std::size_t ws = plan.workspace_bytes(kWidth * kHeight);
    const DeviceBytes workspace = exact(ws, 0), slots = exact(b.slots() * 8, 0xC3);
    for (unsigned fault_after : {1u, 0u}) {  // a failed call first, then one that must count right
      levelhist::detail::inject_cuda_fault_after(fault_after);
      try {
        plan.run(frame, slots.get(), false, ws ? workspace.get() : nullptr, ws);
        EXPECT_EQ(fault_after, 0u) << s->name << ": the injected fault did not come";
      } catch (const Error& e) {
        EXPECT_NE(fault_after, 0u) << s->name << ": " << e.what();
      }
      levelhist::detail::inject_cuda_fault_after(0);
      LEVELHIST_TEST_CUDA(cudaDeviceSynchronize());
      EXPECT_TRUE(all_zero(workspace, ws)) << s->name << ": the workspace is not zero after the call";
    }
    EXPECT_TRUE(slots_equal(want, download_u64(slots, b.slots()), b)) << s->name << ", Plan::run";
    // The host path: the frame gathered, a failed call, then a good one.
    Histogram h(b);
    levelhist::detail::inject_cuda_fault_after(1);
    EXPECT_THROW(plan.fill(h, Input::image(image.data(), kWidth, kHeight, kPitch)), Error) << s->name;
    levelhist::detail::inject_cuda_fault_after(0);
    plan.fill(h, Input::image(image.data(), kWidth, kHeight, kPitch));
    EXPECT_TRUE(slots_equal(want, h.slots(), b)) << s->name << ", Plan::fill";
  }
  // Weights through the host path.
  const Binning wb = Binning::even(10, 0.0, 256.0);
  std::vector<double> w(packed.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i % 5);
  const Plan weighted(Request::weighted(SampleType::u8, SampleType::f64, wb), Options{"auto", BackendChoice::cuda, 0});
  WeightedHistogram got(wb);
  weighted.fill(got, Input::array(packed.data(), packed.size(), w.data()));
  const WeightedHistogram ref = histogram_weighted(SampleType::u8, packed.data(), packed.size(), SampleType::f64,
                                                   w.data(), wb, Options{"cpu_serial", BackendChoice::cpu, 1});
  EXPECT_EQ(got, ref);
}

TEST(GpuSanitize, CountingSortAndSparseHistogram) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  for (SampleType type : kSortTypes) {
    const GenSpec g{type, Dist::uniform_full, kTail, seed_for("sanitize sort"), full_window(type)};
    const std::vector<unsigned char> in = generate(g);
    std::size_t need = 0;
    cuda::counting_sort(nullptr, need, type, nullptr, nullptr, kTail);
    const DeviceBytes temp = exact(need, 0), d_in = upload_at(in, 0), d_out = exact(in.size() + 1, 0xA5);
    std::size_t have = need;
    cuda::counting_sort(temp.get(), have, type, d_in.get(), d_out.get() + 1, kTail);
    std::vector<unsigned char> got(in.size());
    LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), d_out.get() + 1, got.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(sorted_diff(type, std_sorted(type, in), got.data()), "") << to_string(type);
    EXPECT_TRUE(all_zero(temp, need)) << to_string(type) << ": the temporary storage is not zero after the sort";
  }
  for (KeyType type : kAllKeyTypes) {
    const KeyCase c = key_case(type, "few", kTail);
    std::size_t need = 0;
    cuda::sparse_histogram(nullptr, need, type, nullptr, c.n(), nullptr, nullptr, nullptr);
    const DeviceBytes temp = exact(need, 0), keys = upload_at(c.bytes, 0), values = exact(c.bytes.size(), 0),
                      counts = exact(c.n() * 8, 0), pairs = exact(8, 0);
    cuda::sparse_histogram(temp.get(), need, type, keys.get(), c.n(), values.get(),
                           reinterpret_cast<std::uint64_t*>(counts.get()), reinterpret_cast<std::uint64_t*>(pairs.get()));
    std::uint64_t p = 0;
    LEVELHIST_TEST_CUDA(cudaMemcpy(&p, pairs.get(), 8, cudaMemcpyDeviceToHost));
    const std::vector<ValueCount> want = map_counts(type, c.bytes);
    EXPECT_EQ(p, want.size()) << c.name;
    // The host path too.
    EXPECT_EQ(pairs_diff(want, sparse_histogram(type, c.bytes.data(), c.n(), Options{"auto", BackendChoice::cuda, 0})), "")
        << c.name;
  }
}

}  // namespace
}  // namespace levelhist::test

#endif  // LEVELHIST_HAVE_CUDA
