// Bounded image reads: a header's claim is checked against the pixel limit
// (image::ReadLimits, LEVELHIST_MAX_PIXELS, the CLI's --max-pixels) before
// anything is allocated; the readers decide from the first bytes whether a
// file is an image at all and take only what its header says it needs, so
// /dev/zero, /dev/urandom and a FIFO fed forever end with one error line.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cli_test_support.hpp"
#include "image_test_support.hpp"
#include "test_support.hpp"

namespace {

using levelhist::Error;
using levelhist::ErrorKind;
using levelhist::image::decode_image;
using levelhist::image::encode_image;
using levelhist::image::FileFormat;
using levelhist::image::kDefaultMaxPixels;
using levelhist::image::png_supported;
using levelhist::image::read_image;
using levelhist::image::ReadLimits;
using namespace image_test;

#define REQUIRE_PNG() \
  if (!png_supported()) GTEST_SKIP() << "this build has no PNG support (libpng not found at configure time)"

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The message of the Error(kind) that `f` throws, or "" (with a failure) when it throws none.
template <class F>
std::string error_of(F&& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

// Sets (or unsets, with nullptr) LEVELHIST_MAX_PIXELS for one test and puts back what was there.
class MaxPixelsEnv {
 public:
  explicit MaxPixelsEnv(const char* value) {
    if (const char* old = std::getenv(kName)) old_ = old;
    set(value);
  }
  ~MaxPixelsEnv() { set(old_ ? old_->c_str() : nullptr); }
  void set(const char* value) {
    if (value) setenv(kName, value, 1);
    else unsetenv(kName);
  }

 private:
  static constexpr const char* kName = "LEVELHIST_MAX_PIXELS";
  std::optional<std::string> old_;
};

// CRC-32 of PNG chunks (ISO 3309, reflected polynomial 0xedb88320), written
// here so that the forged files below do not depend on the code under test.
std::uint32_t crc32(const std::string& bytes) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

std::string big_endian(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// One PNG chunk: length, type, data, CRC of type and data.
std::string png_chunk(const std::string& type, const std::string& data) {
  return big_endian(static_cast<std::uint32_t>(data.size())) + type + data + big_endian(crc32(type + data));
}

// `png` with the size in its IHDR replaced (and the chunk's CRC fixed): a
// small valid file that claims to be width x height.
std::string claiming(std::string png, std::uint32_t width, std::uint32_t height) {
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  png.replace(16, 8, big_endian(width) + big_endian(height));
  png.replace(29, 4, big_endian(crc32(png.substr(12, 17))));
  return png;
}

std::string encoded(const Image& img, FileFormat format) {
  const std::vector<std::uint8_t> v = encode_image(img, format);
  return {v.begin(), v.end()};
}

std::string tiny_png() { return encoded(pattern(1, 1, 1, 8, 255), FileFormat::png); }

std::string claim_message(const std::string& name, const char* format, std::uint64_t w, std::uint64_t h,
                          std::uint64_t limit) {
  return name + ": the " + format + " header claims " + std::to_string(w) + " x " + std::to_string(h) + " = " +
         std::to_string(w * h) + " pixels, more than the limit " + std::to_string(limit) +
         "; raise it with --max-pixels or LEVELHIST_MAX_PIXELS";
}

// ---- the pixel limit ----------------------------------------------------------------

TEST(ImageLimits, PngClaimIsRefusedBeforeAnythingIsDecoded) {
  REQUIRE_PNG();
  const MaxPixelsEnv env(nullptr);
  for (std::uint32_t side : {100000u, 999999u}) {
    const std::string file = claiming(tiny_png(), side, side);
    EXPECT_LT(file.size(), 100u);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of([&] { decode_image(as_bytes(file), "claim.png"); }, ErrorKind::input),
              claim_message("claim.png", "PNG", side, side, kDefaultMaxPixels));
    EXPECT_LT(seconds_since(start), 1.0);
  }
}

// 17 x 2 = 34 pixels in every format: accepted at a limit of 34, refused at 33.
TEST(ImageLimits, TheLimitHoldsForEveryFormatAndIncludesItsValue) {
  const MaxPixelsEnv env(nullptr);
  struct Case {
    const char* format;
    std::string bytes;
    Image img;
  };
  std::vector<Case> cases;
  for (std::uint32_t channels : {1u, 3u})
    for (bool plain : {false, true}) {
      const Image img = pattern(17, 2, channels, 8, 255, channels);
      cases.push_back({channels == 1 ? "PGM" : "PPM", pnm_file(img, plain), img});
    }
  if (png_supported()) {
    const Image img = pattern(17, 2, 4, 16, 65535, 4);
    cases.push_back({"PNG", encoded(img, FileFormat::png), img});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bytes.substr(0, 2));
    EXPECT_TRUE(same_pixels(decode_image(as_bytes(c.bytes), "f", ReadLimits{34}), c.img));
    EXPECT_EQ(error_of([&] { decode_image(as_bytes(c.bytes), "f", ReadLimits{33}); }, ErrorKind::input),
              claim_message("f", c.format, 17, 2, 33));
  }
}

TEST(ImageLimits, TheEnvironmentSetsTheDefaultLimit) {
  const std::string file = pnm_file(pattern(17, 2, 1, 8, 255), false);
  MaxPixelsEnv env("33");
  EXPECT_EQ(error_of([&] { decode_image(as_bytes(file), "f"); }, ErrorKind::input),
            claim_message("f", "PGM", 17, 2, 33));
  EXPECT_EQ(decode_image(as_bytes(file), "f", ReadLimits{34}).width, 17u);  // an explicit limit wins
  for (const char* bad : {"abc", "0", "-5", "12x", "", "3\n"}) {
    env.set(bad);
    const std::string what = error_of([&] { decode_image(as_bytes(file), "f"); }, ErrorKind::usage);
    EXPECT_NE(what.find("LEVELHIST_MAX_PIXELS="), std::string::npos) << what;
    EXPECT_NE(what.find("is not a positive integer; "), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(ImageLimits, PnmClaimIsRefusedBeforeTheFileSizeCheck) {
  const MaxPixelsEnv env(nullptr);
  EXPECT_EQ(error_of([] { decode_image(as_bytes("P6 100000 100000 255\n"), "claim.ppm"); }, ErrorKind::input),
            claim_message("claim.ppm", "PPM", 100000, 100000, kDefaultMaxPixels));
  // Raised past what memory can address, the byte count is what stops it.
  const std::string what = error_of(
      [] { decode_image(as_bytes("P6 4294967295 4294967295 65535\n"), "big.ppm", ReadLimits{UINT64_MAX}); },
      ErrorKind::input);
  EXPECT_NE(what.find("too large for memory"), std::string::npos) << what;
}

TEST(ImageLimits, APngThatLiesUnderTheLimitFailsOnItsMissingData) {
  REQUIRE_PNG();
  const MaxPixelsEnv env(nullptr);
  const std::string file = claiming(tiny_png(), 16384, 16384);  // 2^28 pixels: exactly the default limit
  const auto start = std::chrono::steady_clock::now();
  const std::string what = error_of([&] { decode_image(as_bytes(file), "lie.png"); }, ErrorKind::input);
  EXPECT_EQ(what.rfind("lie.png: not a valid PNG image (libpng: ", 0), 0u) << what;
  EXPECT_LT(seconds_since(start), 2.0);
}

#if LEVELHIST_HAVE_PNG
TEST(ImageLimits, AllocationFailureNamesTheFileAndTheBytes) {
#if defined(LEVELHIST_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer aborts on an allocation of petabytes instead of failing it";
#endif
  // Adam7 needs the whole image at once: 2^20 x (2^31 - 1) gray bytes, which no machine has.
  RawPng p{1, 1, PNG_COLOR_TYPE_GRAY, 8, {{7}}, {}, {}, -1, PNG_INTERLACE_ADAM7};
  const std::uint32_t w = 1u << 20, h = 0x7fffffffu;
  const std::string file = claiming(raw_png(p), w, h);
  EXPECT_EQ(error_of([&] { decode_image(as_bytes(file), "huge.png", ReadLimits{UINT64_MAX}); }, ErrorKind::input),
            "huge.png: cannot allocate " + std::to_string(std::uint64_t{w} * h) + " bytes for its " +
                std::to_string(w) + " x " + std::to_string(h) +
                " pixels (out of memory); close other programs, or give a smaller image");
}

TEST(ImageLimits, InterlacedPngReadsToTheExactPixels) {
  // Adam7 fills each row over several passes: every pixel must still land in its place.
  RawPng gray{5, 3, PNG_COLOR_TYPE_GRAY, 8, {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, {11, 12, 13, 14, 15}}, {}, {}, -1,
              PNG_INTERLACE_ADAM7};
  const Image img = decode_image(as_bytes(raw_png(gray)));
  ASSERT_EQ(img.width, 5u);
  ASSERT_EQ(img.height, 3u);
  for (std::uint32_t y = 0; y < 3; ++y)
    for (std::uint32_t x = 0; x < 5; ++x) EXPECT_EQ(img.at(x, y, 0), 5 * y + x + 1) << x << "," << y;
  const Image rgba = pattern(9, 10, 4, 16, 65535, 3);
  RawPng big{9, 10, PNG_COLOR_TYPE_RGB_ALPHA, 16, {}, {}, {}, -1, PNG_INTERLACE_ADAM7};
  for (std::uint32_t y = 0; y < 10; ++y) {
    std::vector<std::uint8_t> row;
    for (std::uint32_t x = 0; x < 9; ++x)
      for (std::uint32_t c = 0; c < 4; ++c) {
        row.push_back(static_cast<std::uint8_t>(rgba.at(x, y, c) >> 8));  // PNG: big-endian
        row.push_back(static_cast<std::uint8_t>(rgba.at(x, y, c)));
      }
    big.rows.push_back(row);
  }
  EXPECT_TRUE(same_pixels(decode_image(as_bytes(raw_png(big))), rgba));
}
#endif

// ---- reading only what the header needs ------------------------------------------

// A FIFO in a temporary directory that a thread feeds with `head`, then `chunk`
// over and over until the reader goes away; counts what it could write.
class EndlessFifo {
 public:
  EndlessFifo(std::string head, std::string chunk) : head_(std::move(head)), chunk_(std::move(chunk)) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "levelhist-fifo-XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/endless";
    EXPECT_EQ(mkfifo(path_.c_str(), 0600), 0);
    signal(SIGPIPE, SIG_IGN);  // the reader closing must end the writer with EPIPE, not kill the tests
    writer_ = std::thread([this] { feed(); });
  }
  ~EndlessFifo() {
    // A writer still waiting for a reader in open() gets one that closes at once.
    const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK);
    for (int i = 0; i < 500 && !opened_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (fd >= 0) ::close(fd);
    writer_.join();
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }
  std::uint64_t written() const { return written_; }

 private:
  void feed() {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    opened_ = true;
    if (fd < 0) return;
    auto put = [&](const std::string& s) {
      for (std::size_t done = 0; done < s.size();) {
        const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
        written_ += static_cast<std::uint64_t>(n);
      }
      return true;
    };
    if (put(head_))
      while (put(chunk_)) {
      }
    ::close(fd);
  }

  std::string head_, chunk_, dir_, path_;
  std::atomic<bool> opened_{false};
  std::atomic<std::uint64_t> written_{0};
  std::thread writer_;
};

// What a pipe can hold besides what its reader took (Linux: 64 KiB by default,
// at most /proc/sys/fs/pipe-max-size when raised): room to spare.
constexpr std::uint64_t kPipeSlack = std::uint64_t{2} << 20;

TEST(BoundedReads, DevZeroIsRefusedFromItsFirstBytes) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([] { read_image("/dev/zero"); }, ErrorKind::input),
            "/dev/zero: not a PGM, PPM, PNG, JPEG or TIFF image (unknown magic bytes: 00 00 00 00 00 00 00 00); give "
            "a Netpbm P2/P3/P5/P6, PNG, JPEG or TIFF file");
  EXPECT_LT(seconds_since(start), 1.0);
}

TEST(BoundedReads, DevUrandomEndsWithAnError) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    const std::string what = error_of([] { read_image("/dev/urandom"); }, ErrorKind::input);
    EXPECT_EQ(what.rfind("/dev/urandom: ", 0), 0u) << what;
  }
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(BoundedReads, AFifoReadsOnlyTheFirstImage) {
  const Image img = pattern(17, 2, 3, 16, 1000, 5);
  const std::string file = pnm_file(img, false);
  EndlessFifo fifo(file, std::string(4096, 'P'));
  EXPECT_TRUE(same_pixels(read_image(fifo.path()), img));
  // The writer gets no further than what the reader took plus what the pipe holds.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LT(fifo.written(), file.size() + kPipeSlack);
}

