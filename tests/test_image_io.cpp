// Image I/O (image.hpp): every Netpbm variant and PNG kind read back to the
// exact pixels, write/read round trips, and every malformed file refused with
// one Error(input) line naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "image_test_support.hpp"
#include "test_support.hpp"

namespace {

using levelhist::Error;
using levelhist::ErrorKind;
using levelhist::test::throws_error;
using namespace levelhist::image;
using namespace image_test;
namespace fs = std::filesystem;

struct Shape {
  std::uint32_t w, h;
};
const Shape kShapes[] = {{1, 1}, {3, 5}, {17, 2}};
// 8-bit files (maxval <= 255, one byte per sample) and 16-bit ones (two bytes, big-endian).
const std::uint32_t kMaxvals[] = {1, 100, 255, 256, 1000, 65535};

class PnmRead : public ::testing::TestWithParam<std::tuple<bool, std::uint32_t, std::uint32_t>> {};

TEST_P(PnmRead, ReadsEveryShapeToTheExactPixels) {
  const auto [plain, channels, maxval] = GetParam();
  const std::uint32_t depth = maxval > 255 ? 16 : 8;
  for (const Shape& s : kShapes) {
    const Image want = pattern(s.w, s.h, channels, depth, maxval, s.w);
    const Image got = decode_image(as_bytes(pnm_file(want, plain)), "test.pnm");
    EXPECT_EQ(got.width, s.w);
    EXPECT_EQ(got.height, s.h);
    EXPECT_EQ(got.channels, channels);
    EXPECT_EQ(got.bit_depth, depth);
    EXPECT_EQ(got.maxval, maxval);
    EXPECT_TRUE(same_pixels(want, got)) << s.w << "x" << s.h;
  }
}

std::string pnm_variant_name(const ::testing::TestParamInfo<PnmRead::ParamType>& info) {
  const auto& [plain, channels, maxval] = info.param;
  return std::string(plain ? "plain" : "binary") + (channels == 1 ? "_gray_" : "_rgb_") + "maxval" +
         std::to_string(maxval);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, PnmRead,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1u, 3u), ::testing::ValuesIn(kMaxvals)),
                         pnm_variant_name);

TEST(ImageIo, SixteenBitSamplesAreBigEndianOnDisk) {
  // P5 1x1 maxval 65535 with the bytes 0x12 0x34: the sample is 0x1234 = 4660.
  const std::string file = std::string("P5 1 1 65535\n") + '\x12' + '\x34';
  EXPECT_EQ(decode_image(as_bytes(file)).at(0, 0, 0), 0x1234u);
}

TEST(ImageIo, CommentRightAfterMaxvalEndsTheBinaryHeader) {
  // The comment's newline is the one whitespace byte before the raster.
  const std::string file = "P5 2 1 255#note\n" + std::string("\x07\x09", 2);
  const Image img = decode_image(as_bytes(file));
  EXPECT_EQ(img.at(0, 0, 0), 7u);
  EXPECT_EQ(img.at(1, 0, 0), 9u);
}

TEST(ImageIo, BytesAfterTheRasterAreIgnored) {
  const Image img = decode_image(as_bytes(std::string("P5 1 1 255\n") + "AB"));
  EXPECT_EQ(img.at(0, 0, 0), static_cast<std::uint32_t>('A'));
}

TEST(ImageIo, PnmWriteReadRoundTripKeepsMaxval) {
  for (std::uint32_t channels : {1u, 3u})
    for (std::uint32_t maxval : kMaxvals) {
      const Image img = pattern(17, 2, channels, maxval > 255 ? 16 : 8, maxval, 3);
      const Image back = decode_image(encode_image(img, FileFormat::pnm));
      EXPECT_EQ(back.maxval, maxval);
      EXPECT_TRUE(same_pixels(img, back)) << channels << " channels, maxval " << maxval;
    }
}

TEST(ImageIo, PnmEncoderWritesTheBinaryMagicAndHeader) {
  const Image gray = pattern(3, 5, 1, 8, 255);
  const std::vector<std::uint8_t> p5 = encode_image(gray, FileFormat::pnm);
  EXPECT_EQ(std::string(p5.begin(), p5.begin() + 11), "P5\n3 5\n255\n");
  EXPECT_EQ(p5.size(), 11u + 15u);  // 15 one-byte samples
  const std::vector<std::uint8_t> p6 = encode_image(pattern(1, 1, 3, 16, 65535), FileFormat::pnm);
  EXPECT_EQ(std::string(p6.begin(), p6.begin() + 13), "P6\n1 1\n65535\n");
  EXPECT_EQ(p6.size(), 13u + 6u);  // 3 samples of 2 bytes
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "levelhist-image-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // The names in the directory (a failed write must leave nothing behind).
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    return names;
  }
  fs::path dir_;
};

