#include "options.hpp"

#include <algorithm>
#include <optional>

#include "../tools/args.hpp"
#include "levelhist/error.hpp"

namespace levelhist::bench {
namespace {

using cli::parse_count;  // a value out of range is an input error (exit 1), as for every command
using cli::quote;
using cli::usage_error;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// A finite number of seconds, above 0 (or at least 0 when zero_allowed).
double seconds_in(const std::string& option, const std::string& text, bool zero_allowed) {
  const double v = cli::parse_finite(option, text);
  if (zero_allowed ? v < 0 : v <= 0)
    cli::input_error(option + " " + quote(text) + " is " + (v < 0 ? "negative" : "zero"),
                     zero_allowed ? "give 0 or more seconds" : "give a positive number of seconds, e.g. 2");
  return v;
}

}  // namespace

std::string bench_help() {
  return R"(usage: levelhist bench [options]
       levelhist bench --cpu [options]     the CPU benchmark (see levelhist bench --cpu --help)
       levelhist bench --general [options] the general histograms: u16, f32, explicit edges, pixels,
                                           weights, u32 keys (see levelhist bench --general --help)
       levelhist bench --sort [options]    counting sort and sparse histograms against std::sort
                                           and CUB's radix sort (see levelhist bench --sort --help)
       levelhist bench --shapes [options]  batches, N-d histograms and deterministic weighted sums
                                           (see levelhist bench --shapes --help)

Times every CUDA strategy of the registry that can count the case, side by side
with a streaming read of the same buffer (the limit) and CUB (the baseline),
after checking each strategy's result against the CPU. Throughput is GB/s of
input bytes; u8 samples, 256 bins.

sections (all by default, in this order):
  sizes      GB/s against n = 2^13 .. 2^30 for zeros, uniform and linear (i % 256) bytes
  distinct   GB/s against the number of distinct random values 1, 2, 4, .. 256 at n = 2^28
  images     coins.pgm, camera.pgm and a smooth synthetic image tiled from 256^2 to 4096^2
  latency    microseconds per call, back to back, u8 uniform: 4 KiB, 64 KiB, 1-32 MiB, 256 MiB
  auto       for one case of each problem class (sample type, bins, n): the strategy `auto`
             picks next to the measured best, and auto's speed as a share of the best's
  headline   1 GiB: uniform, zeros, 1/2/4/16 distinct, linear, coins.pgm tiled; % of the
             limit, ratio to cub, and each strategy's level ratio (slowest / fastest)

options:
  --section LIST      sizes,distinct,images,latency,auto,headline or all
  --auto              the same as --section auto
  --strategies LIST   only these CUDA strategies (cub is always kept as the baseline)
  --quick             fewer points (every 4th size, every other count and side), 10 reps,
                      --case-seconds 2, --section-seconds 3: about a minute and a half
  --reps N            timed samples per case, median reported (default 15; quick 10)
  --case-seconds S    time one strategy on one case for at most about S seconds: a
                      strategy so slow that 10 samples would take longer gets fewer
                      (at least 3), marked * in the output (default 10; quick 2)
  --section-seconds S once one strategy has spent S seconds in a section, its slow
                      cases in the rest of that section get 3 samples, marked *; fast
                      cases keep all theirs (default 8; quick 3). This is what keeps
                      the run short when global-atomic kernels run at 1-4 GB/s.
  --device N          the CUDA device (default 0)
  --format F          markdown (default), csv or json on stdout
  --out DIR           also write DIR/bench.md, DIR/bench.csv and DIR/bench.json
  --plot DIR          write DIR/sizes.svg, DIR/distinct.svg and DIR/images.svg
  --data DIR          where coins.pgm and camera.pgm are (default: found next to the
                      executable or in the source tree)
  --seed N            seed of the random inputs
  --quiet             no progress lines on stderr
  -h, --help          this text

Timing: CUDA events around back-to-back calls of cuda::histogram (device pointers,
a workspace allocated and zeroed once per strategy), warm-up first; inputs that
are smaller than 3x the L2 cache rotate among copies so the cache cannot serve
them. Exit status 1 when any strategy's result differs from the CPU's.
)";
}

