// The Strategy of the lane-column kernel (lane_columns_kernel.cuh) under a
// tuning policy: gpu_lane_columns under the library's (lane_columns_policy.cuh),
// and the lab's variants under theirs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/lane_columns_kernel.cuh"
#include "levelhist/strategy.hpp"

namespace levelhist::cuda_detail::lane_columns {

inline bool supports(const Problem& p, std::string* why_not) {
  if (p.type == SampleType::u8 || p.type == SampleType::i8) return true;
  if (why_not) *why_not = "the lane-column kernels count 8-bit samples (u8, i8) only";
  return false;
}

inline std::size_t workspace_bytes(const Problem&) { return sizeof(Workspace); }

// Policy, or for calls above Policy::kWideFrom bytes Wide (the library's:
// 512 threads a block up to 32 MiB, 1024 above; lane_columns_policy.cuh).
template <class Policy, class Wide = Policy>
void run(const RunArgs& a) {
  const auto* samples = static_cast<const unsigned char*>(a.samples);
  const bool is_signed = a.type == SampleType::i8;
  if (a.n > Policy::kWideFrom)
    launch<Wide>(samples, a.n, a.workspace, a.slots, a.accumulate, is_signed, a.indexer, stream_of(a));
  else
    launch<Policy>(samples, a.n, a.workspace, a.slots, a.accumulate, is_signed, a.indexer, stream_of(a));
}

// Sizes where the grid rule or the loop changes shape (the tests probe each
// and its neighbours).
template <class Policy>
std::vector<std::uint64_t> boundaries(const Problem&) {
  const std::uint64_t direct_step = std::uint64_t{Policy::kBlockThreads - 32} * 16;  // the flag warp does not read
  const std::uint64_t fold_step = std::uint64_t{Policy::kBlockThreads} * 16;
  std::vector<std::uint64_t> sizes = {15,
                                      16,
                                      31,
                                      32,
                                      fold_step,
                                      fold_step * Policy::kUnroll,
                                      fold_step * Policy::kUnroll * 129,
                                      Policy::kLargeBytesPerBlock * 133 + 5,
                                      std::uint64_t{1} << 24,
                                      std::uint64_t{1} << 26};
  if (Policy::kWideFrom < (std::uint64_t{1} << 31))
    sizes.insert(sizes.end(), {Policy::kWideFrom, Policy::kWideFrom + 1, Policy::kWideFrom + 4096 + 13});
  if (Policy::kMaxDirectBytes > 0)
    sizes.insert(sizes.end(), {direct_step, direct_step * Policy::kUnroll, Policy::kDirectBytesPerBlock,
                               Policy::kDirectBytesPerBlock + 1,
                               Policy::kMaxDirectBlocks * Policy::kDirectBytesPerBlock,
                               Policy::kMaxDirectBlocks * Policy::kDirectBytesPerBlock + 17, Policy::kMaxDirectBytes,
                               Policy::kMaxDirectBytes + 1});
  return sizes;
}

// A Strategy of the kernel under `Policy`.
template <class Policy, class Wide = Policy>
constexpr Strategy make_strategy(const char* name, const char* summary) {
  return Strategy{name,
                  Backend::cuda,
                  summary,
                  "levelhist (docs/PERFORMANCE.md); builds on Wilt part 2's interleaved per-thread layout (Fig. 6, "
                  "Listing 5) and the staggered row sums of Brown & Snoeyink, TRISH §5.1",
                  supports,
                  workspace_bytes,
                  run<Policy, Wide>,
                  boundaries<Policy>};
}


}  // namespace levelhist::cuda_detail::lane_columns
