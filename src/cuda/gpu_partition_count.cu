// gpu_partition_count: u32/i32 keys into huge numbers of even bins (2^20,
// 2^24, up to 4096 x 2^15), where no histogram fits in shared memory.
//
// Counting is order-free, so the keys need no sort, only a partition by the
// high bits of their bin: partition q holds the bins [q 2^L, (q+1) 2^L), whose
// 2^L 32-bit counters (64 KiB for L = 14, 128 KiB for 15) fit one block's
// shared memory.
//
//  1. partition_kernel: a block takes a tile of 8192 keys, maps each to its
//     bin (the exact integer-shift map every backend uses), ranks it in its
//     partition with a shared atomic, and writes the tile's low bin bits as
//     16-bit payloads back to global memory grouped by partition, each run
//     padded to whole 8-byte vectors (the tile's own region: no global
//     offsets, so no counting pass over the keys before it). Per tile and
//     partition it records the run's length and offset in one word,
//     partition-major, so that one partition's runs from every tile are
//     adjacent. Underflow and overflow are counted here and never stored.
//  2. An exclusive scan (CUB) of the runs' lengths: every run's place in the
//     partition-major order of all payloads.
//  3. count_kernel: block b takes the b-th equal share of that order (so the
//     work is level whatever the keys' distribution: one hot partition is
//     shared by all blocks), finds its first and last run by a 1024-way
//     search, gives each warp an equal share of its keys in each partition it
//     meets, and counts them into a shared histogram of 2^L counters, a vector
//     of four payloads a load, added to the 64-bit slots when the partition
//     changes.
//
// Bytes moved per key: 4 read + 2 written (pass 1), 2 read (pass 3), 2 written
// again to leave the workspace zero; a sort (gpu_bucket_sort's onesweep pass)
// moves 4 + 4 + 4 + 4 and ranks with decoupled look-back. Inputs larger than
// a chunk (2^27 keys: 256 MiB of payloads) are counted a chunk at a time.
// docs/PERFORMANCE-general.md, section 15.
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/bin_maps.hpp"
#include "core/env_knob.hpp"
#include "core/strategies.hpp"
#include "cuda/cuda_common.cuh"
#include "cuda/general_common.cuh"
#include "cuda/int_keys.cuh"

