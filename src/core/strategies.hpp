// Declarations of every strategy object, for the registry (registry.cpp) and
// for code that names one strategy directly (e.g. the reference in tests).
#pragma once
#include "levelhist/strategy.hpp"

namespace levelhist::strategies {

extern const Strategy cpu_serial;
extern const Strategy cpu_parallel;

#if LEVELHIST_HAVE_CUDA
// textbook kernels
extern const Strategy gpu_global_atomic;
extern const Strategy gpu_global_atomic_unrolled;
extern const Strategy gpu_block_global;
extern const Strategy gpu_block_shared;
extern const Strategy gpu_coarse_contiguous;
extern const Strategy gpu_coarse_interleaved;
extern const Strategy gpu_aggregated;
// per-thread and per-warp 256-bin methods
extern const Strategy gpu_thread_packed;
extern const Strategy gpu_thread_packed_avoid;
extern const Strategy gpu_trish;
extern const Strategy gpu_trish_k63;
extern const Strategy gpu_warp_podlozhnyuk;
extern const Strategy gpu_thread_nugteren;
// levelhist's own kernels
extern const Strategy gpu_lane_columns;
extern const Strategy gpu_lane_columns_fold;
extern const Strategy gpu_pixel_lane_columns;
extern const Strategy gpu_shared_swizzle;
extern const Strategy gpu_shared_lanes;
extern const Strategy gpu_split_bins;
extern const Strategy gpu_bucket_sort;
extern const Strategy gpu_weighted_shared;
extern const Strategy gpu_weighted_shared_x4;
// external baseline
extern const Strategy cub;
#endif

}  // namespace levelhist::strategies