BenchOptions parse_bench_options(const std::vector<std::string>& args) {
  BenchOptions o;
  std::optional<int> reps;
  std::optional<double> case_seconds;
  std::optional<double> section_seconds;
  const std::string help_fix = "see 'levelhist bench --help'";
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    bool has_inline_value = false;
    if (arg.rfind("--", 0) == 0) {
      if (std::size_t eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline_value = true;
      }
    }
    auto next_value = [&]() -> std::string {
      if (has_inline_value) return value;
      if (i + 1 >= args.size()) usage_error(arg + " needs a value", help_fix);
      return args[++i];
    };
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--auto") {
      o.sections = {"auto"};
    } else if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg == "--section" || arg == "--sections") {
      std::vector<std::string> wanted = split_list(next_value());
      if (wanted.empty()) usage_error("--section needs a list", "give e.g. --section sizes,latency");
      o.sections.clear();
      for (const std::string& name : kSectionNames)  // keep the canonical order, whatever order was typed
        if (std::find(wanted.begin(), wanted.end(), name) != wanted.end() ||
            std::find(wanted.begin(), wanted.end(), "all") != wanted.end())
          o.sections.push_back(name);
      for (const std::string& w : wanted)
        if (w != "all" && std::find(kSectionNames.begin(), kSectionNames.end(), w) == kSectionNames.end())
          usage_error("unknown section " + quote(w),
                      "the sections are sizes, distinct, images, latency, auto, headline and all");
    } else if (arg == "--strategies" || arg == "--strategy") {
      o.strategies = split_list(next_value());
      if (o.strategies.empty()) usage_error("--strategies needs a list of names", "see 'levelhist list'");
    } else if (arg == "--reps") {
      reps = static_cast<int>(parse_count(arg, next_value(), 1, kMaxReps));
    } else if (arg == "--case-seconds") {
      case_seconds = seconds_in(arg, next_value(), false);
    } else if (arg == "--section-seconds") {
      section_seconds = seconds_in(arg, next_value(), true);
    } else if (arg == "--device") {
      o.device = static_cast<int>(parse_count(arg, next_value(), 0, 1023));
    } else if (arg == "--format") {
      std::string f = next_value();
      if (f == "markdown" || f == "md") o.format = OutputFormat::markdown;
      else if (f == "csv") o.format = OutputFormat::csv;
      else if (f == "json") o.format = OutputFormat::json;
      else usage_error("unknown format " + quote(f), "use --format markdown, csv or json");
    } else if (arg == "--plot" || arg == "--out" || arg == "--data") {
      std::string dir = next_value();
      if (dir.empty()) usage_error(arg + " is empty", "give a directory");
      (arg == "--plot" ? o.plot_dir : arg == "--out" ? o.out_dir : o.data_dir) = dir;
    } else if (arg == "--seed") {
      o.seed = parse_count(arg, next_value(), 0, ~std::uint64_t{0});
    } else {
      usage_error("unknown option " + quote(args[i]) + " for 'bench'", help_fix);
    }
  }
  o.reps = reps.value_or(o.quick ? 10 : 15);
  o.case_seconds = case_seconds.value_or(o.quick ? 2.0 : 10.0);
  o.section_seconds = section_seconds.value_or(o.quick ? 3.0 : 8.0);
  return o;
}

