// File names in messages and output headers: one quoting rule for every
// command (tools/args.hpp quote()). A name with a newline, a tab, a quote and a
// byte that is not UTF-8 must show as one unambiguous, escaped line.
#include "cli_test_support.hpp"
#include "image_test_support.hpp"
#include "svg_check.hpp"

namespace cli_test {
namespace {

// The awkward part of every name, and how the rule writes it (by hand, not by quote()).
const std::string kAwkward = "we'i\tr\nd\xff";
const std::string kAwkwardQuoted = "we\\'i\\tr\\nd\\xff";

class CliNames : public CliTest {
 protected:
  // 'DIR/<awkward><suffix>' as messages must show it.
  std::string quoted(const std::string& suffix) const {
    return std::string("'") + dir_.string() + "/" + kAwkwardQuoted + suffix + "'";
  }
  std::string awkward(const std::string& suffix) const { return path(kAwkward + suffix); }
};

bool valid_utf8_without_controls(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f) return false;
      ++i;
      continue;
    }
    const std::size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += len;
  }
  return true;
}

TEST_F(CliNames, EveryCommandQuotesAMissingInputTheSameWay) {
  const std::string out = path("out.pgm");
  const std::vector<std::vector<std::string>> cases = {
      {"count", awkward(".u8")},
      {"count", "--range", "auto", awkward(".u8")},
      {"text", awkward(".u8")},
      {"sort", awkward(".u8"), "-o", path("sorted")},
      {"image", awkward(".u8")},
      {"threshold", awkward(".u8"), "-o", out, "--value", "3"},
      {"equalize", awkward(".u8"), "-o", out},
      {"bench", "--cpu", "--file", awkward(".u8"), "--dir", dir_.string()},
  };
  for (const auto& args : cases) {
    const Result r = fails(1, args);
    EXPECT_NE(r.err.find(quoted(".u8")), std::string::npos) << describe(args, r);
  }
}

TEST_F(CliNames, MalformedImageAndUnwritableOutputsAreQuoted) {
  const std::string bad = file(kAwkward + ".pgm", "P5 3 5 255\n\x01\x02");
  for (const std::string cmd : {"image", "equalize"}) {
    std::vector<std::string> args = {cmd, bad};
    if (cmd == "equalize") args.insert(args.end(), {"-o", path("e.pgm")});
    const Result r = fails(1, args);
    EXPECT_EQ(r.err.rfind("levelhist: " + quoted(".pgm") + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  }
  // Outputs into a directory that does not exist: the writer's message, quoted.
  fs::create_directory(path(kAwkward));
  const std::string input = file("in.u8", "abc");
  const std::string gray = file("g.pgm", image_test::pnm_file(image_test::pattern(3, 5, 1, 8, 255), false));
  const std::string missing = kAwkward + "/no/x";
  auto expect_quoted = [&](const std::vector<std::string>& args, const std::string& suffix) {
    const Result r = fails(1, args);
    EXPECT_NE(r.err.find(std::string("'") + dir_.string() + "/" + kAwkwardQuoted + "/no/x" + suffix + "'"), std::string::npos)
        << describe(args, r);
    EXPECT_NE(r.err.find("no such file or directory"), std::string::npos) << describe(args, r);
  };
  expect_quoted({"sort", input, "-o", path(missing)}, "");
  expect_quoted({"count", input, "--plot", path(missing + ".svg")}, ".svg");
  expect_quoted({"image", gray, "--plot", path(missing + ".svg")}, ".svg");
  expect_quoted({"threshold", gray, "-o", path(missing + ".pgm"), "--value", "3"}, ".pgm");
  expect_quoted({"equalize", gray, "-o", path(missing + ".pgm")}, ".pgm");
  // Usage errors quote what the user typed, too.
  Result r = fails(2, {"count", "--type", "u\n8'", input});
  EXPECT_NE(r.err.find("'u\\n8\\''"), std::string::npos) << r.err;
  r = fails(2, {"threshold", gray, "-o", awkward(".gif"), "--value", "3"});
  EXPECT_NE(r.err.find(quoted(".gif")), std::string::npos) << r.err;
}

TEST_F(CliNames, OutputHeadersShowAwkwardNamesQuotedAndPlainNamesAsTheyAre) {
  const std::string weird = file(kAwkward + ".pgm", image_test::pnm_file(image_test::pattern(4, 3, 1, 8, 255), false));
  const std::string plain = file("plain é.pgm", image_test::pnm_file(image_test::pattern(4, 3, 1, 8, 255), false));
  std::string table = ok({"image", weird}).out;
  EXPECT_EQ(table.rfind(quoted(".pgm") + ": 4 x 3, 8-bit gray", 0), 0u) << table;
  table = ok({"image", plain}).out;
  EXPECT_EQ(table.rfind(plain + ": 4 x 3, 8-bit gray", 0), 0u) << table;  // valid UTF-8 stays as it is
  table = ok({"count", "--per-file", weird, plain}).out;
  EXPECT_NE(table.find("==> " + quoted(".pgm") + " <==\n"), std::string::npos) << table;
  EXPECT_NE(table.find("==> " + plain + " <==\n"), std::string::npos) << table;
  table = ok({"text", "--per-file", weird}).out;
  EXPECT_NE(table.find("==> " + quoted(".pgm") + " <==\n"), std::string::npos) << table;
  // A C1 control character (U+0085, valid UTF-8) is escaped: terminals act on those.
  const std::string c1 = file("next\xc2\x85line.u8", "ab");
  table = ok({"count", "--per-file", c1}).out;
  EXPECT_NE(table.find("==> '" + dir_.string() + "/next\\xc2\\x85line.u8' <==\n"), std::string::npos) << table;
  // Plot titles and legends: valid SVG text, no raw control or non-UTF-8 byte.
  ok({"count", "--per-file", weird, plain, "--plot", path("p.svg")});
  ok({"image", weird, "--plot", path("i.svg")});
  for (const char* svg : {"p.svg", "i.svg"}) {
    const std::string text = svg_check::read_file(path(svg));
    EXPECT_TRUE(svg_check::check(text).ok()) << svg;
    EXPECT_TRUE(valid_utf8_without_controls(text)) << svg;
    EXPECT_NE(text.find(kAwkwardQuoted), std::string::npos) << svg;
  }
}

}  // namespace
}  // namespace cli_test
