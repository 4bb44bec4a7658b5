// gpu_segments: a batch of histograms in one launch (Request::segments,
// segments_by_offsets, tiles): auto's choice for batches on the GPU.
//
// The input is cut into work items of at most kChunkBytes of samples, and a
// persistent grid of blocks takes them in turn, so a batch of a few huge
// segments keeps every multiprocessor as busy as a batch of many small ones.
// An item is a chunk of the array (segments) or a band of rows of one tile
// (tiles). For each segment (or tile) the item overlaps, the block counts
// that part into a shared-memory histogram (one copy per warp: warps do not
// contend; each thread first adds up runs of equal slots among its own
// samples, so a constant segment costs one atomic per vector, not one per
// sample), then writes it out:
//  * a segment or tile that lies whole inside the item is the block's alone:
//    its counters are stored (added to the old ones when accumulating), no
//    atomics, and every slot is written, so no clearing pass is needed;
//  * a segment that straddles items is added with 64-bit atomics (nonzero
//    counts only) into counters cleared before the launch: by a small kernel
//    for segments by offsets (only the straddling and the empty ones), by a
//    memset where every segment straddles (equal segments longer than an
//    item, tiles of several bands; the output is then small beside the input).
// Samples are read with 16-byte loads where the pointer allows and mapped to
// slots by the exact bin maps of general_common.cuh.
//
// Register spills (ptxas, CUDA 13.0, sm_90), not yet weighed on a device, so
// the three new-shape kernels are built without -warn-spills (CMakeLists.txt):
// here 4 to 72 bytes in the instantiations whose bin map calls its
// out-of-line exact path (EvenMap, GenericMap: live registers are saved
// around the call), none in the others; gpu_joint.cu 4 bytes (f32, EvenMap);
// gpu_weighted_exact.cu 4 to 44 bytes in 12 instantiations, as its model
// gpu_weighted_shared spills (weighted_shared.cuh says what those are).
//
// Device offsets must be non-decreasing (the host path checks them): an item
// finds its first segment by binary search. Offsets that are not get
// unspecified counts, but every read stays inside the input and every write
// inside the output (offsets are clamped to n).
#include <algorithm>
#include <string>

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

enum class Kind : std::uint8_t { equal_owned, equal_split, offsets, tiles };

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
  std::uint64_t* out;
  std::uint32_t slots;
  std::uint32_t copies;  // histogram copies in shared memory (a power of two <= kWarps)
  bool accumulate;
};

// Counts `count` samples of T at p into this warp's copy `h`.
template <class T, class Map>
__device__ __forceinline__ void count_range(const unsigned char* p, std::uint64_t count, const Map& map, unsigned* h) {
  constexpr int K = kPerVector<T>;
  if (reinterpret_cast<std::uintptr_t>(p) % sizeof(T) != 0) {
    for (std::uint64_t i = threadIdx.x; i < count; i += blockDim.x) atomicAdd(h + map(load_unaligned<T>(p + i * sizeof(T))), 1u);
    return;
  }
  const Split16 sp = split16<T>(p, count);
  const T* xs = reinterpret_cast<const T*>(p);
  if (threadIdx.x < sp.head) atomicAdd(h + map(xs[threadIdx.x]), 1u);
  for (std::uint64_t i = sp.tail + threadIdx.x; i < count; i += blockDim.x) atomicAdd(h + map(xs[i]), 1u);
  const uint4* body = reinterpret_cast<const uint4*>(p + sp.head * sizeof(T));
  for (std::uint64_t v = threadIdx.x; v < sp.vectors; v += blockDim.x) {
    T x[K];
    unpack(__ldcs(body + v), x);
    std::uint32_t run_slot = map(x[0]);
    unsigned run = 1;
#pragma unroll
    for (int k = 1; k < K; ++k) {
      const std::uint32_t s = map(x[k]);
      if (s == run_slot) {
        ++run;
      } else {
        atomicAdd(h + run_slot, run);
        run_slot = s;
        run = 1;
      }
    }
    atomicAdd(h + run_slot, run);
  }
}

