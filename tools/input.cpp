#include "input.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "args.hpp"
#include "image/temp_files.hpp"

namespace levelhist::cli {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kDefaultWindow = std::uint64_t{1} << 30;
constexpr std::uint64_t kDefaultChunk = 16 * kMiB;
constexpr std::uint64_t kDefaultProgress = 256 * kMiB;
constexpr std::uint64_t kProgressPiece = 64 * kMiB;

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024.0 && u < 5) b /= 1024.0, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

void write_stderr(const std::string& s) {
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a progress bar is not worth an error
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::string errno_text(int err) { return std::strerror(err); }

std::string open_fix(int err) {
  if (err == ENOENT || err == ENOTDIR) return "check the file name";
  if (err == EACCES || err == EPERM) return "check the file's permissions";
  return "check the path and the file";
}

// ---- a mapped file that shrinks while it is read -----------------------------------
//
// Reading a mapped page past the end of the file raises SIGBUS: the file was
// truncated while levelhist read it (or the storage under it failed). Any
// thread that reads the window may take it: levelhist::fill spreads a call
// over several, the CUDA host path copies with several. The handler turns the
// fault into data: it maps zero pages over the rest of the window, notes the
// loss and returns, so the faulting load runs again and reads zeros (mmap is
// a plain system call on Linux, safe here though POSIX does not list it).
// scan_mapped then throws an input error, so the command writes nothing. A
// SIGBUS outside the window goes to the handler that was there before, or
// takes its default action.

std::atomic<std::uintptr_t> g_window_begin{0};  // the window being read: [begin, end)
std::atomic<std::uintptr_t> g_window_end{0};
std::atomic<bool> g_window_lost{false};  // part of it was replaced by zeros
std::uintptr_t g_page_bytes = 4096;
struct sigaction g_previous_sigbus {};

extern "C" void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::uintptr_t begin = g_window_begin.load(), end = g_window_end.load();
  if (info->si_code > 0 && addr >= begin && addr < end) {
    const std::uintptr_t page = addr & ~(g_page_bytes - 1);
    void* zeros = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                         -1, 0);
    if (zeros != MAP_FAILED) {
      g_window_lost.store(true);
      return;
    }
  }
  if ((g_previous_sigbus.sa_flags & SA_SIGINFO) && g_previous_sigbus.sa_sigaction) {
    g_previous_sigbus.sa_sigaction(sig, info, context);
    return;
  }
  if (!(g_previous_sigbus.sa_flags & SA_SIGINFO) && g_previous_sigbus.sa_handler != SIG_DFL &&
      g_previous_sigbus.sa_handler != SIG_IGN) {
    g_previous_sigbus.sa_handler(sig);
    return;
  }
  // The default action: returning re-runs the faulting load, which now kills
  // the process; a SIGBUS sent by another process is raised again.
  ::signal(SIGBUS, SIG_DFL);
  if (info->si_code <= 0) ::raise(sig);
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page_bytes = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
}

// The window [begin, begin + bytes) is being read for the scope's duration.
struct WatchedWindow {
  WatchedWindow(const void* begin, std::size_t bytes) {
    g_window_lost.store(false);
    g_window_end.store(reinterpret_cast<std::uintptr_t>(begin) + bytes);
    g_window_begin.store(reinterpret_cast<std::uintptr_t>(begin));
  }
  ~WatchedWindow() {
    g_window_begin.store(0);
    g_window_end.store(0);
  }
  WatchedWindow(const WatchedWindow&) = delete;
  WatchedWindow& operator=(const WatchedWindow&) = delete;
};

// A file descriptor closed on scope exit (when owned).
struct Fd {
  int fd = -1;
  bool own = false;
  ~Fd() {
    if (own && fd >= 0) ::close(fd);
  }
};

