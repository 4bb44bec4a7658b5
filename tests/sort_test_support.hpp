// What the counting-sort and sparse-histogram suites share (CPU:
// test_sort_sparse.cpp, CUDA: test_gpu_sort_sparse.cpp): the inputs and the
// independent references, std::sort and std::map.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "levelhist/sort.hpp"
#include "levelhist/sparse.hpp"
#include "test_support.hpp"

namespace levelhist::test {

inline constexpr SampleType kSortTypes[] = {SampleType::u8, SampleType::i8, SampleType::u16, SampleType::i16};

// One input of a sort test: raw bytes of `type`.
struct SortCase {
  std::string name;
  std::vector<unsigned char> bytes;
  std::uint64_t n() const { return bytes.size() / sample_size(type); }
  SampleType type;
};

// std::sort of the samples in `bytes`: the reference every counting sort must equal.
inline std::vector<unsigned char> std_sorted(SampleType type, const std::vector<unsigned char>& bytes) {
  std::vector<unsigned char> out = bytes;
  visit_sample_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    std::sort(v.begin(), v.end());
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  });
  return out;
}

// Every distribution of test_support.hpp at `n`, plus the input already
// sorted and sorted in reverse.
inline std::vector<SortCase> sort_cases(SampleType type, std::uint64_t n) {
  std::vector<SortCase> out;
  for (Dist d : dists_for(type)) {
    const GenSpec g{type, d, n, seed_for("sort/" + std::string(to_string(d)), n), full_window(type)};
    out.push_back({describe(g), generate(g), type});
  }
  const GenSpec g{type, Dist::uniform_full, n, seed_for("sort/sorted", n), full_window(type)};
  std::vector<unsigned char> sorted = std_sorted(type, generate(g));
  out.push_back({describe(g) + ", sorted", sorted, type});
  std::vector<unsigned char> reversed(sorted.size());
  const std::size_t size = sample_size(type);
  for (std::uint64_t i = 0; i < n; ++i) std::memcpy(&reversed[i * size], &sorted[(n - 1 - i) * size], size);
  out.push_back({describe(g) + ", reversed", reversed, type});
  return out;
}

// Sizes around the CPU's part boundaries (2^20 samples a part) and small tails.
inline std::vector<std::uint64_t> sort_sizes() { return {0, 1, 2, 3, 15, 16, 17, 31, 255, 1000, 4097, 65537}; }

// ---- sparse ---------------------------------------------------------------------

struct KeyCase {
  std::string name;
  KeyType type;
  std::vector<unsigned char> bytes;
  std::uint64_t n() const { return bytes.size() / key_size(type); }
};

// Keys of `type`: `kind` "uniform" (full range, nearly all distinct), "few"
// (17 values, extremes included), "one" (one value), "extremes" (min, max,
// -1, 0, 1 and their neighbours, mixed with uniform ones), "negative" (signed:
// only negative keys; unsigned: keys with the top bit set).
inline KeyCase key_case(KeyType type, const std::string& kind, std::uint64_t n) {
  return visit_key_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::mt19937_64 rng(seed_for("sparse/" + kind + "/" + std::string(to_string(type)), n));
    const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const std::vector<T> special = {lo, static_cast<T>(lo + 1), hi, static_cast<T>(hi - 1), T(0), T(1),
                                    static_cast<T>(T(0) - T(1)), static_cast<T>(hi / 2), static_cast<T>(lo / 2)};
    std::vector<T> few = special;
    while (few.size() < 17) few.push_back(static_cast<T>(rng()));
    const T one = static_cast<T>(rng());
    std::vector<T> keys(n);
    for (T& k : keys) {
      const T u = static_cast<T>(rng());
      if (kind == "uniform") k = u;
      else if (kind == "few") k = few[rng() % few.size()];
      else if (kind == "one") k = one;
      else if (kind == "extremes") k = rng() % 2 ? special[rng() % special.size()] : u;
      else k = static_cast<T>(u | (T(1) << (sizeof(T) * 8 - 1)));  // negative / top bit set
    }
    KeyCase c{kind + " " + std::string(to_string(type)) + " keys, n " + std::to_string(n) +
                  " (base seed " + std::to_string(base_seed()) + ")",
              type, std::vector<unsigned char>(n * sizeof(T))};
    if (n) std::memcpy(c.bytes.data(), keys.data(), c.bytes.size());
    return c;
  });
}

inline std::vector<KeyCase> key_cases(KeyType type, std::uint64_t n) {
  std::vector<KeyCase> out;
  for (const char* kind : {"uniform", "few", "one", "extremes", "negative"}) out.push_back(key_case(type, kind, n));
  return out;
}

// The pairs by std::map: the reference every sparse histogram must equal.
inline std::vector<ValueCount> map_counts(KeyType type, const std::vector<unsigned char>& bytes) {
  return visit_key_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::map<T, std::uint64_t> m;
    for (std::size_t i = 0; i + sizeof(T) <= bytes.size(); i += sizeof(T)) {
      T k;
      std::memcpy(&k, &bytes[i], sizeof(T));
      ++m[k];
    }
    std::vector<ValueCount> out;
    for (auto [k, c] : m)
      out.push_back({std::is_signed_v<T> ? static_cast<std::uint64_t>(static_cast<std::int64_t>(k))
                                         : static_cast<std::uint64_t>(k),
                     c});
    return out;
  });
}

// The first difference of two pair lists, or "".
inline std::string pairs_diff(const std::vector<ValueCount>& want, const std::vector<ValueCount>& got) {
  if (want.size() != got.size())
    return "expected " + std::to_string(want.size()) + " pairs, got " + std::to_string(got.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!(want[i] == got[i]))
      return "pair " + std::to_string(i) + ": expected (" + std::to_string(want[i].value) + ", " +
             std::to_string(want[i].count) + "), got (" + std::to_string(got[i].value) + ", " +
             std::to_string(got[i].count) + ")";
  return "";
}

// The first differing sample of two sorted byte arrays, or "".
inline std::string sorted_diff(SampleType type, const std::vector<unsigned char>& want, const void* got) {
  const std::size_t size = sample_size(type);
  for (std::size_t i = 0; i < want.size(); i += size)
    if (std::memcmp(&want[i], static_cast<const unsigned char*>(got) + i, size) != 0)
      return "sample " + std::to_string(i / size) + " of " + std::to_string(want.size() / size) + " differs";
  return "";
}

}  // namespace levelhist::test
