// libFuzzer target: the TIFF reader (tiff_io.cpp, libtiff) through
// image::decode_image, the in-memory entry point that image::read_image uses
// for pipes (regular files are read in place, through the same code).
// Besides crashes and sanitizer reports it checks that a failure is one
// Error(input) line, and that every image it accepts keeps Image's invariants
// and survives the encoder unchanged (encode_tiff, decode again).
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"
#include "image/image_codecs.hpp"

using namespace levelhist;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> file(data, size);
  if (!image::detail::looks_like_tiff(file)) return -1;
  image::Image img;
  // The pixel limit bounds the image, and 16 bytes per pixel of it libtiff's
  // allocations: within libFuzzer's memory limit.
  const image::ReadLimits limits{std::uint64_t{1} << 22};
  try {
    img = image::decode_image(file, "fuzz.tif", limits);
  } catch (const Error& e) {
    fuzz::check_error(e, false, true);
    return 0;
  }
  try {
    image::detail::check_image(img, "check the decoded image");
  } catch (const Error& e) {
    fuzz::finding(std::string("the reader returned a broken image: ") + e.what());
  }
  if (img.maxval != (img.bit_depth == 16 ? 65535u : 255u)) fuzz::finding("a TIFF image decoded with a partial maxval");
  // Encoding is slow next to decoding: round-trip the small images only.
  if (img.bytes.size() > (1u << 16)) return 0;
  const image::Image back = image::decode_image(image::encode_image(img, image::FileFormat::tiff), "round trip");
  if (back.width != img.width || back.height != img.height || back.channels != img.channels ||
      back.bit_depth != img.bit_depth || back.maxval != img.maxval || back.bytes != img.bytes)
    fuzz::finding("the image changed in an encode/decode round trip");
  return 0;
}
