// gpu_pixel_lane_columns: histograms of interleaved 8-bit pixels (RGBA, RGB
// of RGBA, RGB24, 1-4 channels, any subset of them active), one per active
// channel, in rows with a pitch (a region of interest of a larger image).
// Any binning of 8-bit values, like gpu_lane_columns.
//
// Each active channel keeps gpu_lane_columns' 32 lane columns (h[value][lane],
// 32 KB), so every atomic of a warp hits its own bank whatever the data. The
// channel of a byte follows from its offset in the row: for 1, 2 and 4
// channels byte j of every 16-byte word of a row has the channel (head + j)
// mod C, fixed per row; for 3 channels (16 = 1 mod 3) it rotates by one per
// word. Each thread keeps one column pointer per channel and picks them by a
// compile-time byte index, rotated once per row (per word for C = 3).
// Inactive channels are counted too, into one shared dump histogram: no
// branch per byte; RGB of RGBA then does the RGBA work (the H200 study: RGBA
// 4350-4368 GB/s, 98% of the read limit; RGB of RGBA 4441-4461).
//
// Rows as wide as a block's loads are read by groups of blocks (a plain array
// or a packed image is one row: run() joins packed rows); narrower rows by one
// warp each, so that short rows of a region of interest still keep enough
// loads in flight.
// One launch: blocks add their row sums into 32-bit per-call accumulators, the
// last block folds them through the BinIndexer into the 64-bit slots and
// leaves the workspace zero.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/pixels.hpp"
#include "core/strategies.hpp"
#include "cuda/cuda_common.cuh"
#include "cuda/general_common.cuh"
#include "cuda/lane_columns_policy.cuh"

namespace levelhist::strategies {
namespace {

using cuda_detail::stream_of;

struct PixelLanePolicy {
  static constexpr int kThreads = 1024;  // the study's best: lane32_u4_1024
  static constexpr int kUnroll = 4;      // 16-byte loads in flight per thread
  static constexpr std::uint64_t kMinBytesPerBlock = 64 * 1024;
};

constexpr int kValues = 256;
constexpr int kLanes = 32;
constexpr std::uint32_t kColumnWords = kValues * kLanes;  // one channel's lane columns: 32 KB

struct PixelArgs {
  const unsigned char* image;
  std::uint64_t row_bytes;  // width * channels
  std::uint64_t height;
  std::uint64_t pitch;
  std::uint32_t active;
  std::uint32_t hists;      // active channels
  std::uint32_t histograms_in_smem;  // hists, plus the dump when a channel is inactive
  std::uint32_t blocks_per_row;      // wide rows: blocks sharing a row; 0: one warp per row
  unsigned* accum;          // workspace: hists x 256 per-call counts
  unsigned* ticket;
  std::uint64_t* slots;
  bool accumulate;
  bool is_signed;
  BinIndexer indexer;
};

template <int C>
__device__ __forceinline__ unsigned* pick(unsigned* const (&bases)[C], std::uint32_t i) {
  unsigned* r = bases[0];
#pragma unroll
  for (int c = 1; c < C; ++c)
    if (i == static_cast<std::uint32_t>(c)) r = bases[c];
  return r;
}

__device__ __forceinline__ void count_byte(unsigned* column, unsigned byte) { atomicAdd(column + (byte << 5), 1u); }

template <int C>
__device__ __forceinline__ void count_word(const uint4& v, unsigned* const (&b)[C]) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 16; ++j) count_byte(b[j % C], (w[j / 4] >> (8 * (j % 4))) & 0xFFu);
}

// The bases of a word whose first byte has channel r < C: byte j of it has
// channel (r + j) mod C. In a row whose body starts `head` bytes in, word w
// starts with channel (head + 16 w) mod C: head mod C for 1, 2 and 4
// channels, (head + w) mod 3 for three (16 = 1 mod 3).
template <int C>
__device__ __forceinline__ void rotated(unsigned* const (&channel)[C], std::uint32_t r, unsigned* (&b)[C]) {
  if constexpr (C == 3) {  // once a word: selects by r, no remainder
    const bool r1 = r == 1, r2 = r == 2;
    b[0] = r1 ? channel[1] : r2 ? channel[2] : channel[0];
    b[1] = r1 ? channel[2] : r2 ? channel[0] : channel[1];
    b[2] = r1 ? channel[0] : r2 ? channel[1] : channel[2];
  } else {
#pragma unroll
    for (int k = 0; k < C; ++k) b[k] = pick<C>(channel, (r + k) % C);
  }
}

// (a + s) mod 3 for a, s < 3, in 32 bits: the smaller of t and t - 3 (which
// wraps around when t < 3).
__device__ __forceinline__ std::uint32_t add_mod3(std::uint32_t a, std::uint32_t s) {
  const std::uint32_t t = a + s;
  return min(t, t - 3u);
}

