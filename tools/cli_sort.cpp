// `levelhist sort`: counting sort of a raw binary file of 8- or 16-bit samples
// (levelhist::counting_sort, sort.hpp) into a new file.
//
// The output is written next to its final name under a temporary name and
// renamed over it only when complete, so a failed or interrupted sort never
// leaves a half-written file, and the input is never the output (refused).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "input.hpp"
#include "levelhist/sort.hpp"

namespace levelhist::cli {

const char* const kSortHelp =
    "Usage: levelhist sort [OPTION]... FILE -o OUT\n"
    "Sort the binary samples (little-endian) of FILE, or standard input when FILE is '-',\n"
    "into OUT by counting sort: count every value, then write each value as often as it\n"
    "occurs, in ascending order (signed types in signed order). OUT equals what std::sort\n"
    "gives; it is written under a temporary name and renamed when complete.\n"
    "\n"
    "  --type T          u8 (default), i8, u16 or i16\n"
    "  -o, --output OUT  the sorted file (required; never FILE itself)\n"
    "  --backend B       auto (default: CUDA when a GPU is present), cpu or cuda\n"
    "  --threads N       CPU worker threads; 0 (default) = all cores\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 ok, 1 bad input (a size that is not a whole number of samples,\n"
    "an unreadable FILE, an unwritable OUT), 2 bad usage (OUT is FILE, say).\n"
    "Example: levelhist sort --type u16 depth.raw -o depth.sorted\n";

namespace {

std::string errno_message(int error) { return std::strerror(error); }

// True when `a` and `b` name the same file: the same path, or (both existing)
// the same inode through links or another spelling.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec) && !ec) return true;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec) && !ec;
}

// Writes `bytes` to `path` through a temporary file in the same directory and
// a rename, with the permissions a new file gets (0666 less the umask).
void write_atomically(const std::string& path, const unsigned char* bytes, std::size_t size) {
  std::string temp = path + ".levelhist-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0)
    input_error("cannot create " + quote(temp) + " next to the output: " + errno_message(errno),
                "check that the output's directory exists and is writable");
  auto fail = [&](const std::string& what) {
    const int error = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    input_error("cannot write " + quote(path) + ": " + what + ": " + errno_message(error),
                "check the free space and permissions of the output's directory");
  };
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail("fchmod");
  for (std::size_t done = 0; done < size;) {
    const ssize_t w = ::write(fd, bytes + done, std::min<std::size_t>(size - done, std::size_t{1} << 30));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("write");
    done += static_cast<std::size_t>(w);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    errno = error;
    input_error("cannot write " + quote(path) + ": close: " + errno_message(error),
                "check the free space of the output's directory");
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    input_error("cannot rename the sorted data to " + quote(path) + ": " + errno_message(error),
                "check that the output path is a writable file name");
  }
}

}  // namespace

int run_sort(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("sort", args, {{"--type", true}, {"-o", true}, {"--output", true}, {"--backend", true},
                                           {"--threads", true}});
  if (p.help) {
    write_stdout(kSortHelp);
    return 0;
  }
  SampleType type = SampleType::u8;
  if (auto t = p.value("--type")) {
    auto parsed = parse_sample_type(*t);
    if (!parsed || !counting_sort_supports(*parsed))
      usage_error("sort takes u8, i8, u16 or i16 samples, not " + quote(*t),
                  "use --type u8, i8, u16 or i16 (levelhist count --sparse counts wider keys)");
    type = *parsed;
  }
  if (p.operands.size() != 1)
    usage_error(p.operands.empty() ? "sort needs an input FILE" : "sort takes one input FILE",
                "run e.g. 'levelhist sort --type u16 in.raw -o out.raw'");
  std::optional<std::string> out = p.value("--output");
  for (const auto& [name, value] : p.options)  // the last of -o / --output wins, as for any repeated option
    if (name == "-o" || name == "--output") out = value;
  if (!out || out->empty()) usage_error("sort needs an output file", "add -o OUT");
  const std::string& in = p.operands[0];
  if (in != "-" && same_file(in, *out))
    usage_error("the output " + quote(*out) + " is the input", "give -o a new file name: sort never overwrites its input");
  const RunOptions run = parse_run_options(p);

  InputSet inputs({in}, sample_size(type), std::string(to_string(type)));
  inputs.validate();
  std::vector<unsigned char> data;
  if (inputs.all_known()) data.reserve(inputs.known_bytes());
  Progress progress(inputs.known_bytes(), inputs.all_known());
  inputs.scan(0, [&](const unsigned char* d, std::uint64_t n) { data.insert(data.end(), d, d + n * sample_size(type)); },
              &progress);
  progress.finish();
  std::vector<unsigned char> sorted(data.size());
  const std::uint64_t n = data.size() / sample_size(type);
  try {
    counting_sort(type, data.data(), sorted.data(), n, run.library);
  } catch (const Error& e) {
    const std::string msg = e.what();
    throw Error(e.kind(), msg.find("; ") == std::string::npos ? msg + "; try --backend cpu" : msg);
  }
  write_atomically(*out, sorted.data(), sorted.size());
  return 0;
}

}  // namespace levelhist::cli
