#include "args.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "format.hpp"

namespace levelhist::cli {

void usage_error(const std::string& what, const std::string& fix) { throw Error(ErrorKind::usage, what, fix); }

void input_error(const std::string& what, const std::string& fix) { throw Error(ErrorKind::input, what, fix); }

std::string quote(std::string_view text) {
  std::string out = "'";
  auto escape_byte = [&out](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(text, i);
      const bool c1_control = len == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
      if (len > 0 && !c1_control) {
        out.append(text.substr(i, len));
        i += len;
      } else {
        const std::size_t bytes = len > 0 ? len : 1;
        for (std::size_t k = 0; k < bytes; ++k) escape_byte(static_cast<unsigned char>(text[i + k]));
        i += bytes;
      }
      continue;
    }
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else if (c == '\'') out += "\\'";
    else if (c < 0x20 || c == 0x7f) escape_byte(c);
    else out += static_cast<char>(c);
    ++i;
  }
  out += "'";
  return out;
}

std::string display_name(std::string_view text) {
  std::string quoted = quote(text);
  if (quoted.size() == text.size() + 2) return std::string(text);  // nothing escaped
  return quoted;
}

bool ParsedArgs::has(std::string_view name) const {
  for (const auto& [n, v] : options)
    if (n == name) return true;
  return false;
}

std::optional<std::string> ParsedArgs::value(std::string_view name) const {
  std::optional<std::string> result;
  for (const auto& [n, v] : options)
    if (n == name) result = v;
  return result;
}

ParsedArgs parse_args(std::string_view command, const std::vector<std::string>& args,
                      const std::vector<OptionSpec>& specs) {
  ParsedArgs out;
  const std::string help_fix = "see 'levelhist " + std::string(command) + " --help'";
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg == "-" || arg.empty() || arg[0] != '-') {
      out.operands.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    std::string name = arg, value;
    bool inline_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) usage_error("unknown option " + quote(name) + " for '" + std::string(command) + "'", help_fix);
    if (!spec->takes_value) {
      if (inline_value) usage_error(std::string(spec->name) + " takes no value", "write just " + std::string(spec->name));
      out.options.emplace_back(name, "");
      continue;
    }
    if (!inline_value) {
      // A following "--something" is never a value: the value was forgotten.
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
        usage_error(std::string(spec->name) + " needs a value", help_fix);
      value = args[++i];
    }
    out.options.emplace_back(name, value);
  }
  return out;
}

std::uint64_t parse_count(std::string_view option, std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t v = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, v);
  const std::string shown = std::string(option) + " " + quote(text);
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (text.empty()) input_error(std::string(option) + " is empty", "give " + range);
  if (ec == std::errc::result_out_of_range) input_error(shown + " is too large", "give " + range);
  if (ec != std::errc() || ptr != last) {
    if (text[0] == '-') input_error(shown + " is negative", "give " + range);
    input_error(shown + " is not a whole number", "give " + range);
  }
  if (v < min) input_error(shown + " is too small", "give " + range);
  if (v > max) input_error(shown + " is too large", "give " + range);
  return v;
}