namespace levelhist::strategies {
namespace {

using cuda_detail::add_to_slot;
using cuda_detail::load_sample;
using cuda_detail::stream_of;
using cuda_detail::general::round_up;

struct PartitionPolicy {
  // The partition pass: 512 threads of 16 keys (64 registers), two blocks an
  // SM, so that one block's loads overlap the other's grouping.
  static constexpr int kThreads = 512;
  static constexpr int kKeysPerThread = 16;
  static constexpr std::uint32_t kTileKeys = kThreads * kKeysPerThread;  // 8192: ranks fit 13 bits
  static constexpr int kCountThreads = 1024;
  static constexpr std::uint32_t kMaxPartitions = 4096;                  // their counters: 32 KiB
  static constexpr std::uint64_t kChunkKeys = std::uint64_t{1} << 27;
  static constexpr unsigned kVector = 4;          // payloads in one 8-byte load of pass 3
  // Tiles whose runs' records a block writes together (one 32-byte store a
  // partition), where the partitions' records fit shared memory beside the
  // tile and every block gets a group.
  static constexpr unsigned kRecordGroup = 8;
  static constexpr std::uint32_t kMaxGroupedPartitions = 1024;  // 32 KiB of records
  // Pass 3 finds a vector's run by a lookup (count_kernel<true>) beyond this
  // many partitions: runs of fewer than 16 vectors a tile on uniform keys.
  static constexpr std::uint32_t kShortRunPartitions = 128;
};
using P = PartitionPolicy;
static_assert(P::kTileKeys <= (1u << 16), "ranks and offsets share 16 bits with the payload");
// A run's record: its length in vectors (low 16 bits) and its first vector in
// its tile's region (high 16). One 4-byte store a run: pass 1 writes the
// records partition-major, a store to a line of its own each (2^24 bins: 512 a
// tile), and two arrays took twice the stores and bytes.
__host__ __device__ constexpr unsigned run_record(unsigned length, unsigned offset) { return length | offset << 16; }
__host__ __device__ constexpr unsigned run_length(unsigned record) { return record & 0xffffu; }
__host__ __device__ constexpr unsigned run_offset(unsigned record) { return record >> 16; }
struct RunLength {
  __host__ __device__ unsigned operator()(unsigned record) const { return run_length(record); }
};
using RunLengths = thrust::transform_iterator<RunLength, const unsigned*>;

// The bins a partition covers, 2^low_bits: 2^14 (64 KiB of counters, two
// counting blocks an SM) up to 2^21 bins, 2^15 (128 KiB, one block) beyond,
// where 2^14 would make more than 128 partitions, so runs of a few keys a tile
// (the H200, 2^20 bins: 843 GB/s at 2^14 against 763 at 2^15; 2^24 bins: 359
// against 457). LEVELHIST_PARTITION_LOW_BITS (12 to 15) sets it for every bin
// count; read at every call, so that the workspace and the run agree and a
// test can set it.
int low_bits(std::uint64_t bins) {
  const int policy = bins > (std::uint64_t{1} << 21) ? 15 : 14;
  return static_cast<int>(::levelhist::detail::env_knob("LEVELHIST_PARTITION_LOW_BITS", policy, 12, 15));
}
// Keys counted a chunk at a time (LEVELHIST_PARTITION_CHUNK_KEYS, whole tiles,
// so that the tests can take the many-chunk path on small inputs).
std::uint64_t chunk_limit() {
  const std::uint64_t v = ::levelhist::detail::env_knob("LEVELHIST_PARTITION_CHUNK_KEYS", P::kChunkKeys, P::kTileKeys,
                                                         P::kChunkKeys);
  return v / P::kTileKeys * P::kTileKeys;
}

// Payload slots a tile's region holds: its keys, every partition's run padded
// to whole vectors (at most kVector - 1 slots of padding a non-empty run).
constexpr std::uint32_t region_of(std::uint32_t partitions) {
  const std::uint32_t slots = P::kTileKeys + (P::kVector - 1) * std::min(partitions, P::kTileKeys);
  return (slots + P::kVector - 1) / P::kVector * P::kVector;  // regions start on a vector
}
static_assert(region_of(P::kMaxPartitions) / P::kVector <= 0xffffu && P::kTileKeys / P::kVector <= 0xffffu,
              "a run's offset and length in vectors fit run_record's 16 bits");

using cuda_detail::KeyShiftMap;

// The same map in 32-bit arithmetic, without branches, for bounds whose lower
// end is a key of the type (every key >= lower then differs from it by less
// than 2^32): keys compared in their unsigned order (i32: sign bit flipped).
struct KeyMap32 {
  unsigned flip;   // 0x80000000 for i32 keys, else 0
  unsigned lower;  // the lower bound as a key, flipped
  unsigned last;   // in range: 0 <= key - lower <= last (clamped to 2^32 - 1)
  unsigned shift, bins;
  unsigned under, over;  // what underflow and overflow map to (PartitionArgs::under_slot, over_slot)
  __device__ __forceinline__ std::uint32_t operator()(unsigned key) const {
    const unsigned x = key ^ flip, d = x - lower;
    const unsigned b = min(d >> shift, bins - 1);  // numpy's key == upper: the last bin
    return x < lower ? under : d > last ? over : b;
  }
};

// KeyMap32 for `m` where its lower bound is a key of the type, underflow and
// overflow mapped to `under` and `over`; false if not.
bool make_key_map32(const KeyShiftMap& m, bool is_signed, unsigned under, unsigned over, KeyMap32* out) {
  const std::int64_t type_min = is_signed ? -2147483648LL : 0, type_max = is_signed ? 2147483647LL : 4294967295LL;
  if (m.lower < type_min || m.lower > type_max) return false;
  out->flip = is_signed ? 0x80000000u : 0u;
  out->lower = static_cast<unsigned>(static_cast<std::uint64_t>(m.lower)) ^ out->flip;
  out->last = static_cast<unsigned>(std::min<std::uint64_t>(m.last, 0xffffffffull));
  out->shift = m.shift;
  out->bins = m.bins;
  out->under = under;
  out->over = over;
  return true;
}

struct PartitionArgs {
  const void* keys;
  std::uint64_t m;  // keys in this chunk
  std::uint32_t tiles;
  std::uint32_t partitions;
  std::uint32_t region;  // payload slots a tile (region_of)
  int low_bits;
  KeyShiftMap map;
  KeyMap32 map32;  // where it applies (the kernel's Fast32)
  bool is_signed;
  unsigned short* payload;  // tile t's at t * region, grouped by partition, each run padded to whole vectors
  unsigned* runs;           // [q * pitch + t]: run_record of tile t's run of partition q
  std::uint32_t group;      // tiles a block takes at once, their records written together (1 to kRecordGroup)
  std::uint32_t pitch;      // tiles rounded up to whole groups (the records past the last are zero)
  std::uint64_t* slots;     // underflow and overflow go straight here
  unsigned short pad;       // a payload slot after a run's end: 2^low_bits, pass 3's spare counter
  // Keys that are no bin's map to the three partitions past the last:
  // underflow, overflow and (in a tile that the chunk ends inside) keys past
  // the end. Their first slots:
  std::uint32_t under_slot, over_slot, past_end_slot;
};

// Exclusive prefix sums of counts[0, n), each rounded up to whole vectors,
// into prefix[0, n) (n <= kMaxPartitions) by the whole block of kThreads;
// returns the total. `warp_sums` holds 33 words.
__device__ __forceinline__ unsigned padded(unsigned c) { return (c + P::kVector - 1) & ~(P::kVector - 1); }

__device__ unsigned block_exclusive_scan(const unsigned* counts, unsigned* prefix, unsigned n, unsigned* warp_sums) {
  const unsigned per = (n + P::kThreads - 1) / P::kThreads;
  const unsigned first = threadIdx.x * per;
  unsigned local = 0;
  for (unsigned k = 0; k < per; ++k)
    if (first + k < n) local += padded(counts[first + k]);
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned incl = local;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned other = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= static_cast<unsigned>(d)) incl += other;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const unsigned w = lane < P::kThreads / 32 ? warp_sums[lane] : 0;
    unsigned wincl = w;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned other = __shfl_up_sync(0xffffffffu, wincl, d);
      if (lane >= static_cast<unsigned>(d)) wincl += other;
    }
    warp_sums[lane] = wincl - w;  // exclusive
    if (lane == 31) warp_sums[32] = wincl;
  }
  __syncthreads();
  unsigned run = warp_sums[warp] + incl - local;
  for (unsigned k = 0; k < per; ++k)
    if (first + k < n) {
      prefix[first + k] = run;
      run += padded(counts[first + k]);
    }
  return warp_sums[32];
}

