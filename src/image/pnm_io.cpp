// Netpbm gray and color images: P2 (plain PGM), P5 (PGM), P3 (plain PPM), P6
// (PPM), maxval 1..65535, samples of 2 bytes big-endian when maxval > 255
// (https://netpbm.sourceforge.net/doc/pgm.html, ppm.html). '#' comments run to
// the end of their line and may stand wherever whitespace may, also between
// the samples of plain files. Bytes after the raster are ignored (Netpbm
// allows several images in one file; we read the first).
#include <cstdio>
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

// A cursor over the file that knows how to report what is wrong with it.
class PnmReader {
 public:
  PnmReader(std::span<const std::uint8_t> file, const std::string& name, const char* label)
      : file_(file), name_(name), label_(label) {}

  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return file_.size() - pos_; }
  const std::uint8_t* here() const { return file_.data() + pos_; }
  void advance(std::size_t n) { pos_ += n; }

  // Whitespace and comments; `required`: at least one of them must be there
  // (tokens of the header must be separated).
  void skip_space(const char* before, bool required) {
    const std::size_t start = pos_;
    while (pos_ < file_.size()) {
      if (is_space(file_[pos_])) ++pos_;
      else if (file_[pos_] == '#') skip_comment();
      else break;
    }
    if (required && pos_ == start && pos_ < file_.size())
      malformed(std::string("expected whitespace before the ") + before + ", found " + describe_here());
  }

  // A comment from '#' through its newline (or the end of the file).
  void skip_comment() {
    while (pos_ < file_.size() && file_[pos_] != '\n' && file_[pos_] != '\r') ++pos_;
    if (pos_ < file_.size()) ++pos_;
  }

  // An unsigned decimal number of the header. `field` names it in messages.
  std::uint64_t header_number(const char* field, std::uint64_t max) {
    skip_space(field, true);
    if (pos_ >= file_.size())
      input_error(name_, std::string("truncated ") + label_ + " header: the file ends before the " + field,
                  "the file is incomplete: re-create it");
    if (!is_digit(file_[pos_]))
      malformed(std::string("expected the ") + field + " (a decimal number), found " + describe_here());
    std::uint64_t v = 0;
    while (pos_ < file_.size() && is_digit(file_[pos_])) {
      v = v * 10 + (file_[pos_++] - '0');
      if (v > max) too_large(field, max);
    }
    if (pos_ < file_.size() && !is_space(file_[pos_]) && file_[pos_] != '#')
      malformed(std::string("the ") + field + " is followed by " + describe_here() + ", not whitespace");
    return v;
  }

  // One sample of a plain (P2/P3) raster; sample `index` of `count`.
  std::uint32_t plain_sample(std::uint64_t index, std::uint64_t count, std::uint32_t maxval) {
    skip_space("sample", index > 0);
    if (pos_ >= file_.size())
      input_error(name_, std::string("truncated ") + label_ + " pixel data: " + std::to_string(index) + " of " +
                             std::to_string(count) + " samples",
                  "the file is incomplete: re-create it");
    if (!is_digit(file_[pos_]))
      input_error(name_, "sample " + std::to_string(index) + " is " + describe_here() + ", not a decimal number",
                  "plain " + std::string(label_) + " samples are decimal numbers separated by whitespace");
    std::uint64_t v = 0;
    while (pos_ < file_.size() && is_digit(file_[pos_])) {
      v = v * 10 + (file_[pos_++] - '0');
      if (v > maxval) above_maxval(index, maxval);
    }
    return static_cast<std::uint32_t>(v);
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
  std::string describe_here() const {
    const std::uint8_t c = file_[pos_];
    if (c >= 0x21 && c <= 0x7e) return std::string("'") + static_cast<char>(c) + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }

  std::span<const std::uint8_t> file_;
  std::size_t pos_ = 2;  // after the magic
  const std::string& name_;
  const char* label_;
};