// Input `in` ready to be read (scan and read_through): standard input, the
// stream peek() already opened, or the path opened now; and its stat.
void open_for_reading(Input& in, Fd& fd, struct stat& st) {
  if (in.is_stdin) {
    fd.fd = STDIN_FILENO;
  } else if (in.held_fd >= 0) {  // a stream peek() opened: read on from there
    fd.fd = in.held_fd;
    fd.own = true;
    in.held_fd = -1;
  } else {
    fd.fd = ::open(in.arg.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    fd.own = true;
    if (fd.fd < 0) {
      int err = errno;
      input_error("cannot open " + in.label + ": " + errno_text(err), open_fix(err));
    }
  }
  if (::fstat(fd.fd, &st) != 0) input_error("cannot read " + in.label + ": " + errno_text(errno), "check the input");
#ifdef F_SETPIPE_SZ
  // A pipe (`cat FILE | levelhist count`, a named FIFO): a buffer of
  // kPipeBytes instead of Linux's 64 KiB lets the writer run further ahead
  // and each read return more. Best effort: where the system's limit
  // (/proc/sys/fs/pipe-max-size) or the user's pipe quota refuses it, the
  // pipe stays as it was. Measured on the 2-core machine: docs/BENCHMARKS.md.
  constexpr int kPipeBytes = 1 << 20;
  if (S_ISFIFO(st.st_mode) && ::fcntl(fd.fd, F_GETPIPE_SZ) < kPipeBytes) (void)::fcntl(fd.fd, F_SETPIPE_SZ, kPipeBytes);
#endif
}

}  // namespace

// ---- InputSource -----------------------------------------------------------------

// An input as the library reads it (InputSet::read_through): a regular file's
// byte range (positional: the library's threads pread it at once), or a
// stream whose bytes peek() already read are delivered first. Every read
// counts towards the progress bar; a stream that ends inside a sample is the
// CLI's message for it (InputSet::ragged), thrown from the read that finds
// the end, so the library adds nothing.
class InputSource final : public FdSource {
 public:
  // A regular file's bytes [begin, end).
  InputSource(const InputSet& set, const Input& in, int fd, std::uint64_t begin, std::uint64_t end, Progress* progress)
      : FdSource(fd, in.label, begin, end), set_(set), in_(in), progress_(progress) {}
  // A stream, read on from where peek() left it.
  InputSource(const InputSet& set, const Input& in, int fd, Progress* progress)
      : FdSource(fd, in.label), set_(set), in_(in), progress_(progress) {}

  std::size_t read(void* dst, std::size_t bytes) override {
    if (positional()) return FdSource::read(dst, bytes);  // through read_at
    std::size_t got = 0;
    if (pending_used_ < in_.pending.size()) {
      got = std::min(bytes, in_.pending.size() - pending_used_);
      std::memcpy(dst, in_.pending.data() + pending_used_, got);
      pending_used_ += got;
    } else {
      got = FdSource::read(dst, bytes);
      if (got == 0 && streamed_ % set_.sample_size_ != 0) set_.ragged(in_, streamed_);
    }
    streamed_ += got;
    report(got);
    return got;
  }

  std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset) override {
    const std::size_t got = FdSource::read_at(dst, bytes, offset);
    report(got);
    return got;
  }

 private:
  // read_at runs on several threads at once; the bar is drawn by one at a time.
  void report(std::size_t bytes) {
    if (!progress_ || bytes == 0) return;
    std::lock_guard<std::mutex> lock(progress_mutex_);
    progress_->add(bytes);
  }

  const InputSet& set_;
  const Input& in_;
  Progress* progress_;
  std::mutex progress_mutex_;
  std::size_t pending_used_ = 0;
  std::uint64_t streamed_ = 0;
};

// ---- Progress ------------------------------------------------------------------

Progress::Progress(std::uint64_t total_bytes, bool total_known, bool wanted)
    : enabled_(wanted && isatty(STDERR_FILENO) == 1),
      total_(total_bytes),
      total_known_(total_known),
      threshold_(env_bytes("LEVELHIST_PROGRESS_BYTES", kDefaultProgress)),
      start_(now_seconds()) {}

Progress::~Progress() { finish(); }

void Progress::add(std::uint64_t bytes) {
  done_ += bytes;
  if (!enabled_) return;
  double t = now_seconds();
  if (t - start_ < 0.25 || (last_draw_ >= 0.0 && t - last_draw_ < 0.2)) return;
  bool large = total_known_ ? total_ > threshold_ : done_ > threshold_;
  if (!large) return;
  last_draw_ = t;
  draw();
}

