// libFuzzer target: the whole `levelhist count` argument line, through
// run_count, the code the levelhist binary runs. The fuzz input is the
// argument list, split on NUL bytes; it is parsed with count's options and
// rebuilt so that no path in it is ever opened or written:
//   - every operand becomes one of three fixed input files of a temporary
//     directory (96 bytes, empty, 7 bytes), "-" stays standard input, which is
//     the 96-byte file again (rewound before every run);
//   - --weights FILE becomes one of two fixed weight files ("-" stays, a usage error);
//   - --plot OUT becomes <temporary directory>/out/plot<the extension of OUT>.
// Standard output goes to a temporary file. An Error (usage or input, or
// unsupported where the line names a strategy or backend; one line with a
// fix) is an expected outcome; a crash, another exception, a sanitizer
// report, a timeout or libFuzzer's memory limit is a finding, and so is
// output left behind by a run that failed (stdout or plot).
//
// Argument lines that ask for work in proportion to a number in them are
// skipped: --bins above 65536 (up to 2^28 bins is a valid request that takes
// gigabytes and seconds) and more than 8 operands (one histogram per file with
// --per-file).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_plot.hpp"
#include "fuzz_support.hpp"

using namespace levelhist;
using namespace levelhist::cli;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxBinsPerRun = 65536;
constexpr std::size_t kMaxOperands = 8;

struct Sandbox {
  fs::path dir, out_dir, stdout_path;
  std::vector<std::string> inputs, weights;

  Sandbox() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/levelhist-fuzz-count-XXXXXX";
    if (!::mkdtemp(pattern.data())) fuzz::finding("cannot make a temporary directory");
    dir = pattern;
    out_dir = dir / "out";
    fs::create_directory(out_dir);
    // 96 bytes: whole samples of every type and of 2, 3 and 4 channels; with a
    // NaN and an infinity as f32 and plain values as f64.
    std::string data(96, '\0');
    for (int i = 0; i < 96; ++i) data[i] = static_cast<char>((i * 37 + 11) & 0xff);
    const float nan_inf[2] = {__builtin_nanf(""), __builtin_inff()};
    std::memcpy(data.data(), nan_inf, sizeof nan_inf);
    const double plain[2] = {1.5, -2.25};
    std::memcpy(data.data() + 16, plain, sizeof plain);
    inputs = {write("data.bin", data), write("empty.bin", ""), write("odd.bin", data.substr(0, 7))};
    // One weight per u8 sample of data.bin as f32 (384 bytes) and as f64.
    std::string w32(96 * 4, '\0'), w64(96 * 8, '\0');
    for (int i = 0; i < 96; ++i) {
      const float f = i == 5 ? __builtin_nanf("") : 0.25f * static_cast<float>(i);
      const double d = 0.5 * i - 3;
      std::memcpy(w32.data() + 4 * i, &f, 4);
      std::memcpy(w64.data() + 8 * i, &d, 8);
    }
    weights = {write("w.f32", w32), write("w.f64", w64)};
    // The empty file is read() rather than mapped: in chunks of 40 bytes
    // instead of 16 MiB (which ASan takes 30 ms to allocate), and so with
    // samples carried over from one chunk to the next.
    ::setenv("LEVELHIST_CHUNK_BYTES", "40", 1);
    // Standard input: the data file; standard output: a file we inspect.
    const int in = ::open(inputs[0].c_str(), O_RDONLY | O_CLOEXEC);
    stdout_path = dir / "stdout";
    const int out = ::open(stdout_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (in < 0 || out < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0)
      fuzz::finding("cannot redirect standard input and output");
    ::close(in);
    ::close(out);
  }
  ~Sandbox() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  std::string write(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir / name;
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
      fuzz::finding("cannot write " + p.string());
    ::close(fd);
    return p.string();
  }

  // Before every run: standard input rewound, standard output and out/ empty.
  void reset() const {
    ::lseek(STDIN_FILENO, 0, SEEK_SET);
    if (::ftruncate(STDOUT_FILENO, 0) != 0 || ::lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
      fuzz::finding("cannot empty the standard output file");
    for (const auto& entry : fs::directory_iterator(out_dir)) fs::remove_all(entry.path());
  }
  std::uint64_t stdout_bytes() const { return fs::file_size(stdout_path); }
  std::size_t out_files() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(out_dir)) ++n;
    return n;
  }
};

const Sandbox& sandbox() {
  static const Sandbox box;
  return box;
}

std::string pick(const std::vector<std::string>& files, const std::string& key) {
  return files[key.empty() ? 0 : static_cast<unsigned char>(key[0]) % files.size()];
}

// The extension of a --plot value (".svg", ".PNG", ".txt"), when it is a short
// alphanumeric one: the plot's format comes from it.
std::string plot_extension(const std::string& value) {
  const auto dot = value.rfind('.');
  if (dot == std::string::npos || value.size() - dot > 6) return "";
  for (std::size_t i = dot + 1; i < value.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(value[i]))) return "";
  return value.substr(dot);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Sandbox& box = sandbox();
  const std::vector<OptionSpec> specs = count_option_specs();
  const std::vector<std::string> fuzzed = fuzz::split_on_nul(data, size);
  ParsedArgs p;
  try {
    p = parse_args("count", fuzzed, specs);
  } catch (const Error& e) {
    // run_count parses first and would stop with this same error.
    fuzz::check_error(e, true, false);
    return 0;
  }
  if (p.operands.size() > kMaxOperands) return -1;
  if (auto bins = p.value("--bins")) {
    std::uint64_t n = 0;
    const auto [ptr, ec] = std::from_chars(bins->data(), bins->data() + bins->size(), n);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && n > kMaxBinsPerRun)) return -1;
  }
  auto value_of = [&](const std::string& name, const std::string& value) -> std::string {
    if (name == "--weights") return value == "-" ? value : pick(box.weights, value);
    if (name == kPlotOption) return (box.out_dir / ("plot" + plot_extension(value))).string();
    return value;
  };
  auto operand_of = [&](const std::string& operand) { return operand == "-" ? operand : pick(box.inputs, operand); };
  const std::vector<std::string> args = fuzz::rebuild_args(p, specs, value_of, operand_of);

  box.reset();
  try {
    if (run_count(args) != 0) fuzz::finding("run_count returned a status other than 0 without an error");
  } catch (const Error& e) {
    // A strategy or backend named on the line may refuse the problem
    // (`--strategy cpu_parallel --weights W`: one line, exit 1); auto never may.
    fuzz::check_error(e, true, true, p.value("--strategy").has_value() || p.value("--backend").has_value());
    if (box.stdout_bytes() != 0) fuzz::finding(std::string("output written before the error: ") + e.what());
    if (box.out_files() != 0) fuzz::finding(std::string("a plot left behind by a failed run: ") + e.what());
    return 0;
  }
  if (box.stdout_bytes() == 0) fuzz::finding("a run that succeeded printed nothing");
  if (box.out_files() != (p.value(kPlotOption) && !p.help ? 1u : 0u))
    fuzz::finding("a run that succeeded left " + std::to_string(box.out_files()) + " files for the plot");
  return 0;
}
