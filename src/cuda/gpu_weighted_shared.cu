// gpu_weighted_shared: weighted sums in one shared double histogram per block
// (16 copies of it by lane where they fit, for 4-byte samples with f32
// weights) with warp aggregation (the kernel and its measurements:
// src/cuda/weighted_shared.cuh); auto's choice for weighted histograms.
#include "core/strategies.hpp"
#include "cuda/weighted_shared.cuh"

namespace levelhist::strategies {

const Strategy gpu_weighted_shared = cuda_detail::weighted::make_strategy<1>(
    "gpu_weighted_shared",
    "weighted sums in a shared double histogram per block (16 copies by lane where they fit: 4-byte samples, f32 "
    "weights), a warp with one slot sums by shuffles and adds once; f32/f64 weights, any sample type, up to ~29 K bins",
    "levelhist (docs/PERFORMANCE-general.md: smem_f64_warpagg)");

}  // namespace levelhist::strategies
