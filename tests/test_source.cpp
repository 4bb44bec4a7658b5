// Sources (source.hpp): a file, a byte range of one, a pipe, counted as they
// are read, equal to the same bytes counted from memory; data that ends inside
// a sample, a file that shrinks, a read error: an input error that adds nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/plan_impl.hpp"
#include "levelhist/levelhist.hpp"
#include "levelhist/source.hpp"
#include "scoped_support.hpp"

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

// O_DIRECT (LEVELHIST_DIRECT_IO=1 here; by default for files larger than
// memory): aligned reads bypass the page cache, the others go through it,
// and both give the file's bytes; a file system that refuses O_DIRECT
// (tmpfs) reads through the page cache.
TEST(Source, DirectReadsGiveTheFilesBytesAlignedOrNot) {
  const auto bytes = random_bytes((std::size_t{3} << 20) + 3 * 4096 + 5, 17);
  TempFile file(bytes, "levelhist-source-");
  {
    ScopedEnv never("LEVELHIST_DIRECT_IO", "0");
    EXPECT_FALSE(FileSource(file.path.string()).direct_io());
  }
  ScopedEnv direct("LEVELHIST_DIRECT_IO", "1");
  FileSource source(file.path.string());
  std::cout << "O_DIRECT on " << file.path.parent_path() << ": " << (source.direct_io() ? "yes" : "refused") << "\n";
  const std::size_t room = bytes.size() + 2 * 4096;
  std::unique_ptr<unsigned char, decltype(&std::free)> buffer(
      static_cast<unsigned char*>(std::aligned_alloc(4096, (room + 4095) / 4096 * 4096)), &std::free);
  ASSERT_NE(buffer.get(), nullptr);
  struct Read {
    std::size_t dst_offset, bytes;
    std::uint64_t at;
  };
  const std::uint64_t size = bytes.size();
  for (const Read& r : {Read{0, 1 << 20, 0}, Read{0, 8192, 4096}, Read{0, 2 << 20, 1 << 20},  // aligned
                        Read{0, 4 << 20, 3 << 20},                                            // to the unaligned end
                        Read{1, 4096, 4096}, Read{0, 4096, 100}, Read{0, 1000, 8192},         // unaligned
                        Read{0, 4096, size - 5}, Read{0, 4096, size}}) {
    std::memset(buffer.get(), 0xA5, room);
    const std::size_t got = source.read_at(buffer.get() + r.dst_offset, r.bytes, r.at);
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(r.bytes, size - std::min(r.at, size)));
    ASSERT_EQ(got, want) << r.at;
    EXPECT_EQ(std::memcmp(buffer.get() + r.dst_offset, bytes.data() + std::min(r.at, size), got), 0) << r.at;
  }
  // A whole fill through it equals memory.
  const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), cpu());
  FileSource again(file.path.string());
  Histogram h(plan.request().binning);
  EXPECT_EQ(plan.fill(h, again), bytes.size());
  EXPECT_EQ(values(h), values(from_memory(plan, bytes)));
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

// ---- the CPU backend's threaded reading (src/cpu/source_fill.cpp) ----------------

Options cpu_threads(unsigned threads) {
  Options o;
  o.backend = BackendChoice::cpu;
  o.threads = threads;
  return o;
}

// Counts of `bytes` as `plan` counts them from memory, one histogram per active channel.
std::vector<std::vector<std::uint64_t>> memory_counts(const Plan& plan, const std::vector<unsigned char>& bytes) {
  const Request& r = plan.request();
  const std::size_t item = r.layout.channels * sample_size(r.type);
  std::vector<Histogram> h(r.histograms(), Histogram(r.binning));
  plan.fill(h, r.is_pixels() ? Input::image(bytes.data(), bytes.size() / item, 1)
                             : Input::array(bytes.data(), bytes.size() / item));
  std::vector<std::vector<std::uint64_t>> out;
  for (const Histogram& x : h) out.push_back(values(x));
  return out;
}

