// Faults on the host side, end to end: the CLI out of memory (RLIMIT_AS in the
// child), a read error in the middle of an input (a pseudo-terminal whose other
// side goes away: read() fails with EIO after data has arrived), and a mapped
// file that shrinks while it is read (SIGBUS, made an input error by
// tools/input.cpp), deterministically through the CLI's reader and as a race
// against the CLI. Every failure must be one line on stderr, exit status 1,
// nothing on stdout, no output file and no temporary file left behind; never
// a crash. The device-side faults are in test_gpu_faults.cpp.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "cli_test_support.hpp"
#include "input.hpp"
#include "levelhist/levelhist.hpp"
#include "test_support.hpp"

namespace cli_test {
namespace {

using levelhist::Error;
using levelhist::ErrorKind;

// The names in a directory.
std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// ---- host memory runs out ------------------------------------------------------------

// 2^28 bins of u32 keys need a 2 GiB histogram; the child may map 1 GiB. The
// allocation fails (std::bad_alloc, or a thread that cannot start): one line,
// status 1, no plot written, nothing left in the directory. (The CPU backend:
// a CUDA driver does not start in 1 GiB of address space.)
TEST_F(CliTest, OutOfHostMemoryIsOneLineAndWritesNothing) {
#if defined(LEVELHIST_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: a limit on it stops the CLI from starting";
#endif
  const std::string data = file("keys.u32", random_bytes(4096, 1));
  const std::set<std::string> before = listing(dir_);
  RunSpec spec;
  spec.program = "/bin/sh";
  const std::vector<std::string> args = {"-c", "ulimit -v 1048576 && exec \"$0\" \"$@\"", cli_path(), "count",
                                         "--backend", "cpu", "--type", "u32", "--bins", "268435456", "--range", "0:4294967296",
                                         "--plot", path("plot.svg"), data};
  const Result r = fails(1, args, spec);
  EXPECT_NE(r.err.find("memory"), std::string::npos) << r.err;
  EXPECT_EQ(listing(dir_), before) << "an output or a temporary file was left behind";
}

// ---- a read error in the middle of an input --------------------------------------------

// A pseudo-terminal: the CLI reads its master side as standard input; the test
// writes `bytes` to the slave side, waits, and closes it. The master's read then
// fails with EIO (Linux), after the data: an I/O error mid-input.
class MidInputReadError {
 public:
  MidInputReadError() {
    master_ = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(master_, 0) << std::strerror(errno);
    EXPECT_EQ(grantpt(master_), 0);
    EXPECT_EQ(unlockpt(master_), 0);
    slave_ = ::open(ptsname(master_), O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(slave_, 0) << std::strerror(errno);
    termios raw{};
    tcgetattr(slave_, &raw);
    cfmakeraw(&raw);  // bytes pass unchanged
    tcsetattr(slave_, TCSANOW, &raw);
  }
  ~MidInputReadError() {
    if (writer_.joinable()) writer_.join();
    if (slave_ >= 0) ::close(slave_);
    if (master_ >= 0) ::close(master_);
  }
  int master() const { return master_; }
  // In the background: write the bytes, give the reader time to take them, hang up.
  void start(std::string bytes) {
    writer_ = std::thread([this, bytes = std::move(bytes)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      EXPECT_EQ(::write(slave_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::close(slave_);
      slave_ = -1;
    });
  }

 private:
  int master_ = -1, slave_ = -1;
  std::thread writer_;
};

TEST_F(CliTest, ReadErrorMidInputIsOneLineAndWritesNothing) {
  {
    MidInputReadError pty;
    pty.start(random_bytes(1000, 2));
    RunSpec spec;
    spec.stdin_fd = pty.master();
    const Result r = fails(1, {"count", "--format", "csv"}, spec);
    EXPECT_NE(r.err.find("cannot read standard input"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::strerror(EIO)), std::string::npos) << r.err;
  }
  {
    // sort writes its output through a temporary file: neither may be left.
    const std::set<std::string> before = listing(dir_);
    MidInputReadError pty;
    pty.start(random_bytes(4096, 3));
    RunSpec spec;
    spec.stdin_fd = pty.master();
    const Result r = fails(1, {"sort", "-", "-o", path("sorted.u8")}, spec);
    EXPECT_NE(r.err.find(std::strerror(EIO)), std::string::npos) << r.err;
    EXPECT_EQ(listing(dir_), before) << "an output or a temporary file was left behind";
  }
}

// ---- a mapped file that shrinks while it is read ---------------------------------------

constexpr std::size_t kWindow = std::size_t{1} << 20;

// Scans `file` with the CLI's reader in 1 MiB windows; on the first block the
// callback truncates the file to `keep` bytes and then reads every byte of
// the block (pages past the new end raise SIGBUS) through `read_block`.
template <class ReadBlock>
void scan_while_truncating(const std::string& file, off_t keep, ReadBlock read_block) {
  ASSERT_EQ(setenv("LEVELHIST_WINDOW_BYTES", std::to_string(kWindow).c_str(), 1), 0);
  levelhist::cli::InputSet inputs({file}, 1, "u8");
  unsetenv("LEVELHIST_WINDOW_BYTES");
  inputs.validate();
  bool truncated = false;
  std::uint64_t blocks = 0;
  try {
    inputs.scan(
        0,
        [&](const unsigned char* data, std::uint64_t n) {
          if (!truncated) {
            ASSERT_EQ(::truncate(file.c_str(), keep), 0);
            truncated = true;
          }
          ++blocks;
          read_block(data, n);
        },
        nullptr);
    ADD_FAILURE() << "the scan of a file that shrank under it ended without an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("shrank while it was read"), std::string::npos) << what;
    EXPECT_NE(what.find("now " + std::to_string(keep)), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_TRUE(truncated);
  EXPECT_EQ(blocks, 1u) << "the scan went on after the window that lost its pages";
}

TEST_F(CliTest, MappedFileThatShrinksIsAnInputErrorNotACrash) {
  const std::string name = path("shrinking.u8");
  // By hand: one thread reads every byte.
  file("shrinking.u8", random_bytes(3 * kWindow, 4));
  std::uint64_t sum = 0;
  scan_while_truncating(name, 8192, [&](const unsigned char* d, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) sum += d[i];
  });
  EXPECT_GT(sum, 0u);
  // Through the library: cpu_parallel's worker threads take the faults.
  file("shrinking.u8", random_bytes(3 * kWindow, 5));
  levelhist::Histogram h(levelhist::Binning::per_value(levelhist::SampleType::u8));
  levelhist::Options options;
  options.backend = levelhist::BackendChoice::cpu;
  options.strategy = "cpu_parallel";
  options.threads = 4;
  scan_while_truncating(name, 12345, [&](const unsigned char* d, std::uint64_t n) {
    levelhist::fill(h, levelhist::SampleType::u8, d, n, options);
  });
  // The process goes on: a whole file reads as before.
  const std::string whole = random_bytes(2 * kWindow + 77, 6);
  file("whole.u8", whole);
  levelhist::cli::InputSet again({path("whole.u8")}, 1, "u8");
  again.validate();
  std::vector<std::uint64_t> counts(256, 0);
  again.scan(0, [&](const unsigned char* d, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) ++counts[d[i]];
  }, nullptr);
  EXPECT_EQ(counts, byte_counts(whole));
}

// The race as a user meets it: the CLI counts a file in 256 KiB windows while
// the test truncates it. Whatever the timing, the CLI either counts (status 0, a
// result, nothing on stderr) or fails with one line saying the file shrank; it
// is never killed by a signal. The first delays usually land mid-file.
TEST_F(CliTest, FileTruncatedWhileTheCliReadsItNeverCrashes) {
  int errors = 0;
  const std::string racing_bytes = random_bytes(24 * kWindow, 7);
  for (int delay_ms : {0, 2, 5, 10, 20, 40}) {
    const std::string name = file("racing.u8", racing_bytes);
    RunSpec spec;
    spec.env = {"LEVELHIST_WINDOW_BYTES=" + std::to_string(kWindow / 4)};
    std::thread truncator([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      EXPECT_EQ(::truncate(name.c_str(), 4096), 0);
    });
    const std::vector<std::string> args = {"count", "--backend", "cpu", "--format", "csv", name};
    const Result r = run_cli(args, spec);
    truncator.join();
    EXPECT_EQ(r.signal, 0) << describe(args, r);
    if (r.status == 0) {
      EXPECT_EQ(r.err, "") << describe(args, r);
      EXPECT_FALSE(r.out.empty()) << describe(args, r);
    } else {
      ++errors;
      EXPECT_EQ(r.status, 1) << describe(args, r);
      EXPECT_EQ(r.out, "") << describe(args, r);
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(args, r);
      EXPECT_NE(r.err.find("shrank while it was read"), std::string::npos) << describe(args, r);
    }
  }
  std::printf("[ note     ] %d of 6 runs met the truncation mid-file\n", errors);
}

// A SIGBUS that is not a lost page of a window keeps its default action (the
// handler is installed by the scans above; a death test runs it in a child).
TEST(MappedInputDeathTest, OtherBusErrorsStillKill) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // Install the handler as a scan does, then fault on a mapping that is not a window.
        char tmpl[] = "/tmp/levelhist-sigbus-XXXXXX";
        const int fd = mkstemp(tmpl);
        unlink(tmpl);
        if (ftruncate(fd, 4096) != 0) _exit(3);
        {
          const std::string name = "/proc/self/fd/" + std::to_string(fd);
          levelhist::cli::InputSet inputs({name}, 1, "u8");
          inputs.validate();
          inputs.scan(0, [](const unsigned char*, std::uint64_t) {}, nullptr);
        }
        auto* p = static_cast<volatile unsigned char*>(mmap(nullptr, 8192, PROT_READ, MAP_PRIVATE, fd, 0));
        if (ftruncate(fd, 0) != 0) _exit(4);
        (void)p[4096];  // past the end of the file: SIGBUS
        _exit(0);
      },
      [](int status) {
#if defined(LEVELHIST_TEST_ASAN)
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return true;  // AddressSanitizer's handler reports it
#endif
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
      },
      "");
}

}  // namespace
}  // namespace cli_test
