// General histograms on the CPU: interleaved pixels and weighted
// histograms through the public API and the reference strategy cpu_serial,
// with expectations written out by hand on small inputs; the validation errors
// of the API; and the exact bin maps the GPU kernels use (core/bin_maps.hpp),
// checked against BinIndexer::slot on the CPU: every value of the 8- and
// 16-bit types, and for wider types the edges +-2 ulps, specials and random
// probes (the design study's --selftest, as a unit test).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/bin_maps.hpp"
#include "core/pixels.hpp"
#include "test_support.hpp"

namespace levelhist {
namespace {

using test::throws_error;

Options cpu(std::string strategy = "auto") {
  Options o;
  o.strategy = std::move(strategy);
  o.backend = BackendChoice::cpu;
  return o;
}

// Counts of the regular bins of a histogram, for comparisons with a literal.
std::vector<std::uint64_t> bins_of(const Histogram& h) { return {h.counts().begin(), h.counts().end()}; }

// Slots (bins, underflow, overflow, nan) with the given bins set, the rest 0.
std::vector<std::uint64_t> slots_with(const Binning& b, std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> set) {
  std::vector<std::uint64_t> s(b.slots(), 0);
  for (auto [slot, count] : set) s[slot] = count;
  return s;
}

// ---------------------------------------------------------------------------
// Pixels

TEST(Pixels, RgbaEveryChannelByHand) {
  // 2 x 2 RGBA pixels, packed.
  const std::vector<std::uint8_t> img = {10, 20, 30, 255,  10, 21, 30, 0,  //
                                         11, 20, 31, 255,  10, 20, 30, 255};
  const Binning b = Binning::per_value(SampleType::u8);
  PixelLayout layout;
  layout.channels = 4;
  layout.active = 0xF;
  layout.width = 2;
  layout.height = 2;
  const std::vector<Histogram> h = histogram_pixels(SampleType::u8, img.data(), layout, b, cpu());
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].count(10), 3u);
  EXPECT_EQ(h[0].count(11), 1u);
  EXPECT_EQ(h[1].count(20), 3u);
  EXPECT_EQ(h[1].count(21), 1u);
  EXPECT_EQ(h[2].count(30), 3u);
  EXPECT_EQ(h[2].count(31), 1u);
  EXPECT_EQ(h[3].count(255), 3u);
  EXPECT_EQ(h[3].count(0), 1u);
  for (const Histogram& x : h) EXPECT_EQ(x.total(), 4u);
}

TEST(Pixels, RgbOfRgbaAndAnySubset) {
  const std::vector<std::uint8_t> img = {1, 2, 3, 4, 5, 6, 7, 8, 1, 6, 3, 200};  // 3 RGBA pixels, one row
  const Binning b = Binning::even(4, 0, 8);                                       // bins of width 2
  PixelLayout rgb{4, 0x7, 3, 1, 0};
  std::vector<Histogram> h = histogram_pixels(SampleType::u8, img.data(), rgb, b, cpu());
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(bins_of(h[0]), (std::vector<std::uint64_t>{2, 0, 1, 0}));  // R: 1, 5, 1
  EXPECT_EQ(bins_of(h[1]), (std::vector<std::uint64_t>{0, 1, 0, 2}));  // G: 2, 6, 6
  EXPECT_EQ(bins_of(h[2]), (std::vector<std::uint64_t>{0, 2, 0, 1}));  // B: 3, 7, 3
  // Only alpha (channel 3): 4, 8 (overflow), 200 (overflow).
  PixelLayout alpha{4, 0x8, 3, 1, 0};
  h = histogram_pixels(SampleType::u8, img.data(), alpha, b, cpu());
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(std::vector<std::uint64_t>(h[0].slots().begin(), h[0].slots().end()),
            slots_with(b, {{2, 1}, {b.overflow_slot(), 2}}));
  // Channels 0 and 2 of three-channel pixels (RGB24): R and B only.
  const std::vector<std::uint8_t> rgb24 = {0, 9, 7, 2, 9, 5};
  PixelLayout rb{3, 0x5, 2, 1, 0};
  h = histogram_pixels(SampleType::u8, rgb24.data(), rb, b, cpu());
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(bins_of(h[0]), (std::vector<std::uint64_t>{1, 1, 0, 0}));  // 0, 2
  EXPECT_EQ(bins_of(h[1]), (std::vector<std::uint64_t>{0, 0, 1, 1}));  // 7, 5
}

