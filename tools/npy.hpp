// levelhist CLI: the header of NumPy .npy files (numpy.save; the format of
// numpy.lib.format, NEP 1): the magic "\x93NUMPY", a version byte pair (1.0,
// 2.0 or 3.0), the header's length (2 bytes little-endian in 1.0, 4 bytes in
// 2.0 and 3.0), then the header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces and ended by '\n'; the array's bytes follow it.
//
// A header is untrusted input: parse_header takes bytes, reads none past the
// length it states, refuses headers longer than numpy itself reads
// (kMaxHeaderSize), and throws Error(input) with one line for anything it
// does not take. No allocation depends on a number in the header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace levelhist::cli::npy {

// The magic, version and length field of version 2.0 and 3.0: the bytes
// header_size() needs to see.
inline constexpr std::size_t kPreambleSize = 12;
// numpy.load's own limit (max_header_size, 10000 since NumPy 1.24), plus the
// preamble: no header numpy writes for a plain array comes near it.
inline constexpr std::size_t kMaxHeaderSize = 10000;

// True when `bytes` start with the magic "\x93NUMPY".
bool has_magic(std::span<const std::uint8_t> bytes);

// The bytes from the file's start to its data (magic, version, length field
// and header), from the first kPreambleSize bytes or fewer. Throws
// Error(input) for an unknown version or a header longer than kMaxHeaderSize.
// `label` names the file in messages (quoted, or "standard input").
std::size_t header_size(std::span<const std::uint8_t> bytes, const std::string& label);

struct Header {
  std::string descr;          // "<f4"
  char byte_order = '|';      // '<', '>', '|' (no order: one byte) or '=' (native)
  char kind = 0;              // 'u', 'i', 'f', 'b', 'c', 'O', ...: numpy's dtype kind
  std::uint64_t item_size = 0;  // bytes per element: 4 for "<f4"
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;  // () for a scalar
  std::uint64_t count = 0;         // elements: the product of shape (1 for ())
  std::uint64_t data_offset = 0;   // header_size()
  // "(3, 4)", as numpy writes it, for messages.
  std::string shape_text() const;
};

// Parses a .npy header from the file's first bytes: at least header_size()
// of them (more are ignored). Throws Error(input) "<label>: <what>; <fix>"
// for a truncated or malformed header, keys other than descr, fortran_order
// and shape, a structured dtype (descr a list), an element size or shape
// whose product overflows 64 bits.
Header parse_header(std::span<const std::uint8_t> bytes, const std::string& label);

}  // namespace levelhist::cli::npy
