// levelhist: the Image type and the file API of image.hpp — dispatch to the
// codecs (pnm_io.cpp, png_io.cpp, jpeg_io.cpp, tiff_io.cpp) by magic bytes
// when reading and by the file name's extension when writing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include "image/file_io.hpp"
#include "image/file_names.hpp"
#include "image/image_codecs.hpp"

namespace levelhist::image {
namespace detail {

namespace {

// The window of a file read through a descriptor: large enough that the
// system calls cost nothing next to decoding, small enough to be no memory.
constexpr std::size_t kWindow = std::size_t{1} << 16;

// `text` with every byte outside printable ASCII as \xNN: an environment value
// in a message must not break its one line.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

ByteSource::ByteSource(std::span<const std::uint8_t> memory)
    : data_(memory.data()), end_(memory.size()), filled_(memory.size()), size_(memory.size()) {}

ByteSource::ByteSource(int fd, std::optional<std::uint64_t> known_size, std::uint64_t base_offset)
    : fd_(fd), buffer_(kWindow), size_(known_size), base_offset_(base_offset) {
  data_ = buffer_.data();
}

std::span<const std::uint8_t> ByteSource::memory() const {
  if (fd_ >= 0) return {};
  return {data_, filled_};
}

std::span<const std::uint8_t> ByteSource::prefix(std::size_t n) {
  // Only the first window can be peeked at, and only before anything was taken.
  n = std::min(n, kWindow);
  while (fd_ >= 0 && window_start_ == 0 && pos_ == 0 && filled_ < n && status_ == Status::ok) {
    const ssize_t got = ::read(fd_, buffer_.data() + filled_, buffer_.size() - filled_);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      errno_ = errno;
      status_ = Status::read_error;
    }
    if (got <= 0) break;  // the end: the next refill reads it again and says so
    filled_ += static_cast<std::size_t>(got);
  }
  set_budget(budget_);
  return {data_, std::min(n, end_)};
}

bool ByteSource::refill() {
  if (status_ != Status::ok) return false;
  if (pos_ < filled_) {  // bytes already here, hidden by the budget
    if (taken() >= budget_) {
      status_ = Status::over_budget;
      return false;
    }
    set_budget(budget_);
    return true;
  }
  if (fd_ < 0) {
    status_ = Status::ended;
    return false;
  }
  if (taken() >= budget_) {
    // A regular file that ends here is truncated, whatever the budget.
    status_ = size_ && taken() >= *size_ ? Status::ended : Status::over_budget;
    return false;
  }
  window_start_ += filled_;
  pos_ = end_ = filled_ = 0;
  // Never read past the budget: what the codec may not take stays in the file.
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), budget_ - window_start_));
  while (true) {
    const ssize_t got = ::read(fd_, buffer_.data(), want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      errno_ = errno;
      status_ = Status::read_error;
      return false;
    }
    if (got == 0) {
      status_ = Status::ended;
      return false;
    }
    filled_ = end_ = static_cast<std::size_t>(got);
    return true;
  }
}

std::size_t ByteSource::read(std::uint8_t* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    if (pos_ == end_ && !refill()) break;
    const std::size_t k = std::min(n - done, end_ - pos_);
    std::memcpy(out + done, data_ + pos_, k);
    pos_ += k;
    done += k;
  }
  return done;
}

std::optional<std::uint64_t> ByteSource::remaining() const {
  if (!size_) return std::nullopt;
  return *size_ > taken() ? *size_ - taken() : 0;
}

void ByteSource::set_budget(std::uint64_t total) {
  budget_ = std::max(total, taken());
  end_ = static_cast<std::size_t>(std::min<std::uint64_t>(filled_, budget_ - window_start_));
}

std::string ByteSource::error_text() const { return std::strerror(errno_); }

std::uint64_t max_pixels(const ReadLimits& limits) {
  if (limits.max_pixels != 0) return limits.max_pixels;
  const char* env = std::getenv("LEVELHIST_MAX_PIXELS");
  if (!env) return kDefaultMaxPixels;
  const std::string_view text(env);
  std::uint64_t n = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || n == 0)
    throw Error(ErrorKind::usage,
                "the environment variable LEVELHIST_MAX_PIXELS='" + printable(text) + "' is not a positive integer",
                "unset it or give a pixel count such as " + std::to_string(kDefaultMaxPixels));
  return n;
}

