// The layout of plot.hpp's charts and figures (plot_scene.hpp): every
// position, size and color, computed once for the SVG and the raster output.
#include "plot_scene.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "levelhist/error.hpp"

namespace levelhist::plot {
namespace scene {
namespace {

// Okabe-Ito (colorblind-safe) first, yellow moved last of them because it
// barely shows on white, then distinct extras for charts with many series.
constexpr std::string_view kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                                         "#000000", "#F0E442", "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF",
                                         "#9467BD", "#2CA02C", "#D62728", "#1F77B4"};

constexpr double kFontSize = 12.0;
constexpr double kCharWidth = 6.6;  // average glyph width of a 12px sans-serif font, for layout only

// Panel layout in pixels: room for tick labels and axis labels around the plot area.
constexpr double kMarginLeft = 64.0, kMarginRight = 16.0, kMarginTop = 30.0, kMarginBottom = 46.0;
constexpr double kFigureTitleHeight = 30.0;
constexpr double kLegendRow = 18.0, kLegendSwatch = 26.0, kLegendPad = 12.0;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
double estimated_width(std::string_view label) { return static_cast<double>(label.size()) * kCharWidth; }

bool usable(double v, Scale scale) { return std::isfinite(v) && (scale == Scale::linear || v > 0.0); }

double forward(double v, Scale scale) {
  switch (scale) {
    case Scale::log2: return std::log2(v);
    case Scale::log10: return std::log10(v);
    case Scale::linear: break;
  }
  return v;
}

// A "nice" step (1, 2 or 5 times a power of ten) that cuts `span` into about `parts` pieces.
double nice_step(double span, double parts) {
  double raw = span / parts;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / magnitude;
  double nice = f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0;
  return nice * magnitude;
}

std::string compact_number(double v, double step) {
  double a = std::fabs(v);
  if (a >= 1e9) return fmt("%gG", v / 1e9);
  if (a >= 1e6) return fmt("%gM", v / 1e6);
  if (a >= 1e4 && std::fmod(a, 1000.0) == 0.0) return fmt("%gk", v / 1e3);
  int decimals = step >= 1.0 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 9), v);
  return buf;
}

// One axis after layout: the visible range (in data units) mapped to pixels.
struct AxisMap {
  Scale scale = Scale::linear;
  double lo = 0.0, hi = 1.0;      // data units
  double pixel_lo = 0.0, pixel_hi = 1.0;
  std::vector<double> ticks;      // data units
  double step = 1.0;              // linear: tick spacing, for label precision

  double to_pixel(double v) const {
    double a = forward(lo, scale), b = forward(hi, scale);
    double t = (forward(v, scale) - a) / (b - a);
    return pixel_lo + t * (pixel_hi - pixel_lo);
  }
  std::string label(const Axis& axis, double v) const {
    if (axis.tick_label) return axis.tick_label(v);
    if (scale == Scale::log2) return "2^" + fmt("%.0f", std::log2(v));
    if (scale == Scale::log10) {
      double e = std::log10(v);
      if (v >= 1e-3 && v < 1e5) return fmt("%g", v);  // short enough as a plain number
      return e == std::floor(e) ? "10^" + fmt("%.0f", e) : fmt("%g", v);
    }
    return compact_number(v, step);
  }
};

