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
  static constexpr int kUnroll = 4;  // 16-byte loads in flight per thread per iteration
  // Bytes per block below which no further block is launched: one full step of
  // kUnroll 16-byte loads per thread (32 KiB). A small call then costs one
  // memory round trip per thread (all its loads in flight at once) and as few
  // blocks as can carry them, so the per-block tail (row sums, 256 global
  // additions) is paid as few times as possible. 4 KiB and 16 KiB per block
  // measured no faster at 1 MiB and slower at 2-16 MiB (docs/PERFORMANCE.md
  // section 4, changes 2 and 7).
  static constexpr std::uint64_t kMinBytesPerBlock = std::uint64_t{kBlockThreads} * 16 * kUnroll;
  // Grids up to this many blocks add straight into the slots (2 MiB at 32 KiB a
  // block). Measured: 32 blocks (1 MiB) 4.9 us direct against 5.1 folded; 512
  // blocks (16 MiB) 12.2 us direct against 10.5 folded. The crossover is placed
  // from those two points, assuming the direct path's loss grows with the
  // blocks adding to each address (~5 ns each).
  static constexpr unsigned int kMaxDirectBlocks = 64;
  static constexpr bool kFlagWarp = false;
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
  const std::uint64_t block_bytes = std::uint64_t{Policy::kBlockThreads} * 16;
  return {15, 16, 31, 32, block_bytes, block_bytes * Policy::kUnroll, Policy::kMinBytesPerBlock,
          2 * Policy::kMinBytesPerBlock, Policy::kMaxDirectBlocks * Policy::kMinBytesPerBlock,
          Policy::kMaxDirectBlocks * Policy::kMinBytesPerBlock + 1, std::uint64_t{1} << 24, std::uint64_t{1} << 26};
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
