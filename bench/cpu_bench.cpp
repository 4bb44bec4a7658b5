// `levelhist bench --cpu`: the CPU benchmark. In one run it times, on a file of
// random bytes and a file of zero bytes (u8 samples, 256 bins, files in the
// page cache), each method end to end from the file:
//   levelhist          exactly what `levelhist count` does (tools/input.cpp,
//                      scan_mapped): open, mmap, madvise(MADV_SEQUENTIAL),
//                      fill() with the auto strategy on the CPU backend, munmap, close
//   four sub-tables    the baseline: zstd's HIST_count (32-bit loads, four
//                      256-entry tables, summed at the end), same threads, same
//                      fork/join over the same mapping
//   naive              Wilt part 1, Listing 1, on one thread
//   stream             a read-only pass over the mapping, same threads: the limit
//   numpy.bincount     /usr/bin/python3, np.fromfile then bincount, only the
//                      bincount timed (time.perf_counter)
// plus levelhist, the baseline and the stream on a mapping already faulted in,
// which separates counting from page-fault cost; and then the byte counters
// alone (byte_counter_rows): one thread, buffers in memory, cycles per byte
// and GB/s for each counter this CPU runs. Every histogram is checked
// against cpu_serial before that method is timed (numpy's comes from a first,
// untimed bincount). The figures are medians of
// --runs runs, the methods interleaved run by run so that a burst of other
// load on the machine spreads over all of them.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../tools/args.hpp"
#include "bench.hpp"
#include "options.hpp"
#include "cpu/cpu_parallel_bytes.hpp"
#include "cpu/cpu_parallel_fork_join.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::bench {
namespace {

using Counts = std::array<std::uint64_t, 256>;

constexpr double kBaselineTarget = 1.5;  // levelhist / four sub-tables, on random and on zero bytes
constexpr double kNumpyTarget = 20.0;    // levelhist / numpy.bincount
constexpr const char* kPython = "/usr/bin/python3";
constexpr std::uint64_t kMaxThreads = 1024;  // as for every command's --threads

const char* const kHelp = R"(usage: levelhist bench --cpu [options]

Times byte histograms (u8 samples, 256 bins) of a file of random bytes and a
file of zero bytes, both in the page cache, end to end from the file:
  levelhist        open, mmap, fill() with the auto CPU strategy, munmap, close
                   (what `levelhist count` does)
  four sub-tables  zstd's HIST_count: 32-bit loads, four 256-entry tables (the baseline)
  naive            one loop, one counter per value, one thread (Listing 1)
  stream           a read-only pass over the mapping (the limit)
  numpy.bincount   Debian's python3-numpy on np.fromfile of the same file
and levelhist, the baseline and the stream again on a mapping already faulted
in. Each histogram is checked against cpu_serial first. The last line says
whether levelhist is at least 1.5x the baseline on both files and at least 20x
numpy.bincount.

Then each byte counter alone (levelhist's AVX-512 counter where the CPU has it,
its scalar fallback, and the four sub-tables): one thread, random and zero
bytes in memory, 1 MiB (in L2; best of 200) and min(--size, 256 MiB) (best of
--runs), thread CPU time. Cycles per byte use the core clock estimated by a
chain of dependent additions (one per cycle); GB/s needs no estimate.

options:
  --size BYTES     size of the files it creates, at least 1 (default 1G; K, M, G suffixes)
  --threads N      threads for levelhist, the baseline and the stream, 1 to 1024
                   (default 0 = all cores)
  --file PATH      use PATH instead of creating the random file (it is not deleted)
  --dir DIR        where to create the files (default $TMPDIR or /tmp); deleted at the end
  --runs N         timed runs per method, 1 to 1000, median reported (default 7; numpy
                   at most 3)
  --format F       table (default), csv or json
  --page-cache S   how the created files sit in the page cache: read (default): written,
                   dropped and read back, as a file read from storage is cached (large
                   folios, where the kernel uses them); written: as the writes left them
                   (on ext4, small folios: page faults cost several times more)
  --counters       only the byte counters alone (no files, no numpy)
  -h, --help       this text

Exit status: 0 when the verdict is PASS, 1 when it is FAIL (the reason on
stderr) or the run failed, 2 for bad usage.
)";

struct CpuBenchOptions {
  std::uint64_t size = std::uint64_t{1} << 30;
  unsigned threads = 0;
  std::string file;
  std::string dir;
  unsigned runs = 7;
  std::string format = "table";
  bool drop_written_pages = true;  // --page-cache read (default) or written
  bool counters_only = false;      // --counters
  bool help = false;
};

using cli::quote;
using cli::usage_error;

// --size: a whole number of bytes (u8 samples: every size is a whole number of
// them), with an optional K, M or G suffix, at least 1.
std::uint64_t parse_size(const std::string& text) {
  const char suffix = text.empty() ? '\0' : text.back();
  const unsigned shift = suffix == 'K' ? 10 : suffix == 'M' ? 20 : suffix == 'G' ? 30 : 0;
  const std::string digits = shift ? text.substr(0, text.size() - 1) : text;
  const std::uint64_t max = ~std::uint64_t{0} >> shift;
  try {
    return cli::parse_count("--size", digits, 1, max) << shift;
  } catch (const Error&) {
    cli::input_error("--size " + quote(text) + " is not a size in bytes of at least 1",
                     "give a whole number of bytes, optionally with K, M or G, e.g. --size 256M");
  }
}