// One row's bytes by `group_size` threads, this one being number `rank`.
template <int C>
__device__ __forceinline__ void count_row(const unsigned char* row, std::uint64_t bytes, std::uint64_t rank,
                                          std::uint64_t group_size, unsigned* const (&channel)[C]) {
  constexpr int U = PixelLanePolicy::kUnroll;
  std::uint64_t head = (16 - (reinterpret_cast<std::uintptr_t>(row) & 15)) & 15;
  head = head < bytes ? head : bytes;
  const std::uint64_t words = (bytes - head) / 16, tail = head + words * 16;
  if (rank < head) count_byte(pick<C>(channel, static_cast<std::uint32_t>(rank % C)), row[rank]);
  if (tail + rank < bytes) count_byte(pick<C>(channel, static_cast<std::uint32_t>((tail + rank) % C)), row[tail + rank]);
  const uint4* body = reinterpret_cast<const uint4*>(row + head);
  unsigned* b[C];
  if constexpr (C != 3) rotated<C>(channel, static_cast<std::uint32_t>(head % C), b);
  // Three channels: word w's first channel, (head + w) mod 3, is kept in 32
  // bits and moved on by the group's size mod 3 a word (a 64-bit remainder a
  // word cost about 25 instructions of the loop's 104 a word).
  [[maybe_unused]] const std::uint32_t step = C == 3 ? static_cast<std::uint32_t>(group_size % 3) : 0;
  [[maybe_unused]] std::uint32_t r = C == 3 ? static_cast<std::uint32_t>((head + rank) % 3) : 0;
  std::uint64_t w = rank;
  // (Loading the next step before counting this one, as gpu_lane_columns
  // does, needs more than the 64 registers of a 1024-thread block: it spilled.)
  for (; w + (U - 1) * group_size < words; w += U * group_size) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcs(body + w + u * group_size);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if constexpr (C == 3) {
        rotated<C>(channel, r, b);
        r = add_mod3(r, step);
      }
      count_word<C>(v[u], b);
    }
  }
  for (; w < words; w += group_size) {
    if constexpr (C == 3) {
      rotated<C>(channel, r, b);
      r = add_mod3(r, step);
    }
    count_word<C>(__ldcs(body + w), b);
  }
}

// Launched as a programmatic dependent launch (cuda_common.cuh): the columns
// are cleared while the kernel ahead of it on the stream ends; nothing in
// global memory is touched before the wait.
template <int C>
__global__ void __launch_bounds__(PixelLanePolicy::kThreads) pixel_lane_kernel(PixelArgs a) {
  cuda_detail::allow_dependent_launch();
  extern __shared__ __align__(16) unsigned columns[];
  const std::uint32_t words = a.histograms_in_smem * kColumnWords;
  for (std::uint32_t i = threadIdx.x; i < words / 4; i += blockDim.x)
    reinterpret_cast<uint4*>(columns)[i] = make_uint4(0, 0, 0, 0);
  cuda_detail::wait_for_prior_grid();
  __syncthreads();

  const std::uint32_t lane = threadIdx.x & (kLanes - 1);
  unsigned* channel[C];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const bool on = (a.active >> c) & 1u;
    const std::uint32_t rank = __popc(a.active & ((1u << c) - 1u));
    channel[c] = columns + (on ? rank : a.hists) * kColumnWords + lane;  // inactive: the dump
  }

  if (a.blocks_per_row) {  // wide rows: groups of blocks_per_row blocks share a row
    const std::uint64_t group = blockIdx.x / a.blocks_per_row, groups = gridDim.x / a.blocks_per_row;
    const std::uint64_t rank = std::uint64_t{blockIdx.x % a.blocks_per_row} * blockDim.x + threadIdx.x;
    const std::uint64_t size = std::uint64_t{a.blocks_per_row} * blockDim.x;
    for (std::uint64_t r = group; r < a.height; r += groups) count_row<C>(a.image + r * a.pitch, a.row_bytes, rank, size, channel);
  } else {  // narrow rows: one warp each
    const std::uint64_t warps = std::uint64_t{gridDim.x} * (blockDim.x / kLanes);
    const std::uint64_t warp = std::uint64_t{blockIdx.x} * (blockDim.x / kLanes) + threadIdx.x / kLanes;
    for (std::uint64_t r = warp; r < a.height; r += warps) count_row<C>(a.image + r * a.pitch, a.row_bytes, lane, kLanes, channel);
  }
  __syncthreads();

  // Row sums into the accumulators: eight 16-byte loads a row, staggered so
  // that each quarter warp reads 8 different 4-bank groups (TRISH's staggered
  // indexing, §5.1, by 16 bytes).
  for (std::uint32_t r = threadIdx.x; r < a.hists * kValues; r += blockDim.x) {
    const uint4* row = reinterpret_cast<const uint4*>(columns + r * kLanes);
    unsigned sum = 0;
#pragma unroll
    for (std::uint32_t c = 0; c < kLanes / 4; ++c) {
      const uint4 q = row[(c + r) & (kLanes / 4 - 1)];
      sum += q.x + q.y + q.z + q.w;
    }
    if (sum) atomicAdd(a.accum + r, sum);
  }

  if (!cuda_detail::last_block_to_finish(a.ticket)) return;
  const std::uint64_t slot_count = a.indexer.bins + 3;
  if (!a.accumulate) {
    for (std::uint64_t s = threadIdx.x; s < slot_count * a.hists; s += blockDim.x) a.slots[s] = 0;
    __syncthreads();
  }
  const BinIndexer& ix = a.indexer;
  const bool per_value = ix.kind == BinKind::even && ix.bins == kValues && ix.lower == (a.is_signed ? -128.0 : 0.0) &&
                         ix.upper == ix.lower + kValues;
  for (std::uint32_t r = threadIdx.x; r < a.hists * kValues; r += blockDim.x) {
    const unsigned count = atomicExch(a.accum + r, 0u);
    if (!count) continue;
    const std::uint32_t byte = r % kValues, h = r / kValues;
    const double value = a.is_signed ? static_cast<double>(static_cast<signed char>(byte)) : static_cast<double>(byte);
    const std::uint64_t slot = per_value ? static_cast<std::uint64_t>(value - ix.lower) : ix.slot(value);
    cuda_detail::add_to_slot(a.slots + h * slot_count + slot, count);
  }
  if (threadIdx.x == 0) *a.ticket = 0;
}