// Dynamic shared memory: the group's runs' records (group words a partition,
// whole 16 bytes), the tile's payloads, then per partition its count (and 32
// spare counters) and its start, then the scan's warp sums and the block's
// flow counters.
__host__ __device__ std::size_t records_smem(std::uint32_t partitions, std::uint32_t group) {
  return round_up(std::size_t{partitions} * group * 4, 16);
}
std::size_t partition_smem(std::uint32_t partitions, std::uint32_t group) {
  return records_smem(partitions, group) + std::size_t{region_of(partitions)} * sizeof(unsigned short) +
         (std::size_t{partitions} * 2 + 32) * 4 + 36 * 4;
}

// A tile's keys into registers, a thread's sixteen issued at once. Full: the
// whole tile is in the input (no bound test a key).
template <bool Aligned, bool Full>
__device__ __forceinline__ void load_tile(const PartitionArgs& a, std::uint64_t first,
                                          unsigned (&key)[P::kKeysPerThread]) {
#pragma unroll
  for (int u = 0; u < P::kKeysPerThread; ++u) {
    const std::uint64_t i = first + u * P::kThreads + threadIdx.x;
    key[u] = Full || i < a.m ? load_sample<unsigned, Aligned>(a.keys, i) : 0;
  }
}

// A tile's keys mapped: each one's partition and, packed, its rank among the
// tile's keys of that partition (high 16 bits) and its bin in the partition.
// Underflow, overflow and keys past the chunk's end map to the partitions
// just past the last (PartitionArgs::under_slot...): one test a key keeps
// them out of the ranking, and a warp counts its flows only where it has any.
template <bool Fast32, bool Full>
__device__ __forceinline__ void rank_tile(const PartitionArgs& a, std::uint64_t first, unsigned* count,
                                          const unsigned (&key)[P::kKeysPerThread],
                                          unsigned (&part)[P::kKeysPerThread],
                                          unsigned (&rank_value)[P::kKeysPerThread], unsigned& under,
                                          unsigned& over) {
  const std::uint32_t bins = a.map.bins;
  const unsigned mask = (1u << a.low_bits) - 1;
  const unsigned lane = threadIdx.x & 31;
#pragma unroll
  for (int u = 0; u < P::kKeysPerThread; ++u) {
    std::uint32_t s;
    if constexpr (Fast32) {
      s = a.map32(key[u]);
    } else {
      s = a.map(cuda_detail::key_value(key[u], a.is_signed));
      s = s < bins ? s : s == bins ? a.under_slot : a.over_slot;
    }
    if constexpr (!Full) s = first + u * P::kThreads + threadIdx.x < a.m ? s : a.past_end_slot;
    part[u] = s >> a.low_bits;
    rank_value[u] = s & mask;
  }
  // A warp whose 16 x 32 keys share one partition (constant or sorted keys)
  // ranks them with one atomic: 32 a warp on one counter would serialize.
  // One test for the sixteen.
  const unsigned q0 = __shfl_sync(0xffffffffu, part[0], 0);
  bool same = true, flows = false;
#pragma unroll
  for (int u = 0; u < P::kKeysPerThread; ++u) {
    same &= part[u] == q0;
    flows |= part[u] >= a.partitions;
  }
  if (__all_sync(0xffffffffu, same)) {
    if (q0 < a.partitions) {  // a warp of flows only (e.g. all below the range) ranks nothing
      unsigned base = 0;
      if (lane == 0) base = atomicAdd(count + q0, 32u * P::kKeysPerThread);
      base = __shfl_sync(0xffffffffu, base, 0) + lane;
#pragma unroll
      for (int u = 0; u < P::kKeysPerThread; ++u) rank_value[u] |= (base + 32u * u) << 16;
    }
  } else {
    // Keys that are no bin's take a spare counter of their lane's (no test
    // and branch around the atomic, no two lanes on one spare).
#pragma unroll
    for (int u = 0; u < P::kKeysPerThread; ++u)
      rank_value[u] |= atomicAdd(count + (part[u] < a.partitions ? part[u] : a.partitions + lane), 1u) << 16;
  }
  if (__any_sync(0xffffffffu, flows)) {  // rare in most data: underflow, overflow, the chunk's end
#pragma unroll
    for (int u = 0; u < P::kKeysPerThread; ++u) {
      under += part[u] == a.partitions;
      over += part[u] == a.partitions + 1;
    }
  }
}