using ImageFiles = TempDir;

TEST_F(ImageFiles, WriteImagePicksTheFormatByExtension) {
  const Image rgb = pattern(3, 5, 3, 8, 255);
  for (const char* name : {"a.ppm", "b.PNM", "c.pgm"}) {
    write_image(path(name), rgb);
    std::ifstream in(path(name), std::ios::binary);
    std::string magic(2, '\0');
    in.read(magic.data(), 2);
    EXPECT_EQ(magic, "P6") << name;
    EXPECT_TRUE(same_pixels(rgb, read_image(path(name)))) << name;
  }
  if (png_supported()) {
    write_image(path("d.png"), rgb);
    EXPECT_TRUE(same_pixels(rgb, read_image(path("d.png"))));
  }
  if (tiff_supported()) {
    write_image(path("d.TIF"), rgb);
    EXPECT_TRUE(same_pixels(rgb, read_image(path("d.TIF"))));
  }
  if (jpeg_supported()) {  // lossy: the shape only
    write_image(path("d.jpeg"), rgb);
    const Image back = read_image(path("d.jpeg"));
    EXPECT_EQ(back.width, rgb.width);
    EXPECT_EQ(back.channels, 3u);
  }
  EXPECT_TRUE(throws_error([&] { write_image(path("e.gif"), rgb); }, ErrorKind::usage, "e.gif"));
  EXPECT_TRUE(throws_error([&] { write_image(path("noext"), rgb); }, ErrorKind::usage, ".png"));
}

TEST_F(ImageFiles, PnmRefusesAlpha) {
  EXPECT_TRUE(throws_error([&] { write_image(path("a.pgm"), pattern(2, 2, 2, 8, 255)); }, ErrorKind::usage, ".png"));
  EXPECT_TRUE(throws_error([&] { encode_image(pattern(2, 2, 4, 8, 255), FileFormat::pnm); }, ErrorKind::usage));
  EXPECT_TRUE(entries().empty());
}

TEST_F(ImageFiles, FailedWriteLeavesNoFile) {
  // The target is a directory: the rename fails after the data was written to a temporary file.
  fs::create_directory(path("taken.pgm"));
  EXPECT_TRUE(throws_error([&] { write_image(path("taken.pgm"), pattern(3, 5, 1, 8, 255)); }, ErrorKind::input,
                           "taken.pgm"));
  EXPECT_EQ(entries(), std::vector<std::string>{"taken.pgm"});
  EXPECT_TRUE(throws_error([&] { write_image(path("missing/dir/x.pgm"), pattern(1, 1, 1, 8, 255)); },
                           ErrorKind::input, "missing/dir/x.pgm"));
}

TEST_F(ImageFiles, WriteReplacesAnExistingFile) {
  write_image(path("x.pgm"), pattern(17, 2, 1, 8, 255));
  const Image second = pattern(1, 1, 1, 16, 1000);
  write_image(path("x.pgm"), second);
  EXPECT_TRUE(same_pixels(second, read_image(path("x.pgm"))));
  EXPECT_EQ(entries(), std::vector<std::string>{"x.pgm"});
}

TEST_F(ImageFiles, MissingFileIsAnInputErrorNamingIt) {
  EXPECT_TRUE(throws_error([&] { read_image(path("nope.pgm")); }, ErrorKind::input, "nope.pgm"));
  EXPECT_TRUE(throws_error([&] { read_image(dir_.string()); }, ErrorKind::input, dir_.string()));
}

// ---- malformed files ------------------------------------------------------------

struct Malformed {
  const char* label;
  std::string bytes;
  const char* needle;  // a word the message must contain
};