// Writes the block's counts of one segment or tile to `out` (stored when the
// block owns it, else added) and clears them for the next.
__device__ __forceinline__ void flush(const Work& w, unsigned* hist, std::uint64_t* out, bool owned) {
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

// The bounds of segment s by offsets, clamped to [0, n].
__device__ __forceinline__ void offset_bounds(const Work& w, std::uint64_t s, std::uint64_t& begin, std::uint64_t& end) {
  begin = min(w.offsets[s], w.n);
  end = max(begin, min(w.offsets[s + 1], w.n));
}

template <class T, class Map>
__global__ void __launch_bounds__(kThreads) batch_kernel(Work w, Map map) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ std::uint64_t first_segment;
  unsigned* hist = reinterpret_cast<unsigned*>(smem);
  for (std::uint32_t i = threadIdx.x; i < w.slots * w.copies; i += blockDim.x) hist[i] = 0;
  map.setup(smem + round_up(std::size_t{w.slots} * w.copies * 4, 16));
  __syncthreads();
  unsigned* mine = hist + ((threadIdx.x / 32) & (w.copies - 1)) * w.slots;
  for (std::uint64_t item = blockIdx.x; item < w.items; item += gridDim.x) {
    switch (w.kind) {
      case Kind::equal_owned: {  // whole segments, w.chunk / w.length of them per item
        const std::uint64_t first = item * (w.chunk / w.length);
        const std::uint64_t last = min(w.segments, first + w.chunk / w.length);
        for (std::uint64_t s = first; s < last; ++s) {
          count_range<T>(w.samples + s * w.length * sizeof(T), w.length, map, mine);
          flush(w, hist, w.out + s * w.slots, true);
        }
        break;
      }
      case Kind::equal_split: {  // part `item % parts` of segment `item / parts`
        const std::uint64_t s = item / w.parts, part = item % w.parts;
        const std::uint64_t begin = part * w.chunk, end = min(w.length, begin + w.chunk);
        count_range<T>(w.samples + (s * w.length + begin) * sizeof(T), end - begin, map, mine);
        flush(w, hist, w.out + s * w.slots, false);
        break;
      }
      case Kind::offsets: {
        const std::uint64_t c0 = item * w.chunk, c1 = min(w.n, c0 + w.chunk);
        if (threadIdx.x == 0) {  // the first segment that ends after c0
          std::uint64_t lo = 0, hi = w.segments;
          while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            if (min(w.offsets[mid + 1], w.n) > c0) hi = mid; else lo = mid + 1;
          }
          first_segment = lo;
        }
        __syncthreads();
        for (std::uint64_t s = first_segment; s < w.segments; ++s) {
          std::uint64_t begin, end;
          offset_bounds(w, s, begin, end);
          if (begin >= c1) break;
          if (end <= begin) continue;  // empty: cleared before the launch, or kept
          const bool owned = begin / w.chunk == (end - 1) / w.chunk;
          const std::uint64_t a = max(begin, c0), b = min(end, c1);
          count_range<T>(w.samples + a * sizeof(T), b - a, map, mine);
          flush(w, hist, w.out + s * w.slots, owned);
        }
        __syncthreads();  // first_segment is read by every thread before the next item sets it
        break;
      }
      case Kind::tiles: {  // band `item % bands` of tile `item / bands`
        const std::uint64_t tile = item / w.bands, band = item % w.bands;
        const std::uint64_t r0 = (tile / w.tile_cols) * w.tile_height + band * w.rows_per_band;
        const std::uint64_t tile_end = min(w.height, (tile / w.tile_cols + 1) * w.tile_height);
        const std::uint64_t r1 = min(tile_end, r0 + w.rows_per_band);
        const std::uint64_t x0 = (tile % w.tile_cols) * w.tile_width, x1 = min(w.width, x0 + w.tile_width);
        for (std::uint64_t r = r0; r < r1 && x0 < x1; ++r)
          count_range<T>(w.samples + r * w.pitch + x0 * sizeof(T), x1 - x0, map, mine);
        flush(w, hist, w.out + tile * w.slots, w.bands == 1);
        break;
      }
    }
  }
}

// Clears the counters of every segment by offsets that no single item owns
// (it straddles items, or is empty), before a launch that does not accumulate.
__global__ void clear_unowned(Work w) {
  for (std::uint64_t s = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; s < w.segments;
       s += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t begin, end;
    offset_bounds(w, s, begin, end);
    if (end > begin && begin / w.chunk == (end - 1) / w.chunk) continue;
    for (std::uint32_t k = 0; k < w.slots; ++k) w.out[s * w.slots + k] = 0;
  }
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

std::size_t no_workspace(const Problem&) { return 0; }

template <class T, class Map>
void launch(const RunArgs& a, const Map& map) {
  const std::uint64_t slots = a.binning->slots();
  const BatchArgs& b = a.batch;
  const cudaStream_t stream = stream_of(a);
  Work w{};
  w.samples = static_cast<const unsigned char*>(a.samples);
  w.n = a.n;
  w.out = a.slots;
  w.slots = static_cast<std::uint32_t>(slots);
  w.accumulate = a.accumulate;
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
      w.items = b.segments * w.bands;
      clear_all = w.bands > 1;
      break;
    }
    case BatchKind::none:
      throw Error(ErrorKind::internal, "gpu_segments ran without a batch");
  }
  if (!a.accumulate && clear_all)
    LEVELHIST_CUDA_CHECK(cudaMemsetAsync(a.slots, 0, b.segments * slots * sizeof(std::uint64_t), stream));
  if (!a.accumulate && w.kind == Kind::offsets && w.segments > 0) {
    const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>((w.segments + 255) / 256, 4096));
    clear_unowned<<<blocks, 256, 0, stream>>>(w);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  }
  if (w.items == 0) return;
  auto kernel = batch_kernel<T, Map>;
  allow_large_shared(kernel);
  w.copies = copies_for(slots, map.table_bytes());
  const std::size_t smem = round_up(slots * w.copies * 4, 16) + map.table_bytes();
  const int resident = resident_blocks_with(kernel, kThreads, smem);
  const std::uint64_t blocks = std::clamp<std::uint64_t>(w.items, 1, std::max(resident, 1));
  kernel<<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(w, map);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

void run(const RunArgs& a) {
  const MapKind kind = choose_map(a.type, *a.binning);
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_map<T>(a, kind, [&](const auto& map) { launch<T>(a, map); });
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
                            "a batch of histograms (segments, offsets, tiles) in one launch: 16 KiB work items over a "
                            "persistent grid, a shared histogram per warp, owned segments stored without atomics",
                            "levelhist, with CUB's segment offsets (docs/PERFORMANCE-shapes.md)",
                            cuda_detail::segments::supports,
                            cuda_detail::segments::no_workspace,
                            cuda_detail::segments::run,
                            cuda_detail::segments::boundaries,
                            kCapabilitySegments | kCapabilityTiles,
                            cuda_detail::general::prepared_tables_bytes,
                            cuda_detail::general::prepare_tables};

}  // namespace levelhist::strategies