void check_pixel_limit(const std::string& name, const char* format, std::uint64_t width, std::uint64_t height,
                       std::uint64_t max_pixels) {
  // Both are at most 2^32 - 1, so the product fits 64 bits.
  const std::uint64_t pixels = width * height;
  if (pixels <= max_pixels) return;
  input_error(name,
              std::string("the ") + format + " header claims " + std::to_string(width) + " x " +
                  std::to_string(height) + " = " + std::to_string(pixels) + " pixels, more than the limit " +
                  std::to_string(max_pixels),
              "raise it with --max-pixels or LEVELHIST_MAX_PIXELS");
}

void allocation_error(const std::string& name, std::uint64_t width, std::uint64_t height, std::size_t bytes) {
  input_error(name,
              "cannot allocate " + std::to_string(bytes) + " bytes for its " + std::to_string(width) + " x " +
                  std::to_string(height) + " pixels (out of memory)",
              "close other programs, or give a smaller image");
}

bool grow_pixels(std::vector<std::uint8_t>& bytes, std::size_t needed, std::size_t total) noexcept {
  if (needed <= bytes.size()) return true;
  constexpr std::size_t kFirst = std::size_t{1} << 20;
  const std::size_t next = std::min(total, std::max({needed, bytes.size() * 2, kFirst}));
  try {
    bytes.resize(next);
  } catch (const std::bad_alloc&) {
    return false;
  } catch (const std::length_error&) {
    return false;
  }
  return true;
}

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
    throw Error(ErrorKind::usage, "cannot " + what + ": " + why, "build images with Image::blank");
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
                                      std::to_string(img.height) + " x " + std::to_string(img.channels) + " image",
                "use coordinates below its width, height and channels");
  return (std::size_t{y} * img.width + x) * img.channels + c;
}

// A format this build cannot read or write: how to get it.
[[noreturn]] [[maybe_unused]] void not_built(const std::string& doing, const char* format, const char* package) {
  throw Error(ErrorKind::input, doing + ": this levelhist was built without " + format + " support",
              "install " + std::string(package) + " and rebuild, or use PGM/PPM files");
}

}  // namespace

std::uint32_t Image::at(std::uint32_t x, std::uint32_t y, std::uint32_t c) const {
  return detail::load_sample(*this, sample_index(*this, x, y, c));
}

void Image::set(std::uint32_t x, std::uint32_t y, std::uint32_t c, std::uint32_t value) {
  const std::size_t i = sample_index(*this, x, y, c);
  if (value > maxval)
    throw Error(ErrorKind::usage,
                "sample value " + std::to_string(value) + " is above the image's maxval " + std::to_string(maxval),
                "clamp it to 0.." + std::to_string(maxval));
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

bool jpeg_supported() {
#if LEVELHIST_HAVE_JPEG
  return true;
#else
  return false;
#endif
}

bool tiff_supported() {
#if LEVELHIST_HAVE_TIFF
  return true;
#else
  return false;
#endif
}

bool format_supported(FileFormat format) {
  switch (format) {
    case FileFormat::pnm: return true;
    case FileFormat::png: return png_supported();
    case FileFormat::jpeg: return jpeg_supported();
    case FileFormat::tiff: return tiff_supported();
  }
  return false;
}

std::optional<FileFormat> format_of_extension(const std::string& path) {
  const std::string ext = levelhist::detail::lower_extension(path);
  if (ext == ".pgm" || ext == ".ppm" || ext == ".pnm") return FileFormat::pnm;
  if (ext == ".png") return FileFormat::png;
  if (ext == ".jpg" || ext == ".jpeg") return FileFormat::jpeg;
  if (ext == ".tif" || ext == ".tiff") return FileFormat::tiff;
  return std::nullopt;
}

const char* format_name(FileFormat format) {
  switch (format) {
    case FileFormat::pnm: return "PNM";
    case FileFormat::png: return "PNG";
    case FileFormat::jpeg: return "JPEG";
    case FileFormat::tiff: return "TIFF";
  }
  return "?";
}

namespace {

// The codec the first bytes name; the source is still at its first byte.
Image decode_source(detail::ByteSource& source, const std::string& name, std::uint64_t max_pixels) {
  const std::span<const std::uint8_t> head = source.prefix(8);
  if (source.status() == detail::ByteSource::Status::read_error)
    detail::input_error(name, "cannot read it (" + source.error_text() + ")",
                        "check that it is a readable file, not a directory");
  (void)max_pixels;  // unused in a build without any of the optional codecs
  if (detail::looks_like_png(head)) {
#if LEVELHIST_HAVE_PNG
    return detail::decode_png(source, name, max_pixels);
#else
    not_built(name + ": cannot read PNG", "PNG", "libpng-dev");
#endif
  }
  if (detail::looks_like_jpeg(head)) {
#if LEVELHIST_HAVE_JPEG
    return detail::decode_jpeg(source, name, max_pixels);
#else
    not_built(name + ": cannot read JPEG", "JPEG", "libjpeg62-turbo-dev (or libjpeg-dev)");
#endif
  }
  if (detail::looks_like_tiff(head)) {
#if LEVELHIST_HAVE_TIFF
    return detail::decode_tiff(source, name, max_pixels);
#else
    not_built(name + ": cannot read TIFF", "TIFF", "libtiff-dev (4.5 or later)");
#endif
  }
  if (detail::looks_like_pnm(head)) return detail::decode_pnm(source, name, max_pixels);
  if (head.empty()) detail::input_error(name, "the file is empty", "give a PGM, PPM, PNG, JPEG or TIFF image");
  // Decided from these bytes alone: /dev/zero or a binary file is refused at once, not read to its end.
  std::string shown;
  for (std::uint8_t b : head) {
    char buf[4];
    std::snprintf(buf, sizeof buf, " %02x", b);
    shown += buf;
  }
  detail::input_error(name, "not a PGM, PPM, PNG, JPEG or TIFF image (unknown magic bytes:" + shown + ")",
                      "give a Netpbm P2/P3/P5/P6, PNG, JPEG or TIFF file");
}

// Closes the descriptor on every way out of read_image.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() { ::close(fd); }
};

}  // namespace