bool supports(const Problem& p, std::string* why_not) {
  if (p.type == SampleType::u8 || p.type == SampleType::i8) return true;
  if (why_not) *why_not = "gpu_pixel_lane_columns counts 8-bit samples (u8, i8) only";
  return false;
}

std::size_t workspace_bytes(const Problem& p) {
  // The row kernel's accumulators and ticket, or gpu_lane_columns' workspace
  // (run_positions): both leave theirs zero.
  return std::max(cuda_detail::general::round_up(std::size_t{detail::active_count(p.layout)} * kValues * 4, 256) + 256,
                  sizeof(cuda_detail::lane_columns::Workspace));
}

// One row of 1, 2 or 4 interleaved channels (a packed frame, a plain array):
// byte p of every 32-bit word after the row's head has channel (head + p) mod
// C, so gpu_lane_columns' kernel counts it with one set of columns per byte
// position, at its speed (the row kernel below reads an RGBA frame at half
// the read limit).
void run_positions(const RunArgs& a, const PixelArgs& args, unsigned channels) {
  namespace lc = cuda_detail::lane_columns;
  const lc::Split split = lc::split(args.image, args.row_bytes);
  lc::Positions positions;
  positions.histograms = args.hists;
  for (unsigned p = 0; p < 4; ++p) {
    const unsigned c = (split.head + p) % channels;
    positions.histogram[p] = (args.active >> c & 1u)
                                 ? static_cast<unsigned char>(std::popcount(args.active & ((1u << c) - 1u)))
                                 : lc::kNoHistogram;
  }
  if (args.row_bytes > lc::LaneColumnsPolicy::kWideFrom)
    lc::launch<lc::LaneColumnsWidePolicy, 4>(args.image, args.row_bytes, a.workspace, a.slots, a.accumulate,
                                              args.is_signed, a.indexer, stream_of(a), positions);
  else
    lc::launch<lc::LaneColumnsPolicy, 4>(args.image, args.row_bytes, a.workspace, a.slots, a.accumulate,
                                          args.is_signed, a.indexer, stream_of(a), positions);
}

