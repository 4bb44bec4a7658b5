// Shared pieces of levelhist's general-histogram kernels: the exact
// bin maps of core/bin_maps.hpp as kernel functors, which map a problem uses,
// unpacking 16-byte loads into samples, shared-memory sizing, and the
// per-call workspace region that carries a map's tables to the device.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
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
// reserve); 0 without a device.
inline std::size_t max_shared_bytes() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();  // no device: no sticky error left behind
    return 0;
  }
  const std::size_t optin = device_facts(device).max_shared_optin;
  return optin > kStaticSharedReserve ? optin - kStaticSharedReserve : 0;
}

// Lets `kernel` use up to max_shared_bytes() of dynamic shared memory on the
// current device. Call before the occupancy query and the launch; a lookup
// after the first call on a device.
template <class Kernel>
void allow_large_shared(Kernel kernel) {
  // Asked of each kernel (not once per kernel type: kernels of one signature share a type).
  if (static_shared_bytes(kernel) > kStaticSharedReserve)
    throw Error(ErrorKind::internal, "a kernel declares more static shared memory than levelhist reserves for it");
  allow_dynamic_shared(kernel, max_shared_bytes());
}

// Blocks of `kernel` resident on the whole current device with this shared memory.
template <class Kernel>
int resident_blocks_with(Kernel kernel, int threads, std::size_t smem) {
  return resident_blocks(kernel, threads, smem);
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

// The vectors i, i + stride, ... below `vectors`, in trips of U, each trip's
// loads issued before the trip before it is handed to f(vector, index): a warp
// keeps loads in flight while it counts (docs/PERFORMANCE-general.md, section
// 13). Whole trips only; returns the first index not handed over.
template <int U, class Load, class F>
__device__ __forceinline__ std::uint64_t for_each_vector_early(std::uint64_t i, std::uint64_t stride,
                                                               std::uint64_t vectors, const Load& load, const F& f) {
  uint4 next[U];
  bool more = i + (U - 1) * stride < vectors;
  if (more) {
#pragma unroll
    for (int u = 0; u < U; ++u) next[u] = load(i + u * stride);
  }
  while (more) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = next[u];
    const std::uint64_t at = i;
    i += U * stride;
    more = i + (U - 1) * stride < vectors;
    if (more) {
#pragma unroll
      for (int u = 0; u < U; ++u) next[u] = load(i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) f(v[u], at + u * stride);
  }
  return i;
}

// ---- the maps as kernel functors ------------------------------------------------
// A map has operator()(T) -> slot, table_bytes() of shared memory for its
// tables, and setup(), which each block calls once to load them.

enum class MapKind : std::uint8_t { direct, int_shift, even, cells, generic };

// Bins of explicit edges a cell table serves (its thresholds live in shared memory).
inline constexpr std::uint64_t kMaxCellBins = 4096;

// Samples a float holds exactly (binmap::exact_in_float at run time): the
// maps that compare floats (cell tables, even thresholds) serve them.
inline bool exact_in_float(SampleType type) { return sample_size(type) <= 2 || type == SampleType::f32; }

// The map a problem uses (docs/PERFORMANCE-general.md: the cheapest exact one).
inline MapKind choose_map(SampleType type, const Binning& b) {
  if (binmap::direct_applies(type, b)) return MapKind::direct;
  if (binmap::int_shift_applies(type, b)) return MapKind::int_shift;
  if (b.kind() == BinKind::even) return MapKind::even;
  if (exact_in_float(type) && b.bins() <= kMaxCellBins) return MapKind::cells;
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

// Even bins. Samples next to an edge (every sample of data that sits on the
// edges) are decided by one exact comparison with that edge; where the kernel
// gives the map shared memory (setup), with the edges' float thresholds kept
// there (bins + 1 floats, computed by each block from the exact double
// edges), else with the edge's double arithmetic.
inline std::size_t even_table_bytes(std::uint32_t entries) {
  return entries ? round_up(std::size_t{entries} * 4, 16) : 0;
}

template <class T>
struct EvenMap {
  binmap::EvenParams p;
  std::uint32_t table_entries = 0;  // thresholds in shared memory, 0: none (make_even_map decides)
  const float* thresholds = nullptr;
  std::size_t table_bytes() const { return even_table_bytes(table_entries); }
  __device__ __forceinline__ void setup(unsigned char* smem) {
    if (!table_entries) return;
    float* t = reinterpret_cast<float*>(smem);
    for (std::uint32_t i = threadIdx.x; i < table_entries; i += blockDim.x)
      t[i] = binmap::float_at_or_above(p.ix.even_edge(i));
    thresholds = t;  // read after the kernel's barrier that follows setup
  }
  __device__ __forceinline__ std::uint32_t operator()(T x) const { return binmap::even_slot(x, p, thresholds); }

  // The same slot, remembering the last sample a thread found next to an
  // edge: a constant on an edge (Python's benchmark's 0.5 of 1024 bins over
  // [0, 1)) takes the near-edge comparison once, not on every sample, while
  // samples the guess decides pay nothing more (a test of every sample cost
  // uniform data 3-13% on an H200: docs/PERFORMANCE-general.md, section 10).
  // x starts as NaN, which equals nothing.
  struct NearEdgeMemo {
    float x = std::numeric_limits<float>::quiet_NaN();
    std::uint32_t slot = 0;
  };
  __device__ __forceinline__ std::uint32_t operator()(T x, NearEdgeMemo& memo) const {
    if constexpr (binmap::exact_in_float<T>) {
      if (p.margin) {
        const float xf = static_cast<float>(x);
        if (!p.range.inside(xf)) return p.range.outside(xf);
        const binmap::EvenGuess e = binmap::even_guess(xf, p);
        if (binmap::even_guess_decides(e, p)) return e.bin;
        if (xf != memo.x) {
          memo.x = xf;
          memo.slot = binmap::even_near_edge(x, xf, e, p, thresholds);
        }
        return memo.slot;
      }
    }
    return binmap::even_slot(x, p, thresholds);
  }
};

// Even bins of at most this many get the shared threshold table (16 KiB).
inline constexpr std::uint64_t kMaxEvenTableBins = 4096;

// Thresholds the even map `p` keeps for samples of `type` (0: none): one per
// edge where the near-edge comparison is in use and floats hold the samples.
inline std::uint32_t even_table_entries(SampleType type, const binmap::EvenParams& p) {
  if (!exact_in_float(type) || !p.margin || p.range.bins > kMaxEvenTableBins) return 0;
  return p.range.bins + 1;
}

template <class T>
EvenMap<T> make_even_map(const Binning& b) {
  EvenMap<T> m{binmap::make_even_params(b)};
  m.table_entries = even_table_entries(sample_type_of<T>(), m.p);
  return m;
}

// The table lives in the plan's device memory (prepared once per plan,
// prepare_tables below) and is copied into shared memory by every block.
template <class T>
struct CellsMap {
  binmap::CellParams p;
  const CellEntry* table;    // the plan's: p.cells entries
  const float* thresholds;   // the plan's: 2 * half floats (at least 2)
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
  // A vector's samples at once (binmap::cells_slots: their table loads in
  // flight together); the shared-histogram kernels call it where a map has it.
  template <int N>
  __device__ __forceinline__ void slots(const T (&x)[N], std::uint32_t (&s)[N]) const {
    float f[N];
#pragma unroll
    for (int k = 0; k < N; ++k) f[k] = static_cast<float>(x[k]);
    binmap::cells_slots<N>(f, s, p, table, thresholds);
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

// The most shared memory a map's tables take (the largest cell table and its
// thresholds): what the kernels' counters must leave room for.
inline constexpr std::size_t kTableRegionBytes =
    round_up(binmap::kMaxCells * sizeof(CellEntry), 256) + round_up(kMaxCellBins * sizeof(float), 256);

// Shared memory a problem's map may take beside the counters, which every
// kernel that calls the map's setup reserves: a cell table's region, an even
// map's thresholds, or nothing.
inline std::size_t map_table_bytes(const Problem& p) {
  switch (choose_map(p.type, *p.binning)) {
    case MapKind::cells: return kTableRegionBytes;
    case MapKind::even: return even_table_bytes(even_table_entries(p.type, binmap::make_even_params(*p.binning)));
    default: return 0;
  }
}

// What a plan prepares for the cell-table map of explicit edges: a header the
// host reads when it launches (the table's parameters), then the entries and
// the thresholds, which the kernels read from device memory.
struct PreparedCells {
  binmap::CellParams params;
  std::uint32_t threshold_count;
};
inline constexpr std::size_t kPreparedHeaderBytes = 256;
static_assert(sizeof(PreparedCells) <= kPreparedHeaderBytes);
inline constexpr std::size_t kPreparedThresholdsOffset =
    kPreparedHeaderBytes + round_up(binmap::kMaxCells * sizeof(CellEntry), 256);
inline constexpr std::size_t kPreparedCellsBytes = kPreparedThresholdsOffset + round_up(kMaxCellBins * sizeof(float), 256);

// Strategy::prepared_bytes and Strategy::prepare of the strategies that use
// these maps: a cell table for explicit edges, nothing for the other maps.
inline std::size_t prepared_tables_bytes(const Problem& p) {
  return choose_map(p.type, *p.binning) == MapKind::cells ? kPreparedCellsBytes : 0;
}
inline void prepare_tables(const Problem& p, void* host) {
  if (choose_map(p.type, *p.binning) != MapKind::cells) return;
  const binmap::CellTable t = binmap::build_cell_table(*p.binning);
  auto* out = static_cast<unsigned char*>(host);
  std::memset(out, 0, kPreparedCellsBytes);
  const PreparedCells header{t.params, static_cast<std::uint32_t>(t.thresholds.size())};
  std::memcpy(out, &header, sizeof header);
  std::memcpy(out + kPreparedHeaderBytes, t.entries.data(), t.entries.size() * sizeof(CellEntry));
  std::memcpy(out + kPreparedThresholdsOffset, t.thresholds.data(), t.thresholds.size() * sizeof(float));
}

// Builds the map of `kind` for samples of T on a's binning and calls
// launch(map) with it. A cell table comes from what the plan prepared
// (RunArgs::prepared, its host copy RunArgs::prepared_host for the parameters).
template <class T, class Launch>
void with_map(const RunArgs& a, MapKind kind, Launch&& launch) {
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
      launch(make_even_map<T>(b));
      return;
    case MapKind::cells:
      if constexpr (binmap::exact_in_float<T>) {
        if (!a.prepared || !a.prepared_host)
          throw Error(ErrorKind::internal, "the cell table was not prepared (run a strategy through a Plan)");
        PreparedCells header;
        std::memcpy(&header, a.prepared_host, sizeof header);
        const auto* region = static_cast<const unsigned char*>(a.prepared);
        launch(CellsMap<T>{header.params, reinterpret_cast<const CellEntry*>(region + kPreparedHeaderBytes),
                           reinterpret_cast<const float*>(region + kPreparedThresholdsOffset), header.threshold_count});
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

}  // namespace levelhist::cuda_detail::general