CpuBenchOptions parse_options(const std::vector<std::string>& args) {
  CpuBenchOptions o;
  const std::string help_fix = "see 'levelhist bench --cpu --help'";
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], inline_value;
    bool has_inline_value = false;
    if (const std::size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_inline_value = true;
    }
    auto value = [&]() -> std::string {
      if (has_inline_value) return inline_value;
      if (i + 1 >= args.size()) usage_error(a + " needs a value", help_fix);
      return args[++i];
    };
    if (a == "--cpu") continue;
    if (a == "-h" || a == "--help") o.help = true;
    else if (a == "--counters") o.counters_only = true;
    else if (a == "--size") o.size = parse_size(value());
    else if (a == "--threads") o.threads = static_cast<unsigned>(cli::parse_count(a, value(), 0, kMaxThreads));
    else if (a == "--file") o.file = value();
    else if (a == "--dir") o.dir = value();
    else if (a == "--runs") o.runs = static_cast<unsigned>(cli::parse_count(a, value(), 1, kMaxReps));
    else if (a == "--format") o.format = value();
    else if (a == "--page-cache") {
      const std::string state = value();
      if (state != "read" && state != "written")
        usage_error("unknown --page-cache state " + quote(state), "use --page-cache read or written");
      o.drop_written_pages = state == "read";
    }
    else usage_error("unknown option " + quote(args[i]) + " for 'bench --cpu'", help_fix);
  }
  if (o.format != "table" && o.format != "csv" && o.format != "json")
    usage_error("unknown format " + quote(o.format), "use --format table, csv or json");
  if (o.dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    o.dir = tmp && *tmp ? tmp : "/tmp";
  }
  return o;
}

std::string errno_text() { return std::strerror(errno); }

// ---------------------------------------------------------------------------
// The data files.

// A file this benchmark created; deleted when the benchmark ends, however it ends.
class ScratchFile {
 public:
  ScratchFile(const std::string& dir, const std::string& kind, std::uint64_t size, bool random, bool drop_pages) {
    path_ = dir + "/levelhist-cpu-bench-" + kind + "-" + std::to_string(::getpid()) + ".bin";
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
      cli::input_error("cannot create " + quote(path_) + ": " + errno_text(), "give --dir a writable directory");
    std::vector<std::uint64_t> block(1 << 17);  // 1 MiB
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    for (std::uint64_t done = 0; done < size;) {
      if (random)
        for (auto& word : block) {  // splitmix64
          std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
          z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
          word = z ^ (z >> 31);
        }
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, block.size() * 8));
      const auto* bytes = reinterpret_cast<const char*>(block.data());
      for (std::size_t written = 0; written < take;) {
        const ssize_t w = ::write(fd, bytes + written, take - written);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          const std::string why = errno_text();
          ::close(fd);
          ::unlink(path_.c_str());
          cli::input_error("cannot write " + quote(path_) + ": " + why,
                           "give --dir a directory with room for two files of --size bytes, or a smaller --size");
        }
        written += static_cast<std::size_t>(w);
      }
      done += take;
    }
    if (drop_pages) {
      // Written back, then out of the page cache: the next read brings it in
      // the way a file read from storage comes in (readahead, large folios).
      ::fsync(fd);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    ::close(fd);
  }
  ~ScratchFile() { ::unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) cli::input_error("cannot read " + quote(path) + ": " + errno_text(), "check the file name");
  if (!S_ISREG(st.st_mode) || st.st_size == 0)
    cli::input_error(quote(path) + " is not a regular file with data in it", "give --file a file of bytes to count");
  return static_cast<std::uint64_t>(st.st_size);
}

// Reads the whole file once, so that every timed run finds it in the page cache.
void read_into_page_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) cli::input_error("cannot open " + quote(path) + ": " + errno_text(), "check the file and its permissions");
  std::vector<char> buffer(1 << 20);
  while (true) {
    const ssize_t r = ::read(fd, buffer.data(), buffer.size());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
  }
  ::close(fd);
}