// Writes `bytes` to a pipe in pieces of `piece` bytes from a thread; the read
// end is `read_fd`. Joined (and the write end closed) by the destructor.
struct PipeWriter {
  int read_fd = -1, write_fd = -1;
  std::thread writer;
  PipeWriter(const std::vector<unsigned char>& bytes, std::size_t piece) {
    std::signal(SIGPIPE, SIG_IGN);  // a write after the reader is gone fails instead of killing the test
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_fd = fds[0];
    write_fd = fds[1];
    writer = std::thread([this, &bytes, piece] {
      for (std::size_t at = 0; at < bytes.size();) {
        const std::size_t k = std::min(piece, bytes.size() - at);
        const ssize_t n = ::write(write_fd, bytes.data() + at, k);
        if (n <= 0) break;  // the reader went away
        at += static_cast<std::size_t>(n);
      }
      ::close(write_fd);
    });
  }
  ~PipeWriter() {
    ::close(read_fd);  // a reader that stopped early: the writer's next write fails
    writer.join();
  }
};

struct ThreadedCase {
  Request request;
  const char* name;
};

std::vector<ThreadedCase> threaded_cases() {
  return {{Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), "u8"},
          {Request::counts(SampleType::f64, Binning::even(97, -1e9, 1e9)), "f64"},
          {Request::pixels(SampleType::u8, 3, 0b101, Binning::per_value(SampleType::u8)), "rgb u8"},
          {Request::counts(SampleType::u16, Binning::even(300, 0, 65536)), "u16"}};
}

// Sizes in bytes around the CPU path's buffer: none, one item, a buffer less
// or more one item, whole buffers, and several buffers and a bit.
std::vector<std::size_t> sizes_around_the_buffer(const Request& r) {
  const std::size_t item = r.layout.channels * sample_size(r.type);
  const std::size_t b = detail::cpu_source_buffer_bytes(r);
  EXPECT_EQ(b % item, 0u);
  if (b > (std::size_t{4} << 20)) return {0, item, b - item, b + item, 2 * b + 3 * item};  // large buffers: fewer
  return {0, item, b - item, b, b + item, 2 * b, 3 * b - item, 5 * b + 7 * item};
}

TEST(SourceCpu, FilesAndPipesEqualMemoryAroundTheBufferAtOneTwoAndThreeThreads) {
  for (const ThreadedCase& c : threaded_cases())
    for (unsigned threads : {1u, 2u, 3u}) {
      const Plan plan(c.request, cpu_threads(threads));
      for (std::size_t n : sizes_around_the_buffer(c.request)) {
        const auto bytes = random_bytes(n, n + threads);
        const auto want = memory_counts(plan, bytes);
        const std::string what = std::string(c.name) + ", " + std::to_string(threads) + " threads, " +
                                 std::to_string(n) + " bytes";
        {
          TempFile file(bytes);
          FileSource source(file.path.string());
          std::vector<Histogram> got(c.request.histograms(), Histogram(c.request.binning));
          EXPECT_EQ(plan.fill(got, source), n) << what;
          for (std::size_t h = 0; h < got.size(); ++h) EXPECT_EQ(values(got[h]), want[h]) << what << " (file)";
        }
        {
          // Pieces that end inside items, so reads do too.
          PipeWriter pipe(bytes, 65537);
          FdSource source(pipe.read_fd, "the pipe");
          std::vector<Histogram> got(c.request.histograms(), Histogram(c.request.binning));
          EXPECT_EQ(plan.fill(got, source), n) << what;
          for (std::size_t h = 0; h < got.size(); ++h) EXPECT_EQ(values(got[h]), want[h]) << what << " (pipe)";
        }
      }
    }
}

TEST(SourceCpu, CountsAreAddedToWhatTheHistogramsHold) {
  const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), cpu_threads(2));
  const auto bytes = random_bytes(3 * detail::cpu_source_buffer_bytes(plan.request()) + 5, 9);
  TempFile file(bytes);
  Histogram h(plan.request().binning);
  FileSource first(file.path.string()), second(file.path.string());
  plan.fill(h, first);
  plan.fill(h, second);
  auto want = values(from_memory(plan, bytes));
  for (auto& x : want) x *= 2;
  EXPECT_EQ(values(h), want);
}