void Progress::draw() {
  int width = 80;
  struct winsize ws {};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) width = ws.ws_col;
  double elapsed = now_seconds() - start_;
  std::string rate = elapsed > 0 ? human_bytes(static_cast<double>(done_) / elapsed) + "/s" : "";
  std::string line = "levelhist: ";
  if (total_known_ && total_ > 0) {
    double frac = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3.0f%%", 100.0 * frac);
    std::string tail = std::string(" ") + pct + "  " + human_bytes(static_cast<double>(done_)) + " / " +
                       human_bytes(static_cast<double>(total_)) + "  " + rate;
    int bar = std::min(40, width - 1 - static_cast<int>(line.size() + tail.size()) - 2);
    if (bar >= 5) {
      int filled = static_cast<int>(frac * bar);
      line += '[';
      line.append(static_cast<std::size_t>(filled), '#');
      line.append(static_cast<std::size_t>(bar - filled), '.');
      line += ']';
    }
    line += tail;
  } else {
    line += human_bytes(static_cast<double>(done_)) + " read  " + rate;
  }
  if (static_cast<int>(line.size()) > width - 1) line.resize(static_cast<std::size_t>(std::max(0, width - 1)));
  write_stderr("\r" + line + "\033[K");
  shown_ = true;
}

void Progress::finish() {
  if (shown_) write_stderr("\r\033[K");
  shown_ = false;
}

// ---- InputSet ------------------------------------------------------------------

InputSet::InputSet(const std::vector<std::string>& args, std::size_t sample_size, std::string type_name)
    : sample_size_(sample_size),
      type_name_(std::move(type_name)),
      window_bytes_(env_bytes("LEVELHIST_WINDOW_BYTES", kDefaultWindow)),
      chunk_bytes_(env_bytes("LEVELHIST_CHUNK_BYTES", kDefaultChunk)) {
  std::size_t stdin_count = 0;
  for (const std::string& a : args) {
    Input in;
    in.arg = a;
    in.is_stdin = a == "-";
    in.label = in.is_stdin ? "standard input" : quote(a);
    stdin_count += in.is_stdin;
    inputs_.push_back(std::move(in));
  }
  if (stdin_count > 1)
    usage_error("'-' (standard input) is given " + std::to_string(stdin_count) + " times",
                "give it once; standard input can be read only once");
}

InputSet::~InputSet() {
  for (Input& in : inputs_) {
    if (in.spill_fd >= 0) ::close(in.spill_fd);
    if (in.held_fd >= 0) ::close(in.held_fd);
  }
}

void InputSet::set_sample(std::size_t sample_size, std::string type_name) {
  sample_size_ = sample_size;
  type_name_ = std::move(type_name);
  for (const Input& in : inputs_)
    if (in.sized && in.bytes % sample_size_ != 0) ragged(in, in.bytes);
}

