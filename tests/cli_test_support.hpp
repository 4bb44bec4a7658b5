// What the CLI end-to-end tests share: running the built `levelhist` binary
// (<build>/levelhist next to this test binary's directory, or $LEVELHIST_CLI)
// with posix_spawn, feeding stdin and capturing stdout, stderr and the exit
// status; strict JSON parsing (nlohmann) and a CSV reader for checking outputs; reference
// histograms computed independently; a fixture with a temporary directory.
#pragma once
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <levelhist/levelhist.hpp>
#include <levelhist/text.hpp>


extern char** environ;

#include "lab.hpp"
#include "levelhist/strategy.hpp"

namespace cli_test {

// The strategies the levelhist command has: the library's, not the lab's
// (which the test process installed, but the CLI never links).
inline std::vector<const levelhist::Strategy*> library_strategies() {
  std::vector<const levelhist::Strategy*> out;
  const auto lab = levelhist::lab::strategies();
  for (const levelhist::Strategy* s : levelhist::all_strategies())
    if (std::find(lab.begin(), lab.end(), s) == lab.end()) out.push_back(s);
  return out;
}


namespace fs = std::filesystem;
// ---- running the CLI ------------------------------------------------------------

inline std::string cli_path() {
  if (const char* p = std::getenv("LEVELHIST_CLI")) return p;
  // This binary is <build>/tests/levelhist_tests; the CLI is <build>/levelhist.
  fs::path self = fs::read_symlink("/proc/self/exe");
  return (self.parent_path().parent_path() / "levelhist").string();
}

struct Result {
  int status = -1;     // exit status, or -1 when killed by a signal
  int signal = 0;      // the signal that killed it
  std::string out, err;
  double seconds = 0;
};

struct RunSpec {
  std::optional<std::string> stdin_data;  // fed through a pipe
  std::size_t stdin_write_bytes = 0;      // stdin_data in writes of at most this many bytes (0: as many as fit)
  std::optional<std::string> stdin_file;  // opened as fd 0
  int stdin_fd = -1;                      // given as fd 0 (keeps its offset)
  std::optional<std::string> stdout_file; // opened as fd 1 instead of capturing
  bool close_stdout_early = false;        // the reader goes away at once
  std::vector<std::string> env;           // NAME=value added to (or replacing in) the environment
  std::string program;                    // another program of the build (default: the CLI)
};

inline void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

inline Result run_cli(const std::vector<std::string>& args, const RunSpec& spec = {}) {
  signal(SIGPIPE, SIG_IGN);  // a child that stops reading stdin must not kill us
  Result r;
  auto start = std::chrono::steady_clock::now();
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (spec.stdin_data) {
    EXPECT_EQ(pipe2(in_pipe, O_CLOEXEC), 0);
  }
  if (!spec.stdout_file) {
    EXPECT_EQ(pipe2(out_pipe, O_CLOEXEC), 0);
  }
  EXPECT_EQ(pipe2(err_pipe, O_CLOEXEC), 0);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (spec.stdin_data) posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  else if (spec.stdin_file) posix_spawn_file_actions_addopen(&fa, 0, spec.stdin_file->c_str(), O_RDONLY, 0);
  else if (spec.stdin_fd >= 0) posix_spawn_file_actions_adddup2(&fa, spec.stdin_fd, 0);
  else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (spec.stdout_file) posix_spawn_file_actions_addopen(&fa, 1, spec.stdout_file->c_str(), O_WRONLY, 0);
  else posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    bool replaced = false;
    for (const std::string& x : spec.env)
      if (s.substr(0, s.find('=') + 1) == x.substr(0, x.find('=') + 1)) replaced = true;
    // Keep the test environment deterministic: no inherited testing knobs.
    if (!replaced && s.rfind("LEVELHIST_", 0) != 0 && s.rfind("COLUMNS=", 0) != 0) env_strings.push_back(s);
  }
  for (const std::string& x : spec.env) env_strings.push_back(x);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string path = spec.program.empty() ? cli_path() : spec.program;
  std::vector<std::string> argv_strings = {path};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  EXPECT_EQ(rc, 0) << "cannot run " << path << ": " << std::strerror(rc);
  if (in_pipe[0] >= 0) close(in_pipe[0]);
  if (out_pipe[1] >= 0) close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    for (int fd : {in_pipe[1], out_pipe[0], err_pipe[0]})
      if (fd >= 0) close(fd);
    return r;
  }
  if (spec.close_stdout_early && out_pipe[0] >= 0) {
    close(out_pipe[0]);
    out_pipe[0] = -1;
  }

  std::size_t fed = 0;
  int in_fd = in_pipe[1];
  if (in_fd >= 0) {
    set_nonblock(in_fd);
    if (spec.stdin_data->empty()) close(in_fd), in_fd = -1;
  }
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  while (in_fd >= 0 || out_fd >= 0 || err_fd >= 0) {
    std::vector<pollfd> fds;
    if (in_fd >= 0) fds.push_back({in_fd, POLLOUT, 0});
    if (out_fd >= 0) fds.push_back({out_fd, POLLIN, 0});
    if (err_fd >= 0) fds.push_back({err_fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 60000) <= 0) {
      ADD_FAILURE() << "the CLI hangs";
      kill(pid, SIGKILL);
      break;
    }
    for (const pollfd& p : fds) {
      if (!p.revents) continue;
      if (p.fd == in_fd) {
        std::size_t piece = spec.stdin_data->size() - fed;
        if (spec.stdin_write_bytes) piece = std::min(piece, spec.stdin_write_bytes);
        ssize_t n = write(in_fd, spec.stdin_data->data() + fed, piece);
        if (n > 0) fed += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN) || fed == spec.stdin_data->size()) close(in_fd), in_fd = -1;
      } else {
        char buf[65536];
        ssize_t n = read(p.fd, buf, sizeof buf);
        if (n > 0) (p.fd == out_fd ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EAGAIN) {
          close(p.fd);
          (p.fd == out_fd ? out_fd : err_fd) = -1;
        }
      }
    }
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  if (WIFEXITED(ws)) r.status = WEXITSTATUS(ws);
  else if (WIFSIGNALED(ws)) r.signal = WTERMSIG(ws);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

