// `levelhist bench`: hands over to the benchmark program, levelhist-bench. The
// CLI does not contain the benchmark (nor the methods of the literature it
// times): it runs the program installed beside it, or the one on PATH.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

namespace levelhist::cli {
namespace {

constexpr const char* kBenchProgram = "levelhist-bench";

// The directory of the running executable ("" when /proc cannot tell).
std::string own_directory() {
  std::vector<char> path(PATH_MAX + 1, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), PATH_MAX);
  if (n <= 0) return {};
  std::string self(path.data(), static_cast<std::size_t>(n));
  const std::size_t slash = self.rfind('/');
  return slash == std::string::npos ? std::string() : self.substr(0, slash);
}

}  // namespace

int run_bench(const std::vector<std::string>& args) {
  std::vector<std::string> argv_strings;
  argv_strings.push_back(kBenchProgram);
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string dir = own_directory();
  if (!dir.empty()) {
    const std::string beside = dir + "/" + kBenchProgram;
    if (::access(beside.c_str(), X_OK) == 0) {
      ::execv(beside.c_str(), argv.data());
      input_error("cannot run " + quote(beside) + ": " + std::strerror(errno), "check that it is an executable");
    }
  }
  ::execvp(kBenchProgram, argv.data());
  const int err = errno;
  if (err == ENOENT)
    input_error(std::string("the benchmark program ") + kBenchProgram + " is not installed beside levelhist" +
                    (dir.empty() ? std::string() : " (in " + quote(dir) + ")") + " nor on PATH",
                "build it (cmake -DLEVELHIST_BENCH=ON) and install it beside levelhist");
  input_error(std::string("cannot run ") + kBenchProgram + ": " + std::strerror(err), "check its installation");
}

}  // namespace levelhist::cli
