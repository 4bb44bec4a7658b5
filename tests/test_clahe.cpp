// CLAHE (image::clahe): OpenCV 4.x's createCLAHE(...).apply, worked by hand
// on small images: a 2 x 2 grid on an 8 x 8 image (8-bit and 16-bit), a 3 x 3
// image whose grid does not divide it (the reflected extension), constant
// images; and that every backend's tile histograms give the same image, 16-bit
// ones counted a tile row and at most 64 tile columns at a time. The
// comparison with OpenCV itself on many images is scripts/compare_clahe.py
// (needs cv2).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
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

Image gray16(std::uint32_t width, std::uint32_t height, const std::vector<std::uint16_t>& values) {
  Image img = Image::blank(width, height, 1, 16);
  std::memcpy(img.bytes.data(), values.data(), values.size() * 2);
  return img;
}

std::vector<std::uint16_t> samples16(const Image& img) {
  std::vector<std::uint16_t> v(img.bytes.size() / 2);
  std::memcpy(v.data(), img.bytes.data(), img.bytes.size());
  return v;
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

// The same layout in 16 bits (values x 256: 0, 25600, 51200, 12800), 65536
// values: clip limit max(int(40 * 16 / 65536), 1) = 1, so each tile's bin
// keeps 1 and 15 go one each to bins 0, 4369, 8738, ..., 61166 (step
// 65536 / 15 = 4369). LUT scale 65535 / 16 = 4095.9375:
//   TL: cdf(0) = 2 -> 8191.875 -> 8192; cdf(12800) = 4 (0, 4369, 8738) -> 16384
//   TR: cdf(0) = 1 -> 4096; cdf(12800) = 3 -> 12288; cdf(25600) = 6 + 1 = 7 -> 28671.56 -> 28672
//   BL: cdf(0) = 1 -> 4096; cdf(12800) = 3 -> 12288
//   BR: cdf(0) = 1 -> 4096; cdf(12800) = 3 + 1 = 4 -> 16384
// (OpenCV 5.0.0 gives these values.)
TEST(Clahe, TwoByTwoGridOnSixteenBitsByHand) {
  std::vector<std::uint16_t> v(64);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) v[y * 8 + x] = y < 4 ? (x < 4 ? 0 : 25600) : (x < 4 ? 51200 : 12800);
  const Image out = image::clahe(gray16(8, 8, v), ClaheOptions{40.0, 2, 2}, on_cpu());
  ASSERT_EQ(out.bit_depth, 16u);
  EXPECT_EQ(out.maxval, 65535u);
  const std::vector<std::uint16_t> o = samples16(out);
  auto at = [&](int x, int y) { return o[y * 8 + x]; };
  EXPECT_EQ(at(0, 0), 8192);   // TL alone
  EXPECT_EQ(at(3, 0), 7168);   // 8192 * 0.75 + 4096 * 0.25
  EXPECT_EQ(at(3, 3), 6400);   // 7168 * 0.75 + 4096 * 0.25
  EXPECT_EQ(at(7, 0), 28672);  // TR alone at 25600
  EXPECT_EQ(at(4, 4), 14336);  // value 12800, the four tiles equally: (16384 + 12288 + 12288 + 16384) / 4
  EXPECT_EQ(at(7, 7), 16384);  // BR alone at 12800
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

// 16-bit tile histograms are counted a tile row at a time, at most 64 tile
// columns a call: a grid of 3 x 70 (two calls a row, of 64 and 6 tiles) on an
// image it does not divide gives the same image with every strategy (the
// values themselves: TwoByTwoGridOnSixteenBitsByHand and compare_clahe.py).
TEST(Clahe, SixteenBitTileRowsAndColumnRunsAgreeAcrossStrategies) {
  std::mt19937 rng(6);
  const std::uint32_t w = 431, h = 97;
  std::vector<std::uint16_t> v(std::size_t{w} * h);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint16_t>((i % w) * 97 + rng() % 3000);
  const Image in = gray16(w, h, v);
  Options serial = on_cpu();
  serial.strategy = "cpu_serial";
  for (const ClaheOptions c : {ClaheOptions{3.0, 3, 70}, ClaheOptions{40.0, 8, 8}, ClaheOptions{0.0, 1, 1}}) {
    const Image want = image::clahe(in, c, serial);
    ASSERT_EQ(want.bit_depth, 16u);
    EXPECT_EQ(image::clahe(in, c, on_cpu()).bytes, want.bytes) << c.tile_rows << "x" << c.tile_cols;
    EXPECT_EQ(image::clahe(in, c).bytes, want.bytes) << c.tile_rows << "x" << c.tile_cols;  // the GPU where there is one
  }
  // A constant 16-bit image: 40 * tile area / 65536 < 1, so the clip limit is 1,
  // and the 1023 clipped of each 32 x 32 tile go to bins 0, 64, 128, ...: cdf(1000)
  // = 1 + 16 (0, 64, ..., 960) = 17 -> 17 * 65535 / 1024 = 1087.99 -> 1088 everywhere.
  const Image flat = gray16(256, 256, std::vector<std::uint16_t>(256 * 256, 1000));
  for (std::uint16_t x : samples16(image::clahe(flat, {}, on_cpu()))) ASSERT_EQ(x, 1088);
}

TEST(Clahe, Errors) {
  const Image g = gray(4, 4, std::vector<std::uint8_t>(16, 1));
  EXPECT_THROW(image::clahe(g, ClaheOptions{40.0, 0, 8}), Error);
  EXPECT_THROW(image::clahe(g, ClaheOptions{40.0, 8, 1025}), Error);
  EXPECT_THROW(image::clahe(g, ClaheOptions{40.0, 512, 512}), Error);
  EXPECT_THROW(image::clahe(g, ClaheOptions{NAN, 8, 8}), Error);
  Image rgb = Image::blank(2, 2, 3, 8);
  EXPECT_THROW(image::clahe(rgb), Error);
  Image gray_alpha16 = Image::blank(2, 2, 2, 16);
  EXPECT_THROW(image::clahe(gray_alpha16), Error);
}

}  // namespace
}  // namespace levelhist::test