template <bool Aligned, bool Fast32>
__global__ void __launch_bounds__(P::kThreads, 2) partition_kernel(PartitionArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* rec = reinterpret_cast<unsigned*>(smem);  // [tile's place in the group * partitions + q]: no bank conflicts
  auto* stage = reinterpret_cast<unsigned short*>(smem + records_smem(a.partitions, a.group));
  auto* count = reinterpret_cast<unsigned*>(reinterpret_cast<unsigned char*>(stage) +
                                            std::size_t{a.region} * sizeof(unsigned short));
  unsigned* start = count + a.partitions + 32;  // count: the partitions, then 32 spares (rank_tile)
  unsigned* warp_sums = start + a.partitions;  // 33 words
  unsigned* flow = warp_sums + 33;             // underflow, overflow
  if (threadIdx.x < 2) flow[threadIdx.x] = 0;
  const std::uint32_t bins = a.map.bins;
  unsigned under = 0, over = 0;
  auto load = [&](std::uint32_t t, unsigned (&key)[P::kKeysPerThread]) {
    const std::uint64_t first = std::uint64_t{t} * P::kTileKeys;
    if (first + P::kTileKeys <= a.m) load_tile<Aligned, true>(a, first, key);
    else load_tile<Aligned, false>(a, first, key);
  };
  const std::uint32_t groups = (a.tiles + a.group - 1) / a.group;
  for (std::uint32_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const std::uint32_t t0 = g * a.group, t_end = min(t0 + a.group, a.tiles);
    for (std::uint32_t t = t0; t < t_end; ++t) {
      unsigned key[P::kKeysPerThread];
      load(t, key);
      for (unsigned q = threadIdx.x; q < a.partitions + 32; q += P::kThreads) count[q] = 0;  // and the spares
      __syncthreads();
      const std::uint64_t first = std::uint64_t{t} * P::kTileKeys;
      unsigned part[P::kKeysPerThread], rank_value[P::kKeysPerThread];
      if (first + P::kTileKeys <= a.m)
        rank_tile<Fast32, true>(a, first, count, key, part, rank_value, under, over);
      else
        rank_tile<Fast32, false>(a, first, count, key, part, rank_value, under, over);
      __syncthreads();
      const unsigned total = block_exclusive_scan(count, start, a.partitions, warp_sums);
      __syncthreads();  // start[] was written by other threads than read it below
      // The runs' records (lengths and offsets in vectors), partition-major (every
      // partition, empty ones too), and each run's padding.
      for (unsigned q = threadIdx.x; q < a.partitions; q += P::kThreads) {
        const unsigned c = count[q], s0 = start[q];
        rec[(t - t0) * a.partitions + q] = run_record(padded(c) / P::kVector, s0 / P::kVector);
        for (unsigned j = c; j < padded(c); ++j) stage[s0 + j] = a.pad;
      }
#pragma unroll
      for (int u = 0; u < P::kKeysPerThread; ++u)
        if (part[u] < a.partitions) stage[start[part[u]] + (rank_value[u] >> 16)] = static_cast<unsigned short>(rank_value[u]);
      __syncthreads();
      // The tile's payloads, 8 bytes (a vector) a store.
      unsigned short* out = a.payload + std::uint64_t{t} * a.region;
      for (unsigned k = threadIdx.x; k * P::kVector < total; k += P::kThreads)
        reinterpret_cast<uint2*>(out)[k] = reinterpret_cast<const uint2*>(stage)[k];
      __syncthreads();  // stage and count are rewritten by the next tile
    }
    // The group's records, partition-major: `group` adjacent words a partition
    // (one 32-byte store in a group of 8; zero past the chunk's last tile). A
    // 4-byte store a (partition, tile) goes to a line of its own: at 2^24 bins
    // 512 a tile, more store transactions than the tile's payloads take.
    // rec[] is next written after two barriers.
    for (unsigned q = threadIdx.x; q < a.partitions; q += P::kThreads) {
      unsigned* dst = a.runs + std::uint64_t{q} * a.pitch + t0;
      if (a.group == P::kRecordGroup) {
        unsigned r[P::kRecordGroup];
#pragma unroll
        for (unsigned j = 0; j < P::kRecordGroup; ++j) r[j] = t0 + j < t_end ? rec[j * a.partitions + q] : 0u;
        reinterpret_cast<uint4*>(dst)[0] = make_uint4(r[0], r[1], r[2], r[3]);
        reinterpret_cast<uint4*>(dst)[1] = make_uint4(r[4], r[5], r[6], r[7]);
      } else {
        for (unsigned j = 0; j < a.group; ++j) dst[j] = t0 + j < t_end ? rec[j * a.partitions + q] : 0u;
      }
    }
  }
  if (under) atomicAdd(flow, under);
  if (over) atomicAdd(flow + 1, over);
  __syncthreads();
  if (threadIdx.x == 0) {
    add_to_slot(a.slots + bins, flow[0]);
    add_to_slot(a.slots + bins + 1, flow[1]);
  }
}

struct CountArgs {
  const uint2* payload;     // in vectors of 4 payloads
  std::uint32_t region_vectors;
  const unsigned* runs;     // run_record, partition-major
  const unsigned* starts;   // exclusive scan of the runs' lengths
  std::uint32_t tiles;    // the records' rows: PartitionArgs::pitch
  std::uint32_t entries;  // partitions x tiles
  int low_bits;
  std::uint64_t* slots;
};

