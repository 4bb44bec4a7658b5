// gpu_lane_columns: levelhist's 256-bin byte histogram at the memory-bandwidth
// limit, level on every distribution (issue 4). The kernel and its design notes
// are in lane_columns_kernel.cuh; this file is its tuning policy and its entry
// in the strategy list.
#include <cstdint>

#include "core/strategies.hpp"
#include "cuda/lane_columns_kernel.cuh"

namespace levelhist::strategies {
namespace {

namespace lc = cuda_detail::lane_columns;

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
  static constexpr std::uint64_t kFoldBytesPerBlock = std::uint64_t{kBlockThreads} * 16 * kUnroll;
  static __device__ void mark(lc::Mark) {}
};

bool supports(const Problem& p, std::string* why_not) {
  if (p.type == SampleType::u8 || p.type == SampleType::i8) return true;
  if (why_not) *why_not = "gpu_lane_columns counts 8-bit samples (u8, i8) only";
  return false;
}

std::size_t workspace_bytes(const Problem&) { return sizeof(lc::Workspace); }

void run(const RunArgs& a) {
  lc::launch<LaneColumnsPolicy>(static_cast<const unsigned char*>(a.samples), a.n, a.workspace, a.slots, a.accumulate,
                                a.type == SampleType::i8, a.indexer, cuda_detail::stream_of(a));
}

// auto's choice for every 8-bit problem: measured at the read limit on every
// distribution (docs/BENCHMARKS.md).
int rank(const Problem& p) { return supports(p, nullptr) ? 100 : 0; }

std::vector<std::uint64_t> boundaries(const Problem&) {
  using Policy = LaneColumnsPolicy;
  const std::uint64_t direct_step = std::uint64_t{Policy::kBlockThreads - 32} * 16;  // the flag warp does not read
  const std::uint64_t fold_step = std::uint64_t{Policy::kBlockThreads} * 16;
  return {15,
          16,
          31,
          32,
          direct_step,
          direct_step * Policy::kUnroll,
          Policy::kDirectBytesPerBlock,
          Policy::kDirectBytesPerBlock + 1,
          Policy::kMaxDirectBlocks * Policy::kDirectBytesPerBlock,
          Policy::kMaxDirectBlocks * Policy::kDirectBytesPerBlock + 17,
          Policy::kMaxDirectBytes,
          Policy::kMaxDirectBytes + 1,
          fold_step * Policy::kUnroll * 129,
          std::uint64_t{1} << 24,
          std::uint64_t{1} << 26};
}

}  // namespace

const Strategy gpu_lane_columns{
    "gpu_lane_columns",
    Backend::cuda,
    "32 lane-column copies per block (h[bin][lane]), shared atomics, conflict-free for any data; one launch",
    "levelhist (issue 4); builds on 000_c3bc3bf1a09915a1.txt's interleaved per-thread layout and 003's staggered row sums",
    supports,
    workspace_bytes,
    run,
    rank,
    boundaries};

}  // namespace levelhist::strategies
