// gpu_weighted_shared_x4: the weighted shared-memory kernel
// (src/cuda/weighted_shared.cuh) with 4 lane-interleaved copies of the
// histogram beside the warp aggregation. Ahead of one copy on 1 GiB of
// f32 + f32 weights (H100, 2026-11-28: 2217-2265 against 2011-2042 GB/s uniform),
// behind the 16 copies gpu_weighted_shared now takes for that case (2719-2743),
// so not auto's choice: the lab keeps it for the benchmark.
#include "cuda/weighted_shared.cuh"
#include "lab.hpp"

namespace levelhist::strategies {

const Strategy gpu_weighted_shared_x4 = cuda_detail::weighted::make_strategy<4>(
    "gpu_weighted_shared_x4",
    "weighted sums in 4 lane-interleaved shared double histograms per block plus warp aggregation; f32/f64 "
    "weights, any sample type, up to ~7 K bins",
    "levelhist (docs/PERFORMANCE-general.md: smem_f64_x4 + smem_f64_warpagg)");


}  // namespace levelhist::strategies
