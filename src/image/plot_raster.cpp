// Raster output for plot.hpp: a laid-out scene (plot_scene.hpp) drawn into an
// 8-bit RGB image, for PNG plots. No anti-aliasing: a pixel belongs to a shape
// when its centre does, lines are 1 or 2 px wide, text uses the 5x7 font of
// plot_font.hpp scaled by whole pixels -- simple, exact to test, and readable
// at the sizes charts use.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "levelhist/error.hpp"
#include "plot_font.hpp"
#include "plot_scene.hpp"

namespace levelhist::plot {
namespace {

using namespace scene;

// Image sides beyond this are a mistake rather than a plot (and would ask for gigabytes).
constexpr double kMaxSide = 16384.0;

// The on and off lengths of a line style in pixels, as the SVG dash arrays.
struct Dash {
  double on = 0, off = 0;  // off 0: solid
};
Dash dash_of(LineStyle style) {
  switch (style) {
    case LineStyle::dashed: return {7.0, 4.0};
    case LineStyle::dotted: return {2.0, 3.0};
    case LineStyle::solid: break;
  }
  return {};
}

class Canvas {
 public:
  explicit Canvas(image::Image& img) : img_(img) { unclip(); }

  // Pixels whose centre lies inside the rectangle may be drawn.
  void clip(const ClipRect& c) {
    x0_ = std::max(0, static_cast<int>(std::ceil(c.x - 0.5)));
    y0_ = std::max(0, static_cast<int>(std::ceil(c.y - 0.5)));
    x1_ = std::min(static_cast<int>(img_.width), static_cast<int>(std::ceil(c.x + c.w - 0.5)));
    y1_ = std::min(static_cast<int>(img_.height), static_cast<int>(std::ceil(c.y + c.h - 0.5)));
  }
  void unclip() {
    x0_ = y0_ = 0;
    x1_ = static_cast<int>(img_.width);
    y1_ = static_cast<int>(img_.height);
  }

  void pixel(int x, int y, Rgb c, double alpha = 1.0) {
    if (x < x0_ || x >= x1_ || y < y0_ || y >= y1_) return;
    std::uint8_t* p = &img_.bytes[(static_cast<std::size_t>(y) * img_.width + static_cast<std::size_t>(x)) * 3];
    auto mix = [alpha](std::uint8_t under, std::uint8_t over) {
      return static_cast<std::uint8_t>(std::lround(over * alpha + under * (1.0 - alpha)));
    };
    p[0] = mix(p[0], c.r);
    p[1] = mix(p[1], c.g);
    p[2] = mix(p[2], c.b);
  }

  // The pixels whose centres lie inside; a sliver thinner than a pixel still
  // gets the row or column its middle falls in, so a narrow bar never vanishes.
  void fill(double x, double y, double w, double h, Rgb c, double alpha) {
    auto span = [](double a, double len) {
      int lo = static_cast<int>(std::ceil(a - 0.5)), hi = static_cast<int>(std::ceil(a + len - 0.5));
      if (hi <= lo) lo = static_cast<int>(std::floor(a + len / 2)), hi = lo + 1;
      return std::pair{lo, hi};
    };
    auto [xa, xb] = span(x, w);
    auto [ya, yb] = span(y, h);
    for (int py = ya; py < yb; ++py)
      for (int px = xa; px < xb; ++px) pixel(px, py, c, alpha);
  }

  // A square pen of `thickness` pixels centred on (x, y). The nudge keeps a
  // point computed as 128.99999... on pixel 129, so straight lines have no holes.
  void dot(double x, double y, int thickness, Rgb c) {
    constexpr double kNudge = 1e-6;
    int xa = static_cast<int>(std::floor(x - thickness / 2.0 + 0.5 + kNudge));
    int ya = static_cast<int>(std::floor(y - thickness / 2.0 + 0.5 + kNudge));
    for (int dy = 0; dy < thickness; ++dy)
      for (int dx = 0; dx < thickness; ++dx) pixel(xa + dx, ya + dy, c);
  }

