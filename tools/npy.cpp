#include "npy.hpp"

#include <cstring>
#include <optional>
#include <string_view>

#include "args.hpp"

namespace levelhist::cli::npy {
namespace {

constexpr std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

[[noreturn]] void bad_header(const std::string& label, const std::string& what) {
  input_error(label + ": malformed NumPy header: " + what,
              "re-save the array with numpy.save, or give raw samples with --type");
}

// A cursor over the dict literal numpy writes: {'key': value, ...}. Values are
// strings ('...' or "..."), True/False, and tuples of integers ((), (5,), (3, 4)).
class DictReader {
 public:
  DictReader(std::string_view text, const std::string& label) : s_(text), label_(label) {}

  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool take(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c, const char* where) {
    if (!take(c)) fail(std::string("expected '") + c + "' " + where + ", found " + here());
  }
  bool at_end() {
    space();
    return i_ == s_.size();
  }
  char peek() {
    space();
    return i_ < s_.size() ? s_[i_] : '\0';
  }

  std::string string(const char* what) {
    space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail(std::string("expected ") + what + ", found " + here());
    const char quote = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != quote) {
      // numpy's descr strings and keys need no escapes: a backslash is refused, not interpreted.
      if (s_[i_] == '\\') fail("an escape sequence in a string");
      out += s_[i_++];
    }
    if (i_ >= s_.size()) fail("a string without its closing quote");
    ++i_;
    return out;
  }

  bool boolean(const char* what) {
    space();
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}})
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        return value;
      }
    fail(std::string("expected True or False for ") + what + ", found " + here());
  }

  // A tuple of non-negative integers: (), (5,), (3, 4) or (3, 4,); a Python 2
  // 'L' suffix is allowed (3L, 4L).
  std::vector<std::uint64_t> shape() {
    expect('(', "to open the shape");
    std::vector<std::uint64_t> dims;
    if (take(')')) return dims;
    while (true) {
      space();
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') fail("expected a dimension of the shape, found " + here());
      std::uint64_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        const auto digit = static_cast<std::uint64_t>(s_[i_++] - '0');
        if (v > (UINT64_MAX - digit) / 10) fail("a dimension of the shape beyond 2^64");
        v = v * 10 + digit;
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;
      // numpy's NPY_MAXDIMS is 64 (32 before NumPy 2): more is no array.
      if (dims.size() == 64) fail("a shape of more than 64 dimensions");
      dims.push_back(v);
      if (take(')')) break;
      expect(',', "between the dimensions of the shape");
      if (take(')')) break;
    }
    return dims;
  }

  [[noreturn]] void fail(const std::string& what) { bad_header(label_, what); }

 private:
  std::string here() const {
    if (i_ >= s_.size()) return "the end of the header";
    const auto c = static_cast<unsigned char>(s_[i_]);
    if (c >= 0x21 && c <= 0x7e) return std::string("'") + s_[i_] + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  const std::string& label_;
};

// "<f4" -> order '<', kind 'f', size 4. A descr with more after the size (a
// unit: "<M8[ns]") or none ("|O") gets size 0; the caller refuses what it
// cannot count, naming the descr.
void read_descr(const std::string& descr, Header& h, const std::string& label) {
  std::size_t i = 0;
  h.byte_order = '=';
  if (i < descr.size() && (descr[i] == '<' || descr[i] == '>' || descr[i] == '|' || descr[i] == '=')) h.byte_order = descr[i++];
  if (i >= descr.size()) bad_header(label, "the descr " + quote(descr) + " names no type");
  h.kind = descr[i++];
  std::uint64_t size = 0;
  std::size_t digits = 0;
  for (; i < descr.size() && descr[i] >= '0' && descr[i] <= '9' && digits < 6; ++i, ++digits)
    size = size * 10 + static_cast<std::uint64_t>(descr[i] - '0');
  h.item_size = i == descr.size() ? size : 0;
}

}  // namespace