TEST(Pixels, RegionOfInterestWithRowPitch) {
  // A 5 x 3 image of 2-channel u16 pixels with 4 bytes of padding per row
  // (pitch 5 * 2 * 2 + 4 = 24 bytes). The region: columns 1..3 of rows 1..2.
  // Inside it channel 0 holds 100 + x and channel 1 holds 7; outside, 9999.
  constexpr std::size_t kWidth = 5, kHeight = 3, kPitchBytes = 24;
  std::vector<unsigned char> image(kPitchBytes * kHeight, 0xEE);
  for (std::size_t r = 0; r < kHeight; ++r)
    for (std::size_t x = 0; x < kWidth; ++x) {
      const bool in = r >= 1 && x >= 1 && x <= 3;
      const std::uint16_t v[2] = {static_cast<std::uint16_t>(in ? 100 + x : 9999),
                                  static_cast<std::uint16_t>(in ? 7 : 9999)};
      std::memcpy(image.data() + r * kPitchBytes + x * 4, v, 4);
    }
  const Binning b = Binning::even(16, 96, 112);  // one bin per value 96..111
  PixelLayout roi{2, 0x3, 3, 2, kPitchBytes};
  const unsigned char* first = image.data() + 1 * kPitchBytes + 1 * 4;
  std::vector<Histogram> h = histogram_pixels(SampleType::u16, first, roi, b, cpu());
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(std::vector<std::uint64_t>(h[0].slots().begin(), h[0].slots().end()),
            slots_with(b, {{101 - 96, 2}, {102 - 96, 2}, {103 - 96, 2}}));
  EXPECT_EQ(h[1].underflow(), 6u);  // 7 is below 96
  EXPECT_EQ(h[1].in_range(), 0u);
  // The same region from an unaligned copy of the image: any alignment.
  const test::SampleBuffer shifted(image.data(), image.size(), 3);
  std::vector<Histogram> g =
      histogram_pixels(SampleType::u16, static_cast<const unsigned char*>(shifted.data()) + kPitchBytes + 4, roi, b, cpu());
  EXPECT_EQ(g, h);
  // Packed rows (pitch 0) of the same 3 pixels per row read the padding: a
  // different result, so the pitch is really used.
  roi.row_pitch = 0;
  g = histogram_pixels(SampleType::u16, first, roi, b, cpu());
  EXPECT_NE(g[0], h[0]);
}

// One channel is a plain array in rows: strategies without pixel layouts
// (cpu_parallel) count it, packed or with a pitch (the plan hands them the
// rows), with the same counts as cpu_serial.
TEST(Pixels, OneChannelPackedRowsIsAPlainArray) {
  std::vector<std::uint8_t> gray(7 * 5);
  for (std::size_t i = 0; i < gray.size(); ++i) gray[i] = static_cast<std::uint8_t>((i * 37) % 11);
  const Binning b = Binning::per_value(SampleType::u8);
  const PixelLayout packed{1, 0x1, 7, 5, 0};
  const std::vector<Histogram> h =
      histogram_pixels(SampleType::u8, gray.data(), packed, b, Options{"cpu_parallel", BackendChoice::cpu, 2});
  EXPECT_EQ(h[0], histogram(SampleType::u8, gray.data(), gray.size(), b, Options{"cpu_serial", BackendChoice::cpu, 1}));
  const PixelLayout pitched{1, 0x1, 6, 5, 7};
  std::vector<std::uint8_t> region;
  for (std::size_t r = 0; r < 5; ++r) region.insert(region.end(), gray.begin() + r * 7, gray.begin() + r * 7 + 6);
  const std::vector<Histogram> p =
      histogram_pixels(SampleType::u8, gray.data(), pitched, b, Options{"cpu_parallel", BackendChoice::cpu, 2});
  EXPECT_EQ(p[0], histogram(SampleType::u8, region.data(), region.size(), b, Options{"cpu_serial", BackendChoice::cpu, 1}));
  EXPECT_NE(p[0], h[0]);  // the pitch skipped a column
}

TEST(Pixels, FloatChannelsEdgeRulesAndEmptyImage) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Two f32 channels, 3 pixels: (0.5, nan), (-inf, 1.0), (1.0, 0.99)
  const std::vector<float> px = {0.5f, nan, -inf, 1.0f, 1.0f, 0.99f};
  const Binning b = Binning::even(2, 0.0, 1.0, /*last_bin_inclusive=*/true);
  std::vector<Histogram> h = histogram_pixels(SampleType::f32, px.data(), PixelLayout{2, 0x3, 3, 1, 0}, b, cpu());
  EXPECT_EQ(std::vector<std::uint64_t>(h[0].slots().begin(), h[0].slots().end()),
            slots_with(b, {{1, 2}, {b.underflow_slot(), 1}}));  // 0.5 and 1.0 (numpy: last bin closed)
  EXPECT_EQ(std::vector<std::uint64_t>(h[1].slots().begin(), h[1].slots().end()),
            slots_with(b, {{1, 2}, {b.nan_slot(), 1}}));
  // Height 0: no pixel, every count 0.
  h = histogram_pixels(SampleType::f32, px.data(), PixelLayout{2, 0x3, 3, 0, 0}, b, cpu());
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].total() + h[1].total(), 0u);
}

TEST(Pixels, FillAddsToWhatIsThere) {
  const std::vector<std::uint8_t> img = {1, 2, 1, 2, 3, 4};
  const Binning b = Binning::per_value(SampleType::u8);
  std::vector<Histogram> h(2, Histogram(b));
  const PixelLayout layout{2, 0x3, 3, 1, 0};
  EXPECT_STREQ(fill_pixels(h, SampleType::u8, img.data(), layout, cpu()).name, "cpu_serial");
  fill_pixels(h, SampleType::u8, img.data(), layout, cpu());
  EXPECT_EQ(h[0].count(1), 4u);
  EXPECT_EQ(h[0].count(3), 2u);
  EXPECT_EQ(h[1].count(2), 4u);
  EXPECT_EQ(h[1].count(4), 2u);
}

