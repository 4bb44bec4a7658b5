// gpu_segments: a batch of histograms in one launch (Request::segments,
// segments_by_offsets, tiles): auto's choice for batches on the GPU.
//
// The input is cut into work items of at most kChunkBytes of samples, and a
// persistent grid of blocks takes them in turn, so a batch of a few huge
// segments keeps every multiprocessor as busy as a batch of many small ones.
// An item is a chunk of the array (segments) or a band of rows of one tile
// (tiles). For each segment (or tile) the item overlaps, the block counts
// that part into a shared-memory histogram, then writes it out. Two layouts
// of that histogram (the kernel's Counters):
//  * WarpCopies, any sample type: one copy of the slots per warp (warps do not
//    contend; each thread first adds up runs of equal slots among its own
//    samples, so a constant segment costs one atomic per vector, not one per
//    sample);
//  * ByteColumns, 8-bit samples: gpu_lane_columns' 32 lane columns per byte
//    value (h[value][lane], 32 KiB), so the 32 atomics of a warp always hit 32
//    different banks, whatever the data; a flush sums each value's row and maps
//    the value to its slot once. With one copy per warp, uniform bytes put ~3.5
//    of a warp's 32 atomics in the busiest bank.
// The write-out:
//  * a segment or tile that lies whole inside the item is the block's alone:
//    its counters are stored (added to the old ones when accumulating), no
//    atomics, and every slot is written, so no clearing pass is needed;
//  * a segment that straddles items is added with 64-bit atomics (nonzero
//    counts only) into counters cleared before the launch: by a small kernel
//    for segments by offsets (only the straddling and the empty ones), by a
//    memset where every segment straddles (equal segments longer than an
//    item, tiles of several bands; the output is then small beside the input).
// A block takes a contiguous range of items, so that consecutive items of one
// long segment or one tile are counted into the same shared histogram and
// written out once, when the block leaves that segment, instead of once per
// item (tiles of several bands: a block takes bands of one tile column, and
// neighbouring blocks the neighbouring columns, so that the reads in flight
// are whole rows of the image). Samples are read with 16-byte loads where the pointer allows and
// mapped to slots by the exact bin maps of general_common.cuh. 8-bit equal
// segments of whole vectors and 8-bit segments by offsets load an item's
// 16 KiB at once (four vectors a thread; for offsets also the bounds of the
// item's first 256 segments, into shared memory) and count it segment by
// segment from registers: a small segment read alone kept one load a thread
// in flight while its block waited, and its offsets were two dependent loads
// before that.
//
// Register spills (ptxas, CUDA 13.0, sm_90), the reason the three new-shape
// kernels are built without -warn-spills (CMakeLists.txt): none here
// (ByteColumns at 80 registers, three blocks an SM; at 64, with the next
// item's loads in flight, it spilled 380-390 bytes, and at 48 without them
// 20); gpu_joint.cu 4 to 138 bytes in 33 of its 122 kernels (none in its
// eight byte-pairs kernels), 2-D ones among them held at 64 registers
// by their 1024-thread blocks (24 in the f32 even-bins one, weighed on a device:
// docs/PERFORMANCE-shapes.md, N-d changes 4-6; the most in the 8/16-bit
// even-bins ones, which map 8 or 16 points a load; not measured);
// gpu_weighted_exact.cu 4 to 44 bytes in 12 instantiations, as its model
// gpu_weighted_shared spills (weighted_shared.cuh says what those are).
//
// Device offsets must be non-decreasing (the host path checks them): an item
// finds its first segment by binary search. Offsets that are not get
// unspecified counts, but every read stays inside the input and every write
// inside the output (offsets are clamped to n).
#include <algorithm>
#include <cub/block/block_scan.cuh>
#include <string>
#include <type_traits>

#include "core/env_knob.hpp"
#include "core/strategies.hpp"
#include "cuda/general_common.cuh"

namespace levelhist::cuda_detail::segments {
namespace {

using namespace general;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr std::uint64_t kChunkBytes = 16 * 1024;  // samples per work item, in bytes

__device__ __forceinline__ std::uint64_t min(std::uint64_t a, std::uint64_t b) { return a < b ? a : b; }
__device__ __forceinline__ std::uint64_t max(std::uint64_t a, std::uint64_t b) { return a > b ? a : b; }

enum class Kind : std::uint8_t { equal_owned, equal_vectors, equal_split, offsets, offsets_vectors, tiles };
// equal_vectors: equal_owned where every segment is whole 16-byte vectors of
// at least kMinSegmentVectors (8-bit samples): an item's loads go out at once.
// offsets_vectors: offsets over 8-bit samples at a 16-byte boundary: an item's
// loads and its first kOffsetWindow segments' offsets go out at once.
constexpr std::uint32_t kMinSegmentVectors = 16;
constexpr int kItemVectorsPerThread = static_cast<int>(kChunkBytes / 16 / kThreads);
static_assert(kChunkBytes / 16 == kItemVectorsPerThread * kThreads);
constexpr std::uint32_t kOffsetWindow = kThreads;  // segments whose bounds an item reads at once

struct Work {
  const unsigned char* samples;
  std::uint64_t n;              // samples (tiles: width * height)
  Kind kind;
  std::uint64_t items;
  std::uint64_t chunk;          // samples per item (equal_owned: a multiple of the length)
  std::uint64_t segments;
  std::uint64_t length;         // equal segments
  std::uint64_t parts;          // equal_split: items per segment
  const std::uint64_t* offsets;
  // tiles
  std::uint64_t width, height, pitch, tile_width, tile_height, rows_per_band, bands;
  std::uint32_t tile_cols;
  // Tiles of several bands: 0, or the blocks per tile column (the grid is
  // column_groups x tile_cols blocks; block b counts tile column b % tile_cols).
  std::uint32_t column_groups;
  bool band_offsets_fit;  // a band's rows_per_band rows span less than 2^32 bytes (32-bit offsets in a band)
  std::uint64_t* out;
  std::uint32_t slots;
  std::uint32_t copies;  // WarpCopies: histogram copies in shared memory (a power of two <= kWarps)
  bool injective;        // ByteColumns: 256 bins of one byte value each (slot = value's own, no flows)
  bool accumulate;
  // ByteColumns: the next item's loads issued before this one is counted and
  // written out (equal segments of whole vectors, parts of long segments,
  // bands of tiles); the study knob LEVELHIST_SEGMENT_PIPELINE=0 turns it off.
  bool pipeline;
  // Segments by offsets a warp at a time: the workspace's list of the segments
  // too long for one warp ([0] appended, [1] blocks finished, then segment
  // numbers; zero on entry and on return), or nullptr.
  std::uint64_t* long_list;
  std::uint64_t long_capacity;  // entries the list holds
};
constexpr std::uint64_t kLongListHead = 2;

// ---- the counters -------------------------------------------------------------------
// A block's shared histogram of the segment it is counting. Each layout gives
// init (clears it and loads the map's tables), count_sample and count_vector
// (one sample, one 16-byte load of samples) and flush (writes the counts of a
// segment or tile out; the next one counts from zero).

// One copy of the slots per warp, any sample type.
template <class T, class Map>
struct WarpCopies {
  static constexpr int kMinBlocks = 1;
  static constexpr int kUnroll = 1;  // 16-byte loads in flight per thread
  static constexpr bool kItemInRegisters = false;  // takes Kind::equal_vectors
  unsigned* hist;                    // copies x slots
  unsigned* mine;                    // this warp's copy

  __host__ __device__ static std::size_t counter_bytes(const Work& w) {
    return round_up(std::size_t{w.slots} * w.copies * 4, 16);
  }