// Chooses the visible range and ticks of one axis from the data extent
// [data_lo, data_hi]; `pad_to_ticks` widens a linear range to whole steps.
AxisMap layout_axis(const Axis& axis, double data_lo, double data_hi, bool pad_to_ticks) {
  AxisMap m;
  m.scale = axis.scale;
  if (!(data_lo <= data_hi)) {  // no data at all
    data_lo = axis.scale == Scale::linear ? 0.0 : 1.0;
    data_hi = axis.scale == Scale::linear ? 1.0 : 2.0;
  }
  if (axis.scale == Scale::linear) {
    double lo = axis.min.value_or(data_lo >= 0.0 ? 0.0 : data_lo);
    double hi = axis.max.value_or(data_hi);
    if (!(hi > lo)) hi = lo + (lo == 0.0 ? 1.0 : std::fabs(lo));
    m.step = nice_step(hi - lo, 5.0);
    if (pad_to_ticks) {
      if (!axis.min) lo = std::floor(lo / m.step) * m.step;
      if (!axis.max) hi = std::ceil(hi / m.step - 1e-9) * m.step;
    }
    m.lo = lo;
    m.hi = hi;
    for (double t = std::ceil(lo / m.step - 1e-9) * m.step; t <= hi + m.step * 1e-9; t += m.step)
      m.ticks.push_back(std::fabs(t) < m.step * 1e-9 ? 0.0 : t);
    return m;
  }
  const double base = axis.scale == Scale::log2 ? 2.0 : 10.0;
  double lo_exp = std::floor(forward(axis.min.value_or(data_lo), axis.scale) + 1e-9);
  double hi_exp = std::ceil(forward(axis.max.value_or(data_hi), axis.scale) - 1e-9);
  if (hi_exp <= lo_exp) hi_exp = lo_exp + 1.0;
  m.lo = axis.min.value_or(std::pow(base, lo_exp));
  m.hi = axis.max.value_or(std::pow(base, hi_exp));
  const double count = hi_exp - lo_exp + 1.0;
  const double every = std::max(1.0, std::ceil(count / 10.0));  // at most about ten labelled ticks
  // A log10 axis over few decades would have too few ticks to read a value off: add 2x and 5x.
  const bool subdivide = axis.scale == Scale::log10 && count <= 4.0;
  auto add_tick = [&](double v) {
    if (v >= m.lo * (1 - 1e-12) && v <= m.hi * (1 + 1e-12)) m.ticks.push_back(v);
  };
  for (double e = lo_exp; e <= hi_exp; e += every) {
    double v = std::pow(base, e);
    add_tick(v);
    if (subdivide) {
      add_tick(2 * v);
      add_tick(5 * v);
    }
  }
  std::sort(m.ticks.begin(), m.ticks.end());
  return m;
}

// Colors follow labels, so a series keeps its color in every panel of a figure.
class ColorAssignment {
 public:
  Rgb color_of(const Series& s) {
    if (!s.color.empty()) return parse_color(s.color);
    auto [it, added] = index_.try_emplace(s.label, next_);
    if (added) ++next_;
    return parse_color(palette_color(it->second));
  }

 private:
  std::map<std::string, std::size_t> index_;
  std::size_t next_ = 0;
};

struct LegendEntry {
  std::string label;
  Rgb color;
  LineStyle style;
  ChartKind kind;
};

// The legend entries of charts, one per distinct label, in order of first appearance.
std::vector<LegendEntry> legend_entries(const std::vector<const Chart*>& charts, ColorAssignment& colors) {
  std::vector<LegendEntry> entries;
  for (const Chart* chart : charts)
    for (const Series& s : chart->series) {
      Rgb color = colors.color_of(s);
      bool seen = std::any_of(entries.begin(), entries.end(), [&](const LegendEntry& e) { return e.label == s.label; });
      if (!seen && !s.label.empty()) entries.push_back({s.label, color, s.style, chart->kind});
    }
  return entries;
}

double legend_width(const std::vector<LegendEntry>& entries) {
  double widest = 0.0;
  for (const auto& e : entries) widest = std::max(widest, estimated_width(e.label));
  return entries.empty() ? 0.0 : kLegendPad + kLegendSwatch + 6.0 + widest + kLegendPad;
}

