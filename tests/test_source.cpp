// Sources (source.hpp): a file, a byte range of one, a pipe, counted as they
// are read, equal to the same bytes counted from memory; data that ends inside
// a sample, a file that shrinks, a read error: an input error that adds nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "levelhist/levelhist.hpp"

namespace levelhist::test {
namespace {

namespace fs = std::filesystem;

Options cpu() {
  Options o;
  o.backend = BackendChoice::cpu;
  o.threads = 2;
  return o;
}

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng() >> 56);
  return v;
}

struct TempFile {
  fs::path path;
  explicit TempFile(const std::vector<unsigned char>& bytes) {
    path = fs::temp_directory_path() / ("levelhist-source-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    if (!bytes.empty()) {
      EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    }
    std::fclose(f);
  }
  ~TempFile() { fs::remove(path); }
};

std::vector<std::uint64_t> values(const Histogram& h) { return {h.slots().begin(), h.slots().end()}; }

Histogram from_memory(const Plan& plan, const std::vector<unsigned char>& bytes) {
  Histogram h(plan.request().binning);
  const std::size_t item = sample_size(plan.request().type);
  plan.fill(h, Input::array(bytes.data(), bytes.size() / item));
  return h;
}

TEST(Source, FileEqualsMemoryAtEverySizeAroundTheBuffer) {
  const Plan plan(Request::counts(SampleType::u16, Binning::even(1000, 0, 65536)), cpu());
  for (std::size_t n : {std::size_t{0}, std::size_t{2}, std::size_t{16} << 20, (std::size_t{16} << 20) + 2,
                        (std::size_t{40} << 20) + 6}) {
    const auto bytes = random_bytes(n, n);
    TempFile file(bytes);
    FileSource source(file.path.string());
    Histogram h(plan.request().binning);
    EXPECT_EQ(plan.fill(h, source), n);
    EXPECT_EQ(values(h), values(from_memory(plan, bytes))) << n;
  }
}

TEST(Source, ByteRangeOfAFile) {
  const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), cpu());
  const auto bytes = random_bytes(100000, 7);
  TempFile file(bytes);
  const int fd = ::open(file.path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  FdSource source(fd, "the range", 1000, 51000);
  EXPECT_EQ(source.remaining(), 50000u);
  Histogram h(plan.request().binning);
  EXPECT_EQ(plan.fill(h, source), 50000u);
  ::close(fd);
  const std::vector<unsigned char> part(bytes.begin() + 1000, bytes.begin() + 51000);
  EXPECT_EQ(values(h), values(from_memory(plan, part)));
}

TEST(Source, PipeInSmallWritesEqualsMemory) {
  const Plan plan(Request::counts(SampleType::u32, Binning::even(64, 0, 4294967296.0)), cpu());
  const auto bytes = random_bytes(3 << 20, 3);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    // Pieces that end inside samples: the reader carries the partial sample over.
    for (std::size_t at = 0; at < bytes.size();) {
      const std::size_t k = std::min<std::size_t>(4093, bytes.size() - at);
      ASSERT_EQ(::write(fds[1], bytes.data() + at, k), static_cast<ssize_t>(k));
      at += k;
    }
    ::close(fds[1]);
  });
  FdSource source(fds[0], "the pipe");
  EXPECT_FALSE(source.positional());
  EXPECT_EQ(source.remaining(), std::nullopt);
  Histogram h(plan.request().binning);
  EXPECT_EQ(plan.fill(h, source), bytes.size());
  writer.join();
  ::close(fds[0]);
  EXPECT_EQ(values(h), values(from_memory(plan, bytes)));
}

TEST(Source, DataEndingInsideASampleIsAnInputErrorAndAddsNothing) {
  const Plan plan(Request::counts(SampleType::f32, Binning::even(10, 0, 1)), cpu());
  TempFile file(random_bytes(4 * 1000 + 3, 5));
  FileSource source(file.path.string());
  Histogram h(plan.request().binning);
  try {
    plan.fill(h, source);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("4003 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(h.total(), 0u);
}

TEST(Source, PixelsFromAFileEqualPixelsFromMemory) {
  const Binning b = Binning::per_value(SampleType::u8);
  const Plan plan(Request::pixels(SampleType::u8, 4, 0b0111, b), cpu());
  const auto bytes = random_bytes(4 * 300001, 11);
  TempFile file(bytes);
  FileSource source(file.path.string());
  std::vector<Histogram> got(3, Histogram(b)), want(3, Histogram(b));
  plan.fill(got, source);
  plan.fill(want, Input::image(bytes.data(), 300001, 1));
  for (int c = 0; c < 3; ++c) EXPECT_EQ(values(got[c]), values(want[c])) << c;
}

TEST(Source, WeightsBatchesAndPointsDoNotComeFromASource) {
  const Plan plan(Request::weighted(SampleType::f32, SampleType::f32, Binning::even(4, 0, 1)), cpu());
  TempFile file(random_bytes(64, 1));
  FileSource source(file.path.string());
  std::vector<std::uint64_t> slots(plan.request().output_slots());
  try {
    plan.fill_slots(slots.data(), source);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
}

TEST(Source, MissingFileNamesItself) {
  try {
    FileSource source("/nonexistent/levelhist-source");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/levelhist-source'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace levelhist::test