TEST(Pixels, LayoutErrorsAreUsageErrors) {
  const std::vector<std::uint8_t> img(64, 0);
  const Binning b = Binning::per_value(SampleType::u8);
  auto call = [&](PixelLayout l) { return [&img, &b, l] { histogram_pixels(SampleType::u8, img.data(), l, b, cpu()); }; };
  EXPECT_TRUE(throws_error(call({0, 0x1, 2, 1, 0}), ErrorKind::usage, "1 to 4"));
  EXPECT_TRUE(throws_error(call({5, 0x1, 2, 1, 0}), ErrorKind::usage, "1 to 4"));
  EXPECT_TRUE(throws_error(call({3, 0x0, 2, 1, 0}), ErrorKind::usage, "no active channel"));
  EXPECT_TRUE(throws_error(call({3, 0x8, 2, 1, 0}), ErrorKind::usage, "beyond"));
  EXPECT_TRUE(throws_error(call({1, 0x3, 2, 1, 0}), ErrorKind::usage, "beyond"));
  EXPECT_TRUE(throws_error(call({3, 0x7, 0, 1, 0}), ErrorKind::usage, "width"));
  EXPECT_TRUE(throws_error(call({3, 0x7, 4, 2, 11}), ErrorKind::usage, "row pitch"));
  EXPECT_TRUE(throws_error(call({4, 0xF, std::uint64_t{1} << 62, 1, 0}), ErrorKind::input, "too large"));
  // A pitch exactly one row is fine.
  EXPECT_NO_THROW(histogram_pixels(SampleType::u8, img.data(), PixelLayout{3, 0x7, 4, 2, 12}, b, cpu()));
  // fill_pixels: one histogram per active channel, one binning.
  std::vector<Histogram> two(2, Histogram(b));
  EXPECT_TRUE(throws_error([&] { fill_pixels(two, SampleType::u8, img.data(), PixelLayout{3, 0x7, 4, 1, 0}, cpu()); },
                           ErrorKind::usage, "one histogram per active channel"));
  std::vector<Histogram> mixed = {Histogram(b), Histogram(Binning::even(3, 0, 3))};
  EXPECT_TRUE(throws_error([&] { fill_pixels(mixed, SampleType::u8, img.data(), PixelLayout{2, 0x3, 4, 1, 0}, cpu()); },
                           ErrorKind::usage, "binning"));
}

TEST(Pixels, OnlyStrategiesWithThePixelCapabilityAreOffered) {
  const std::vector<std::uint8_t> img = {1, 2, 3, 4};
  const Binning b = Binning::per_value(SampleType::u8);
  const PixelLayout layout{2, 0x3, 2, 1, 0};
  EXPECT_TRUE(throws_error([&] { histogram_pixels(SampleType::u8, img.data(), layout, b, cpu("cpu_parallel")); },
                           ErrorKind::unsupported, "pixel"));
  const Problem p{SampleType::u8, &b, 4, layout};
  EXPECT_EQ(p.needs(), unsigned{kCapabilityPixels});
  EXPECT_STREQ(choose_strategy(p, Backend::cpu).name, "cpu_serial");
  EXPECT_TRUE(strategies::cpu_serial.capabilities & kCapabilityPixels);
  EXPECT_TRUE(strategies::cpu_serial.capabilities & kCapabilityWeights);
}

TEST(Pixels, GeometryOfALayout) {
  detail::PixelGeometry g = detail::geometry_of(PixelLayout{3, 0x7, 0, 1, 0}, 30, 2);  // width 0: one row of n / 3
  EXPECT_EQ(g.width, 10u);
  EXPECT_EQ(g.height, 1u);
  EXPECT_EQ(g.pitch, 60u);
  g = detail::geometry_of(PixelLayout{4, 0x1, 5, 7, 100}, 140, 4);
  EXPECT_EQ(g.width, 5u);
  EXPECT_EQ(g.height, 7u);
  EXPECT_EQ(g.pitch, 100u);
  EXPECT_EQ(detail::active_rank(PixelLayout{4, 0xA, 1, 1, 0}, 3), 1u);
  EXPECT_EQ(detail::active_count(PixelLayout{4, 0xB, 1, 1, 0}), 3u);
}

// ---------------------------------------------------------------------------
// Weighted

TEST(Weighted, SumsPerSlotByHand) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.1f, 0.6f, 0.6f, -1.0f, 2.0f, nan, 1.0f};
  const std::vector<float> w = {1.5f, 2.0f, 0.25f, 4.0f, 8.0f, 16.0f, 32.0f};
  const Binning b = Binning::even(2, 0.0, 1.0);
  const WeightedHistogram h = histogram_weighted(SampleType::f32, x.data(), x.size(), SampleType::f32, w.data(), b, cpu());
  EXPECT_EQ(h.sum(0), 1.5);
  EXPECT_EQ(h.sum(1), 2.25);
  EXPECT_EQ(h.underflow(), 4.0);
  EXPECT_EQ(h.overflow(), 40.0);  // 2.0 and 1.0 (half-open last bin)
  EXPECT_EQ(h.nan(), 16.0);
  EXPECT_EQ(h.total(), 63.75);
  EXPECT_EQ(h.in_range(), 3.75);
  EXPECT_EQ(h.sums().size(), 2u);
  // numpy's rule: 1.0 lands in the last bin.
  const WeightedHistogram g = histogram_weighted(SampleType::f32, x.data(), x.size(), SampleType::f32, w.data(),
                                                 Binning::even(2, 0.0, 1.0, true), cpu());
  EXPECT_EQ(g.sum(1), 34.25);
  EXPECT_EQ(g.overflow(), 8.0);
}

