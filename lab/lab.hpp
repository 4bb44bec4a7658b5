// The lab: the histogram methods of the literature, and levelhist's own
// instructive losers, as strategies. They are tested against the reference and
// timed by the benchmark, but `auto` never chooses them, so the library and the
// CLI do not contain them (docs/ARCHITECTURE.md).
//
//   levelhist::lab::install();   // all_strategies() and find_strategy() see them from now on
#pragma once
#include <span>

#include "levelhist/strategy.hpp"

namespace levelhist::lab {

// The lab's strategies, in the order the benchmark lists them.
std::span<const Strategy* const> strategies();
// Adds them to the library's registry (once; call before other threads use it).
void install();

}  // namespace levelhist::lab

namespace levelhist::strategies {

#if LEVELHIST_HAVE_CUDA
// Kirk & Hwu, PMPP ch. 9, and Wilt part 1: the textbook kernels
extern const Strategy gpu_global_atomic;
extern const Strategy gpu_global_atomic_unrolled;
extern const Strategy gpu_block_shared;
extern const Strategy gpu_coarse_contiguous;
extern const Strategy gpu_coarse_interleaved;
extern const Strategy gpu_aggregated;
// per-thread and per-warp 256-bin methods: Wilt part 2; Brown & Snoeyink (TRISH);
// Podlozhnyuk; Nugteren et al.
extern const Strategy gpu_thread_packed;
extern const Strategy gpu_thread_packed_avoid;
extern const Strategy gpu_trish;
extern const Strategy gpu_trish_k63;
extern const Strategy gpu_warp_podlozhnyuk;
extern const Strategy gpu_thread_nugteren;
// levelhist's instructive losers
extern const Strategy gpu_lane_columns_fold;
extern const Strategy gpu_weighted_shared_x4;
// gpu_raw_values: u16 / i16 counted by raw value in 16-bit shared counters
// (src/cuda/raw_pairs.cuh, gpu_joint's byte pairs): faster than gpu_split_bins
// on most data at 65536 bins, but not level (docs/PERFORMANCE-general.md, section 21).
extern const Strategy gpu_raw_values;
// the external baseline: NVIDIA CUB's DeviceHistogram
extern const Strategy cub;
#endif

}  // namespace levelhist::strategies