// The caller checked that the file holds the whole raster.
void read_binary_raster(PnmReader& r, Image& img) {
  const std::size_t need = img.bytes.size();
  const std::size_t n = need / img.bytes_per_sample();
  const std::uint8_t* p = r.here();
  // On disk 16-bit samples are big-endian; in memory host order.
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = img.bit_depth == 16 ? (std::uint32_t{p[2 * i]} << 8 | p[2 * i + 1]) : p[i];
    if (v > img.maxval) r.above_maxval(i, img.maxval);
    store_sample(img, i, v);
  }
  r.advance(need);
}

void read_plain_raster(PnmReader& r, Image& img) {
  const std::uint64_t n = img.samples();
  for (std::uint64_t i = 0; i < n; ++i) store_sample(img, i, r.plain_sample(i, n, img.maxval));
}

}  // namespace

bool looks_like_pnm(std::span<const std::uint8_t> file) {
  // P1..P7: the PBM and PAM variants are recognised so they get their own message.
  return file.size() >= 2 && file[0] == 'P' && file[1] >= '1' && file[1] <= '7';
}

Image decode_pnm(std::span<const std::uint8_t> file, const std::string& name) {
  const Kind* kind = kind_of(static_cast<char>(file[1]));
  if (!kind)
    input_error(name, std::string("Netpbm P") + static_cast<char>(file[1]) +
                          " (PBM bitmap or PAM) images are not supported",
                "convert it to PGM (P2/P5), PPM (P3/P6) or PNG");
  PnmReader r(file, name, kind->label);
  const std::uint64_t width = r.header_number("width", 0xffffffffu);
  const std::uint64_t height = r.header_number("height", 0xffffffffu);
  const std::uint64_t maxval = r.header_number("maxval", 65535);
  if (width == 0 || height == 0)
    input_error(name, "the image is " + std::to_string(width) + " x " + std::to_string(height) + " pixels",
                "an image needs a width and a height of at least 1");
  if (maxval == 0) input_error(name, "maxval 0 is not allowed", "Netpbm's maxval is 1..65535");
  const std::uint32_t depth = maxval > 255 ? 16 : 8;
  const std::size_t bytes = image_bytes(width, height, kind->channels, depth);
  if (bytes == 0)
    input_error(name, "an image of " + std::to_string(width) + " x " + std::to_string(height) +
                          " pixels is too large for memory", "the file is damaged or not a Netpbm image");
  // Exactly one whitespace byte (or a comment through its newline) ends a binary header.
  if (!kind->plain) {
    if (r.remaining() == 0)
      input_error(name, std::string("truncated ") + kind->label + " header: the file ends after the maxval",
                  "the file is incomplete: re-create it");
    if (*r.here() == '#') r.skip_comment();
    else if (is_space(*r.here())) r.advance(1);
    else r.malformed("the maxval is not followed by whitespace");
  }
  // Refuse a raster the file cannot hold before allocating it (a damaged header
  // must not ask for gigabytes): binary samples take their exact size, plain
  // ones at least one byte each.
  const std::uint64_t samples = width * height * kind->channels;
  if (!kind->plain && r.remaining() < bytes)
    input_error(name, std::string("truncated ") + kind->label + " pixel data: " + std::to_string(r.remaining()) +
                          " of " + std::to_string(bytes) + " bytes",
                "the file is incomplete: re-create it");
  if (kind->plain && samples > r.remaining())
    input_error(name, std::string("truncated ") + kind->label + " pixel data: " + std::to_string(samples) +
                          " samples cannot fit in the " + std::to_string(r.remaining()) + " bytes left",
                "the file is incomplete: re-create it");
  Image img;
  img.width = static_cast<std::uint32_t>(width);
  img.height = static_cast<std::uint32_t>(height);
  img.channels = kind->channels;
  img.bit_depth = depth;
  img.maxval = static_cast<std::uint32_t>(maxval);
  img.bytes.assign(bytes, 0);
  if (kind->plain) read_plain_raster(r, img);
  else read_binary_raster(r, img);
  return img;
}

std::vector<std::uint8_t> encode_pnm(const Image& img) {
  if (img.has_alpha())
    throw Error(ErrorKind::usage, "PGM and PPM have no alpha channel, and this image has one; write a .png file");
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