  __device__ __forceinline__ void init(unsigned char* smem, const Work& w, Map& map) {
    hist = reinterpret_cast<unsigned*>(smem);
    for (std::uint32_t i = threadIdx.x; i < w.slots * w.copies; i += blockDim.x) hist[i] = 0;
    map.setup(smem + counter_bytes(w));
    __syncthreads();
    mine = hist + ((threadIdx.x / 32) & (w.copies - 1)) * w.slots;
  }
  __device__ __forceinline__ void count_sample(T x, const Map& map) { atomicAdd(mine + map(x), 1u); }
  // Runs of equal slots among the vector's samples are added at once.
  __device__ __forceinline__ void count_vector(uint4 v, const Map& map) {
    constexpr int K = kPerVector<T>;
    T x[K];
    unpack(v, x);
    std::uint32_t run_slot = map(x[0]);
    unsigned run = 1;
#pragma unroll
    for (int k = 1; k < K; ++k) {
      const std::uint32_t s = map(x[k]);
      if (s == run_slot) {
        ++run;
      } else {
        atomicAdd(mine + run_slot, run);
        run_slot = s;
        run = 1;
      }
    }
    atomicAdd(mine + run_slot, run);
  }
  // Writes the block's counts of one segment or tile to `out` (stored when the
  // block owns it, else added) and clears them for the next.
  __device__ __forceinline__ void flush(const Work& w, std::uint64_t* out, bool owned) {
    __syncthreads();
    for (std::uint32_t s = threadIdx.x; s < w.slots; s += blockDim.x) {
      unsigned v = 0;
      for (std::uint32_t c = 0; c < w.copies; ++c) {
        v += hist[c * w.slots + s];
        hist[c * w.slots + s] = 0;
      }
      if (owned) out[s] = (w.accumulate ? out[s] : 0) + v;
      else add_to_slot(out + s, v);
    }
    __syncthreads();
  }
};

// 8-bit samples: 32 lane columns per byte value, h[value][lane] (gpu_lane_columns'
// layout, 32 KiB), then the slots' sums of one flush where several values
// share a slot (w.injective false).
template <class T, class Map>
struct ByteColumns {
  static_assert(sizeof(T) == 1);
  static_assert(kThreads == 256, "thread b sums the row of byte value b");
  static constexpr std::uint32_t kColumnBytes = 256 * 32 * 4;
  // 33-34 KiB of shared memory a block: six would fit an SM, but at their 40
  // registers a thread the kernel spilled 16-28 bytes; at five (48) the
  // per-value map spilled 20; four (64 registers, none spilled) measured 2%
  // faster from 1 MiB segments up than five on an H200, 1% slower with
  // offsets and tiles (two runs; docs/BENCHMARKS.md). Three (80 registers)
  // since the next item's loads are issued before this one is counted
  // (Work::pipeline): at 64 the kernel spilled 380-390 bytes.
  static constexpr int kMinBlocks = 3;
  static constexpr int kUnroll = 4;
  static constexpr bool kItemInRegisters = true;
  unsigned char* columns;
  unsigned* slot_sums;
  std::uint64_t* window;  // offsets_vectors: bounds of an item's first kOffsetWindow segments
  std::uint32_t my_slot;    // the slot of byte value threadIdx.x
  unsigned int lane_offset;  // this lane's column, in bytes
  unsigned int flushed = 0;  // the sum of value threadIdx.x's columns at the last flush

  __host__ __device__ static std::size_t slot_sum_bytes(const Work& w) {
    return w.injective ? 0 : round_up(std::size_t{w.slots} * 4, 16);
  }
  // (In dynamic shared memory: a kernel's static shared memory is held to
  // kStaticSharedReserve, general_common.cuh.)
  __host__ __device__ static std::size_t window_bytes(const Work& w) {
    return w.kind == Kind::offsets_vectors ? round_up(std::size_t{kOffsetWindow + 1} * 8, 16) : 0;
  }
  __host__ __device__ static std::size_t counter_bytes(const Work& w) {
    return kColumnBytes + slot_sum_bytes(w) + window_bytes(w);
  }

  __device__ __forceinline__ void init(unsigned char* smem, const Work& w, Map& map) {
    columns = smem;
    slot_sums = reinterpret_cast<unsigned*>(smem + kColumnBytes);
    window = reinterpret_cast<std::uint64_t*>(smem + kColumnBytes + slot_sum_bytes(w));
    const auto bytes = static_cast<std::uint32_t>(counter_bytes(w));
    for (std::uint32_t i = threadIdx.x; i < bytes / 16; i += blockDim.x)
      reinterpret_cast<uint4*>(smem)[i] = make_uint4(0, 0, 0, 0);
    map.setup(smem + bytes);
    __syncthreads();
    my_slot = map(static_cast<T>(static_cast<unsigned char>(threadIdx.x)));
    lane_offset = (threadIdx.x & 31) * 4;
  }
  __device__ __forceinline__ void count_at(unsigned offset) {
    atomicAdd(reinterpret_cast<unsigned*>(columns + offset), 1u);
  }
  __device__ __forceinline__ void count_sample(T x, const Map&) {
    count_at(static_cast<unsigned>(static_cast<unsigned char>(x)) << 7 | lane_offset);
  }
  __device__ __forceinline__ void count_word(unsigned w) {
    count_at(((w << 7) & 0x7f80) | lane_offset);
    count_at(((w >> 1) & 0x7f80) | lane_offset);
    count_at(((w >> 9) & 0x7f80) | lane_offset);
    count_at(((w >> 17) & 0x7f80) | lane_offset);
  }
  __device__ __forceinline__ void count_vector(uint4 v, const Map&) {
    count_word(v.x);
    count_word(v.y);
    count_word(v.z);
    count_word(v.w);
  }
  // Bytes from .. to - 1 of the vector (a segment's bound lies inside it).
  __device__ __forceinline__ void count_vector_part(uint4 v, unsigned from, unsigned to) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (unsigned k = 0; k < 16; ++k)
      if (k >= from && k < to) count_at(((words[k / 4] >> (k % 4) * 8) & 0xFFu) << 7 | lane_offset);
  }
  // Thread b sums value b's 32 columns (eight 16-byte loads, staggered as in
  // gpu_lane_columns' add_row). The columns are never cleared: the segment's
  // count is the row's sum less the sum at the previous flush, which thread b
  // keeps (clearing took as much shared-memory traffic as the reading). Exact
  // modulo 2^32 as long as a value's count between two flushes is below 2^32:
  // a block's range of items holds at most n / its grid's blocks + one item of
  // samples (below 2^32 for n up to 2^40 with the hundreds of blocks a GPU keeps).
  __device__ __forceinline__ void flush(const Work& w, std::uint64_t* out, bool owned) {
    __syncthreads();
    const uint4* row = reinterpret_cast<const uint4*>(columns + threadIdx.x * 128);
    unsigned total = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const uint4 v = row[(c + threadIdx.x) & 7];
      total += v.x + v.y + v.z + v.w;
    }
    const unsigned sum = total - flushed;
    flushed = total;
    if (w.injective) {  // 256 bins, one value each: thread b owns slot my_slot; the flow slots stay empty
      if (owned) {
        out[my_slot] = (w.accumulate ? out[my_slot] : 0) + sum;
        if (!w.accumulate && threadIdx.x < 3) out[256 + threadIdx.x] = 0;
      } else {
        add_to_slot(out + my_slot, sum);
      }
      __syncthreads();
      return;
    }
    if (sum) atomicAdd(slot_sums + my_slot, sum);
    __syncthreads();
    for (std::uint32_t s = threadIdx.x; s < w.slots; s += blockDim.x) {
      const unsigned v = slot_sums[s];
      slot_sums[s] = 0;
      if (owned) out[s] = (w.accumulate ? out[s] : 0) + v;
      else add_to_slot(out + s, v);
    }
    __syncthreads();
  }
};

// ---- reading a segment's samples ------------------------------------------------------

// Vectors 0 .. vectors - 1, vector j loaded by load(j), Counters::kUnroll
// loads in flight per thread. (j is passed in 64 bits so that a step's loads
// are one address plus constant offsets.)
template <class Map, class Counters, class Load>
__device__ __forceinline__ void count_loaded(Counters& c, std::uint32_t vectors, const Load& load, const Map& map) {
  constexpr int U = Counters::kUnroll;
  std::uint32_t v = threadIdx.x;
  for (; v + (U - 1) * kThreads < vectors; v += U * kThreads) {  // whole steps: no guard per vector
    uint4 q[U];
#pragma unroll
    for (int u = 0; u < U; ++u) q[u] = load(std::uint64_t{v} + u * kThreads);
#pragma unroll
    for (int u = 0; u < U; ++u) c.count_vector(q[u], map);
  }
  for (; v < vectors; v += kThreads) c.count_vector(load(std::uint64_t{v}), map);
}

// j / d for j and d below 2^13, given 1.0f / d: in float arithmetic, exact in
// that range (checked for every pair; IEEE rounding of the reciprocal and the
// product), 5 instructions where an integer division by a run-time divisor
// takes ~20.
__device__ __forceinline__ std::uint32_t small_quotient(std::uint32_t j, float reciprocal) {
  return static_cast<std::uint32_t>(__fmul_rn(__fadd_rn(static_cast<float>(j), 0.5f), reciprocal));
}