// Appends shapes to a scene; text defaults to the document's font.
class Builder {
 public:
  explicit Builder(Scene& scene) : s_(scene) {}
  void add(Shape shape, int clip = -1) { s_.items.push_back({std::move(shape), clip}); }
  void text(double x, double y, std::string label, Anchor anchor, double size = kFontSize, bool bold = false,
            double rotate = 0.0) {
    add(Text{x, y, std::move(label), anchor, size, bold, rotate, kBlack});
  }
  void line(double x1, double y1, double x2, double y2, Rgb color, double width = 1.0,
            LineStyle style = LineStyle::solid, int clip = -1) {
    add(Line{x1, y1, x2, y2, color, width, style}, clip);
  }
  int clip(double x, double y, double w, double h) {
    s_.clips.push_back({x, y, w, h});
    return static_cast<int>(s_.clips.size()) - 1;
  }

 private:
  Scene& s_;
};

constexpr Rgb kGridMajor{0xe4, 0xe4, 0xe4}, kGridMinor{0xf0, 0xf0, 0xf0}, kInk{0x33, 0x33, 0x33};

void legend(Builder& out, const std::vector<LegendEntry>& entries, double x, double y) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    double row = y + static_cast<double>(i) * kLegendRow;
    double sx = x + kLegendPad;
    if (e.kind == ChartKind::bars)
      out.add(Rect{sx, row - 9, kLegendSwatch, 10, e.color, 0.7, std::nullopt, ""});
    else
      out.line(sx, row - 4, sx + kLegendSwatch, row - 4, e.color, 2.0, e.style);
    out.text(sx + kLegendSwatch + 6.0, row, e.label, Anchor::start);
  }
}

// Data extent of a chart along x (with half a bar on each side for bar charts) and y.
struct Extent {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -std::numeric_limits<double>::infinity();
  double y_lo = std::numeric_limits<double>::infinity(), y_hi = -std::numeric_limits<double>::infinity();
};

double bar_width_of(const Chart& chart) {
  if (chart.bar_width > 0.0) return chart.bar_width;
  std::vector<double> xs;
  for (const Series& s : chart.series)
    for (const Point& p : s.points)
      if (std::isfinite(p.x)) xs.push_back(p.x);
  std::sort(xs.begin(), xs.end());
  double gap = std::numeric_limits<double>::infinity();
  for (std::size_t i = 1; i < xs.size(); ++i)
    if (xs[i] > xs[i - 1]) gap = std::min(gap, xs[i] - xs[i - 1]);
  return std::isfinite(gap) ? gap : 1.0;
}

Extent extent_of(const Chart& chart) {
  Extent e;
  // Bars reach half a bar beyond their x; on a log axis that could cross zero, so only linear axes widen.
  const double half_bar =
      chart.kind == ChartKind::bars && chart.x.scale == Scale::linear ? bar_width_of(chart) / 2.0 : 0.0;
  for (const Series& s : chart.series)
    for (const Point& p : s.points) {
      if (!usable(p.x, chart.x.scale) || !usable(p.y, chart.y.scale)) continue;
      e.x_lo = std::min(e.x_lo, p.x - half_bar);
      e.x_hi = std::max(e.x_hi, p.x + half_bar);
      e.y_lo = std::min(e.y_lo, p.y);
      e.y_hi = std::max(e.y_hi, p.y);
    }
  return e;
}