TEST(Weighted, DoubleWeightsIntegerSamplesAndAccumulation) {
  const std::vector<std::uint16_t> x = {0, 1, 1, 65535, 3};
  const std::vector<double> w = {0.1, 0.2, 0.3, 1e300, -0.5};
  const Binning b = Binning::even(4, 0, 4);
  WeightedHistogram h(b);
  fill_weighted(h, SampleType::u16, x.data(), x.size(), SampleType::f64, w.data(), cpu());
  EXPECT_EQ(h.sum(0), 0.1);
  EXPECT_EQ(h.sum(1), 0.2 + 0.3);  // in sample order, in double
  EXPECT_EQ(h.sum(2), 0.0);
  EXPECT_EQ(h.sum(3), -0.5);
  EXPECT_EQ(h.overflow(), 1e300);
  fill_weighted(h, SampleType::u16, x.data(), x.size(), SampleType::f64, w.data(), cpu());  // adds
  EXPECT_EQ(h.sum(0), 0.2);
  EXPECT_EQ(h.sum(3), -1.0);
  // Unaligned samples and weights.
  const test::SampleBuffer xs(x.data(), x.size() * 2, 1), ws(w.data(), w.size() * 8, 5);
  const WeightedHistogram u = histogram_weighted(SampleType::u16, xs.data(), x.size(), SampleType::f64, ws.data(), b, cpu());
  EXPECT_EQ(u.sum(1), 0.2 + 0.3);
  EXPECT_EQ(u.overflow(), 1e300);
}

TEST(Weighted, NanWeightMakesItsSlotNan) {
  const std::vector<std::int32_t> x = {5, 5, 50};
  const std::vector<float> w = {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  const WeightedHistogram h =
      histogram_weighted(SampleType::i32, x.data(), 3, SampleType::f32, w.data(), Binning::even(1, 0, 10), cpu());
  EXPECT_TRUE(std::isnan(h.sum(0)));
  EXPECT_EQ(h.overflow(), 2.0);
}

TEST(Weighted, ErrorsAndStorage) {
  const std::vector<float> x = {1.0f};
  const std::vector<std::uint8_t> w8 = {1};
  const Binning b = Binning::even(2, 0, 2);
  EXPECT_TRUE(throws_error([&] { histogram_weighted(SampleType::f32, x.data(), 1, SampleType::u8, w8.data(), b, cpu()); },
                           ErrorKind::usage, "f32 or f64"));
  WeightedHistogram a(b), c(Binning::even(3, 0, 2));
  EXPECT_TRUE(throws_error([&] { a += c; }, ErrorKind::usage));
  a.slots()[0] = 1.5;
  WeightedHistogram d(b);
  d.slots()[0] = 2.0;
  a += d;
  EXPECT_EQ(a.sum(0), 3.5);
  a.clear();
  EXPECT_EQ(a.total(), 0.0);
  EXPECT_EQ(a, WeightedHistogram(b));
  // Zero samples: nothing added, no weights needed.
  EXPECT_EQ(histogram_weighted(SampleType::f32, nullptr, 0, SampleType::f64, nullptr, b, cpu()), WeightedHistogram(b));
  Problem p{SampleType::f32, &b, 1};
  p.weighted = true;
  EXPECT_EQ(p.needs(), unsigned{kCapabilityWeights});
  EXPECT_STREQ(choose_strategy(p, Backend::cpu).name, "cpu_parallel");
}

TEST(Weighted, CpuSerialWeightsPerPixel) {
  // Two RGB pixels, channels 0 and 2 active, one weight per pixel.
  const std::vector<std::uint8_t> img = {1, 9, 2, 1, 9, 3};
  const std::vector<float> w = {0.5f, 4.0f};
  const Binning b = Binning::even(4, 0, 4);
  std::vector<double> sums(2 * b.slots(), -7.0);
  RunArgs a{};
  a.samples = img.data();
  a.n = img.size();
  a.type = SampleType::u8;
  a.binning = &b;
  a.indexer = make_indexer(b);
  a.accumulate = false;
  a.layout = PixelLayout{3, 0x5, 2, 1, 0};
  a.weights = w.data();
  a.weight_type = SampleType::f32;
  a.weight_sums = sums.data();
  strategies::cpu_serial.run(a);
  const std::uint64_t S = b.slots();
  EXPECT_EQ(sums[1], 4.5);      // channel 0: value 1, both pixels
  EXPECT_EQ(sums[S + 2], 0.5);  // channel 2: value 2, pixel 0
  EXPECT_EQ(sums[S + 3], 4.0);  // channel 2: value 3, pixel 1
  EXPECT_EQ(sums[0] + sums[2] + sums[3] + sums[4] + sums[5] + sums[6], 0.0);
}

// ---------------------------------------------------------------------------
// The exact bin maps (core/bin_maps.hpp) against BinIndexer::slot

using binmap::ceil_f;

// Floats around every threshold, specials, and random values over and around the range.
std::vector<float> probe_values(double lo, double hi, const std::vector<float>& thresholds, std::uint64_t seed,
                                std::size_t randoms) {
  std::vector<float> xs;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double span = hi - lo;
  for (std::size_t i = 0; i < randoms; ++i) {
    const double r = u(rng);
    xs.push_back(static_cast<float>(std::isfinite(span) ? lo - 0.1 * span + 1.2 * span * r : lo * (1 - r) + hi * r));
    if (i % 16 == 0) xs.push_back(static_cast<float>(lo + span * r * 1e-6));  // crowd the lower bound
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float e : thresholds) {
    float a = e, b = e;
    xs.push_back(e);
    for (int k = 0; k < 2; ++k) {
      a = std::nextafter(a, -inf);
      b = std::nextafter(b, inf);
      xs.push_back(a);
      xs.push_back(b);
    }
  }
  const float sp[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), inf, -inf,
                      0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f,
                      static_cast<float>(lo), static_cast<float>(hi), ceil_f(lo), ceil_f(hi)};
  for (float s : sp) {
    xs.push_back(s);
    xs.push_back(std::nextafter(s, inf));
    xs.push_back(std::nextafter(s, -inf));
  }
  return xs;
}