// Counts `count` samples of T at p.
template <class T, class Map, class Counters>
__device__ __forceinline__ void count_range(Counters& c, const unsigned char* p, std::uint64_t count, const Map& map) {
  if (reinterpret_cast<std::uintptr_t>(p) % sizeof(T) != 0) {
    for (std::uint64_t i = threadIdx.x; i < count; i += blockDim.x) c.count_sample(load_unaligned<T>(p + i * sizeof(T)), map);
    return;
  }
  const Split16 sp = split16<T>(p, count);
  const T* xs = reinterpret_cast<const T*>(p);
  if (threadIdx.x < sp.head) c.count_sample(xs[threadIdx.x], map);
  for (std::uint64_t i = sp.tail + threadIdx.x; i < count; i += blockDim.x) c.count_sample(xs[i], map);
  const uint4* body = reinterpret_cast<const uint4*>(p + sp.head * sizeof(T));
  constexpr std::uint64_t kMostVectors = std::uint64_t{1} << 31;  // 32-bit indices in count_loaded (a tile's row may be longer)
  for (std::uint64_t done = 0; done < sp.vectors; done += kMostVectors) {
    const uint4* part = body + done;
    count_loaded(c, static_cast<std::uint32_t>(min(kMostVectors, sp.vectors - done)),
                 [part](std::uint64_t j) { return __ldcs(part + j); }, map);
  }
}

// A band read as one range of vectors: at most 2^13 of them (small_quotient).
constexpr std::uint64_t kMostBandBytes = std::uint64_t{16} << 13;

// `rows` rows of `count` samples, `pitch` bytes apart (a band of a tile). When
// every row starts at the same offset from a 16-byte boundary, the block's
// threads take the band's vectors as one range (a tile 2048 bytes wide is 128
// vectors a row: row by row, half of 256 threads would wait); otherwise row by row.
template <class T, class Map, class Counters>
__device__ __forceinline__ void count_rows(Counters& c, const unsigned char* p, std::uint64_t count, std::uint64_t rows,
                                           std::uint64_t pitch, const Map& map) {
  if (rows == 1 || pitch % 16 != 0 || reinterpret_cast<std::uintptr_t>(p) % sizeof(T) != 0 ||
      rows * count * sizeof(T) > kMostBandBytes) {
    for (std::uint64_t r = 0; r < rows; ++r) count_range<T>(c, p + r * pitch, count, map);
    return;
  }
  const Split16 sp = split16<T>(p, count);  // the same in every row
  const auto per_row = static_cast<std::uint32_t>(sp.vectors);
  const auto edge = static_cast<std::uint32_t>(sp.head + (count - sp.tail));  // samples of a row outside its vectors
  const auto n_rows = static_cast<std::uint32_t>(rows);
  for (std::uint32_t i = threadIdx.x; i < n_rows * edge; i += blockDim.x) {
    const std::uint32_t r = i / edge, k = i % edge;
    const std::uint64_t at = k < sp.head ? k : sp.tail + (k - sp.head);
    c.count_sample(reinterpret_cast<const T*>(p + r * pitch)[at], map);
  }
  if (per_row == 0) return;
  const unsigned char* body = p + sp.head * sizeof(T);
  const float reciprocal = 1.0f / static_cast<float>(per_row);  // vector j is in row j / per_row
  count_loaded(c, n_rows * per_row, [&](std::uint64_t wide) {
    const auto j = static_cast<std::uint32_t>(wide);
    const std::uint32_t r = small_quotient(j, reciprocal);
    return __ldcs(reinterpret_cast<const uint4*>(body + std::uint64_t{r} * pitch) + (j - r * per_row));
  }, map);
}

// ---- an item in registers, the next one's loads in flight ---------------------------
// (ByteColumns.) A block's items are counted one after another; each was a
// step of four 16-byte loads a thread, then the counting and, where a
// segment or tile ended, the flush's barriers, with no load of the block in
// flight meanwhile. With the next item's loads issued first, they arrive
// while this one is counted and written out.

// An item's samples as whole 16-byte vectors at a 16-byte boundary: `vectors`
// of them from `first` (at most one item's), or none where they are not.
struct ItemVectors {
  const uint4* first;
  std::uint32_t vectors;
};
__device__ __forceinline__ ItemVectors item_vectors(const unsigned char* p, std::uint64_t bytes) {
  if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(p) % 16 != 0 || bytes > kChunkBytes) return {nullptr, 0};
  return {reinterpret_cast<const uint4*>(p), static_cast<std::uint32_t>(bytes / 16)};
}

// This thread's vectors of the item: vector j = threadIdx.x + u * kThreads into q[u].
__device__ __forceinline__ void load_item(const ItemVectors& v, uint4 (&q)[kItemVectorsPerThread]) {
#pragma unroll
  for (int u = 0; u < kItemVectorsPerThread; ++u)
    if (threadIdx.x + u * kThreads < v.vectors) q[u] = __ldcs(v.first + threadIdx.x + u * kThreads);
}

template <class Map, class Counters>
__device__ __forceinline__ void count_item(Counters& c, const ItemVectors& v, const uint4 (&q)[kItemVectorsPerThread],
                                           const Map& map) {
#pragma unroll
  for (int u = 0; u < kItemVectorsPerThread; ++u)
    if (threadIdx.x + u * kThreads < v.vectors) c.count_vector(q[u], map);
}

// The bounds of segment s by offsets, clamped to [0, n].
__device__ __forceinline__ void offset_bounds(const Work& w, std::uint64_t s, std::uint64_t& begin, std::uint64_t& end) {
  begin = min(w.offsets[s], w.n);
  end = max(begin, min(w.offsets[s + 1], w.n));
}

// The first segment that ends after sample c (binary search: offsets are non-decreasing).
__device__ __forceinline__ std::uint64_t first_segment_after(const Work& w, std::uint64_t c) {
  std::uint64_t lo = 0, hi = w.segments;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (min(w.offsets[mid + 1], w.n) > c) hi = mid; else lo = mid + 1;
  }
  return lo;
}