Image read_image(const std::string& path, const ReadLimits& limits) {
  const std::uint64_t max_pixels = detail::max_pixels(limits);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) detail::input_error(path, "cannot open it (" + std::string(std::strerror(errno)) + ")",
                                  "check the file name and its permissions");
  const FileDescriptor closer{fd};
  // Only a regular file's size is known in advance; pipes and devices say 0.
  struct stat st {};
  std::optional<std::uint64_t> size;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) size = static_cast<std::uint64_t>(st.st_size);
  detail::ByteSource source(fd, size);
  return decode_source(source, path, max_pixels);
}

Image read_image(int fd, const std::string& name, const ReadLimits& limits) {
  const std::uint64_t max_pixels = detail::max_pixels(limits);
  // A regular file is read from where the descriptor stands (a redirected
  // standard input may have been read partly), its size known from there.
  struct stat st {};
  std::optional<std::uint64_t> size;
  std::uint64_t offset = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at >= 0) {
      offset = static_cast<std::uint64_t>(at);
      size = st.st_size > at ? static_cast<std::uint64_t>(st.st_size - at) : 0;
    }
  }
  detail::ByteSource source(fd, size, offset);
  return decode_source(source, name, max_pixels);
}

Image decode_image(std::span<const std::uint8_t> file, const std::string& name, const ReadLimits& limits) {
  const std::uint64_t max_pixels = detail::max_pixels(limits);
  detail::ByteSource source(file);
  return decode_source(source, name, max_pixels);
}

std::vector<std::uint8_t> encode_image(const Image& img, FileFormat format) {
  detail::check_image(img, "encode the image");
  switch (format) {
    case FileFormat::pnm: return detail::encode_pnm(img);
    case FileFormat::png:
#if LEVELHIST_HAVE_PNG
      return detail::encode_png(img);
#else
      not_built("cannot write PNG", "PNG", "libpng-dev");
#endif
    case FileFormat::jpeg:
#if LEVELHIST_HAVE_JPEG
      return detail::encode_jpeg(img);
#else
      not_built("cannot write JPEG", "JPEG", "libjpeg62-turbo-dev (or libjpeg-dev)");
#endif
    case FileFormat::tiff:
#if LEVELHIST_HAVE_TIFF
      return detail::encode_tiff(img);
#else
      not_built("cannot write TIFF", "TIFF", "libtiff-dev (4.5 or later)");
#endif
  }
  throw Error(ErrorKind::usage, "unknown image file format", "use FileFormat::pnm, png, jpeg or tiff");
}

void write_image(const std::string& path, const Image& img, FileFormat format) {
  if (!format_supported(format))
    throw Error(ErrorKind::input,
                path + ": cannot write " + format_name(format) + ": this levelhist was built without it",
                "write a .pgm, .ppm or .pnm file, or rebuild with its library");
  levelhist::detail::write_file_atomically(path, encode_image(img, format));
}

void write_image(const std::string& path, const Image& img) {
  if (const std::optional<FileFormat> format = format_of_extension(path)) return write_image(path, img, *format);
  throw Error(ErrorKind::usage, "cannot tell the image format of '" + path + "' from its extension",
              "name a .pgm, .ppm, .pnm, .png, .jpg or .tif file");
}

}  // namespace levelhist::image
