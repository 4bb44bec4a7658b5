// What the CLI end-to-end tests share: running the built `levelhist` binary
// (<build>/levelhist next to this test binary's directory, or $LEVELHIST_CLI)
// with posix_spawn, feeding stdin and capturing stdout, stderr and the exit
// status; a strict JSON parser and a CSV reader for checking outputs; reference
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
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
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
        ssize_t n = write(in_fd, spec.stdin_data->data() + fed, spec.stdin_data->size() - fed);
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

// ---- a minimal JSON parser (RFC 8259, strict) ----------------------------------------

struct Json;
using JsonObject = std::map<std::string, Json>;
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> v;
  std::string raw_number;  // the number's text, to check integers exactly

  bool is_object() const { return std::holds_alternative<JsonObject>(v); }
  bool is_array() const { return std::holds_alternative<JsonArray>(v); }
  bool is_number() const { return std::holds_alternative<double>(v); }
  bool is_string() const { return std::holds_alternative<std::string>(v); }
  const Json& operator[](const std::string& key) const {
    static const Json null_value{};
    const auto& o = std::get<JsonObject>(v);
    auto it = o.find(key);
    if (it == o.end()) {
      ADD_FAILURE() << "JSON has no key " << key;
      return null_value;
    }
    return it->second;
  }
  bool has(const std::string& key) const { return std::get<JsonObject>(v).count(key) > 0; }
  const JsonArray& array() const { return std::get<JsonArray>(v); }
  double number() const { return std::get<double>(v); }
  std::uint64_t u64() const {
    EXPECT_EQ(raw_number.find_first_not_of("0123456789"), std::string::npos) << raw_number;
    return std::stoull(raw_number);
  }
  const std::string& str() const { return std::get<std::string>(v); }
  bool boolean() const { return std::get<bool>(v); }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}
  Json parse() {
    Json j = value();
    ws();
    if (i_ != s_.size()) fail("trailing characters");
    return j;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error("invalid JSON at " + std::to_string(i_) + ": " + why);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool take(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected ") + c);
  }
  bool literal(const char* word) {
    std::size_t n = std::strlen(word);
    if (s_.compare(i_, n, word) == 0) return i_ += n, true;
    return false;
  }
  Json value() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    Json j;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      JsonObject o;
      if (!take('}')) {
        do {
          ws();
          std::string key = string();
          expect(':');
          if (o.count(key)) fail("duplicate key " + key);
          o[key] = value();
        } while (take(','));
        expect('}');
      }
      j.v = std::move(o);
    } else if (c == '[') {
      ++i_;
      JsonArray a;
      if (!take(']')) {
        do a.push_back(value());
        while (take(','));
        expect(']');
      }
      j.v = std::move(a);
    } else if (c == '"') {
      j.v = string();
    } else if (literal("true")) {
      j.v = true;
    } else if (literal("false")) {
      j.v = false;
    } else if (literal("null")) {
      j.v = nullptr;
    } else {
      std::size_t b = i_;
      if (i_ < s_.size() && s_[i_] == '-') ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("bad value");
      if (s_[i_] == '0') ++i_;
      else while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      if (i_ < s_.size() && s_[i_] == '.') {
        ++i_;
        if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("bad fraction");
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        ++i_;
        if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
        if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("bad exponent");
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      }
      j.raw_number = s_.substr(b, i_ - b);
      j.v = std::strtod(j.raw_number.c_str(), nullptr);
    }
    return j;
  }
  std::string string() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') break;
      if (c < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (i_ >= s_.size()) fail("bad escape");
      char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) fail("bad \\u");
          unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
          if (cp < 0x80) out += static_cast<char>(cp);
          else if (cp < 0x800) out += static_cast<char>(0xc0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3f));
          else
            out += static_cast<char>(0xe0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f)),
                out += static_cast<char>(0x80 | (cp & 0x3f));
          break;
        }
        default: fail("bad escape");
      }
    }
    return out;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

inline Json parse_json(const std::string& text) {
  try {
    return JsonParser(text).parse();
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << text.substr(0, 2000);
    Json empty;
    empty.v = JsonObject{};
    return empty;
  }
}

inline std::vector<std::uint64_t> u64s(const Json& array) {
  std::vector<std::uint64_t> out;
  for (const Json& j : array.array()) out.push_back(j.u64());
  return out;
}

inline std::vector<double> doubles(const Json& array) {
  std::vector<double> out;
  for (const Json& j : array.array()) out.push_back(j.number());
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
// contiguous edges, numbers that read back completely.
struct CsvHistogram {
  std::vector<double> edges;
  std::vector<std::uint64_t> counts;
};

inline double strict_double(const std::string& s) {
  std::size_t pos = 0;
  double v = std::stod(s, &pos);
  EXPECT_EQ(pos, s.size()) << s;
  return v;
}

inline CsvHistogram parse_csv(const std::string& text) {
  CsvHistogram h;
  auto lines = lines_of(text);
  EXPECT_FALSE(lines.empty());
  if (lines.empty()) return h;
  EXPECT_EQ(lines[0], "bin,lower,upper,count");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i]);
    EXPECT_EQ(f.size(), 4u) << lines[i];
    if (f.size() != 4) continue;
    EXPECT_EQ(f[0], std::to_string(i - 1));
    double lo = strict_double(f[1]), hi = strict_double(f[2]);
    if (h.edges.empty()) h.edges.push_back(lo);
    EXPECT_EQ(h.edges.back(), lo) << "edges not contiguous at " << lines[i];
    EXPECT_LT(lo, hi);
    h.edges.push_back(hi);
    EXPECT_EQ(f[3].find_first_not_of("0123456789"), std::string::npos) << lines[i];
    h.counts.push_back(std::stoull(f[3]));
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