template <class T, class Map, class Counters>
__global__ void __launch_bounds__(kThreads, Counters::kMinBlocks) batch_kernel(Work w, Map map) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ std::uint64_t first_segment;
  Counters c;
  c.init(smem, w, map);
  // A contiguous range of items: the items of one long segment or tile follow
  // each other, and the block writes that segment's counts when it leaves it.
  // Where an item is a part of a segment or a band of a tile, the block steps
  // through them by counters instead of dividing the item's number: a 64-bit
  // division is ~100 instructions a thread, and a band of a tile took five,
  // more than the counting of its 16 KiB (256 instructions a thread).
  const std::uint64_t item_begin = w.items * blockIdx.x / gridDim.x, item_end = w.items * (blockIdx.x + 1) / gridDim.x;
  if (item_begin >= item_end && w.column_groups == 0) return;
  switch (w.kind) {
    case Kind::equal_owned: {  // whole segments, w.chunk / w.length of them per item
      const std::uint64_t per_item = w.chunk / w.length;
      const std::uint64_t last = min(w.segments, item_end * per_item);
      for (std::uint64_t s = item_begin * per_item; s < last; ++s) {
        count_range<T>(c, w.samples + s * w.length * sizeof(T), w.length, map);
        c.flush(w, w.out + s * w.slots, true);
      }
      break;
    }
    case Kind::equal_vectors:  // whole vectors a segment: the item's vectors in registers, then segment by segment
      if constexpr (Counters::kItemInRegisters) {
        const std::uint64_t per_item = w.chunk / w.length;
        const auto per_segment = static_cast<std::uint32_t>(w.length * sizeof(T) / 16);  // 16 to 1024
        const float reciprocal = 1.0f / static_cast<float>(per_segment);
        // An item's vectors in registers, counted and written out segment by segment.
        auto count_segments = [&](const uint4 (&q)[kItemVectorsPerThread], std::uint64_t s0, std::uint32_t segments) {
          const std::uint32_t vectors = segments * per_segment;
          std::uint32_t segment_of[kItemVectorsPerThread];
#pragma unroll
          for (int u = 0; u < kItemVectorsPerThread; ++u) {
            const std::uint32_t j = threadIdx.x + u * kThreads;
            segment_of[u] = j < vectors ? small_quotient(j, reciprocal) : ~0u;
          }
          for (std::uint32_t k = 0; k < segments; ++k) {
#pragma unroll
            for (int u = 0; u < kItemVectorsPerThread; ++u)
              if (segment_of[u] == k) c.count_vector(q[u], map);
            c.flush(w, w.out + (s0 + k) * w.slots, true);
          }
        };
        if (w.pipeline) {
          // The item's segments are one range of whole vectors.
          auto vectors_of = [&](std::uint64_t item) {
            const std::uint64_t s0 = item * per_item;
            const auto segments = static_cast<std::uint32_t>(min(per_item, w.segments - s0));
            return ItemVectors{reinterpret_cast<const uint4*>(w.samples + s0 * w.length * sizeof(T)),
                               segments * per_segment};
          };
          uint4 next[kItemVectorsPerThread];
          if (item_begin < item_end) load_item(vectors_of(item_begin), next);
          for (std::uint64_t item = item_begin; item < item_end; ++item) {
            uint4 q[kItemVectorsPerThread];
#pragma unroll
            for (int u = 0; u < kItemVectorsPerThread; ++u) q[u] = next[u];
            if (item + 1 < item_end) load_item(vectors_of(item + 1), next);
            const std::uint64_t s0 = item * per_item;
            count_segments(q, s0, static_cast<std::uint32_t>(min(per_item, w.segments - s0)));
          }
          break;
        }
        for (std::uint64_t item = item_begin; item < item_end; ++item) {
          const std::uint64_t s0 = item * per_item;
          const auto segments = static_cast<std::uint32_t>(min(per_item, w.segments - s0));
          const uint4* body = reinterpret_cast<const uint4*>(w.samples + s0 * w.length * sizeof(T));
          uint4 q[kItemVectorsPerThread];
#pragma unroll
          for (int u = 0; u < kItemVectorsPerThread; ++u)
            if (threadIdx.x + u * kThreads < segments * per_segment) q[u] = __ldcs(body + threadIdx.x + u * kThreads);
          count_segments(q, s0, segments);
        }
      }
      break;
    case Kind::equal_split: {  // item = part `part` of segment `s` (a part count fits 32 bits: 2^32 items is 64 TiB)
      std::uint64_t s = item_begin / w.parts;
      auto part = static_cast<std::uint32_t>(item_begin % w.parts);
      if constexpr (Counters::kItemInRegisters) {
        if (w.pipeline) {
          // A part of whole vectors at a 16-byte boundary has its loads
          // issued while the part before it is counted; any other is counted
          // as before, after the loads of the one ahead of it.
          struct Part {
            const unsigned char* p;
            std::uint64_t count;
          };
          auto part_at = [&](std::uint64_t seg, std::uint32_t k) {
            const std::uint64_t begin = k * w.chunk;
            return Part{w.samples + (seg * w.length + begin) * sizeof(T), min(w.length, begin + w.chunk) - begin};
          };
          Part ahead = part_at(s, part);
          ItemVectors ahead_vectors = item_vectors(ahead.p, ahead.count * sizeof(T));
          uint4 next[kItemVectorsPerThread];
          if (item_begin < item_end) load_item(ahead_vectors, next);
          for (std::uint64_t left = item_end - item_begin; left > 0; --left) {
            uint4 q[kItemVectorsPerThread];
#pragma unroll
            for (int u = 0; u < kItemVectorsPerThread; ++u) q[u] = next[u];
            const Part now = ahead;
            const ItemVectors now_vectors = ahead_vectors;
            const std::uint64_t now_segment = s;
            const bool flush = left == 1 || part + 1 == w.parts;
            if (++part == w.parts) {
              part = 0;
              ++s;
            }
            if (left > 1) {
              ahead = part_at(s, part);
              ahead_vectors = item_vectors(ahead.p, ahead.count * sizeof(T));
              load_item(ahead_vectors, next);
            }
            if (now_vectors.vectors) count_item(c, now_vectors, q, map);
            else count_range<T>(c, now.p, now.count, map);
            if (flush) c.flush(w, w.out + now_segment * w.slots, false);
          }
          break;
        }
      }
      for (std::uint64_t left = item_end - item_begin; left > 0; --left) {
        const std::uint64_t begin = part * w.chunk, end = min(w.length, begin + w.chunk);
        count_range<T>(c, w.samples + (s * w.length + begin) * sizeof(T), end - begin, map);
        if (left == 1 || part + 1 == w.parts) c.flush(w, w.out + s * w.slots, false);
        if (++part == w.parts) {
          part = 0;
          ++s;
        }
      }
      break;
    }
    case Kind::offsets:
      for (std::uint64_t item = item_begin; item < item_end; ++item) {
        const std::uint64_t c0 = item * w.chunk, c1 = min(w.n, c0 + w.chunk);
        if (threadIdx.x == 0) first_segment = first_segment_after(w, c0);
        __syncthreads();
        for (std::uint64_t s = first_segment; s < w.segments; ++s) {
          std::uint64_t begin, end;
          offset_bounds(w, s, begin, end);
          if (begin >= c1) break;
          const std::uint64_t a = max(begin, c0), b = min(end, c1);
          if (b <= a) continue;  // empty: cleared before the launch, or kept (or, offsets out of order, not here)
          const bool owned = begin >= c0 && end <= c1;  // whole in this item (clear_unowned's test, without its divisions)
          count_range<T>(c, w.samples + a * sizeof(T), b - a, map);
          c.flush(w, w.out + s * w.slots, owned);
        }
        __syncthreads();  // first_segment is read by every thread before the next item sets it
      }
      break;
    case Kind::offsets_vectors:  // the item's vectors in registers and its segments' bounds in shared memory
      if constexpr (Counters::kItemInRegisters) {
        std::uint64_t* window = c.window;  // bounds of segments first .. first + kOffsetWindow - 1
        // The first segment of the block's first item by binary search (every
        // thread alike: no barrier), of the next items from the segment loop.
        std::uint64_t first = first_segment_after(w, item_begin * w.chunk);
        for (std::uint64_t item = item_begin; item < item_end; ++item) {
          const std::uint64_t c0 = item * w.chunk, c1 = min(w.n, c0 + w.chunk);
          const auto samples = static_cast<std::uint32_t>(c1 - c0), vectors = samples / 16;
          const uint4* body = reinterpret_cast<const uint4*>(w.samples + c0);
          uint4 q[kItemVectorsPerThread];
#pragma unroll
          for (int u = 0; u < kItemVectorsPerThread; ++u)
            if (threadIdx.x + u * kThreads < vectors) q[u] = __ldcs(body + threadIdx.x + u * kThreads);
          __syncthreads();  // the last item's window is read
          for (std::uint32_t k = threadIdx.x; k <= kOffsetWindow; k += kThreads)
            if (first + k <= w.segments) window[k] = min(w.offsets[first + k], w.n);
          __syncthreads();
          std::uint64_t next = w.segments;  // the first segment that ends after c1: the next item's first
          for (std::uint64_t s = first; s < w.segments; ++s) {
            std::uint64_t begin, end;
            if (s - first < kOffsetWindow) {
              begin = window[s - first];
              end = max(begin, window[s - first + 1]);
            } else {
              offset_bounds(w, s, begin, end);
            }
            if (begin >= c1) {
              next = min(next, s);
              break;
            }
            if (end > c1) next = min(next, s);
            const std::uint64_t a = max(begin, c0), b = min(end, c1);
            if (b <= a) continue;
            const bool owned = begin >= c0 && end <= c1;
            const auto from = static_cast<std::uint32_t>(a - c0), to = static_cast<std::uint32_t>(b - c0);
#pragma unroll
            for (int u = 0; u < kItemVectorsPerThread; ++u) {
              const std::uint32_t lo = (threadIdx.x + u * kThreads) * 16;
              if (lo >= vectors * 16 || lo >= to || lo + 16 <= from) continue;
              if (lo >= from && lo + 16 <= to) c.count_vector(q[u], map);
              else c.count_vector_part(q[u], from > lo ? from - lo : 0, to - lo < 16 ? to - lo : 16);
            }
            for (std::uint32_t i = max(from, vectors * 16) + threadIdx.x; i < to; i += kThreads)  // the input's last bytes
              c.count_sample(static_cast<T>(w.samples[c0 + i]), map);
            c.flush(w, w.out + s * w.slots, owned);
          }
          first = next;
        }
      }
      break;
    case Kind::tiles: {  // item = band `band` of tile `tile` (row `tile_row`, column `tile_col` of the grid)
      // (band < bands <= tile_height, tile_row <= height, tile_col < tile_cols: 32 bits each)
      std::uint64_t tile, count;
      std::uint32_t band, tile_row, tile_col;
      if (w.column_groups == 0) {  // items in the order tile by tile, band by band
        tile = item_begin / w.bands;
        band = static_cast<std::uint32_t>(item_begin % w.bands);
        tile_row = static_cast<std::uint32_t>(tile / w.tile_cols);
        tile_col = static_cast<std::uint32_t>(tile % w.tile_cols);
        count = item_end - item_begin;
      } else {
        // One tile column a block, the column's bands (tile row by tile row)
        // shared among column_groups blocks. Blocks b and b + 1 read the same
        // rows of neighbouring tiles at about the same time, so the grid's
        // reads in flight are whole image rows, not pieces of a tile's width
        // (2 KiB of 16 KiB rows for 8 x 8 tiles of a 16384^2 image).
        tile_col = blockIdx.x % w.tile_cols;
        const std::uint32_t group = blockIdx.x / w.tile_cols;
        const std::uint64_t per_column = w.items / w.tile_cols;  // tile_rows * bands
        const std::uint64_t first = per_column * group / w.column_groups;
        count = per_column * (group + 1) / w.column_groups - first;
        tile_row = static_cast<std::uint32_t>(first / w.bands);
        band = static_cast<std::uint32_t>(first % w.bands);
        tile = std::uint64_t{tile_row} * w.tile_cols + tile_col;
      }
      if constexpr (Counters::kItemInRegisters) {
        // A tile column a block (column_groups), its rows whole vectors at
        // 16-byte boundaries: every band but a tile's last (when the tile's
        // height is not a multiple of the band's) has the same shape, so a
        // thread's vectors are at the same offsets from each band's first
        // row's, found once; the next band's loads go out while this one is
        // counted and written out.
        const std::uint64_t x0 = std::uint64_t{tile_col} * w.tile_width;
        const std::uint64_t width = x0 < w.width ? min(w.width, x0 + w.tile_width) - x0 : 0;
        const std::uint64_t band_bytes = w.rows_per_band * width * sizeof(T);
        if (w.pipeline && w.column_groups != 0 && w.band_offsets_fit && width > 0 &&
            (width * sizeof(T)) % 16 == 0 && band_bytes <= kChunkBytes &&
            reinterpret_cast<std::uintptr_t>(w.samples + x0 * sizeof(T)) % 16 == 0 && w.pitch % 16 == 0) {
          const auto per_row = static_cast<std::uint32_t>(width * sizeof(T) / 16);
          const float reciprocal = __frcp_rn(static_cast<float>(per_row));
          std::uint32_t offset[kItemVectorsPerThread];  // bytes from the band's first vector (w.band_offsets_fit)
#pragma unroll
          for (int u = 0; u < kItemVectorsPerThread; ++u) {
            const std::uint32_t j = threadIdx.x + u * kThreads, r = small_quotient(j, reciprocal);
            offset[u] = static_cast<std::uint32_t>(r * w.pitch) + (j - r * per_row) * 16;
          }
          const unsigned char* column = w.samples + x0 * sizeof(T);
          // The vectors of band `band` of tile row `tile_row`, this thread's into q.
          auto load = [&](std::uint32_t row_of_tiles, std::uint32_t b, uint4 (&q)[kItemVectorsPerThread]) {
            const std::uint64_t r0 = std::uint64_t{row_of_tiles} * w.tile_height + std::uint64_t{b} * w.rows_per_band;
            const std::uint64_t tile_end = min(w.height, (row_of_tiles + std::uint64_t{1}) * w.tile_height);
            // (A tile row past the image's last row, or a band past its tile's, has none.)
            const auto vectors =
                static_cast<std::uint32_t>(r0 < tile_end ? (min(tile_end, r0 + w.rows_per_band) - r0) * per_row : 0);
            const unsigned char* first = column + r0 * w.pitch;
#pragma unroll
            for (int u = 0; u < kItemVectorsPerThread; ++u)
              if (threadIdx.x + u * kThreads < vectors) q[u] = __ldcs(reinterpret_cast<const uint4*>(first + offset[u]));
            return vectors;
          };
          uint4 next[kItemVectorsPerThread];
          std::uint32_t next_vectors = count > 0 ? load(tile_row, band, next) : 0;
          for (std::uint64_t left = count; left > 0; --left) {
            uint4 q[kItemVectorsPerThread];
#pragma unroll
            for (int u = 0; u < kItemVectorsPerThread; ++u) q[u] = next[u];
            const std::uint32_t vectors = next_vectors;
            const std::uint64_t now_tile = tile;
            const bool flush = left == 1 || band + 1 == w.bands;
            if (++band == w.bands) {  // the next tile down the column
              band = 0;
              ++tile_row;
              tile += w.tile_cols;
            }
            if (left > 1) next_vectors = load(tile_row, band, next);
#pragma unroll
            for (int u = 0; u < kItemVectorsPerThread; ++u)
              if (threadIdx.x + u * kThreads < vectors) c.count_vector(q[u], map);
            if (flush) c.flush(w, w.out + now_tile * w.slots, false);
          }
          break;
        }
      }
      for (std::uint64_t left = count; left > 0; --left) {
        const std::uint64_t r0 = tile_row * w.tile_height + band * w.rows_per_band;
        const std::uint64_t tile_end = min(w.height, (tile_row + std::uint64_t{1}) * w.tile_height);
        const std::uint64_t r1 = min(tile_end, r0 + w.rows_per_band);
        const std::uint64_t x0 = tile_col * w.tile_width, x1 = min(w.width, x0 + w.tile_width);
        if (r0 < r1 && x0 < x1) count_rows<T>(c, w.samples + r0 * w.pitch + x0 * sizeof(T), x1 - x0, r1 - r0, w.pitch, map);
        if (w.bands == 1) c.flush(w, w.out + tile * w.slots, true);
        else if (left == 1 || band + 1 == w.bands) c.flush(w, w.out + tile * w.slots, false);
        if (++band == w.bands) {
          band = 0;
          if (w.column_groups != 0) {  // the next tile down the column
            ++tile_row;
            tile += w.tile_cols;
          } else {
            ++tile;
            if (++tile_col == w.tile_cols) {
              tile_col = 0;
              ++tile_row;
            }
          }
        }
      }
      break;
    }
  }
}