inline std::string describe(const std::vector<std::string>& args, const Result& r) {
  std::string s = "levelhist";
  for (const auto& a : args) s += " '" + a + "'";
  return s + "\n  status " + std::to_string(r.status) + " signal " + std::to_string(r.signal) + "\n  stdout: " +
         r.out.substr(0, 400) + "\n  stderr: " + r.err;
}

// A success: status 0, nothing on stderr.
inline Result ok(const std::vector<std::string>& args, const RunSpec& spec = {}) {
  Result r = run_cli(args, spec);
  EXPECT_EQ(r.status, 0) << describe(args, r);
  EXPECT_EQ(r.err, "") << describe(args, r);
  return r;
}

// A failure: the status, exactly one line "levelhist: <what>; <fix>" on stderr, nothing on stdout.
inline Result fails(int status, const std::vector<std::string>& args, const RunSpec& spec = {}) {
  Result r = run_cli(args, spec);
  EXPECT_EQ(r.status, status) << describe(args, r);
  EXPECT_EQ(r.out, "") << describe(args, r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(args, r);
  EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << describe(args, r);
  EXPECT_EQ(r.err.rfind("levelhist: ", 0), 0u) << describe(args, r);
  EXPECT_NE(r.err.find("; "), std::string::npos) << "no fix in the message: " << describe(args, r);
  return r;
}

// ---- JSON: nlohmann::json, the library the CLI writes its documents with -------------

using Json = nlohmann::ordered_json;

// Parses a document strictly: nlohmann rejects anything RFC 8259 does (and
// invalid UTF-8); a key twice in one object, which it would let pass (the
// last wins), is a failure too.
inline Json parse_json(const std::string& text) {
  std::vector<std::set<std::string>> keys;  // of the objects being parsed
  std::string duplicate;
  auto strict = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    else if (event == Json::parse_event_t::object_end) keys.pop_back();
    else if (event == Json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  try {
    Json j = Json::parse(text, strict);
    if (!duplicate.empty()) ADD_FAILURE() << "duplicate JSON key " << duplicate << "\n" << text.substr(0, 2000);
    return j;
  } catch (const Json::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << text.substr(0, 2000);
    return Json::object();
  }
}

// The elements of an array of counts: each must be a non-negative integer
// in the text (no fraction, no exponent), not just a number that converts.
inline std::vector<std::uint64_t> u64s(const Json& array) {
  std::vector<std::uint64_t> out;
  for (const Json& j : array) {
    EXPECT_TRUE(j.is_number_unsigned()) << j.dump();
    out.push_back(j.is_number_unsigned() ? j.get<std::uint64_t>() : 0);
  }
  return out;
}

inline std::vector<double> doubles(const Json& array) {
  std::vector<double> out;
  for (const Json& j : array) out.push_back(j.get<double>());
  return out;
}

// ---- CSV ---------------------------------------------------------------------

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> split(const std::string& line, char sep = ',') {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == sep) out.push_back(cur), cur.clear();
    else cur += c;
  }
  out.push_back(cur);
  return out;
}

