// CLAHE (image::clahe): OpenCV 4.x's createCLAHE(...).apply, worked by hand
// on small images: a 2 x 2 grid on an 8 x 8 image, a 3 x 3 image whose grid
// does not divide it (the reflected extension), constant images; and that
// every backend's tile histograms give the same image. The comparison with
// OpenCV itself on many images is scripts/compare_clahe.py (needs cv2).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "levelhist/image_ops.hpp"

namespace levelhist::test {
namespace {

using image::ClaheOptions;
using image::Image;

Image gray(std::uint32_t width, std::uint32_t height, const std::vector<std::uint8_t>& values) {
  Image img = Image::blank(width, height, 1, 8);
  img.bytes = values;
  return img;
}

Options on_cpu() {
  Options o;
  o.backend = BackendChoice::cpu;
  return o;
}

// An 8 x 8 image, 2 x 2 tiles of 4 x 4: top-left all 0, top-right all 100,
// bottom-left all 200, bottom-right all 50. Clip limit int(40 * 16 / 256) = 2:
// each tile's one bin of 16 keeps 2, and the 14 clipped pixels go one each to
// bins 0, 18, 36, ..., 234 (step 256 / 14 = 18). LUT scale 255 / 16 = 15.9375:
//   TL: cdf(0) = 3 -> 47.8125 -> 48; cdf(50) = 5 (0, 18, 36) -> 79.6875 -> 80
//   TR: cdf(0) = 1 -> 16; cdf(50) = 3 -> 48; cdf(100) = 6 + 2 = 8 -> 127.5 -> 128 (half to even)
//   BL: cdf(0) = 1 -> 16; cdf(50) = 3 -> 48
//   BR: cdf(0) = 1 -> 16; cdf(50) = 3 + 2 = 5 -> 80
// Pixel x lies at fx = x / 4 - 0.5 tiles: x = 0, 1 use the first column only,
// x = 2 (a = 0), 3 (a = 0.25), 4 (a = 0.5), 5 (a = 0.75) mix both, x = 6, 7 the second.
TEST(Clahe, TwoByTwoGridOnEightByEightByHand) {
  std::vector<std::uint8_t> v(64);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) v[y * 8 + x] = y < 4 ? (x < 4 ? 0 : 100) : (x < 4 ? 200 : 50);
  const Image out = image::clahe(gray(8, 8, v), ClaheOptions{40.0, 2, 2}, on_cpu());
  auto at = [&](int x, int y) { return out.bytes[y * 8 + x]; };
  EXPECT_EQ(at(0, 0), 48);   // TL alone
  EXPECT_EQ(at(2, 0), 48);   // a = 0: TL alone
  EXPECT_EQ(at(3, 0), 40);   // 48 * 0.75 + 16 * 0.25 (TR's LUT at 0)
  EXPECT_EQ(at(3, 3), 34);   // (48 * .75 + 16 * .25) * .75 + (16 * .75 + 16 * .25) * .25 = 30 + 4
  EXPECT_EQ(at(7, 0), 128);  // TR alone at 100: 127.5 rounds to even
  EXPECT_EQ(at(4, 4), 64);   // value 50, the four tiles equally: (80 + 48 + 48 + 80) / 4
  EXPECT_EQ(at(7, 7), 80);   // BR alone at 50
}

// A 3 x 3 image in a 2 x 2 grid: extended by one row and one column, mirrored
// without repeating the edge (BORDER_REFLECT_101), to 4 x 4, tiles of 2 x 2:
//   0 10 20 | 10        TL {0, 10, 30, 40}   TR {20, 10, 50, 40}
//  30 40 50 | 40        BL {60, 70, 30, 40}  BR {80, 70, 50, 40}
//  60 70 80 | 70
//  30 40 50 | 40
// Clip limit max(int(40 * 4 / 256), 1) = 1: no bin is above it. LUT scale 63.75.
TEST(Clahe, ThreeByThreeReflectedByHand) {
  const Image in = gray(3, 3, {0, 10, 20, 30, 40, 50, 60, 70, 80});
  const Image out = image::clahe(in, ClaheOptions{40.0, 2, 2}, on_cpu());
  auto at = [&](int x, int y) { return out.bytes[y * 3 + x]; };
  EXPECT_EQ(at(0, 0), 64);   // TL alone, cdf(0) = 1: 63.75
  EXPECT_EQ(at(2, 0), 128);  // TL and TR halves at 20: cdf 2 each, 127.5 -> 128
  EXPECT_EQ(at(1, 1), 255);  // a = b = 0: TL alone, cdf(40) = 4
  // TL(60) = 255 and BL(60) = cdf 3 -> 191.25 -> 191, half each: 223. With the
  // edge repeated instead (BL {60, 70, 60, 70}) BL(60) would be 128.
  EXPECT_EQ(at(0, 2), 223);
  EXPECT_EQ(at(2, 2), 255);
}

TEST(Clahe, ConstantImages) {
  // 64 x 64 of 128, 8 x 8 tiles of 64: clip limit int(40 * 64 / 256) = 10; 54
  // clipped go to bins 0, 4, ..., 212 (step 4), bin 128 among them: cdf(128) = 32 + 11 = 43,
  // 43 * 255 / 64 = 171.33 -> 171 everywhere.
  const Image flat = gray(64, 64, std::vector<std::uint8_t>(64 * 64, 128));
  const Image out = image::clahe(flat, {}, on_cpu());
  for (std::uint8_t v : out.bytes) ASSERT_EQ(v, 171);
  // No clip limit: every tile's cdf(v) is all of it: 255.
  const Image unclipped = image::clahe(flat, ClaheOptions{0.0, 8, 8}, on_cpu());
  for (std::uint8_t v : unclipped.bytes) ASSERT_EQ(v, 255);
  // A grid that does not divide (the extension is constant too), one pixel, one tile.
  for (auto [w, h, r, c] : {std::tuple{13, 7, 8, 8}, std::tuple{1, 1, 8, 8}, std::tuple{5, 9, 1, 1}}) {
    const Image small = gray(w, h, std::vector<std::uint8_t>(w * h, 7));
    const Image o = image::clahe(small, ClaheOptions{40.0, static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(c)},
                                 on_cpu());
    for (std::uint8_t v : o.bytes) ASSERT_EQ(v, o.bytes[0]) << w << "x" << h;
  }
}

TEST(Clahe, EveryStrategyOfTheTileHistogramsGivesTheSameImage) {
  std::mt19937 rng(5);
  std::vector<std::uint8_t> v(301 * 203);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>((i % 301) / 3 + rng() % 40);
  const Image in = gray(301, 203, v);
  Options serial = on_cpu();
  serial.strategy = "cpu_serial";
  const Image want = image::clahe(in, ClaheOptions{3.0, 5, 7}, serial);
  EXPECT_EQ(image::clahe(in, ClaheOptions{3.0, 5, 7}, on_cpu()).bytes, want.bytes);
  EXPECT_EQ(image::clahe(in, ClaheOptions{3.0, 5, 7}).bytes, want.bytes);  // the GPU where there is one
}

TEST(Clahe, Errors) {
  const Image g = gray(4, 4, std::vector<std::uint8_t>(16, 1));
  EXPECT_THROW(image::clahe(g, ClaheOptions{40.0, 0, 8}), Error);
  EXPECT_THROW(image::clahe(g, ClaheOptions{40.0, 8, 1025}), Error);
  EXPECT_THROW(image::clahe(g, ClaheOptions{40.0, 512, 512}), Error);
  EXPECT_THROW(image::clahe(g, ClaheOptions{NAN, 8, 8}), Error);
  Image rgb = Image::blank(2, 2, 3, 8);
  EXPECT_THROW(image::clahe(rgb), Error);
  Image wide = Image::blank(2, 2, 1, 16);
  EXPECT_THROW(image::clahe(wide), Error);
}

}  // namespace
}  // namespace levelhist::test
