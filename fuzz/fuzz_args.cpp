// libFuzzer target: the CLI's number and list parsers (tools/args.hpp) and
// parse_args with count's options. The first byte picks the parser, the
// second a parameter (parse_count's bounds, parse_channel_list's channel
// count), the rest is the text (for parse_args: the arguments, split on NUL).
// Besides crashes and sanitizer reports it checks what each parser promises:
// results in range, edges increasing, errors of one line with a fix.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "cli.hpp"
#include "fuzz_support.hpp"
#include "levelhist/binning.hpp"

using namespace levelhist;
using namespace levelhist::cli;

namespace {

struct Bounds {
  std::uint64_t min, max;
};
// The bounds the CLI passes (--bins, --threads, --channels, --value) and the widest.
constexpr Bounds kBounds[] = {
    {1, kMaxBins}, {0, 1024}, {1, 4}, {0, 65535}, {0, std::numeric_limits<std::uint64_t>::max()}};

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

void check_count(const std::string& text, const Bounds& b) {
  const std::uint64_t v = parse_count("--n", text, b.min, b.max);
  if (v < b.min || v > b.max) fuzz::finding("parse_count returned a value out of its bounds");
  // Plain decimal text without leading zeros reads back as itself.
  if (!all_digits(text)) fuzz::finding("parse_count accepted " + quote(text) + ", not a decimal number");
  if (text.size() > 1 && text[0] == '0') return;
  if (std::to_string(v) != text) fuzz::finding("parse_count read " + quote(text) + " as " + std::to_string(v));
}

void check_channels(const std::string& text, unsigned channels) {
  const unsigned mask = parse_channel_list(text, channels);
  if (mask == 0 || mask >> channels != 0)
    fuzz::finding("parse_channel_list returned mask " + std::to_string(mask) + " for " + std::to_string(channels) +
                  " channels");
}

void check_args(const std::vector<std::string>& args) {
  const std::vector<OptionSpec> specs = count_option_specs();
  const ParsedArgs p = parse_args("count", args, specs);
  for (const auto& [name, value] : p.options) {
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) fuzz::finding("parse_args accepted the unknown option " + quote(name));
    if (!spec->takes_value && !value.empty()) fuzz::finding("parse_args gave the flag " + quote(name) + " a value");
  }
  // The count target rebuilds argument lines this way: they must read the same.
  auto same = [](const std::string&, const std::string& v) { return v; };
  auto keep = [](const std::string& v) { return v; };
  const ParsedArgs again = parse_args("count", fuzz::rebuild_args(p, specs, same, keep), specs);
  if (again.help != p.help || again.options != p.options || again.operands != p.operands)
    fuzz::finding("a rebuilt argument line parses differently");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return -1;
  const unsigned parser = data[0] % 6, parameter = data[1];
  const std::string text(reinterpret_cast<const char*>(data) + 2, size - 2);
  try {
    switch (parser) {
      case 0: check_count(text, kBounds[parameter % std::size(kBounds)]); break;
      case 1:
        if (!std::isfinite(parse_finite("--x", text))) fuzz::finding("parse_finite returned a non-finite number");
        break;
      case 2: {
        const RangeArg r = parse_range(text);
        if (r.automatic != (text == "auto")) fuzz::finding("parse_range: auto for " + quote(text));
        if (!r.automatic && !(r.lower < r.upper && std::isfinite(r.upper - r.lower)))
          fuzz::finding("parse_range returned an empty, reversed or infinite range");
        break;
      }
      case 3: {
        const std::vector<double> edges = parse_edges(text);
        if (edges.size() < 2) fuzz::finding("parse_edges returned fewer than two edges");
        for (std::size_t i = 0; i < edges.size(); ++i)
          if (!std::isfinite(edges[i]) || (i > 0 && !(edges[i - 1] < edges[i])))
            fuzz::finding("parse_edges returned edges that are not finite and strictly increasing");
        break;
      }
      case 4: check_channels(text, 1 + parameter % 4); break;
      default: check_args(fuzz::split_on_nul(data + 2, size - 2)); break;
    }
  } catch (const Error& e) {
    // parse_args reports usage errors, the number and list parsers input errors.
    fuzz::check_error(e, parser == 5, parser != 5);
  }
  return 0;
}