// Clears the counters of every segment by offsets that no single item owns
// (it straddles items, or is empty), before a launch that does not accumulate.
// A warp a segment, its lanes storing consecutive counters: with a thread a
// segment, each store of a warp went to 32 rows 2 KB apart, and the clearing
// took 68 us beside the counting's 381 for 256 MiB in segments of 0-8 KiB
// (H200, Nsight Compute; docs/PERFORMANCE-shapes.md).
__global__ void clear_unowned(Work w) {
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t warps = std::uint64_t{gridDim.x} * (blockDim.x / 32);
  for (std::uint64_t s = (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; s < w.segments; s += warps) {
    std::uint64_t begin, end;
    offset_bounds(w, s, begin, end);
    if (end > begin && begin / w.chunk == (end - 1) / w.chunk) continue;
    for (std::uint32_t k = lane; k < w.slots; k += 32) w.out[s * w.slots + k] = 0;
  }
}

// ---- a warp a segment: short segments of bytes --------------------------------
// 8-bit samples into 256 bins of one value each, equal segments or offsets: a
// warp counts whole segments into 8-bit columns of its own, so no segment is
// shared and no counter cleared before the launch. Value v of lane l is byte
// v % 4 of word (v / 4) * 32 + l: a lane touches only its own bank, whatever
// the data. A lane adds at most 15 trips of 16 bytes (and two bytes at the
// segment's unaligned ends) before the warp folds the bytes into 32-bit
// totals, so no byte passes 255. The block's path flushes 32 KiB of lane
// columns per segment; this one reads and clears 8 KiB. Design, arithmetic and
// the variants measured: docs/PERFORMANCE-shapes.md (a warp a segment).
constexpr std::uint32_t kWarpColumnWords = 256 / 4 * 32;  // 8 KiB a warp
constexpr std::uint64_t kWarpFoldTrips = 15;
// Bytes a segment, equal or by offsets on average. Measured on an H200
// against the block's path (with the permuted increment of bump_vector):
// equal 4 KiB segments 1.20x, offsets of 0-8 KiB 2.2x; 16 KiB 0.65-0.66x
// before that increment (this kernel stays near 1.8 TB/s from 4 to 64 KiB,
// where the block's path rises from 1.6 to 3.4). By offsets, the host knows
// only the average length, so a segment longer than kWarpSegmentMost among
// short ones is listed in the workspace and counted by the whole grid
// (long_segments_kernel): one warp alone counted 4.1-4.4 GB/s with half of
// 64 MiB in one segment; listed, 3.4x the block's path (docs/PERFORMANCE-shapes.md,
// a warp a segment). Without a workspace, offsets keep the block's path.
constexpr std::uint64_t kWarpSegmentAuto = 4 * 1024;
// The longest segment a warp counts alone where the list takes longer ones;
// with LEVELHIST_SEGMENT_WARPS=1 (tests, studies), the longest average length
// given to the warps.
constexpr std::uint64_t kWarpSegmentMost = 64 * 1024;

struct WarpColumns {
  unsigned* words;  // this warp's kWarpColumnWords
  unsigned lane;

  // One shared atomic adds 1 to the value's byte of the lane's word: no carry
  // into the next byte, since none passes 255 between folds. A load, add and
  // store of the byte, where each byte's load waits for the store before it
  // (the compiler cannot tell two bytes apart), measured 0.73-0.85x of this
  // (with the loads below issued one by one, so not this alone).
  __device__ __forceinline__ void bump(unsigned v) { atomicAdd(words + ((v >> 2) << 5) + lane, 1u << ((v & 3) << 3)); }
  // Sixteen bytes at once in fewer ALU instructions than sixteen bump()s
  // (the ALU pipe holds this kernel: 81% busy): the masks are taken once a
  // word, a byte's row (v & ~3) is one PRMT, its word's address one IMAD (on
  // the FMA pipe), its increment one funnel shift, which takes the amount
  // modulo 32. Measured on an H200 over sixteen bump()s: 4 KiB segments 1.11x,
  // offsets of 0-8 KiB 1.14x (docs/BENCHMARKS.md). Moving the shift amounts
  // and the top byte's row to the FMA pipe as high products (IMAD.HI by
  // multipliers from the host) measured 0.97-0.99x: not kept.
  __device__ __forceinline__ void bump_vector(const uint4& q) {
    const unsigned x[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned rows = x[k] & 0xfcfcfcfcu;
      const unsigned shifts = (x[k] & 0x03030303u) << 3;  // 8 (v & 3) in each byte
#pragma unroll
      for (int b = 0; b < 4; ++b)
        atomicAdd(words + __byte_perm(rows, 0, 0x4440u | b) * 8 + lane, __funnelshift_l(0u, 1u, shifts >> (8 * b)));
    }
  }
  // Adds the bytes of values 8 * lane .. 8 * lane + 7 to total and clears
  // them: rows 2 * lane and 2 * lane + 1 (four values each, 32 words, one a
  // lane), each read as eight 16-byte pieces in an order rotated by lane, so
  // the eight lanes of a quarter warp read eight different groups of banks.
  __device__ __forceinline__ void fold(unsigned (&total)[8]) {
    __syncwarp();
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      uint4* row = reinterpret_cast<uint4*>(words + (2 * lane + r) * 32);
      unsigned even = 0, odd = 0;  // bytes 0 and 2, 1 and 3 of the 32 words, in 16-bit halves
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const unsigned k = (lane + j) & 7;
        const uint4 q = row[k];
        even += (q.x & 0x00ff00ffu) + (q.y & 0x00ff00ffu) + (q.z & 0x00ff00ffu) + (q.w & 0x00ff00ffu);
        // Bytes 1 and 3 by one PRMT each, where a shift and a mask took two:
        // 4 KiB segments 1.06-1.08x, offsets 1.05x (H200, docs/BENCHMARKS.md).
        odd += __byte_perm(q.x, 0, 0x4341u) + __byte_perm(q.y, 0, 0x4341u) + __byte_perm(q.z, 0, 0x4341u) +
               __byte_perm(q.w, 0, 0x4341u);
        row[k] = make_uint4(0, 0, 0, 0);
      }
      total[4 * r + 0] += even & 0xffffu;
      total[4 * r + 1] += odd & 0xffffu;
      total[4 * r + 2] += even >> 16;
      total[4 * r + 3] += odd >> 16;
    }
    __syncwarp();
  }
  // Stores the totals of values 0..255 (lane l holds 8l .. 8l + 7) as eight
  // 256-byte runs, through the first 256 words (zero after the fold, and
  // cleared again): stored from the registers, each store touched 32 sectors
  // for 8 bytes each.
  __device__ __forceinline__ void store(const unsigned (&total)[8], std::uint64_t* out, bool accumulate) {
    uint4* staged = reinterpret_cast<uint4*>(words) + 2 * lane;
    staged[0] = make_uint4(total[0], total[1], total[2], total[3]);
    staged[1] = make_uint4(total[4], total[5], total[6], total[7]);
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const unsigned v = 32 * i + lane;
      out[v] = (accumulate ? out[v] : 0) + words[v];
    }
    __syncwarp();
    staged[0] = make_uint4(0, 0, 0, 0);
    staged[1] = make_uint4(0, 0, 0, 0);
    __syncwarp();
  }
};

