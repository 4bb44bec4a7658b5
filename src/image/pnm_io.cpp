// Netpbm gray and color images: P2 (plain PGM), P5 (PGM), P3 (plain PPM), P6
// (PPM), maxval 1..65535, samples of 2 bytes big-endian when maxval > 255
// (https://netpbm.sourceforge.net/doc/pgm.html, ppm.html). '#' comments run to
// the end of their line and may stand wherever whitespace may, also between
// the samples of plain files. Bytes after the raster are ignored (Netpbm
// allows several images in one file; we read the first).
#include <cstdio>
#include <optional>
#include <string>

#include "image/image_codecs.hpp"

namespace levelhist::image::detail {
namespace {

bool is_space(std::uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(std::uint8_t c) { return c >= '0' && c <= '9'; }

struct Kind {
  char magic;
  bool plain;
  std::uint32_t channels;
  const char* label;  // the format's name in messages
};

const Kind* kind_of(char magic) {
  static const Kind kinds[] = {
      {'2', true, 1, "PGM"}, {'5', false, 1, "PGM"}, {'3', true, 3, "PPM"}, {'6', false, 3, "PPM"}};
  for (const Kind& k : kinds)
    if (k.magic == magic) return &k;
  return nullptr;
}

// How far the header (magic through the byte after maxval) may go: real
// headers are a few dozen bytes and a comment or two; this is room for long
// comments, and the end of a pipe that never stops sending spaces or zeros.
constexpr std::uint64_t kHeaderBudget = std::uint64_t{1} << 20;
// How far a plain raster may go: a sample is at most 5 digits and a
// separator; the rest is room for comments, leading zeros and wide spacing.
constexpr std::uint64_t kPlainBytesPerSample = 16;
constexpr std::uint64_t kPlainSlack = std::uint64_t{1} << 20;

// A cursor over the file that knows how to report what is wrong with it.
class PnmReader {
 public:
  PnmReader(ByteSource& source, const std::string& name, const char* label)
      : src_(source), name_(name), label_(label) {}

  ByteSource& source() { return src_; }

  // Whitespace and comments; `required`: at least one of them must be there
  // (tokens of the header must be separated).
  void skip_space(const char* before, bool required) {
    bool skipped = false;
    while (true) {
      const int c = src_.peek();
      if (c >= 0 && is_space(static_cast<std::uint8_t>(c))) src_.skip();
      else if (c == '#') skip_comment();
      else break;
      skipped = true;
    }
    check_stopped();
    if (required && !skipped && src_.peek() >= 0)
      malformed(std::string("expected whitespace before the ") + before + ", found " + describe_here());
  }

  // A comment from '#' through its newline (or the end of the file).
  void skip_comment() {
    for (int c = src_.peek(); c >= 0; c = src_.peek()) {
      src_.skip();
      if (c == '\n' || c == '\r') break;
    }
    check_stopped();
  }

  // An unsigned decimal number of the header. `field` names it in messages.
  std::uint64_t header_number(const char* field, std::uint64_t max) {
    skip_space(field, true);
    if (src_.peek() < 0)
      ran_out(std::string("truncated ") + label_ + " header: the file ends before the " + field);
    if (!is_digit(static_cast<std::uint8_t>(src_.peek())))
      malformed(std::string("expected the ") + field + " (a decimal number), found " + describe_here());
    std::uint64_t v = 0;
    for (int c = src_.peek(); c >= 0 && is_digit(static_cast<std::uint8_t>(c)); c = src_.peek()) {
      src_.skip();
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
      if (v > max) too_large(field, max);
    }
    check_stopped();
    const int next = src_.peek();
    if (next >= 0 && !is_space(static_cast<std::uint8_t>(next)) && next != '#')
      malformed(std::string("the ") + field + " is followed by " + describe_here() + ", not whitespace");
    return v;
  }

  // One sample of a plain (P2/P3) raster; sample `index` of `count`.
  std::uint32_t plain_sample(std::uint64_t index, std::uint64_t count, std::uint32_t maxval) {
    skip_space("sample", index > 0);
    if (src_.peek() < 0)
      ran_out(std::string("truncated ") + label_ + " pixel data: " + std::to_string(index) + " of " +
              std::to_string(count) + " samples");
    if (!is_digit(static_cast<std::uint8_t>(src_.peek())))
      input_error(name_, "sample " + std::to_string(index) + " is " + describe_here() + ", not a decimal number",
                  "plain " + std::string(label_) + " samples are decimal numbers separated by whitespace");
    std::uint64_t v = 0;
    for (int c = src_.peek(); c >= 0 && is_digit(static_cast<std::uint8_t>(c)); c = src_.peek()) {
      src_.skip();
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
      if (v > maxval) above_maxval(index, maxval);
    }
    check_stopped();
    return static_cast<std::uint32_t>(v);
  }

  // What the message says when the budget stops the reader: set per part of the file.
  void set_over_budget_text(std::string text) { over_budget_text_ = std::move(text); }

  // The data stopped where `truncated` was expected to go on: the file ended
  // (the message `truncated`), could not be read, or went past the budget.
  [[noreturn]] void ran_out(const std::string& truncated) const {
    check_stopped();
    input_error(name_, truncated, "the file is incomplete: re-create it");
  }
  // A read error or the budget stop the reader wherever it is.
  void check_stopped() const {
    if (src_.status() == ByteSource::Status::read_error)
      input_error(name_, "cannot read it (" + src_.error_text() + ")", "check that it is a readable file");
    if (src_.status() == ByteSource::Status::over_budget)
      input_error(name_, over_budget_text_, "the file is damaged or not a Netpbm image");
  }

  [[noreturn]] void malformed(const std::string& what) const {
    input_error(name_, std::string("malformed ") + label_ + " header: " + what,
                "check that it is a Netpbm file (magic, width, height, maxval)");
  }
  [[noreturn]] void too_large(const char* field, std::uint64_t max) const {
    input_error(name_, std::string("the ") + field + " is larger than " + std::to_string(max),
                std::string(field) == "maxval" ? "Netpbm's maxval is 1..65535" : "the file is damaged or not a Netpbm image");
  }
  [[noreturn]] void above_maxval(std::uint64_t index, std::uint32_t maxval) const {
    input_error(name_, "sample " + std::to_string(index) + " is above the maxval " + std::to_string(maxval),
                "every sample must be 0..maxval: fix the file or its maxval");
  }
  const std::string& name() const { return name_; }
  const char* label() const { return label_; }

 private:
  // The byte at the cursor; the callers have seen that there is one.
  std::string describe_here() {
    const auto c = static_cast<std::uint8_t>(src_.peek());
    if (c >= 0x21 && c <= 0x7e) return std::string("'") + static_cast<char>(c) + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }

  ByteSource& src_;
  const std::string& name_;
  const char* label_;
  std::string over_budget_text_;
};

// Reads the binary raster into img.bytes (empty, shape set), `bytes` long:
// all at once where the data is known to hold it, else growing as it arrives.
void read_binary_raster(PnmReader& r, Image& img, std::size_t bytes, bool known_to_fit) {
  ByteSource& src = r.source();
  std::size_t got = 0;
  while (got < bytes) {
    if (!grow_pixels(img.bytes, known_to_fit ? bytes : got + 1, bytes))
      allocation_error(r.name(), img.width, img.height, bytes);
    got += src.read(img.bytes.data() + got, img.bytes.size() - got);
    if (got < img.bytes.size())
      r.ran_out(std::string("truncated ") + r.label() + " pixel data: " + std::to_string(got) + " of " +
                std::to_string(bytes) + " bytes");
  }
  // On disk 16-bit samples are big-endian; in memory host order.
  const std::size_t n = bytes / img.bytes_per_sample();
  std::uint8_t* p = img.bytes.data();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = img.bit_depth == 16 ? (std::uint32_t{p[2 * i]} << 8 | p[2 * i + 1]) : p[i];
    if (v > img.maxval) r.above_maxval(i, img.maxval);
    store_sample(img, i, v);
  }
}

void read_plain_raster(PnmReader& r, Image& img, std::size_t bytes, bool known_to_fit) {
  const std::uint64_t n = img.samples();
  const std::size_t size = img.bytes_per_sample();
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::size_t end = static_cast<std::size_t>(i + 1) * size;
    if (end > img.bytes.size() && !grow_pixels(img.bytes, known_to_fit ? bytes : end, bytes))
      allocation_error(r.name(), img.width, img.height, bytes);
    store_sample(img, i, r.plain_sample(i, n, img.maxval));
  }
}

}  // namespace

