// The tuning policy of gpu_lane_columns. The library's strategies use it, and
// bench/experiments/small_calls_study.cu derives its variants from it, so that
// a study variant differs from the library only in what it overrides.
#pragma once
#include <cstdint>

#include "cuda/lane_columns_kernel.cuh"

namespace levelhist::cuda_detail::lane_columns {

// Tuning policy per GPU generation (plain data, as in CUB's dispatch layer).
// sm_80 and sm_90 measured the same shape best; see docs/PERFORMANCE.md.
struct LaneColumnsPolicy {
  static constexpr int kBlockThreads = 512;
  static constexpr int kMinBlocksPerSM = 4;  // 2048 threads per SM: keeps registers at <= 32
  // A direct call has at most kMaxDirectBlocks (<= one per SM): occupancy does
  // not matter, registers do (at 32 its loop spilled; at 2 blocks per SM, 64).
  static constexpr int kDirectMinBlocksPerSM = 2;
  static constexpr int kUnroll = 4;  // 16-byte loads in flight per thread per iteration
  // The grid rule, from small_calls_study (docs/PERFORMANCE.md section 4,
  // change 9; every figure from one run). Small calls spread over more SMs than
  // one step of loads per thread needs: at 1 MiB the blocks of 64 x 16 KiB
  // ended 2955-3242 cycles after they started, those of 32 x 32 KiB 3496-3805
  // (each SM counts half as many bytes); 128 x 8 KiB was no better than 64.
  // The direct path's cost is its additions, one per block to each of the 256
  // slots: up to 128 blocks it wins (4 MiB: 5.01-5.43 us in 128 blocks against
  // 5.88-5.98 folded), at 256 it loses (2 MiB: 6.51 against 5.31; 4 MiB
  // 6.13-6.21 against 5.88-5.98).
  static constexpr std::uint64_t kDirectBytesPerBlock = 16 * 1024;
  static constexpr unsigned int kMaxDirectBlocks = 128;
  static constexpr std::uint64_t kMaxDirectBytes = 4 * 1024 * 1024;
  // Large calls: one full step of kUnroll 16-byte loads per thread per block
  // (32 KiB), up to a persistent grid; 4 KiB and 16 KiB per block measured
  // slower at 2-16 MiB (changes 2 and 7).
  static constexpr Path kLargePath = Path::fold;
  static constexpr std::uint64_t kLargeBytesPerBlock = std::uint64_t{kBlockThreads} * 16 * kUnroll;
  static constexpr bool kLargeWholeWaves = false;
  // The fold's accumulators in 4 copies (block b adds into copy b % 4): with
  // one, a 16 MiB call took 9.46 or 11.07 us depending on where the workspace
  // sat (alternate addresses 0x2200 apart, one H200 run): 512 blocks' atomics
  // on 256 addresses serialize, more in some L2 slices than others. With 4
  // copies: 9.41-9.54 at all 8 addresses tried (small_calls_study, change 12).
  static constexpr int kFoldCopies = 4;
  static constexpr bool kPrefetch = false;
  static constexpr bool kVectorRowSums = false;
  static constexpr bool kPermutedAddress = false;
  static __device__ void mark(Mark) {}
};

}  // namespace levelhist::cuda_detail::lane_columns
