// image_ops.hpp: channel histograms against counts taken here, and
// statistics, Otsu, threshold and equalization against values worked out by
// hand (the arithmetic is in the comments).
#include <gtest/gtest.h>

#include <levelhist/image_ops.hpp>

#include "image_test_support.hpp"
#include "test_support.hpp"

namespace {

using levelhist::BackendChoice;
using levelhist::Binning;
using levelhist::ErrorKind;
using levelhist::Histogram;
using levelhist::Options;
using levelhist::SampleType;
using levelhist::test::throws_error;
using namespace levelhist::image;
using namespace image_test;

const Options kCpu{"auto", BackendChoice::cpu, 0};

Histogram gray_histogram(const std::vector<std::vector<std::uint32_t>>& rows) {
  return channel_histograms(gray8(rows), kCpu).front();
}

// ---- channel histograms ---------------------------------------------------------

TEST(ChannelHistograms, OneHistogramPerChannelWithOneBinPerValue) {
  // RGB pixels (1, 2, 3) and (1, 5, 3): red 1 twice; green 2 and 5; blue 3 twice.
  Image img = Image::blank(2, 1, 3, 8);
  const std::uint32_t px[2][3] = {{1, 2, 3}, {1, 5, 3}};
  for (std::uint32_t x = 0; x < 2; ++x)
    for (std::uint32_t c = 0; c < 3; ++c) img.set(x, 0, c, px[x][c]);
  const std::vector<Histogram> h = channel_histograms(img, kCpu);
  ASSERT_EQ(h.size(), 3u);
  for (const Histogram& ch : h) {
    EXPECT_EQ(ch.bins(), 256u);
    EXPECT_EQ(ch.total(), 2u);
  }
  EXPECT_EQ(h[0].count(1), 2u);
  EXPECT_EQ(h[1].count(2), 1u);
  EXPECT_EQ(h[1].count(5), 1u);
  EXPECT_EQ(h[2].count(3), 2u);
}

TEST(ChannelHistograms, MatchCountsTakenPixelByPixel) {
  for (std::uint32_t channels = 1; channels <= 4; ++channels)
    for (std::uint32_t depth : {8u, 16u}) {
      const std::uint32_t maxval = depth == 16 ? 40000 : 200;
      const Image img = pattern(17, 3, channels, depth, maxval, channels);
      const std::vector<Histogram> h = channel_histograms(img, kCpu);
      ASSERT_EQ(h.size(), channels);
      for (std::uint32_t c = 0; c < channels; ++c) {
        std::vector<std::uint64_t> want(depth == 16 ? 65536 : 256, 0);
        for (std::uint32_t y = 0; y < img.height; ++y)
          for (std::uint32_t x = 0; x < img.width; ++x) ++want[img.at(x, y, c)];
        EXPECT_TRUE(std::equal(want.begin(), want.end(), h[c].counts().begin(), h[c].counts().end()))
            << channels << " channels, " << depth << " bit, channel " << c;
        EXPECT_EQ(h[c].total(), 17u * 3);
      }
    }
}

// ---- statistics ---------------------------------------------------------------------

TEST(Stats, NearestRankOnTenValuesWorkedByHand) {
  // 3 1 4 1 5 9 2 6 5 3, sorted 1 1 2 3 3 4 5 5 6 9 (N = 10), sum 39.
  // Rank of the p-th percentile = ceil(p * 10 / 100): p1 -> 1, p5 -> 1, p25 -> 3,
  // p50 -> 5, p75 -> 8, p95 -> 10, p99 -> 10; the values at those ranks:
  // 1, 1, 2, 3, 5, 9, 9.
  const ChannelStats s = stats(gray_histogram({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}));
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.min, 1u);
  EXPECT_EQ(s.max, 9u);
  EXPECT_DOUBLE_EQ(s.mean, 3.9);
  EXPECT_EQ(s.median, 3u);
  const std::array<std::uint32_t, 6> want = {1, 1, 2, 5, 9, 9};  // p1 p5 p25 p75 p95 p99
  EXPECT_EQ(s.percentiles, want);
}

TEST(Stats, SingleSampleAndSixteenBit) {
  // One 16-bit sample of 40000: every statistic is 40000.
  Image img = Image::blank(1, 1, 1, 16);
  img.set(0, 0, 0, 40000);
  const ChannelStats s = stats(channel_histograms(img, kCpu).front());
  EXPECT_EQ(s.min, 40000u);
  EXPECT_EQ(s.max, 40000u);
  EXPECT_EQ(s.median, 40000u);
  EXPECT_DOUBLE_EQ(s.mean, 40000.0);
  for (std::uint32_t p : s.percentiles) EXPECT_EQ(p, 40000u);
}