// A parsed `bin,lower,upper,count` CSV: strict header, consecutive bins,
// contiguous edges, numbers that read back completely, then exactly the rows
// underflow (-inf to the first edge), overflow (the last edge to inf) and nan.
struct CsvHistogram {
  std::vector<double> edges;
  std::vector<std::uint64_t> counts;
  std::uint64_t underflow = 0, overflow = 0, nan = 0;
};

inline double strict_double(const std::string& s) {
  std::size_t pos = 0;
  double v = std::stod(s, &pos);
  EXPECT_EQ(pos, s.size()) << s;
  return v;
}

inline std::uint64_t strict_count(const std::string& s) {
  EXPECT_TRUE(!s.empty() && s.find_first_not_of("0123456789") == std::string::npos) << s;
  return s.empty() ? 0 : std::stoull(s);
}

inline CsvHistogram parse_csv(const std::string& text) {
  CsvHistogram h;
  auto lines = lines_of(text);
  EXPECT_GE(lines.size(), 4u);
  if (lines.size() < 4) return h;
  EXPECT_EQ(lines[0], "bin,lower,upper,count");
  const std::size_t bins_end = lines.size() - 3;
  for (std::size_t i = 1; i < bins_end; ++i) {
    auto f = split(lines[i]);
    EXPECT_EQ(f.size(), 4u) << lines[i];
    if (f.size() != 4) continue;
    EXPECT_EQ(f[0], std::to_string(i - 1));
    double lo = strict_double(f[1]), hi = strict_double(f[2]);
    if (h.edges.empty()) h.edges.push_back(lo);
    EXPECT_EQ(h.edges.back(), lo) << "edges not contiguous at " << lines[i];
    EXPECT_LT(lo, hi);
    h.edges.push_back(hi);
    h.counts.push_back(strict_count(f[3]));
  }
  const auto under = split(lines[bins_end]), over = split(lines[bins_end + 1]), nan = split(lines[bins_end + 2]);
  EXPECT_EQ(under.size(), 4u);
  EXPECT_EQ(over.size(), 4u);
  EXPECT_EQ(nan.size(), 4u);
  if (under.size() == 4 && over.size() == 4 && nan.size() == 4 && !h.edges.empty()) {
    EXPECT_EQ(under[0] + "," + under[1], "underflow,-inf");
    EXPECT_EQ(strict_double(under[2]), h.edges.front());
    EXPECT_EQ(over[0], "overflow");
    EXPECT_EQ(strict_double(over[1]), h.edges.back());
    EXPECT_EQ(over[2], "inf");
    EXPECT_EQ(nan[0] + "," + nan[1] + "," + nan[2], "nan,,");
    h.underflow = strict_count(under[3]);
    h.overflow = strict_count(over[3]);
    h.nan = strict_count(nan[3]);
  }
  EXPECT_EQ(text.back(), '\n');
  return h;
}

// ---- reference histograms, computed here -----------------------------------------

struct Reference {
  std::vector<std::uint64_t> counts;
  std::uint64_t underflow = 0, overflow = 0, nan = 0, total = 0;
};

// Bins by the given edges: [e_i, e_{i+1}), the last one closed when `closed`.
inline Reference reference(const std::vector<double>& values, const std::vector<double>& edges, bool closed) {
  Reference r;
  r.counts.assign(edges.size() - 1, 0);
  for (double x : values) {
    ++r.total;
    if (std::isnan(x)) ++r.nan;
    else if (x < edges.front()) ++r.underflow;
    else if (x > edges.back() || (x == edges.back() && !closed)) ++r.overflow;
    else if (x == edges.back()) ++r.counts.back();
    else r.counts[static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), x) - edges.begin() - 1)]++;
  }
  return r;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

inline std::string letters_phrase() { return "programming massively parallel processors"; }

// ---- the fixture: a temporary directory per test ------------------------------------

class CliTest : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(cli_path())) << "the CLI is not built at " << cli_path();
    std::string tmpl = (fs::temp_directory_path() / "levelhist-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name, const std::string& bytes) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Random bytes with a deterministic seed.
inline std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

inline std::vector<std::uint64_t> byte_counts(const std::string& bytes) {
  std::map<unsigned, std::uint64_t> m;
  for (unsigned char c : bytes) ++m[c];
  std::vector<std::uint64_t> v(256, 0);
  for (auto [k, n] : m) v[k] = n;
  return v;
}
}  // namespace cli_test
