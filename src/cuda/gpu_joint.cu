// gpu_joint: N-d histograms (Request::joint): 2 to 4 coordinates per point,
// interleaved or in separate arrays; auto's choice for N-d points on the GPU.
//
// A point's slot is the sum of its axes' slots times their strides, each
// axis's slot by the exact bin maps of general_common.cuh (one kind for all
// axes: direct, integer shift or even bins when every axis can take it, else
// BinIndexer::slot). Blocks count chunks of points into a shared-memory
// histogram. When the whole histogram does not fit (the 256 x 256 joint
// histogram of two 8-bit images has 259^2 = 67081 slots: 268 KB of counters),
// the slots are split into parts that do, and each chunk is counted by one
// block per part, the blocks of one chunk next to each other, so the second
// reads the chunk from L2 rather than from memory: memory traffic stays one
// read of the input. Small histograms get several copies (warps take them in
// turn), so warps do not contend for one counter.
//
// Level performance: each thread keeps the slot and the length of its current
// run of equal slots and adds the run when it ends, so a constant image costs
// one shared atomic per run, not per point. Separate 8/16-bit or f32 columns
// aligned to 16 bytes are read with 16-byte loads (16 points of u8 per load
// per column).
#include <algorithm>
#include <string>

#include "core/strategies.hpp"
#include "cuda/general_common.cuh"

