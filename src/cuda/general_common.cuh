// Shared pieces of levelhist's general-histogram kernels: the exact
// bin maps of core/bin_maps.hpp as kernel functors, which map a problem uses,
// unpacking 16-byte loads into samples, shared-memory sizing, and the
// per-call workspace region that carries a map's tables to the device.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/bin_maps.hpp"
#include "cuda/cuda_common.cuh"
#include "levelhist/error.hpp"

namespace levelhist::cuda_detail::general {

using binmap::CellEntry;

constexpr std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// Static shared memory these kernels declare besides their dynamic array
// (a last-block flag, a few counters): kept out of the dynamic budget, because
// the opt-in limit covers static plus dynamic and cudaFuncSetAttribute rejects
// a dynamic size that would not leave room for the kernel's static part.
inline constexpr std::size_t kStaticSharedReserve = 1024;

// The largest dynamic shared memory a block of these kernels may use on the
// current device (the opt-in limit, 227 KB on H100/H200, less the static
// reserve); 0 without a device. Queried once per process.
inline std::size_t max_shared_bytes() {
  static const std::size_t bytes = [] {
    int device = 0, value = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
      cudaGetLastError();  // no device: no sticky error left behind
      return std::size_t{0};
    }
    return static_cast<std::size_t>(value) > kStaticSharedReserve ? static_cast<std::size_t>(value) - kStaticSharedReserve
                                                                 : std::size_t{0};
  }();
  return bytes;
}

// Lets `kernel` use up to max_shared_bytes() of dynamic shared memory. Call
// before the occupancy query and the launch; cheap after the first call of a
// kernel (the caller keeps a static flag per instantiation).
template <class Kernel>
void allow_large_shared(Kernel kernel) {
  cudaFuncAttributes attributes{};
  LEVELHIST_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (attributes.sharedSizeBytes > kStaticSharedReserve)
    throw Error(ErrorKind::internal, "a kernel declares more static shared memory than levelhist reserves for it");
  LEVELHIST_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(max_shared_bytes())));
}

// Blocks of `kernel` resident on the whole device with this shared memory.
template <class Kernel>
int resident_blocks_with(Kernel kernel, int threads, std::size_t smem) {
  int per_sm = 0;
  LEVELHIST_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return std::max(per_sm, 1) * sm_count();
}

// ---- samples --------------------------------------------------------------------

template <class T>
inline constexpr int kPerVector = 16 / static_cast<int>(sizeof(T));  // samples in one 16-byte load

// The samples of one 16-byte load, in memory order.
template <class T>
__device__ __forceinline__ void unpack(uint4 v, T (&out)[kPerVector<T>]) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  if constexpr (sizeof(T) == 1) {
#pragma unroll
    for (int i = 0; i < 16; ++i) out[i] = static_cast<T>(static_cast<unsigned char>(w[i / 4] >> (8 * (i % 4))));
  } else if constexpr (sizeof(T) == 2) {
#pragma unroll
    for (int i = 0; i < 8; ++i) out[i] = static_cast<T>(static_cast<unsigned short>(w[i / 2] >> (16 * (i % 2))));
  } else if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = __uint_as_float(w[i]);
  } else if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = static_cast<T>(w[i]);
  } else {
    out[0] = __hiloint2double(static_cast<int>(v.y), static_cast<int>(v.x));
    out[1] = __hiloint2double(static_cast<int>(v.w), static_cast<int>(v.z));
  }
}

// Where the 16-byte body of n samples of T at p starts (in samples), when p is
// aligned to sizeof(T); the samples before it and after the last whole vector
// are the head and the tail.
struct Split16 {
  std::uint64_t head;    // samples before the first 16-byte boundary
  std::uint64_t vectors; // whole 16-byte vectors after it
  std::uint64_t tail;    // first sample after the vectors
};
template <class T>
__device__ __forceinline__ Split16 split16(const unsigned char* p, std::uint64_t n) {
  Split16 s;
  const std::uint64_t head = ((16 - (reinterpret_cast<std::uintptr_t>(p) & 15)) & 15) / sizeof(T);
  s.head = head < n ? head : n;
  s.vectors = (n - s.head) / kPerVector<T>;
  s.tail = s.head + s.vectors * kPerVector<T>;
  return s;
}

// ---- the maps as kernel functors ------------------------------------------------
// A map has operator()(T) -> slot, table_bytes() of shared memory for its
// tables, and setup(), which each block calls once to load them.

enum class MapKind : std::uint8_t { direct, int_shift, even, cells, generic };

// Bins of explicit edges a cell table serves (its thresholds live in shared memory).
inline constexpr std::uint64_t kMaxCellBins = 4096;

// The map a problem uses (docs/PERFORMANCE-general.md: the cheapest exact one).
inline MapKind choose_map(SampleType type, const Binning& b) {
  if (binmap::direct_applies(type, b)) return MapKind::direct;
  if (binmap::int_shift_applies(type, b)) return MapKind::int_shift;
  if (b.kind() == BinKind::even) return MapKind::even;
  const bool floats = sample_size(type) <= 2 || type == SampleType::f32;
  if (floats && b.bins() <= kMaxCellBins) return MapKind::cells;
  return MapKind::generic;
}

