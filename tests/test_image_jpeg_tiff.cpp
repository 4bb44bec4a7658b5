// JPEG and TIFF (image.hpp): files written by libjpeg and libtiff themselves
// (jpeg_tiff_test_support.hpp) read to the exact pixels -- TIFF to the pattern
// written, JPEG to what libjpeg decodes the same file to -- in every layout;
// damaged, truncated and unsupported files refused with one Error(input) line
// naming the file; the pixel limit and the read budget; and the library's own
// files read back by the libraries.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <tuple>

#include "image/image_codecs.hpp"
#include "image_test_support.hpp"
#include "jpeg_tiff_test_support.hpp"
#include "test_support.hpp"

namespace {

using levelhist::Error;
using levelhist::ErrorKind;
using levelhist::test::throws_error;
using namespace levelhist::image;
using namespace image_test;

// A smooth image (gradients, at most 40 x 24), which JPEG keeps within a few levels.
[[maybe_unused]] Image gradient(std::uint32_t w, std::uint32_t h, std::uint32_t channels) {
  Image img = Image::blank(w, h, channels, 8);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      for (std::uint32_t c = 0; c < channels; ++c) img.set(x, y, c, 20 + x * 3 + y * 2 + c * 20);
  return img;
}

[[maybe_unused]] bool same_image(const Image& a, const Image& b) {
  return a.width == b.width && a.height == b.height && a.channels == b.channels && a.bit_depth == b.bit_depth &&
         a.maxval == b.maxval && a.bytes == b.bytes;
}

// An error's message must be one line that names the file and says what to do.
[[maybe_unused]] ::testing::AssertionResult one_line_naming(const std::function<void()>& f, const std::string& name,
                                           const std::string& needle) {
  try {
    f();
  } catch (const Error& e) {
    const std::string what = e.what();
    if (e.kind() != ErrorKind::input) return ::testing::AssertionFailure() << "not an input error: " << what;
    if (what.rfind(name + ": ", 0) != 0) return ::testing::AssertionFailure() << "does not start with the name: " << what;
    if (what.find("; ") == std::string::npos) return ::testing::AssertionFailure() << "no fix: " << what;
    if (what.find('\n') != std::string::npos) return ::testing::AssertionFailure() << "more than one line: " << what;
    if (what.find(needle) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << what << "' does not say '" << needle << "'";
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no error";
}

// A pipe fed `bytes` (then closed) by a thread, or `endless` zeros after them
// until the reader goes away.
class Feeder {
 public:
  Feeder(std::string bytes, bool endless) {
    ::signal(SIGPIPE, SIG_IGN);
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_fd_ = fds[0];
    thread_ = std::thread([fd = fds[1], bytes = std::move(bytes), endless] {
      auto send = [fd](const char* p, std::size_t n) {
        while (n > 0) {
          const ssize_t w = ::write(fd, p, n);
          if (w <= 0) return false;
          p += w;
          n -= static_cast<std::size_t>(w);
        }
        return true;
      };
      bool open = send(bytes.data(), bytes.size());
      const std::string zeros(1 << 16, '\0');
      while (open && endless) open = send(zeros.data(), zeros.size());
      ::close(fd);
    });
  }
  ~Feeder() {
    ::close(read_fd_);
    thread_.join();
  }
  int fd() const { return read_fd_; }

 private:
  int read_fd_ = -1;
  std::thread thread_;
};

// ---- JPEG -------------------------------------------------------------------------

#define REQUIRE_JPEG() \
  if (!jpeg_supported()) GTEST_SKIP() << "this build has no JPEG support (libjpeg not found at configure time)"

TEST(JpegMagic, IsTheStartOfImageMarker) {
  EXPECT_TRUE(detail::looks_like_jpeg(as_bytes("\xff\xd8\xff\xe0")));
  EXPECT_FALSE(detail::looks_like_jpeg(as_bytes("\xff\xd8")));
  EXPECT_FALSE(detail::looks_like_jpeg(as_bytes("P5 1 1")));
}

#if LEVELHIST_HAVE_JPEG
class JpegRead : public ::testing::TestWithParam<std::tuple<std::uint32_t, bool>> {};

TEST_P(JpegRead, DecodesToWhatLibjpegDecodes) {
  REQUIRE_JPEG();
  const auto [channels, progressive] = GetParam();
  for (const auto& [w, h] : {std::pair{1u, 1u}, {17u, 9u}, {64u, 33u}}) {
    const Image img = pattern(w, h, channels, 8, 255, w);
    RawJpeg raw;
    raw.img = &img;
    raw.progressive = progressive;
    const std::string file = raw_jpeg(raw);
    ASSERT_FALSE(file.empty());
    const Image want = libjpeg_decode(file);
    const Image got = decode_image(as_bytes(file), "x.jpg");
    EXPECT_TRUE(same_image(got, want)) << w << " x " << h;
    EXPECT_EQ(got.channels, channels);
    EXPECT_EQ(got.maxval, 255u);
  }
}

INSTANTIATE_TEST_SUITE_P(Jpeg, JpegRead, ::testing::Combine(::testing::Values(1u, 3u), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == 1 ? "gray" : "rgb") +
                                  (std::get<1>(info.param) ? "_progressive" : "_baseline");
                         });

std::string gray_jpeg(std::uint32_t w = 40, std::uint32_t h = 24) {
  const Image img = gradient(w, h, 1);
  RawJpeg raw;
  raw.img = &img;
  return raw_jpeg(raw);
}

TEST(Jpeg, TruncatedAndDamagedFilesAreInputErrors) {
  REQUIRE_JPEG();
  const std::string file = gray_jpeg();
  const std::string half = file.substr(0, file.size() / 2);
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(half), "cut.jpg"); }, "cut.jpg", "truncated"));
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file.substr(0, 3)), "cut.jpg"); }, "cut.jpg", "truncated"));
  // The image data ends early at an end-of-image marker: libjpeg warns and
  // would fill the rest with gray; the reader refuses it (as djpeg -strict).
  const std::string early_end = half + "\xff\xd9";
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(early_end), "early.jpg"); }, "early.jpg", "JPEG"));
  // A header that is not one.
  const std::string junk = std::string("\xff\xd8\xff\xc0\x00\x02", 6) + std::string(64, '\x01');
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(junk), "junk.jpg"); }, "junk.jpg", "JPEG"));
}