template <int C>
void launch(const RunArgs& a, PixelArgs args) {
  using namespace cuda_detail::general;
  auto kernel = pixel_lane_kernel<C>;
  allow_large_shared(kernel);
  const std::size_t smem = std::size_t{args.histograms_in_smem} * kColumnWords * 4;
  const std::uint64_t resident = static_cast<std::uint64_t>(resident_blocks_with(kernel, PixelLanePolicy::kThreads, smem));
  const std::uint64_t bytes = args.row_bytes * args.height;
  const std::uint64_t wanted = std::clamp<std::uint64_t>(
      (bytes + PixelLanePolicy::kMinBytesPerBlock - 1) / PixelLanePolicy::kMinBytesPerBlock, 1, resident);
  const std::uint64_t block_bytes = std::uint64_t{16} * PixelLanePolicy::kThreads * PixelLanePolicy::kUnroll;
  std::uint64_t grid = wanted;
  if (args.height == 1) {
    // One row: from half the SMs up, whole waves of blocks (as many on every
    // SM; at most the resident ones), so that no SM counts twice as long as
    // another.
    const std::uint64_t sms = static_cast<std::uint64_t>(cuda_detail::sm_count());
    if (2 * wanted >= sms) grid = std::min(resident, (wanted + sms - 1) / sms * sms);
    args.blocks_per_row = static_cast<std::uint32_t>(grid);
  } else if (args.row_bytes >= block_bytes) {
    const std::uint64_t per_row = std::clamp<std::uint64_t>((args.row_bytes + block_bytes - 1) / block_bytes, 1, wanted);
    const std::uint64_t groups = std::clamp<std::uint64_t>(wanted / per_row, 1, args.height);
    args.blocks_per_row = static_cast<std::uint32_t>(per_row);
    grid = groups * per_row;
  } else {
    const std::uint64_t warps = PixelLanePolicy::kThreads / kLanes;
    args.blocks_per_row = 0;
    grid = std::clamp<std::uint64_t>((args.height + warps - 1) / warps, 1, wanted);
  }
  cuda_detail::launch_kernel<true>(kernel, static_cast<int>(grid), PixelLanePolicy::kThreads, smem, stream_of(a), args);
}

void run(const RunArgs& a) {
  const detail::PixelGeometry g = detail::geometry_of(a.layout, a.n, 1);
  PixelArgs args{};
  args.image = static_cast<const unsigned char*>(a.samples);
  args.row_bytes = g.row_samples();
  args.height = g.height;
  args.pitch = g.pitch;
  // A packed frame (each row right after the one before) is one row: byte k
  // still has channel k mod C (a row holds whole pixels), and one long row is
  // read by every block instead of each row by one warp (a 3840 x 2160 RGBA
  // frame: 68 blocks of 1024 threads, half an H100's SMs idle).
  if (args.pitch == args.row_bytes && args.height > 1) {
    args.row_bytes *= args.height;
    args.pitch = args.row_bytes;
    args.height = 1;
  }
  args.active = g.active;
  args.hists = detail::active_count(a.layout);
  args.histograms_in_smem = args.hists + (args.hists < g.channels ? 1 : 0);
  auto* ws = static_cast<unsigned char*>(a.workspace);
  args.accum = reinterpret_cast<unsigned*>(ws);
  args.ticket = reinterpret_cast<unsigned*>(ws + cuda_detail::general::round_up(std::size_t{args.hists} * kValues * 4, 256));
  args.slots = a.slots;
  args.accumulate = a.accumulate;
  args.is_signed = a.type == SampleType::i8;
  args.indexer = a.indexer;
  if (args.row_bytes == 0 || args.height == 0) {  // nothing to count: the slots as the contract says
    if (!a.accumulate)
      LEVELHIST_CUDA_CHECK(cudaMemsetAsync(a.slots, 0, a.binning->slots() * args.hists * sizeof(std::uint64_t), stream_of(a)));
    return;
  }
  if (args.height == 1 && g.channels != 3) {
    run_positions(a, args, g.channels);
    return;
  }
  switch (g.channels) {
    case 1: launch<1>(a, args); break;
    case 2: launch<2>(a, args); break;
    case 3: launch<3>(a, args); break;
    default: launch<4>(a, args); break;
  }
}

std::vector<std::uint64_t> boundaries(const Problem&) {
  const std::uint64_t block_bytes = std::uint64_t{16} * PixelLanePolicy::kThreads * PixelLanePolicy::kUnroll;
  using Lane = cuda_detail::lane_columns::LaneColumnsPolicy;
  return {15, 16, 17, 47, 48, 49, block_bytes - 1, block_bytes, block_bytes + 3, 2 * block_bytes + 1,
          PixelLanePolicy::kMinBytesPerBlock, Lane::kDirectBytesPerBlock + 4, Lane::kMaxDirectBytes + 12,
          Lane::kWideFrom + 20};
}

}  // namespace

const Strategy gpu_pixel_lane_columns{
    "gpu_pixel_lane_columns",
    Backend::cuda,
    "interleaved 8-bit pixels (1-4 channels, any active subset, row pitch): 32 lane columns per channel, "
    "conflict-free shared atomics, channel by byte position; one launch",
    "levelhist (docs/PERFORMANCE-general.md: lane32_u4_1024, lane32_rgb24); gpu_lane_columns' layout per channel",
    supports,
    workspace_bytes,
    run,
    boundaries,
    kCapabilityPixels};

}  // namespace levelhist::strategies
