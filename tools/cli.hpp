// levelhist CLI: the commands and what they share.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "image/file_io.hpp"
#include "format.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::cli {

// Each command returns the exit status or throws levelhist::Error (see args.hpp).
int run_count(const std::vector<std::string>& args);
int run_text(const std::vector<std::string>& args);
int run_list(const std::vector<std::string>& args);
int run_image(const std::vector<std::string>& args);
int run_threshold(const std::vector<std::string>& args);
int run_equalize(const std::vector<std::string>& args);
int run_joint(const std::vector<std::string>& args);
int run_sort(const std::vector<std::string>& args);
int run_bench(const std::vector<std::string>& args);  // hands over to levelhist-bench

extern const char* const kCountHelp;
extern const char* const kTextHelp;
extern const char* const kListHelp;
extern const char* const kImageHelp;
extern const char* const kThresholdHelp;
extern const char* const kEqualizeHelp;
extern const char* const kJointHelp;
extern const char* const kSortHelp;

// --format, --backend, --strategy and --threads, as count and text take them.
struct RunOptions {
  Format format = Format::table;
  Options library;  // strategy, backend, threads
};
// The options every counting command accepts.
std::vector<OptionSpec> run_option_specs();
// Everything `count` accepts: run_option_specs() and count's own.
std::vector<OptionSpec> count_option_specs();
// Usage checks first (unknown format, backend or strategy; a strategy on the
// wrong backend), then values (--threads), then whether the backend can run
// here. Throws the matching error.
RunOptions parse_run_options(const ParsedArgs& args);
// --backend auto with no strategy or device list named becomes the CPU: what
// count and the image commands read (files, pipes, one image) is counted by
// the CPU in less time than a CUDA context takes to start (a 4096 x 4096
// image on the H200 machine: 0.04-0.31 s a command on the CPU, 0.21-0.52 s
// with the GPU; docs/CLI.md, "Backends").
void count_on_cpu_under_auto(RunOptions& run);
// --devices (count): "all" (every CUDA device of the machine, none without a
// GPU) or a list of distinct device indices "0,2" below `device_count`;
// anything else is an input error naming the bad item.
std::vector<int> parse_device_list(std::string_view text, int device_count);

// The strategies that ran, in order of first use, joined by "+" (usually one).
struct StrategyLog {
  std::vector<std::string> names;
  void add(const Strategy& s);
  std::string joined() const;
};

// A library error as a CLI error: its kind kept, the fix in the CLI's terms
// (its flags) where the error's subject has one, else the library's fix.
[[noreturn]] void rethrow_with_fix(const Error& e);
// Runs a library call `f`, reporting its errors as rethrow_with_fix does.
template <class F>
decltype(auto) call_with_fix(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    rethrow_with_fix(e);
  }
}
// The plan for a request, made before any input is read, so that a strategy
// or backend that cannot take it fails first; errors as rethrow_with_fix.
Plan make_plan(const Request& request, const Options& options);

// The binning that --bins, --range LO:HI, --edges and --numpy give for
// samples of `type` (count's rules; not --range auto). Throws the CLI's errors.
Binning binning_of_options(SampleType type, const ParsedArgs& p);

// Every bin edge (bins + 1 numbers) of a binning, as the CLI prints them.
std::vector<double> bin_edges(const Binning& b);

// A library error whose message starts with `name` + ": " (file_io's, the
// image codecs'), rethrown with that name quoted as every CLI message shows
// names (quote()), and a fix added when it has none.
[[noreturn]] void rethrow_naming(const Error& e, const std::string& name);
// Runs a library call on the file `name`, reporting its errors as rethrow_naming does.
template <class F>
decltype(auto) call_naming(const std::string& name, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    rethrow_naming(e, name);
  }
}

// True when a and b name the same file: the same path, the same path after
// resolving "." / ".." and links, or (both existing) the same inode.
bool same_file(const std::string& a, const std::string& b);
// Usage error (exit 2) when `output` is the input file (never overwritten);
// `option` names where the output came from (-o, --plot). Input "-" is
// standard input: refused when it is redirected from that file. An output that
// is a device, FIFO or socket (written in place, replacing nothing) and "-"
// (standard output) are never refused.
void refuse_overwriting_input(const std::string& input, const std::string& output, const std::string& option);
// The -o / --output of a command that writes one file: required, one of the
// two spellings, never the input.
std::string output_path(const ParsedArgs& p, const std::string& command, const std::string& input);

// ---- outputs: every file a command writes (-o, --plot) goes through the one
// writer of core/file_io.hpp (devices and FIFOs in place, links followed,
// everything else a temporary file renamed over the target) ----

// Stages `bytes` for the output `path` that `option` named: "-" is standard
// output. The data is written, but a replaced file only appears on commit, so
// a command writes its report to standard output in between and a failure
// there leaves the file as it was (write_stdout_then_commit). When
// `command_prints` (the command's report goes to standard output too), an
// output that is standard output is a usage error: the two would mix.
detail::StagedOutput stage_output(const std::string& path, std::span<const std::uint8_t> bytes,
                                  const std::string& option, bool command_prints);
// Makes a staged output's new content visible (errors with the name quoted).
void commit_output(detail::StagedOutput& staged);
// Writes `report` to standard output, then commits `staged`: when standard
// output fails (a full disk), the output file stays as it was. A reader that
// went away is no failure: the file is committed and levelhist stops quietly.
void write_stdout_then_commit(std::string_view report, detail::StagedOutput& staged);
// True when `path` is standard output: "-", /dev/stdout, /dev/fd/1 or a link
// to one (cli_image's threshold then prints its report on standard error).
bool names_standard_output(const std::string& path);
// stage_output + commit_output, for a command that prints nothing else.
void write_output(const std::string& path, std::span<const std::uint8_t> bytes, const std::string& option);

// The operands, or "-" (standard input) when there are none.
std::vector<std::string> input_operands(const ParsedArgs& args);

}  // namespace levelhist::cli