TEST(Jpeg, CmykIsRefusedSayingWhatItIs) {
  REQUIRE_JPEG();
  const Image four = pattern(8, 8, 4, 8, 255);
  RawJpeg raw;
  raw.img = &four;
  raw.cmyk = true;
  const std::string file = raw_jpeg(raw);
  ASSERT_FALSE(file.empty());
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file), "cmyk.jpg"); }, "cmyk.jpg", "CMYK"));
}

TEST(Jpeg, PixelLimitIsCheckedBeforeDecoding) {
  REQUIRE_JPEG();
  const std::string file = gray_jpeg(40, 24);
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file), "big.jpg", ReadLimits{959}); }, "big.jpg",
                              "the JPEG header claims 40 x 24 = 960 pixels, more than the limit 959"));
  EXPECT_EQ(decode_image(as_bytes(file), "big.jpg", ReadLimits{960}).width, 40u);
}

TEST(Jpeg, AProgressiveFileOfTooManyScansIsRefused) {
  REQUIRE_JPEG();
  const Image img = gradient(16, 16, 1);
  // The DC coefficients, then each of the 63 AC coefficients alone, first
  // from bit 9 and then refined one bit per scan: 1 + 63 * 10 = 631 scans.
  RawJpeg raw;
  raw.img = &img;
  raw.script.push_back({1, {0}, 0, 0, 0, 0});
  for (int k = 1; k <= 63; ++k) {
    raw.script.push_back({1, {0}, k, k, 0, 9});
    for (int bit = 9; bit >= 1; --bit) raw.script.push_back({1, {0}, k, k, bit, bit - 1});
  }
  const std::string file = raw_jpeg(raw);
  ASSERT_FALSE(file.empty());
  ASSERT_EQ(libjpeg_decode(file).width, 16u);  // a valid file: libjpeg without a limit reads it
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file), "scans.jpg"); }, "scans.jpg", "more than 500 scans"));
}

