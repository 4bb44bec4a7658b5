// The adversarial axis: every strategy of all_strategies() (CPU and CUDA,
// library and lab) against the reference cpu_serial, slot for slot, on
//  * the adversarial shapes of test_support.hpp (kAdversarialDists): Zipf and
//    a power law over the bins, one hot bin with rare others, a sawtooth, every
//    32nd value (one shared-memory bank), sorted runs, samples on every edge;
//  * bin counts 1, 33, 2048, 16384 and 2,000,003 (even) and 33, 2048, 16384
//    (explicit edges), every sample type (adversarial_binnings);
//  * images of 0 x 0, 1 x 10000 and 10000 x 1 pixels with a padded pitch, through
//    a plan (plain one-channel frames for every strategy, three-channel pixels
//    for the strategies with kCapabilityPixels).
// AdversarialStrategies.*, AdversarialImages.* run the CPU strategies (one test
// per sample type, so ctest runs them side by side); GpuAdversarial.* the CUDA
// ones (the weighted strategies summing weights of 1, which must give the
// counts), and skip without a GPU. Sizes are small: the point is the shapes,
// not the volume.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "test_support.hpp"

#if LEVELHIST_HAVE_CUDA
#include "gpu_test_support.hpp"
#endif

namespace levelhist::test {
namespace {

constexpr std::uint64_t kCpuSamples = 20011;  // > 16384: every bin of the 16384-bin axes can be hit

// Garbage that a call with accumulate=false must overwrite.
std::vector<std::uint64_t> garbage(std::size_t slots) {
  std::vector<std::uint64_t> v(slots);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0xBAD0000000000000ULL + i * 7919;
  return v;
}

// ---- images ----------------------------------------------------------------------

struct ImageShape {
  const char* name;
  std::uint64_t width, height;
};
// The pitch of every shape is the row's bytes plus 13 (rows start at odd addresses).
constexpr ImageShape kImageShapes[] = {{"0x0", 0, 0}, {"1x10000", 1, 10000}, {"10000x1", 10000, 1}};
constexpr std::uint64_t kPitchPad = 13;

// An image of `shape`: `channels` samples per pixel, rows `pitch` bytes apart,
// the padding filled with a byte pattern no channel may count.
struct HostImage {
  std::vector<unsigned char> bytes;
  std::uint64_t width = 0, height = 0, pitch = 0;
  std::uint32_t channels = 1;
  std::size_t sample = 1;
};

HostImage make_image(SampleType type, const ImageShape& shape, std::uint32_t channels, const Binning& b, Dist dist,
                     std::uint64_t seed) {
  HostImage img;
  img.width = shape.width;
  img.height = shape.height;
  img.channels = channels;
  img.sample = sample_size(type);
  img.pitch = shape.width * channels * img.sample + kPitchPad;
  const std::uint64_t items = shape.width * shape.height * channels;
  const GenSpec g{type, dist, items, seed, window_around(b, type), &b};
  const std::vector<unsigned char> packed = generate(g);
  img.bytes.assign(img.height == 0 ? 0 : (img.height - 1) * img.pitch + shape.width * channels * img.sample, 0xEE);
  const std::uint64_t row = shape.width * channels * img.sample;
  for (std::uint64_t r = 0; r < img.height; ++r)
    std::memcpy(img.bytes.data() + r * img.pitch, packed.data() + r * row, row);
  return img;
}

// Channel c's samples of the image, packed, counted by the reference.
std::vector<std::uint64_t> channel_reference(SampleType type, const HostImage& img, std::uint32_t c, const Binning& b) {
  std::vector<unsigned char> packed;
  packed.reserve(img.width * img.height * img.sample);
  for (std::uint64_t r = 0; r < img.height; ++r)
    for (std::uint64_t x = 0; x < img.width; ++x) {
      const unsigned char* p = img.bytes.data() + r * img.pitch + (x * img.channels + c) * img.sample;
      packed.insert(packed.end(), p, p + img.sample);
    }
  return reference_slots(type, packed.data(), img.width * img.height, b);
}

// The request an image case uses with `s`: a plain one-channel request for
// every strategy (the plan runs it row by row, or as rows when the strategy
// takes them); three channels with channels 0 and 2 active for the strategies
// that take pixels.
struct ImageRequest {
  Request request;
  std::uint32_t channels;
  std::vector<std::uint32_t> active;
};
std::vector<ImageRequest> image_requests(const Strategy& s, SampleType type, const Binning& b) {
  std::vector<ImageRequest> out = {{Request::counts(type, b), 1, {0}}};
  if (s.capabilities & kCapabilityPixels) out.push_back({Request::pixels(type, 3, 0b101, b), 3, {0, 2}});
  return out;
}

// The plan for `s` on `request`, or none when the strategy does not take it
// (Error(unsupported): the only error tolerated here).
std::unique_ptr<Plan> plan_for(const Strategy& s, const Request& request) {
  Options o;
  o.strategy = s.name;
  o.backend = s.backend == Backend::cpu ? BackendChoice::cpu : BackendChoice::cuda;
  o.threads = 3;
  try {
    return std::make_unique<Plan>(request, o);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::unsupported) return nullptr;
    throw;
  }
}

// The image cases' types and binnings: per value for bytes (the only binning
// many byte strategies take), 33 even bins, 2048 explicit edges. The GPU test
// keeps to u8 and f32: a 1 x 10000 frame is 10000 launches for a strategy
// that does not take rows.
std::vector<SampleType> cpu_image_types() { return {SampleType::u8, SampleType::i16, SampleType::u32, SampleType::f32}; }
std::vector<NamedBinning> image_binnings(SampleType type) {
  std::vector<NamedBinning> out;
  if (type == SampleType::u8) out.push_back({"per_value", Binning::per_value(type)});
  for (const NamedBinning& nb : adversarial_binnings(type))
    if (nb.name == "even33" || nb.name == "edges2048") out.push_back(nb);
  return out;
}

// ---- CPU: shapes x bin counts, one test per sample type --------------------------------

struct TypeParam {
  SampleType type;
};
void PrintTo(const TypeParam& p, std::ostream* os) { *os << to_string(p.type); }

class AdversarialStrategies : public ::testing::TestWithParam<TypeParam> {};

TEST_P(AdversarialStrategies, EveryCpuStrategyOnEveryShapeAndBinCount) {
  const SampleType type = GetParam().type;
  std::vector<const Strategy*> strategies;
  for (const Strategy* s : cpu_strategies())
    if (s != &reference_strategy()) strategies.push_back(s);
  std::size_t runs = 0, offset = 0;
  for (const NamedBinning& nb : adversarial_binnings(type)) {
    const Binning& b = nb.binning;
    for (Dist dist : kAdversarialDists) {
      const GenSpec g{type, dist, kCpuSamples, seed_for("adversarial " + nb.name, static_cast<unsigned>(dist)),
                      window_around(b, type), &b};
      const SampleBuffer buf(generate(g), offset);
      offset = (offset + 5) % 16;
      SCOPED_TRACE(nb.name + ", " + describe(g) + ", start offset " + std::to_string(buf.offset()) + " bytes");
      const std::vector<std::uint64_t> ref = reference_slots(type, buf.data(), g.n, b);
      std::vector<std::uint64_t> twice(ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i) twice[i] = 2 * ref[i];
      for (const Strategy* s : strategies) {
        // Three workers onto garbage, then one worker adding to that.
        std::vector<std::uint64_t> slots = garbage(b.slots());
        if (!run_cpu_strategy(*s, type, buf.data(), g.n, b, slots, /*accumulate=*/false, 3)) continue;
        ++runs;
        ASSERT_TRUE(slots_equal(ref, slots, b)) << s->name << ", 3 threads";
        run_cpu_strategy(*s, type, buf.data(), g.n, b, slots, /*accumulate=*/true, 1);
        ASSERT_TRUE(slots_equal(twice, slots, b)) << s->name << ", 1 thread, accumulating onto the first result";
      }
    }
  }
  EXPECT_GT(runs, 0u) << "no CPU strategy besides the reference took any " << to_string(type) << " problem";
}

std::vector<TypeParam> all_types() {
  std::vector<TypeParam> out;
  for (SampleType t : kAllSampleTypes) out.push_back({t});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cpu, AdversarialStrategies, ::testing::ValuesIn(all_types()),
                         [](const auto& info) { return std::string(to_string(info.param.type)); });

// The shapes themselves: each is what it says (so a test passing on them means something).
TEST(AdversarialShapes, AreWhatTheySay) {
  const Binning b = Binning::even(2048, 0.0, 2048.0);
  const Window w{0.0, 2047.0};
  auto counts = [&](Dist d, std::uint64_t n) {
    const auto v = generate_as<std::uint16_t>(d, n, seed_for("shapes", static_cast<unsigned>(d)), w, &b);
    std::vector<std::uint64_t> c(65536, 0);  // every_edge reaches 2049, just above the last edge
    for (std::uint16_t x : v) ++c[x];
    return std::make_pair(v, c);
  };
  {
    const auto [v, c] = counts(Dist::hot_bin, 100000);
    const std::uint64_t top = *std::max_element(c.begin(), c.end());
    EXPECT_GT(top, 99000u);
    EXPECT_LT(top, 100000u) << "the rare others are missing";
  }
  {
    const auto [v, c] = counts(Dist::zipf, 100000);
    std::vector<std::uint64_t> sorted = c;
    std::sort(sorted.rbegin(), sorted.rend());
    EXPECT_GT(sorted[0], sorted[1] * 3 / 2) << "no dominant bin";
    EXPECT_GT(sorted[100], 0u) << "no tail";
    const auto hottest = static_cast<std::uint64_t>(std::max_element(c.begin(), c.end()) - c.begin());
    const auto second = static_cast<std::uint64_t>(
        std::find(c.begin(), c.end(), sorted[1]) - c.begin());
    EXPECT_NE(hottest + 1, second) << "Zipf's ranks should be scattered over the bins";
  }
  {
    const auto [v, c] = counts(Dist::power_law, 100000);
    EXPECT_GT(c[0], c[1]);
    EXPECT_GT(c[1], c[2]);
    EXPECT_GT(c[0], 45000u) << "half the samples belong in bin 0";
  }
  {
    const auto [v, c] = counts(Dist::strided, 4096);
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], (i * 32) % 2048) << "sample " << i;
  }
  {
    const auto [v, c] = counts(Dist::sawtooth, 10000);
    EXPECT_EQ(v[0], 0);
    EXPECT_EQ(v[4098], 2047);
    EXPECT_EQ(v[4099], 0);
    EXPECT_TRUE(std::is_sorted(v.begin(), v.begin() + 4099));
  }
  {
    const auto [v, c] = counts(Dist::sorted_runs, 50000);
    std::size_t descents = 0;
    for (std::size_t i = 1; i < v.size(); ++i) descents += v[i] < v[i - 1];
    EXPECT_GT(descents, 0u);
    EXPECT_LT(descents, 50u) << "runs of 1..8192 samples are sorted";
  }
  {
    const auto [v, c] = counts(Dist::every_edge, 3 * 2049);
    std::vector<bool> on(2049, false);
    for (std::size_t i = 1; i < v.size(); i += 3) on[v[i] <= 2047 ? v[i] : 2047] = true;
    EXPECT_EQ(std::count(on.begin(), on.end() - 1, false), 0) << "an edge was never hit";
    EXPECT_EQ(v[0], 0) << "below e_0 clamps to the type's minimum";
    EXPECT_EQ(v[3 + 1], 1);
    EXPECT_EQ(v[3 + 0], 0);
    EXPECT_EQ(v[3 + 2], 2);
  }
}

