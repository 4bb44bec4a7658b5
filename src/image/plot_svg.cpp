// SVG output for plot.hpp: a laid-out scene (plot_scene.hpp) written as
// hand-written markup, no dependencies.
#include <cstdio>
#include <span>

#include "image/file_io.hpp"
#include "levelhist/error.hpp"
#include "plot_scene.hpp"

namespace levelhist::plot {
namespace {

using namespace scene;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string px(double v) { return fmt("%.1f", v); }

std::string color(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02X%02X%02X", c.r, c.g, c.b);
  return buf;
}

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

const char* dash_array(LineStyle style) {
  switch (style) {
    case LineStyle::dashed: return " stroke-dasharray=\"7 4\"";
    case LineStyle::dotted: return " stroke-dasharray=\"2 3\"";
    case LineStyle::solid: break;
  }
  return "";
}

const char* anchor_name(Anchor a) {
  switch (a) {
    case Anchor::middle: return "middle";
    case Anchor::end: return "end";
    case Anchor::start: break;
  }
  return "start";
}

// Writes each shape as one element; attributes equal to SVG's defaults (and
// the document's font size) are left out to keep files small.
class Writer {
 public:
  explicit Writer(const Scene& s) : s_(s) {}

  std::string operator()(const Rect& r) const {
    std::string out = "<rect";
    if (!r.role.empty()) out += " class=\"" + escape_xml(r.role) + "\"";
    out += " x=\"" + px(r.x) + "\" y=\"" + px(r.y) + "\" width=\"" + px(r.w) + "\" height=\"" + px(r.h) + "\"";
    out += " fill=\"" + (r.fill ? color(*r.fill) : std::string("none")) + "\"";
    if (r.fill && r.fill_opacity < 1.0) out += " fill-opacity=\"" + fmt("%.2f", r.fill_opacity) + "\"";
    if (r.stroke) out += " stroke=\"" + color(*r.stroke) + "\"";
    return out + "/>\n";
  }
  std::string operator()(const Line& l) const {
    return "<line x1=\"" + px(l.x1) + "\" y1=\"" + px(l.y1) + "\" x2=\"" + px(l.x2) + "\" y2=\"" + px(l.y2) +
           "\" stroke=\"" + color(l.color) + "\"" + stroke_width(l.width) + dash_array(l.style) + "/>\n";
  }
  std::string operator()(const Polyline& p) const {
    std::string points;
    for (const Point& q : p.points) points += px(q.x) + "," + px(q.y) + " ";
    return "<polyline fill=\"none\" stroke=\"" + color(p.color) + "\"" + stroke_width(p.width) +
           dash_array(p.style) + " points=\"" + points + "\"/>\n";
  }
  std::string operator()(const Circle& c) const {
    return "<circle cx=\"" + px(c.cx) + "\" cy=\"" + px(c.cy) + "\" r=\"" + px(c.r) + "\" fill=\"" + color(c.fill) +
           "\"/>\n";
  }
  std::string operator()(const Text& t) const {
    std::string out = "<text x=\"" + px(t.x) + "\" y=\"" + px(t.y) + "\" text-anchor=\"" + anchor_name(t.anchor) + "\"";
    if (t.size != s_.font_size) out += " font-size=\"" + px(t.size) + "\"";
    if (t.bold) out += " font-weight=\"bold\"";
    if (t.color != kBlack) out += " fill=\"" + color(t.color) + "\"";
    if (t.rotate != 0.0) out += " transform=\"rotate(" + fmt("%g", t.rotate) + " " + px(t.x) + " " + px(t.y) + ")\"";
    TextParts parts = split_superscript(t.text);
    out += '>';  // appended alone: GCC 12 warns (-Wrestrict, a false positive) about ">" + string
    out += escape_xml(parts.base);
    if (parts.base.size() < t.text.size())  // there was a '^'
      out += "<tspan dy=\"" + px(-kSuperscriptRise * t.size / 12.0) + "\" font-size=\"" +
             px(t.size * kSuperscriptScale) + "\">" + escape_xml(parts.superscript) + "</tspan>";
    return out + "</text>\n";
  }

 private:
  static std::string stroke_width(double w) { return w == 1.0 ? "" : " stroke-width=\"" + fmt("%g", w) + "\""; }
  const Scene& s_;
};

std::string to_svg(const Scene& s) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    px(s.width) + "\" height=\"" + px(s.height) + "\" viewBox=\"0 0 " + px(s.width) + " " +
                    px(s.height) + "\" font-family=\"sans-serif\" font-size=\"" + px(s.font_size) + "\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"" + color(s.background) + "\"/>\n";
  for (std::size_t i = 0; i < s.clips.size(); ++i) {
    const ClipRect& c = s.clips[i];
    out += "<clipPath id=\"clip" + std::to_string(i) + "\"><rect x=\"" + px(c.x) + "\" y=\"" + px(c.y) +
           "\" width=\"" + px(c.w) + "\" height=\"" + px(c.h) + "\"/></clipPath>\n";
  }
  // Consecutive items with the same clip share one group.
  Writer writer(s);
  int open = -1;
  for (const Item& item : s.items) {
    if (item.clip != open) {
      if (open >= 0) out += "</g>\n";
      if (item.clip >= 0) out += "<g clip-path=\"url(#clip" + std::to_string(item.clip) + ")\">\n";
      open = item.clip;
    }
    out += std::visit(writer, item.shape);
  }
  if (open >= 0) out += "</g>\n";
  return out + "</svg>\n";
}

}  // namespace

std::string render_svg(const Chart& chart, double width, double height) {
  return to_svg(scene::layout(chart, width, height));
}
std::string render_svg(const Figure& figure) { return to_svg(scene::layout(figure)); }

void write_svg_file(const std::string& path, const std::string& svg) {
  // The one writer of every output: a full disk or a signal never leaves half a plot.
  detail::write_file_atomically(path, std::span(reinterpret_cast<const std::uint8_t*>(svg.data()), svg.size()));
}

}  // namespace levelhist::plot
