// SVG rendering for plot.hpp: hand-written markup, no dependencies.
#include "levelhist/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>

#include "levelhist/error.hpp"

namespace levelhist::plot {
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
std::string px(double v) { return fmt("%.1f", v); }

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Text content with "a^b" drawn as a followed by a superscript b.
std::string text_content(std::string_view label) {
  std::size_t caret = label.find('^');
  if (caret == std::string_view::npos) return escape_xml(label);
  return escape_xml(label.substr(0, caret)) + "<tspan dy=\"-5\" font-size=\"" + px(kFontSize * 0.75) + "\">" +
         escape_xml(label.substr(caret + 1)) + "</tspan>";
}

std::string text(double x, double y, std::string_view label, const char* anchor, const std::string& extra = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" +
         text_content(label) + "</text>\n";
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
  std::string color_of(const Series& s) {
    if (!s.color.empty()) return s.color;
    auto [it, added] = index_.try_emplace(s.label, next_);
    if (added) ++next_;
    return std::string(palette_color(it->second));
  }

 private:
  std::map<std::string, std::size_t> index_;
  std::size_t next_ = 0;
};

const char* dash_array(LineStyle style) {
  switch (style) {
    case LineStyle::dashed: return " stroke-dasharray=\"7 4\"";
    case LineStyle::dotted: return " stroke-dasharray=\"2 3\"";
    case LineStyle::solid: break;
  }
  return "";
}

struct LegendEntry {
  std::string label;
  std::string color;
  LineStyle style;
  ChartKind kind;
};

// The legend entries of charts, one per distinct label, in order of first appearance.
std::vector<LegendEntry> legend_entries(const std::vector<const Chart*>& charts, ColorAssignment& colors) {
  std::vector<LegendEntry> entries;
  for (const Chart* chart : charts)
    for (const Series& s : chart->series) {
      std::string color = colors.color_of(s);
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

std::string render_legend(const std::vector<LegendEntry>& entries, double x, double y) {
  std::string out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    double row = y + static_cast<double>(i) * kLegendRow;
    double sx = x + kLegendPad;
    if (e.kind == ChartKind::bars) {
      out += "<rect x=\"" + px(sx) + "\" y=\"" + px(row - 9) + "\" width=\"" + px(kLegendSwatch) +
             "\" height=\"10\" fill=\"" + e.color + "\" fill-opacity=\"0.7\"/>\n";
    } else {
      out += "<line x1=\"" + px(sx) + "\" y1=\"" + px(row - 4) + "\" x2=\"" + px(sx + kLegendSwatch) + "\" y2=\"" +
             px(row - 4) + "\" stroke=\"" + e.color + "\" stroke-width=\"2\"" + dash_array(e.style) + "/>\n";
    }
    out += text(sx + kLegendSwatch + 6.0, row, e.label, "start");
  }
  return out;
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

// One chart drawn into the rectangle (x0, y0, w, h) of the document.
std::string render_panel(const Chart& chart, double x0, double y0, double w, double h, ColorAssignment& colors,
                         int clip_id) {
  const double left = x0 + kMarginLeft, right = x0 + w - kMarginRight;
  const double top = y0 + kMarginTop, bottom = y0 + h - kMarginBottom;
  Extent e = extent_of(chart);
  AxisMap xm = layout_axis(chart.x, e.x_lo, e.x_hi, /*pad_to_ticks=*/false);
  AxisMap ym = layout_axis(chart.y, e.y_lo, e.y_hi, /*pad_to_ticks=*/true);
  xm.pixel_lo = left;
  xm.pixel_hi = right;
  ym.pixel_lo = bottom;
  ym.pixel_hi = top;

  std::string out;
  const std::string clip = "clip" + std::to_string(clip_id);
  out += "<clipPath id=\"" + clip + "\"><rect x=\"" + px(left) + "\" y=\"" + px(top) + "\" width=\"" +
         px(right - left) + "\" height=\"" + px(bottom - top) + "\"/></clipPath>\n";
  if (!chart.title.empty()) out += text((left + right) / 2, y0 + 18, chart.title, "middle", " font-weight=\"bold\"");

  // Grid and ticks.
  for (double t : ym.ticks) {
    double y = ym.to_pixel(t);
    out += "<line x1=\"" + px(left) + "\" y1=\"" + px(y) + "\" x2=\"" + px(right) + "\" y2=\"" + px(y) +
           "\" stroke=\"#e4e4e4\"/>\n";
    out += text(left - 6, y + 4, ym.label(chart.y, t), "end");
  }
  for (double t : xm.ticks) {
    double x = xm.to_pixel(t);
    out += "<line x1=\"" + px(x) + "\" y1=\"" + px(top) + "\" x2=\"" + px(x) + "\" y2=\"" + px(bottom) +
           "\" stroke=\"#f0f0f0\"/>\n";
    out += "<line x1=\"" + px(x) + "\" y1=\"" + px(bottom) + "\" x2=\"" + px(x) + "\" y2=\"" + px(bottom + 4) +
           "\" stroke=\"#333\"/>\n";
    out += text(x, bottom + 17, xm.label(chart.x, t), "middle");
  }
  out += "<rect x=\"" + px(left) + "\" y=\"" + px(top) + "\" width=\"" + px(right - left) + "\" height=\"" +
         px(bottom - top) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  if (!chart.x.label.empty()) out += text((left + right) / 2, bottom + 36, chart.x.label, "middle");
  if (!chart.y.label.empty()) {
    double cx = x0 + 14, cy = (top + bottom) / 2;
    out += text(cx, cy, chart.y.label, "middle", " transform=\"rotate(-90 " + px(cx) + " " + px(cy) + ")\"");
  }

  // Data.
  out += "<g clip-path=\"url(#" + clip + ")\">\n";
  const double bar_width = chart.kind == ChartKind::bars ? bar_width_of(chart) : 0.0;
  const double baseline = chart.y.scale == Scale::linear ? ym.to_pixel(std::max(ym.lo, 0.0)) : bottom;
  const double bar_opacity = chart.series.size() > 1 ? 0.55 : 0.85;
  for (const Series& s : chart.series) {
    const std::string color = colors.color_of(s);
    std::string polyline;
    for (const Point& p : s.points) {
      if (!usable(p.x, chart.x.scale) || !usable(p.y, chart.y.scale)) continue;
      double x = xm.to_pixel(p.x), y = ym.to_pixel(p.y);
      if (chart.kind == ChartKind::bars) {
        double xa = xm.to_pixel(p.x - bar_width / 2), xb = xm.to_pixel(p.x + bar_width / 2);
        if (chart.x.scale != Scale::linear && p.x - bar_width / 2 <= 0) xa = left;
        out += "<rect x=\"" + px(std::min(xa, xb)) + "\" y=\"" + px(std::min(y, baseline)) + "\" width=\"" +
               px(std::max(std::fabs(xb - xa), 0.5)) + "\" height=\"" + px(std::fabs(baseline - y)) + "\" fill=\"" +
               color + "\" fill-opacity=\"" + fmt("%.2f", bar_opacity) + "\"/>\n";
        continue;
      }
      polyline += px(x) + "," + px(y) + " ";
      if (s.markers)
        out += "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"2.5\" fill=\"" + color + "\"/>\n";
    }
    if (!polyline.empty())
      out += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.8\"" + dash_array(s.style) +
             " points=\"" + polyline + "\"/>\n";
  }
  out += "</g>\n";
  return out;
}

std::string document(double width, double height, const std::string& body) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         px(width) + "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
         "\" font-family=\"sans-serif\" font-size=\"" + px(kFontSize) + "\">\n<rect width=\"100%\" height=\"100%\" " +
         "fill=\"white\"/>\n" + body + "</svg>\n";
}

}  // namespace

std::string_view palette_color(std::size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string render_svg(const Chart& chart, double width, double height) {
  ColorAssignment colors;
  std::vector<LegendEntry> legend;
  if (chart.legend) legend = legend_entries({&chart}, colors);
  const double legend_w = legend_width(legend);
  std::string body = render_panel(chart, 0.0, 0.0, width - legend_w, height, colors, 0);
  body += render_legend(legend, width - legend_w, kMarginTop + kLegendRow);
  return document(width, std::max(height, kMarginTop + kLegendRow * (static_cast<double>(legend.size()) + 1)), body);
}

std::string render_svg(const Figure& figure) {
  ColorAssignment colors;
  std::vector<const Chart*> charts;
  for (const Chart& c : figure.panels) charts.push_back(&c);
  std::vector<LegendEntry> legend = legend_entries(charts, colors);
  const std::size_t count = std::max<std::size_t>(figure.panels.size(), 1);
  const std::size_t columns = figure.columns > 0 ? std::min<std::size_t>(figure.columns, count) : count;
  const std::size_t rows = (count + columns - 1) / columns;
  const double title_h = figure.title.empty() ? 0.0 : kFigureTitleHeight;
  const double legend_w = legend_width(legend);
  const double width = static_cast<double>(columns) * figure.panel_width + legend_w;
  const double height = std::max(title_h + static_cast<double>(rows) * figure.panel_height,
                                 title_h + kMarginTop + kLegendRow * (static_cast<double>(legend.size()) + 1));
  std::string body;
  if (!figure.title.empty())
    body += text(width / 2, 20, figure.title, "middle", " font-size=\"15\" font-weight=\"bold\"");
  for (std::size_t i = 0; i < figure.panels.size(); ++i) {
    double x0 = static_cast<double>(i % columns) * figure.panel_width;
    double y0 = title_h + static_cast<double>(i / columns) * figure.panel_height;
    body += render_panel(figure.panels[i], x0, y0, figure.panel_width, figure.panel_height, colors,
                         static_cast<int>(i));
  }
  body += render_legend(legend, static_cast<double>(columns) * figure.panel_width, title_h + kMarginTop + kLegendRow);
  return document(width, height, body);
}

void write_svg_file(const std::string& path, const std::string& svg) {
  std::ofstream out(path, std::ios::binary);
  out << svg;
  out.flush();
  if (!out) throw Error(ErrorKind::input, "cannot write " + path);
}

}  // namespace levelhist::plot