// The whole file, mapped read-only as tools/input.cpp maps a window.
class Mapping {
 public:
  explicit Mapping(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) cli::input_error("cannot open " + quote(path) + ": " + errno_text(), "check the file and its permissions");
    struct stat st {};
    ::fstat(fd_, &st);
    size_ = static_cast<std::uint64_t>(st.st_size);
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (m == MAP_FAILED) {
      const std::string why = errno_text();
      ::close(fd_);
      cli::input_error("cannot map " + quote(path) + ": " + why, "give a file on a file system that can be mapped");
    }
    ::madvise(m, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const unsigned char*>(m);
  }
  ~Mapping() {
    ::munmap(const_cast<unsigned char*>(data_), size_);
    ::close(fd_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const unsigned char* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  const unsigned char* data_ = nullptr;
  std::uint64_t size_ = 0;
};

// ---------------------------------------------------------------------------
// The reference methods (benchmark references, not library strategies).

// zstd's HIST_count_parallel_wksp: 32-bit loads, four tables of 32-bit
// counters, one byte of each load to each table, summed at the end. Inputs are
// taken 1 GiB at a time so that no 32-bit counter can overflow.
void count_four_subtables(const unsigned char* p, std::uint64_t n, Counts& counts) {
  constexpr std::uint64_t kFlushBytes = std::uint64_t{1} << 30;
  std::uint32_t tables[4][256] = {};
  while (n > 0) {
    const std::uint64_t take = std::min(n, kFlushBytes);
    std::uint64_t i = 0;
    for (; i + 16 <= take; i += 16)
      for (std::uint64_t w = 0; w < 16; w += 4) {
        std::uint32_t word;
        std::memcpy(&word, p + i + w, sizeof word);
        ++tables[0][word & 0xFF];
        ++tables[1][(word >> 8) & 0xFF];
        ++tables[2][(word >> 16) & 0xFF];
        ++tables[3][word >> 24];
      }
    for (; i < take; ++i) ++tables[0][p[i]];
    for (auto& table : tables)
      for (std::size_t v = 0; v < 256; ++v) {
        counts[v] += table[v];
        table[v] = 0;
      }
    p += take;
    n -= take;
  }
}

// Wilt part 1, Listing 1: one loop, one counter per value.
void count_naive(const unsigned char* p, std::uint64_t n, Counts& counts) {
  for (std::uint64_t i = 0; i < n; ++i) counts[p[i]] += 1;
}

// Reads every byte once, in 64-byte steps with eight independent sums; the
// compiler vectorizes it for the widest unit the CPU has (chosen at load time).
__attribute__((target_clones("avx512f", "avx2", "default"))) std::uint64_t stream_read(const unsigned char* p,
                                                                                     std::uint64_t n) {
  std::uint64_t sums[8] = {};
  std::uint64_t i = 0;
  for (; i + 64 <= n; i += 64)
    for (std::size_t k = 0; k < 8; ++k) {
      std::uint64_t word;
      std::memcpy(&word, p + i + 8 * k, sizeof word);
      sums[k] += word;
    }
  std::uint64_t total = 0;
  for (; i < n; ++i) total += p[i];
  for (std::uint64_t s : sums) total += s;
  return total;
}

// Runs count(thread, begin, end) over the chunks of [0, n) on `threads`
// threads, with cpu_parallel's fork/join and chunk queue (chunks of 1 MiB to
// 64 MiB, as cpu_parallel takes bytes).
template <class Count>
void split(unsigned threads, std::uint64_t n, const Count& count) {
  cpu_parallel_detail::ChunkQueue queue(n, threads, std::uint64_t{1} << 20, std::uint64_t{1} << 26);
  cpu_parallel_detail::fork_join(threads, [&](unsigned t) {
    for (std::uint64_t begin, end; queue.next(begin, end);) count(t, begin, end);
  });
}

Counts four_subtables_threaded(const unsigned char* p, std::uint64_t n, unsigned threads) {
  std::vector<Counts> parts(threads, Counts{});
  split(threads, n, [&](unsigned t, std::uint64_t b, std::uint64_t e) { count_four_subtables(p + b, e - b, parts[t]); });
  Counts total{};
  for (const Counts& c : parts)
    for (std::size_t v = 0; v < 256; ++v) total[v] += c[v];
  return total;
}

std::uint64_t stream_threaded(const unsigned char* p, std::uint64_t n, unsigned threads) {
  std::vector<std::uint64_t> sums(threads, 0);
  split(threads, n, [&](unsigned t, std::uint64_t b, std::uint64_t e) { sums[t] += stream_read(p + b, e - b); });
  std::uint64_t total = 0;
  for (std::uint64_t s : sums) total += s;
  return total;
}

Options levelhist_options(unsigned threads) {
  Options o;
  o.backend = BackendChoice::cpu;  // the CPU benchmark: never the GPU, even where there is one
  o.threads = threads;
  return o;
}

// ---------------------------------------------------------------------------
// numpy.bincount through /usr/bin/python3.

const char* const kNumpyScript = R"(import sys, time
try:
    import numpy as np
except ImportError:
    print("missing")
    sys.exit(0)
a = np.fromfile(sys.argv[1], dtype=np.uint8)
print("counts", *np.bincount(a, minlength=256).tolist())
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    np.bincount(a, minlength=256)
    times.append(time.perf_counter() - t)
print("seconds", *times)
)";

// Runs argv[0] with these arguments and returns what it wrote to stdout, or
// nothing if it could not be started or failed.
std::optional<std::string> capture(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return std::nullopt;
  std::vector<char*> cargs;
  for (const auto& a : argv) cargs.push_back(const_cast<char*>(a.c_str()));
  cargs.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    ::execv(cargs[0], cargs.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t r = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    out.append(buffer, static_cast<std::size_t>(r));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

struct NumpyResult {
  bool available = false;
  std::string why;           // when not available
  Counts counts{};
  std::vector<double> seconds;
};

NumpyResult run_numpy(const std::string& path, unsigned runs) {
  NumpyResult r;
  if (::access(kPython, X_OK) != 0) {
    r.why = "numpy not installed (no /usr/bin/python3)";
    return r;
  }
  const auto out = capture({kPython, "-c", kNumpyScript, path, std::to_string(runs)});
  if (!out) {
    r.why = "numpy.bincount failed (out of memory?)";
    return r;
  }
  if (out->rfind("missing", 0) == 0) {
    r.why = "numpy not installed";
    return r;
  }
  std::istringstream lines(*out);
  std::string word;
  lines >> word;
  for (auto& c : r.counts) lines >> c;
  lines >> word;
  double s;
  while (lines >> s) r.seconds.push_back(s);
  if (!lines.eof() || r.seconds.size() != runs) throw Error(ErrorKind::internal, "cannot read numpy's output");
  r.available = true;
  return r;
}

// ---------------------------------------------------------------------------
// Timing and the report.

using Clock = std::chrono::steady_clock;

double seconds_of(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

enum class Kind { levelhist, four_subtables, naive, stream, numpy };

struct Method {
  Kind kind;
  std::string name;
  unsigned threads;
  bool mapped_first;         // timed on a mapping already faulted in (else end to end from the file)
  std::string note = {};     // instead of figures: why there are none
  std::vector<double> gbps = {};  // per data file
};

// Written once at the end, so that no timed result can be optimized away.
volatile std::uint64_t g_result_sink;

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

// /proc/meminfo's FileHugePages in MiB: page-cache memory held in huge folios,
// which make mapping a file much cheaper (fewer, batched page-table updates).
std::string file_huge_pages() {
  std::ifstream info("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (info >> key >> kib >> unit)
    if (key == "FileHugePages:") return std::to_string(kib >> 10) + " MiB";
  return "unknown";
}

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

// ---------------------------------------------------------------------------
// The byte counters alone: one thread, buffers in memory, no threads or files.

constexpr double kCyclesPerByteTarget = 0.6;  // the AVX-512 counter, one thread, random and zero bytes
constexpr double kCounterRatioTarget = 2.0;   // the AVX-512 counter / four sub-tables, one thread
constexpr std::uint64_t kL2Bytes = std::uint64_t{1} << 20;
constexpr std::uint64_t kLargeBytesMax = std::uint64_t{256} << 20;
constexpr unsigned kL2Runs = 200;

// The core clock in Hz, estimated by timing a chain of dependent additions,
// one per cycle on every x86-64 and AArch64 core (best of 300 short windows,
// so that an interruption does not count); 0 where there is no such loop.
double estimated_core_hz() {
#if (defined(__x86_64__) || defined(__aarch64__)) && (defined(__GNUC__) || defined(__clang__))
  constexpr std::uint64_t kLoops = 20000, kAddsPerLoop = 50;
  double best = std::numeric_limits<double>::infinity();
  for (int window = 0; window < 300; ++window) {
    std::uint64_t sum = 0, loops = kLoops;
    const auto t0 = Clock::now();
#if defined(__x86_64__)
    asm volatile("1:\n.rept 50\naddq $1, %0\n.endr\ndecq %1\njnz 1b" : "+r"(sum), "+r"(loops) : : "cc");
#else
    asm volatile("1:\n.rept 50\nadd %0, %0, #1\n.endr\nsubs %1, %1, #1\nb.ne 1b" : "+r"(sum), "+r"(loops) : : "cc");
#endif
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return kLoops * kAddsPerLoop / best;
#else
  return 0;
#endif
}

double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct CounterBuffer {
  std::string label;  // "1 MiB random"
  std::vector<unsigned char> bytes;
  unsigned runs;
};

struct CounterRow {
  std::string name;
  std::function<void(const unsigned char*, std::uint64_t, Counts&)> count;  // adds to the counts
  bool levelhist_avx512;                                                   // the counter the targets are for
  bool baseline;                                                           // the four sub-tables
  std::vector<double> seconds = {};                                        // best, per buffer
};

struct CounterReport {
  double core_hz_before = 0, core_hz_after = 0;
  std::vector<std::string> buffers;
  std::vector<std::uint64_t> bytes;
  std::vector<unsigned> runs;
  std::vector<CounterRow> rows;
  double core_hz() const { return core_hz_before > 0 && core_hz_after > 0 ? 0.5 * (core_hz_before + core_hz_after) : 0; }
  double gbps(const CounterRow& r, std::size_t b) const { return bytes[b] / r.seconds[b] / 1e9; }
  double cycles_per_byte(const CounterRow& r, std::size_t b) const { return r.seconds[b] * core_hz() / bytes[b]; }
};

std::vector<unsigned char> splitmix_bytes(std::uint64_t n) {
  std::vector<unsigned char> bytes(n);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (std::uint64_t i = 0; i < n; i += 8) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::memcpy(bytes.data() + i, &z, std::min<std::uint64_t>(8, n - i));
  }
  return bytes;
}

// Times every byte counter on random and zero bytes, 1 MiB and `large` bytes,
// one thread, each checked against the naive loop first.
CounterReport time_byte_counters(std::uint64_t large, unsigned runs) {
  CounterReport report;
  const std::uint64_t large_bytes = std::min(large, kLargeBytesMax);
  std::vector<CounterBuffer> buffers;
  for (const std::uint64_t n : {kL2Bytes, large_bytes}) {
    const std::string size = n % (std::uint64_t{1} << 20) == 0 ? std::to_string(n >> 20) + " MiB" : std::to_string(n) + " B";
    const unsigned buffer_runs = n == kL2Bytes ? kL2Runs : runs;
    buffers.push_back({size + " random", splitmix_bytes(n), buffer_runs});
    buffers.push_back({size + " zeros", std::vector<unsigned char>(n, 0), buffer_runs});
  }
  const auto& runnable = cpu_parallel_detail::runnable_byte_counters();
  for (std::size_t i = 0; i < runnable.size(); ++i) {
    const auto count = runnable[i].count;
    const bool avx512 = count == cpu_parallel_detail::count_bytes_avx512;
    report.rows.push_back({std::string(runnable[i].name) + (avx512 ? " (levelhist)" : " (levelhist fallback)"),
                           [count](const unsigned char* p, std::uint64_t n, Counts& c) { count(p, n, c.data()); },
                           avx512, false});
  }
  report.rows.push_back({"four sub-tables (zstd HIST_count)", count_four_subtables, false, true});
  for (const CounterBuffer& b : buffers) {
    Counts expected{};
    count_naive(b.bytes.data(), b.bytes.size(), expected);
    for (const CounterRow& r : report.rows) {
      Counts got{};
      r.count(b.bytes.data(), b.bytes.size(), got);
      if (got != expected) throw Error(ErrorKind::internal, r.name + " disagrees with the naive loop on " + b.label);
    }
  }
  report.core_hz_before = estimated_core_hz();
  std::uint64_t checksum = 0;
  for (const CounterBuffer& b : buffers) {
    report.buffers.push_back(b.label);
    report.bytes.push_back(b.bytes.size());
    report.runs.push_back(b.runs);
    std::vector<double> best(report.rows.size(), std::numeric_limits<double>::infinity());
    for (unsigned run = 0; run <= b.runs; ++run)  // run 0 warms up
      for (std::size_t i = 0; i < report.rows.size(); ++i) {
        Counts counts{};
        const double t0 = thread_cpu_seconds();
        report.rows[i].count(b.bytes.data(), b.bytes.size(), counts);
        const double seconds = thread_cpu_seconds() - t0;
        checksum += counts[1];
        if (run > 0) best[i] = std::min(best[i], seconds);
      }
    for (std::size_t i = 0; i < report.rows.size(); ++i) report.rows[i].seconds.push_back(best[i]);
  }
  g_result_sink = checksum;
  report.core_hz_after = estimated_core_hz();
  return report;
}

// The targets for levelhist's AVX-512 counter, on every buffer: at most 0.6
// cycles per byte and at least 2x the four sub-tables.
std::string counter_verdict(const CounterReport& r) {
  const CounterRow* ours = nullptr;
  const CounterRow* baseline = nullptr;
  for (const CounterRow& row : r.rows) {
    if (row.levelhist_avx512) ours = &row;
    if (row.baseline) baseline = &row;
  }
  if (!ours) return "n/a: this CPU cannot run the AVX-512 byte counter (it needs AVX512F/BW/VBMI/VBMI2/BITALG and GFNI)";
  double worst_cycles = 0, worst_ratio = std::numeric_limits<double>::infinity();
  for (std::size_t b = 0; b < r.buffers.size(); ++b) {
    worst_cycles = std::max(worst_cycles, r.cycles_per_byte(*ours, b));
    worst_ratio = std::min(worst_ratio, baseline->seconds[b] / ours->seconds[b]);
  }
  const bool cycles_known = r.core_hz() > 0;
  const bool cycles_pass = cycles_known && worst_cycles <= kCyclesPerByteTarget;
  const bool ratio_pass = worst_ratio >= kCounterRatioTarget;
  return std::string(cycles_pass && ratio_pass ? "PASS" : "FAIL") + ": " + ours->name + ", one thread, " +
         (cycles_known ? "at most " + fixed(worst_cycles, 3) + " cycles/byte" : "cycles/byte unknown") +
         ", target <= 0.6: " + (cycles_known ? (cycles_pass ? "pass" : "fail") : "n/a") + "; at least " +
         fixed(worst_ratio, 2) + "x four sub-tables, target >= 2x: " + (ratio_pass ? "pass" : "fail") +
         " (worst of the " + std::to_string(r.buffers.size()) + " buffers)";
}

void print_counter_table(std::ostream& out, const CounterReport& r) {
  out << "byte counters alone: one thread, buffers in memory, thread CPU time; best of " << r.runs.front()
      << " runs on " << r.bytes.front() << " bytes, of " << r.runs.back() << " on " << r.bytes.back() << " bytes\n";
  if (r.core_hz() > 0)
    out << "cycles/byte at a core clock of " << fixed(r.core_hz_before / 1e9, 2) << " GHz before and "
        << fixed(r.core_hz_after / 1e9, 2) << " GHz after, estimated by a chain of dependent additions\n\n";
  else
    out << "cycles/byte: n/a (no estimate of the core clock on this CPU)\n\n";
  char line[512];
  std::string header = "counter                                ";
  for (const std::string& b : r.buffers) {
    std::snprintf(line, sizeof line, " %17s", b.c_str());
    header += line;
  }
  out << header << "\n";
  std::string units = "                                       ";
  for (std::size_t b = 0; b < r.buffers.size(); ++b) {
    std::snprintf(line, sizeof line, " %6s %9s", "c/B", "GB/s");
    units += line;
  }
  out << units << "\n";
  for (const CounterRow& row : r.rows) {
    std::snprintf(line, sizeof line, "%-39s", row.name.c_str());
    std::string text = line;
    for (std::size_t b = 0; b < r.buffers.size(); ++b) {
      if (r.core_hz() > 0)
        std::snprintf(line, sizeof line, " %6.3f %9.2f", r.cycles_per_byte(row, b), r.gbps(row, b));
      else
        std::snprintf(line, sizeof line, " %6s %9.2f", "n/a", r.gbps(row, b));
      text += line;
    }
    out << text << "\n";
  }
  out << "\n" << counter_verdict(r) << "\n";
}

void print_counter_csv(std::ostream& out, const CounterReport& r) {
  out << "counter,buffer,bytes,seconds,gbps,cycles_per_byte,core_hz\n";
  for (const CounterRow& row : r.rows)
    for (std::size_t b = 0; b < r.buffers.size(); ++b)
      out << '"' << row.name << "\"," << r.buffers[b] << "," << r.bytes[b] << "," << fixed(row.seconds[b], 9) << ","
          << fixed(r.gbps(row, b), 3) << "," << (r.core_hz() > 0 ? fixed(r.cycles_per_byte(row, b), 4) : "") << ","
          << fixed(r.core_hz(), 0) << "\n";
  out << "# " << counter_verdict(r) << "\n";
}

std::string counter_json(const CounterReport& r, const std::string& indent) {
  std::ostringstream out;
  out << "{\n" << indent << "  \"core_hz_before\": " << fixed(r.core_hz_before, 0) << ",\n"
      << indent << "  \"core_hz_after\": " << fixed(r.core_hz_after, 0) << ",\n" << indent << "  \"rows\": [\n";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const CounterRow& row = r.rows[i];
    out << indent << "    {\"counter\": " << json_string(row.name) << ", \"buffers\": [";
    for (std::size_t b = 0; b < r.buffers.size(); ++b) {
      out << (b ? ", " : "") << "{\"buffer\": " << json_string(r.buffers[b]) << ", \"bytes\": " << r.bytes[b]
          << ", \"runs\": " << r.runs[b] << ", \"seconds\": " << fixed(row.seconds[b], 9)
          << ", \"gbps\": " << fixed(r.gbps(row, b), 3);
      if (r.core_hz() > 0) out << ", \"cycles_per_byte\": " << fixed(r.cycles_per_byte(row, b), 4);
      out << "}";
    }
    out << "]}" << (i + 1 < r.rows.size() ? "," : "") << "\n";
  }
  out << indent << "  ],\n" << indent << "  \"verdict\": " << json_string(counter_verdict(r)) << "\n" << indent << "}";
  return out.str();
}

std::string machine_line(const char* counter_name) {
  return cpu_model() + ", " + std::to_string(std::thread::hardware_concurrency()) +
         " hardware threads; byte counter: " + counter_name;
}

// `levelhist bench --cpu --counters`: the byte counters alone.
int counters_only(const CpuBenchOptions& o) {
  std::fprintf(stderr, "levelhist bench --cpu --counters: timing the byte counters on one thread...\n");
  const CounterReport report = time_byte_counters(o.size, o.runs);
  const std::string machine = machine_line(cpu_parallel_detail::active_byte_counter().name);
  if (o.format == "json") {
    std::cout << "{\n  \"machine\": " << json_string(machine) << ",\n  \"byte_counters\": " << counter_json(report, "  ")
              << "\n}\n";
  } else if (o.format == "csv") {
    print_counter_csv(std::cout, report);
  } else {
    std::cout << "levelhist bench --cpu --counters: " << machine << "\n";
    print_counter_table(std::cout, report);
  }
  return 0;
}

}  // namespace

int cpu_bench_main(const std::vector<std::string>& args) {
  try {
    const CpuBenchOptions o = parse_options(args);
    if (o.help) {
      std::cout << kHelp;
      return 0;
    }
    if (o.counters_only) return counters_only(o);
    const unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());

    if (!o.file.empty()) file_size(o.file);  // a bad --file is an error before any progress line
    std::fprintf(stderr, "levelhist bench --cpu: preparing the data files...\n");
    std::optional<ScratchFile> created_random;
    std::string random_path = o.file;
    if (random_path.empty()) {
      created_random.emplace(o.dir, "random", o.size, true, o.drop_written_pages);
      random_path = created_random->path();
    }
    const ScratchFile zeros(o.dir, "zeros", file_size(random_path), false, o.drop_written_pages);
    const std::vector<std::string> paths = {random_path, zeros.path()};
    const std::vector<std::string> labels = {o.file.empty() ? "random" : o.file, "zeros"};
    const std::uint64_t bytes = file_size(random_path);

    // Check every method against cpu_serial before timing anything.
    std::fprintf(stderr, "levelhist bench --cpu: checking every method against cpu_serial...\n");
    const Strategy* chosen = nullptr;
    std::vector<Counts> expected_counts;
    for (const std::string& path : paths) {
      read_into_page_cache(path);
      const Mapping m(path);
      Options serial;
      serial.strategy = "cpu_serial";
      serial.backend = BackendChoice::cpu;
      Histogram reference(Binning::per_value(SampleType::u8)), ours(reference.binning());
      fill(reference, SampleType::u8, m.data(), m.size(), serial);
      chosen = &fill(ours, SampleType::u8, m.data(), m.size(), levelhist_options(threads));
      Counts expected{};
      std::copy_n(reference.counts().begin(), 256, expected.begin());
      Counts naive{};
      count_naive(m.data(), m.size(), naive);
      const std::vector<std::pair<std::string, bool>> agree = {
          {"levelhist", ours == reference},
          {"four sub-tables", four_subtables_threaded(m.data(), m.size(), threads) == expected},
          {"naive", naive == expected}};
      for (const auto& [name, ok] : agree)
        if (!ok)
          throw Error(ErrorKind::internal,
                      name + " disagrees with cpu_serial on " + quote(path) + "; please report this bug");
      expected_counts.push_back(expected);
    }

    std::vector<Method> methods = {
        {Kind::levelhist, std::string("levelhist (") + chosen->name + ")", threads, false},
        {Kind::four_subtables, "four sub-tables (zstd HIST_count)", threads, false},
        {Kind::naive, "naive (Listing 1)", 1, false},
        {Kind::stream, "stream (read-only pass)", threads, false},
        {Kind::levelhist, "levelhist, mapping faulted in", threads, true},
        {Kind::four_subtables, "four sub-tables, mapping faulted in", threads, true},
        {Kind::stream, "stream, mapping faulted in", threads, true},
    };
    // Returns a word of the result, to keep it alive.
    auto count_with = [&](Kind kind, const unsigned char* p, std::uint64_t n) -> std::uint64_t {
      Counts counts{};
      switch (kind) {
        case Kind::levelhist: {
          Histogram h(Binning::per_value(SampleType::u8));
          fill(h, SampleType::u8, p, n, levelhist_options(threads));
          return h.count(0);
        }
        case Kind::four_subtables: return four_subtables_threaded(p, n, threads)[0];
        case Kind::naive: count_naive(p, n, counts); return counts[0];
        case Kind::stream: return stream_threaded(p, n, threads);
        case Kind::numpy: break;
      }
      return 0;
    };

    std::fprintf(stderr, "levelhist bench --cpu: timing (%u runs of each method on each file)...\n", o.runs);
    std::uint64_t checksum = 0;  // keeps the results alive
    for (std::size_t f = 0; f < paths.size(); ++f) {
      // Again, right before: a file left alone for a while may have been paged
      // out meanwhile (some VMs reclaim idle page cache, e.g. with DAMON).
      read_into_page_cache(paths[f]);
      std::vector<std::vector<double>> times(methods.size());
      for (unsigned run = 0; run <= o.runs; ++run) {  // run 0 warms up
        for (std::size_t i = 0; i < methods.size(); ++i) {
          if (methods[i].mapped_first) continue;
          const double s = seconds_of([&] {
            const Mapping m(paths[f]);
            checksum += count_with(methods[i].kind, m.data(), m.size());
          });
          if (run > 0) times[i].push_back(s);
        }
        const Mapping m(paths[f]);
        checksum += stream_threaded(m.data(), m.size(), threads);  // faults the whole mapping in
        for (std::size_t i = 0; i < methods.size(); ++i) {
          if (!methods[i].mapped_first) continue;
          const double s = seconds_of([&] { checksum += count_with(methods[i].kind, m.data(), m.size()); });
          if (run > 0) times[i].push_back(s);
        }
      }
      for (std::size_t i = 0; i < methods.size(); ++i) methods[i].gbps.push_back(bytes / median(times[i]) / 1e9);
    }
    g_result_sink = checksum;
    const std::string page_cache = std::string(o.file.empty() && o.drop_written_pages
                                                   ? "created files read back after writing"
                                                   : "files as they were cached") +
                                   "; FileHugePages after timing: " + file_huge_pages();

    // numpy last: bincount of a uint8 array makes an int64 copy (8 bytes per
    // sample), and that much memory pressure could push the other file out of
    // the page cache. Its counts come from a first, untimed bincount.
    std::fprintf(stderr, "levelhist bench --cpu: numpy.bincount...\n");
    std::vector<NumpyResult> numpy;
    for (std::size_t f = 0; f < paths.size(); ++f) {
      numpy.push_back(run_numpy(paths[f], std::min(o.runs, 3u)));
      if (numpy.back().available && numpy.back().counts != expected_counts[f])
        throw Error(ErrorKind::internal,
                    "numpy.bincount disagrees with cpu_serial on " + quote(paths[f]) + "; please report this bug");
    }
    Method numpy_row{Kind::numpy, "numpy.bincount", 1, false};
    for (const NumpyResult& r : numpy) {
      if (!r.available) numpy_row.note = r.why;
      else numpy_row.gbps.push_back(bytes / median(r.seconds) / 1e9);
    }
    if (!numpy_row.note.empty()) numpy_row.gbps.clear();
    methods.push_back(numpy_row);

    std::fprintf(stderr, "levelhist bench --cpu: the byte counters alone, one thread...\n");
    const CounterReport counter_report = time_byte_counters(o.size, o.runs);

    // Ratios: to the baseline measured the same way (end to end, or mapped).
    auto baseline_of = [&](const Method& m) -> const Method& {
      for (const Method& b : methods)
        if (b.kind == Kind::four_subtables && b.mapped_first == m.mapped_first) return b;
      return methods[1];
    };
    const Method& ours = methods[0];
    const double vs_random = ours.gbps[0] / methods[1].gbps[0], vs_zeros = ours.gbps[1] / methods[1].gbps[1];
    const bool baseline_pass = vs_random >= kBaselineTarget && vs_zeros >= kBaselineTarget;
    std::optional<double> vs_numpy;
    if (!numpy_row.gbps.empty()) vs_numpy = std::min(ours.gbps[0] / numpy_row.gbps[0], ours.gbps[1] / numpy_row.gbps[1]);
    const bool numpy_pass = vs_numpy && *vs_numpy >= kNumpyTarget;
    const std::string verdict =
        std::string(baseline_pass && numpy_pass ? "PASS" : "FAIL") + ": levelhist / four sub-tables = " +
        fixed(vs_random, 2) + "x (random), " + fixed(vs_zeros, 2) + "x (zeros), target >= 1.5x: " +
        (baseline_pass ? "pass" : "fail") + "; levelhist / numpy.bincount = " +
        (vs_numpy ? fixed(*vs_numpy, 1) + "x (the lower of the two)" : "n/a (" + numpy_row.note + ")") +
        ", target >= 20x: " + (numpy_pass ? "pass" : "fail");

    const std::string machine = machine_line(cpu_parallel_detail::active_byte_counter().name);
    std::ostream& out = std::cout;
    // A failed acceptance verdict fails the run (exit 1), its reason on stderr
    // in the one-line form of every error; so does a standard output that
    // could not be written.
    const bool pass = baseline_pass && numpy_pass;
    auto finish = [&]() {
      out.flush();
      if (!out) {
        print_error(std::string("cannot write the output: ") + errno_text(),
                    "check where standard output goes (a full disk?)");
        return 1;
      }
      if (pass) return 0;
      std::string why;
      if (!baseline_pass) why = "levelhist is below 1.5x four sub-tables";
      if (!numpy_pass)
        why += (why.empty() ? "" : " and ") + (vs_numpy ? std::string("below 20x numpy.bincount")
                                                        : "numpy.bincount was not timed (" + numpy_row.note + ")");
      const std::string fix = vs_numpy || !baseline_pass
                                  ? "see the table; time on an idle machine, or with a larger --size and more --runs"
                                  : "install numpy for /usr/bin/python3 (Debian: python3-numpy)";
      print_error("bench --cpu: the verdict is FAIL: " + why, fix);
      return 1;
    };
    if (o.format == "json") {
      out << "{\n  \"machine\": " << json_string(machine) << ",\n  \"page_cache\": " << json_string(page_cache)
          << ",\n  \"bytes\": " << bytes << ",\n  \"runs\": " << o.runs
          << ",\n  \"files\": [" << json_string(labels[0]) << ", " << json_string(labels[1]) << "],\n  \"methods\": [\n";
      for (std::size_t i = 0; i < methods.size(); ++i) {
        const Method& m = methods[i];
        out << "    {\"method\": " << json_string(m.name) << ", \"threads\": " << m.threads
            << ", \"end_to_end\": " << (m.mapped_first || m.kind == Kind::numpy ? "false" : "true");
        if (!m.note.empty()) out << ", \"note\": " << json_string(m.note);
        for (std::size_t f = 0; f < m.gbps.size(); ++f)
          out << ", \"gbps_" << (f ? "zeros" : "random") << "\": " << fixed(m.gbps[f], 3) << ", \"ratio_"
              << (f ? "zeros" : "random") << "\": " << fixed(m.gbps[f] / baseline_of(m).gbps[f], 3);
        out << "}" << (i + 1 < methods.size() ? "," : "") << "\n";
      }
      out << "  ],\n  \"pass\": " << (pass ? "true" : "false") << ",\n  \"verdict\": " << json_string(verdict)
          << ",\n  \"byte_counters\": " << counter_json(counter_report, "  ") << "\n}\n";
      return finish();
    }
    if (o.format == "csv") {
      out << "method,threads,end_to_end,gbps_" << labels[0] << ",gbps_zeros,ratio_" << labels[0] << ",ratio_zeros\n";
      for (const Method& m : methods) {
        out << '"' << m.name << "\"," << m.threads << ","
            << (m.kind == Kind::numpy ? "bincount only" : m.mapped_first ? "no" : "yes");
        if (m.gbps.empty()) out << ",,,,";
        for (std::size_t f = 0; f < m.gbps.size(); ++f) out << "," << fixed(m.gbps[f], 3);
        for (std::size_t f = 0; f < m.gbps.size(); ++f) out << "," << fixed(m.gbps[f] / baseline_of(m).gbps[f], 3);
        out << "\n";
      }
      out << "# " << verdict << "\n#\n# byte counters alone, one thread\n";
      print_counter_csv(out, counter_report);
      return finish();
    }
    out << "levelhist bench --cpu: " << machine << "\n"
        << "page cache: " << page_cache << "\n"
        << "u8 samples, 256 bins; files of " << bytes << " bytes in the page cache; median of " << o.runs
        << " runs (numpy: " << std::min(o.runs, 3u) << "); GB/s of input bytes\n"
        << "ratio: to four sub-tables timed the same way (end to end from the file, or on a faulted-in mapping);\n"
        << "numpy.bincount: only the bincount call is timed (array already in memory), ratio to the end-to-end baseline\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-38s %7s %12s %12s %14s %13s\n", "method", "threads",
                  ("GB/s " + labels[0]).c_str(), "GB/s zeros", ("ratio " + labels[0]).c_str(), "ratio zeros");
    out << line;
    for (const Method& m : methods) {
      if (m.gbps.empty()) {
        std::snprintf(line, sizeof line, "%-38s %7u %s\n", m.name.c_str(), m.threads, m.note.c_str());
      } else {
        std::snprintf(line, sizeof line, "%-38s %7u %12.2f %12.2f %13.2fx %12.2fx\n", m.name.c_str(), m.threads,
                      m.gbps[0], m.gbps[1], m.gbps[0] / baseline_of(m).gbps[0], m.gbps[1] / baseline_of(m).gbps[1]);
      }
      out << line;
    }
    out << "\n" << verdict << "\n\n";
    print_counter_table(out, counter_report);
    return finish();
  } catch (const std::exception& e) {
    return report_error(e, "levelhist bench --cpu --help");
  }
}

}  // namespace levelhist::bench