inline const char* map_name(MapKind k) {
  switch (k) {
    case MapKind::direct: return "sample - lower";
    case MapKind::int_shift: return "integer shift";
    case MapKind::even: return "float margin + exact double";
    case MapKind::cells: return "cell table";
    case MapKind::generic: return "BinIndexer::slot";
  }
  return "?";
}

template <class T>
struct ShiftMap {
  binmap::IntShiftMap<(sizeof(T) == 4)> m;
  static constexpr std::size_t table_bytes() { return 0; }
  __device__ __forceinline__ void setup(unsigned char*) {}
  __device__ __forceinline__ std::uint32_t operator()(T x) const { return m(x); }
};

template <class T>
struct DirectSlotMap {
  binmap::DirectMap m;
  static constexpr std::size_t table_bytes() { return 0; }
  __device__ __forceinline__ void setup(unsigned char*) {}
  __device__ __forceinline__ std::uint32_t operator()(T x) const { return m(x); }
};

template <class T>
struct EvenMap {
  binmap::EvenParams p;
  static constexpr std::size_t table_bytes() { return 0; }
  __device__ __forceinline__ void setup(unsigned char*) {}
  __device__ __forceinline__ std::uint32_t operator()(T x) const { return binmap::even_slot(x, p); }
};

// The table lives in the workspace (uploaded by upload_tables) and is copied
// into shared memory by every block.
template <class T>
struct CellsMap {
  binmap::CellParams p;
  const CellEntry* table;    // workspace: p.cells entries
  const float* thresholds;   // workspace: 2 * half floats (at least 2)
  std::uint32_t threshold_count;
  std::size_t table_bytes() const {
    return round_up(p.cells * sizeof(CellEntry), 16) + round_up(threshold_count * sizeof(float), 16);
  }
  __device__ __forceinline__ void setup(unsigned char* smem) {
    CellEntry* st = reinterpret_cast<CellEntry*>(smem);
    float* sthr = reinterpret_cast<float*>(smem + round_up(p.cells * sizeof(CellEntry), 16));
    for (std::uint32_t i = threadIdx.x; i < p.cells; i += blockDim.x) st[i] = table[i];
    for (std::uint32_t i = threadIdx.x; i < threshold_count; i += blockDim.x) sthr[i] = thresholds[i];
    table = st;
    thresholds = sthr;
  }
  __device__ __forceinline__ std::uint32_t operator()(T x) const {
    return binmap::cells_slot(static_cast<float>(x), p, table, thresholds);
  }
};

template <class T>
struct GenericMap {
  BinIndexer ix;
  static constexpr std::size_t table_bytes() { return 0; }
  __device__ __forceinline__ void setup(unsigned char*) {}
  __device__ __forceinline__ std::uint32_t operator()(T x) const {
    return binmap::slow_slot(static_cast<double>(x), ix);  // out of line: the loop stays small
  }
};

// Workspace bytes that carry a cell table to the device (the largest table).
inline constexpr std::size_t kTableRegionBytes =
    round_up(binmap::kMaxCells * sizeof(CellEntry), 256) + round_up(kMaxCellBins * sizeof(float), 256);

// Builds the map of `kind` for samples of T on a's binning and calls
// launch(map) with it. A cell table is uploaded into `table_region` (kTableRegionBytes
// of workspace) on a's stream; the kernel that uses it must zero it again.
template <class T, class Launch>
void with_map(const RunArgs& a, MapKind kind, void* table_region, Launch&& launch) {
  const Binning& b = *a.binning;
  switch (kind) {
    case MapKind::direct:
      if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
        launch(DirectSlotMap<T>{binmap::make_direct(b)});
        return;
      }
      break;
    case MapKind::int_shift:
      if constexpr (std::is_integral_v<T>) {
        launch(ShiftMap<T>{binmap::make_int_shift<(sizeof(T) == 4)>(b)});
        return;
      }
      break;
    case MapKind::even:
      launch(EvenMap<T>{binmap::make_even_params(b)});
      return;
    case MapKind::cells:
      if constexpr (binmap::exact_in_float<T>) {
        const binmap::CellTable t = binmap::build_cell_table(b);
        auto* region = static_cast<unsigned char*>(table_region);
        const std::size_t entry_bytes = t.entries.size() * sizeof(CellEntry);
        auto* d_thresholds = region + round_up(binmap::kMaxCells * sizeof(CellEntry), 256);
        LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(region, t.entries.data(), entry_bytes, cudaMemcpyHostToDevice, stream_of(a)));
        LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(d_thresholds, t.thresholds.data(), t.thresholds.size() * sizeof(float),
                                             cudaMemcpyHostToDevice, stream_of(a)));
        launch(CellsMap<T>{t.params, reinterpret_cast<const CellEntry*>(region),
                           reinterpret_cast<const float*>(d_thresholds),
                           static_cast<std::uint32_t>(t.thresholds.size())});
        return;
      }
      break;
    case MapKind::generic:
      launch(GenericMap<T>{a.indexer});
      return;
  }
  throw Error(ErrorKind::internal, std::string("no ") + map_name(kind) + " map for " + std::string(to_string(a.type)) +
                                       " samples");
}

// Zeroes a workspace region of `words` 32-bit words (the last block of a kernel
// clears what the host uploaded).
__device__ __forceinline__ void zero_words(unsigned* p, std::size_t words) {
  for (std::size_t i = threadIdx.x; i < words; i += blockDim.x) p[i] = 0;
}

}  // namespace levelhist::cuda_detail::general