TEST(Jpeg, EndlessMarkersFromAPipeStopAtTheMetadataBudget) {
  REQUIRE_JPEG();
  // SOI, then an APP1 marker segment of 65533 bytes, again and again.
  std::string segment = "\xff\xe1\xff\xff" + std::string(65533, 'x');
  const std::string head("\xff\xd8", 2);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::signal(SIGPIPE, SIG_IGN);
  std::atomic<std::uint64_t> sent{0};
  std::thread writer([&, fd = fds[1]] {
    bool open = ::write(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size());
    while (open) {
      std::size_t off = 0;
      while (open && off < segment.size()) {
        const ssize_t w = ::write(fd, segment.data() + off, segment.size() - off);
        open = w > 0;
        if (open) off += static_cast<std::size_t>(w), sent += static_cast<std::uint64_t>(w);
      }
    }
    ::close(fd);
  });
  EXPECT_TRUE(one_line_naming([&] { read_image(fds[0], "pipe"); }, "pipe", "markers before the image go on past"));
  ::close(fds[0]);
  writer.join();
  EXPECT_LT(sent.load(), detail::kMetadataBudget + (std::uint64_t{4} << 20));
}

TEST(Jpeg, WritesGrayAndRgbThatLibjpegReads) {
  REQUIRE_JPEG();
  for (std::uint32_t channels : {1u, 3u}) {
    const Image img = gradient(33, 20, channels);
    const std::vector<std::uint8_t> bytes = encode_image(img, FileFormat::jpeg);
    const Image back = libjpeg_decode(std::string(bytes.begin(), bytes.end()));
    ASSERT_EQ(back.width, 33u);
    ASSERT_EQ(back.height, 20u);
    ASSERT_EQ(back.channels, channels);
    // Lossy, but at quality 95 without chroma subsampling a gradient stays within a few levels.
    int worst = 0;
    for (std::size_t i = 0; i < img.bytes.size(); ++i) worst = std::max(worst, std::abs(int(img.bytes[i]) - int(back.bytes[i])));
    EXPECT_LE(worst, 6) << channels << " channels";
    // And the library reads its own file as libjpeg does.
    EXPECT_TRUE(same_image(decode_image(bytes, "own.jpg"), back));
  }
}

TEST(Jpeg, WritingRefusesSixteenBitsAndAlpha) {
  REQUIRE_JPEG();
  EXPECT_TRUE(throws_error([] { encode_image(pattern(2, 2, 1, 16, 65535), FileFormat::jpeg); }, ErrorKind::usage, "16-bit"));
  EXPECT_TRUE(throws_error([] { encode_image(pattern(2, 2, 4, 8, 255), FileFormat::jpeg); }, ErrorKind::usage, "alpha"));
  EXPECT_TRUE(throws_error([] { encode_image(pattern(2, 2, 2, 8, 255), FileFormat::jpeg); }, ErrorKind::usage, "alpha"));
}
#endif

TEST(Jpeg, BuildsWithoutJpegSayHowToGetIt) {
  if (jpeg_supported()) GTEST_SKIP() << "this build reads JPEG; the message for builds without libjpeg is not reachable";
  EXPECT_TRUE(throws_error([] { decode_image(as_bytes("\xff\xd8\xff\xe0xxxx"), "x.jpg"); }, ErrorKind::input, "libjpeg"));
  EXPECT_TRUE(throws_error([] { encode_image(pattern(1, 1, 1, 8, 255), FileFormat::jpeg); }, ErrorKind::input, "JPEG"));
}

// ---- TIFF -------------------------------------------------------------------------

#define REQUIRE_TIFF() \
  if (!tiff_supported()) GTEST_SKIP() << "this build has no TIFF support (libtiff 4.5+ not found at configure time)"

TEST(TiffMagic, IsTheByteOrderAndFortyTwo) {
  EXPECT_TRUE(detail::looks_like_tiff(as_bytes(std::string("II*\0", 4))));
  EXPECT_TRUE(detail::looks_like_tiff(as_bytes(std::string("MM\0*", 4))));
  EXPECT_TRUE(detail::looks_like_tiff(as_bytes(std::string("II+\0", 4))));  // BigTIFF
  EXPECT_FALSE(detail::looks_like_tiff(as_bytes(std::string("II*", 3))));
  EXPECT_FALSE(detail::looks_like_tiff(as_bytes(std::string("IM*\0", 4))));
}

