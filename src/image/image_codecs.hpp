// Internal: the image codecs behind image.hpp's read/decode/write/encode, and
// what they share (shape checks, error messages; file writes: core/file_io.hpp).
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "levelhist/error.hpp"
#include "levelhist/image.hpp"

namespace levelhist::image::detail {

// Error(input, "<name>: <what>", fix, data) — the one shape every codec error
// has: what() reads "<name>: <what>; <fix>". The subject is the data, the image
// being read, as for the library's other inputs (a file, a source).
[[noreturn]] inline void input_error(const std::string& name, const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::input, name + ": " + what, fix, ErrorSubject::data);
}

// The bytes of one image file as a codec pulls them: from memory
// (decode_image) or from a file descriptor in 64 KiB reads (read_image: a
// regular file, a FIFO, a device). Nothing past what the codec asks for is
// read, and a codec caps what it may ask for with set_budget, so an endless
// pipe ends where the header says the image must. Never throws: libpng's
// read callback uses it, and a C++ exception must not cross libpng's C
// frames. A short read means the data ended, could not be read, or reached
// the budget; status() says which.
class ByteSource {
 public:
  enum class Status { ok, ended, read_error, over_budget };

  explicit ByteSource(std::span<const std::uint8_t> memory);
  // `known_size`: the bytes a regular file holds from `base_offset` on (where
  // the descriptor stands: standard input redirected from a file may have been
  // read partly); nullopt for pipes and devices.
  ByteSource(int fd, std::optional<std::uint64_t> known_size, std::uint64_t base_offset = 0);
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // The first min(n, what there is) bytes, without taking them; only before
  // anything was taken. n at most 64 KiB.
  std::span<const std::uint8_t> prefix(std::size_t n);
  // The next byte without taking it, or -1 when there is none.
  int peek() { return pos_ < end_ || refill() ? data_[pos_] : -1; }
  void skip() { ++pos_; }  // after a peek() that returned a byte
  // Up to n bytes into `out`; fewer only when the data stops (status() says why).
  std::size_t read(std::uint8_t* out, std::size_t n);

  std::uint64_t taken() const { return window_start_ + pos_; }
  // The bytes left, where known (memory, regular files).
  std::optional<std::uint64_t> remaining() const;
  // At most `total` bytes taken in all (saturating; never below taken()).
  void set_budget(std::uint64_t total);
  std::uint64_t budget() const { return budget_; }
  Status status() const { return status_; }
  // The system's reason for a read_error ("Is a directory").
  std::string error_text() const;

  // Random access, for a format whose readers must seek (TIFF keeps its
  // directory anywhere in the file): the whole data of a memory source, else
  // empty; the descriptor of a regular file (read with pread from
  // file_offset() on, size() bytes), else -1. A pipe or device has neither.
  std::span<const std::uint8_t> memory() const;
  int seekable_fd() const { return fd_ >= 0 && size_ ? fd_ : -1; }
  std::uint64_t file_offset() const { return base_offset_; }
  std::optional<std::uint64_t> size() const { return size_; }

 private:
  bool refill();

  // The current window data_[0, filled_); the codec may take data_[pos_, end_),
  // end_ being filled_ or less where the budget stops it.
  const std::uint8_t* data_ = nullptr;
  std::size_t pos_ = 0, end_ = 0, filled_ = 0;
  std::uint64_t window_start_ = 0;  // bytes of the windows before this one
  int fd_ = -1;  // -1: memory, one window
  std::vector<std::uint8_t> buffer_;  // fd only
  std::optional<std::uint64_t> size_;
  std::uint64_t base_offset_ = 0;
  std::uint64_t budget_ = UINT64_MAX;
  Status status_ = Status::ok;
  int errno_ = 0;
};

// Budgets are sums of sizes a header claims: they saturate instead of wrapping.
inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
inline std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

// The pixel limit of `limits`: max_pixels, or LEVELHIST_MAX_PIXELS, or
// kDefaultMaxPixels (image.hpp). Throws Error(usage) for a bad environment value.
std::uint64_t max_pixels(const ReadLimits& limits);

// Error(input) when width x height is above `max_pixels`, naming the file, the
// claim and how to raise the limit. `format`: "PNG", "PGM", "PPM".
void check_pixel_limit(const std::string& name, const char* format, std::uint64_t width, std::uint64_t height,
                       std::uint64_t max_pixels);

// Error(input) for a pixel buffer the system refused.
[[noreturn]] void allocation_error(const std::string& name, std::uint64_t width, std::uint64_t height,
                                   std::size_t bytes);

// Makes `bytes` at least `needed` long (of `total`), growing geometrically from
// 1 MiB. When the data's size is unknown (a pipe), the codecs grow the pixels
// this way as the data arrives, so that a header that lies costs memory only
// for the data that really came. False when the system refuses the memory.
bool grow_pixels(std::vector<std::uint8_t>& bytes, std::size_t needed, std::size_t total) noexcept;

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
// `source` holds the file from its first byte (the magic).
Image decode_pnm(ByteSource& source, const std::string& name, std::uint64_t max_pixels);
// Binary PNM (P5/P6); throws Error(usage) for images with alpha.
std::vector<std::uint8_t> encode_pnm(const Image& img);

// PNG (png_io.cpp), only in builds with libpng.
bool looks_like_png(std::span<const std::uint8_t> file);
#if LEVELHIST_HAVE_PNG
Image decode_png(ByteSource& source, const std::string& name, std::uint64_t max_pixels);
std::vector<std::uint8_t> encode_png(const Image& img);
#endif

// JPEG (jpeg_io.cpp), only in builds with libjpeg(-turbo). 8-bit gray or RGB.
bool looks_like_jpeg(std::span<const std::uint8_t> file);
#if LEVELHIST_HAVE_JPEG
Image decode_jpeg(ByteSource& source, const std::string& name, std::uint64_t max_pixels);
// Throws Error(usage) for 16-bit images and images with alpha (JPEG has neither).
std::vector<std::uint8_t> encode_jpeg(const Image& img);
#endif

// TIFF (tiff_io.cpp), only in builds with libtiff 4.5 or later.
bool looks_like_tiff(std::span<const std::uint8_t> file);
#if LEVELHIST_HAVE_TIFF
Image decode_tiff(ByteSource& source, const std::string& name, std::uint64_t max_pixels);
std::vector<std::uint8_t> encode_tiff(const Image& img);
#endif

// What the chunks, markers and tags around the pixels (text, ICC profiles,
// EXIF) of a PNG, JPEG or TIFF file may take in all: generous for real files,
// and the end of a pipe that sends them forever.
inline constexpr std::uint64_t kMetadataBudget = std::uint64_t{64} << 20;


}  // namespace levelhist::image::detail
