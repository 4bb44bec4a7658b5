// libFuzzer target: the PNG reader (png_io.cpp, libpng) through
// image::decode_image, the in-memory entry point that image::read_image uses.
// Besides crashes and sanitizer reports it checks that a failure is one
// Error(input) line, and that every image it accepts keeps Image's invariants
// and survives the encoder unchanged (encode_png, decode again).
#include <cstdint>
#include <cstring>
#include <span>

#include "image/image_codecs.hpp"
#include "fuzz_support.hpp"

using namespace levelhist;

namespace {

// The reader's own pixel limit (image::ReadLimits), low enough that the
// images it accepts stay far below libFuzzer's memory limit; a header above it
// is an Error(input) like any other bad file. Given here, so that
// LEVELHIST_MAX_PIXELS in the environment does not change the target.
constexpr std::uint64_t kMaxPixels = std::uint64_t{1} << 22;

std::uint32_t big_endian32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

// libpng allocates the declared length of an ancillary chunk before it reads
// the chunk (up to 2^31 - 1 bytes; a 93-byte file asked for 587 MB). The
// allocation is never touched when the file is shorter, so it costs nothing
// outside the sanitizers, but libFuzzer counts it against its memory limit:
// such files are skipped (IDAT is streamed, so a truncated IDAT still runs).
bool chunk_beyond_the_end(std::span<const std::uint8_t> file) {
  for (std::size_t pos = 8; file.size() - pos >= 8;) {
    const std::uint64_t length = big_endian32(file.data() + pos);
    if (length > file.size() - pos - 8) return std::memcmp(file.data() + pos + 4, "IDAT", 4) != 0;
    pos += 12 + static_cast<std::size_t>(length);
    if (pos > file.size()) break;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> file(data, size);
  // Without the signature the PNG reader is never called.
  if (!image::detail::looks_like_png(file)) return -1;
  if (chunk_beyond_the_end(file)) return -1;
  image::Image img;
  try {
    img = image::decode_image(file, "fuzz.png", image::ReadLimits{kMaxPixels});
  } catch (const Error& e) {
    fuzz::check_error(e, false, true);
    return 0;
  }
  try {
    image::detail::check_image(img, "check the decoded image");
  } catch (const Error& e) {
    fuzz::finding(std::string("the reader returned a broken image: ") + e.what());
  }
  if (img.maxval != (img.bit_depth == 16 ? 65535u : 255u)) fuzz::finding("a PNG image decoded with a partial maxval");
  // Encoding is slow next to decoding: round-trip the small images only.
  if (img.bytes.size() > (1u << 16)) return 0;
  const image::Image back = image::decode_image(image::encode_image(img, image::FileFormat::png), "round trip");
  if (back.width != img.width || back.height != img.height || back.channels != img.channels ||
      back.bit_depth != img.bit_depth || back.maxval != img.maxval || back.bytes != img.bytes)
    fuzz::finding("the image changed in an encode/decode round trip");
  return 0;
}