namespace {

// Why a text is not a finite double.
enum class NumberFault { none, empty, out_of_range, not_a_number, not_finite };

NumberFault read_finite(std::string_view text, double& v) {
  if (text.empty()) return NumberFault::empty;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // from_chars takes no leading '+'; accept one for convenience ("+1e3").
  if (*first == '+' && last - first > 1 && first[1] != '-' && first[1] != '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return NumberFault::out_of_range;
  if (ec != std::errc() || ptr != last) return NumberFault::not_a_number;
  if (!std::isfinite(v)) return NumberFault::not_finite;
  return NumberFault::none;
}

// `subject` names the number ("--range '0:x': HI"), `shown` is subject and
// the quoted text, `where` is appended to what was wrong (a place in a list).
[[noreturn]] void finite_error(NumberFault fault, const std::string& subject, const std::string& shown,
                               const std::string& where) {
  switch (fault) {
    case NumberFault::empty: input_error(subject + " is empty" + where, "give a finite decimal number");
    case NumberFault::out_of_range:
      input_error(shown + " is out of the range of double" + where, "give a finite number of magnitude below 1.8e308");
    case NumberFault::not_finite: input_error(shown + " is not finite" + where, "give a finite number (no nan or inf)");
    case NumberFault::none:
    case NumberFault::not_a_number: break;
  }
  input_error(shown + " is not a number" + where, "give a finite decimal number such as 0.5 or -1e3");
}

// Messages about one item of a long list quote only this much of it, and of
// the list around it, so that they stay one short line and cost nothing until
// an error is found (building one message per item made parsing quadratic).
constexpr std::size_t kItemShown = 16;
constexpr std::size_t kContextShown = 12;  // on each side of the item

// `text` cut to `max` characters, "..." marking the cut.
std::string clipped(std::string_view text, std::size_t max) {
  return text.size() <= max ? std::string(text) : std::string(text.substr(0, max)) + "...";
}

// The item text[begin, end) quoted, and where it stands: " (character K of
// the list: '...3,4,x,6,7...')", at most about 40 characters of the list.
std::string quoted_item(std::string_view text, std::size_t begin, std::size_t end) {
  return quote(clipped(text.substr(begin, end - begin), kItemShown));
}
std::string item_place(std::string_view text, std::size_t begin, std::size_t end) {
  const std::size_t from = begin > kContextShown ? begin - kContextShown : 0;
  const std::size_t to = std::min(text.size(), std::min(end, begin + kItemShown) + kContextShown);
  std::string around = from > 0 ? "..." : "";
  around += text.substr(from, to - from);
  if (to < text.size()) around += "...";
  return " (character " + std::to_string(begin + 1) + " of the list: " + quote(around) + ")";
}

// Calls item(index, begin, end) for each comma-separated item of `text`.
template <class F>
void for_each_item(std::string_view text, F&& item) {
  std::size_t start = 0;
  for (std::size_t index = 0;; ++index) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
    item(index, start, end);
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}

}  // namespace

double parse_finite(std::string_view subject, std::string_view text) {
  double v = 0.0;
  const NumberFault fault = read_finite(text, v);
  if (fault != NumberFault::none)
    finite_error(fault, std::string(subject), std::string(subject) + " " + quote(text), "");
  return v;
}

RangeArg parse_range(std::string_view text) {
  RangeArg r;
  if (text == "auto") {
    r.automatic = true;
    return r;
  }
  auto colon = text.find(':');
  if (colon == std::string_view::npos)
    input_error("--range " + quote(text) + " is not LO:HI or auto", "write e.g. --range 0:256 or --range auto");
  if (text.find(':', colon + 1) != std::string_view::npos)
    input_error("--range " + quote(text) + " has more than one ':'", "write e.g. --range 0:256 or --range -1.5:1.5");
  const std::string subject = "--range " + quote(text) + ":";
  r.lower = parse_finite(subject + " LO", text.substr(0, colon));
  r.upper = parse_finite(subject + " HI", text.substr(colon + 1));
  if (r.lower == r.upper)
    input_error("--range " + quote(text) + " is empty (LO equals HI)", "give LO < HI");
  if (r.lower > r.upper)
    input_error("--range " + quote(text) + " is reversed (LO > HI)", "give LO < HI, e.g. --range " +
                                                                         format_number(r.upper) + ":" +
                                                                         format_number(r.lower));
  if (!std::isfinite(r.upper - r.lower))
    input_error("--range " + quote(text) + " is too wide for double arithmetic", "narrow it");
  return r;
}

std::vector<double> parse_edges(std::string_view text) {
  std::vector<double> edges;
  if (text.empty()) input_error("--edges is empty", "give at least two increasing numbers, e.g. --edges 0,10,100");
  for_each_item(text, [&](std::size_t index, std::size_t begin, std::size_t end) {
    auto subject = [&] { return "--edges: edge " + std::to_string(index); };
    if (begin == end)
      input_error(subject() + " is empty" + item_place(text, begin, end), "separate the numbers by single commas");
    double v = 0.0;
    const NumberFault fault = read_finite(text.substr(begin, end - begin), v);
    if (fault != NumberFault::none)
      finite_error(fault, subject(), subject() + " " + quoted_item(text, begin, end), item_place(text, begin, end));
    edges.push_back(v);
  });
  if (edges.size() < 2)
    input_error("--edges " + quote(clipped(text, kItemShown)) + " has only one edge",
                "give at least two edges (one bin has two)");
  for (std::size_t i = 1; i < edges.size(); ++i) {
    if (edges[i] == edges[i - 1])
      input_error("--edges: edge " + std::to_string(i) + " (" + format_number(edges[i]) + ") equals edge " +
                      std::to_string(i - 1),
                  "make the edges strictly increasing");
    if (edges[i] < edges[i - 1])
      input_error("--edges: edge " + std::to_string(i) + " (" + format_number(edges[i]) + ") is below edge " +
                      std::to_string(i - 1) + " (" + format_number(edges[i - 1]) + ")",
                  "make the edges strictly increasing");
  }
  return edges;
}

unsigned parse_channel_list(std::string_view text, unsigned channels) {
  const std::string range = "give channel numbers from 0 to " + std::to_string(channels - 1) + ", e.g. --active 0,1,2";
  if (text.empty()) input_error("--active is empty", range);
  unsigned mask = 0;
  for_each_item(text, [&](std::size_t index, std::size_t begin, std::size_t end) {
    const std::string subject = "--active: item " + std::to_string(index);
    const std::string place = item_place(text, begin, end);
    if (begin == end) input_error(subject + " is empty" + place, "separate the channels by single commas");
    const std::string_view item = text.substr(begin, end - begin);
    unsigned c = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), c);
    if (ec != std::errc() || ptr != item.data() + item.size() || c >= channels)
      input_error(subject + " " + quoted_item(text, begin, end) + " is not a channel number from 0 to " +
                      std::to_string(channels - 1) + place,
                  range);
    if (mask >> c & 1u) input_error(subject + " names channel " + std::to_string(c) + " again" + place, range);
    mask |= 1u << c;
  });
  return mask;
}

std::uint64_t env_bytes(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v) return fallback;
  std::string_view text(v);
  std::uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || n == 0)
    usage_error("the environment variable " + std::string(name) + "=" + quote(text) + " is not a positive integer",
                "unset it or give a byte count");
  return n;
}

}  // namespace levelhist::cli