#if LEVELHIST_HAVE_TIFF
// depth, channels, tiled, separate planes.
class TiffRead : public ::testing::TestWithParam<std::tuple<std::uint32_t, std::uint32_t, bool, bool>> {};

TEST_P(TiffRead, EveryLayoutReadsToTheExactPixels) {
  REQUIRE_TIFF();
  const auto [depth, channels, tiled, separate] = GetParam();
  const Image img = pattern(37, 21, channels, depth, depth == 16 ? 65535 : 255, channels + depth);
  // Byte orders and compressions vary over the cases.
  const std::uint16_t compressions[] = {COMPRESSION_NONE, COMPRESSION_LZW, COMPRESSION_ADOBE_DEFLATE, COMPRESSION_PACKBITS};
  const unsigned variant = channels + (tiled ? 2 : 0) + (separate ? 1 : 0) + depth / 8;
  RawTiff raw;
  raw.img = &img;
  raw.tiled = tiled;
  raw.separate = separate;
  raw.big_endian = variant % 2 == 1;
  raw.compression = compressions[variant % 4];
  const std::string file = raw_tiff(raw);
  ASSERT_FALSE(file.empty());
  EXPECT_TRUE(same_image(decode_image(as_bytes(file), "x.tif"), img))
      << "big-endian " << raw.big_endian << ", compression " << raw.compression;
}

std::string tiff_case_name(const ::testing::TestParamInfo<TiffRead::ParamType>& info) {
  const auto& [depth, channels, tiled, separate] = info.param;
  return "bits" + std::to_string(depth) + "_ch" + std::to_string(channels) + (tiled ? "_tiles" : "_strips") +
         (separate ? "_separate" : "_contiguous");
}

INSTANTIATE_TEST_SUITE_P(Tiff, TiffRead,
                         ::testing::Combine(::testing::Values(8u, 16u), ::testing::Values(1u, 2u, 3u, 4u),
                                            ::testing::Bool(), ::testing::Bool()),
                         tiff_case_name);

std::string gray_tiff(const Image& img) {
  RawTiff raw;
  raw.img = &img;
  return raw_tiff(raw);
}

TEST(Tiff, MinIsWhiteGrayIsInverted) {
  REQUIRE_TIFF();
  for (std::uint32_t depth : {8u, 16u}) {
    const Image img = pattern(9, 4, 1, depth, depth == 16 ? 65535 : 255);
    RawTiff raw;
    raw.img = &img;
    raw.min_is_white = true;  // stored as maxval - v
    EXPECT_TRUE(same_image(decode_image(as_bytes(raw_tiff(raw)), "white.tif"), img)) << depth;
  }
}

TEST(Tiff, WhatItDoesNotReadIsRefusedSayingWhatTheFileHolds) {
  REQUIRE_TIFF();
  EXPECT_TRUE(one_line_naming([] { decode_image(as_bytes(raw_tiff_other(8, SAMPLEFORMAT_UINT, PHOTOMETRIC_PALETTE)), "p.tif"); },
                              "p.tif", "palette"));
  EXPECT_TRUE(one_line_naming([] { decode_image(as_bytes(raw_tiff_other(32, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_MINISBLACK)), "f.tif"); },
                              "f.tif", "32-bit samples"));
  EXPECT_TRUE(one_line_naming([] { decode_image(as_bytes(raw_tiff_other(8, SAMPLEFORMAT_INT, PHOTOMETRIC_MINISBLACK)), "s.tif"); },
                              "s.tif", "signed samples"));
  EXPECT_TRUE(one_line_naming([] { decode_image(as_bytes(raw_tiff_other(1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK)), "b.tif"); },
                              "b.tif", "1-bit samples"));
  EXPECT_TRUE(one_line_naming([] { decode_image(as_bytes(raw_tiff_other(8, SAMPLEFORMAT_UINT, PHOTOMETRIC_SEPARATED, 4)), "c.tif"); },
                              "c.tif", "CMYK"));
  EXPECT_TRUE(one_line_naming([] { decode_image(as_bytes(raw_tiff_other(8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, 5)), "x.tif"); },
                              "x.tif", "5 samples per pixel"));
}