TEST(BoundedReads, AFifoOfZerosIsRefusedAtOnce) {
  EndlessFifo fifo("", std::string(65536, '\0'));
  const std::string what = error_of([&] { read_image(fifo.path()); }, ErrorKind::input);
  EXPECT_NE(what.find("unknown magic bytes: 00 00"), std::string::npos) << what;
}

TEST(BoundedReads, AnEndlessNetpbmHeaderStopsAtItsBudget) {
  for (const char* filler : {" ", "0", "# a comment that never ends "}) {
    SCOPED_TRACE(filler);
    EndlessFifo fifo("P5 ", std::string(4096, filler[0]) + filler);
    const auto start = std::chrono::steady_clock::now();
    const std::string what = error_of([&] { read_image(fifo.path()); }, ErrorKind::input);
    EXPECT_NE(what.find("the PGM header goes on past 1048576 bytes"), std::string::npos) << what;
    EXPECT_LT(seconds_since(start), 10.0);
    EXPECT_LT(fifo.written(), (std::uint64_t{1} << 20) + kPipeSlack);
  }
}

TEST(BoundedReads, AnEndlessPlainRasterStopsAtItsBudget) {
  // Leading zeros keep the one sample a valid 0 forever: it must be refused, not cut short and accepted.
  EndlessFifo zeros("P2 1 1 255\n", std::string(4096, '0'));
  std::string what = error_of([&] { read_image(zeros.path()); }, ErrorKind::input);
  EXPECT_NE(what.find("the plain PGM pixel data goes on past"), std::string::npos) << what;
  EndlessFifo spaces("P3 2 1 255\n1 2 3\n", std::string(4096, ' '));
  what = error_of([&] { read_image(spaces.path()); }, ErrorKind::input);
  EXPECT_NE(what.find("the plain PPM pixel data goes on past"), std::string::npos) << what;
}

