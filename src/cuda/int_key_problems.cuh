// The problems of the strategies for u32/i32 keys in huge numbers of bins
// (gpu_partition_count, gpu_bucket_sort): one test, so both take the same ones.
#pragma once
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

}  // namespace levelhist::cuda_detail