std::vector<float> even_thresholds(const Binning& b) {
  const BinIndexer ix = make_indexer(b);
  std::vector<float> t;
  const std::uint64_t step = b.bins() <= 65536 ? 1 : b.bins() / 65536;
  for (std::uint64_t i = 0; i <= b.bins(); i += step) t.push_back(ceil_f(ix.even_edge(i)));
  t.push_back(ceil_f(ix.even_edge(b.bins())));
  return t;
}

// Every value of an integer type T through `map` against slot().
template <class T, class Map>
std::uint64_t mismatches_every_value(const Binning& b, Map&& map) {
  const BinIndexer ix = make_indexer(b);
  std::uint64_t bad = 0;
  for (long long v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v)
    bad += map(static_cast<T>(v)) != ix.slot(static_cast<double>(v));
  return bad;
}

TEST(BinMaps, IntegerShiftOnEverySixteenBitValue) {
  const std::vector<Binning> unsigned_bins = {
      Binning::even(4096, 0, 4096),          Binning::per_value(SampleType::u16), Binning::even(4096, 0, 65536),
      Binning::even(256, 0, 65536),          Binning::even(100, 1000, 1400),      Binning::even(100, 1000, 1400, true),
      Binning::even(16, 65000, 65512, true), Binning::even(3, -8, 16),            Binning::even(2, 70000, 70004),
      Binning::even(1, 0, 1073741824.0)};
  for (const Binning& b : unsigned_bins) {
    ASSERT_TRUE(binmap::int_shift_applies(SampleType::u16, b)) << b.describe();
    const auto m = binmap::make_int_shift<false>(b);
    EXPECT_EQ((mismatches_every_value<std::uint16_t>(b, [&](std::uint16_t v) { return m(v); })), 0u) << b.describe();
    EXPECT_EQ((mismatches_every_value<std::uint8_t>(b, [&](std::uint8_t v) { return m(v); })), 0u) << b.describe();
  }
  const std::vector<Binning> signed_bins = {Binning::per_value(SampleType::i16), Binning::even(64, -32768, 32768),
                                            Binning::even(7, -100, 12, true), Binning::per_value(SampleType::i8),
                                            Binning::even(2, -1073741824.0, 0)};
  for (const Binning& b : signed_bins) {
    ASSERT_TRUE(binmap::int_shift_applies(SampleType::i16, b)) << b.describe();
    const auto m = binmap::make_int_shift<false>(b);
    EXPECT_EQ((mismatches_every_value<std::int16_t>(b, [&](std::int16_t v) { return m(v); })), 0u) << b.describe();
    EXPECT_EQ((mismatches_every_value<std::int8_t>(b, [&](std::int8_t v) { return m(v); })), 0u) << b.describe();
  }
  // Not a power-of-two width, not integer bounds, too far out for 32-bit arithmetic: not this map.
  EXPECT_FALSE(binmap::int_shift_applies(SampleType::u16, Binning::even(3, 0, 9)));
  EXPECT_FALSE(binmap::int_shift_applies(SampleType::u16, Binning::even(4, 0.5, 4.5)));
  EXPECT_FALSE(binmap::int_shift_applies(SampleType::u16, Binning::even(4, 0, 2)));  // width 1/2
  EXPECT_FALSE(binmap::int_shift_applies(SampleType::u16, Binning::even(2, -4294967296.0, 0)));
  EXPECT_FALSE(binmap::int_shift_applies(SampleType::f32, Binning::even(4096, 0, 4096)));
  EXPECT_FALSE(binmap::int_shift_applies(SampleType::u16, Binning::explicit_edges({0, 1, 2})));
  // Float32 edges (EdgeRounding) are left to the maps that round them.
  EXPECT_FALSE(binmap::int_shift_applies(SampleType::u16, Binning::even(4096, 0, 4096, false, EdgeRounding::f32)));
}