std::vector<unsigned char> InputSet::peek(std::size_t i, std::size_t n) {
  Input& in = inputs_[i];
  if (in.sized) {
    Fd fd;
    if (in.is_stdin) {
      fd.fd = STDIN_FILENO;
    } else {
      fd.fd = ::open(in.arg.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
      fd.own = true;
      if (fd.fd < 0) {
        int err = errno;
        input_error("cannot open " + in.label + ": " + errno_text(err), open_fix(err));
      }
    }
    std::vector<unsigned char> out(static_cast<std::size_t>(std::min<std::uint64_t>(n, in.bytes)));
    std::size_t got = 0;
    while (got < out.size()) {
      ssize_t r = ::pread(fd.fd, out.data() + got, out.size() - got, static_cast<off_t>(in.start + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) input_error("cannot read " + in.label + ": " + errno_text(errno), "check the input");
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
  }
  int fd = STDIN_FILENO;
  if (!in.is_stdin) {
    if (in.held_fd < 0) {
      in.held_fd = ::open(in.arg.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
      if (in.held_fd < 0) {
        int err = errno;
        input_error("cannot open " + in.label + ": " + errno_text(err), open_fix(err));
      }
    }
    fd = in.held_fd;
  }
  // Exactly what is asked for, no more: a slow pipe is not waited on beyond it.
  while (in.pending.size() < n) {
    unsigned char buf[4096];
    ssize_t r = ::read(fd, buf, std::min(sizeof buf, n - in.pending.size()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      input_error("cannot read " + in.label + ": " + errno_text(err),
                  err == EISDIR ? "give a file, not a directory" : "check the input");
    }
    if (r == 0) break;
    in.pending.insert(in.pending.end(), buf, buf + r);
  }
  return {in.pending.begin(), in.pending.begin() + static_cast<std::ptrdiff_t>(std::min(n, in.pending.size()))};
}

void InputSet::skip_header(std::size_t i, std::uint64_t bytes) {
  Input& in = inputs_[i];
  if (in.sized) {
    bytes = std::min(bytes, in.bytes);
    in.start += bytes;
    in.bytes -= bytes;
    return;
  }
  in.pending.erase(in.pending.begin(),
                   in.pending.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(bytes, in.pending.size())));
}

std::uint64_t InputSet::known_bytes() const {
  std::uint64_t b = 0;
  for (const Input& in : inputs_) b += in.bytes;
  return b;
}

bool InputSet::all_known() const {
  return std::all_of(inputs_.begin(), inputs_.end(), [](const Input& in) { return in.sized || in.bytes == 0; }) &&
         std::none_of(inputs_.begin(), inputs_.end(), [](const Input& in) { return in.is_stdin && !in.sized; });
}

void InputSet::ragged(const Input& in, std::uint64_t bytes) const {
  std::uint64_t left = bytes % sample_size_;
  std::string what = in.is_stdin ? "standard input has " : in.label + " has ";
  what += std::to_string(bytes) + " bytes, not a whole number of " + type_name_ + " samples (" +
          std::to_string(sample_size_) + " bytes each): " + std::to_string(left) + " byte" + (left == 1 ? "" : "s") +
          " left over";
  input_error(what, "check --type, or trim the input to a multiple of " + std::to_string(sample_size_) + " bytes");
}

void InputSet::validate() {
  for (Input& in : inputs_) {
    struct stat st {};
    if (in.is_stdin) {
      if (::fstat(STDIN_FILENO, &st) != 0)
        input_error("cannot read standard input: " + errno_text(errno), "give an input file or redirect standard input");
      if (S_ISDIR(st.st_mode))
        input_error("standard input is a directory", "redirect it from a file, or give files as arguments");
      if (S_ISREG(st.st_mode)) {
        off_t off = ::lseek(STDIN_FILENO, 0, SEEK_CUR);
        if (off >= 0) {
          in.sized = true;
          in.start = static_cast<std::uint64_t>(off);
          in.bytes = st.st_size > off ? static_cast<std::uint64_t>(st.st_size - off) : 0;
        }
      }
    } else {
      if (::stat(in.arg.c_str(), &st) != 0) {
        int err = errno;
        input_error("cannot open " + in.label + ": " + errno_text(err), open_fix(err));
      }
      if (S_ISDIR(st.st_mode)) input_error(in.label + " is a directory", "give the files in it, not the directory");
      if (S_ISREG(st.st_mode)) {
        int fd = ::open(in.arg.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
          int err = errno;
          input_error("cannot open " + in.label + ": " + errno_text(err), open_fix(err));
        }
        ::close(fd);
        // A size of 0 may be a pseudo-file (/proc) that still has content: stream it.
        in.sized = st.st_size > 0;
        in.bytes = static_cast<std::uint64_t>(st.st_size);
      } else if (::access(in.arg.c_str(), R_OK) != 0) {
        int err = errno;
        input_error("cannot open " + in.label + ": " + errno_text(err), open_fix(err));
      }
    }
    if (in.sized && in.bytes % sample_size_ != 0) ragged(in, in.bytes);
  }
}

void InputSet::make_rescannable(Progress* progress) {
  for (Input& in : inputs_) {
    if (!in.is_stdin || in.sized) continue;
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = tmp && *tmp ? tmp : "/tmp";
    std::string path = dir + "/levelhist-stdin-XXXXXX";
    int fd = ::mkstemp(path.data());
    if (fd < 0)
      input_error("--range auto reads standard input twice, but no temporary file can be made in " + quote(dir) +
                      ": " + errno_text(errno),
                  "set TMPDIR to a writable directory, or give the data as a file");
    // Unlinked at once, so nothing can leave it behind; registered for the
    // instant in between, in case a signal falls there (core/temp_files.hpp).
    const int ticket = detail::register_temp_file(path.c_str());
    ::unlink(path.c_str());
    detail::unregister_temp_file(ticket);
    in.spill_fd = fd;
    auto spill = [&](const unsigned char* p, std::size_t left) {
      while (left > 0) {
        ssize_t w = ::write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0)
          input_error("cannot buffer standard input for --range auto in " + quote(dir) + ": " + errno_text(errno),
                      "set TMPDIR to a directory with room, or give the data as a file");
        p += w;
        left -= static_cast<std::size_t>(w);
      }
    };
    // What peek() read comes first.
    spill(in.pending.data(), in.pending.size());
    std::uint64_t total = in.pending.size();
    in.pending.clear();
    std::vector<unsigned char> buf(std::min<std::uint64_t>(chunk_bytes_, 64 * kMiB));
    while (true) {
      ssize_t n = ::read(STDIN_FILENO, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) input_error("cannot read standard input: " + errno_text(errno), "check what feeds it");
      if (n == 0) break;
      spill(buf.data(), static_cast<std::size_t>(n));
      total += static_cast<std::uint64_t>(n);
      if (progress) progress->add(static_cast<std::uint64_t>(n));
    }
    in.sized = true;
    in.bytes = total;
    if (total % sample_size_ != 0) ragged(in, total);
  }
}

void InputSet::deliver(const unsigned char* data, std::uint64_t n, const BlockFn& fn, Progress* progress) const {
  if (n == 0) return;
  if (!progress || !progress->active()) {
    fn(data, n);
    if (progress) progress->add(n * sample_size_);
    return;
  }
  // Smaller calls so that the bar moves a few times a second even on slow disks.
  const std::uint64_t per_piece = std::max<std::uint64_t>(1, kProgressPiece / sample_size_);
  for (std::uint64_t done = 0; done < n;) {
    std::uint64_t k = std::min(per_piece, n - done);
    fn(data + done * sample_size_, k);
    progress->add(k * sample_size_);
    done += k;
  }
}

void InputSet::scan(std::size_t i, const BlockFn& fn, Progress* progress) {
  Input& in = inputs_[i];
  if (in.spill_fd >= 0) {
    scan_mapped(in, in.spill_fd, 0, in.bytes, fn, progress);
    return;
  }
  Fd fd;
  struct stat st {};
  open_for_reading(in, fd, st);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // A redirected standard input is read from where it stood when levelhist
    // started, not from where the previous pass left it.
    off_t begin = !in.is_stdin || in.sized ? static_cast<off_t>(in.start) : ::lseek(fd.fd, 0, SEEK_CUR);
    if (begin >= 0) {
      std::uint64_t end = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, begin));
      scan_mapped(in, fd.fd, static_cast<std::uint64_t>(begin), end, fn, progress);
      // Leave a redirected standard input consumed, as a reader would.
      if (in.is_stdin) ::lseek(fd.fd, static_cast<off_t>(end), SEEK_SET);
      return;
    }
  }
  scan_stream(in, fd.fd, fn, progress);
}

