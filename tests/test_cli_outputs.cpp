// Where outputs go (sort/threshold/equalize -o, count/image --plot), all through
// the one writer of core/file_io.hpp: devices and FIFOs written in place (never
// replaced by a regular file), `-` and /dev/stdout as standard output, symbolic
// links followed to their target (the link stays a link), a directory refused;
// errors that name their cause; no output that overwrites an input; no file
// written when standard output fails; no temporary file left by SIGINT, SIGTERM
// or SIGHUP.
#include <sys/inotify.h>
#include <sys/resource.h>

#include <csignal>
#include <set>

#include "cli_test_support.hpp"
#include "image/file_io.hpp"
#include "image_test_support.hpp"
#include "levelhist/plot.hpp"
#include "svg_check.hpp"

namespace cli_test {
namespace {

using image_test::pattern;
using image_test::pnm_file;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string sorted(std::string bytes) {
  std::sort(bytes.begin(), bytes.end(),
            [](char a, char b) { return static_cast<unsigned char>(a) < static_cast<unsigned char>(b); });
  return bytes;
}

bool is_char_device(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

bool is_symlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

class CliOutputs : public CliTest {
 protected:
  // Every entry of a directory (default: the test's), sorted.
  std::set<std::string> entries(const std::string& dir = "") const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir.empty() ? dir_ : fs::path(dir))) names.insert(e.path().filename().string());
    return names;
  }
  // No temporary file (NAME.tmp-PID-N) anywhere under the test's directory.
  void expect_no_temporary_files() const {
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << "left behind: " << e.path();
  }
  std::string gray_image() { return file("g.pgm", pnm_file(pattern(16, 9, 1, 8, 255), false)); }
};

// ---- devices, standard output, FIFOs -----------------------------------------------------

TEST_F(CliOutputs, DevicesAreWrittenInPlaceNeverReplaced) {
  if (!is_char_device("/dev/null") || !is_char_device("/dev/full")) GTEST_SKIP() << "no /dev/null or /dev/full";
  const std::string in = file("in.u8", random_bytes(5000, 1));
  ok({"sort", in, "-o", "/dev/null"});
  EXPECT_TRUE(is_char_device("/dev/null"));
  // A full device: one line naming the cause and the path, exit 1.
  Result r = fails(1, {"sort", in, "-o", "/dev/full"});
  EXPECT_NE(r.err.find("no space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'/dev/full'"), std::string::npos) << r.err;
  EXPECT_TRUE(is_char_device("/dev/full"));
  // Plots and images reach a device through a link with the right extension.
  fs::create_symlink("/dev/null", path("null.svg"));
  fs::create_symlink("/dev/null", path("null.pgm"));
  fs::create_symlink("/dev/full", path("full.svg"));
  fs::create_symlink("/dev/full", path("full.pgm"));
  const std::string table = ok({"count", in}).out;
  EXPECT_EQ(ok({"count", in, "--plot", path("null.svg")}).out, table);
  const std::string gray = gray_image();
  ok({"image", gray, "--plot", path("null.svg")});
  ok({"threshold", gray, "-o", path("null.pgm"), "--value", "100"});
  ok({"equalize", gray, "-o", path("null.pgm")});
  r = fails(1, {"count", in, "--plot", path("full.svg")});  // nothing on stdout: the plot is written first
  EXPECT_NE(r.err.find("no space left on device"), std::string::npos) << r.err;
  fails(1, {"image", gray, "--plot", path("full.svg")});
  fails(1, {"threshold", gray, "-o", path("full.pgm"), "--value", "100"});
  fails(1, {"equalize", gray, "-o", path("full.pgm")});
  EXPECT_TRUE(is_char_device("/dev/null"));
  EXPECT_TRUE(is_char_device("/dev/full"));
  for (const char* link : {"null.svg", "null.pgm", "full.svg", "full.pgm"}) EXPECT_TRUE(is_symlink(path(link))) << link;
  expect_no_temporary_files();
}

