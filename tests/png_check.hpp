// Reads a PNG file's header back by hand (no libpng needed): the 8-byte
// signature, then the IHDR chunk that every PNG must open with.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace png_check {

struct Header {
  std::uint32_t width = 0, height = 0;
  int bit_depth = 0, color_type = 0;  // color type 2: RGB
};

inline std::uint32_t be32(const std::string& b, std::size_t at) {
  return std::uint32_t{static_cast<unsigned char>(b[at])} << 24 | std::uint32_t{static_cast<unsigned char>(b[at + 1])} << 16 |
         std::uint32_t{static_cast<unsigned char>(b[at + 2])} << 8 | std::uint32_t{static_cast<unsigned char>(b[at + 3])};
}

// The header, or nothing when the bytes do not start like a PNG.
inline std::optional<Header> read_header(const std::string& bytes) {
  static const std::string kSignature("\x89PNG\r\n\x1a\n", 8);
  if (bytes.size() < 8 + 8 + 13 || bytes.compare(0, 8, kSignature) != 0) return std::nullopt;
  if (be32(bytes, 8) != 13 || bytes.compare(12, 4, "IHDR") != 0) return std::nullopt;  // IHDR: length 13, first
  Header h;
  h.width = be32(bytes, 16);
  h.height = be32(bytes, 20);
  h.bit_depth = static_cast<unsigned char>(bytes[24]);
  h.color_type = static_cast<unsigned char>(bytes[25]);
  return h;
}

}  // namespace png_check