TEST(Tiff, TruncatedFilesAreInputErrors) {
  REQUIRE_TIFF();
  const Image img = pattern(30, 20, 3, 8, 255);
  const std::string file = gray_tiff(img);
  // libtiff writes the pixels first and the directory last: without its end, no directory.
  for (std::size_t keep : {std::size_t{4}, std::size_t{8}, file.size() / 2, file.size() - 4})
    EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file.substr(0, keep)), "cut.tif"); }, "cut.tif", "TIFF"))
        << keep << " bytes";
}

// A hand-made TIFF header and directory claiming width x height, 8-bit gray,
// one strip at offset 8 of width x height bytes, which the file does not hold.
std::string claiming_tiff(std::uint32_t width, std::uint32_t height) {
  std::string s("II*\0\x08\0\0\0", 8);
  auto u16 = [&](std::uint16_t v) { s += static_cast<char>(v & 0xff), s += static_cast<char>(v >> 8); };
  auto u32 = [&](std::uint32_t v) { for (int k = 0; k < 4; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff); };
  auto entry = [&](std::uint16_t tag, std::uint16_t type, std::uint32_t value) {
    u16(tag), u16(type), u32(1);
    if (type == 3) u16(static_cast<std::uint16_t>(value)), u16(0);
    else u32(value);
  };
  u16(8);
  entry(256, 4, width);   // ImageWidth, LONG
  entry(257, 4, height);  // ImageLength
  entry(258, 3, 8);       // BitsPerSample
  entry(262, 3, 1);       // Photometric: min-is-black
  entry(273, 4, 8);       // StripOffsets
  entry(277, 3, 1);       // SamplesPerPixel
  entry(278, 4, height);  // RowsPerStrip
  entry(279, 4, width * height);  // StripByteCounts
  u32(0);
  return s;
}

TEST(Tiff, AHugeClaimIsRefusedBeforeAnythingIsAllocated) {
  REQUIRE_TIFF();
  const std::string file = claiming_tiff(100000, 100000);
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file), "claim.tif"); }, "claim.tif",
                              "the TIFF header claims 100000 x 100000 = 10000000000 pixels, more than the limit"));
  // Under the limit, the missing pixels end it with an error, not a gray image.
  const std::string small = claiming_tiff(64, 64);
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(small), "lie.tif"); }, "lie.tif", "TIFF"));
}

TEST(Tiff, PixelLimitHoldsAndIncludesItsValue) {
  REQUIRE_TIFF();
  const Image img = pattern(10, 10, 1, 8, 255);
  const std::string file = gray_tiff(img);
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file), "x.tif", ReadLimits{99}); }, "x.tif",
                              "10 x 10 = 100 pixels, more than the limit 99"));
  EXPECT_TRUE(same_image(decode_image(as_bytes(file), "x.tif", ReadLimits{100}), img));
}

TEST(Tiff, ReadsFromAPipeAndAFile) {
  REQUIRE_TIFF();
  const Image img = pattern(23, 11, 4, 16, 65535);
  RawTiff raw;
  raw.img = &img;
  raw.tiled = true;
  const std::string file = raw_tiff(raw);
  {
    Feeder feeder(file, false);
    EXPECT_TRUE(same_image(read_image(feeder.fd(), "pipe"), img));
  }
  const std::string path = temp_tiff_path();
  std::ofstream(path, std::ios::binary).write(file.data(), static_cast<std::streamsize>(file.size()));
  EXPECT_TRUE(same_image(read_image(path), img));
  // From an open descriptor that was read partly: from where it stands.
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(same_image(read_image(fd, "fd"), img));
  ::close(fd);
  std::remove(path.c_str());
}

TEST(Tiff, AnEndlessPipeStopsAtItsBudget) {
  REQUIRE_TIFF();
  // A TIFF header, then zeros forever: the reader must stop at 16 bytes per
  // pixel of the limit plus the metadata budget.
  Feeder feeder(std::string("II*\0\x08\0\0\0", 8), true);
  EXPECT_TRUE(one_line_naming([&] { read_image(feeder.fd(), "endless", ReadLimits{1}); }, "endless",
                              "goes on past " + std::to_string(16 + detail::kMetadataBudget) + " bytes"));
}

