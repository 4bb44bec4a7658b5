// What the fuzz targets share: how a finding is reported, the one-line rule
// every levelhist::Error message must keep, and argument lines from bytes.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "args.hpp"
#include "levelhist/error.hpp"

namespace fuzz {

// A finding that is not a crash by itself (a broken invariant): abort, so that
// libFuzzer saves the input like any other crash.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "levelhist fuzz finding: %s\n", what.c_str());
  std::abort();
}

// An expected failure must still be a proper error: of the expected kind(s)
// and one line "<what was wrong>; <how to fix it>" (file names and option
// values come quoted, control characters escaped). `unsupported_allowed`:
// the argument line chose a strategy or backend, which may refuse the problem.
inline void check_error(const levelhist::Error& e, bool usage_allowed, bool input_allowed,
                        bool unsupported_allowed = false) {
  const std::string msg = e.what();
  if (e.kind() == levelhist::ErrorKind::usage && !usage_allowed) finding("unexpected usage error: " + msg);
  if (e.kind() == levelhist::ErrorKind::input && !input_allowed) finding("unexpected input error: " + msg);
  if (e.kind() == levelhist::ErrorKind::unsupported && !unsupported_allowed)
    finding("unexpected unsupported error: " + msg);
  if (e.kind() != levelhist::ErrorKind::usage && e.kind() != levelhist::ErrorKind::input &&
      e.kind() != levelhist::ErrorKind::unsupported)
    finding("error of an unexpected kind: " + msg);
  if (msg.find("; ") == std::string::npos) finding("error message without '; <fix>': " + msg);
  for (unsigned char c : msg)
    if (c == '\n' || c == '\r') finding("error message of more than one line: " + levelhist::cli::quote(msg));
}

// The arguments of a command line from fuzz bytes: NUL separates them (so
// "a\0\0b" is "a", "", "b"); no bytes, no arguments.
inline std::vector<std::string> split_on_nul(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  if (size == 0) return args;
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  args.push_back(std::move(cur));
  return args;
}

// A command line that parse_args reads as `p` again, every option spelled
// --name=value (or a bare flag) and the operands after "--", each option
// value passed through `value_of(name, value)` and each operand through
// `operand_of(operand)`.
inline std::vector<std::string> rebuild_args(
    const levelhist::cli::ParsedArgs& p, const std::vector<levelhist::cli::OptionSpec>& specs,
    const std::function<std::string(const std::string&, const std::string&)>& value_of,
    const std::function<std::string(const std::string&)>& operand_of) {
  std::vector<std::string> out;
  if (p.help) out.push_back("--help");
  for (const auto& [name, value] : p.options) {
    bool takes_value = false;
    for (const auto& s : specs)
      if (s.name == name) takes_value = s.takes_value;
    out.push_back(takes_value ? name + "=" + value_of(name, value) : name);
  }
  out.push_back("--");
  for (const std::string& operand : p.operands) out.push_back(operand_of(operand));
  return out;
}

}  // namespace fuzz
