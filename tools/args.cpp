#include "args.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "format.hpp"

namespace levelhist::cli {

void usage_error(const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::usage, what + "; " + fix);
}

void input_error(const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::input, what + "; " + fix);
}

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

double parse_finite(std::string_view subject, std::string_view text) {
  const std::string shown = std::string(subject) + " " + quote(text);
  if (text.empty()) input_error(std::string(subject) + " is empty", "give a finite decimal number");
  double v = 0.0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // from_chars takes no leading '+'; accept one for convenience ("+1e3").
  if (*first == '+' && last - first > 1 && first[1] != '-' && first[1] != '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range)
    input_error(shown + " is out of the range of double", "give a finite number of magnitude below 1.8e308");
  if (ec != std::errc() || ptr != last)
    input_error(shown + " is not a number", "give a finite decimal number such as 0.5 or -1e3");
  if (!std::isfinite(v)) input_error(shown + " is not finite", "give a finite number (no nan or inf)");
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
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty())
      input_error("--edges " + quote(text) + " has an empty item (edge " + std::to_string(edges.size()) + ")",
                  "separate the numbers by single commas");
    edges.push_back(parse_finite("--edges " + quote(text) + ": edge " + std::to_string(edges.size()), item));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (edges.size() < 2)
    input_error("--edges " + quote(text) + " has only one edge", "give at least two edges (one bin has two)");
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
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) input_error("--active " + quote(text) + " has an empty item", "separate the channels by single commas");
    const auto c = static_cast<unsigned>(parse_count("--active", item, 0, channels - 1));
    if (mask >> c & 1u) input_error("--active " + quote(text) + " names channel " + std::to_string(c) + " twice", range);
    mask |= 1u << c;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
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
