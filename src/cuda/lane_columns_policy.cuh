// The tuning policy of gpu_lane_columns. The library's strategies use it, and
// bench/experiments/small_calls_study.cu derives its variants from it, so that
// a study variant differs from the library only in what it overrides.
#pragma once
#include <cstdint>

#include "cuda/lane_columns_kernel.cuh"

namespace levelhist::cuda_detail::lane_columns {

// Tuning policy per GPU generation (plain data, as in CUB's dispatch layer).
// sm_80 and sm_90 measured the same shape best; see docs/PERFORMANCE.md.
// Every figure below is from small_calls_study, one run each.
struct LaneColumnsPolicy {
  static constexpr int kBlockThreads = 512;
  // The launch bounds' blocks per SM (registers: 64 at 2). The columns take
  // 128 KiB of shared memory (kPermutedAddress), so one block per SM is
  // resident in any case.
  static constexpr int kMinBlocksPerSM = 2;
  static constexpr int kDirectMinBlocksPerSM = 2;
  static constexpr int kUnroll = 4;  // 16-byte loads in flight per thread per step
  // The next step's loads go out before this step is counted, so that a
  // block's reading and counting overlap. With the large rule below, an H100's
  // 16 MiB call (in L2) took 9.68 us under the old rule (512 blocks of one
  // step, folded), 8.24 with prefetch alone, 8.20 with 128 KiB blocks over
  // whole waves alone, 7.75 with both (one run).
  static constexpr bool kPrefetch = true;
  // Row sums in 16-byte shared loads (8 a thread instead of 32): 7.75 -> 7.61.
  static constexpr bool kVectorRowSums = true;
  // A counter's address is one byte permutation of the sample word (2
  // instructions a byte with the atomic instead of 4): counting 128 KiB on
  // an SM took 6157 -> 5479 cycles, 16 MiB 6.90 -> 6.61 us (in L2). What is
  // left is the shared atomics' rate, ~24 bytes per cycle per SM.
  static constexpr bool kPermutedAddress = true;
  // Small calls: one block per kDirectBytesPerBlock, at most kMaxDirectBlocks,
  // spread over more SMs than one step of loads per thread needs (at 1 MiB
  // the blocks of 64 x 16 KiB ended 2955-3242 cycles after they started, those
  // of 32 x 32 KiB 3496-3805; 128 x 8 KiB was no better than 64). Their cost
  // is the additions, one per block to each slot: up to 128 blocks the direct
  // path won (4 MiB: 5.01-5.43 us against 5.88-5.98 folded), at 256 of one
  // step each it lost (2 MiB: 6.51 against 5.31; change 9).
  static constexpr std::uint64_t kDirectBytesPerBlock = 16 * 1024;
  static constexpr unsigned int kMaxDirectBlocks = 128;
  static constexpr std::uint64_t kMaxDirectBytes = 4 * 1024 * 1024;
  // Larger calls: also the direct path (the fold's accumulators, ticket and
  // last block cost: 16 MiB 7.61 -> 6.98 us), one block per 128 KiB rounded up
  // to whole waves, at most one block per SM: a block loops over several steps
  // (one 32 KiB step per block and 512 blocks took 9.70 us; their starts
  // spread over 2.2 us and their fold serialized in L2).
  static constexpr Path kLargePath = Path::direct;
  static constexpr std::uint64_t kLargeBytesPerBlock = 128 * 1024;
  static constexpr bool kLargeWholeWaves = true;
  // Programmatic dependent launch (lane_columns_kernel.cuh): a call's launch
  // and its columns' clearing overlap the end of the kernel before it in the
  // stream. Back to back from DRAM on an H200 (one run): 4 KiB 4.11 -> 3.44 us,
  // 1 MiB 3.99 -> 3.22, 8 MiB 6.36 -> 4.90, 16 MiB 8.32 -> 6.66 (a read
  // launched the same way: 3.28, 2.94, 3.91, 6.03; docs/PERFORMANCE.md, change 15).
  static constexpr bool kDependentLaunch = true;
  // The fold's accumulators in 4 copies (block b adds into copy b % 4), for
  // policies that fold (the lab's gpu_lane_columns_fold): with one, a 16 MiB
  // call took 9.46 or 11.07 us depending on where the workspace sat.
  static constexpr int kFoldCopies = 4;
  // Calls above kWideFrom bytes run under LaneColumnsWidePolicy.
  static constexpr std::uint64_t kWideFrom = 32 * 1024 * 1024;
  static __device__ void mark(Mark) {}
};

// Calls above 32 MiB, read from DRAM: 1024 threads a block, twice the loads in
// flight per SM. Cold (inputs rotating over 3x the L2) on an H100: 64 MiB
// 26.22 -> 25.77 us, 256 MiB 91.64 -> 89.43 (the read limit: 89.20); at 16 MiB
// in L2 it is slower (6.72 -> 7.00), hence the split.
struct LaneColumnsWidePolicy : LaneColumnsPolicy {
  static constexpr int kBlockThreads = 1024;
  static constexpr int kMinBlocksPerSM = 1;
  static constexpr int kDirectMinBlocksPerSM = 1;
};

}  // namespace levelhist::cuda_detail::lane_columns