std::string link_help() {
  return R"(usage: levelhist bench --link [options]
Host data to the GPU at link speed, in one run: the copy rates (pinned,
pageable, registered; cudaHostRegister's own cost), staging by several
threads, the file and pipe read rates, then levelhist counting u8 samples
(256 bins): the CPU alone, the GPU alone from pinned, pageable and registered
memory and from a file (FileSource), both together (the automatic plan), and
the levelhist CLI on a file and on a pipe, each with its ratio to its limit.
Every result is checked against the CPU reference before it is timed. Without
a GPU only the CPU rows run. The data is random bytes, in memory and in a
page-cached file in /dev/shm (or $TMPDIR).
options:
  --mib N             the data, in MiB (default 1024), 1 to 65536
  --reps N            timed runs per row, the median printed (default 5), 1 to 1000
  --chunks-kib LIST   staging chunk sizes for the pageable sweep, in KiB
                      (default 4096,16384,65536), each 64 to 1048576
  --devices all|LIST  also the rows of several GPUs: device-resident counts
                      one at a time and all at once, host-resident counts
                      with the device list against the copies of all at once,
                      and adding 2^24-bin partial histograms from 1..N devices
  --cli PATH          the levelhist program (default: levelhist next to levelhist-bench)
  --no-cli            leave out the CLI rows
  --devices-only      with --devices: only the rows of several GPUs
  -h, --help          this help
)";
}

std::vector<std::string> take_name_list(std::vector<std::string>& args, const std::string& option,
                                        const std::vector<std::string>& known, const std::string& help_fix) {
  std::vector<std::string> names = known, rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool inline_value = a.rfind(option + "=", 0) == 0;
    if (a != option && !inline_value) {
      rest.push_back(a);
      continue;
    }
    if (!inline_value && i + 1 >= args.size()) usage_error(option + " needs a list", help_fix);
    names = split_list(inline_value ? a.substr(option.size() + 1) : args[++i]);
    if (names.empty()) usage_error(option + " needs a list", help_fix);
    for (const std::string& name : names)
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string all;
        for (const std::string& k : known) all += (all.empty() ? "" : ", ") + k;
        usage_error("unknown name " + quote(name) + " in " + option + " (the names: " + all + ")", help_fix);
      }
  }
  args = rest;
  return names;
}

LinkOptions parse_link_options(const std::vector<std::string>& args) {
  LinkOptions o;
  const std::string help_fix = "see 'levelhist bench --link --help'";
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    bool has_inline_value = false;
    if (arg.rfind("--", 0) == 0)
      if (std::size_t eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline_value = true;
      }
    auto next_value = [&]() -> std::string {
      if (has_inline_value) return value;
      if (i + 1 >= args.size()) usage_error(arg + " needs a value", help_fix);
      return args[++i];
    };
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--link") {
    } else if (arg == "--mib") {
      o.bytes = static_cast<std::size_t>(parse_count("--mib", next_value(), 1, 65536)) << 20;
    } else if (arg == "--reps") {
      o.reps = static_cast<int>(parse_count("--reps", next_value(), 1, kMaxReps));
    } else if (arg == "--chunks-kib") {
      const std::string text = next_value();
      o.chunks.clear();
      for (const std::string& item : split_list(text))
        o.chunks.push_back(static_cast<std::size_t>(parse_count("--chunks-kib", item, 64, 1 << 20)) << 10);
      if (o.chunks.empty()) usage_error("--chunks-kib needs a list", "give e.g. --chunks-kib 4096,16384");
    } else if (arg == "--devices") {
      const std::string text = next_value();
      o.multi = true;
      o.devices.clear();
      if (text != "all")
        for (const std::string& item : split_list(text))
          o.devices.push_back(static_cast<int>(parse_count("--devices", item, 0, 1023)));
    } else if (arg == "--cli") {
      o.cli = next_value();
      if (o.cli.empty()) usage_error("--cli is empty", "give the levelhist program's path");
    } else if (arg == "--no-cli") {
      o.skip_cli = true;
    } else if (arg == "--devices-only") {
      o.devices_only = true;
    } else {
      usage_error("unknown option " + quote(args[i]) + " for 'bench --link'", help_fix);
    }
  }
  if (o.devices_only && !o.multi)
    usage_error("--devices-only needs --devices", "add --devices all (or a list of device indices)");
  return o;
}

}  // namespace levelhist::bench