TEST(BoundedReads, TheSameLimitsHoldInMemory) {
  // decode_image reads through the same budget: an over-long header is refused there too.
  const std::string file = "P5 " + std::string((1 << 20) + 10, ' ') + "1 1 255\n\x01";
  const std::string what = error_of([&] { decode_image(as_bytes(file), "mem.pgm"); }, ErrorKind::input);
  EXPECT_NE(what.find("the PGM header goes on past 1048576 bytes"), std::string::npos) << what;
  // Bytes after the raster are ignored, as Netpbm allows several images in one file.
  const Image img = pattern(3, 2, 1, 8, 255);
  EXPECT_TRUE(same_pixels(decode_image(as_bytes(pnm_file(img, false) + "P5 9 9 255\n"), "two.pgm"), img));
}

TEST(BoundedReads, EndlessPngChunksStopAtTheMetadataBudget) {
  REQUIRE_PNG();
  // The signature and IHDR of a real 1 x 1 image, then private chunks forever.
  const std::string head = tiny_png().substr(0, 33);
  const std::string chunk = png_chunk("prVt", std::string(65536, 'x'));
  EndlessFifo fifo(head, chunk);
  const auto start = std::chrono::steady_clock::now();
  const std::string what = error_of([&] { read_image(fifo.path()); }, ErrorKind::input);
  EXPECT_NE(what.find("the PNG chunks before the pixels go on past 67108864 bytes"), std::string::npos) << what;
  EXPECT_LT(seconds_since(start), 30.0);
  EXPECT_LT(fifo.written(), (std::uint64_t{64} << 20) + kPipeSlack);
}