// A source over `bytes` in memory whose reads fail once `fail_after` bytes have
// been read (positional or not), as a disk or a socket can.
class FailingSource : public Source {
 public:
  FailingSource(const std::vector<unsigned char>& bytes, std::uint64_t fail_after, bool positional)
      : bytes_(bytes), fail_after_(fail_after), positional_(positional) {}
  std::string name() const override { return "the failing source"; }
  std::size_t read(void* dst, std::size_t n) override {
    const std::size_t got = read_at(dst, std::min<std::size_t>(n, 100000), pos_);
    pos_ += got;
    return got;
  }
  std::optional<std::uint64_t> remaining() const override {
    if (!positional_) return std::nullopt;
    return bytes_.size();
  }
  bool positional() const override { return positional_; }
  std::size_t read_at(void* dst, std::size_t n, std::uint64_t offset) override {
    if (offset >= bytes_.size()) return 0;
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, bytes_.size() - offset));
    if (offset + n > fail_after_) {
      failures_.fetch_add(1);
      throw Error(ErrorKind::input, "cannot read the failing source: Input/output error", "check the input",
                  ErrorSubject::data);
    }
    std::memcpy(dst, bytes_.data() + offset, n);
    return n;
  }
  unsigned failures() const { return failures_.load(); }

 private:
  const std::vector<unsigned char>& bytes_;
  std::uint64_t fail_after_;
  bool positional_;
  std::uint64_t pos_ = 0;
  std::atomic<unsigned> failures_{0};
};

TEST(SourceCpu, AReadErrorPartWayAddsNothingAndEveryThreadStops) {
  const Plan plan(Request::counts(SampleType::f32, Binning::even(100, 0, 1)), cpu_threads(2));
  const std::size_t b = detail::cpu_source_buffer_bytes(plan.request());
  const auto bytes = random_bytes(8 * b + 12, 2);
  for (bool positional : {true, false})
    for (std::uint64_t fail_after : {std::uint64_t{0}, std::uint64_t{b / 2}, std::uint64_t{3 * b + 1}, 8 * std::uint64_t{b}}) {
      FailingSource source(bytes, fail_after, positional);
      Histogram h(plan.request().binning);
      const std::vector<unsigned char> before = random_bytes(64, 1);
      plan.fill(h, Input::array(before.data(), before.size() / sizeof(float)));  // the histogram already holds counts
      const auto held = values(h);
      try {
        plan.fill(h, source);
        ADD_FAILURE() << "no error, positional " << positional << ", failing after " << fail_after;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::input);
        EXPECT_NE(std::string(e.what()).find("the failing source"), std::string::npos) << e.what();
      }
      EXPECT_EQ(values(h), held) << "positional " << positional << ", failing after " << fail_after;
      EXPECT_GE(source.failures(), 1u);
    }
}

// A file that another process truncates while it is read: here the first
// positional read truncates it to `keep` bytes first.
class ShrinkingFile : public FileSource {
 public:
  ShrinkingFile(const std::string& path, off_t keep) : FileSource(path), path_(path), keep_(keep) {}
  std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset) override {
    if (!shrunk_.exchange(true)) {
      EXPECT_EQ(::truncate(path_.c_str(), keep_), 0);
    }
    return FileSource::read_at(dst, bytes, offset);
  }

 private:
  std::string path_;
  off_t keep_;
  std::atomic<bool> shrunk_{false};
};

TEST(SourceCpu, AFileThatShrinksWhileReadIsAnInputErrorThatAddsNothing) {
  for (unsigned threads : {1u, 2u}) {
    const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), cpu_threads(threads));
    const std::size_t b = detail::cpu_source_buffer_bytes(plan.request());
    const auto bytes = random_bytes(6 * b, threads);
    TempFile file(bytes);
    ShrinkingFile source(file.path.string(), static_cast<off_t>(2 * b + 100));
    Histogram h(plan.request().binning);
    try {
      plan.fill(h, source);
      ADD_FAILURE() << "no error at " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      const std::string what = e.what();
      EXPECT_NE(what.find("shrank while it was read: it had " + std::to_string(6 * b) + " bytes, now " +
                          std::to_string(2 * b + 100)),
                std::string::npos)
          << what;
    }
    EXPECT_EQ(h.total(), 0u);
  }
}