TEST(Stats, PercentileAndErrors) {
  const Histogram h = gray_histogram({{0, 10, 20, 30}});
  // N = 4: p100 has rank 4 (30), p26 rank ceil(1.04) = 2 (10), p25 rank 1 (0).
  EXPECT_EQ(percentile(h, 100), 30u);
  EXPECT_EQ(percentile(h, 26), 10u);
  EXPECT_EQ(percentile(h, 25), 0u);
  EXPECT_TRUE(throws_error([&] { percentile(h, 0); }, ErrorKind::usage));
  EXPECT_TRUE(throws_error([&] { percentile(h, 101); }, ErrorKind::usage));
  EXPECT_TRUE(throws_error([] { stats(Histogram(Binning::even(10, 0.0, 1.0))); }, ErrorKind::usage, "one bin per value"));
  EXPECT_TRUE(throws_error([] { stats(Histogram(Binning::per_value(SampleType::u8))); }, ErrorKind::input, "no sample"));
  EXPECT_TRUE(throws_error([] { otsu_threshold(Histogram(Binning::per_value(SampleType::u8))); }, ErrorKind::input));
}

// ---- Otsu -----------------------------------------------------------------------------

TEST(Otsu, FourPixelsWorkedByHand) {
  // Pixels 2 2 4 8: p(2) = 1/2, p(4) = p(8) = 1/4, mean 4. For t, classes [0, t] and (t, 255]:
  //   t = 0, 1: q1 = 0, skipped;  t >= 8: q2 = 0, skipped.
  //   t = 2..3: q1 = 1/2, mu1 = 2, q2 = 1/2, mu2 = 6: sigma = 1/4 * 16 = 4.
  //   t = 4..7: q1 = 3/4, mu1 = 8/3, q2 = 1/4, mu2 = 8: sigma = 3/16 * (16/3)^2 = 16/3.
  // The first maximum is t = 4: OpenCV returns that index, not the upper class's first value.
  const Histogram h = gray_histogram({{2, 2, 4, 8}});
  EXPECT_EQ(otsu_threshold(h), 4u);
  // The same pixels times 1000 in 16 bits: the same split, t = 4000.
  Image wide = Image::blank(4, 1, 1, 16);
  const std::uint32_t px[4] = {2000, 2000, 4000, 8000};
  for (std::uint32_t x = 0; x < 4; ++x) wide.set(x, 0, 0, px[x]);
  const Histogram hw = channel_histograms(wide, kCpu).front();
  EXPECT_EQ(hw.bins(), 65536u);
  EXPECT_EQ(otsu_threshold(hw), 4000u);
}

TEST(Otsu, OneValueHasNoSplit) {
  // Every t leaves one class empty (q1 = 0 or q2 = 0): OpenCV returns 0.
  EXPECT_EQ(otsu_threshold(gray_histogram({{7, 7, 7}})), 0u);
}

// The textbook argmax in exact integers, for comparison: sigma_B(t) is
// proportional to (N * S0 - W0 * S)^2 / (W0 * W1), W0 and S0 the count and sum of [0, t].
std::uint32_t exact_otsu(const Histogram& h) {
  using u128 = unsigned __int128;
  const auto c = h.counts();
  std::uint64_t n = 0, s = 0;
  for (std::size_t i = 0; i < c.size(); ++i) n += c[i], s += c[i] * i;
  std::uint64_t w0 = 0, s0 = 0;
  u128 best_num = 0, best_den = 1;
  std::uint32_t best = 0;
  for (std::size_t t = 0; t < c.size(); ++t) {
    w0 += c[t], s0 += c[t] * t;
    if (w0 == 0 || w0 == n) continue;
    const __int128 d = static_cast<__int128>(n) * s0 - static_cast<__int128>(w0) * s;
    const u128 num = static_cast<u128>(d < 0 ? -d : d) * static_cast<u128>(d < 0 ? -d : d);
    const u128 den = static_cast<u128>(w0) * (n - w0);
    if (num * best_den > best_num * den) best_num = num, best_den = den, best = static_cast<std::uint32_t>(t);
  }
  return best;
}

TEST(Otsu, BimodalImageSplitsBetweenTheModes) {
  // 60 pixels in 40..60 and 40 in 190..210: every t in [60, 189] gives the same
  // classes, so the first maximum is 60, the top of the dark mode.
  std::vector<std::vector<std::uint32_t>> rows(10, std::vector<std::uint32_t>(10));
  for (std::uint32_t i = 0; i < 100; ++i) rows[i / 10][i % 10] = i < 60 ? 40 + (i * 5) % 21 : 190 + (i * 11) % 21;
  const Histogram h = gray_histogram(rows);
  EXPECT_EQ(otsu_threshold(h), 60u);
  EXPECT_EQ(exact_otsu(h), 60u);
  const Image bw = threshold(gray8(rows), otsu_threshold(h));
  for (std::uint32_t i = 0; i < 100; ++i) EXPECT_EQ(bw.at(i % 10, i / 10, 0), i < 60 ? 0u : 255u) << i;
}

