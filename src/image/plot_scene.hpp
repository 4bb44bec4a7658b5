// levelhist: the laid-out picture of a plot, private to the library.
//
// plot_scene.cpp lays a Chart or Figure out ONCE -- axes, ticks, tick and axis
// labels, bars, lines, legend -- into pixels and RGB colors; plot_svg.cpp and
// plot_raster.cpp only draw the result. Both outputs therefore agree on every
// position by construction, and a layout change is made in one place.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "levelhist/plot.hpp"

namespace levelhist::plot::scene {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};
inline constexpr Rgb kBlack{0, 0, 0};
inline constexpr Rgb kWhite{255, 255, 255};

// "#rrggbb", "#rgb" or a name of named_colors() (case-insensitive); anything
// else throws Error(usage) naming the text.
Rgb parse_color(std::string_view text);
// The names parse_color knows, for messages and documentation.
std::string_view named_colors();

enum class Anchor : unsigned char { start, middle, end };

// Coordinates are pixels of the document, y downwards, as in SVG.
struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  std::optional<Rgb> fill;
  double fill_opacity = 1.0;
  std::optional<Rgb> stroke;  // 1 px outline
  std::string role;           // what the rect is ("bar"): SVG writes it as class so readers can find the bars
};

struct Line {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  Rgb color;
  double width = 1.0;
  LineStyle style = LineStyle::solid;
};

struct Polyline {
  std::vector<Point> points;
  Rgb color;
  double width = 1.0;
  LineStyle style = LineStyle::solid;
};

struct Circle {
  double cx = 0, cy = 0, r = 0;
  Rgb fill;
};

// A label. (x, y) is the anchor point on the baseline; the text may hold one
// '^': what follows it is a superscript (split_superscript).
struct Text {
  double x = 0, y = 0;
  std::string text;
  Anchor anchor = Anchor::start;
  double size = 12.0;  // pixels
  bool bold = false;
  double rotate = 0.0;  // degrees about (x, y), clockwise on screen as SVG's rotate(); a multiple of 90
  Rgb color = kBlack;
};

using Shape = std::variant<Rect, Line, Polyline, Circle, Text>;

struct ClipRect {
  double x = 0, y = 0, w = 0, h = 0;
};

struct Item {
  Shape shape;
  int clip = -1;  // index into Scene::clips, or -1: not clipped
};

struct Scene {
  double width = 0, height = 0;
  Rgb background = kWhite;
  double font_size = 12.0;     // the size most text has (SVG's document default)
  std::vector<ClipRect> clips;  // panel plot areas: data stays inside its panel
  std::vector<Item> items;      // in drawing order, later over earlier
};

// A superscript's size relative to its text and how far it is raised, in
// pixels at size 12 (SVG's dy; the raster font scales it the same way).
inline constexpr double kSuperscriptScale = 0.75;
inline constexpr double kSuperscriptRise = 5.0;

struct TextParts {
  std::string_view base, superscript;  // "2^10" -> "2", "10"; no '^' -> the whole text, ""
};
TextParts split_superscript(std::string_view text);

Scene layout(const Chart& chart, double width, double height);
Scene layout(const Figure& figure);

}  // namespace levelhist::plot::scene