std::uint64_t InputSet::read_through(std::size_t i, const SourceFn& fill, Progress* progress) {
  Input& in = inputs_[i];
  if (in.spill_fd >= 0) {
    InputSource source(*this, in, in.spill_fd, 0, in.bytes, progress);
    return fill(source);
  }
  Fd fd;
  struct stat st {};
  open_for_reading(in, fd, st);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // As in scan(): a redirected standard input is read from where it stood
    // when levelhist started, and left consumed (FdSource::consumed).
    const off_t at = !in.is_stdin || in.sized ? static_cast<off_t>(in.start) : ::lseek(fd.fd, 0, SEEK_CUR);
    if (at >= 0) {
      const auto begin = static_cast<std::uint64_t>(at);
      const auto end = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, at));
      if ((end - begin) % sample_size_ != 0) ragged(in, end - begin);
      InputSource source(*this, in, fd.fd, begin, end, progress);
      return fill(source);
    }
  }
  InputSource source(*this, in, fd.fd, progress);
  const std::uint64_t bytes = fill(source);
  in.pending.clear();
  return bytes;
}

void InputSet::lost_mapped_data(const Input& in, int fd, std::uint64_t expected_end) const {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < expected_end)
    input_error(in.label + " shrank while it was read: it had " + std::to_string(expected_end) + " bytes, now " +
                    std::to_string(st.st_size),
                "count it again once nothing is writing to it");
  input_error("cannot read " + in.label + ": a page of it could not be read (the storage failed under it)",
              "check the file and the device it is on");
}