// ---- the CLI ------------------------------------------------------------------------

using cli_test::CliTest;
using cli_test::fails;
using cli_test::ok;
using cli_test::RunSpec;

class ImageBoundsCli : public CliTest {};

TEST_F(ImageBoundsCli, DevicesEndQuicklyWithOneErrorLine) {
  cli_test::Result r = fails(1, {"image", "/dev/zero"});
  EXPECT_NE(r.err.find("'/dev/zero': not a PGM, PPM, PNG, JPEG or TIFF image (unknown magic bytes: 00 00"), std::string::npos)
      << r.err;
  EXPECT_LT(r.seconds, 5.0);
  r = fails(1, {"image", "/dev/urandom"});
  EXPECT_NE(r.err.find("'/dev/urandom': "), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

TEST_F(ImageBoundsCli, AFifoFedForeverEnds) {
  {
    EndlessFifo fifo("", std::string(65536, '\0'));
    const cli_test::Result r = fails(1, {"image", fifo.path()});
    EXPECT_NE(r.err.find("unknown magic bytes"), std::string::npos) << r.err;
  }
  {
    EndlessFifo fifo(pnm_file(pattern(4, 2, 1, 8, 255), false), std::string(4096, '\x7f'));
    const cli_test::Result r = ok({"image", "--format", "json", fifo.path()});
    const cli_test::Json j = cli_test::parse_json(r.out);
    EXPECT_EQ(j["width"].get<std::uint64_t>(), 4u);
    EXPECT_EQ(j["height"].get<std::uint64_t>(), 2u);
  }
}

TEST_F(ImageBoundsCli, MaxPixelsAndTheEnvironmentSetTheLimit) {
  const std::string pgm = file("g.pgm", pnm_file(pattern(17, 2, 1, 8, 255), false));
  const std::string want = claim_message("'" + pgm + "'", "PGM", 17, 2, 33);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"image", "--max-pixels", "33", pgm},
        {"threshold", pgm, "-o", path("t.pgm"), "--value", "9", "--max-pixels=33"},
        {"equalize", "--max-pixels", "33", pgm, "-o", path("e.pgm")}}) {
    const cli_test::Result r = fails(1, args);
    EXPECT_EQ(r.err, "levelhist: " + want + "\n");
  }
  EXPECT_FALSE(std::filesystem::exists(path("t.pgm")));
  EXPECT_FALSE(std::filesystem::exists(path("e.pgm")));
  ok({"image", "--max-pixels", "34", pgm});
  ok({"threshold", pgm, "-o", path("t.pgm"), "--value", "9", "--max-pixels", "34"});
  ok({"equalize", pgm, "-o", path("e.pgm"), "--max-pixels", "34"});

  RunSpec env33;
  env33.env = {"LEVELHIST_MAX_PIXELS=33"};
  EXPECT_EQ(fails(1, {"image", pgm}, env33).err, "levelhist: " + want + "\n");
  ok({"image", "--max-pixels", "34", pgm}, env33);  // the option wins over the environment
  RunSpec bad_env;
  bad_env.env = {"LEVELHIST_MAX_PIXELS=lots"};
  const cli_test::Result r = fails(2, {"image", pgm}, bad_env);
  EXPECT_NE(r.err.find("LEVELHIST_MAX_PIXELS='lots' is not a positive integer"), std::string::npos) << r.err;
  for (const char* bad : {"0", "-1", "1e6", "many"}) fails(1, {"image", "--max-pixels", bad, pgm});
  fails(2, {"image", "--max-pixels"});
}

TEST_F(ImageBoundsCli, ALyingPngHeaderIsRefusedQuickly) {
  REQUIRE_PNG();
  const std::string png = file("claim.png", claiming(tiny_png(), 100000, 100000));
  const cli_test::Result r = fails(1, {"image", png});
  EXPECT_EQ(r.err, "levelhist: " + claim_message("'" + png + "'", "PNG", 100000, 100000, kDefaultMaxPixels) + "\n");
  EXPECT_LT(r.seconds, 5.0);
}

}  // namespace
