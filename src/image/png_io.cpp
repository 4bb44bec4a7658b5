// PNG through libpng: every PNG reads as 8- or 16-bit gray, gray+alpha, RGB
// or RGBA (palettes expanded to RGB, tRNS to an alpha channel, bit depths
// below 8 widened to 8, 16-bit samples to host order); writing takes any
// Image.
//
// libpng reports errors by longjmp to the setjmp of png_jmpbuf. A longjmp
// that skips a C++ destructor is undefined, so each libpng session runs in a
// function (run_read / run_write) whose own frame holds only trivially
// destructible locals; everything with a destructor lives in the caller,
// which turns the failure into levelhist::Error after the jump. Callbacks we
// give libpng never let a C++ exception through its C frames.
#include <bit>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>

#include "image/image_codecs.hpp"

namespace levelhist::image::detail {

bool looks_like_png(std::span<const std::uint8_t> file) {
  static constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return file.size() >= 8 && std::memcmp(file.data(), kSignature, 8) == 0;
}

}  // namespace levelhist::image::detail

#if LEVELHIST_HAVE_PNG
#include <png.h>

namespace levelhist::image::detail {
namespace {

// What libpng's error callback leaves for the caller: its message.
struct ErrorText {
  char text[200] = "";
};

void on_error(png_structp png, png_const_charp message) {
  auto* e = static_cast<ErrorText*>(png_get_error_ptr(png));
  std::snprintf(e->text, sizeof e->text, "%s", message ? message : "unknown libpng error");
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}  // warnings (e.g. a bad gamma chunk) do not stop a read

struct MemoryReader {
  std::span<const std::uint8_t> file;
  std::size_t pos = 0;
};

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<MemoryReader*>(png_get_io_ptr(png));
  if (n > r->file.size() - r->pos) png_error(png, "the file ends in the middle of the image (truncated)");
  std::memcpy(out, r->file.data() + r->pos, n);
  r->pos += n;
}

void write_bytes(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::vector<std::uint8_t>*>(png_get_io_ptr(png));
  bool failed = false;
  try {
    out->insert(out->end(), data, data + n);
  } catch (const std::bad_alloc&) {
    failed = true;
  }
  // Outside the handler: png_error longjmps, which must not leave a catch block.
  if (failed) png_error(png, "out of memory");
}
void flush_bytes(png_structp) {}

// Owns the libpng structures of one read or write.
struct PngSession {
  bool reading;
  png_structp png = nullptr;
  png_infop info = nullptr;
  ErrorText error;
  explicit PngSession(bool read) : reading(read) {
    png = read ? png_create_read_struct(PNG_LIBPNG_VER_STRING, &error, on_error, on_warning)
               : png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, on_error, on_warning);
    if (png) info = png_create_info_struct(png);
    if (!png || !info) throw std::bad_alloc();
  }
  ~PngSession() {
    if (reading) png_destroy_read_struct(&png, &info, nullptr);
    else png_destroy_write_struct(&png, &info);
  }
  PngSession(const PngSession&) = delete;
  PngSession& operator=(const PngSession&) = delete;
};

// The decoded shape, filled by run_read before it allocates.
struct ReadShape {
  std::uint32_t width = 0, height = 0, channels = 0, bit_depth = 0;
};

enum class ReadStatus { ok, libpng_error, too_large };

// Only trivially destructible locals here (see the file comment); `bytes` and
// `rows` belong to the caller.
ReadStatus run_read(PngSession& s, MemoryReader& reader, ReadShape& shape, std::vector<std::uint8_t>& bytes,
                    std::vector<png_bytep>& rows) {
  if (setjmp(png_jmpbuf(s.png))) return ReadStatus::libpng_error;
  png_set_read_fn(s.png, &reader, read_bytes);
  png_read_info(s.png, s.info);
  const int color = png_get_color_type(s.png, s.info);
  const int depth = png_get_bit_depth(s.png, s.info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s.png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(s.png);
  // A tRNS chunk (transparent palette entries or one transparent color) becomes a real alpha channel.
  if (png_get_valid(s.png, s.info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(s.png);
  if (depth == 16 && std::endian::native == std::endian::little) png_set_swap(s.png);
  png_set_interlace_handling(s.png);
  png_read_update_info(s.png, s.info);
  shape.width = png_get_image_width(s.png, s.info);
  shape.height = png_get_image_height(s.png, s.info);
  shape.channels = png_get_channels(s.png, s.info);
  shape.bit_depth = png_get_bit_depth(s.png, s.info);
  const std::size_t size = image_bytes(shape.width, shape.height, shape.channels, shape.bit_depth);
  if (size == 0) return ReadStatus::too_large;
  bytes.resize(size);
  rows.resize(shape.height);
  const std::size_t row_bytes = size / shape.height;
  for (std::uint32_t y = 0; y < shape.height; ++y) rows[y] = bytes.data() + y * row_bytes;
  png_read_image(s.png, rows.data());
  png_read_end(s.png, nullptr);
  return ReadStatus::ok;
}

bool run_write(PngSession& s, const Image& img, std::vector<std::uint8_t>& out, std::vector<png_bytep>& rows) {
  if (setjmp(png_jmpbuf(s.png))) return false;
  static constexpr int kColor[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(s.png, &out, write_bytes, flush_bytes);
  png_set_IHDR(s.png, s.info, img.width, img.height, static_cast<int>(img.bit_depth), kColor[img.channels],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(s.png, s.info);
  if (img.bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(s.png);
  png_write_image(s.png, rows.data());
  png_write_end(s.png, nullptr);
  return true;
}

}  // namespace

Image decode_png(std::span<const std::uint8_t> file, const std::string& name) {
  PngSession s(true);
  MemoryReader reader{file, 0};
  ReadShape shape;
  Image img;
  std::vector<png_bytep> rows;
  switch (run_read(s, reader, shape, img.bytes, rows)) {
    case ReadStatus::ok: break;
    case ReadStatus::libpng_error:
      input_error(name, std::string("not a valid PNG image (libpng: ") + s.error.text + ")",
                  "the file is damaged or incomplete: re-create it");
    case ReadStatus::too_large:
      input_error(name, "a PNG image of " + std::to_string(shape.width) + " x " + std::to_string(shape.height) +
                            " pixels is too large for memory", "the file is damaged or not a real image");
  }
  img.width = shape.width;
  img.height = shape.height;
  img.channels = shape.channels;
  img.bit_depth = shape.bit_depth;
  img.maxval = shape.bit_depth == 16 ? 65535 : 255;
  return img;
}

std::vector<std::uint8_t> encode_png(const Image& img) {
  PngSession s(false);
  std::vector<std::uint8_t> out;
  std::vector<png_bytep> rows(img.height);
  const std::size_t row_bytes = img.bytes.size() / img.height;
  // libpng takes non-const rows but only reads them when writing.
  auto* base = const_cast<std::uint8_t*>(img.bytes.data());
  for (std::uint32_t y = 0; y < img.height; ++y) rows[y] = base + y * row_bytes;
  if (!run_write(s, img, out, rows))
    throw Error(ErrorKind::input, std::string("cannot encode the PNG image (libpng: ") + s.error.text +
                                      "); check the free memory");
  return out;
}

}  // namespace levelhist::image::detail
#endif
