// levelhist: small charts with no dependencies, as SVG or as an RGB image
// (PNG through image.hpp), for the benchmark's figures and for drawing
// histograms (one bar series per channel). SVG and image share one layout.
//
//   plot::Chart c;
//   c.title = "GB/s against n";
//   c.x = {"samples", plot::Scale::log2};
//   c.y = {"GB/s"};
//   c.series.push_back({"cub", {{8192, 12.5}, {16384, 24.0}}});
//   plot::write_svg_file("sizes.svg", plot::render_svg(c));
//
// A Figure lays several charts out as panels with one shared legend; a series
// keeps its color in every panel because colors follow the series label.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "levelhist/image.hpp"

namespace levelhist::plot {

struct Point {
  double x;
  double y;
};

enum class Scale : unsigned char {
  linear,
  log2,   // ticks at powers of two, labelled 2^k unless the axis says otherwise
  log10,  // ticks at powers of ten
};

struct Axis {
  std::string label;
  Scale scale = Scale::linear;
  // The visible range; unset ends follow the data (a linear axis over
  // non-negative data starts at 0, the honest baseline for rates and counts).
  std::optional<double> min = std::nullopt;
  std::optional<double> max = std::nullopt;
  // Text of the tick at value v; empty: a compact number, or "2^k" on log2
  // axes. A label "a^b" is drawn with b as a superscript.
  std::function<std::string(double)> tick_label = nullptr;
};

enum class LineStyle : unsigned char { solid, dashed, dotted };

struct Series {
  std::string label;
  std::vector<Point> points;  // points with a non-finite coordinate, or <= 0 on a log axis, are skipped
  // "#rrggbb", "#rgb" or a name: black, white, gray, red, green, blue, orange,
  // vermillion, yellow, purple, pink, brown, olive, cyan, skyblue, bluishgreen
  // (anything else throws Error(usage) when drawn); empty: the palette color
  // given to this label.
  std::string color;
  LineStyle style = LineStyle::solid;
  bool markers = true;  // line charts: a dot at every point
};

enum class ChartKind : unsigned char {
  lines,  // one polyline per series
  bars,   // one bar per point, centred on x; several series overlap, translucent
};

struct Chart {
  std::string title;
  Axis x;
  Axis y;
  std::vector<Series> series;
  ChartKind kind = ChartKind::lines;
  double bar_width = 0.0;  // bars: width in x units; 0 = the smallest gap between neighbouring x
  bool legend = true;      // a stand-alone chart draws its legend at the right
};

struct Figure {
  std::string title;
  std::vector<Chart> panels;  // each keeps its own title and axes; their legends merge into one
  int columns = 0;            // panels per row; 0 = all in one row
  double panel_width = 420.0;
  double panel_height = 300.0;
};

// A complete SVG document.
std::string render_svg(const Chart& chart, double width = 720.0, double height = 420.0);
std::string render_svg(const Figure& figure);

// The same picture as render_svg, drawn into an 8-bit RGB image of
// ceil(width) x ceil(height) pixels (taller when the legend needs it), white
// background, no anti-aliasing; text in a built-in 5x7 pixel font (printable
// ASCII; other characters show as '?'). Throws Error(usage) for sides outside
// 1..16384 pixels.
image::Image render_image(const Chart& chart, int width = 720, int height = 420);
image::Image render_image(const Figure& figure);

// Writes text to a file whole or not at all (a temporary file renamed over
// `path`; devices and FIFOs written in place); throws Error(input) naming the
// path and the cause when it cannot.
void write_svg_file(const std::string& path, const std::string& svg);

// The file formats a plot can be written in, chosen by the path's extension
// (case-insensitive): .svg, or .png (render_image written by
// image::write_image) in builds with PNG support (image::png_supported();
// without it .png throws Error(usage)). Anything else throws Error(usage)
// naming the path and the extensions that work. `image --plot`, `count --plot` and the
// benchmark's figures all go through write_plot.
enum class PlotFormat : unsigned char { svg, png };
PlotFormat plot_format(const std::string& path);
void write_plot(const std::string& path, const Chart& chart);
void write_plot(const std::string& path, const Figure& figure);

// The i-th color of the built-in palette (cycles; colorblind-safe first eight).
std::string_view palette_color(std::size_t i);

}  // namespace levelhist::plot
