// libFuzzer target: the Netpbm reader (P2/P3/P5/P6; pnm_io.cpp) through
// image::decode_image, the in-memory entry point that image::read_image uses.
// Besides crashes and sanitizer reports it checks that a failure is one
// Error(input) line, and that every image it accepts keeps Image's invariants
// and survives the encoder unchanged (encode_pnm, decode again).
#include <cstdint>
#include <span>

#include "image/image_codecs.hpp"
#include "fuzz_support.hpp"

using namespace levelhist;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> file(data, size);
  // Other magic bytes go to the PNG reader or are refused before any parsing.
  if (!image::detail::looks_like_pnm(file)) return -1;
  image::Image img;
  try {
    // The default pixel limit, given so that LEVELHIST_MAX_PIXELS does not change the target.
    img = image::decode_image(file, "fuzz.pnm", image::ReadLimits{image::kDefaultMaxPixels});
  } catch (const Error& e) {
    fuzz::check_error(e, false, true);
    return 0;
  }
  try {
    image::detail::check_image(img, "check the decoded image");
  } catch (const Error& e) {
    fuzz::finding(std::string("the reader returned a broken image: ") + e.what());
  }
  if (img.has_alpha()) fuzz::finding("a Netpbm image decoded with an alpha channel");
  const image::Image back = image::decode_image(image::encode_image(img, image::FileFormat::pnm), "round trip");
  if (back.width != img.width || back.height != img.height || back.channels != img.channels ||
      back.bit_depth != img.bit_depth || back.maxval != img.maxval || back.bytes != img.bytes)
    fuzz::finding("the image changed in an encode/decode round trip");
  return 0;
}
