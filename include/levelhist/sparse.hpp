// levelhist: sparse histograms of 32- and 64-bit integer keys.
//
// When the possible values far outnumber the samples (user ids, hashes,
// addresses), one counter per value cannot be allocated; sort the keys instead
// and count the runs of equal neighbours: the (value, count) pairs of the
// values that occur. Wilt part 1 names the method ("sort the N inputs and
// look for adjacent duplicates ... Thrust calls this reduce_by_key"). GPU:
// CUB radix sort then reduce_by_key (cuda_sparse.hpp); CPU: a parallel LSD
// radix sort of a copy, then one pass counting runs.
//
//   std::vector<std::uint32_t> ids = ...;
//   for (auto [value, count] : levelhist::sparse_histogram<std::uint32_t>(ids)) ...
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "levelhist/levelhist.hpp"

namespace levelhist {

// The key types of sparse histograms. Not SampleType: the 64-bit keys have no
// exact double, so they cannot take part in the binned histograms (bin_index.hpp
// converts every sample to double).
enum class KeyType : std::uint8_t { u32, i32, u64, i64 };

inline constexpr KeyType kAllKeyTypes[] = {KeyType::u32, KeyType::i32, KeyType::u64, KeyType::i64};

template <class T> constexpr KeyType key_type_of() {
  if constexpr (std::is_same_v<T, std::uint32_t>) return KeyType::u32;
  else if constexpr (std::is_same_v<T, std::int32_t>) return KeyType::i32;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return KeyType::u64;
  else if constexpr (std::is_same_v<T, std::int64_t>) return KeyType::i64;
  else static_assert(sizeof(T) == 0, "levelhist: sparse keys are u32, i32, u64 or i64");
}
constexpr std::size_t key_size(KeyType type) { return type == KeyType::u32 || type == KeyType::i32 ? 4 : 8; }
constexpr bool key_is_signed(KeyType type) { return type == KeyType::i32 || type == KeyType::i64; }
std::string_view to_string(KeyType type);
std::optional<KeyType> parse_key_type(std::string_view name);  // "u32", "i32", "u64", "i64"

// Calls f(type_tag<T>{}) with the C++ type of `type` (type_tag: sample_type.hpp).
template <class F> decltype(auto) visit_key_type(KeyType type, F&& f) {
  switch (type) {
    case KeyType::u32: return f(type_tag<std::uint32_t>{});
    case KeyType::i32: return f(type_tag<std::int32_t>{});
    case KeyType::u64: return f(type_tag<std::uint64_t>{});
    case KeyType::i64: break;
  }
  return f(type_tag<std::int64_t>{});
}

// One value that occurs and how often. `value` holds the key converted to 64
// bits: unsigned keys zero-extended, signed keys sign-extended, so
// static_cast<std::int64_t>(value) is the key of an i32 or i64 histogram
// (an i32 key -1 is stored as 0xFFFFFFFFFFFFFFFF, not 0xFFFFFFFF).
struct ValueCount {
  std::uint64_t value;
  std::uint64_t count;
  friend bool operator==(const ValueCount&, const ValueCount&) = default;
};

// The (value, count) pairs of the n keys of `type` at `keys` (host memory, any
// alignment), by value ascending (signed order for signed keys), exact 64-bit
// counts that sum to n. Backend as counting_sort (sort.hpp): automatic takes
// CUDA when present; cuda without it throws Error(unsupported); the CPU uses
// options.threads. options.strategy must be "auto".
std::vector<ValueCount> sparse_histogram(KeyType type, const void* keys, std::uint64_t n, const Options& options = {});

// The same, saying which backend ran.
std::vector<ValueCount> sparse_histogram(KeyType type, const void* keys, std::uint64_t n, const Options& options,
                                         Backend* ran);

template <class T>
std::vector<ValueCount> sparse_histogram(std::span<const T> keys, const Options& options = {}) {
  return sparse_histogram(key_type_of<T>(), keys.data(), keys.size(), options);
}

}  // namespace levelhist