// kRagged: for segments with unaligned edges or a lane's last vectors of a
// fold's stretch short of a trip of four (offsets, most lengths; see
// warp_segments_ragged), no load waits behind another's counting: the edge
// bytes are loaded with the first vectors and counted at the end, and the last
// (at most three) vectors a lane are loaded together, where each waited for
// the one before it. Measured on an H200: offsets of 0-8 KiB 1.05-1.06x, the
// level case 1.04-1.05x; on equal aligned 4 KiB segments, which have neither,
// 0.97-0.98x (its registers, 80 a thread at three blocks an SM, cost the main
// loop), hence two kernels. Loading the next segment's offsets while this
// one is counted measured 0.98x on offsets (and spilled): not taken.
// Registers: the ragged form is held to three blocks an SM (80 a thread);
// the plain one is left to ptxas (minimum 0: 79 registers; a minimum of 1
// made it take 115, two blocks an SM, and of 3 80, 0.97x at 4 KiB).
template <bool kRagged>
__global__ void __launch_bounds__(kThreads, kRagged ? 3 : 0) warp_segments_kernel(Work w) {
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned warp = threadIdx.x / 32;
  WarpColumns c{reinterpret_cast<unsigned*>(smem) + warp * kWarpColumnWords, threadIdx.x % 32};
  for (unsigned i = c.lane; i < kWarpColumnWords / 4; i += 32) reinterpret_cast<uint4*>(c.words)[i] = make_uint4(0, 0, 0, 0);
  __syncwarp();
  const std::uint64_t warps = std::uint64_t{gridDim.x} * kWarps;
  for (std::uint64_t s = std::uint64_t{blockIdx.x} * kWarps + warp; s < w.segments; s += warps) {
    std::uint64_t begin, end;
    if (w.kind == Kind::offsets) {
      offset_bounds(w, s, begin, end);
    } else {
      begin = s * w.length;
      end = min(w.n, begin + w.length);
    }
    const unsigned char* p = w.samples + begin;
    const std::uint64_t count = end - begin;
    if (w.long_list != nullptr && count > kWarpSegmentMost) {
      // Too long for one warp: listed for the grid (long_segments_kernel),
      // its counters cleared here where the call does not accumulate.
      unsigned long long at = 0;
      if (c.lane == 0) at = atomicAdd(reinterpret_cast<unsigned long long*>(w.long_list), 1ull);
      at = __shfl_sync(0xffffffffu, at, 0);
      if (at < w.long_capacity) {
        if (c.lane == 0) w.long_list[kLongListHead + at] = s;
        std::uint64_t* out = w.out + s * w.slots;
        if (!w.accumulate)
          for (unsigned k = c.lane; k < w.slots; k += 32) out[k] = 0;
        continue;
      }
      // The list is full (offsets out of order may overlap): counted here.
    }
    const std::uint64_t head = min((16 - (reinterpret_cast<std::uintptr_t>(p) & 15)) & 15, count);
    const std::uint64_t vectors = (count - head) / 16, tail = head + vectors * 16;
    unsigned total[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    // At most 15 bytes before the first vector and 15 after the last.
    const bool has_head = c.lane < head, has_tail = tail + c.lane < count;
    unsigned head_byte = 0, tail_byte = 0;
    if constexpr (kRagged) {
      if (has_head) head_byte = p[c.lane];
      if (has_tail) tail_byte = p[tail + c.lane];
    } else {
      if (has_head) c.bump(p[c.lane]);
      if (has_tail) c.bump(p[tail + c.lane]);
    }
    const uint4* body = reinterpret_cast<const uint4*>(p + head);
    for (std::uint64_t v0 = 0; v0 < vectors; v0 += 32 * kWarpFoldTrips) {
      const std::uint64_t stop = min(vectors, v0 + 32 * kWarpFoldTrips);
      // Four loads a lane, the next four issued before these are counted
      // (written as four loads then four counts, ptxas issued each load just
      // before its vector's counting: sm_90 SASS).
      std::uint64_t j = for_each_vector_early<4>(
          v0 + c.lane, 32, stop, [&](std::uint64_t k) { return __ldcs(body + k); },
          [&](const uint4& q, std::uint64_t) { c.bump_vector(q); });
      if constexpr (kRagged) {
        uint4 rest[3];  // fewer than four left a lane: loaded together, then counted
#pragma unroll
        for (int u = 0; u < 3; ++u)
          if (j + 32 * u < stop) rest[u] = __ldcs(body + j + 32 * u);
#pragma unroll
        for (int u = 0; u < 3; ++u)
          if (j + 32 * u < stop) c.bump_vector(rest[u]);
      } else {
        for (; j < stop; j += 32) c.bump_vector(__ldcs(body + j));
      }
      if (stop < vectors) c.fold(total);
    }
    if constexpr (kRagged) {
      // Counted since the last fold: at most 15 trips and these two bytes a lane, as in the other kernel.
      if (has_head) c.bump(head_byte);
      if (has_tail) c.bump(tail_byte);
    }
    c.fold(total);
    std::uint64_t* out = w.out + s * w.slots;
    c.store(total, out, w.accumulate);
    if (c.lane < 3) out[256 + c.lane] = w.accumulate ? out[256 + c.lane] : 0;  // no flows: every byte has its bin
  }
}

// The longest typical segment (bytes) that a warp counts alone:
// LEVELHIST_SEGMENT_WARPS=0 never, =1 up to kWarpSegmentMost, else the
// measured rule: equal segments, and segments by offsets where the workspace
// holds the list of the long ones.
std::uint64_t warp_segment_most(bool by_offsets, bool long_list) {
  switch (::levelhist::detail::env_knob("LEVELHIST_SEGMENT_WARPS", 2, 0, 2)) {
    case 0: return 0;
    case 1: return kWarpSegmentMost;
    default: return by_offsets && !long_list ? 0 : kWarpSegmentAuto;
  }
}

// The segments by offsets that the warp kernel listed as too long for one
// warp, counted by the whole grid in 16 KiB chunks: a tile of list entries
// at a time, each block scans the tile's chunk counts and takes every
// grid-th chunk, adding its counts to the segment's counters (cleared by the
// warp kernel) when it leaves the segment. The last block to finish clears
// the list, so the workspace is zero again on return.
// Its dynamic shared memory: the counters and the map's table, then the tile
// (kLongTileBytes: the tile's segment numbers and first chunks), which would
// not fit in the static reserve.
constexpr std::size_t kLongTileBytes = 2 * kThreads * sizeof(std::uint64_t);
template <class Counters, class Map>
std::size_t long_segments_shared_bytes(const Work& w, const Map& map) {
  return round_up(Counters::counter_bytes(w) + map.table_bytes(), 16) + kLongTileBytes;
}

template <class T, class Map, class Counters>
__global__ void __launch_bounds__(kThreads) long_segments_kernel(Work w, Map map, std::size_t tile_at) {
  using BlockScan = cub::BlockScan<std::uint64_t, kThreads, cub::BLOCK_SCAN_WARP_SCANS>;  // a small TempStorage
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ typename BlockScan::TempStorage scan;
  auto* listed = reinterpret_cast<std::uint64_t*>(smem + tile_at);
  std::uint64_t* first_chunk = listed + kThreads;
  const std::uint64_t entries = min(w.long_list[0], w.long_capacity);
  // The host launches this after every warp-path call on offsets, blind: most
  // list nothing, and then no counters are cleared and no ticket taken.
  if (entries == 0) return;
  Counters c;
  c.init(smem, w, map);
  constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t current = kNone;  // the segment whose counts the columns hold
  for (std::uint64_t t = 0; t < entries; t += kThreads) {
    std::uint64_t s = 0, chunks = 0;
    if (t + threadIdx.x < entries) {
      s = w.long_list[kLongListHead + t + threadIdx.x];
      std::uint64_t begin, end;
      offset_bounds(w, s, begin, end);
      chunks = (end - begin + kChunkBytes - 1) / kChunkBytes;
    }
    std::uint64_t first, total;
    BlockScan(scan).ExclusiveSum(chunks, first, total);
    listed[threadIdx.x] = s;
    first_chunk[threadIdx.x] = first;
    __syncthreads();
    const auto in_tile = static_cast<unsigned>(min(std::uint64_t{kThreads}, entries - t));
    for (std::uint64_t k = blockIdx.x; k < total; k += gridDim.x) {
      unsigned lo = 0, hi = in_tile - 1;  // the last entry whose first chunk is at most k
      while (lo < hi) {
        const unsigned mid = (lo + hi + 1) / 2;
        if (first_chunk[mid] <= k) lo = mid; else hi = mid - 1;
      }
      const std::uint64_t segment = listed[lo];
      if (segment != current) {
        if (current != kNone) c.flush(w, w.out + current * w.slots, false);
        current = segment;
      }
      std::uint64_t begin, end;
      offset_bounds(w, segment, begin, end);
      const std::uint64_t a = begin + (k - first_chunk[lo]) * kChunkBytes, b = min(end, a + kChunkBytes);
      count_range<T>(c, w.samples + a * sizeof(T), b - a, map);
    }
    __syncthreads();  // the tile is read before the next one is written
  }
  if (current != kNone) c.flush(w, w.out + current * w.slots, false);
  // The ticket is the low half of word [1] (little-endian), cleared with it.
  if (!last_block_to_finish(reinterpret_cast<unsigned*>(w.long_list + 1))) return;
  for (std::uint64_t i = threadIdx.x; i < entries; i += kThreads) w.long_list[kLongListHead + i] = 0;
  if (threadIdx.x == 0) {
    w.long_list[0] = 0;
    w.long_list[1] = 0;
  }
}

template <class T, class Map>
void launch_long_segments(Work w, const Map& map, cudaStream_t stream) {
  using Counters = ByteColumns<T, Map>;
  auto kernel = long_segments_kernel<T, Map, Counters>;
  allow_large_shared(kernel);
  const std::size_t smem = long_segments_shared_bytes<Counters>(w, map);
  const int resident = std::max(resident_blocks_with(kernel, kThreads, smem), 1);
  kernel<<<static_cast<unsigned>(resident), kThreads, smem, stream>>>(w, map, smem - kLongTileBytes);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

// Whether some warp meets an unaligned edge or a lane's short last trip:
// all but equal segments of 2, 4 or 6 KiB at 16-byte boundaries (their
// 128, 256 or 384 vectors are whole trips of four a lane; from 8 KiB up a
// fold's stretch of 15 vectors a lane leaves three).
bool warp_segments_ragged(const Work& w) {
  if (w.kind == Kind::offsets) return true;
  return reinterpret_cast<std::uintptr_t>(w.samples) % 16 != 0 || w.length % 2048 != 0 || w.length > 6144;
}

void launch_warp_segments(const Work& w, cudaStream_t stream) {
  auto kernel = warp_segments_ragged(w) ? warp_segments_kernel<true> : warp_segments_kernel<false>;
  const std::size_t smem = std::size_t{kWarps} * kWarpColumnWords * 4;
  allow_large_shared(kernel);
  const std::uint64_t resident = static_cast<std::uint64_t>(std::max(resident_blocks_with(kernel, kThreads, smem), 1));
  const std::uint64_t blocks = std::clamp<std::uint64_t>((w.segments + kWarps - 1) / kWarps, 1, resident);
  kernel<<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(w);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

// Histogram copies that fit shared memory with the map's tables: a power of two up to one per warp.
std::uint32_t copies_for(std::uint64_t slots, std::size_t tables) {
  const std::size_t budget = max_shared_bytes();
  std::uint32_t copies = kWarps;
  while (copies > 1 && round_up(slots * copies * 4, 16) + tables > budget) copies /= 2;
  return copies;
}

bool supports(const Problem& p, std::string* why_not) {
  auto no = [&](const std::string& why) {
    if (why_not) *why_not = "gpu_segments: " + why;
    return false;
  };
  if (p.batch.is_none()) return no("counts batches only (Request::segments, segments_by_offsets, tiles)");
  if (max_shared_bytes() == 0) return no("no CUDA device to size shared memory for");
  if (round_up(p.binning->slots() * 4, 16) + map_table_bytes(p) > max_shared_bytes())
    return no(std::to_string(p.binning->slots()) + " counters do not fit in shared memory");
  return true;
}

// Segments by offsets of bytes into 256 bins: the list of the segments too
// long for one warp (at most n / 64 KiB of them, unless offsets overlap; the
// kernel counts any past the list itself). Nothing for the rest.
std::size_t workspace_bytes(const Problem& p) {
  if (p.batch.kind != BatchKind::offsets || p.type != SampleType::u8 || p.binning->slots() != 256 + 3 ||
      choose_map(p.type, *p.binning) != MapKind::direct)
    return 0;
  return round_up((kLongListHead + p.n / kWarpSegmentMost + 1) * 8, 256);
}

// Whether tiles of several bands are counted a tile column a block
// (Work::column_groups); the study knob LEVELHIST_TILE_COLUMN_GROUPS=0 measures
// the order tile by tile.
bool tile_column_groups_wanted() {
  return ::levelhist::detail::env_knob("LEVELHIST_TILE_COLUMN_GROUPS", 1, 0, 1) != 0;
}

template <class T, class Map, class Counters>
void launch_kernel(Work w, const Map& map, cudaStream_t stream) {
  auto kernel = batch_kernel<T, Map, Counters>;
  allow_large_shared(kernel);
  const std::size_t smem = Counters::counter_bytes(w) + map.table_bytes();
  const std::uint64_t resident = static_cast<std::uint64_t>(std::max(resident_blocks_with(kernel, kThreads, smem), 1));
  std::uint64_t blocks = std::clamp<std::uint64_t>(w.items, 1, resident);
  // A block a tile column where the grid's whole groups of tile_cols blocks
  // leave at most an eighth of the resident blocks out (so at least one group
  // fits). 8 x 8 tiles of a 16384^2 image: H100 89-90% -> 92% of the read
  // limit, H200 the same 78% (docs/PERFORMANCE-shapes.md, batches change 6).
  if (w.kind == Kind::tiles && w.bands > 1 && w.tile_cols > 1 && w.items >= resident &&
      resident % w.tile_cols <= resident / 8 && tile_column_groups_wanted()) {
    w.column_groups = static_cast<std::uint32_t>(resident / w.tile_cols);
    blocks = std::uint64_t{w.column_groups} * w.tile_cols;
  }
  kernel<<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(w, map);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

// Whether ByteColumns issues the next item's loads before counting this one
// (Work::pipeline); the study knob LEVELHIST_SEGMENT_PIPELINE=0 measures without.
bool item_pipeline_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_SEGMENT_PIPELINE", 1, 0, 1) != 0; }

// Whether 8-bit samples take ByteColumns (the default) or WarpCopies: the
// study knob LEVELHIST_SEGMENT_BYTE_COLUMNS=0 measures the latter.
bool byte_columns_wanted() { return ::levelhist::detail::env_knob("LEVELHIST_SEGMENT_BYTE_COLUMNS", 1, 0, 1) != 0; }

template <class T, class Map>
void launch(const RunArgs& a, const Map& map, MapKind map_kind) {
  const std::uint64_t slots = a.binning->slots();
  const BatchArgs& b = a.batch;
  const cudaStream_t stream = stream_of(a);
  Work w{};
  w.samples = static_cast<const unsigned char*>(a.samples);
  w.n = a.n;
  w.out = a.slots;
  w.slots = static_cast<std::uint32_t>(slots);
  w.accumulate = a.accumulate;
  w.pipeline = item_pipeline_wanted();
  w.segments = b.segments;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, kChunkBytes / sizeof(T));
  bool clear_all = false;
  switch (b.kind) {
    case BatchKind::equal:
      w.length = b.segment_length;
      if (w.length == 0) {  // no samples: every segment is empty
        w.kind = Kind::equal_owned;
        w.items = 0;
        clear_all = true;
      } else if (w.length <= chunk) {
        w.kind = Kind::equal_owned;
        w.chunk = chunk / w.length * w.length;
        w.items = (w.segments + w.chunk / w.length - 1) / (w.chunk / w.length);
      } else {
        w.kind = Kind::equal_split;
        w.chunk = chunk;
        w.parts = (w.length + chunk - 1) / chunk;
        w.items = w.segments * w.parts;
        clear_all = true;
      }
      break;
    case BatchKind::offsets:
      w.kind = Kind::offsets;
      w.offsets = b.offsets;
      w.chunk = chunk;
      w.items = (w.n + chunk - 1) / chunk;
      break;
    case BatchKind::tiles: {
      w.kind = Kind::tiles;
      w.width = a.layout.width;
      w.height = a.layout.height;
      w.pitch = a.layout.row_pitch ? a.layout.row_pitch : w.width * sizeof(T);
      w.tile_width = b.tile_width;
      w.tile_height = b.tile_height;
      w.tile_cols = b.tile_cols;
      w.rows_per_band = std::max<std::uint64_t>(1, chunk / std::max<std::uint64_t>(1, b.tile_width));
      w.bands = (b.tile_height + w.rows_per_band - 1) / w.rows_per_band;
      w.band_offsets_fit = w.rows_per_band * w.pitch < (std::uint64_t{1} << 32);
      w.items = b.segments * w.bands;
      clear_all = w.bands > 1;
      break;
    }
    case BatchKind::none:
      throw Error(ErrorKind::internal, "gpu_segments ran without a batch");
  }
  w.injective = sizeof(T) == 1 && map_kind == MapKind::direct && slots == 256 + 3;
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    // (Unsigned bytes only: the warp kernel's slot is the byte's value, where
    // signed bytes' direct map puts x at x + 128.)
    // A warp a segment: 256 bins of one byte value each, short segments
    // (equal, or by offsets on average where a workspace holds the list of
    // the long ones): a warp counts a whole segment alone, so long ones
    // would leave the GPU idle. Every slot of every segment is written (a
    // listed one's cleared), so nothing is cleared first.
    const std::uint64_t typical = w.kind == Kind::offsets ? w.n / std::max<std::uint64_t>(w.segments, 1) : w.length;
    // Segments by offsets: the long ones go back to the grid through a list
    // in the workspace, when the plan gave one (one bin a byte value is the
    // direct map: the other maps' long-segment kernels are not built).
    if constexpr (std::is_same_v<Map, DirectSlotMap<T>>)
      if (w.kind == Kind::offsets && a.workspace != nullptr && a.workspace_bytes >= 8 * (kLongListHead + 1)) {
        w.long_list = static_cast<std::uint64_t*>(a.workspace);
        w.long_capacity = a.workspace_bytes / 8 - kLongListHead;
      }
    const std::uint64_t most = warp_segment_most(w.kind == Kind::offsets, w.long_list != nullptr);
    if (most > 0 && w.injective && typical <= most &&
        (w.kind == Kind::equal_owned || w.kind == Kind::equal_split || w.kind == Kind::offsets)) {
      if (w.segments == 0) return;
      if (w.kind != Kind::offsets) w.kind = Kind::equal_owned;
      launch_warp_segments(w, stream);
      if constexpr (std::is_same_v<Map, DirectSlotMap<T>>)
        if (w.long_list != nullptr) launch_long_segments<T>(w, map, stream);
      return;
    }
  }
  if (!a.accumulate && clear_all)
    LEVELHIST_CUDA_CHECK(cudaMemsetAsync(a.slots, 0, b.segments * slots * sizeof(std::uint64_t), stream));
  if (!a.accumulate && (w.kind == Kind::offsets || w.kind == Kind::offsets_vectors) && w.segments > 0) {
    const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>((w.segments + 7) / 8, 4096));  // a warp a segment
    clear_unowned<<<blocks, 256, 0, stream>>>(w);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  }
  if (w.items == 0) return;
  if constexpr (sizeof(T) == 1) {
    if (byte_columns_wanted() && ByteColumns<T, Map>::counter_bytes(w) + map.table_bytes() <= max_shared_bytes()) {
      // Segments of whole vectors: a 4 KiB segment read alone left one 16-byte
      // load a thread in flight while its block waited.
      const bool at_vector = reinterpret_cast<std::uintptr_t>(w.samples) % 16 == 0;
      if (w.kind == Kind::equal_owned && at_vector && w.length % 16 == 0 && w.length / 16 >= kMinSegmentVectors)
        w.kind = Kind::equal_vectors;
      if (w.kind == Kind::offsets && at_vector) w.kind = Kind::offsets_vectors;
      launch_kernel<T, Map, ByteColumns<T, Map>>(w, map, stream);
      return;
    }
  }
  w.copies = copies_for(slots, map.table_bytes());
  launch_kernel<T, Map, WarpCopies<T, Map>>(w, map, stream);
}

void run(const RunArgs& a) {
  const MapKind kind = choose_map(a.type, *a.binning);
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_map<T>(a, kind, [&](const auto& map) { launch<T>(a, map, kind); });
  });
}