TEST_F(CliOutputs, DashAndDevStdoutAreStandardOutput) {
  const std::string bytes = random_bytes(3000, 2);
  const std::string in = file("in.u8", bytes);
  EXPECT_EQ(ok({"sort", in, "-o", "-"}).out, sorted(bytes));
  EXPECT_EQ(ok({"sort", in, "--output", "/dev/stdout"}).out, sorted(bytes));
  EXPECT_EQ(ok({"sort", in, "-o", "/dev/fd/1"}).out, sorted(bytes));
  RunSpec piped;
  piped.stdin_data = bytes;
  EXPECT_EQ(ok({"sort", "-", "-o", "-"}, piped).out, sorted(bytes));
  // Written at standard output's offset, after what the shell wrote there
  // (reopening /dev/stdout would start at offset 0 and overwrite it).
  const std::string captured = path("captured");
  RunSpec shell;
  shell.program = "/bin/sh";
  ok({"-c", "{ printf 'head\\n'; \"$0\" sort \"$1\" -o /dev/stdout; } > \"$2\"", cli_path(), in, captured}, shell);
  EXPECT_EQ(read_all(captured), "head\n" + sorted(bytes));
  // A command whose report also goes to standard output refuses to mix the two
  // for a plot; threshold's image goes there and its report to standard error.
  const std::string gray = gray_image();
  fs::create_symlink("/dev/stdout", path("out.pgm"));
  fs::create_symlink("/dev/stdout", path("out.svg"));
  Result r = run_cli({"threshold", gray, "-o", path("out.pgm"), "--value", "100"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("P5\n", 0), 0u) << r.out.substr(0, 20);
  EXPECT_EQ(r.err, "threshold 100\n");
  r = fails(2, {"count", in, "--plot", path("out.svg")});
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
  fails(2, {"image", gray, "--plot", path("out.svg")});
  // equalize prints nothing: its image may go there.
  const std::string image = ok({"equalize", gray, "-o", path("out.pgm")}).out;
  EXPECT_EQ(image.rfind("P5", 0), 0u) << image.substr(0, 20);
}

TEST_F(CliOutputs, FifoIsWrittenInPlace) {
  const std::string bytes = random_bytes(4000, 3);  // less than a pipe's buffer: no reader thread needed
  const std::string in = file("in.u8", bytes);
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Opened read-write: a reader that exists before levelhist opens the FIFO, and never sees end of file.
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  auto drain = [&] {
    std::string got;
    char buf[65536];
    for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    return got;
  };
  ok({"sort", in, "-o", fifo});
  EXPECT_EQ(drain(), sorted(bytes));
  fs::create_symlink(fifo, path("fifo.svg"));
  ok({"count", in, "--plot", path("fifo.svg")});
  const std::string svg = drain();
  EXPECT_TRUE(svg_check::check(svg).ok()) << svg.substr(0, 200);
  ::close(reader);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  expect_no_temporary_files();
}

// ---- links and directories ----------------------------------------------------------------

TEST_F(CliOutputs, SymbolicLinksAreFollowedAndStayLinks) {
  const std::string bytes = random_bytes(2000, 4);
  const std::string in = file("in.u8", bytes);
  fs::create_directory(path("sub"));
  const std::string target = file("sub/target.raw", "old content");
  fs::create_symlink("sub/target.raw", path("relative"));  // relative to the link's directory
  fs::create_symlink(target, path("absolute"));
  fs::create_symlink("relative", path("chain"));  // a link to a link
  for (const char* link : {"relative", "absolute", "chain"}) {
    std::ofstream(target, std::ios::trunc) << "old content";
    ok({"sort", in, "-o", path(link)});
    EXPECT_TRUE(is_symlink(path(link))) << link;
    EXPECT_EQ(read_all(target), sorted(bytes)) << link;
  }
  EXPECT_TRUE(is_symlink(path("relative")));
  EXPECT_EQ(entries(path("sub")), std::set<std::string>{"target.raw"});
  // The image commands and plots write through links the same way.
  const std::string gray = gray_image();
  fs::create_symlink("sub/t.pgm", path("t.pgm"));
  fs::create_symlink("sub/p.svg", path("p.svg"));
  ok({"threshold", gray, "-o", path("t.pgm"), "--value", "100"});
  ok({"image", gray, "--plot", path("p.svg")});
  EXPECT_TRUE(is_symlink(path("t.pgm")));
  EXPECT_TRUE(is_symlink(path("p.svg")));
  EXPECT_EQ(read_all(path("sub/t.pgm")).rfind("P5", 0), 0u);
  EXPECT_TRUE(svg_check::check(read_all(path("sub/p.svg"))).ok());
  expect_no_temporary_files();
}

TEST_F(CliOutputs, DanglingLinkCreatesItsTarget) {
  const std::string bytes = random_bytes(100, 5);
  const std::string in = file("in.u8", bytes);
  fs::create_directory(path("sub"));
  fs::create_symlink("sub/new.raw", path("dangling"));
  ok({"sort", in, "-o", path("dangling")});
  EXPECT_TRUE(is_symlink(path("dangling")));
  EXPECT_EQ(read_all(path("sub/new.raw")), sorted(bytes));
  // A link into a directory that does not exist: the cause, no file.
  fs::create_symlink("nowhere/x.raw", path("lost"));
  Result r = fails(1, {"sort", in, "-o", path("lost")});
  EXPECT_NE(r.err.find("no such file or directory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("links to"), std::string::npos) << r.err;
  // A loop of links.
  fs::create_symlink("loop2", path("loop1"));
  fs::create_symlink("loop1", path("loop2"));
  r = fails(1, {"sort", in, "-o", path("loop1")});
  EXPECT_NE(r.err.find("symbolic links"), std::string::npos) << r.err;
  expect_no_temporary_files();
}

TEST_F(CliOutputs, DirectoryIsRefused) {
  const std::string in = file("in.u8", "abc");
  fs::create_directory(path("dir"));
  fs::create_symlink("dir", path("to-dir"));
  Result r = fails(1, {"sort", in, "-o", path("dir")});
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  r = fails(1, {"sort", in, "-o", path("to-dir")});
  EXPECT_NE(r.err.find("links to a directory"), std::string::npos) << r.err;
  fs::create_directory(path("d.svg"));
  fails(1, {"count", in, "--plot", path("d.svg")});
  EXPECT_TRUE(fs::is_empty(path("dir")));
  EXPECT_TRUE(fs::is_empty(path("d.svg")));
}

// ---- outputs never overwrite inputs ---------------------------------------------------------

TEST_F(CliOutputs, PlotNeverOverwritesAnInput) {
  const std::string bytes = "svg bytes counted as u8 samples";
  const std::string data = file("data.svg", bytes);
  const std::string other = file("other.u8", "xyz");
  fs::create_directory(path("sub"));
  fs::create_symlink(data, path("link.svg"));
  const std::vector<std::vector<std::string>> cases = {
      {"count", data, "--plot", data},
      {"count", other, data, "--plot", data},  // any of several inputs
      {"count", data, "--plot", path("sub/../data.svg")},
      {"count", data, "--plot", path("link.svg")},
      {"count", "--per-file", other, data, "--plot", data},
      {"count", "--type", "u8", "--weights", data, "--plot", data, other},  // the weights are an input too
  };
  for (const auto& args : cases) {
    Result r = fails(2, args);
    EXPECT_NE(r.err.find("never overwrites"), std::string::npos) << r.err;
  }
  // Standard input redirected from the output file.
  RunSpec redirected;
  redirected.stdin_file = data;
  fails(2, {"count", "--plot", data}, redirected);
  fails(2, {"count", "-", "--plot", data}, redirected);
  fails(2, {"sort", "-", "-o", data}, redirected);
  EXPECT_EQ(read_all(data), bytes);
  // Devices are written in place and lose nothing: not refused.
  ok({"sort", "/dev/null", "-o", "/dev/null"});
}

// ---- a failure leaves the old file --------------------------------------------------------------

// The process's file size limit makes a write fail with EFBIG part-way, as a full disk would.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = std::signal(SIGXFSZ, SIG_IGN);  // inherited: the write fails instead of killing
    rlimit small = saved_;
    small.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &small);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  void (*previous_)(int) = SIG_DFL;
};

TEST_F(CliOutputs, SvgPlotThatCannotBeWrittenLeavesTheOldOne) {
  const std::string in = file("in.u8", random_bytes(5000, 6));
  const std::string plot = file("p.svg", "old plot");
  {
    const FileSizeLimit limit(1000);  // an SVG of 256 bars is far larger
    Result r = fails(1, {"count", in, "--plot", plot});
    EXPECT_NE(r.err.find("file too large"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'" + plot + "'"), std::string::npos) << r.err;
    r = fails(1, {"image", gray_image(), "--plot", plot});
    EXPECT_NE(r.err.find("file too large"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_all(plot), "old plot");
  expect_no_temporary_files();
  // The library's own SVG writer is the same writer.
  const std::string svg = levelhist::plot::render_svg(levelhist::plot::Chart{});
  {
    const FileSizeLimit limit(10);
    try {
      levelhist::plot::write_svg_file(plot, svg);
      ADD_FAILURE() << "a write beyond the size limit succeeded";
    } catch (const levelhist::Error& e) {
      EXPECT_NE(std::string(e.what()).find("file too large"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_all(plot), "old plot");
  levelhist::plot::write_svg_file(plot, svg);
  EXPECT_EQ(read_all(plot), svg);
  expect_no_temporary_files();
}

TEST_F(CliOutputs, NoFileWrittenWhenStandardOutputFails) {
  if (!is_char_device("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const std::string in = file("in.u8", random_bytes(500, 7));
  const std::string gray = gray_image();
  RunSpec full;
  full.stdout_file = "/dev/full";
  auto fails_on_full = [&](const std::vector<std::string>& args) {
    const Result r = run_cli(args, full);
    EXPECT_EQ(r.status, 1) << describe(args, r);
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << describe(args, r);
  };
  fails_on_full({"threshold", gray, "-o", path("q.pgm"), "--otsu"});
  fails_on_full({"count", in, "--plot", path("c.svg")});
  fails_on_full({"image", gray, "--plot", path("i.svg")});
  EXPECT_EQ(entries(), (std::set<std::string>{"g.pgm", "in.u8"}));
  // An existing output keeps its old content.
  std::ofstream(path("q.pgm")) << "old";
  fails_on_full({"threshold", gray, "-o", path("q.pgm"), "--value", "3"});
  EXPECT_EQ(read_all(path("q.pgm")), "old");
  // A reader that goes away is no failure: exit 0, and the file is written.
  RunSpec gone;
  gone.close_stdout_early = true;
  const Result r = run_cli({"threshold", gray, "-o", path("q.pgm"), "--value", "3"}, gone);
  EXPECT_EQ(r.status, 0) << describe({}, r);
  EXPECT_EQ(read_all(path("q.pgm")).rfind("P5", 0), 0u);
  expect_no_temporary_files();
}

// ---- signals --------------------------------------------------------------------------------------

// Starts the CLI without waiting; its standard streams go to /dev/null, and
// SIGINT, SIGTERM and SIGHUP have their default actions in it (as in a shell's
// foreground job), whatever the test runner left them at.
pid_t start_cli(const std::vector<std::string>& args) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd : {0, 1, 2}) posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<std::string> argv_strings = {cli_path()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  EXPECT_EQ(rc, 0) << std::strerror(rc);
  return rc == 0 ? pid : -1;
}

TEST_F(CliOutputs, SignalWhileSortWritesLeavesNoTemporaryFile) {
  // 128 MiB: writing and flushing the output takes long enough to catch.
  std::string bytes(std::size_t{128} << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  const std::string in = file("big.u8", bytes);
  bytes = std::string();
  fs::create_directory(path("out"));
  const std::string target = file("out/sorted.raw", "old");
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(strsignal(signal_number));
    const int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    ASSERT_GE(watch, 0);
    ASSERT_GE(::inotify_add_watch(watch, path("out").c_str(), IN_CREATE), 0);
    const pid_t pid = start_cli({"sort", in, "-o", target});
    ASSERT_GT(pid, 0);
    // Wait for the temporary file to be created, then stop levelhist right there.
    bool created = false;
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!created && std::chrono::steady_clock::now() < deadline) {
      pollfd p{watch, POLLIN, 0};
      ::poll(&p, 1, 100);
      alignas(inotify_event) char buf[4096];
      for (ssize_t n; (n = ::read(watch, buf, sizeof buf)) > 0;)
        for (char* e = buf; e < buf + n; e += sizeof(inotify_event) + reinterpret_cast<inotify_event*>(e)->len) {
          const auto* event = reinterpret_cast<inotify_event*>(e);
          if (event->len && std::string(event->name).find(".tmp-") != std::string::npos) created = true;
        }
      if (created) ::kill(pid, SIGSTOP);
      else if (::waitpid(pid, &status, WNOHANG) == pid) break;  // ended before writing
    }
    ::close(watch);
    ASSERT_TRUE(created) << "no temporary file appeared";
    bool temp_present = false;
    for (const std::string& name : entries(path("out"))) temp_present |= name.find(".tmp-") != std::string::npos;
    EXPECT_TRUE(temp_present) << "levelhist was stopped after its rename: the signal came too late";
    ::kill(pid, signal_number);
    ::kill(pid, SIGCONT);
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << "exited with " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), signal_number);
    }
    EXPECT_EQ(entries(path("out")), std::set<std::string>{"sorted.raw"});
    EXPECT_EQ(read_all(target), "old");
  }
}

}  // namespace
}  // namespace cli_test
