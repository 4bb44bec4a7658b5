// `levelhist sort`: counting sort of a raw binary file of 8- or 16-bit samples
// (levelhist::counting_sort, sort.hpp) into a new file.
//
// The output goes through the CLI's one writer (cli.hpp write_output): a file
// is written next to its final name under a temporary name and renamed over it
// only when complete, so a failed or interrupted sort never leaves a
// half-written file (nor, on SIGINT, SIGTERM or SIGHUP, the temporary one); a
// device or FIFO is written in place, `-o -` is standard output; and the input
// is never the output (refused).
#include <string>
#include <vector>

#include "cli.hpp"
#include "input.hpp"
#include "npy.hpp"
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
    "  -o, --output OUT  the sorted file (required; never FILE itself; '-' for standard\n"
    "                    output; a device or FIFO is written in place, a link followed)\n"
    "  --backend B       auto (default: CUDA when a GPU is present), cpu or cuda\n"
    "  --threads N       CPU worker threads; 0 (default) = all cores\n"
    "  --no-progress     never show the progress bar (shown on a terminal for\n"
    "                    inputs over 256 MiB)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 ok, 1 bad input (a size that is not a whole number of samples,\n"
    "an unreadable FILE, an unwritable OUT), 2 bad usage (OUT is FILE, say).\n"
    "Example: levelhist sort --type u16 depth.raw -o depth.sorted\n";

int run_sort(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("sort", args, {{"--type", true}, {"-o", true}, {"--output", true}, {"--backend", true},
                                           {"--threads", true}, {"--no-progress", false}});
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
  const std::string& in = p.operands[0];
  const std::string out = output_path(p, "sort", in);
  const RunOptions run = parse_run_options(p);

  InputSet inputs({in}, sample_size(type), std::string(to_string(type)));
  inputs.validate();
  // The output is raw samples: a .npy input's header would be sorted with its
  // data, and its shape lost.
  if (npy::has_magic(inputs.peek(0, npy::kPreambleSize)))
    input_error(inputs[0].label + " is a NumPy .npy file, and sort takes raw samples",
                "write the raw samples with a.tofile('x.raw'), or count the file with 'levelhist count'");
  std::vector<unsigned char> data;
  if (inputs.all_known()) data.reserve(inputs.known_bytes());
  Progress progress(inputs.known_bytes(), inputs.all_known(), !p.has("--no-progress"));
  inputs.scan(0, [&](const unsigned char* d, std::uint64_t n) { data.insert(data.end(), d, d + n * sample_size(type)); },
              &progress);
  progress.finish();
  std::vector<unsigned char> sorted(data.size());
  const std::uint64_t n = data.size() / sample_size(type);
  call_with_fix([&] { counting_sort(type, data.data(), sorted.data(), n, run.library); });
  write_output(out, std::span<const std::uint8_t>(sorted.data(), sorted.size()), "-o");
  return 0;
}

}  // namespace levelhist::cli