// The direct map (slot = sample - lower) where it applies, and where it must not.
TEST(BinMaps, DirectMapOnEveryEightAndSixteenBitValue) {
  struct Case {
    SampleType type;
    Binning binning;
  };
  const std::vector<Case> cases = {{SampleType::u16, Binning::per_value(SampleType::u16)},
                                   {SampleType::i16, Binning::per_value(SampleType::i16)},
                                   {SampleType::u8, Binning::per_value(SampleType::u8)},
                                   {SampleType::i8, Binning::per_value(SampleType::i8)},
                                   {SampleType::u16, Binning::even(65536 + 7, -7, 65536)},
                                   {SampleType::u8, Binning::even(300, -10, 290, true)},
                                   {SampleType::u8, Binning::even(256, 0, 256, true)}};
  for (const Case& c : cases) {
    ASSERT_TRUE(binmap::direct_applies(c.type, c.binning)) << c.binning.describe();
    const binmap::DirectMap m = binmap::make_direct(c.binning);
    auto check = [&](auto tag) {
      using T = decltype(tag);
      EXPECT_EQ(mismatches_every_value<T>(c.binning, [&](T v) { return m(v); }), 0u) << c.binning.describe();
    };
    if (c.type == SampleType::u16) check(std::uint16_t{});
    if (c.type == SampleType::i16) check(std::int16_t{});
    if (c.type == SampleType::u8) check(std::uint8_t{});
    if (c.type == SampleType::i8) check(std::int8_t{});
  }
  // A value outside [lower, upper), a width other than 1, 32-bit samples: not this map.
  EXPECT_FALSE(binmap::direct_applies(SampleType::u16, Binning::even(65535, 0, 65535)));
  EXPECT_FALSE(binmap::direct_applies(SampleType::u16, Binning::even(65536, 1, 65537)));
  EXPECT_FALSE(binmap::direct_applies(SampleType::i16, Binning::per_value(SampleType::u16)));
  EXPECT_FALSE(binmap::direct_applies(SampleType::u16, Binning::even(32768, 0, 65536)));
  EXPECT_FALSE(binmap::direct_applies(SampleType::u32, Binning::even(65536, 0, 65536)));
  EXPECT_FALSE(binmap::direct_applies(SampleType::u8, Binning::even(256, 0, 256, false, EdgeRounding::f32_arithmetic)));
}

TEST(BinMaps, IntegerShiftOnThirtyTwoBitKeys) {
  const std::vector<Binning> bins = {Binning::even(std::uint64_t{1} << 20, 0, 4294967296.0),
                                     Binning::even(std::uint64_t{1} << 24, 0, 4294967296.0),
                                     Binning::even(std::uint64_t{1} << 24, -2147483648.0, 2147483648.0),
                                     Binning::even(1000, 12345, 12345 + 1000 * 64.0, true),
                                     Binning::even(4, -4503599627370496.0, 4503599627370496.0)};
  std::mt19937_64 rng(test::seed_for("int shift 32"));
  for (const Binning& b : bins) {
    ASSERT_TRUE(binmap::int_shift_applies(SampleType::u32, b)) << b.describe();
    const auto m = binmap::make_int_shift<true>(b);
    const BinIndexer ix = make_indexer(b);
    std::vector<std::int64_t> probes = {0, 1, -1, 2147483647, -2147483648LL, 4294967295LL, 12345, 12344, 76345, 76344};
    for (std::uint64_t i = 0; i <= b.bins(); i += std::max<std::uint64_t>(1, b.bins() / 4096)) {
      const double e = ix.even_edge(i);
      for (double d : {e - 1, e, e + 1})
        if (std::fabs(d) < 4294967296.0) probes.push_back(static_cast<std::int64_t>(d));
    }
    for (int i = 0; i < 20000; ++i) probes.push_back(static_cast<std::int64_t>(static_cast<std::uint32_t>(rng())));
    for (int i = 0; i < 20000; ++i) probes.push_back(static_cast<std::int64_t>(static_cast<std::int32_t>(rng())));
    std::uint64_t bad = 0;
    for (std::int64_t v : probes) {
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::uint32_t>::max()) continue;
      bad += m(v) != ix.slot(static_cast<double>(v));
    }
    EXPECT_EQ(bad, 0u) << b.describe();
  }
}

struct EvenCase {
  std::uint64_t bins;
  double lo, hi;
  bool incl;
};

// The design study's binnings: unit interval, offset and inclusive ranges,
// huge bin counts, tiny and huge magnitudes, denormal ranges.
const EvenCase kEvenCases[] = {{1024, 0, 1, false},       {1000, -0.3, 0.7, false},     {1024, 0, 1, true},
                               {10, 0.1, 0.7, true},       {4096, 0, 4096, false},       {100, 1e6, 1e6 + 1, false},
                               {1u << 20, 0, 1, false},    {3, -1e-3, 2e-3, false},      {1u << 22, -1, 1, false},
                               {65536, -1e5, 3e5, false},  {7, -1e30, 1e30, false},      {1000, 1e-40, 1e-35, false},
                               {255, -128.5, 127.5, true}, {1u << 28, 0, 1, false},      {333, 0.1, 0.1000001, false},
                               {1, -5, 5, false},          {2, 0, 3e-45, false},         {1024, -1, -0.5, false},
                               {4096, 0.5, 65535.5, false}, {1000, -32768, 32767, true}, {6, 0, 1e38, false}};