void InputSet::scan_mapped(Input& in, int fd, std::uint64_t begin, std::uint64_t end, const BlockFn& fn,
                           Progress* progress) {
  if ((end - begin) % sample_size_ != 0) ragged(in, end - begin);
  install_sigbus_handler();
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t pos = begin;
  while (pos < end) {
    std::uint64_t map_off = pos / page * page;
    std::uint64_t map_end = std::min(end, std::max(map_off + window_bytes_, pos + sample_size_));
    std::size_t len = static_cast<std::size_t>(map_end - map_off);
    void* m = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(map_off));
    if (m == MAP_FAILED) {
      // Not mappable (some file systems): read the rest instead.
      if (::lseek(fd, static_cast<off_t>(pos), SEEK_SET) < 0)
        input_error("cannot read " + in.label + ": " + errno_text(errno), "check the input");
      scan_stream(in, fd, fn, progress);
      return;
    }
    ::madvise(m, len, MADV_SEQUENTIAL);
    std::uint64_t n = (map_end - pos) / sample_size_;
    bool lost = false;
    try {
      WatchedWindow watch(m, len);
      deliver(static_cast<const unsigned char*>(m) + (pos - map_off), n, fn, progress);
      lost = g_window_lost.load();
    } catch (...) {
      lost = g_window_lost.load();
      ::munmap(m, len);
      if (lost) lost_mapped_data(in, fd, end);  // the cause, rather than what it led to
      throw;
    }
    ::munmap(m, len);
    if (lost) lost_mapped_data(in, fd, end);
    pos += n * sample_size_;
  }
}

void InputSet::scan_stream(Input& in, int fd, const BlockFn& fn, Progress* progress) {
  std::vector<unsigned char> buf(static_cast<std::size_t>(std::max<std::uint64_t>(chunk_bytes_, sample_size_)));
  std::size_t have = 0;
  std::uint64_t total = 0;
  // The whole samples of the buffer go out; a partial one moves to its front.
  auto flush = [&] {
    std::size_t whole = have / sample_size_ * sample_size_;
    deliver(buf.data(), whole / sample_size_, fn, progress);
    std::memmove(buf.data(), buf.data() + whole, have - whole);
    have -= whole;
  };
  // The bytes peek() read come first.
  for (std::size_t done = 0; done < in.pending.size();) {
    const std::size_t k = std::min(in.pending.size() - done, buf.size() - have);
    std::memcpy(buf.data() + have, in.pending.data() + done, k);
    have += k;
    done += k;
    total += k;
    if (have == buf.size()) flush();
  }
  in.pending.clear();
  bool eof = false;
  while (!eof) {
    ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      input_error("cannot read " + in.label + ": " + errno_text(err),
                  err == EISDIR ? "give a file, not a directory" : "check the input");
    }
    if (n == 0) eof = true;
    have += static_cast<std::size_t>(n);
    total += static_cast<std::uint64_t>(n);
    if (have == buf.size() || eof) flush();
  }
  if (have != 0) ragged(in, total);
}

}  // namespace levelhist::cli
