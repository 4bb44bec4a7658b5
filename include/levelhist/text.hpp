// levelhist: the text histogram of Kirk & Hwu, Programming Massively Parallel
// Processors, 4th ed., chapter 9, Figs. 9.1 and 9.2 (docs/REFERENCES.md): the
// letters a-z in groups of four, 7 bins a-d, e-h, i-l, m-p, q-t, u-x, y-z.
//
// Figure 9.2 maps a byte c to bin (c - 'a') / 4 when 'a' <= c <= 'z' and drops
// every other byte. Here that mapping is an ordinary Binning over u8 samples
// (explicit edges 'a', 'e', 'i', 'm', 'q', 'u', 'y', 'z' + 1 = 97, 101, ..., 121,
// 123), so any strategy can count it, and nothing is dropped: bytes below 'a'
// land in the underflow counter, bytes above 'z' in the overflow counter; the
// two together are the "other" bytes (other()).
//
// Case: like the book, only lowercase letters count by default ('A' is 65, below
// 'a', so it is "other"). With fold_case, 'A'..'Z' count as their lowercase
// letter. Bytes 128..255 (non-ASCII, e.g. UTF-8 sequences) are always "other".
#pragma once
#include <cstdint>
#include <string_view>

#include "levelhist/binning.hpp"
#include "levelhist/histogram.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::text {

inline constexpr std::uint64_t kLetterBins = 7;

// "a-d", "e-h", "i-l", "m-p", "q-t", "u-x", "y-z" for bins 0..6 ("?" otherwise).
std::string_view letter_bin_label(std::uint64_t bin);
// The first and last letter of a bin: 'a' and 'd' for bin 0, 'y' and 'z' for bin 6.
char letter_bin_first(std::uint64_t bin);
char letter_bin_last(std::uint64_t bin);

// The letter bin of one byte as Figure 9.2 computes it, or -1 for a byte that
// is not counted as a letter. fold_case also maps 'A'..'Z'.
int letter_bin(unsigned char c, bool fold_case = false);

// The 7-bin letter axis over u8 samples: explicit edges 97, 101, 105, 109, 113,
// 117, 121, 123 (half-open bins, so 'z' = 122 is the last value of the last bin).
Binning letter_binning();

// The letter histogram (binning letter_binning()) from a 256-bin byte histogram
// (binning Binning::per_value(SampleType::u8)); lets a caller count bytes once,
// in chunks or with any strategy, and fold afterwards. Bytes that are not
// letters go to underflow (below 'a') or overflow (above 'z'); with fold_case,
// 'A'..'Z' go to their letter's bin instead of underflow.
// Throws Error(usage) if `bytes` has another binning.
Histogram letters_from_bytes(const Histogram& bytes, bool fold_case = false);

// The letter histogram of n bytes of text (host memory).
Histogram letter_histogram(const void* text, std::uint64_t n, bool fold_case = false, const Options& options = {});
inline Histogram letter_histogram(std::string_view text, bool fold_case = false, const Options& options = {}) {
  return letter_histogram(text.data(), text.size(), fold_case, options);
}

// Bytes that are not (counted as) letters: underflow + overflow of a letter histogram.
inline std::uint64_t other(const Histogram& letters) { return letters.underflow() + letters.overflow(); }

}  // namespace levelhist::text