// The largest entry i in [first, end) with starts[i] <= x (starts[first] <= x),
// by a group of Ways threads (a block or a warp; `rank` the thread's place in
// it), Ways candidates a round; `count_true` counts the group's true votes.
template <std::uint32_t Ways, class CountTrue>
__device__ std::uint32_t find_entry(const unsigned* starts, std::uint32_t first, std::uint32_t end, unsigned x,
                                    unsigned rank, CountTrue count_true) {
  std::uint32_t lo = first, hi = end - 1;
  while (lo < hi) {  // uniform across the group
    const std::uint32_t step = (hi - lo + Ways) / Ways;
    const std::uint64_t idx = lo + std::uint64_t{rank} * step;
    const std::uint32_t c = count_true(idx <= hi && starts[idx] <= x);  // >= 1: idx = lo
    const std::uint32_t new_lo = lo + (c - 1) * step;
    hi = static_cast<std::uint32_t>(std::min<std::uint64_t>(hi, std::uint64_t{lo} + std::uint64_t{c} * step - 1));
    lo = new_lo;
  }
  return lo;
}

// Dynamic shared memory: 2^low_bits counters and a spare one that counts the
// runs' padding (pass 1 pads with 2^low_bits: no test a payload), then per
// warp its batch's 33 run starts and 32 deltas (in vectors).
std::size_t count_smem(int low) { return (std::size_t{4} << low) + 4 + P::kCountThreads / 32 * (33 + 32) * 4; }