// Each case with double edges and with both kinds of float32 edges
// (EdgeRounding), except where float32 edges collapse (Binning::even refuses
// those, as numpy does).
std::vector<Binning> even_case_binnings() {
  std::vector<Binning> out;
  for (EdgeRounding rounding : {EdgeRounding::none, EdgeRounding::f32, EdgeRounding::f32_arithmetic})
    for (const EvenCase& c : kEvenCases) {
      try {
        out.push_back(Binning::even(c.bins, c.lo, c.hi, c.incl, rounding));
      } catch (const Error&) {
        if (rounding == EdgeRounding::none) throw;
      }
    }
  return out;
}

TEST(BinMaps, EvenCasesIncludeFloat32Edges) {
  std::size_t rounded = 0;
  for (const Binning& b : even_case_binnings()) rounded += b.rounding() != EdgeRounding::none;
  EXPECT_GE(rounded, 2 * std::size(kEvenCases) - 8);  // most cases also work with float32 edges
}

TEST(BinMaps, EvenFloatMarginAndDoublePathOnFloats) {
  for (const Binning& b : even_case_binnings()) {
    const binmap::EvenParams p = binmap::make_even_params(b);
    const BinIndexer ix = make_indexer(b);
    const std::vector<float> xs =
        probe_values(b.lower(), b.upper(), even_thresholds(b), b.bins() * 7919 + static_cast<int>(b.rounding()), 60000);
    // The GPU kernels' threshold table (general_common.cuh, EvenMap::setup), for the bin counts that get one.
    std::vector<float> table;
    if (b.bins() <= 4096)
      for (std::uint64_t i = 0; i <= b.bins(); ++i) table.push_back(binmap::float_at_or_above(ix.even_edge(i)));
    std::uint64_t bad = 0, slow = 0, inside = 0;
    for (float x : xs) {
      bad += binmap::even_slot(x, p) != ix.slot(static_cast<double>(x));
      if (!table.empty()) bad += binmap::even_slot(x, p, table.data()) != ix.slot(static_cast<double>(x));
      bad += binmap::even_slot(static_cast<double>(x), p) != ix.slot(static_cast<double>(x));  // the f64 path too
      if (p.margin && p.range.inside(x)) {
        ++inside;
        const float t = binmap::f_mul(binmap::f_sub(x, p.flo), p.fsc), tm = binmap::f_floor_magic(t);
        const float fr = binmap::f_sub(t, binmap::f_sub(tm, 8388608.f));
        slow += !(fr >= p.delta && fr <= p.one_minus_delta && binmap::f_bits(tm) - 0x4B000000u < p.range.bins);
      }
    }
    EXPECT_EQ(bad, 0u) << b.describe() << ", " << xs.size() << " probes, margin " << p.margin << " delta " << p.delta
                       << ", " << slow << " of " << inside << " in-range probes near an edge";
  }
  // The benchmark's case keeps the float path: 1024 bins over [0, 1), delta ~ 1.8e-4 bins.
  const binmap::EvenParams p = binmap::make_even_params(Binning::even(1024, 0.0, 1.0));
  EXPECT_TRUE(p.margin);
  EXPECT_LT(p.delta, 2e-4f);
  // With numpy's float32 edges too (the Python package's case): the edges' own
  // rounding widens the margin to about 5e-4 bins, so about 0.1% of samples are
  // compared with their nearest edge.
  for (EdgeRounding r : {EdgeRounding::f32, EdgeRounding::f32_arithmetic}) {
    const binmap::EvenParams q = binmap::make_even_params(Binning::even(1024, 0.0, 1.0, false, r));
    EXPECT_TRUE(q.margin);
    EXPECT_LT(q.delta, 1e-3f);
  }
}

TEST(BinMaps, EvenOnEverySixteenBitValueAndWiderIntegers) {
  for (const Binning& b : even_case_binnings()) {
    const binmap::EvenParams p = binmap::make_even_params(b);
    EXPECT_EQ((mismatches_every_value<std::uint16_t>(b, [&](std::uint16_t v) { return binmap::even_slot(v, p); })), 0u)
        << b.describe();
    EXPECT_EQ((mismatches_every_value<std::int16_t>(b, [&](std::int16_t v) { return binmap::even_slot(v, p); })), 0u)
        << b.describe();
    EXPECT_EQ((mismatches_every_value<std::int8_t>(b, [&](std::int8_t v) { return binmap::even_slot(v, p); })), 0u)
        << b.describe();
    // 32-bit integers take the double path: edges +-1 and random values.
    const BinIndexer ix = make_indexer(b);
    std::mt19937_64 rng(b.bins());
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i <= b.bins(); i += std::max<std::uint64_t>(1, b.bins() / 2048)) {
      const double e = std::floor(ix.even_edge(i));
      for (double d : {e - 1, e, e + 1}) {
        if (d >= -2147483648.0 && d <= 2147483647.0)
          bad += binmap::even_slot(static_cast<std::int32_t>(d), p) != ix.slot(d);
        if (d >= 0 && d <= 4294967295.0) bad += binmap::even_slot(static_cast<std::uint32_t>(d), p) != ix.slot(d);
      }
    }
    for (int i = 0; i < 5000; ++i) {
      const auto v = static_cast<std::uint32_t>(rng());
      bad += binmap::even_slot(v, p) != ix.slot(static_cast<double>(v));
      bad += binmap::even_slot(static_cast<std::int32_t>(v), p) != ix.slot(static_cast<double>(static_cast<std::int32_t>(v)));
    }
    EXPECT_EQ(bad, 0u) << b.describe();
  }
}

