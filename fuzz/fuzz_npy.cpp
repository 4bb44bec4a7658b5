// libFuzzer target: the .npy header parser (tools/npy.hpp), bytes in. Besides
// crashes and sanitizer reports it checks that a failure is one Error(input)
// line with a fix, and that an accepted header is consistent: its data starts
// within the bytes given, where header_size() says, and its element count is
// the product of its shape.
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"
#include "npy.hpp"

using namespace levelhist;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  if (!cli::npy::has_magic(bytes)) return -1;
  cli::npy::Header h;
  try {
    h = cli::npy::parse_header(bytes, "'fuzz.npy'");
  } catch (const Error& e) {
    fuzz::check_error(e, false, true);
    return 0;
  }
  if (h.data_offset > size || h.data_offset != cli::npy::header_size(bytes, "'fuzz.npy'"))
    fuzz::finding("the data offset is not the header's size within the bytes");
  std::uint64_t count = 1;
  for (std::uint64_t d : h.shape) count *= d;  // parse_header refused an overflow
  if (count != h.count) fuzz::finding("the element count is not the product of the shape");
  if (h.shape.size() > 64) fuzz::finding("a shape of more than 64 dimensions");
  return 0;
}