std::vector<Malformed> malformed_files() {
  return {
      {"empty", "", "empty"},
      {"bad_magic", "GIF89a", "unknown magic"},
      {"lowercase_magic", "p5 1 1 255\n\x01", "unknown magic"},
      {"pbm", "P4 8 1\n\xff", "PBM"},
      {"magic_only", "P5", "truncated"},
      {"no_height", "P5 3", "truncated"},
      {"no_maxval", "P5 3 5\n", "truncated"},
      {"ends_after_maxval", "P5 3 5 255", "truncated"},
      {"letter_in_width", "P5 3x 5 255\n", "malformed"},
      {"negative_width", "P5 -3 5 255\n", "malformed"},
      {"no_space_after_magic", "P53 5 255\n", "malformed"},
      {"width_zero", "P5 0 5 255\n", "0 x 5"},
      {"height_zero", "P2 5 0 255\n", "5 x 0"},
      {"maxval_zero", "P5 1 1 0\n\x00", "maxval 0"},
      {"maxval_65536", "P5 1 1 65536\n\x00\x00", "maxval"},
      {"width_over_32_bits", "P5 4294967296 1 255\n", "width"},
      {"byte_count_overflows", "P6 4294967295 4294967295 65535\n", "more than the limit"},
      {"truncated_p5_data", "P5 3 5 255\n" + std::string(14, '\x01'), "truncated"},
      {"truncated_p6_16bit", "P6 2 1 65535\n" + std::string(11, '\x01'), "truncated"},
      {"truncated_p2_data", "P2 2 2 10\n1 2 3", "truncated"},
      {"p2_sample_above_maxval", "P2 2 1 10\n5 11\n", "above the maxval"},
      {"p3_sample_above_maxval", "P3 1 1 255\n1 2 256\n", "above the maxval"},
      {"p5_sample_above_maxval", "P5 1 1 10\n\x0b", "above the maxval"},
      {"p2_letter_sample", "P2 2 1 10\n5 x\n", "not a decimal number"},
      {"huge_header_number", "P5 99999999999999999999999 1 255\n", "width"},
  };
}

// GoogleTest prints a parameter it cannot print as its raw bytes: print the case's label.
void PrintTo(const Malformed& m, std::ostream* out) { *out << m.label; }

