// levelhist: the Image type and the file API of image.hpp — dispatch to the
// codecs (pnm_io.cpp, png_io.cpp) by magic bytes when reading and by the file
// name's extension when writing.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "image/file_io.hpp"
#include "image/file_names.hpp"
#include "image/image_codecs.hpp"

namespace levelhist::image {
namespace detail {

std::size_t image_bytes(std::uint64_t width, std::uint64_t height, std::uint32_t channels, std::uint32_t bit_depth) {
  const std::uint64_t per_pixel = std::uint64_t{channels} * (bit_depth / 8);
  if (width == 0 || height == 0 || per_pixel == 0) return 0;
  // Leave headroom below SIZE_MAX: vector::max_size is half of it on common ABIs.
  const std::uint64_t limit = std::numeric_limits<std::ptrdiff_t>::max();
  if (width > limit / per_pixel || height > limit / (width * per_pixel)) return 0;
  return static_cast<std::size_t>(width * height * per_pixel);
}

void check_image(const Image& img, const std::string& what) {
  auto bad = [&](const std::string& why) {
    throw Error(ErrorKind::usage, "cannot " + what + ": " + why + "; build images with Image::blank");
  };
  if (img.channels < 1 || img.channels > 4) bad("the image has " + std::to_string(img.channels) + " channels, not 1 to 4");
  if (img.bit_depth != 8 && img.bit_depth != 16) bad("the bit depth is " + std::to_string(img.bit_depth) + ", not 8 or 16");
  const std::uint32_t top = img.bit_depth == 16 ? 65535 : 255;
  if (img.maxval == 0 || img.maxval > top)
    bad("maxval " + std::to_string(img.maxval) + " is outside 1.." + std::to_string(top) + " for " +
        std::to_string(img.bit_depth) + "-bit samples");
  const std::size_t bytes = image_bytes(img.width, img.height, img.channels, img.bit_depth);
  if (bytes == 0) bad("an image of " + std::to_string(img.width) + " x " + std::to_string(img.height) +
        " pixels has no pixels or more bytes than memory can hold");
  if (img.bytes.size() != bytes)
    bad("it holds " + std::to_string(img.bytes.size()) + " bytes where its shape needs " + std::to_string(bytes));
}

}  // namespace detail

namespace {

std::size_t sample_index(const Image& img, std::uint32_t x, std::uint32_t y, std::uint32_t c) {
  if (x >= img.width || y >= img.height || c >= img.channels)
    throw Error(ErrorKind::usage, "pixel (" + std::to_string(x) + ", " + std::to_string(y) + ") channel " +
                                      std::to_string(c) + " is outside the " + std::to_string(img.width) + " x " +
                                      std::to_string(img.height) + " x " + std::to_string(img.channels) +
                                      " image; use coordinates below its width, height and channels");
  return (std::size_t{y} * img.width + x) * img.channels + c;
}

#if !LEVELHIST_HAVE_PNG
[[noreturn]] void no_png(const std::string& doing) {
  throw Error(ErrorKind::input, doing + ": this levelhist was built without PNG support; "
                                        "install libpng-dev and rebuild, or use PGM/PPM files");
}
#endif

}  // namespace

std::uint32_t Image::at(std::uint32_t x, std::uint32_t y, std::uint32_t c) const {
  return detail::load_sample(*this, sample_index(*this, x, y, c));
}

void Image::set(std::uint32_t x, std::uint32_t y, std::uint32_t c, std::uint32_t value) {
  const std::size_t i = sample_index(*this, x, y, c);
  if (value > maxval)
    throw Error(ErrorKind::usage, "sample value " + std::to_string(value) + " is above the image's maxval " +
                                      std::to_string(maxval) + "; clamp it to 0.." + std::to_string(maxval));
  detail::store_sample(*this, i, value);
}

Image Image::blank(std::uint32_t width, std::uint32_t height, std::uint32_t channels, std::uint32_t bit_depth,
                   std::uint32_t maxval) {
  Image img;
  img.width = width;
  img.height = height;
  img.channels = channels;
  img.bit_depth = bit_depth;
  img.maxval = maxval ? maxval : (bit_depth == 16 ? 65535 : 255);
  const std::size_t bytes = detail::image_bytes(width, height, channels, bit_depth == 16 ? 16 : 8);
  // check_image gives every other reason; size the bytes first so only a real mismatch remains.
  if (bytes != 0) img.bytes.assign(bytes, 0);
  detail::check_image(img, "make a blank image");
  return img;
}

bool png_supported() {
#if LEVELHIST_HAVE_PNG
  return true;
#else
  return false;
#endif
}

Image read_image(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) detail::input_error(path, "cannot open it (" + std::string(std::strerror(errno)) + ")",
                                  "check the file name and its permissions");
  std::vector<std::uint8_t> file;
  std::uint8_t buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string reason = std::strerror(errno);
      ::close(fd);
      detail::input_error(path, "cannot read it (" + reason + ")", "check that it is a readable file, not a directory");
    }
    if (n == 0) break;
    file.insert(file.end(), buf, buf + n);
  }
  ::close(fd);
  return decode_image(file, path);
}

Image decode_image(std::span<const std::uint8_t> file, const std::string& name) {
  if (detail::looks_like_png(file)) {
#if LEVELHIST_HAVE_PNG
    return detail::decode_png(file, name);
#else
    no_png(name + ": cannot read PNG");
#endif
  }
  if (detail::looks_like_pnm(file)) return detail::decode_pnm(file, name);
  if (file.empty()) detail::input_error(name, "the file is empty", "give a PGM, PPM or PNG image");
  detail::input_error(name, "not a PGM, PPM or PNG image (unknown magic bytes)",
                      "give a Netpbm P2/P3/P5/P6 or a PNG file");
}

std::vector<std::uint8_t> encode_image(const Image& img, FileFormat format) {
  detail::check_image(img, "encode the image");
  if (format == FileFormat::pnm) return detail::encode_pnm(img);
#if LEVELHIST_HAVE_PNG
  return detail::encode_png(img);
#else
  no_png("cannot write PNG");
#endif
}

void write_image(const std::string& path, const Image& img, FileFormat format) {
#if !LEVELHIST_HAVE_PNG
  if (format == FileFormat::png) no_png(path + ": cannot write PNG");
#endif
  levelhist::detail::write_file_atomically(path, encode_image(img, format));
}

void write_image(const std::string& path, const Image& img) {
  const std::string ext = levelhist::detail::lower_extension(path);
  if (ext == ".pgm" || ext == ".ppm" || ext == ".pnm") return write_image(path, img, FileFormat::pnm);
  if (ext == ".png") return write_image(path, img, FileFormat::png);
  throw Error(ErrorKind::usage, "cannot tell the image format of '" + path + "' from its extension; name a .pgm, .ppm, "
                                ".pnm or .png file");
}

}  // namespace levelhist::image
