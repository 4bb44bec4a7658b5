// What the image tests share: patterned images, Netpbm files written here
// byte by byte (independently of the library's encoder, with comments in the
// header), and PNG files written with libpng directly (palettes, low bit
// depths) when the build has PNG.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <levelhist/image.hpp>

#if LEVELHIST_HAVE_PNG
#include <png.h>

#include <csetjmp>
#endif

namespace image_test {

using levelhist::image::Image;

// Samples spread over 0..maxval (high bytes of 16-bit samples included):
// channel c of pixel (x, y) is (x * 7919 + y * 104729 + c * 15485863 + seed *
// 13) mod (maxval + 1), and the first sample is maxval so the top value occurs.
inline Image pattern(std::uint32_t w, std::uint32_t h, std::uint32_t channels, std::uint32_t depth,
                     std::uint32_t maxval, std::uint32_t seed = 0) {
  Image img = Image::blank(w, h, channels, depth, maxval);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      for (std::uint32_t c = 0; c < channels; ++c)
        img.set(x, y, c, static_cast<std::uint32_t>((std::uint64_t{x} * 7919 + std::uint64_t{y} * 104729 + std::uint64_t{c} * 15485863 + seed * 13) % (maxval + 1)));
  img.set(0, 0, 0, maxval);
  return img;
}

// A gray 8-bit image from rows of values.
inline Image gray8(const std::vector<std::vector<std::uint32_t>>& rows) {
  Image img = Image::blank(static_cast<std::uint32_t>(rows[0].size()), static_cast<std::uint32_t>(rows.size()), 1, 8);
  for (std::uint32_t y = 0; y < img.height; ++y)
    for (std::uint32_t x = 0; x < img.width; ++x) img.set(x, y, 0, rows[y][x]);
  return img;
}

inline bool same_pixels(const Image& a, const Image& b) {
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) return false;
  for (std::uint32_t y = 0; y < a.height; ++y)
    for (std::uint32_t x = 0; x < a.width; ++x)
      for (std::uint32_t c = 0; c < a.channels; ++c)
        if (a.at(x, y, c) != b.at(x, y, c)) return false;
  return true;
}

// A Netpbm file of `img` (gray or RGB): magic P2/P3 (plain) or P5/P6, with a
// comment after the magic, between width and height, and after the maxval.
inline std::string pnm_file(const Image& img, bool plain) {
  const bool gray = img.channels == 1;
  std::string s = plain ? (gray ? "P2" : "P3") : (gray ? "P5" : "P6");
  s += "\n# written by the levelhist tests\n" + std::to_string(img.width) + " # width, then height\n" +
       std::to_string(img.height) + "\n#maxval next\n" + std::to_string(img.maxval) + "\n";
  const bool wide = img.maxval > 255;
  std::size_t i = 0;
  for (std::uint32_t y = 0; y < img.height; ++y) {
    for (std::uint32_t x = 0; x < img.width; ++x)
      for (std::uint32_t c = 0; c < img.channels; ++c, ++i) {
        const std::uint32_t v = img.at(x, y, c);
        if (plain) {
          s += std::to_string(v) + ((i % 7 == 6) ? "\n" : " ");
        } else {
          if (wide) s += static_cast<char>(v >> 8);  // big-endian on disk
          s += static_cast<char>(v & 0xff);
        }
      }
    if (plain && y == 0) s += "\n# a comment between rows of a plain file\n";
  }
  return s;
}

#if LEVELHIST_HAVE_PNG
// A PNG written by libpng itself. `rows` holds packed rows as PNG stores them
// (bit depths below 8 packed MSB first, 16-bit big-endian); palette and trns
// are used for PNG_COLOR_TYPE_PALETTE (trns also for gray: one transparent gray).
struct RawPng {
  std::uint32_t width = 0, height = 0;
  int color_type = PNG_COLOR_TYPE_GRAY;
  int bit_depth = 8;
  std::vector<std::vector<std::uint8_t>> rows;
  std::vector<png_color> palette;
  std::vector<std::uint8_t> trns;  // palette alphas
  int trns_gray = -1;              // gray: this value is transparent
  int interlace = PNG_INTERLACE_NONE;  // or PNG_INTERLACE_ADAM7
};

inline void raw_png_write(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), n);
}

// Only trivially destructible locals between setjmp and the libpng calls.
inline bool raw_png_encode(const RawPng& p, std::string& out, std::vector<png_bytep>& rows) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) return false;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, &out, raw_png_write, nullptr);
  png_set_IHDR(png, info, p.width, p.height, p.bit_depth, p.color_type, p.interlace, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!p.palette.empty()) png_set_PLTE(png, info, p.palette.data(), static_cast<int>(p.palette.size()));
  png_color_16 gray_trns{};
  if (!p.trns.empty()) png_set_tRNS(png, info, p.trns.data(), static_cast<int>(p.trns.size()), nullptr);
  if (p.trns_gray >= 0) {
    gray_trns.gray = static_cast<png_uint_16>(p.trns_gray);
    png_set_tRNS(png, info, nullptr, 0, &gray_trns);
  }
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

inline std::string raw_png(const RawPng& p) {
  std::string out;
  std::vector<png_bytep> rows;
  for (const auto& r : p.rows) rows.push_back(const_cast<png_bytep>(r.data()));
  if (!raw_png_encode(p, out, rows)) out.clear();
  return out;
}
#endif

inline std::vector<std::uint8_t> as_bytes(const std::string& s) { return {s.begin(), s.end()}; }

}  // namespace image_test