// ShortRuns: the partitions are many (more than kShortRunPartitions), so a
// batch may take the lookup below; else every batch walks, and the kernel is
// the walk alone (the lookup's second copy of the loop cost 2^20 bins ~1%).
// count_kernel<false, 2> and <false, 4> (only by LEVELHIST_PARTITION_AHEAD,
// for a study) spill 28-64 bytes at the 32 registers of two 1024-thread
// blocks an SM, hence this file is left out of the build's spill warnings
// (CMakeLists.txt); the kernels the policy runs have none: check with
// -Xptxas -v after a change.
//
// Ahead: windows whose payload loads are in flight while one is counted. A
// window's counting is ~40 instructions against a load from DRAM of several
// hundred cycles, so with one ahead a warp waits at every window unless other
// warps cover it: two blocks an SM (2^20 bins, 64 warps) do more than one
// (2^24 bins: 128 KiB of counters, 32 warps), which therefore takes more
// registers (one block an SM is all its shared memory allows anyway).
template <bool ShortRuns, int Ahead>
__global__ void __launch_bounds__(P::kCountThreads, ShortRuns ? 1 : 2) count_kernel(CountArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* h = reinterpret_cast<unsigned*>(smem);
  const unsigned width = 1u << a.low_bits;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned* pre = reinterpret_cast<unsigned*>(smem + (std::size_t{4} << a.low_bits) + 4) + warp * 65;  // 33 entries
  unsigned* delta = pre + 33;                                                                       // 32 entries
  const unsigned total = a.starts[a.entries - 1] + run_length(a.runs[a.entries - 1]);
  const unsigned lo = static_cast<unsigned>(std::uint64_t{total} * blockIdx.x / gridDim.x);
  const unsigned hi = static_cast<unsigned>(std::uint64_t{total} * (blockIdx.x + 1) / gridDim.x);
  if (lo >= hi) return;  // the whole block
  for (unsigned j = threadIdx.x; j <= width; j += P::kCountThreads) h[j] = 0;  // the spare too
  auto block_votes = [](bool v) { return static_cast<std::uint32_t>(__syncthreads_count(v)); };
  auto warp_votes = [](bool v) { return static_cast<std::uint32_t>(__popc(__ballot_sync(0xffffffffu, v))); };
  const std::uint32_t q_first =
      find_entry<P::kCountThreads>(a.starts, 0, a.entries, lo, threadIdx.x, block_votes) / a.tiles;
  const std::uint32_t q_last =
      find_entry<P::kCountThreads>(a.starts, 0, a.entries, hi - 1, threadIdx.x, block_votes) / a.tiles;
  for (std::uint32_t q = q_first; q <= q_last; ++q) {
    // The block's keys in partition q, an equal share to each warp (one long
    // run, e.g. constant keys, is shared by all warps).
    const std::uint32_t row = q * a.tiles, row_end = row + a.tiles;
    const unsigned qa = max(lo, a.starts[row]);
    const unsigned qb = min(hi, row_end < a.entries ? a.starts[row_end] : total);
    const unsigned wlo = qa < qb ? qa + static_cast<unsigned>(std::uint64_t{qb - qa} * warp / 32) : 0;
    const unsigned whi = qa < qb ? qa + static_cast<unsigned>(std::uint64_t{qb - qa} * (warp + 1) / 32) : 0;
    std::uint32_t i = wlo < whi ? find_entry<32>(a.starts, row, row_end, wlo, lane, warp_votes) : row_end;
    while (i < row_end) {  // uniform across the warp
      // Lane j describes run i + j: its keys inside [wlo, whi) and where they are.
      const std::uint32_t e = i + lane;
      unsigned len = 0, src = 0, e1 = ~0u;
      if (e < row_end) {
        const unsigned e0 = a.starts[e];
        e1 = e + 1 < a.entries ? a.starts[e + 1] : total;
        const unsigned g0 = max(e0, wlo), g1 = min(e1, whi);
        if (g1 > g0) {
          len = g1 - g0;
          src = (e - row) * a.region_vectors + run_offset(a.runs[e]) + (g0 - e0);
        }
      }
      unsigned incl = len;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const unsigned other = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= static_cast<unsigned>(d)) incl += other;
      }
      const unsigned keys = __shfl_sync(0xffffffffu, incl, 31);
      // The batch's vectors as one sequence [0, keys), lane j's run starting
      // at run_start; vector k's place in the payloads is k + the delta of
      // its run. Each lane takes k = lane, lane + 32, ... (a window of 32
      // vectors a step), and finds k's run one of two ways, chosen for the
      // whole batch by its runs' mean length:
      //  - runs of many vectors (2^20 bins: ~32 a tile) cross a window's edge
      //    about once: a lane walks forward run by run (pre[] holds the runs'
      //    starts);
      //  - runs of a few (2^24 bins: ~4) would take ~7 steps a window, each a
      //    shared load waiting on the last. There the runs without keys are
      //    left out (delta[] compacted), so the others' starts strictly
      //    increase and k's run is the number of starts at or before k, less
      //    one: for a window, one vote (starts up to its first vector) and one
      //    OR (starts inside it) find every lane's run.
      const unsigned run_start = incl - len;
      const bool has_keys = len > 0;
      const unsigned nonempty = ShortRuns ? __ballot_sync(0xffffffffu, has_keys) : 0u;
      const bool walk = !ShortRuns || keys >= 16 * static_cast<unsigned>(__popc(nonempty));  // uniform
      if (walk) {
        pre[lane] = run_start;
        if (lane == 31) pre[32] = keys;
        delta[lane] = src - run_start;
      } else if (has_keys) {
        delta[__popc(nonempty & ((1u << lane) - 1))] = src - run_start;
      }
      __syncwarp();
      // Counts the batch, `vector_index(w)` giving vector w + lane's index:
      // called by the whole warp where WholeWarp (the lookup's vote), else by
      // the lanes whose vector is the batch's. The windows Ahead on are loaded
      // before this one's atomics, which a load after them would wait for.
      auto count_batch = [&](auto whole_warp, auto&& vector_index) {
        constexpr bool WholeWarp = decltype(whole_warp)::value;
        // Window w's vector of this lane into `into`, where it is one of the batch's.
        auto fetch = [&](unsigned w, uint2& into) {
          if (WholeWarp) {
            if (w < keys) {  // uniform
              const unsigned idx = vector_index(w);
              if (w + lane < keys) into = a.payload[idx];
            }
          } else if (w + lane < keys) {
            into = a.payload[vector_index(w)];
          }
        };
        // ring[d] holds window k0 + 32 d (its load in flight): the loop steps
        // Ahead windows at a time so that each slot keeps its register (no moves).
        uint2 ring[Ahead];
#pragma unroll
        for (int d = 0; d < Ahead; ++d) {
          ring[d] = make_uint2(0, 0);
          fetch(32u * d, ring[d]);
        }
        for (unsigned k0 = 0; k0 < keys; k0 += 32u * Ahead) {
#pragma unroll
          for (int d = 0; d < Ahead; ++d) {
            const unsigned w0 = k0 + 32u * d;  // this window's first vector
            if (w0 >= keys) break;             // uniform
            const unsigned k = w0 + lane;
            const uint2 cur = ring[d];
            fetch(w0 + 32u * Ahead, ring[d]);
            const unsigned w[2] = {cur.x, cur.y};
            // A warp of one value (constant keys) adds once: 32 atomics on one
            // counter would serialize. Lane 0's first payload is a key (a run's
            // padding is at its end, less than a vector); a vector with padding
            // is not "same", so its warp takes the atomics (the padding goes to
            // the spare counter h[width]).
            const unsigned v0 = __shfl_sync(0xffffffffu, w[0] & 0xffffu, 0);
            const unsigned pair = v0 * 0x10001u;
            const bool same = k >= keys || (w[0] == pair && w[1] == pair);
            if (__all_sync(0xffffffffu, same)) {
              if (lane == 0) atomicAdd(h + v0, 4 * min(32u, keys - w0));
            } else if (k < keys) {
#pragma unroll
              for (int j = 0; j < 4; ++j) atomicAdd(h + ((w[j / 2] >> (16 * (j % 2))) & 0xffffu), 1u);
            }
          }
        }
      };
      if (walk) {
        unsigned run = 0, run_end = pre[1], run_delta = delta[0];  // the lane's current run
        count_batch(std::false_type{}, [&](unsigned w) {
          const unsigned k = w + lane;
          while (k >= run_end) {  // runs are consecutive and k only grows
            ++run;
            run_end = pre[run + 1];
            run_delta = delta[run];
          }
          return k + run_delta;
        });
      } else if constexpr (ShortRuns) {
        const unsigned up_to_lane = 0xffffffffu >> (31 - lane);
        // The run's place is in [0, 32) wherever k is one of the batch's
        // vectors (before >= 1: the first run with keys starts at 0); the mask
        // keeps other lanes inside delta[].
        count_batch(std::true_type{}, [&](unsigned w) {
          const unsigned before = __popc(__ballot_sync(0xffffffffu, has_keys && run_start <= w));
          const unsigned at = run_start - w;  // wraps where the run starts before w
          const unsigned inside = __reduce_or_sync(0xffffffffu, has_keys && run_start > w && at < 32 ? 1u << at : 0u);
          return w + lane + delta[(before - 1 + __popc(inside & up_to_lane)) & 31];
        });
      }
      __syncwarp();  // pre and delta are rewritten by the next batch
      // On while the next run starts below whi.
      const unsigned next_run = __shfl_sync(0xffffffffu, e1, 31);
      i = next_run < whi ? i + 32 : row_end;
    }
    __syncthreads();
    std::uint64_t* out = a.slots + std::uint64_t{q} * width;
    for (unsigned j = threadIdx.x; j < width; j += P::kCountThreads)
      if (const unsigned c = h[j]) {
        h[j] = 0;
        add_to_slot(out + j, c);
      }
    __syncthreads();
  }
}

