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

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  // A short read: the end of the data, a read error or the budget; decode_png asks the source which.
  if (static_cast<ByteSource*>(png_get_io_ptr(png))->read(out, n) < n)
    png_error(png, "the file ends in the middle of the image (truncated)");
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
  std::size_t bytes = 0;  // of the decoded pixels
};

enum class ReadStatus { ok, libpng_error, too_large, out_of_memory };

// Only trivially destructible locals here (see the file comment); `bytes`
// belongs to the caller.
ReadStatus run_read(PngSession& s, ByteSource& source, std::uint64_t max_pixels, ReadShape& shape,
                    std::vector<std::uint8_t>& bytes) {
  if (setjmp(png_jmpbuf(s.png))) return ReadStatus::libpng_error;
  png_set_read_fn(s.png, &source, read_bytes);
  // libpng's own check of IHDR, per side (its default is 10^6 x 10^6); decode_png checks the product.
  const auto side = static_cast<png_uint_32>(max_pixels < PNG_UINT_31_MAX ? max_pixels : PNG_UINT_31_MAX);
  png_set_user_limits(s.png, side, side);
  source.set_budget(kMetadataBudget);
  png_read_info(s.png, s.info);
  const int color = png_get_color_type(s.png, s.info);
  const int depth = png_get_bit_depth(s.png, s.info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s.png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(s.png);
  // A tRNS chunk (transparent palette entries or one transparent color) becomes a real alpha channel.
  if (png_get_valid(s.png, s.info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(s.png);
  if (depth == 16 && std::endian::native == std::endian::little) png_set_swap(s.png);
  const int passes = png_set_interlace_handling(s.png);
  png_read_update_info(s.png, s.info);
  shape.width = png_get_image_width(s.png, s.info);
  shape.height = png_get_image_height(s.png, s.info);
  shape.channels = png_get_channels(s.png, s.info);
  shape.bit_depth = png_get_bit_depth(s.png, s.info);
  shape.bytes = image_bytes(shape.width, shape.height, shape.channels, shape.bit_depth);
  if (shape.bytes == 0 || std::uint64_t{shape.width} * shape.height > max_pixels) return ReadStatus::too_large;
  // The compressed pixels are at most their raw bytes (the decoded ones bound
  // them, plus a filter byte per row) stored uncompressed in chunks of any
  // size: twice that, and the metadata after them, is all a real file can hold.
  const std::uint64_t raw = std::uint64_t{shape.bytes} + shape.height;
  source.set_budget(saturating_add(source.taken(), saturating_add(saturating_mul(raw, 2), kMetadataBudget)));
  const std::size_t row_bytes = shape.bytes / shape.height;
  if (passes > 1) {
    // Adam7 fills every row in every pass: the whole image from the start.
    if (!grow_pixels(bytes, shape.bytes, shape.bytes)) return ReadStatus::out_of_memory;
    for (int pass = 0; pass < passes; ++pass)
      for (std::uint32_t y = 0; y < shape.height; ++y) png_read_row(s.png, bytes.data() + y * row_bytes, nullptr);
  } else {
    // Row by row, the buffer growing as rows decode: a 68-byte file that claims
    // a large image fails on its missing data before it costs that memory.
    for (std::uint32_t y = 0; y < shape.height; ++y) {
      if (!grow_pixels(bytes, (std::size_t{y} + 1) * row_bytes, shape.bytes)) return ReadStatus::out_of_memory;
      png_read_row(s.png, bytes.data() + y * row_bytes, nullptr);
    }
  }
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

Image decode_png(ByteSource& source, const std::string& name, std::uint64_t max_pixels) {
  // IHDR is the first chunk, at a fixed place: the claim is checked before libpng allocates anything.
  const std::span<const std::uint8_t> head = source.prefix(24);
  if (head.size() >= 24 && std::memcmp(head.data() + 12, "IHDR", 4) == 0) {
    auto big_endian = [&](std::size_t at) {
      return std::uint32_t{head[at]} << 24 | std::uint32_t{head[at + 1]} << 16 | std::uint32_t{head[at + 2]} << 8 |
             head[at + 3];
    };
    check_pixel_limit(name, "PNG", big_endian(16), big_endian(20), max_pixels);
  }
  PngSession s(true);
  ReadShape shape;
  Image img;
  switch (run_read(s, source, max_pixels, shape, img.bytes)) {
    case ReadStatus::ok: break;
    case ReadStatus::libpng_error:
      if (source.status() == ByteSource::Status::read_error)
        input_error(name, "cannot read it (" + source.error_text() + ")", "check that it is a readable file");
      if (source.status() == ByteSource::Status::over_budget)
        input_error(name,
                    shape.width == 0 ? "the PNG chunks before the pixels go on past " +
                                           std::to_string(source.budget()) + " bytes"
                                     : "the PNG data goes on past " + std::to_string(source.budget()) +
                                           " bytes, more than a " + std::to_string(shape.width) + " x " +
                                           std::to_string(shape.height) + " image and its metadata can need",
                    "the file is damaged or not a real image");
      input_error(name, std::string("not a valid PNG image (libpng: ") + s.error.text + ")",
                  "the file is damaged or incomplete: re-create it");
    case ReadStatus::too_large:
      check_pixel_limit(name, "PNG", shape.width, shape.height, max_pixels);
      input_error(name, "a PNG image of " + std::to_string(shape.width) + " x " + std::to_string(shape.height) +
                            " pixels is too large for memory", "the file is damaged or not a real image");
    case ReadStatus::out_of_memory:
      allocation_error(name, shape.width, shape.height, shape.bytes);
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
    throw Error(ErrorKind::input, std::string("cannot encode the PNG image (libpng: ") + s.error.text + ")",
                "check the free memory");
  return out;
}

}  // namespace levelhist::image::detail
#endif