namespace levelhist::cuda_detail::joint {
namespace {

using namespace general;

constexpr int kThreads = 512;
constexpr std::uint64_t kChunkPoints = 64 * 1024;  // points per work item
constexpr std::uint32_t kMaxCopies = 8;

__device__ __forceinline__ std::uint64_t umin(std::uint64_t a, std::uint64_t b) { return a < b ? a : b; }

struct Work {
  const unsigned char* columns[kMaxAxes];
  std::uint64_t stride;  // bytes from one point's coordinate to the next's, per column
  std::uint64_t n;       // points
  unsigned axes;
  std::uint32_t axis_stride[kMaxAxes];  // flat stride of each axis
  std::uint32_t part_slots;             // slots per part (the last part may have fewer)
  std::uint32_t parts;
  std::uint64_t total_slots;
  std::uint64_t items;  // chunks x parts
  std::uint32_t copies;
  bool vector;          // separate columns, all 16-byte aligned: 16-byte loads
  bool aligned;         // every coordinate aligned to its size: plain loads
  std::uint64_t* out;
};

// The run of equal slots a thread is adding up.
struct Run {
  std::uint32_t slot = 0xFFFFFFFFu;
  unsigned length = 0;
  __device__ __forceinline__ void add(std::uint32_t s, unsigned* h, std::uint32_t lo, std::uint32_t count) {
    if (s == slot) {
      ++length;
      return;
    }
    flush(h, lo, count);
    slot = s;
    length = 1;
  }
  // Only slots of this block's part [lo, lo + count) are counted here.
  __device__ __forceinline__ void flush(unsigned* h, std::uint32_t lo, std::uint32_t count) {
    if (length && slot - lo < count) atomicAdd(h + (slot - lo), length);
    length = 0;
  }
};

template <class T, class Map>
__device__ __forceinline__ std::uint32_t slot_of(const T (&x)[kMaxAxes], const Map (&maps)[kMaxAxes], const Work& w) {
  std::uint32_t s = 0;
#pragma unroll
  for (unsigned a = 0; a < kMaxAxes; ++a)
    if (a < w.axes) s += maps[a](x[a]) * w.axis_stride[a];
  return s;
}

template <class T, class Map>
__global__ void __launch_bounds__(kThreads) joint_kernel(Work w, Map m0, Map m1, Map m2, Map m3) {
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* hist = reinterpret_cast<unsigned*>(smem);
  const Map maps[kMaxAxes] = {m0, m1, m2, m3};
  const std::uint32_t words = w.part_slots * w.copies;
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  unsigned* mine = hist + ((threadIdx.x / 32) % w.copies) * w.part_slots;
  for (std::uint64_t item = blockIdx.x; item < w.items; item += gridDim.x) {
    const std::uint64_t chunk = item / w.parts;
    const std::uint32_t part = static_cast<std::uint32_t>(item % w.parts);
    const std::uint32_t lo = part * w.part_slots;
    const std::uint32_t count = static_cast<std::uint32_t>(umin(w.part_slots, w.total_slots - lo));
    const std::uint64_t p0 = chunk * kChunkPoints, p1 = umin(w.n, p0 + kChunkPoints);
    Run run;
    if (w.vector) {
      // 16 / sizeof(T) points per 16-byte load of each column; p0 is a multiple of 16 points.
      constexpr int K = kPerVector<T>;
      const std::uint64_t vectors = (p1 - p0) / K;
      for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
        T c[kMaxAxes][K];
#pragma unroll
        for (unsigned a = 0; a < kMaxAxes; ++a)
          if (a < w.axes) unpack(__ldcs(reinterpret_cast<const uint4*>(w.columns[a]) + (p0 / K + v)), c[a]);
#pragma unroll
        for (int k = 0; k < K; ++k) {
          T x[kMaxAxes];
#pragma unroll
          for (unsigned a = 0; a < kMaxAxes; ++a) x[a] = a < w.axes ? c[a][k] : T{};
          run.add(slot_of(x, maps, w), mine, lo, count);
        }
      }
      for (std::uint64_t i = p0 + vectors * K + threadIdx.x; i < p1; i += blockDim.x) {
        T x[kMaxAxes];
#pragma unroll
        for (unsigned a = 0; a < kMaxAxes; ++a) x[a] = a < w.axes ? reinterpret_cast<const T*>(w.columns[a])[i] : T{};
        run.add(slot_of(x, maps, w), mine, lo, count);
      }
    } else {
      for (std::uint64_t i = p0 + threadIdx.x; i < p1; i += blockDim.x) {
        T x[kMaxAxes];
#pragma unroll
        for (unsigned a = 0; a < kMaxAxes; ++a) {
          const unsigned char* at = w.columns[a] + i * w.stride;
          x[a] = a >= w.axes ? T{} : w.aligned ? *reinterpret_cast<const T*>(at) : load_unaligned<T>(at);
        }
        run.add(slot_of(x, maps, w), mine, lo, count);
      }
    }
    run.flush(mine, lo, count);
    __syncthreads();
    for (std::uint32_t s = threadIdx.x; s < count; s += blockDim.x) {
      unsigned v = 0;
      for (std::uint32_t c = 0; c < w.copies; ++c) {
        v += hist[c * w.part_slots + s];
        hist[c * w.part_slots + s] = 0;
      }
      add_to_slot(w.out + lo + s, v);
    }
    __syncthreads();
  }
}

// One map kind for every axis: the cheapest exact one they all take.
MapKind common_kind(const RunArgs& a) {
  MapKind kind = choose_map(a.type, *a.axes.binnings[0]);
  for (unsigned k = 1; k < a.axes.count; ++k)
    if (choose_map(a.type, *a.axes.binnings[k]) != kind) return MapKind::generic;
  return kind == MapKind::cells ? MapKind::generic : kind;  // cell tables need prepared data per axis
}

// The map of `kind` for axis k (the kinds common_kind returns).
template <class Map, class T>
Map map_of(const RunArgs& a, unsigned k) {
  const Binning& b = *a.axes.binnings[std::min(k, a.axes.count - 1)];
  if constexpr (std::is_same_v<Map, GenericMap<T>>) return GenericMap<T>{a.axes.indexers[std::min(k, a.axes.count - 1)]};
  else if constexpr (std::is_same_v<Map, EvenMap<T>>) return EvenMap<T>{binmap::make_even_params(b)};
  else if constexpr (std::is_same_v<Map, DirectSlotMap<T>>) return DirectSlotMap<T>{binmap::make_direct(b)};
  else return ShiftMap<T>{binmap::make_int_shift<(sizeof(T) == 4)>(b)};
}

// Shared memory for the histogram: parts of at most this many bytes.
std::size_t histogram_budget() { return max_shared_bytes(); }

// The fewest parts whose 32-bit counters each fit `budget` bytes (0: none do).
std::uint64_t parts_for(std::uint64_t total, std::size_t budget) {
  if (budget < 16) return 0;
  std::uint64_t parts = std::max<std::uint64_t>(1, total * 4 / budget);
  while (round_up((total + parts - 1) / parts * 4, 16) > budget) ++parts;
  return parts;
}

bool supports(const Problem& p, std::string* why_not) {
  auto no = [&](const std::string& why) {
    if (why_not) *why_not = "gpu_joint: " + why;
    return false;
  };
  if (p.axis_count < 2) return no("counts N-d points only (Request::joint)");
  if (histogram_budget() == 0) return no("no CUDA device to size shared memory for");
  if (p.histogram_slots() > (std::uint64_t{1} << 30)) return no("more than 2^30 slots");
  // Parts beyond 16 read each chunk 16 times: the CPU is then the better place.
  const std::uint64_t parts = parts_for(p.histogram_slots(), histogram_budget());
  if (parts > 16)
    return no(std::to_string(p.histogram_slots()) + " slots need " + std::to_string(parts) +
              " parts of shared memory (at most 16)");
  return true;
}

std::size_t no_workspace(const Problem&) { return 0; }

template <class T, class Map>
void launch(const RunArgs& a) {
  const AxesArgs& ax = a.axes;
  Work w{};
  w.axes = ax.count;
  w.n = a.n;
  w.stride = ax.stride;
  w.out = a.slots;
  std::uint64_t total = 1;
  for (unsigned k = 0; k < ax.count; ++k) total *= ax.binnings[k]->slots();
  w.total_slots = total;
  std::uint64_t stride = total;
  bool aligned16 = ax.stride == sizeof(T) && sizeof(T) <= 4;  // separate columns of 8/16/32-bit samples
  w.aligned = ax.stride % sizeof(T) == 0;
  for (unsigned k = 0; k < kMaxAxes; ++k) {
    const unsigned src = std::min(k, ax.count - 1);
    w.columns[k] = static_cast<const unsigned char*>(ax.columns[src]);
    if (k < ax.count) {
      stride /= ax.binnings[k]->slots();
      w.axis_stride[k] = static_cast<std::uint32_t>(stride);
      aligned16 = aligned16 && reinterpret_cast<std::uintptr_t>(ax.columns[k]) % 16 == 0;
      w.aligned = w.aligned && reinterpret_cast<std::uintptr_t>(ax.columns[k]) % sizeof(T) == 0;
    }
  }
  w.vector = aligned16 && (std::is_integral_v<T> || std::is_same_v<T, float>);
  const std::size_t budget = histogram_budget();
  const std::uint64_t parts = parts_for(total, budget);
  w.parts = static_cast<std::uint32_t>(parts);
  w.part_slots = static_cast<std::uint32_t>((total + parts - 1) / parts);
  w.copies = 1;
  while (w.copies < kMaxCopies && round_up(std::uint64_t{w.part_slots} * w.copies * 2 * 4, 16) <= budget) w.copies *= 2;
  const std::uint64_t chunks = (w.n + kChunkPoints - 1) / kChunkPoints;
  w.items = chunks * parts;
  const cudaStream_t stream = stream_of(a);
  if (!a.accumulate) LEVELHIST_CUDA_CHECK(cudaMemsetAsync(a.slots, 0, total * sizeof(std::uint64_t), stream));
  if (w.items == 0) return;
  auto kernel = joint_kernel<T, Map>;
  allow_large_shared(kernel);
  const std::size_t smem = round_up(std::size_t{w.part_slots} * w.copies * 4, 16);
  const int resident = resident_blocks_with(kernel, kThreads, smem);
  const std::uint64_t blocks = std::clamp<std::uint64_t>(w.items, 1, std::max(resident, 1));
  kernel<<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(w, map_of<Map, T>(a, 0), map_of<Map, T>(a, 1),
                                                                    map_of<Map, T>(a, 2), map_of<Map, T>(a, 3));
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

void run(const RunArgs& a) {
  const MapKind kind = common_kind(a);
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (kind) {
      case MapKind::direct:
        if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) return launch<T, DirectSlotMap<T>>(a);
        break;
      case MapKind::int_shift:
        if constexpr (std::is_integral_v<T>) return launch<T, ShiftMap<T>>(a);
        break;
      case MapKind::even: return launch<T, EvenMap<T>>(a);
      default: break;
    }
    launch<T, GenericMap<T>>(a);
  });
}

std::vector<std::uint64_t> boundaries(const Problem&) { return {kChunkPoints - 1, kChunkPoints, kChunkPoints + 17}; }

}  // namespace
}  // namespace levelhist::cuda_detail::joint

namespace levelhist::strategies {

const Strategy gpu_joint{"gpu_joint",
                         Backend::cuda,
                         "N-d histograms (2 to 4 axes) in shared memory, split in parts that fit, a block per part "
                         "of each chunk of points; runs of equal slots added once",
                         "levelhist (docs/PERFORMANCE-shapes.md)",
                         cuda_detail::joint::supports,
                         cuda_detail::joint::no_workspace,
                         cuda_detail::joint::run,
                         cuda_detail::joint::boundaries,
                         kCapabilityAxes};

}  // namespace levelhist::strategies
