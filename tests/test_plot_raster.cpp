// plot.hpp's raster output (render_image), read pixel by pixel: size,
// background, bars as separate colored runs along a scanline, the axis frame,
// text in the title and y-label areas. PNG files only where libpng is built in.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "levelhist/plot.hpp"
#include "png_check.hpp"
#include "test_support.hpp"

namespace levelhist::test {
namespace {

using namespace plot;
using image::Image;

struct Px {
  int r, g, b;
  bool operator==(const Px&) const = default;
};
Px at(const Image& img, std::uint32_t x, std::uint32_t y) {
  const std::uint8_t* p = &img.bytes[(std::size_t{y} * img.width + x) * 3];
  return {p[0], p[1], p[2]};
}
bool colored(Px p) { return std::max({p.r, p.g, p.b}) - std::min({p.r, p.g, p.b}) > 40; }  // not white, gray or black
constexpr Px kWhite{255, 255, 255}, kBlack{0, 0, 0}, kFrame{0x33, 0x33, 0x33};

// Runs of consecutive pixels of row y for which `pred` holds.
template <class Pred>
int runs(const Image& img, std::uint32_t y, Pred pred) {
  int n = 0;
  bool in = false;
  for (std::uint32_t x = 0; x < img.width; ++x) {
    bool now = pred(at(img, x, y));
    n += now && !in;
    in = now;
  }
  return n;
}

// The lowest row with a frame-colored run across more than half the image: the x axis.
std::uint32_t x_axis_row(const Image& img) {
  for (std::uint32_t y = img.height; y-- > 0;) {
    std::uint32_t longest = 0, cur = 0;
    for (std::uint32_t x = 0; x < img.width; ++x) longest = std::max(longest, cur = at(img, x, y) == kFrame ? cur + 1 : 0);
    if (longest > img.width / 2) return y;
  }
  return 0;
}

Chart bars(const std::vector<double>& heights) {
  Chart c;
  c.kind = ChartKind::bars;
  c.x.label = "value";
  c.y.label = "count";
  Series s;
  s.label = "counts";
  for (std::size_t i = 0; i < heights.size(); ++i) s.points.push_back({static_cast<double>(i), heights[i]});
  c.series.push_back(s);
  return c;
}

TEST(PlotRaster, SizeAndBackground) {
  Image img = render_image(bars({1, 2, 3}));
  EXPECT_EQ(img.width, 720u);
  EXPECT_EQ(img.height, 420u);
  EXPECT_EQ(img.channels, 3u);
  EXPECT_EQ(img.bit_depth, 8u);
  ASSERT_EQ(img.bytes.size(), 720u * 420u * 3u);
  EXPECT_EQ(at(img, 0, 0), kWhite);
  EXPECT_EQ(at(img, 719, 419), kWhite);
  Image small = render_image(bars({1}), 300, 200);
  EXPECT_EQ(small.width, 300u);
  EXPECT_EQ(small.height, 200u);
}

TEST(PlotRaster, BarsAreSeparateColoredRunsOnAScanline) {
  // Every other bin empty, so no two bars touch: one colored run per non-empty bin.
  std::vector<double> h = {4, 0, 4, 0, 4, 0, 0, 4, 0, 4};
  Image img = render_image(bars(h));
  std::uint32_t axis = x_axis_row(img);
  ASSERT_GT(axis, 200u);
  EXPECT_EQ(runs(img, axis - 3, colored), 5);
  EXPECT_EQ(runs(img, axis + 1, colored), 0);  // nothing below the axis
  // The bar color is the palette's first, at the single-series opacity over white.
  Px expect{static_cast<int>(std::lround(0x00 * 0.85 + 255 * 0.15)), static_cast<int>(std::lround(0x72 * 0.85 + 255 * 0.15)),
            static_cast<int>(std::lround(0xB2 * 0.85 + 255 * 0.15))};
  int seen = 0;
  for (std::uint32_t x = 0; x < img.width; ++x) seen += at(img, x, axis - 3) == expect;
  EXPECT_GT(seen, 50);
}

TEST(PlotRaster, AxisFrameIsDrawn) {
  Chart empty;  // no bars over the frame's left side
  Image img = render_image(empty);
  std::uint32_t axis = x_axis_row(img);
  EXPECT_EQ(axis, 420u - 46u);  // the bottom margin
  // The left side of the frame: a frame-colored column from the top of the plot area (30) down to the axis.
  for (std::uint32_t y = 30; y <= axis; ++y) EXPECT_EQ(at(img, 64, y), kFrame) << "row " << y;
  EXPECT_EQ(runs(img, 30, [](Px p) { return p == kFrame; }), 1);  // the top side
}

TEST(PlotRaster, TextInTitleAndLabelAreas) {
  Chart c = bars({1, 2});
  auto ink_in = [](const Image& img, std::uint32_t x0, std::uint32_t x1, std::uint32_t y0, std::uint32_t y1) {
    int n = 0;
    for (std::uint32_t y = y0; y < y1; ++y)
      for (std::uint32_t x = x0; x < x1; ++x) n += at(img, x, y) == kBlack;
    return n;
  };
  c.title = "";
  EXPECT_EQ(ink_in(render_image(c), 0, 720, 0, 25), 0);
  c.title = "Histogram of camera.pgm";
  Image img = render_image(c);
  EXPECT_GT(ink_in(img, 200, 520, 0, 25), 40);
  // The y label runs upwards along the left edge: its ink is taller than wide.
  std::uint32_t top = img.height, bottom = 0, left = img.width, right = 0;
  for (std::uint32_t y = 30; y < 374; ++y)
    for (std::uint32_t x = 0; x < 24; ++x)
      if (at(img, x, y) == kBlack) top = std::min(top, y), bottom = std::max(bottom, y), left = std::min(left, x), right = std::max(right, x);
  ASSERT_LT(top, bottom);
  EXPECT_GT(bottom - top, 3 * (right - left));
  EXPECT_LE(right - left, 8u);  // one 7-px line of text, on its side (bold would be 8)
}

TEST(PlotRaster, SuperscriptsRiseAboveTheLabel) {
  // The same tick values once as "2^k" (log2 default) and once as plain numbers.
  Chart c;
  c.x = {"n", Scale::log2};
  c.series.push_back({"s", {{2, 1}, {1024, 2}}, "", LineStyle::solid, false});
  c.legend = false;
  auto top_ink = [](const Image& img) {
    for (std::uint32_t y = 374; y < img.height; ++y)
      for (std::uint32_t x = 100; x < img.width; ++x)  // right of the y tick labels
        if (at(img, x, y) == kBlack) return y;
    return img.height;
  };
  std::uint32_t with_sup = top_ink(render_image(c));
  c.x.tick_label = [](double v) { return std::to_string(static_cast<long>(v)); };
  std::uint32_t plain = top_ink(render_image(c));
  EXPECT_LT(with_sup + 3, plain);
}

TEST(PlotRaster, DashedLinesHaveGaps) {
  auto line_runs = [](LineStyle style) {
    Chart c;
    c.legend = false;
    c.y.min = 0;
    c.y.max = 2;
    c.series.push_back({"s", {{0, 1.1}, {10, 1.1}}, "#D55E00", style, false});
    Image img = render_image(c);
    int best = 0;
    for (std::uint32_t y = 0; y < img.height; ++y) best = std::max(best, runs(img, y, colored));
    return best;
  };
  EXPECT_EQ(line_runs(LineStyle::solid), 1);
  EXPECT_GT(line_runs(LineStyle::dashed), 20);
  EXPECT_GT(line_runs(LineStyle::dotted), line_runs(LineStyle::dashed));
}

TEST(PlotRaster, FigureSizeFollowsPanels) {
  Figure f;
  f.title = "figure";
  f.columns = 2;
  f.panels = {bars({1}), bars({2}), bars({3})};
  for (Chart& c : f.panels) c.series[0].label.clear();  // no legend: width is the panels'
  Image img = render_image(f);
  EXPECT_EQ(img.width, 840u);
  EXPECT_EQ(img.height, 30u + 2u * 300u);
}

TEST(PlotRaster, BadSizesAreUsageErrors) {
  EXPECT_TRUE(throws_error([] { render_image(bars({1}), 0, 100); }, ErrorKind::usage, "pixels"));
  EXPECT_TRUE(throws_error([] { render_image(bars({1}), 100, 100000); }, ErrorKind::usage, "pixels"));
}

class PlotPngTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "levelhist-png-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(PlotPngTest, WritePlotPngHasSignatureAndSize) {
  if (!image::png_supported()) GTEST_SKIP() << "no libpng in this build";
  std::string path = (dir_ / "bars.png").string();
  write_plot(path, bars({1, 0, 3}));
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto header = png_check::read_header(bytes.str());
  ASSERT_TRUE(header) << "not a PNG";
  EXPECT_EQ(header->width, 720u);
  EXPECT_EQ(header->height, 420u);
  EXPECT_EQ(header->bit_depth, 8);
  EXPECT_EQ(header->color_type, 2);  // RGB
}

TEST_F(PlotPngTest, PngWithoutLibpngIsAUsageError) {
  if (image::png_supported()) GTEST_SKIP() << "this build has libpng";
  std::string path = (dir_ / "bars.png").string();
  EXPECT_TRUE(throws_error([&] { write_plot(path, bars({1})); }, ErrorKind::usage, "libpng"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace levelhist::test