// count_kernel with `ahead` windows in flight (1, 2 or 4; 3 takes 2).
template <bool ShortRuns>
auto count_kernel_for(std::uint64_t ahead) {
  return ahead >= 4 ? count_kernel<ShortRuns, 4> : ahead >= 2 ? count_kernel<ShortRuns, 2> : count_kernel<ShortRuns, 1>;
}

bool supports(const Problem& p, std::string* why_not) {
  if (!cuda_detail::int_keys_in_shift_bins(p, "gpu_partition_count", why_not)) return false;
  const std::uint64_t most = std::uint64_t{P::kMaxPartitions} << low_bits(p.binning->bins());
  if (p.binning->bins() > most) {
    if (why_not)
      *why_not = "gpu_partition_count takes at most " + std::to_string(most) +
                 " bins (4096 partitions of shared counters); gpu_bucket_sort takes more";
    return false;
  }
  return true;
}

struct Shape {
  std::uint32_t partitions;
  std::uint64_t chunk;   // keys a chunk
  std::uint32_t tiles;   // of the largest chunk
  std::uint64_t entries; // partitions x tiles
};
Shape shape_of(const Binning& b, std::uint64_t n, int low) {
  Shape s{};
  s.partitions = static_cast<std::uint32_t>((b.bins() + (std::uint64_t{1} << low) - 1) >> low);
  s.chunk = std::max<std::uint64_t>(1, std::min(n, chunk_limit()));
  s.tiles = static_cast<std::uint32_t>((s.chunk + P::kTileKeys - 1) / P::kTileKeys);
  // The largest pitch: a chunk's tiles rounded up to whole groups of any
  // size up to kRecordGroup (3 groups of 3 for 8 tiles: 9 rows).
  s.entries = std::uint64_t{s.partitions} * (s.tiles + P::kRecordGroup - 1);
  return s;
}

std::size_t scan_temp_bytes(std::uint64_t entries) {
  std::size_t bytes = 0;
  LEVELHIST_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, RunLengths(nullptr, RunLength{}),
                                                     static_cast<unsigned*>(nullptr), static_cast<int>(entries)));
  return bytes;
}

struct Layout {
  std::size_t payload, runs, starts, temp, total;
};
Layout layout_for(const Shape& s) {
  Layout l{};
  l.payload = 0;
  l.runs = round_up(std::size_t{s.tiles} * region_of(s.partitions) * 2, 256);
  l.starts = l.runs + round_up(s.entries * 4, 256);
  l.temp = l.starts + round_up(s.entries * 4, 256);
  l.total = l.temp + round_up(scan_temp_bytes(s.entries), 256);
  return l;
}

std::size_t workspace_bytes(const Problem& p) { return layout_for(shape_of(*p.binning, p.n, low_bits(p.binning->bins()))).total; }

