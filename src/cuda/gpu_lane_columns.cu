// gpu_lane_columns: levelhist's 256-bin byte histogram at the memory-bandwidth
// limit, level on every distribution. The kernel and its design notes
// are in lane_columns_kernel.cuh, its tuning policy in lane_columns_policy.cuh;
// this file holds the two strategies built on them: gpu_lane_columns and gpu_lane_columns_fold, the
// instructive loser kept to show what the small-call path buys.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/strategies.hpp"
#include "cuda/lane_columns_kernel.cuh"
#include "cuda/lane_columns_policy.cuh"

namespace levelhist::strategies {
namespace {

namespace lc = cuda_detail::lane_columns;
using lc::LaneColumnsPolicy;

// The instructive loser (kept as a strategy on purpose): the same kernel with every
// call, however small, taking the fold (ticket + last block) instead of the
// flag warp and the direct additions. Equal at 1 GiB, slower for small calls:
// 1 MiB 5.03 against 4.12 us, 4 MiB 5.98 against 5.43 (small_calls_study, one
// H200 run), because its 32 KiB blocks count on half as many SMs and its last
// block waits three round trips (fence, ticket, exchange) after the others.
struct FoldOnlyPolicy : LaneColumnsPolicy {
  static constexpr std::uint64_t kMaxDirectBytes = 0;
};

bool supports(const Problem& p, std::string* why_not) {
  if (p.type == SampleType::u8 || p.type == SampleType::i8) return true;
  if (why_not) *why_not = "the lane-column kernels count 8-bit samples (u8, i8) only";
  return false;
}

std::size_t workspace_bytes(const Problem&) { return sizeof(lc::Workspace); }

template <class Policy>
void run(const RunArgs& a) {
  lc::launch<Policy>(static_cast<const unsigned char*>(a.samples), a.n, a.workspace, a.slots, a.accumulate,
                     a.type == SampleType::i8, a.indexer, cuda_detail::stream_of(a));
}

// auto's choice for every 8-bit problem: measured at the read limit on every
// distribution (docs/BENCHMARKS.md). The loser is for the benchmark only.
template <class Policy>
int rank(const Problem& p) {
  return std::is_same_v<Policy, LaneColumnsPolicy> && supports(p, nullptr) ? 100 : 0;
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

template <class Policy>
constexpr Strategy make(const char* name, const char* summary) {
  return Strategy{name,
                  Backend::cuda,
                  summary,
                  "levelhist (docs/PERFORMANCE.md); builds on Wilt part 2's interleaved per-thread layout (Fig. 6, "
                  "Listing 5) and the staggered row sums of Brown & Snoeyink, TRISH §5.1",
                  supports,
                  workspace_bytes,
                  run<Policy>,
                  rank<Policy>,
                  boundaries<Policy>};
}

}  // namespace

const Strategy gpu_lane_columns = make<LaneColumnsPolicy>(
    "gpu_lane_columns",
    "32 lane-column copies per block (h[bin][lane]), shared atomics, conflict-free for any data; one launch");
const Strategy gpu_lane_columns_fold = make<FoldOnlyPolicy>(
    "gpu_lane_columns_fold",
    "gpu_lane_columns with every call ending in the ticket fold (no flag warp): the instructive loser on small calls");

}  // namespace levelhist::strategies
