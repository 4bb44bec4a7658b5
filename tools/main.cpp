// levelhist: the command-line tool. Commands live in cli_*.cpp; this file
// dispatches, prints help and version, and turns every error into one line on
// stderr with exit status 2 (usage) or 1 (anything else).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "cli.hpp"

namespace levelhist::cli {
namespace {

const char* const kMainHelp =
    "Usage: levelhist COMMAND [OPTION]... [FILE|-]...\n"
    "Fast level histograms of binary data on CPUs and NVIDIA GPUs.\n"
    "\n"
    "Commands:\n"
    "  count      histogram of binary samples (u8 ... f64) in files or standard input\n"
    "  text       the 7-bin letter histogram of PMPP chapter 9 (a-d, e-h, ..., y-z)\n"
    "  sort       counting sort of a file of 8- or 16-bit samples into a new file\n"
    "  list       the strategies of this build and whether they run here\n"
    "  image      histogram and statistics of every channel of an image (PGM, PPM, PNG,\n"
    "             JPEG, TIFF)\n"
    "  threshold  binarize a gray image at a value or Otsu's threshold\n"
    "  equalize   histogram-equalize a gray image (--clahe: adaptive, 16-bit too)\n"
    "  joint      joint histogram and mutual information of two gray images\n"
    "  bench      the benchmark (GPU; --cpu for the CPU one)\n"
    "  help       'levelhist help COMMAND' shows a command's options\n"
    "\n"
    "Options:\n"
    "  -h, --help      show this help\n"
    "  -V, --version   show the version\n"
    "\n"
    "Exit status: 0 success, 1 bad input (files, bins, data, backend), 2 bad usage.\n"
    "\n"
    "Examples:\n"
    "  levelhist count image.raw\n"
    "  levelhist count --type f32 --bins 50 --range auto --format json data.f32\n"
    "  levelhist text --fold-case book.txt\n"
    "  levelhist threshold coins.pgm -o coins-bw.pgm --otsu\n"
    "  levelhist sort --type u16 depth.raw -o depth.sorted\n"
    "  levelhist count --type u64 --sparse --format csv ids.u64\n";

const char* const kBenchHelp =
    "Usage: levelhist bench [ARGUMENT]...\n"
    "Run the benchmark program, levelhist-bench (installed beside levelhist): the GPU\n"
    "benchmark, or the CPU one with --cpu. Every ARGUMENT goes to it unchanged;\n"
    "'levelhist bench --help' shows what it takes. See docs/BENCHMARKS.md.\n";

// What the errors for an unknown command suggest.
const char* const kCommandList =
    "the commands are count, text, list, image, threshold, equalize, joint, sort and bench";

// One line: a message must never break the one-line rule. Names in messages
// are already quote()d; this catches text from elsewhere (a system or libpng
// message) and escapes its control characters the way quote() does.
std::string one_line(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (byte < 0x20 || byte == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", byte);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

void print_error(const std::string& message) {
  std::string line = "levelhist: " + one_line(message) + "\n";
  // stdout may be buffered by nobody but us: every output goes through write_stdout at the end.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

int dispatch(const std::vector<std::string>& args) {
  if (args.empty()) usage_error("no command given", "run 'levelhist --help' for the commands");
  const std::string& cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "-h" || cmd == "--help") {
    write_stdout(kMainHelp);
    return 0;
  }
  if (cmd == "--version" || cmd == "-V") {
    write_stdout(std::string("levelhist ") + version() + " (CUDA backend: " +
                 (built_with_cuda() ? "built" : "not built") + ")\n");
    return 0;
  }
  if (cmd == "help") {
    if (rest.empty()) {
      write_stdout(kMainHelp);
      return 0;
    }
    if (rest.size() > 1) usage_error("'help' takes one command name", "run e.g. 'levelhist help count'");
    const std::string& topic = rest[0];
    if (topic == "count") write_stdout(kCountHelp);
    else if (topic == "text") write_stdout(kTextHelp);
    else if (topic == "list") write_stdout(kListHelp);
    else if (topic == "sort") write_stdout(kSortHelp);
    else if (topic == "bench") write_stdout(kBenchHelp);
    else if (topic == "image") write_stdout(kImageHelp);
    else if (topic == "threshold") write_stdout(kThresholdHelp);
    else if (topic == "equalize") write_stdout(kEqualizeHelp);
    else if (topic == "joint") write_stdout(kJointHelp);
    else if (topic == "help" || topic == "--help" || topic == "-h") write_stdout(kMainHelp);
    else usage_error("no help for unknown command " + quote(topic), kCommandList);
    return 0;
  }
  if (cmd == "count") return run_count(rest);
  if (cmd == "text") return run_text(rest);
  if (cmd == "list") return run_list(rest);
  if (cmd == "sort") return run_sort(rest);
  if (cmd == "bench") return run_bench(rest);
  if (cmd == "image") return run_image(rest);
  if (cmd == "threshold") return run_threshold(rest);
  if (cmd == "equalize") return run_equalize(rest);
  if (cmd == "joint") return run_joint(rest);
  if (!cmd.empty() && cmd[0] == '-')
    usage_error("unknown option " + quote(cmd) + " before the command", "run 'levelhist --help'");
  usage_error("unknown command " + quote(cmd), std::string(kCommandList) + " (see 'levelhist --help')");
}

}  // namespace
}  // namespace levelhist::cli

int main(int argc, char** argv) {
  using namespace levelhist::cli;
  // A reader that goes away (levelhist count big | head -1) makes write() fail
  // with EPIPE instead of killing us; write_stdout reports it as BrokenPipe and
  // we stop quietly with status 0, as ripgrep does.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    return dispatch(args);
  } catch (const BrokenPipe&) {
    return 0;
  } catch (const levelhist::Error& e) {
    print_error(e.what());
    return e.kind() == levelhist::ErrorKind::usage ? 2 : 1;
  } catch (const std::bad_alloc&) {
    print_error("out of memory; use fewer bins or threads, or free some memory");
    return 1;
  } catch (const std::system_error& e) {
    print_error(std::string(e.what()) + "; check the system's limits (threads, memory) or use --threads N");
    return 1;
  } catch (const std::exception& e) {
    print_error(std::string("unexpected error: ") + e.what() + "; please report this bug");
    return 1;
  } catch (...) {
    print_error("unexpected error of an unknown kind; please report this bug");
    return 1;
  }
}
