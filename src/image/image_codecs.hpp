// Internal: the image codecs behind image.hpp's read/decode/write/encode, and
// what they share (shape checks, error messages; file writes: core/file_io.hpp).
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "levelhist/error.hpp"
#include "levelhist/image.hpp"

namespace levelhist::image::detail {

// Error(input) "<name>: <what>; <fix>" — the one shape every codec error has.
[[noreturn]] inline void input_error(const std::string& name, const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::input, name + ": " + what + "; " + fix);
}

// The byte count of an image of that shape, or 0 when it would not fit in
// memory (size_t) or a dimension is 0; codecs check it before allocating.
std::size_t image_bytes(std::uint64_t width, std::uint64_t height, std::uint32_t channels, std::uint32_t bit_depth);

// Throws Error(usage) when `img` breaks Image's invariants (channels 1..4, bit
// depth 8/16, maxval 1..2^depth-1, non-zero size, bytes.size() matching).
void check_image(const Image& img, const std::string& what);

// Sample i of the interleaved samples (codecs and image_ops.cpp walk images
// sample by sample; Image::at checks coordinates, these do not).
inline std::uint32_t load_sample(const Image& img, std::size_t i) {
  if (img.bit_depth == 8) return img.bytes[i];
  std::uint16_t v;
  std::memcpy(&v, img.bytes.data() + 2 * i, 2);
  return v;
}
inline void store_sample(Image& img, std::size_t i, std::uint32_t value) {
  if (img.bit_depth == 8) {
    img.bytes[i] = static_cast<std::uint8_t>(value);
    return;
  }
  const auto v = static_cast<std::uint16_t>(value);
  std::memcpy(img.bytes.data() + 2 * i, &v, 2);
}

// Netpbm (pnm_io.cpp).
bool looks_like_pnm(std::span<const std::uint8_t> file);
Image decode_pnm(std::span<const std::uint8_t> file, const std::string& name);
// Binary PNM (P5/P6); throws Error(usage) for images with alpha.
std::vector<std::uint8_t> encode_pnm(const Image& img);

// PNG (png_io.cpp), only in builds with libpng.
bool looks_like_png(std::span<const std::uint8_t> file);
#if LEVELHIST_HAVE_PNG
Image decode_png(std::span<const std::uint8_t> file, const std::string& name);
std::vector<std::uint8_t> encode_png(const Image& img);
#endif


}  // namespace levelhist::image::detail