bool has_magic(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

std::size_t header_size(std::span<const std::uint8_t> bytes, const std::string& label) {
  if (bytes.size() < 8)
    input_error(label + ": the NumPy header is cut short after " + std::to_string(bytes.size()) + " bytes",
                "the file is incomplete: save the array again");
  const unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    input_error(label + ": NumPy format version " + std::to_string(major) + "." + std::to_string(minor) +
                    " is unknown (1.0, 2.0 and 3.0 are)",
                "re-save the array with numpy.save");
  const std::size_t field = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + field)
    input_error(label + ": the NumPy header is cut short after " + std::to_string(bytes.size()) + " bytes",
                "the file is incomplete: save the array again");
  std::uint64_t length = 0;
  for (std::size_t k = 0; k < field; ++k) length |= std::uint64_t{bytes[8 + k]} << (8 * k);
  if (length > kMaxHeaderSize)
    input_error(label + ": the NumPy header claims " + std::to_string(length) + " bytes, more than the " +
                    std::to_string(kMaxHeaderSize) + " numpy.load reads",
                "the file is damaged or holds a structured array; save a plain array with numpy.save");
  return static_cast<std::size_t>(8 + field + length);
}

std::string Header::shape_text() const {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

Header parse_header(std::span<const std::uint8_t> bytes, const std::string& label) {
  if (!has_magic(bytes)) input_error(label + ": not a NumPy file (no \\x93NUMPY magic)", "give a .npy file");
  const std::size_t total = header_size(bytes, label);
  if (bytes.size() < total)
    input_error(label + ": the NumPy header is cut short: " + std::to_string(bytes.size()) + " of " +
                    std::to_string(total) + " bytes",
                "the file is incomplete: save the array again");
  const std::size_t start = bytes[6] == 1 ? 10 : 12;
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + start, total - start);
  // Version 3.0 is UTF-8, 1.0 and 2.0 latin-1: a header numpy writes for a
  // plain array is ASCII either way; anything else is refused, never shown raw.
  for (unsigned char c : text)
    if (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\t' && c != '\r'))
      bad_header(label, "a byte that is not printable ASCII");
  Header h;
  h.data_offset = total;
  DictReader r(text, label);
  r.expect('{', "at the start");
  bool seen_descr = false, seen_order = false, seen_shape = false;
  while (!r.take('}')) {
    const std::string key = r.string("a key");
    r.expect(':', "after a key");
    if (key == "descr" && !seen_descr) {
      if (r.peek() == '[')
        input_error(label + ": the array has a structured dtype (named fields), not numbers",
                    "save one field as its own array, e.g. numpy.save('x.npy', a['field'])");
      h.descr = r.string("the descr string");
      read_descr(h.descr, h, label);
      seen_descr = true;
    } else if (key == "fortran_order" && !seen_order) {
      h.fortran_order = r.boolean("fortran_order");
      seen_order = true;
    } else if (key == "shape" && !seen_shape) {
      h.shape = r.shape();
      seen_shape = true;
    } else {
      r.fail(seen_descr && key == "descr" ? "the key 'descr' twice" : "an unknown or repeated key " + quote(key));
    }
    if (!r.take(',')) {
      r.expect('}', "after a value");
      break;
    }
  }
  if (!r.at_end()) r.fail("text after the closing brace");
  if (!seen_descr || !seen_order || !seen_shape)
    r.fail(std::string("no '") + (!seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape") + "' key");
  h.count = 1;
  for (std::uint64_t d : h.shape) {
    if (d != 0 && h.count > UINT64_MAX / d)
      input_error(label + ": the NumPy shape " + h.shape_text() + " has more than 2^64 elements",
                  "the file is damaged: save the array again");
    h.count *= d;
  }
  if (h.item_size != 0 && h.count > UINT64_MAX / h.item_size)
    input_error(label + ": the NumPy shape " + h.shape_text() + " of " + quote(h.descr) + " needs more than 2^64 bytes",
                "the file is damaged: save the array again");
  return h;
}

}  // namespace levelhist::cli::npy