  // Steps the pen along the segment one pixel at a time. `travelled` carries
  // the dash pattern's position from one segment of a polyline to the next.
  void segment(Point a, Point b, double width, Rgb c, Dash dash, double& travelled) {
    const int thickness = std::max(1, static_cast<int>(std::lround(width)));
    const double dx = b.x - a.x, dy = b.y - a.y, length = std::hypot(dx, dy);
    const int steps = std::max(1, static_cast<int>(std::ceil(std::max(std::fabs(dx), std::fabs(dy)))));
    for (int i = 0; i <= steps; ++i) {
      double t = static_cast<double>(i) / steps;
      if (dash.off > 0 && std::fmod(travelled + t * length, dash.on + dash.off) >= dash.on) continue;
      dot(a.x + t * dx, a.y + t * dy, thickness, c);
    }
    travelled += length;
  }

  void disc(double cx, double cy, double r, Rgb c) {
    for (int py = static_cast<int>(std::floor(cy - r)); py <= static_cast<int>(std::ceil(cy + r)); ++py)
      for (int px = static_cast<int>(std::floor(cx - r)); px <= static_cast<int>(std::ceil(cx + r)); ++px)
        if (std::hypot(px + 0.5 - cx, py + 0.5 - cy) <= r) pixel(px, py, c);
  }