class MalformedFile : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedFile, IsOneInputErrorLineNamingTheFile) {
  const Malformed& m = GetParam();
  try {
    decode_image(as_bytes(m.bytes), "bad.img");
    ADD_FAILURE() << m.label << " was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::input) << what;
    EXPECT_EQ(what.rfind("bad.img: ", 0), 0u) << what;
    EXPECT_NE(what.find(m.needle), std::string::npos) << what;
    EXPECT_NE(what.find("; "), std::string::npos) << "no fix: " << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Netpbm, MalformedFile, ::testing::ValuesIn(malformed_files()),
                         [](const auto& info) { return std::string(info.param.label); });

// ---- the Image type ---------------------------------------------------------------

TEST(ImageType, BlankValidatesTheShape) {
  const Image img = Image::blank(3, 5, 4, 16);
  EXPECT_EQ(img.maxval, 65535u);
  EXPECT_EQ(img.bytes.size(), 3u * 5 * 4 * 2);
  EXPECT_EQ(Image::blank(1, 1, 1, 8).maxval, 255u);
  EXPECT_TRUE(throws_error([] { Image::blank(0, 5, 1, 8); }, ErrorKind::usage));
  EXPECT_TRUE(throws_error([] { Image::blank(5, 1, 0, 8); }, ErrorKind::usage, "channels"));
  EXPECT_TRUE(throws_error([] { Image::blank(5, 1, 5, 8); }, ErrorKind::usage, "channels"));
  EXPECT_TRUE(throws_error([] { Image::blank(5, 1, 1, 12); }, ErrorKind::usage, "bit depth"));
  EXPECT_TRUE(throws_error([] { Image::blank(5, 1, 1, 8, 256); }, ErrorKind::usage, "maxval"));
  EXPECT_TRUE(throws_error([] { Image::blank(0xffffffffu, 0xffffffffu, 4, 16); }, ErrorKind::usage));
}

TEST(ImageType, AtAndSetCheckCoordinatesAndMaxval) {
  Image img = Image::blank(2, 3, 3, 16, 1000);
  img.set(1, 2, 2, 1000);
  EXPECT_EQ(img.at(1, 2, 2), 1000u);
  EXPECT_EQ(img.at(0, 2, 2), 0u);
  EXPECT_TRUE(throws_error([&] { img.set(0, 0, 0, 1001); }, ErrorKind::usage, "maxval"));
  EXPECT_TRUE(throws_error([&] { (void)img.at(2, 0, 0); }, ErrorKind::usage));
  EXPECT_TRUE(throws_error([&] { (void)img.at(0, 0, 3); }, ErrorKind::usage));
}

TEST(ImageType, EncodeRefusesAnInconsistentImage) {
  Image img = Image::blank(2, 2, 1, 8);
  img.bytes.pop_back();
  EXPECT_TRUE(throws_error([&] { encode_image(img, FileFormat::pnm); }, ErrorKind::usage, "bytes"));
}

// ---- PNG --------------------------------------------------------------------------

#define REQUIRE_PNG() \
  if (!png_supported()) GTEST_SKIP() << "this build has no PNG support (libpng not found at configure time)"

TEST(Png, RoundTripEveryChannelCountAndDepth) {
  REQUIRE_PNG();
  for (std::uint32_t channels = 1; channels <= 4; ++channels)
    for (std::uint32_t depth : {8u, 16u})
      for (const Shape& s : kShapes) {
        const Image img = pattern(s.w, s.h, channels, depth, depth == 16 ? 65535 : 255, channels);
        const std::vector<std::uint8_t> file = encode_image(img, FileFormat::png);
        ASSERT_GE(file.size(), 8u);
        EXPECT_EQ(file[1], 'P');
        const Image back = decode_image(file, "round.png");
        EXPECT_EQ(back.bit_depth, depth);
        EXPECT_EQ(back.maxval, depth == 16 ? 65535u : 255u);
        EXPECT_TRUE(same_pixels(img, back)) << channels << " channels, " << depth << " bit, " << s.w << "x" << s.h;
      }
}

#if LEVELHIST_HAVE_PNG
TEST(Png, ReadsSixteenBitGrayWrittenByLibpng) {
  // PNG stores 16-bit samples big-endian: bytes 0x12 0x34, 0xff 0x00 are 4660 and 65280.
  RawPng p{2, 1, PNG_COLOR_TYPE_GRAY, 16, {{0x12, 0x34, 0xff, 0x00}}, {}, {}, -1};
  const Image img = decode_image(as_bytes(raw_png(p)));
  EXPECT_EQ(img.bit_depth, 16u);
  EXPECT_EQ(img.at(0, 0, 0), 0x1234u);
  EXPECT_EQ(img.at(1, 0, 0), 0xff00u);
}

TEST(Png, WidensLowBitDepthGrayTo8Bits) {
  // 1-bit gray 0b10110000 over 4 pixels: 1, 0, 1, 1 -> 255, 0, 255, 255 (libpng scales to the full range).
  RawPng one{4, 1, PNG_COLOR_TYPE_GRAY, 1, {{0xb0}}, {}, {}, -1};
  const Image a = decode_image(as_bytes(raw_png(one)));
  EXPECT_EQ(a.bit_depth, 8u);
  EXPECT_EQ(a.channels, 1u);
  EXPECT_EQ(a.at(0, 0, 0), 255u);
  EXPECT_EQ(a.at(1, 0, 0), 0u);
  EXPECT_EQ(a.at(3, 0, 0), 255u);
  // 4-bit gray 0x5f: 5 -> 5 * 17 = 85, 15 -> 255.
  RawPng four{2, 1, PNG_COLOR_TYPE_GRAY, 4, {{0x5f}}, {}, {}, -1};
  const Image b = decode_image(as_bytes(raw_png(four)));
  EXPECT_EQ(b.at(0, 0, 0), 85u);
  EXPECT_EQ(b.at(1, 0, 0), 255u);
}

TEST(Png, ExpandsPalettesToRgb) {
  RawPng p{3, 1, PNG_COLOR_TYPE_PALETTE, 8, {{2, 0, 1}}, {{10, 20, 30}, {40, 50, 60}, {70, 80, 90}}, {}, -1};
  const Image img = decode_image(as_bytes(raw_png(p)));
  ASSERT_EQ(img.channels, 3u);
  EXPECT_EQ(img.bit_depth, 8u);
  const std::uint32_t want[3][3] = {{70, 80, 90}, {10, 20, 30}, {40, 50, 60}};
  for (std::uint32_t x = 0; x < 3; ++x)
    for (std::uint32_t c = 0; c < 3; ++c) EXPECT_EQ(img.at(x, 0, c), want[x][c]) << x << "," << c;
}

TEST(Png, ExpandsPaletteTransparencyToAlpha) {
  // A 2-bit palette (indices 3, 0 packed as 0b11000000) whose entry 0 has alpha 7; entries without tRNS are opaque.
  RawPng p{2, 1, PNG_COLOR_TYPE_PALETTE, 2, {{0xc0}}, {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {11, 12, 13}}, {7}, -1};
  const Image img = decode_image(as_bytes(raw_png(p)));
  ASSERT_EQ(img.channels, 4u);
  const std::uint32_t want[2][4] = {{11, 12, 13, 255}, {1, 2, 3, 7}};
  for (std::uint32_t x = 0; x < 2; ++x)
    for (std::uint32_t c = 0; c < 4; ++c) EXPECT_EQ(img.at(x, 0, c), want[x][c]) << x << "," << c;
}

TEST(Png, ReadsGrayAlphaAndRgbaAsWritten) {
  RawPng ga{2, 1, PNG_COLOR_TYPE_GRAY_ALPHA, 8, {{9, 200, 0, 1}}, {}, {}, -1};
  const Image a = decode_image(as_bytes(raw_png(ga)));
  ASSERT_EQ(a.channels, 2u);
  EXPECT_TRUE(a.has_alpha());
  EXPECT_EQ(a.at(0, 0, 0), 9u);
  EXPECT_EQ(a.at(0, 0, 1), 200u);
  EXPECT_EQ(a.at(1, 0, 1), 1u);
  RawPng rgba{1, 2, PNG_COLOR_TYPE_RGB_ALPHA, 8, {{1, 2, 3, 4}, {5, 6, 7, 8}}, {}, {}, -1};
  const Image b = decode_image(as_bytes(raw_png(rgba)));
  ASSERT_EQ(b.channels, 4u);
  EXPECT_EQ(b.at(0, 1, 0), 5u);
  EXPECT_EQ(b.at(0, 1, 3), 8u);
}

TEST(Png, GrayTransparencyBecomesAlpha) {
  // Gray 8-bit with tRNS gray 50: pixel 50 gets alpha 0, pixel 60 alpha 255.
  RawPng p{2, 1, PNG_COLOR_TYPE_GRAY, 8, {{50, 60}}, {}, {}, 50};
  const Image img = decode_image(as_bytes(raw_png(p)));
  ASSERT_EQ(img.channels, 2u);
  EXPECT_EQ(img.at(0, 0, 1), 0u);
  EXPECT_EQ(img.at(1, 0, 0), 60u);
  EXPECT_EQ(img.at(1, 0, 1), 255u);
}
#endif

TEST(Png, DamagedFilesAreInputErrors) {
  REQUIRE_PNG();
  const std::vector<std::uint8_t> good = encode_image(pattern(17, 2, 3, 8, 255), FileFormat::png);
  const std::vector<std::uint8_t> truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
  EXPECT_TRUE(throws_error([&] { decode_image(truncated, "half.png"); }, ErrorKind::input, "half.png: "));
  const std::vector<std::uint8_t> signature_only(good.begin(), good.begin() + 8);
  EXPECT_TRUE(throws_error([&] { decode_image(signature_only, "sig.png"); }, ErrorKind::input, "sig.png: "));
  std::vector<std::uint8_t> bad_crc = good;
  bad_crc[20] ^= 0xff;  // inside IHDR: its CRC no longer matches
  EXPECT_TRUE(throws_error([&] { decode_image(bad_crc, "crc.png"); }, ErrorKind::input, "crc.png: "));
}

TEST(Png, BuildsWithoutPngSayHowToGetIt) {
  if (png_supported()) GTEST_SKIP() << "this build reads PNG; the message for builds without libpng is not reachable";
  const std::string sig = "\x89PNG\r\n\x1a\n";
  EXPECT_TRUE(throws_error([&] { decode_image(as_bytes(sig), "x.png"); }, ErrorKind::input, "libpng"));
  EXPECT_TRUE(throws_error([&] { encode_image(pattern(1, 1, 1, 8, 255), FileFormat::png); }, ErrorKind::input, "libpng"));
  const std::string out = (fs::temp_directory_path() / "levelhist-no-png-test.png").string();
  EXPECT_TRUE(throws_error([&] { write_image(out, pattern(1, 1, 1, 8, 255)); }, ErrorKind::input, out + ": "));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace

namespace {

// A bad image is an input error about the data, its fix apart from its
// message (the CLI prints "message; fix" and maps no subject of its own onto it).
TEST(ImageIo, ErrorsCarryTheirFixApart) {
  const std::string truncated = "P5 4 4 255\nab";
  const std::vector<std::uint8_t> bytes(truncated.begin(), truncated.end());
  try {
    levelhist::image::decode_image(bytes, "t.pgm");
    FAIL() << "no error";
  } catch (const levelhist::Error& e) {
    EXPECT_EQ(e.kind(), levelhist::ErrorKind::input);
    EXPECT_EQ(e.subject(), levelhist::ErrorSubject::data);
    EXPECT_FALSE(e.fix().empty()) << e.what();
    EXPECT_EQ(std::string(e.what()), e.message() + "; " + e.fix());
    EXPECT_EQ(e.message().find("; "), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("t.pgm"), std::string::npos) << e.message();
  }
}

}  // namespace