// A positional source whose data ends before remaining() said, without an
// error of its own.
class EndsEarly : public Source {
 public:
  std::string name() const override { return "the short source"; }
  std::size_t read(void*, std::size_t) override { return 0; }
  std::optional<std::uint64_t> remaining() const override { return std::uint64_t{10} << 20; }
  bool positional() const override { return true; }
  std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset) override {
    const std::uint64_t end = std::uint64_t{3} << 20;
    if (offset >= end) return 0;
    bytes = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, end - offset));
    std::memset(dst, 7, bytes);
    return bytes;
  }
};

TEST(SourceCpu, APositionalSourceThatEndsEarlyIsAnInputError) {
  const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), cpu_threads(2));
  EndsEarly source;
  Histogram h(plan.request().binning);
  try {
    plan.fill(h, source);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("the short source ended after"), std::string::npos) << e.what();
  }
  EXPECT_EQ(h.total(), 0u);
}

TEST(SourceCpu, APipeEndingInsideAPixelIsAnInputErrorThatAddsNothing) {
  const Plan plan(Request::pixels(SampleType::f32, 3, 0b111, Binning::even(10, 0, 1)), cpu_threads(2));
  const std::size_t b = detail::cpu_source_buffer_bytes(plan.request());
  const auto bytes = random_bytes(2 * b + 12 * 11 + 4, 3);
  PipeWriter pipe(bytes, 4093);
  FdSource source(pipe.read_fd, "the pipe");
  std::vector<Histogram> h(3, Histogram(plan.request().binning));
  try {
    plan.fill(h, source);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find(std::to_string(bytes.size()) + " bytes, not a whole number of 12-byte pixels"),
              std::string::npos)
        << e.what();
  }
  for (const Histogram& x : h) EXPECT_EQ(x.total(), 0u);
}

TEST(SourceCpu, APositionalSourceIsLeftConsumed) {
  // Standard input redirected from a file: what follows the count starts after it.
  const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), cpu_threads(2));
  const auto bytes = random_bytes(3 * detail::cpu_source_buffer_bytes(plan.request()) + 1, 4);
  TempFile file(bytes);
  const int fd = ::open(file.path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::lseek(fd, 10, SEEK_SET), 10);
  FdSource source(fd, "the file");
  Histogram h(plan.request().binning);
  EXPECT_EQ(plan.fill(h, source), bytes.size() - 10);
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), static_cast<off_t>(bytes.size()));
  ::close(fd);
  EXPECT_EQ(values(h), values(from_memory(plan, {bytes.begin() + 10, bytes.end()})));
}

TEST(SourceCpu, APositionalSourceReadInOrderToItsEndIsLeftConsumed) {
  // The plain reading any backend can take calls read() to the end.
  const auto bytes = random_bytes(100000, 8);
  TempFile file(bytes);
  const int fd = ::open(file.path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::lseek(fd, 10, SEEK_SET), 10);
  FdSource source(fd, "the file");
  std::vector<unsigned char> buf(4096);
  std::uint64_t total = 0;
  for (std::size_t got; (got = source.read(buf.data(), buf.size())) != 0;) total += got;
  EXPECT_EQ(total, bytes.size() - 10);
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), static_cast<off_t>(bytes.size()));
  ::close(fd);
}

TEST(SourceCpu, AnEmptyRegularFileIsReadAsAStream) {
  // Size 0 may be a pseudo-file with content (/proc); a truly empty one reads nothing.
  const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), cpu_threads(2));
  TempFile empty({});
  FileSource source(empty.path.string());
  EXPECT_FALSE(source.positional());
  Histogram h(plan.request().binning);
  EXPECT_EQ(plan.fill(h, source), 0u);
  EXPECT_EQ(h.total(), 0u);
  if (fs::exists("/proc/self/status")) {
    FileSource status("/proc/self/status");
    EXPECT_GT(plan.fill(h, status), 0u);
    EXPECT_GT(h.total(), 0u);
  }
}

}  // namespace
}  // namespace levelhist::test