// One chart laid out in the rectangle (x0, y0, w, h) of the document.
void panel(Builder& out, const Chart& chart, double x0, double y0, double w, double h, ColorAssignment& colors) {
  const double left = x0 + kMarginLeft, right = x0 + w - kMarginRight;
  const double top = y0 + kMarginTop, bottom = y0 + h - kMarginBottom;
  Extent e = extent_of(chart);
  AxisMap xm = layout_axis(chart.x, e.x_lo, e.x_hi, /*pad_to_ticks=*/false);
  AxisMap ym = layout_axis(chart.y, e.y_lo, e.y_hi, /*pad_to_ticks=*/true);
  xm.pixel_lo = left;
  xm.pixel_hi = right;
  ym.pixel_lo = bottom;
  ym.pixel_hi = top;

  const int clip = out.clip(left, top, right - left, bottom - top);
  if (!chart.title.empty()) out.text((left + right) / 2, y0 + 18, chart.title, Anchor::middle, kFontSize, true);

  // Grid and ticks.
  for (double t : ym.ticks) {
    double y = ym.to_pixel(t);
    out.line(left, y, right, y, kGridMajor);
    out.text(left - 6, y + 4, ym.label(chart.y, t), Anchor::end);
  }
  for (double t : xm.ticks) {
    double x = xm.to_pixel(t);
    out.line(x, top, x, bottom, kGridMinor);
    out.line(x, bottom, x, bottom + 4, kInk);
    out.text(x, bottom + 17, xm.label(chart.x, t), Anchor::middle);
  }
  out.add(Rect{left, top, right - left, bottom - top, std::nullopt, 1.0, kInk, ""});
  if (!chart.x.label.empty()) out.text((left + right) / 2, bottom + 36, chart.x.label, Anchor::middle);
  if (!chart.y.label.empty()) out.text(x0 + 14, (top + bottom) / 2, chart.y.label, Anchor::middle, kFontSize, false, -90);

  // Data. Zero-height bars are left out: they would be invisible, and a
  // histogram's bars are then exactly its non-empty bins.
  const double bar_width = chart.kind == ChartKind::bars ? bar_width_of(chart) : 0.0;
  const double baseline = chart.y.scale == Scale::linear ? ym.to_pixel(std::max(ym.lo, 0.0)) : bottom;
  const double bar_opacity = chart.series.size() > 1 ? 0.55 : 0.85;
  for (const Series& s : chart.series) {
    const Rgb color = colors.color_of(s);
    Polyline polyline{{}, color, 1.8, s.style};
    for (const Point& p : s.points) {
      if (!usable(p.x, chart.x.scale) || !usable(p.y, chart.y.scale)) continue;
      double x = xm.to_pixel(p.x), y = ym.to_pixel(p.y);
      if (chart.kind == ChartKind::bars) {
        if (y == baseline) continue;
        double xa = xm.to_pixel(p.x - bar_width / 2), xb = xm.to_pixel(p.x + bar_width / 2);
        if (chart.x.scale != Scale::linear && p.x - bar_width / 2 <= 0) xa = left;
        out.add(Rect{std::min(xa, xb), std::min(y, baseline), std::max(std::fabs(xb - xa), 0.5), std::fabs(baseline - y),
                     color, bar_opacity, std::nullopt, "bar"},
                clip);
        continue;
      }
      polyline.points.push_back({x, y});
      if (s.markers) out.add(Circle{x, y, 2.5, color}, clip);
    }
    if (!polyline.points.empty()) out.add(std::move(polyline), clip);
  }
}

struct NamedColor {
  std::string_view name;
  Rgb rgb;
};
// Natural names for the palette's colors (so "red", "green", "blue" and "gray"
// give image channels their own colors), plus white.
constexpr NamedColor kNamedColors[] = {
    {"black", {0x00, 0x00, 0x00}},    {"white", {0xff, 0xff, 0xff}},  {"gray", {0x7f, 0x7f, 0x7f}},
    {"grey", {0x7f, 0x7f, 0x7f}},     {"red", {0xd6, 0x27, 0x28}},    {"green", {0x2c, 0xa0, 0x2c}},
    {"blue", {0x1f, 0x77, 0xb4}},     {"orange", {0xe6, 0x9f, 0x00}}, {"vermillion", {0xd5, 0x5e, 0x00}},
    {"yellow", {0xf0, 0xe4, 0x42}},   {"purple", {0x94, 0x67, 0xbd}}, {"pink", {0xcc, 0x79, 0xa7}},
    {"brown", {0x8c, 0x56, 0x4b}},    {"olive", {0xbc, 0xbd, 0x22}},  {"cyan", {0x17, 0xbe, 0xcf}},
    {"skyblue", {0x56, 0xb4, 0xe9}},  {"bluishgreen", {0x00, 0x9e, 0x73}},
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

std::optional<Rgb> parse_hex(std::string_view t) {
  if (t.empty() || t[0] != '#' || (t.size() != 7 && t.size() != 4)) return std::nullopt;
  std::array<int, 6> d{};
  const std::size_t n = t.size() - 1;
  for (std::size_t i = 0; i < n; ++i)
    if ((d[i] = hex_digit(t[i + 1])) < 0) return std::nullopt;
  auto channel = [&](std::size_t i) {
    return static_cast<std::uint8_t>(n == 6 ? d[2 * i] * 16 + d[2 * i + 1] : d[i] * 17);  // #rgb: each digit doubled
  };
  return Rgb{channel(0), channel(1), channel(2)};
}

void finish_size(Scene& scene, double width, double height) {
  scene.width = width;
  scene.height = height;
  scene.font_size = kFontSize;
}

}  // namespace