bool looks_like_pnm(std::span<const std::uint8_t> file) {
  // P1..P7: the PBM and PAM variants are recognised so they get their own message.
  return file.size() >= 2 && file[0] == 'P' && file[1] >= '1' && file[1] <= '7';
}

Image decode_pnm(ByteSource& source, const std::string& name, std::uint64_t max_pixels) {
  std::uint8_t magic[2] = {0, 0};
  source.read(magic, 2);
  const Kind* kind = kind_of(static_cast<char>(magic[1]));
  if (!kind)
    input_error(name, std::string("Netpbm P") + static_cast<char>(magic[1]) +
                          " (PBM bitmap or PAM) images are not supported",
                "convert it to PGM (P2/P5), PPM (P3/P6) or PNG");
  PnmReader r(source, name, kind->label);
  source.set_budget(kHeaderBudget);
  r.set_over_budget_text(std::string("the ") + kind->label + " header goes on past " +
                         std::to_string(kHeaderBudget) + " bytes (whitespace, comments or digits without end)");
  const std::uint64_t width = r.header_number("width", 0xffffffffu);
  const std::uint64_t height = r.header_number("height", 0xffffffffu);
  const std::uint64_t maxval = r.header_number("maxval", 65535);
  if (width == 0 || height == 0)
    input_error(name, "the image is " + std::to_string(width) + " x " + std::to_string(height) + " pixels",
                "an image needs a width and a height of at least 1");
  if (maxval == 0) input_error(name, "maxval 0 is not allowed", "Netpbm's maxval is 1..65535");
  check_pixel_limit(name, kind->label, width, height, max_pixels);
  const std::uint32_t depth = maxval > 255 ? 16 : 8;
  const std::size_t bytes = image_bytes(width, height, kind->channels, depth);
  if (bytes == 0)
    input_error(name, "an image of " + std::to_string(width) + " x " + std::to_string(height) +
                          " pixels is too large for memory", "the file is damaged or not a Netpbm image");
  // Exactly one whitespace byte (or a comment through its newline) ends a binary header.
  if (!kind->plain) {
    const int c = source.peek();
    if (c < 0) r.ran_out(std::string("truncated ") + kind->label + " header: the file ends after the maxval");
    if (c == '#') r.skip_comment();
    else if (is_space(static_cast<std::uint8_t>(c))) source.skip();
    else r.malformed("the maxval is not followed by whitespace");
  }
  // Refuse a raster the file cannot hold before allocating it (a damaged header
  // must not ask for gigabytes): binary samples take their exact size, plain
  // ones at least one byte each. Where the size is unknown (a pipe), the
  // raster grows as the data comes.
  const std::uint64_t samples = width * height * kind->channels;
  const std::optional<std::uint64_t> left = source.remaining();
  if (!kind->plain && left && *left < bytes)
    input_error(name, std::string("truncated ") + kind->label + " pixel data: " + std::to_string(*left) +
                          " of " + std::to_string(bytes) + " bytes",
                "the file is incomplete: re-create it");
  if (kind->plain && left && samples > *left)
    input_error(name, std::string("truncated ") + kind->label + " pixel data: " + std::to_string(samples) +
                          " samples cannot fit in the " + std::to_string(*left) + " bytes left",
                "the file is incomplete: re-create it");
  // The raster takes what the header says and no more: bytes after it are
  // never read (Netpbm allows more images in one file; we read the first).
  const std::uint64_t raster_budget =
      kind->plain ? saturating_add(saturating_mul(samples, kPlainBytesPerSample), kPlainSlack) : bytes;
  source.set_budget(saturating_add(source.taken(), raster_budget));
  r.set_over_budget_text(std::string("the plain ") + kind->label + " pixel data goes on past " +
                         std::to_string(raster_budget) + " bytes, more than its " + std::to_string(samples) +
                         " samples can need");
  Image img;
  img.width = static_cast<std::uint32_t>(width);
  img.height = static_cast<std::uint32_t>(height);
  img.channels = kind->channels;
  img.bit_depth = depth;
  img.maxval = static_cast<std::uint32_t>(maxval);
  if (kind->plain) read_plain_raster(r, img, bytes, left.has_value());
  else read_binary_raster(r, img, bytes, left.has_value());
  return img;
}

std::vector<std::uint8_t> encode_pnm(const Image& img) {
  if (img.has_alpha())
    throw Error(ErrorKind::usage, "PGM and PPM have no alpha channel, and this image has one", "write a .png file");
  const std::string header = std::string(img.channels == 1 ? "P5" : "P6") + "\n" + std::to_string(img.width) + " " +
                             std::to_string(img.height) + "\n" + std::to_string(img.maxval) + "\n";
  // The sample size on disk follows maxval, not the in-memory depth.
  const bool wide = img.maxval > 255;
  const std::size_t n = static_cast<std::size_t>(img.samples());
  std::vector<std::uint8_t> out(header.begin(), header.end());
  out.reserve(header.size() + n * (wide ? 2 : 1));
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = load_sample(img, i);
    if (wide) out.push_back(static_cast<std::uint8_t>(v >> 8));
    out.push_back(static_cast<std::uint8_t>(v & 0xff));
  }
  return out;
}

}  // namespace levelhist::image::detail