// Item boundaries for the tests to probe: one item of bytes, and its neighbours.
std::vector<std::uint64_t> boundaries(const Problem& p) {
  const std::uint64_t chunk = kChunkBytes / sample_size(p.type);
  return {chunk - 1, chunk, chunk + 1, 2 * chunk + 17};
}

}  // namespace
}  // namespace levelhist::cuda_detail::segments

namespace levelhist::strategies {

const Strategy gpu_segments{"gpu_segments",
                            Backend::cuda,
                            "a batch of histograms (segments, offsets, tiles) in one launch: 16 KiB work items, a "
                            "contiguous range of them per block of a persistent grid; 8-bit samples in 32 lane "
                            "columns, others in a shared histogram per warp; owned segments stored without atomics; "
                            "byte segments of <= 4 KiB (equal, or by offsets on average, the long ones back to the grid) into 256 bins a warp a segment, in 8-bit columns",
                            "levelhist, with CUB's segment offsets (docs/PERFORMANCE-shapes.md)",
                            cuda_detail::segments::supports,
                            cuda_detail::segments::workspace_bytes,
                            cuda_detail::segments::run,
                            cuda_detail::segments::boundaries,
                            kCapabilitySegments | kCapabilityTiles,
                            cuda_detail::general::prepared_tables_bytes,
                            cuda_detail::general::prepare_tables};

}  // namespace levelhist::strategies
