// plot.hpp's SVG output, parsed back: well-formed documents, one
// <rect class="bar"> per non-empty bar, colors following labels, write_plot's
// choice of format by extension.
#include <unistd.h>

#include <filesystem>
#include <set>

#include "levelhist/plot.hpp"
#include "svg_check.hpp"
#include "test_support.hpp"

namespace levelhist::test {
namespace {

using namespace plot;

// Bars at x = 0..n-1 with y from `heights`.
Chart bar_chart(const std::vector<double>& heights, const std::string& label = "counts") {
  Chart c;
  c.kind = ChartKind::bars;
  c.title = "bars";
  c.x.label = "value";
  c.y.label = "count";
  Series s;
  s.label = label;
  for (std::size_t i = 0; i < heights.size(); ++i) s.points.push_back({static_cast<double>(i), heights[i]});
  c.series.push_back(s);
  return c;
}

svg_check::Document parsed(const std::string& svg) {
  svg_check::Document d = svg_check::check(svg);
  EXPECT_TRUE(d.ok()) << d.error << "\n" << svg.substr(0, 2000);
  return d;
}

TEST(SvgCheck, RejectsMalformedDocuments) {
  EXPECT_TRUE(svg_check::check("<svg><g><rect/></g></svg>").ok());
  EXPECT_FALSE(svg_check::check("<svg><g></svg>").ok());
  EXPECT_FALSE(svg_check::check("<svg><g></svg></g>").ok());
  EXPECT_FALSE(svg_check::check("<svg><text>a < b</text></svg>").ok());
  EXPECT_FALSE(svg_check::check("<svg><text>a & b</text></svg>").ok());
  EXPECT_FALSE(svg_check::check("<svg><rect x=1/></svg>").ok());
  EXPECT_FALSE(svg_check::check("<svg><rect x=\"1\" x=\"2\"/></svg>").ok());
  EXPECT_FALSE(svg_check::check("<svg/><svg/>").ok());
  EXPECT_FALSE(svg_check::check("<html></html>").ok());
  EXPECT_EQ(svg_check::check("<svg><rect class=\"bar\"/><rect/></svg>").count("rect", "bar"), 1u);
}

TEST(PlotSvg, ChartIsWellFormedWithTheAskedSize) {
  auto d = parsed(render_svg(bar_chart({1, 2, 3}), 640, 400));
  ASSERT_FALSE(d.elements.empty());
  EXPECT_EQ(d.elements[0].attr("width"), "640.0");
  EXPECT_EQ(d.elements[0].attr("height"), "400.0");
  EXPECT_EQ(d.elements[0].attr("xmlns"), "http://www.w3.org/2000/svg");
}

TEST(PlotSvg, OneBarPerNonEmptyPoint) {
  // Zero-height bars are not drawn: a histogram's bars are its non-empty bins.
  auto d = parsed(render_svg(bar_chart({5, 0, 3, 0, 0, 9, 1})));
  EXPECT_EQ(d.count("rect", "bar"), 4u);
  // The legend's swatch is a rect too, but not a bar.
  EXPECT_GT(d.count("rect"), d.count("rect", "bar"));
}

TEST(PlotSvg, BarsOfSeveralSeriesAddUp) {
  Chart c = bar_chart({1, 2, 0, 4}, "a");
  Chart b = bar_chart({0, 7, 7, 0}, "b");
  c.series.push_back(b.series[0]);
  auto d = parsed(render_svg(c));
  EXPECT_EQ(d.count("rect", "bar"), 5u);
  // Two series: each a color of its own, and a legend entry each.
  std::set<std::string> fills;
  for (const auto* r : d.all("rect", "bar")) fills.insert(r->attr("fill"));
  EXPECT_EQ(fills.size(), 2u);
}

TEST(PlotSvg, BarsStayInsideTheirBins) {
  auto d = parsed(render_svg(bar_chart({3, 3, 3, 3})));
  auto bars = d.all("rect", "bar");
  ASSERT_EQ(bars.size(), 4u);
  for (std::size_t i = 1; i < bars.size(); ++i) {
    double prev_end = std::stod(bars[i - 1]->attr("x")) + std::stod(bars[i - 1]->attr("width"));
    EXPECT_NEAR(std::stod(bars[i]->attr("x")), prev_end, 0.11);  // neighbours touch, never overlap
  }
}

TEST(PlotSvg, LinesChartHasAPolylineAndMarkersPerSeries) {
  Chart c;
  c.x = {"samples", Scale::log2};
  c.y = {"GB/s", Scale::log10};
  c.series.push_back({"cub", {{8192, 12.5}, {16384, 24.0}, {32768, 50}}, "", LineStyle::solid, true});
  c.series.push_back({"limit", {{8192, 100}, {32768, 300}}, "#444444", LineStyle::dashed, false});
  auto d = parsed(render_svg(c));
  EXPECT_EQ(d.count("polyline"), 2u);
  EXPECT_EQ(d.count("circle"), 3u);  // the limit has no markers
  auto lines = d.all("polyline");
  EXPECT_EQ(lines[1]->attr("stroke"), "#444444");
  EXPECT_EQ(lines[1]->attr("stroke-dasharray"), "7 4");
  // log2 ticks are "2^k": k is a superscript.
  EXPECT_GT(d.count("tspan"), 0u);
}

TEST(PlotSvg, TextIsEscaped) {
  Chart c = bar_chart({1});
  c.title = "a < b & \"c\"";
  c.series[0].label = "<legend>";
  c.legend = true;
  auto d = parsed(render_svg(c));
  EXPECT_EQ(d.count("rect", "bar"), 1u);
}

TEST(PlotSvg, FigurePanelsAreClippedAndColorsFollowLabels) {
  Figure f;
  f.title = "two panels";
  f.columns = 2;
  Chart a = bar_chart({1, 2}, "x");
  Chart b = bar_chart({3, 4}, "y");
  b.series.push_back(bar_chart({5, 6}, "x").series[0]);
  f.panels = {a, b};
  auto d = parsed(render_svg(f));
  EXPECT_EQ(d.count("clipPath"), 2u);
  EXPECT_EQ(d.count("rect", "bar"), 6u);
  // "x" has one color in both panels.
  std::set<std::string> x_fills, y_fills;
  auto bars = d.all("rect", "bar");
  for (std::size_t i : {0, 1, 4, 5}) x_fills.insert(bars[i]->attr("fill"));
  for (std::size_t i : {2, 3}) y_fills.insert(bars[i]->attr("fill"));
  EXPECT_EQ(x_fills.size(), 1u);
  EXPECT_EQ(y_fills.size(), 1u);
  EXPECT_NE(*x_fills.begin(), *y_fills.begin());
}

TEST(PlotSvg, ExplicitColorsByHexOrName) {
  Chart c = bar_chart({1});
  c.series[0].color = "red";
  EXPECT_EQ(parsed(render_svg(c)).all("rect", "bar")[0]->attr("fill"), "#D62728");
  c.series[0].color = "#12aB3c";
  EXPECT_EQ(parsed(render_svg(c)).all("rect", "bar")[0]->attr("fill"), "#12AB3C");
  c.series[0].color = "#abc";
  EXPECT_EQ(parsed(render_svg(c)).all("rect", "bar")[0]->attr("fill"), "#AABBCC");
  c.series[0].color = "Gray";
  EXPECT_EQ(parsed(render_svg(c)).all("rect", "bar")[0]->attr("fill"), "#7F7F7F");
  for (const char* bad : {"rgb(1,2,3)", "#12345", "#ggg", "reddish"}) {
    c.series[0].color = bad;
    EXPECT_TRUE(throws_error([&] { render_svg(c); }, ErrorKind::usage, bad));
  }
}

TEST(PlotSvg, EmptyChartIsStillADocument) {
  auto d = parsed(render_svg(Chart{}));
  EXPECT_EQ(d.count("rect", "bar"), 0u);
  EXPECT_EQ(d.count("polyline"), 0u);
}

class PlotFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "levelhist-plot-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(PlotFileTest, WritePlotSvgByExtension) {
  for (const char* name : {"a.svg", "b.SVG"}) {
    write_plot(path(name), bar_chart({1, 0, 2}));
    auto d = parsed(svg_check::read_file(path(name)));
    EXPECT_EQ(d.count("rect", "bar"), 2u);
  }
  Figure f;
  f.panels = {bar_chart({1, 1})};
  write_plot(path("f.svg"), f);
  EXPECT_EQ(parsed(svg_check::read_file(path("f.svg"))).count("rect", "bar"), 2u);
}

TEST_F(PlotFileTest, UnknownExtensionsAreUsageErrors) {
  for (const char* name : {"a.jpg", "a", "dir.svg/a", "a.svg.txt"})
    EXPECT_TRUE(throws_error([&] { write_plot(path(name), bar_chart({1})); }, ErrorKind::usage, ".svg or .png"));
  EXPECT_EQ(plot_format("x.Png"), PlotFormat::png);
  EXPECT_FALSE(std::filesystem::exists(path("a.jpg")));
}

TEST_F(PlotFileTest, UnwritablePathIsAnInputError) {
  EXPECT_TRUE(throws_error([&] { write_plot(path("missing/a.svg"), bar_chart({1})); }, ErrorKind::input, "missing"));
}

}  // namespace
}  // namespace levelhist::test
