// libFuzzer target: the JPEG reader (jpeg_io.cpp, libjpeg) through
// image::decode_image, the in-memory entry point that image::read_image uses.
// Besides crashes and sanitizer reports it checks that a failure is one
// Error(input) line, and that every image it accepts keeps Image's invariants
// (8-bit gray or RGB, maxval 255) and decodes the same twice.
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"
#include "image/image_codecs.hpp"

using namespace levelhist;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> file(data, size);
  // Without the start-of-image marker the JPEG reader is never called.
  if (!image::detail::looks_like_jpeg(file)) return -1;
  image::Image img;
  // The pixel limit keeps libjpeg's whole-image buffers (progressive files)
  // within libFuzzer's memory limit; the limit's own check is what it tests.
  const image::ReadLimits limits{std::uint64_t{1} << 22};
  try {
    img = image::decode_image(file, "fuzz.jpg", limits);
  } catch (const Error& e) {
    fuzz::check_error(e, false, true);
    return 0;
  }
  try {
    image::detail::check_image(img, "check the decoded image");
  } catch (const Error& e) {
    fuzz::finding(std::string("the reader returned a broken image: ") + e.what());
  }
  if (img.bit_depth != 8 || img.maxval != 255 || (img.channels != 1 && img.channels != 3))
    fuzz::finding("a JPEG decoded to something other than 8-bit gray or RGB");
  if (img.bytes != image::decode_image(file, "again", limits).bytes) fuzz::finding("two decodes differ");
  return 0;
}
