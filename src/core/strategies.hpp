// Declarations of the library's strategy objects, for the registry
// (registry.cpp) and for code that names one directly (the reference in the
// tests). The lab's are in lab/lab.hpp.
#pragma once
#include "levelhist/strategy.hpp"

namespace levelhist::strategies {

extern const Strategy cpu_serial;
extern const Strategy cpu_parallel;

#if LEVELHIST_HAVE_CUDA
extern const Strategy gpu_lane_columns;
extern const Strategy gpu_pixel_lane_columns;
extern const Strategy gpu_shared_swizzle;
extern const Strategy gpu_shared_lanes;
extern const Strategy gpu_split_bins;
extern const Strategy gpu_bucket_sort;
extern const Strategy gpu_partition_count;
extern const Strategy gpu_weighted_shared;
extern const Strategy gpu_block_global;
extern const Strategy gpu_segments;
extern const Strategy gpu_joint;
extern const Strategy gpu_weighted_exact;
#endif

}  // namespace levelhist::strategies
