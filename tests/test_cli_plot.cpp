// `levelhist count --plot`: the plot file parsed back (bars = non-empty bins),
// PNG header where libpng is built in, errors, and stdout unchanged.
#include <set>

#include "cli_test_support.hpp"
#include "levelhist/image.hpp"
#include "png_check.hpp"
#include "svg_check.hpp"

namespace cli_test {
namespace {

class CliPlotTest : public CliTest {};

// Bytes 0..255 where only the even values occur: 128 non-empty bins.
std::string even_bytes() {
  std::string s;
  for (int rep = 0; rep < 3; ++rep)
    for (int v = 0; v < 256; v += 2) s += static_cast<char>(v);
  return s;
}

TEST_F(CliPlotTest, SvgHasOneBarPerNonEmptyBinAndStdoutIsUnchanged) {
  std::string in = file("even.u8", even_bytes());
  std::string out = path("even.svg");
  Result plain = ok({"count", in});
  Result plotted = ok({"count", in, "--plot", out});
  EXPECT_EQ(plotted.out, plain.out);
  auto d = svg_check::check(svg_check::read_file(out));
  ASSERT_TRUE(d.ok()) << d.error;
  EXPECT_EQ(d.count("rect", "bar"), 128u);
  // Titled by the input.
  EXPECT_NE(svg_check::read_file(out).find("even.u8"), std::string::npos);
}

TEST_F(CliPlotTest, JsonOutputIsUnchangedToo) {
  std::string in = file("x.f32", bytes_of(std::vector<float>{0.5f, 1.5f, 1.7f, 3.0f}));
  Result plain = ok({"count", "--type", "f32", "--bins", "4", "--range", "0:4", "--format", "json", in});
  Result plotted = ok({"count", "--type", "f32", "--bins", "4", "--range", "0:4", "--format", "json", in, "--plot",
                       path("x.svg")});
  EXPECT_EQ(plotted.out, plain.out);
  EXPECT_EQ(svg_check::check(svg_check::read_file(path("x.svg"))).count("rect", "bar"), 3u);
}

TEST_F(CliPlotTest, ExplicitEdgesDrawOneBarPerNonEmptyBin) {
  std::string in = file("e.f64", bytes_of(std::vector<double>{0.5, 5, 50, 60, 500}));
  ok({"count", "--type", "f64", "--edges", "0,1,10,100,1000", in, "--plot", path("e.svg")});
  std::string svg = svg_check::read_file(path("e.svg"));
  EXPECT_EQ(svg_check::check(svg).count("rect", "bar"), 4u);
  EXPECT_NE(svg.find(">1000<"), std::string::npos) << "the edges label the ticks";
}

TEST_F(CliPlotTest, PerFileDrawsOneSeriesPerFile) {
  std::string a = file("a.u8", std::string("\x01\x02\x03", 3));
  std::string b = file("b.u8", std::string("\x03\x04", 2));
  ok({"count", "--per-file", a, b, "--plot", path("p.svg")});
  std::string svg = svg_check::read_file(path("p.svg"));
  auto d = svg_check::check(svg);
  ASSERT_TRUE(d.ok()) << d.error;
  EXPECT_EQ(d.count("rect", "bar"), 5u);  // 3 + 2
  std::set<std::string> fills;
  for (const auto* r : d.all("rect", "bar")) fills.insert(r->attr("fill"));
  EXPECT_EQ(fills.size(), 2u);
  EXPECT_NE(svg.find(">" + b + "<"), std::string::npos) << "the legend names the files";
}

TEST_F(CliPlotTest, ChannelsDrawOneSeriesPerChannelInItsColor) {
  std::string rgb = file("px.rgb", std::string("\x10\x20\x30\x10\x21\x30", 6));
  ok({"count", "--channels", "3", rgb, "--plot", path("c.svg")});
  auto d = svg_check::check(svg_check::read_file(path("c.svg")));
  ASSERT_TRUE(d.ok()) << d.error;
  EXPECT_EQ(d.count("rect", "bar"), 4u);  // red 1 bin, green 2, blue 1
  std::set<std::string> fills;
  for (const auto* r : d.all("rect", "bar")) fills.insert(r->attr("fill"));
  EXPECT_EQ(fills, (std::set<std::string>{"#D62728", "#2CA02C", "#1F77B4"}));
}

TEST_F(CliPlotTest, WeightsPlotTheirSums) {
  std::string in = file("w.u8", std::string("\x01\x01\x05", 3));
  std::string w = file("w.f32", bytes_of(std::vector<float>{0.5f, 0.25f, 2.0f}));
  ok({"count", in, "--weights", w, "--plot", path("w.svg")});
  EXPECT_EQ(svg_check::check(svg_check::read_file(path("w.svg"))).count("rect", "bar"), 2u);
}

TEST_F(CliPlotTest, PngHasSignatureAndSize) {
  std::string in = file("even.u8", even_bytes());
  if (!levelhist::image::png_supported()) {
    // Refused up front, before reading any input: usage, exit 2.
    Result r = fails(2, {"count", in, "--plot", path("even.png")});
    EXPECT_NE(r.err.find("libpng"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("even.png")));
    GTEST_SKIP() << "no libpng in this build";
  }
  ok({"count", in, "--plot", path("even.png")});
  auto header = png_check::read_header(svg_check::read_file(path("even.png")));
  ASSERT_TRUE(header) << "not a PNG";
  EXPECT_EQ(header->width, 720u);
  EXPECT_EQ(header->height, 420u);
}

TEST_F(CliPlotTest, BadExtensionIsAUsageErrorBeforeReadingInput) {
  // The input does not exist: a usage error means --plot was checked first.
  Result r = fails(2, {"count", path("missing.u8"), "--plot", path("out.jpg")});
  EXPECT_NE(r.err.find("out.jpg"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".svg"), std::string::npos) << r.err;
  fails(2, {"count", path("missing.u8"), "--plot", path("noextension")});
  fails(2, {"count", "--plot"});  // no value
}

TEST_F(CliPlotTest, UnwritablePathIsExitOneWithNothingOnStdout) {
  std::string in = file("x.u8", "abc");
  Result r = fails(1, {"count", in, "--plot", path("no/such/dir/x.svg")});
  EXPECT_NE(r.err.find("x.svg"), std::string::npos) << r.err;
}

TEST_F(CliPlotTest, HelpMentionsPlot) {
  Result r = ok({"count", "--help"});
  EXPECT_NE(r.out.find("--plot OUT"), std::string::npos);
}

}  // namespace
}  // namespace cli_test
