// Sparse histograms on the CPU: sort, then count runs of equal neighbours
// (Wilt part 1: "sort the N inputs and look for adjacent duplicates to
// identify the number of elements that belong in each bin").
//
// The sort is a parallel LSD radix sort of a copy, 8 bits a pass: each pass
// counts digits per part (one part per thread), turns the counts into each
// part's write position per digit (digit-major, part-minor: stable), and
// scatters. A pass whose digit is the same for every key (the top byte of keys
// below 2^24, say) is skipped: the counts say so before anything moves. Signed
// keys are copied with the sign bit flipped, so unsigned order is signed order,
// and flipped back when the pairs are written. std::sort on one core takes
// about ten times longer on 2^26 keys; the radix sort is O(n) per pass and
// runs at memory speed on every core.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <type_traits>

#include "cpu/cpu_parallel_fork_join.hpp"
#include "cpu/sort_methods.hpp"
#include "levelhist/error.hpp"

namespace levelhist::cpu_sort {
namespace {

constexpr std::uint64_t kMinKeysPerPart = std::uint64_t{1} << 16;
constexpr unsigned kDigitBits = 8;
constexpr unsigned kDigits = 1u << kDigitBits;

using DigitCounts = std::array<std::uint64_t, kDigits>;

// Sorts a[0, n) using tmp[0, n); returns the buffer holding the result.
template <class U>
U* lsd_radix_sort(U* a, U* tmp, std::uint64_t n, unsigned parts) {
  std::vector<DigitCounts> counts(parts);
  auto part_begin = [&](unsigned p) { return n / parts * p; };
  auto part_end = [&](unsigned p) { return p + 1 == parts ? n : n / parts * (p + 1); };
  for (unsigned shift = 0; shift < sizeof(U) * 8; shift += kDigitBits) {
    cpu_parallel_detail::fork_join(parts, [&](unsigned p) {
      DigitCounts& c = counts[p];
      c.fill(0);
      for (std::uint64_t i = part_begin(p), e = part_end(p); i < e; ++i) ++c[(a[i] >> shift) & (kDigits - 1)];
    });
    // Skip a pass that would leave every key where it is.
    bool one_digit = false;
    for (unsigned d = 0; d < kDigits && !one_digit; ++d) {
      std::uint64_t total = 0;
      for (unsigned p = 0; p < parts; ++p) total += counts[p][d];
      one_digit = total == n;
    }
    if (one_digit) continue;
    std::uint64_t at = 0;
    for (unsigned d = 0; d < kDigits; ++d)
      for (unsigned p = 0; p < parts; ++p) {
        const std::uint64_t c = counts[p][d];
        counts[p][d] = at;
        at += c;
      }
    cpu_parallel_detail::fork_join(parts, [&](unsigned p) {
      DigitCounts& next = counts[p];
      for (std::uint64_t i = part_begin(p), e = part_end(p); i < e; ++i) tmp[next[(a[i] >> shift) & (kDigits - 1)]++] = a[i];
    });
    std::swap(a, tmp);
  }
  return a;
}

template <class T>
std::vector<ValueCount> sparse_typed(const void* keys, std::uint64_t n, unsigned threads) {
  using U = std::make_unsigned_t<T>;
  constexpr U kFlip = std::is_signed_v<T> ? U{1} << (sizeof(U) * 8 - 1) : U{0};
  threads = cpu_parallel_detail::threads_or_cores(threads);
  const unsigned parts = static_cast<unsigned>(std::min<std::uint64_t>(threads, n / kMinKeysPerPart + 1));
  std::unique_ptr<U[]> a(new U[n]), tmp(new U[n]);
  const auto* src = static_cast<const unsigned char*>(keys);
  cpu_parallel_detail::fork_join(parts, [&](unsigned p) {
    const std::uint64_t b = n / parts * p, e = p + 1 == parts ? n : n / parts * (p + 1);
    std::memcpy(a.get() + b, src + b * sizeof(U), (e - b) * sizeof(U));  // any alignment
    if constexpr (kFlip != 0)
      for (std::uint64_t i = b; i < e; ++i) a[i] ^= kFlip;
  });
  const U* sorted = lsd_radix_sort<U>(a.get(), tmp.get(), n, parts);
  std::vector<ValueCount> pairs;
  for (std::uint64_t i = 0; i < n;) {
    std::uint64_t j = i + 1;
    while (j < n && sorted[j] == sorted[i]) ++j;
    // Signed keys sign-extend to 64 bits (sparse.hpp's ValueCount).
    const T key = static_cast<T>(static_cast<U>(sorted[i] ^ kFlip));
    const std::uint64_t value = std::is_signed_v<T> ? static_cast<std::uint64_t>(static_cast<std::int64_t>(key))
                                                    : static_cast<std::uint64_t>(key);
    pairs.push_back({value, j - i});
    i = j;
  }
  return pairs;
}

}  // namespace

std::vector<ValueCount> sparse_histogram(KeyType type, const void* keys, std::uint64_t n, unsigned threads) {
  if (n == 0) return {};
  return visit_key_type(type, [&](auto tag) { return sparse_typed<typename decltype(tag)::type>(keys, n, threads); });
}

}  // namespace levelhist::cpu_sort