 private:
  image::Image& img_;
  int x0_ = 0, y0_ = 0, x1_ = 0, y1_ = 0;  // the drawable pixels [x0, x1) x [y0, y1)
};

// ---- text --------------------------------------------------------------------

// Whole-pixel glyph scale for a font size: the 7-row font stands for 12 px text.
int glyph_scale(double size) { return std::max(1, static_cast<int>(std::lround(size / 12.0))); }

// Characters drawn for a UTF-8 string: one per code point (continuation bytes
// are skipped), non-ASCII shown as '?'.
std::size_t drawn_chars(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

int run_width(std::string_view s, int scale) {
  std::size_t n = drawn_chars(s);
  return n == 0 ? 0 : static_cast<int>(n) * font::kAdvance * scale - scale;
}

// Draws text in its own frame -- u along the text, v down, the baseline at
// v = 0 -- turned by the rotation and placed at the anchor point.
class TextPen {
 public:
  TextPen(Canvas& canvas, const Text& t) : canvas_(canvas), t_(t) {
    const double radians = t.rotate * std::acos(-1.0) / 180.0;
    cos_ = static_cast<int>(std::lround(std::cos(radians)));
    sin_ = static_cast<int>(std::lround(std::sin(radians)));
  }

  void draw() {
    TextParts parts = split_superscript(t_.text);
    const int scale = glyph_scale(t_.size), sup_scale = glyph_scale(t_.size * kSuperscriptScale);
    const bool has_sup = parts.base.size() < t_.text.size();
    const int base_w = run_width(parts.base, scale);
    const int total = base_w + (has_sup ? scale + run_width(parts.superscript, sup_scale) : 0);
    int u = t_.anchor == Anchor::start ? 0 : t_.anchor == Anchor::middle ? -total / 2 : -total;
    run(parts.base, u, 0, scale);
    if (has_sup)
      run(parts.superscript, u + base_w + scale, -static_cast<int>(std::lround(kSuperscriptRise * t_.size / 12.0)),
          sup_scale);
  }

 private:
  void run(std::string_view s, int u, int v_baseline, int scale) {
    for (char ch : s) {
      if ((ch & 0xC0) == 0x80) continue;  // UTF-8 continuation: its code point already drew a '?'
      const font::Glyph& g = font::glyph(static_cast<unsigned char>(ch));
      for (int row = 0; row < font::kGlyphHeight; ++row)
        for (int col = 0; col < font::kGlyphWidth; ++col) {
          if (!g.ink(col, row)) continue;
          int v = v_baseline - (font::kGlyphHeight - row) * scale;
          block(u + col * scale, v, scale);
          if (t_.bold) block(u + col * scale + 1, v, scale);  // bold: the strokes doubled one pixel along
        }
      u += font::kAdvance * scale;
    }
  }
  // The scale x scale block at (u, v) of the text frame.
  void block(int u, int v, int scale) {
    for (int dv = 0; dv < scale; ++dv)
      for (int du = 0; du < scale; ++du) {
        // Rotate the pixel's centre (SVG's rotate(): x' = x cos - y sin, y' = x sin + y cos) and take the pixel there.
        double cu = u + du + 0.5, cv = v + dv + 0.5;
        double x = t_.x + cu * cos_ - cv * sin_, y = t_.y + cu * sin_ + cv * cos_;
        canvas_.pixel(static_cast<int>(std::floor(x)), static_cast<int>(std::floor(y)), t_.color);
      }
  }

  Canvas& canvas_;
  const Text& t_;
  int cos_ = 1, sin_ = 0;
};

// ---- shapes ------------------------------------------------------------------

class Painter {
 public:
  explicit Painter(Canvas& canvas) : canvas_(canvas) {}

  void operator()(const Rect& r) {
    if (r.fill) canvas_.fill(r.x, r.y, r.w, r.h, *r.fill, r.fill_opacity);
    if (!r.stroke) return;
    const Point corners[] = {{r.x, r.y}, {r.x + r.w, r.y}, {r.x + r.w, r.y + r.h}, {r.x, r.y + r.h}, {r.x, r.y}};
    double travelled = 0;
    for (int i = 0; i < 4; ++i) canvas_.segment(corners[i], corners[i + 1], 1.0, *r.stroke, {}, travelled);
  }
  void operator()(const Line& l) {
    double travelled = 0;
    canvas_.segment({l.x1, l.y1}, {l.x2, l.y2}, l.width, l.color, dash_of(l.style), travelled);
  }
  void operator()(const Polyline& p) {
    double travelled = 0;
    for (std::size_t i = 1; i < p.points.size(); ++i)
      canvas_.segment(p.points[i - 1], p.points[i], p.width, p.color, dash_of(p.style), travelled);
    if (p.points.size() == 1) canvas_.dot(p.points[0].x, p.points[0].y, 2, p.color);
  }
  void operator()(const Circle& c) { canvas_.disc(c.cx, c.cy, c.r, c.fill); }
  void operator()(const Text& t) { TextPen(canvas_, t).draw(); }

 private:
  Canvas& canvas_;
};

image::Image rasterize(const Scene& s) {
  if (!(s.width >= 1.0 && s.width <= kMaxSide && s.height >= 1.0 && s.height <= kMaxSide))
    throw Error(ErrorKind::usage,
                "a plot image must be 1 to 16384 pixels on each side, not " + std::to_string(s.width) + " x " +
                    std::to_string(s.height),
                "give a smaller size");
  image::Image img;
  img.width = static_cast<std::uint32_t>(std::ceil(s.width));
  img.height = static_cast<std::uint32_t>(std::ceil(s.height));
  img.channels = 3;
  img.bit_depth = 8;
  img.maxval = 255;
  img.bytes.resize(std::size_t{img.width} * img.height * 3);
  for (std::size_t i = 0; i < img.bytes.size(); i += 3) {
    img.bytes[i] = s.background.r;
    img.bytes[i + 1] = s.background.g;
    img.bytes[i + 2] = s.background.b;
  }
  Canvas canvas(img);
  Painter painter(canvas);
  for (const Item& item : s.items) {
    if (item.clip >= 0) canvas.clip(s.clips[static_cast<std::size_t>(item.clip)]);
    else canvas.unclip();
    std::visit(painter, item.shape);
  }
  return img;
}

}  // namespace

image::Image render_image(const Chart& chart, int width, int height) {
  return rasterize(scene::layout(chart, width, height));
}
image::Image render_image(const Figure& figure) { return rasterize(scene::layout(figure)); }

}  // namespace levelhist::plot
