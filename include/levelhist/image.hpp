// levelhist: images in memory and on disk, for the image workflow of Wilt
// part 1 (Figures 1-3): read an image, histogram its channels, threshold or
// equalize it, write the result.
//
//   levelhist::image::Image img = levelhist::image::read_image("photo.png");
//   std::vector<levelhist::Histogram> h = levelhist::image::channel_histograms(img);  // image_ops.hpp
//   levelhist::image::write_image("copy.pgm", img);
//
// Formats: Netpbm P2/P5 (gray) and P3/P6 (RGB), maxval 1..65535, 16-bit
// samples big-endian on disk as the format says, '#' comments in headers; PNG
// through libpng (8 and 16 bit; gray, gray+alpha, RGB, RGBA; palettes
// expanded to RGB or RGBA, bit depths below 8 widened to 8) when levelhist was
// built with it (png_supported()); JPEG through libjpeg(-turbo) (8-bit gray
// and color, read as gray or RGB; jpeg_supported()); TIFF through libtiff 4.5+
// (8 and 16 bit unsigned; gray, gray+alpha, RGB, RGBA; strips or tiles,
// planes interleaved or separate, any compression libtiff has; the first
// image of a multi-page file; tiff_supported()). Every malformed file throws
// Error(ErrorKind::input) with one line naming the file and what is wrong.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "levelhist/sample_type.hpp"

namespace levelhist::image {

// Pixels in memory: rows top to bottom, pixels left to right, channels
// interleaved (gray; gray, alpha; R, G, B; R, G, B, A), no padding between rows.
// 8-bit images hold one byte per sample; 16-bit images one host-endian
// std::uint16_t per sample (2 bytes in `bytes`).
struct Image {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t channels = 1;    // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
  std::uint32_t bit_depth = 8;   // 8 or 16: the sample size in memory
  std::uint32_t maxval = 255;    // the largest sample value the file allows (PNM maxval; PNG 255 or 65535)
  std::vector<std::uint8_t> bytes;  // width * height * channels * (bit_depth / 8)

  // u8 or u16.
  SampleType sample_type() const { return bit_depth == 16 ? SampleType::u16 : SampleType::u8; }
  std::size_t bytes_per_sample() const { return bit_depth / 8; }
  std::uint64_t samples() const { return std::uint64_t{width} * height * channels; }
  bool has_alpha() const { return channels == 2 || channels == 4; }
  // The sample of channel c of pixel (x, y), widened.
  std::uint32_t at(std::uint32_t x, std::uint32_t y, std::uint32_t c) const;
  void set(std::uint32_t x, std::uint32_t y, std::uint32_t c, std::uint32_t value);
  // A zeroed image of that shape; throws Error(usage) for channels outside 1..4,
  // a bit depth other than 8/16, maxval 0 or beyond the bit depth, or a size
  // whose byte count does not fit memory.
  static Image blank(std::uint32_t width, std::uint32_t height, std::uint32_t channels, std::uint32_t bit_depth,
                     std::uint32_t maxval = 0 /* 0: 255 or 65535 by bit_depth */);
};

enum class FileFormat : std::uint8_t { pnm, png, jpeg, tiff };

// True when this build reads and writes PNG (libpng found at configure time),
// JPEG (libjpeg) and TIFF (libtiff); Netpbm is always there.
bool png_supported();
bool jpeg_supported();
bool tiff_supported();
bool format_supported(FileFormat format);
// The format an output file name asks for, by its extension (case-insensitive):
// .pgm .ppm .pnm, .png, .jpg .jpeg, .tif .tiff; nullopt for anything else.
std::optional<FileFormat> format_of_extension(const std::string& path);
// "PNM", "PNG", "JPEG", "TIFF".
const char* format_name(FileFormat format);

// How large an image the readers accept. A header is a claim, not proof: a
// 68-byte PNG may claim 100000 x 100000 pixels. The readers check the claim
// against max_pixels right after the header, before allocating anything (as
// libpng's png_set_user_limits and ImageMagick's resource policy do), and
// grow the pixel buffer only as the data really arrives when the file's size
// does not already prove it can hold the raster.
inline constexpr std::uint64_t kDefaultMaxPixels = std::uint64_t{1} << 28;  // 268 M pixels: 2 GiB as 16-bit RGBA
struct ReadLimits {
  // Width x height at most this; 0: the environment variable
  // LEVELHIST_MAX_PIXELS when set (a positive integer; anything else throws
  // Error(usage)), else kDefaultMaxPixels.
  std::uint64_t max_pixels = 0;
};

// Reads a PNM, PNG, JPEG or TIFF file, told apart by its first bytes (not its
// name), from a regular file, a FIFO or a device: it reads only what the
// header says the image needs (plus a bounded slack for comments and
// metadata), so /dev/zero or an endless pipe ends in an Error(input) instead
// of filling memory. A header claiming more than the pixel limit, or a buffer
// that cannot be allocated, is an Error(input) naming the file and the size.
// (TIFF, whose directory may be anywhere in the file, is read by seeking in a
// regular file; from a pipe or device it is first read into memory, at most
// 16 bytes per pixel of the limit plus 64 MiB.)
Image read_image(const std::string& path, const ReadLimits& limits = {});
// The same from an open descriptor (0: standard input), from where it stands;
// it is not closed. `name` is what error messages call it.
Image read_image(int fd, const std::string& name, const ReadLimits& limits = {});
// The same from memory; `name` is what error messages call it.
Image decode_image(std::span<const std::uint8_t> file, const std::string& name = "input",
                   const ReadLimits& limits = {});

// Writes binary PNM (P5 gray, P6 RGB; 16-bit samples big-endian; maxval kept),
// PNG (8/16 bit, every channel count), TIFF (8/16 bit, every channel count,
// deflate-compressed where libtiff has it) or JPEG (8-bit gray or RGB only,
// quality 95 without chroma subsampling: lossy, unlike the others). PNM has
// no alpha: gray+alpha and RGBA images throw Error(usage) suggesting PNG; JPEG
// throws Error(usage) for alpha and 16-bit samples. The format follows the
// extension (format_of_extension; anything else: Error(usage)); a format this
// build lacks is an Error(input) saying so.
// The file is written whole or not at all: a temporary file renamed over
// `path` (a link followed to its target, which is replaced; a device or FIFO
// written in place); Error(input) names the path and the cause otherwise.
void write_image(const std::string& path, const Image& img);
void write_image(const std::string& path, const Image& img, FileFormat format);
std::vector<std::uint8_t> encode_image(const Image& img, FileFormat format);

}  // namespace levelhist::image
