// What the strategies for u32/i32 keys in huge numbers of bins
// (gpu_partition_count, gpu_bucket_sort) share: one test of their problems, so
// both take the same ones, and a key's value for the integer-shift map.
#pragma once
#include <cstdint>
#include <string>

#include "core/bin_maps.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist::cuda_detail {

// Whether `p` is u32/i32 keys in even bins whose width is a power of two on
// integer bounds; if not, why, naming `strategy`.
inline bool int_keys_in_shift_bins(const Problem& p, const char* strategy, std::string* why_not) {
  if (p.type != SampleType::u32 && p.type != SampleType::i32) {
    if (why_not) *why_not = std::string(strategy) + " takes 32-bit integer keys (u32, i32) only";
    return false;
  }
  if (!binmap::int_shift_applies(p.type, *p.binning)) {
    if (why_not)
      *why_not = std::string(strategy) +
                 " needs even bins whose width is a power of two on integer bounds (e.g. 2^20 bins over [0, 2^32))";
    return false;
  }
  return true;
}

// The map of these problems, on 64-bit values (every u32 and i32 key).
using KeyShiftMap = binmap::IntShiftMap<true>;

// A key's bits as the value the map takes.
__host__ __device__ __forceinline__ std::int64_t key_value(unsigned bits, bool is_signed) {
  return is_signed ? static_cast<std::int64_t>(static_cast<int>(bits)) : static_cast<std::int64_t>(bits);
}

}  // namespace levelhist::cuda_detail