Rgb parse_color(std::string_view text) {
  if (auto rgb = parse_hex(text)) return *rgb;
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const NamedColor& c : kNamedColors)
    if (c.name == lower) return c.rgb;
  throw Error(ErrorKind::usage, "unknown plot color '" + std::string(text) + "'",
              "use #rrggbb, #rgb or one of " + std::string(named_colors()));
}

std::string_view named_colors() {
  static const std::string names = [] {
    std::string s;
    for (const NamedColor& c : kNamedColors) s += (s.empty() ? "" : ", ") + std::string(c.name);
    return s;
  }();
  return names;
}

TextParts split_superscript(std::string_view text) {
  std::size_t caret = text.find('^');
  if (caret == std::string_view::npos) return {text, {}};
  return {text.substr(0, caret), text.substr(caret + 1)};
}

Scene layout(const Chart& chart, double width, double height) {
  Scene scene;
  Builder out(scene);
  ColorAssignment colors;
  std::vector<LegendEntry> entries;
  if (chart.legend) entries = legend_entries({&chart}, colors);
  const double legend_w = legend_width(entries);
  panel(out, chart, 0.0, 0.0, width - legend_w, height, colors);
  legend(out, entries, width - legend_w, kMarginTop + kLegendRow);
  finish_size(scene, width, std::max(height, kMarginTop + kLegendRow * (static_cast<double>(entries.size()) + 1)));
  return scene;
}

Scene layout(const Figure& figure) {
  Scene scene;
  Builder out(scene);
  ColorAssignment colors;
  std::vector<const Chart*> charts;
  for (const Chart& c : figure.panels) charts.push_back(&c);
  std::vector<LegendEntry> entries = legend_entries(charts, colors);
  const std::size_t count = std::max<std::size_t>(figure.panels.size(), 1);
  const std::size_t columns = figure.columns > 0 ? std::min<std::size_t>(figure.columns, count) : count;
  const std::size_t rows = (count + columns - 1) / columns;
  const double title_h = figure.title.empty() ? 0.0 : kFigureTitleHeight;
  const double legend_w = legend_width(entries);
  const double width = static_cast<double>(columns) * figure.panel_width + legend_w;
  const double height = std::max(title_h + static_cast<double>(rows) * figure.panel_height,
                                 title_h + kMarginTop + kLegendRow * (static_cast<double>(entries.size()) + 1));
  if (!figure.title.empty()) out.text(width / 2, 20, figure.title, Anchor::middle, 15.0, true);
  for (std::size_t i = 0; i < figure.panels.size(); ++i) {
    double x0 = static_cast<double>(i % columns) * figure.panel_width;
    double y0 = title_h + static_cast<double>(i / columns) * figure.panel_height;
    panel(out, figure.panels[i], x0, y0, figure.panel_width, figure.panel_height, colors);
  }
  legend(out, entries, static_cast<double>(columns) * figure.panel_width, title_h + kMarginTop + kLegendRow);
  finish_size(scene, width, height);
  return scene;
}

}  // namespace scene

std::string_view palette_color(std::size_t i) { return scene::kPalette[i % std::size(scene::kPalette)]; }

}  // namespace levelhist::plot
