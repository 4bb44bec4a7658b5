// gpu_lane_columns: levelhist's 256-bin byte histogram at the memory-bandwidth
// limit, level on every distribution. The kernel and its design notes are in
// lane_columns_kernel.cuh, its tuning policy in lane_columns_policy.cuh. The
// lab keeps the instructive loser built on the same kernel
// (lab/gpu_lane_columns_fold.cu).
#include "core/strategies.hpp"
#include "cuda/lane_columns_policy.cuh"
#include "cuda/lane_columns_strategy.cuh"

namespace levelhist::strategies {

const Strategy gpu_lane_columns = cuda_detail::lane_columns::make_strategy<cuda_detail::lane_columns::LaneColumnsPolicy,
                                                                           cuda_detail::lane_columns::LaneColumnsWidePolicy>(
    "gpu_lane_columns",
    "32 lane-column copies per block (h[bin][lane]), shared atomics, conflict-free for any data; one launch");

}  // namespace levelhist::strategies
