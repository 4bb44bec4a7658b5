// levelhist CLI: the commands and what they share.
#pragma once
#include <string>
#include <vector>

#include "args.hpp"
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
int run_sort(const std::vector<std::string>& args);

extern const char* const kCountHelp;
extern const char* const kTextHelp;
extern const char* const kListHelp;
extern const char* const kImageHelp;
extern const char* const kThresholdHelp;
extern const char* const kEqualizeHelp;
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

// The strategies that ran, in order of first use, joined by "+" (usually one).
struct StrategyLog {
  std::vector<std::string> names;
  void add(const Strategy& s);
  std::string joined() const;
};

// Adds samples to a histogram through levelhist::fill(), logging the strategy
// and turning a library error into a one-line CLI error with a fix.
void fill_checked(Histogram& hist, SampleType type, const void* data, std::uint64_t n, const Options& options,
                  StrategyLog& log);
// A library error as a CLI error: its kind kept, a fix added when it has none.
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
// Resolves (without counting) the strategy for a problem, so that a strategy
// that cannot take it fails before any input is read.
const Strategy& resolve_checked(const Problem& problem, const Options& options);

// Every bin edge (bins + 1 numbers) of a binning, as the CLI prints them.
std::vector<double> bin_edges(const Binning& b);

// True when a and b name the same file: the same path, the same path after
// resolving "." / ".." and links, or (both existing) the same inode.
bool same_file(const std::string& a, const std::string& b);
// Usage error (exit 2) when `output` is the input file (never overwritten);
// `option` names where the output came from (-o, --plot). Input "-" is stdin.
void refuse_overwriting_input(const std::string& input, const std::string& output, const std::string& option);
// The -o / --output of a command that writes one file: required, one of the
// two spellings, never the input.
std::string output_path(const ParsedArgs& p, const std::string& command, const std::string& input);

// The operands, or "-" (standard input) when there are none.
std::vector<std::string> input_operands(const ParsedArgs& args);

}  // namespace levelhist::cli