// ---- CPU: images ------------------------------------------------------------------------

TEST(AdversarialImages, EveryCpuStrategyOnImageShapesWithAPaddedPitch) {
  std::size_t checked = 0;
  for (const Strategy* s : cpu_strategies()) {
    for (SampleType type : cpu_image_types()) {
      for (const NamedBinning& nb : image_binnings(type)) {
        for (const ImageRequest& ir : image_requests(*s, type, nb.binning)) {
          const std::unique_ptr<Plan> plan = plan_for(*s, ir.request);
          if (!plan) continue;
          for (const ImageShape& shape : kImageShapes) {
            const HostImage img = make_image(type, shape, ir.channels, nb.binning, Dist::sawtooth,
                                             seed_for(std::string("cpu image ") + shape.name, ir.channels));
            std::vector<Histogram> got(ir.active.size(), Histogram(nb.binning));
            for (Histogram& h : got) std::fill(h.slots().begin(), h.slots().end(), 5);  // fill adds
            plan->fill(got, Input::image(img.bytes.data(), img.width, img.height, img.pitch));
            for (std::size_t h = 0; h < ir.active.size(); ++h) {
              std::vector<std::uint64_t> want = channel_reference(type, img, ir.active[h], nb.binning);
              for (auto& v : want) v += 5;
              EXPECT_TRUE(slots_equal(want, got[h].slots(), nb.binning))
                  << s->name << ", " << to_string(type) << ", " << nb.name << ", " << shape.name << " image, "
                  << ir.channels << " channel(s), histogram " << h;
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0u);
}

// ---- CUDA ---------------------------------------------------------------------------------

#if LEVELHIST_HAVE_CUDA

constexpr std::uint64_t kGpuSamples = 100003;  // several blocks' worth, and a ragged tail

// The weighted strategies sum weights of 1.0: the sums must be the counts, exactly.
void check_unit_weights(const Strategy& s, SampleType type, const void* d_samples, const void* d_ones,
                        std::uint64_t n, const Binning& b, const std::vector<std::uint64_t>& reference,
                        const std::string& where) {
  try {
    const std::size_t ws = cuda::workspace_bytes_weighted(type, n, SampleType::f64, b, &s);
    DeviceBytes workspace(std::max<std::size_t>(ws, 1)), sums(b.slots() * 8);
    LEVELHIST_TEST_CUDA(cudaMemset(workspace.get(), 0, workspace.size()));
    cuda::histogram_weighted(workspace.get(), ws, d_samples, n, type, d_ones, SampleType::f64, b,
                             reinterpret_cast<double*>(sums.get()), false, nullptr, &s);
    std::vector<double> got(b.slots());
    LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), sums.get(), got.size() * 8, cudaMemcpyDeviceToHost));
    std::vector<std::uint64_t> as_counts(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) as_counts[i] = static_cast<std::uint64_t>(got[i]);
    EXPECT_TRUE(slots_equal(reference, as_counts, b)) << s.name << " summing weights of 1, " << where;
  } catch (const Error& e) {
    ADD_FAILURE() << s.name << " summing weights of 1, " << where << ": threw " << e.what();
  }
}

TEST(GpuAdversarial, EveryCudaStrategyOnEveryShapeAndBinCount) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies();
  GpuHarness harness;
  const std::vector<double> ones(kGpuSamples, 1.0);
  DeviceBytes d_ones(kGpuSamples * 8);
  LEVELHIST_TEST_CUDA(cudaMemcpy(d_ones.get(), ones.data(), d_ones.size(), cudaMemcpyHostToDevice));
  std::size_t offset = 0, weighted_runs = 0;
  for (SampleType type : kAllSampleTypes) {
    for (const NamedBinning& nb : adversarial_binnings(type)) {
      std::vector<const Strategy*> runners, summers;
      Problem weighted{type, &nb.binning, kGpuSamples};
      weighted.weighted = true;
      weighted.weight_type = SampleType::f64;
      for (const Strategy* s : strategies) {
        if (strategy_accepts(*s, Problem{type, &nb.binning, kGpuSamples})) runners.push_back(s);
        if (strategy_accepts(*s, weighted)) summers.push_back(s);
      }
      if (runners.empty() && summers.empty()) continue;
      for (Dist dist : kAdversarialDists) {
        const GenSpec g{type, dist, kGpuSamples, seed_for("gpu adversarial " + nb.name, static_cast<unsigned>(dist)),
                        window_around(nb.binning, type), &nb.binning};
        const auto data = generate(g);
        const auto reference = reference_slots(type, data.data(), g.n, nb.binning);
        offset = (offset + 3) % 16;
        const void* d = harness.upload(data, offset);
        const std::string where = nb.name + ", " + describe(g) + ", pointer offset " + std::to_string(offset);
        for (const Strategy* s : runners) harness.check_fresh(*s, type, d, g.n, nb.binning, reference, where);
        for (const Strategy* s : summers) {
          check_unit_weights(*s, type, d, d_ones.get(), g.n, nb.binning, reference, where);
          ++weighted_runs;
        }
      }
    }
  }
  EXPECT_GT(weighted_runs, 0u) << "no weighted strategy took any of the problems";
}

// Device images at an odd offset in an allocation that ends at the image's
// last byte, through Plan::run; and the same host image through Plan::fill.
TEST(GpuAdversarial, EveryCudaStrategyOnImageShapesWithAPaddedPitch) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  std::size_t checked = 0;
  for (const Strategy* s : cuda_strategies()) {
    for (SampleType type : {SampleType::u8, SampleType::f32}) {
      for (const NamedBinning& nb : image_binnings(type)) {
        for (const ImageRequest& ir : image_requests(*s, type, nb.binning)) {
          const std::unique_ptr<Plan> plan = plan_for(*s, ir.request);
          if (!plan) continue;
          for (const ImageShape& shape : kImageShapes) {
            const std::string where = std::string(s->name) + ", " + std::string(to_string(type)) + ", " + nb.name +
                                      ", " + shape.name + " image, " + std::to_string(ir.channels) + " channel(s)";
            const HostImage img = make_image(type, shape, ir.channels, nb.binning, Dist::every_edge,
                                             seed_for(std::string("gpu image ") + shape.name, ir.channels));
            std::vector<std::vector<std::uint64_t>> want;
            for (std::uint32_t c : ir.active) want.push_back(channel_reference(type, img, c, nb.binning));
            const std::uint64_t slots = nb.binning.slots(), outputs = slots * ir.active.size();
            try {
              // Device: Plan::run, clearing onto garbage.
              constexpr std::size_t kOffset = 3;
              DeviceBytes d_image(kOffset + img.bytes.size()), d_out(outputs * 8);
              LEVELHIST_TEST_CUDA(cudaMemset(d_image.get(), 0xEE, d_image.size()));
              if (!img.bytes.empty())
                LEVELHIST_TEST_CUDA(
                    cudaMemcpy(d_image.get() + kOffset, img.bytes.data(), img.bytes.size(), cudaMemcpyHostToDevice));
              const std::vector<std::uint64_t> poison = garbage(outputs);
              LEVELHIST_TEST_CUDA(cudaMemcpy(d_out.get(), poison.data(), outputs * 8, cudaMemcpyHostToDevice));
              const std::size_t ws = plan->workspace_bytes(img.width * img.height * ir.channels);
              DeviceBytes d_ws(std::max<std::size_t>(ws, 1));
              LEVELHIST_TEST_CUDA(cudaMemset(d_ws.get(), 0, d_ws.size()));
              plan->run(Input::image(d_image.get() + kOffset, img.width, img.height, img.pitch), d_out.get(), false,
                        d_ws.get(), ws);
              LEVELHIST_TEST_CUDA(cudaDeviceSynchronize());
              std::vector<std::uint64_t> got(outputs);
              LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), d_out.get(), outputs * 8, cudaMemcpyDeviceToHost));
              for (std::size_t h = 0; h < ir.active.size(); ++h)
                EXPECT_TRUE(slots_equal(want[h], std::span<const std::uint64_t>(got).subspan(h * slots, slots),
                                        nb.binning))
                    << where << ", Plan::run, histogram " << h;
              // Host: Plan::fill adds.
              std::vector<Histogram> hists(ir.active.size(), Histogram(nb.binning));
              plan->fill(hists, Input::image(img.bytes.data(), img.width, img.height, img.pitch));
              for (std::size_t h = 0; h < ir.active.size(); ++h)
                EXPECT_TRUE(slots_equal(want[h], hists[h].slots(), nb.binning)) << where << ", Plan::fill, histogram "
                                                                                << h;
              ++checked;
            } catch (const Error& e) {
              ADD_FAILURE() << where << ": threw " << e.what();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0u);
}

#endif  // LEVELHIST_HAVE_CUDA

}  // namespace
}  // namespace levelhist::test
