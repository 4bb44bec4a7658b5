// The PMPP chapter 9 letter histogram as a Binning (see include/levelhist/text.hpp).
#include "levelhist/text.hpp"

#include "levelhist/error.hpp"

namespace levelhist::text {

std::string_view letter_bin_label(std::uint64_t bin) {
  static constexpr std::string_view kLabels[kLetterBins] = {"a-d", "e-h", "i-l", "m-p", "q-t", "u-x", "y-z"};
  return bin < kLetterBins ? kLabels[bin] : std::string_view("?");
}

char letter_bin_first(std::uint64_t bin) { return bin < kLetterBins ? static_cast<char>('a' + 4 * bin) : '?'; }

char letter_bin_last(std::uint64_t bin) {
  if (bin >= kLetterBins) return '?';
  return bin + 1 == kLetterBins ? 'z' : static_cast<char>('a' + 4 * bin + 3);
}

int letter_bin(unsigned char c, bool fold_case) {
  if (fold_case && c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
  int position = static_cast<int>(c) - 'a';  // Figure 9.2, line 03
  if (position >= 0 && position < 26) return position / 4;
  return -1;
}

Binning letter_binning() {
  return Binning::explicit_edges({97.0, 101.0, 105.0, 109.0, 113.0, 117.0, 121.0, 123.0});
}

Histogram letters_from_bytes(const Histogram& bytes, bool fold_case) {
  if (!(bytes.binning() == Binning::per_value(SampleType::u8)))
    throw Error(ErrorKind::usage, "letters_from_bytes needs a 256-bin byte histogram (Binning::per_value(u8)), got " +
                                      bytes.binning().describe());
  Histogram letters(letter_binning());
  auto slots = letters.slots();
  for (unsigned c = 0; c < 256; ++c) {
    std::uint64_t n = bytes.count(c);
    if (n == 0) continue;
    int bin = letter_bin(static_cast<unsigned char>(c), fold_case);
    if (bin >= 0) slots[static_cast<std::uint64_t>(bin)] += n;
    else if (c < 'a') slots[letters.binning().underflow_slot()] += n;
    else slots[letters.binning().overflow_slot()] += n;
  }
  return letters;
}

Histogram letter_histogram(const void* text, std::uint64_t n, bool fold_case, const Options& options) {
  if (!fold_case) return histogram(SampleType::u8, text, n, letter_binning(), options);
  return letters_from_bytes(histogram(SampleType::u8, text, n, Binning::per_value(SampleType::u8), options), true);
}

}  // namespace levelhist::text
