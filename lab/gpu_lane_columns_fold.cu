// gpu_lane_columns_fold: the instructive loser of the 256-bin byte kernel,
// kept to show what the direct path buys. The same kernel
// (src/cuda/lane_columns_kernel.cuh) under the library's earlier policy, with
// every call, however small, taking the fold (ticket + last block) instead of
// the flag warp and the direct additions, over blocks of one 32 KiB step.
// Against the library of that time (which folded only above 4 MiB): equal at
// 1 GiB, slower for small calls, 1 MiB 5.03 against 4.12 us, 4 MiB 5.98
// against 5.43 (small_calls_study, one H200 run), because its 32 KiB blocks
// count on half as many SMs and its last block waits three round trips
// (fence, ticket, exchange) after the others.
#include <cstdint>

#include "cuda/lane_columns_policy.cuh"
#include "cuda/lane_columns_strategy.cuh"
#include "lab.hpp"

namespace levelhist::strategies {
namespace {

// The library's policy before its large calls took the direct path too: 32
// KiB blocks of one step each (up to four per SM) and the fold for every call.
struct FoldOnlyPolicy : cuda_detail::lane_columns::LaneColumnsPolicy {
  static constexpr int kMinBlocksPerSM = 4;
  static constexpr bool kPrefetch = false;
  static constexpr bool kVectorRowSums = false;
  static constexpr bool kPermutedAddress = false;
  static constexpr std::uint64_t kMaxDirectBytes = 0;  // every call folds
  static constexpr cuda_detail::lane_columns::Path kLargePath = cuda_detail::lane_columns::Path::fold;
  static constexpr std::uint64_t kLargeBytesPerBlock = std::uint64_t{kBlockThreads} * 16 * kUnroll;
  static constexpr bool kLargeWholeWaves = false;
  static constexpr std::uint64_t kWideFrom = ~std::uint64_t{0};
};

}  // namespace

const Strategy gpu_lane_columns_fold = cuda_detail::lane_columns::make_strategy<FoldOnlyPolicy>(
    "gpu_lane_columns_fold",
    "gpu_lane_columns with every call ending in the ticket fold (no flag warp): the instructive loser on small calls");

}  // namespace levelhist::strategies
