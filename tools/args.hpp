// levelhist CLI: command-line parsing and strict number parsing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "levelhist/error.hpp"

namespace levelhist::cli {

// Every CLI error is a levelhist::Error of message "<what was wrong>" and fix
// "<how to fix it>"; main() prints its what() as one line "levelhist:
// <message>; <fix>" and exits with 2 for ErrorKind::usage, 1 for everything else.
[[noreturn]] void usage_error(const std::string& what, const std::string& fix);
[[noreturn]] void input_error(const std::string& what, const std::string& fix);

// `text` in single quotes, the one way every message shows a file name or a
// value the user gave: a quote and a backslash are escaped with a backslash
// (\', \\), control characters as \n, \t, \r or \xNN, and every byte that is
// not part of valid UTF-8 (or is a C1 control, U+0080..U+009F) as \xNN. So a
// name never breaks the one-line rule, never sends a terminal a control
// sequence, and two different names never look the same.
std::string quote(std::string_view text);
// A name in an output header (`==> NAME <==`, the first line of `image`, plot
// titles and legends): as it is when quote() would escape nothing in it,
// else quote(text).
std::string display_name(std::string_view text);

// The options a command accepts.
struct OptionSpec {
  std::string_view name;  // "--bins"
  bool takes_value;
};

// The result of parsing one command's arguments. Options may appear anywhere
// among the operands, as `--name value` or `--name=value`; `--` ends the
// options; a lone `-` is an operand (standard input). A repeated option keeps
// its last value.
struct ParsedArgs {
  bool help = false;                                        // -h / --help seen
  std::vector<std::pair<std::string, std::string>> options;  // in order of appearance
  std::vector<std::string> operands;

  bool has(std::string_view name) const;
  // The last value given for `name`, if any.
  std::optional<std::string> value(std::string_view name) const;
};

// Throws a usage error for an unknown option, a value on a flag, or a missing
// value. `command` names the command in messages ("count").
ParsedArgs parse_args(std::string_view command, const std::vector<std::string>& args,
                      const std::vector<OptionSpec>& specs);

// Strict numbers (std::from_chars): the whole text must be the number; no
// sign on counts, no "nan"/"inf", no trailing characters. Each throws an input
// error naming the option (`subject`, e.g. "--range '0:x': HI") and the text.
std::uint64_t parse_count(std::string_view option, std::string_view text, std::uint64_t min, std::uint64_t max);
double parse_finite(std::string_view subject, std::string_view text);

// --range: "auto" or "LO:HI" with finite LO < HI.
struct RangeArg {
  bool automatic = false;
  double lower = 0.0;
  double upper = 0.0;
};
RangeArg parse_range(std::string_view text);

// --edges: "E0,E1,...": at least two finite, strictly increasing numbers.
std::vector<double> parse_edges(std::string_view text);

// --active: "C0,C1,...", distinct channel indices below `channels`, as a bit
// mask (bit c: channel c). Throws input errors naming the bad item.
unsigned parse_channel_list(std::string_view text, unsigned channels);

// A positive integer from the environment (a testing knob), or `fallback`
// when unset. Throws a usage error when set but not a positive integer.
std::uint64_t env_bytes(const char* name, std::uint64_t fallback);

}  // namespace levelhist::cli
