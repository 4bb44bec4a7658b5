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

template <class Policy>
void run(const RunArgs& a) {
  launch<Policy>(static_cast<const unsigned char*>(a.samples), a.n, a.workspace, a.slots, a.accumulate,
                 a.type == SampleType::i8, a.indexer, stream_of(a));
}

// Sizes where the grid rule or the loop changes shape (the tests probe each
// and its neighbours).
template <class Policy>
std::vector<std::uint64_t> boundaries(const Problem&) {
  const std::uint64_t direct_step = std::uint64_t{Policy::kBlockThreads - 32} * 16;  // the flag warp does not read
  const std::uint64_t fold_step = std::uint64_t{Policy::kBlockThreads} * 16;
  std::vector<std::uint64_t> sizes = {15, 16, 31, 32, fold_step, fold_step * Policy::kUnroll,
                                      fold_step * Policy::kUnroll * 129, std::uint64_t{1} << 24,
                                      std::uint64_t{1} << 26};
  if (Policy::kMaxDirectBytes > 0)
    sizes.insert(sizes.end(), {direct_step, direct_step * Policy::kUnroll, Policy::kDirectBytesPerBlock,
                               Policy::kDirectBytesPerBlock + 1,
                               Policy::kMaxDirectBlocks * Policy::kDirectBytesPerBlock,
                               Policy::kMaxDirectBlocks * Policy::kDirectBytesPerBlock + 17, Policy::kMaxDirectBytes,
                               Policy::kMaxDirectBytes + 1});
  return sizes;
}

// A Strategy of the kernel under `Policy`.
template <class Policy>
constexpr Strategy make_strategy(const char* name, const char* summary) {
  return Strategy{name,
                  Backend::cuda,
                  summary,
                  "levelhist (docs/PERFORMANCE.md); builds on Wilt part 2's interleaved per-thread layout (Fig. 6, "
                  "Listing 5) and the staggered row sums of Brown & Snoeyink, TRISH §5.1",
                  supports,
                  workspace_bytes,
                  run<Policy>,
                  boundaries<Policy>};
}


}  // namespace levelhist::cuda_detail::lane_columns