// A file a fuzzer found: libtiff's message about it runs over two lines
// ("Tag InkNames:\n  Value 1 of NumberOfInks ..."); the error must still be one.
TEST(Tiff, LibtiffMessagesBecomeOneLine) {
  REQUIRE_TIFF();
  const std::string hex =
      "4d4d002a00000134803fc12fe201598ab451a4902702f9387a2c0d8cc4411003bdbccd5e2ad348931c9cac451a130762a0c821eee66ab116"
      "6a248a00de5e26994a8431908420ff7737598bb552651077331f8da5c258e8521803bd9cad461ac942903f802a553aa556ad57ac566b55ba"
      "e576bd5fb0586c555808800280103824160c23834260a3c85434ab0d851ba21138a4562d178c466351b8e476350180305609f471f4d85b25"
      "0e45017033d5c8d36136992b853a590a743194882300f839faec6dbcdc4d1602bd3c8d3e1acb4491c09c2c057a031f6ea6cb216ea64aa10e"
      "662289005e1e06894280379385a0bf57275187b35164903813002a553aa556ad57ac566b55bae576bd5fb0586c555808802c40103824160c"
      "ca834260ae385435f90d8505621138a4562d178c466351b8e4763501000c0100000300000001001100000101000300000001000500000102"
      "00030000000200080008010300030000000100050000010600030000000100010000011500030000000100020000011c0003000000010002"
      "00000142000300000001001000000143000300000001001000000144000400000004000001d20145000300000004000001ca014d00030000"
      "000100010000000000000072002400720024000000080000007a0000009e00000110";
  std::string file;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) file += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  ASSERT_EQ(file.size(), 482u);
  EXPECT_TRUE(one_line_naming([&] { decode_image(as_bytes(file), "found.tif"); }, "found.tif", "libtiff"));
}

TEST(Tiff, WritesEveryShapeThatLibtiffReadsBack) {
  REQUIRE_TIFF();
  for (std::uint32_t depth : {8u, 16u})
    for (std::uint32_t channels = 1; channels <= 4; ++channels) {
      const Image img = pattern(19, 7, channels, depth, depth == 16 ? 65535 : 255, depth * channels);
      const std::vector<std::uint8_t> bytes = encode_image(img, FileFormat::tiff);
      EXPECT_TRUE(same_image(libtiff_decode(std::string(bytes.begin(), bytes.end())), img)) << depth << " " << channels;
      EXPECT_TRUE(same_image(decode_image(bytes, "own.tif"), img)) << depth << " " << channels;
    }
}
#endif

TEST(Tiff, BuildsWithoutTiffSayHowToGetIt) {
  if (tiff_supported()) GTEST_SKIP() << "this build reads TIFF; the message for builds without libtiff is not reachable";
  EXPECT_TRUE(throws_error([] { decode_image(as_bytes(std::string("II*\0\x08\0\0\0", 8)), "x.tif"); }, ErrorKind::input, "libtiff"));
  EXPECT_TRUE(throws_error([] { encode_image(pattern(1, 1, 1, 8, 255), FileFormat::tiff); }, ErrorKind::input, "TIFF"));
}

TEST(ImageFormats, ExtensionsAndNames) {
  EXPECT_EQ(format_of_extension("a.JPG"), FileFormat::jpeg);
  EXPECT_EQ(format_of_extension("dir.x/a.jpeg"), FileFormat::jpeg);
  EXPECT_EQ(format_of_extension("a.tif"), FileFormat::tiff);
  EXPECT_EQ(format_of_extension("a.TIFF"), FileFormat::tiff);
  EXPECT_EQ(format_of_extension("a.pnm"), FileFormat::pnm);
  EXPECT_EQ(format_of_extension("a.png"), FileFormat::png);
  EXPECT_FALSE(format_of_extension("a.gif").has_value());
  EXPECT_FALSE(format_of_extension("tif").has_value());
  EXPECT_STREQ(format_name(FileFormat::tiff), "TIFF");
  EXPECT_TRUE(format_supported(FileFormat::pnm));
  EXPECT_EQ(format_supported(FileFormat::jpeg), jpeg_supported());
}

}  // namespace