TEST(Otsu, AgreesWithTheExactArgmaxOnOverlappingModes) {
  // Two overlapping triangular modes: no ties, so OpenCV's doubles and exact integers agree.
  std::vector<std::vector<std::uint32_t>> rows(1);
  for (std::uint32_t v = 0; v < 256; ++v) {
    const std::uint32_t n = (v < 90 ? v : (v < 180 ? 180 - v : 0)) / 3 + (v > 120 ? std::min(v - 120, 256 - v) / 2 : 0);
    for (std::uint32_t k = 0; k < n; ++k) rows[0].push_back(v);
  }
  const Histogram h = gray_histogram(rows);
  EXPECT_EQ(otsu_threshold(h), exact_otsu(h));
}

// ---- threshold --------------------------------------------------------------------------

TEST(Threshold, GreaterThanTBecomesMaxval) {
  // THRESH_BINARY: 0 5 6 255 with t = 5 -> 0 0 255 255 (5 is not above 5).
  const Image bw = threshold(gray8({{0, 5, 6, 255}}), 5);
  EXPECT_TRUE(same_pixels(bw, gray8({{0, 0, 255, 255}})));
  // 16-bit with maxval 1000: 0 500 501 1000, t = 500 -> 0 0 1000 1000, maxval kept.
  Image img = Image::blank(4, 1, 1, 16, 1000);
  const std::uint32_t px[4] = {0, 500, 501, 1000};
  for (std::uint32_t x = 0; x < 4; ++x) img.set(x, 0, 0, px[x]);
  const Image out = threshold(img, 500);
  EXPECT_EQ(out.maxval, 1000u);
  EXPECT_EQ(out.bit_depth, 16u);
  const std::uint32_t want[4] = {0, 0, 1000, 1000};
  for (std::uint32_t x = 0; x < 4; ++x) EXPECT_EQ(out.at(x, 0, 0), want[x]);
  // t at or above the maxval: everything 0.
  EXPECT_EQ(threshold(gray8({{255}}), 255).at(0, 0, 0), 0u);
}

TEST(Threshold, NeedsOneChannel) {
  EXPECT_TRUE(throws_error([] { threshold(pattern(2, 2, 3, 8, 255), 10); }, ErrorKind::usage, "gray"));
  EXPECT_TRUE(throws_error([] { threshold(pattern(2, 2, 2, 8, 255), 10); }, ErrorKind::usage, "gray"));
}

// ---- equalize -----------------------------------------------------------------------------

TEST(Equalize, TenPixelsWorkedByHand) {
  // 3 1 4 1 5 9 2 6 5 3: counts 1:2 2:1 3:2 4:1 5:2 6:1 9:1, cdf_min = 2 (value 1), N = 10,
  // scale = 255 / (10 - 2) = 31.875; lut = round((cdf - 2) * 31.875):
  //   1: 0 -> 0;  2: 1 -> 31.875 -> 32;  3: 3 -> 95.625 -> 96;  4: 4 -> 127.5 -> 128;
  //   5: 6 -> 191.25 -> 191;  6: 7 -> 223.125 -> 223;  9: 8 -> 255.
  const Image out = equalize(gray8({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}), kCpu);
  EXPECT_TRUE(same_pixels(out, gray8({{96, 0, 128, 0, 191}, {255, 32, 223, 191, 96}})));
}

TEST(Equalize, RoundsHalfToEvenAsOpenCV) {
  // 0 1 2 3 4 5 6: cdf_min = 1, scale = 255 / 6 = 42.5 (exact in float):
  //   1 -> 42.5 -> 42 (even), 2 -> 85, 3 -> 127.5 -> 128 (even), 4 -> 170, 5 -> 212.5 -> 212, 6 -> 255.
  const Image out = equalize(gray8({{0, 1, 2, 3, 4, 5, 6}}), kCpu);
  EXPECT_TRUE(same_pixels(out, gray8({{0, 42, 85, 128, 170, 212, 255}})));
}

TEST(Equalize, OneValueImageIsUnchanged) {
  const Image img = gray8({{7, 7}, {7, 7}});
  EXPECT_TRUE(same_pixels(equalize(img, kCpu), img));
}

TEST(Equalize, UsesTheWholeRangeWhateverTheMaxval) {
  // maxval 15, pixels 10 10 12 15: cdf_min 2, N 4, scale 127.5: 12 -> 127.5 -> 128, 15 -> 255.
  Image img = Image::blank(4, 1, 1, 8, 15);
  const std::uint32_t px[4] = {10, 10, 12, 15};
  for (std::uint32_t x = 0; x < 4; ++x) img.set(x, 0, 0, px[x]);
  const Image out = equalize(img, kCpu);
  EXPECT_EQ(out.maxval, 255u);
  EXPECT_TRUE(same_pixels(out, gray8({{0, 0, 128, 255}})));
}

TEST(Equalize, Needs8BitGray) {
  EXPECT_TRUE(throws_error([] { equalize(pattern(2, 2, 3, 8, 255)); }, ErrorKind::usage, "gray"));
  EXPECT_TRUE(throws_error([] { equalize(pattern(2, 2, 1, 16, 65535)); }, ErrorKind::usage, "8-bit"));
}

}  // namespace