// Launches pass 1 on args.tiles tiles; sets args.group and args.pitch: tiles
// in groups of 8 where the records fit and the busiest block's tiles grow by
// at most 1/16 (a 1 GiB chunk: 64 against 63; 64 MiB: 8 and 8; 16 MiB would
// take 8 against 2, on a quarter of the blocks), else one at a time.
// LEVELHIST_PARTITION_RECORD_GROUP (1 to 8) sets the group where the records
// fit whatever the tile count, so that the tests take the grouped path (and a
// partly filled last group) on small inputs.
template <bool Aligned, bool Fast32>
void launch_partition(PartitionArgs& args, cudaStream_t stream) {
  auto kernel = partition_kernel<Aligned, Fast32>;
  const std::size_t grouped_smem = partition_smem(args.partitions, P::kRecordGroup);
  const bool may_group = args.partitions <= P::kMaxGroupedPartitions;
  const std::size_t most_smem = may_group ? grouped_smem : partition_smem(args.partitions, 1);
  cuda_detail::allow_dynamic_shared(kernel, most_smem);  // before the occupancy is asked
  const int resident = std::max(1, cuda_detail::resident_blocks(kernel, P::kThreads, most_smem));
  const auto forced = static_cast<std::uint32_t>(
      ::levelhist::detail::env_knob("LEVELHIST_PARTITION_RECORD_GROUP", 0, 0, P::kRecordGroup));
  const std::uint64_t r = static_cast<std::uint64_t>(resident), g = P::kRecordGroup;
  const std::uint64_t most_one_by_one = (args.tiles + r - 1) / r;
  const std::uint64_t most_grouped = ((args.tiles + g - 1) / g + r - 1) / r * g;
  args.group = !may_group ? 1 : forced ? forced : most_grouped * 16 <= most_one_by_one * 17 ? P::kRecordGroup : 1;
  args.pitch = static_cast<std::uint32_t>(round_up(args.tiles, args.group));
  const std::size_t smem = partition_smem(args.partitions, args.group);
  const std::uint64_t groups = (args.tiles + args.group - 1) / args.group;
  const unsigned blocks = static_cast<unsigned>(std::clamp<std::uint64_t>(groups, 1, resident));
  kernel<<<blocks, P::kThreads, smem, stream>>>(args);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

void run(const RunArgs& a) {
  const int low = low_bits(a.binning->bins());
  const Shape s = shape_of(*a.binning, a.n, low);
  const Layout l = layout_for(s);
  auto* ws = static_cast<unsigned char*>(a.workspace);
  const cudaStream_t stream = stream_of(a);
  cuda_detail::clear_slots_unless_accumulating(a);
  if (a.n == 0) return;

  PartitionArgs pa{};
  pa.partitions = s.partitions;
  pa.region = region_of(s.partitions);
  pa.low_bits = low;
  pa.pad = static_cast<unsigned short>(1u << low);
  pa.under_slot = s.partitions << low;
  pa.over_slot = (s.partitions + 1) << low;
  pa.past_end_slot = (s.partitions + 2) << low;
  pa.map = binmap::make_int_shift<true>(*a.binning);
  pa.is_signed = a.type == SampleType::i32;
  const bool fast32 = make_key_map32(pa.map, pa.is_signed, pa.under_slot, pa.over_slot, &pa.map32);
  pa.payload = reinterpret_cast<unsigned short*>(ws + l.payload);
  pa.runs = reinterpret_cast<unsigned*>(ws + l.runs);
  pa.slots = a.slots;
  CountArgs ca{};
  ca.payload = reinterpret_cast<const uint2*>(pa.payload);
  ca.region_vectors = pa.region / P::kVector;
  ca.runs = pa.runs;
  ca.starts = reinterpret_cast<unsigned*>(ws + l.starts);
  ca.low_bits = low;
  ca.slots = a.slots;
  void* temp = ws + l.temp;
  const std::size_t csmem = count_smem(low);
  // The windows loaded ahead: LEVELHIST_PARTITION_AHEAD (1, 2 or 4), else the policy.
  const bool short_runs = s.partitions > P::kShortRunPartitions;
  const auto ahead = ::levelhist::detail::env_knob("LEVELHIST_PARTITION_AHEAD", short_runs ? 4 : 1, 1, 4);
  const auto count = short_runs ? count_kernel_for<true>(ahead) : count_kernel_for<false>(ahead);
  cuda_detail::allow_dynamic_shared(count, csmem);
  const int count_resident = std::max(1, cuda_detail::resident_blocks(count, P::kCountThreads, csmem));

  const bool aligned = reinterpret_cast<std::uintptr_t>(a.samples) % 4 == 0;
  for (std::uint64_t done = 0; done < a.n; done += s.chunk) {
    const std::uint64_t m = std::min(s.chunk, a.n - done);
    pa.keys = static_cast<const unsigned char*>(a.samples) + done * 4;
    pa.m = m;
    pa.tiles = static_cast<std::uint32_t>((m + P::kTileKeys - 1) / P::kTileKeys);
    if (aligned) {
      if (fast32) launch_partition<true, true>(pa, stream);
      else launch_partition<true, false>(pa, stream);
    } else {
      if (fast32) launch_partition<false, true>(pa, stream);
      else launch_partition<false, false>(pa, stream);
    }
    const std::uint64_t entries = std::uint64_t{s.partitions} * pa.pitch;
    std::size_t temp_bytes = l.total - l.temp;
    LEVELHIST_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, RunLengths(pa.runs, RunLength{}), reinterpret_cast<unsigned*>(ws + l.starts),
                                                       static_cast<int>(entries), stream));
    ca.tiles = pa.pitch;  // the records' rows (tiles past the last have empty runs)
    ca.entries = static_cast<std::uint32_t>(entries);
    // About 8 K keys a block at least; blocks left without keys return at once.
    const unsigned blocks =
        static_cast<unsigned>(std::clamp<std::uint64_t>((m + 8191) / 8192, 1, static_cast<std::uint64_t>(count_resident)));
    count<<<blocks, P::kCountThreads, csmem, stream>>>(ca);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  }
  // The workspace contract: leave it zero. The layout is sized by the largest
  // chunk, the first (s.tiles), so one clearing of all of it clears what any
  // chunk used: payloads, runs' records and the scan's storage.
  LEVELHIST_CUDA_CHECK(cudaMemsetAsync(ws, 0, l.total, stream));
}

std::vector<std::uint64_t> boundaries(const Problem&) {
  return {1, 32, P::kTileKeys, 2 * P::kTileKeys, 3 * P::kTileKeys + 5};
}

}  // namespace

const Strategy gpu_partition_count{
    "gpu_partition_count",
    Backend::cuda,
    "u32/i32 keys in huge even bin counts (2^20, 2^24): each tile's keys grouped by the high bits of their bin "
    "into 16-bit payloads (no sort), then every partition counted in a shared histogram of 2^14 or 2^15 bins",
    "levelhist (docs/PERFORMANCE-general.md, section 15)",
    supports,
    workspace_bytes,
    run,
    boundaries};

}  // namespace levelhist::strategies