std::vector<std::vector<double>> edge_sets() {
  std::vector<std::vector<double>> sets;
  std::vector<double> a(65);
  for (int i = 0; i <= 64; ++i) a[i] = 0.1 + 0.9 * (i / 64.0) * (i / 64.0);  // the benchmark's 64 uneven bins
  sets.push_back(a);
  std::vector<double> b;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0.0, 3.0);
  double x = -5;
  for (int i = 0; i <= 1000; ++i) {
    b.push_back(x);
    x += std::exp(g(rng)) * 1e-3;
  }
  sets.push_back(b);
  sets.push_back({0, 1e-8, 1e-8 + 1e-16, 0.5, 0.5 + 0x1p-25, 0.5 + 0x1p-24, 1});  // edges closer than a float ulp
  std::vector<double> c;
  for (int i = 0; i <= 4096; ++i) c.push_back(std::pow(10.0, -3 + 6.0 * i / 4096));
  sets.push_back(c);
  sets.push_back({-1, 1});
  sets.push_back({-3e38, -1, 0, 1, 3e38});
  std::vector<double> d;
  for (int i = 0; i <= 200; ++i) d.push_back(i < 100 ? i * 1e-7 : 1.0 + i);  // a dense cluster, then wide bins
  sets.push_back(d);
  sets.push_back({-40000.5, -3, 0, 2.5, 3, 100, 65535, 65536});  // for 16-bit samples
  sets.push_back({-1e300, -1e-300, 1e-300, 1e300});              // beyond float range
  return sets;
}

TEST(BinMaps, CellTableOnFloatsAndEverySixteenBitValue) {
  std::size_t si = 0;
  for (const auto& edges : edge_sets()) {
    for (bool incl : {false, true}) {
      const Binning b = Binning::explicit_edges(edges, incl);
      const binmap::CellTable t = binmap::build_cell_table(b);
      const BinIndexer ix = make_indexer(b);
      std::vector<float> thresholds;
      for (double e : edges) thresholds.push_back(ceil_f(e));
      const std::vector<float> xs = probe_values(edges.front(), edges.back(), thresholds, si * 31 + incl, 40000);
      std::uint64_t bad = 0;
      for (float x : xs)
        bad += binmap::cells_slot(x, t.params, t.entries.data(), t.thresholds.data()) != ix.slot(static_cast<double>(x));
      for (long long v = -32768; v <= 65535; ++v) {
        const float x = static_cast<float>(v);
        bad += binmap::cells_slot(x, t.params, t.entries.data(), t.thresholds.data()) != ix.slot(static_cast<double>(v));
      }
      EXPECT_EQ(bad, 0u) << "edge set " << si << (incl ? " (inclusive)" : "") << ": " << b.describe() << ", "
                         << t.params.cells << " cells, " << t.searched << " searched";
      // The GPU kernels' form, a vector's samples at once (4 floats, 8 16-bit
      // values), on the same values in every mix: in order, and shuffled so
      // that a batch holds samples inside and outside, searched and not.
      std::vector<float> mixed = xs;
      for (long long v = -32768; v <= 65535; v += 7) mixed.push_back(static_cast<float>(v));
      std::shuffle(mixed.begin() + static_cast<std::ptrdiff_t>(xs.size() / 2), mixed.end(), std::mt19937_64(si));
      std::uint64_t batch_bad = 0, batches = 0;
      auto check_batches = [&]<int N>() {
        for (std::size_t i = 0; i + N <= mixed.size(); i += N) {
          float x[N];
          std::uint32_t got[N];
          for (int k = 0; k < N; ++k) x[k] = mixed[i + k];
          binmap::cells_slots<N>(x, got, t.params, t.entries.data(), t.thresholds.data());
          for (int k = 0; k < N; ++k)
            batch_bad += got[k] != binmap::cells_slot(x[k], t.params, t.entries.data(), t.thresholds.data());
          ++batches;
        }
      };
      check_batches.template operator()<4>();
      check_batches.template operator()<8>();
      EXPECT_GT(batches, 0u);
      EXPECT_EQ(batch_bad, 0u) << "edge set " << si << (incl ? " (inclusive)" : "") << ": cells_slots against cells_slot";
      EXPECT_LE(t.params.cells, binmap::kMaxCells);
    }
    ++si;
  }
  // The benchmark's 64 uneven bins need no search at all.
  EXPECT_EQ(binmap::build_cell_table(Binning::explicit_edges(edge_sets()[0])).searched, 0u);
}

}  // namespace
}  // namespace levelhist
