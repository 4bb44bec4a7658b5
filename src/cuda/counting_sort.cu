// Counting sort on the GPU (cuda_sort.hpp; Wilt part 1: "emit a sorted list
// by sweeping across the histogram bins [0..k-1] and using the count in the
// histogram bin to emit that number of elements").
//
// 1. Counts: levelhist::cuda::histogram with one bin per value and the
//    strategy `auto` picks for the type and n, so the sort counts as fast as
//    the library's histogram does (no kernel of its own).
// 2. Run starts: cub::DeviceScan::ExclusiveSum of the 256 or 65536 counts.
// 3. Expansion, this file's kernel. The output is cut into chunks of 16 KiB,
//    one per block. Thread 0 finds the values at the chunk's first and last
//    position by binary search in the run starts; every thread then fills
//    16-byte vectors (16 u8 or 8 u16 samples) at consecutive addresses across
//    the warp, so the stores coalesce. A thread searches again only when its
//    position leaves the current run, and only within the chunk's values: with
//    n >> k (the usual case) that is a compare per sample; with n ~ k it is a
//    short search in a few cached starts. Empty values cost nothing: the
//    search for "the last start <= p" skips them.
// The head of an output that is not 16-byte aligned and the tail of a partial
// vector are written one sample at a time; an output not even aligned to its
// sample size gets the scalar kernel (byte stores) throughout.
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <string>
#include <type_traits>

#include "cuda/cuda_common.cuh"
#include "levelhist/cuda.hpp"
#include "levelhist/cuda_sort.hpp"
#include "levelhist/error.hpp"
#include "levelhist/levelhist.hpp"
#include "levelhist/sort.hpp"

namespace levelhist::cuda {
namespace {

using u64 = std::uint64_t;
using namespace cuda_detail;

constexpr int kThreads = 256;
constexpr int kVectorsPerThread = 4;  // a block's chunk: 256 x 4 vectors of 16 bytes = 16 KiB
constexpr u64 kVectorsPerBlock = u64{kThreads} * kVectorsPerThread;

constexpr std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// The largest v in [lo, hi] whose run starts at or before p (starts ascending,
// starts[0] = 0 <= p): the value of output position p.
__device__ __forceinline__ int value_at(const u64* __restrict__ starts, u64 p, int lo, int hi) {
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (__ldg(starts + mid) <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Positions head + j*V .. head + j*V + V-1 of vector j for the vectors of this
// block; V = 16 / sizeof(T) (vector stores) or 1 (byte stores, misaligned T).
template <class T, int V>
__global__ void __launch_bounds__(kThreads) expand_runs_kernel(const u64* __restrict__ starts, int bins, u64 n,
                                                               unsigned char* out, u64 head, u64 vectors, int lower) {
  __shared__ int chunk_values[2];
  const u64 first = u64{blockIdx.x} * kVectorsPerBlock;
  const u64 last = min(first + kVectorsPerBlock, vectors) - 1;
  if (threadIdx.x == 0) {
    chunk_values[0] = value_at(starts, head + first * V, 0, bins - 1);
    chunk_values[1] = value_at(starts, head + last * V + (V - 1), chunk_values[0], bins - 1);
  }
  __syncthreads();
  const int lo = chunk_values[0], hi = chunk_values[1];
  for (int k = 0; k < kVectorsPerThread; ++k) {
    const u64 j = first + static_cast<u64>(k) * kThreads + threadIdx.x;
    if (j > last) break;
    const u64 p0 = head + j * V;
    int v = value_at(starts, p0, lo, hi);
    u64 run_end = v + 1 < bins ? __ldg(starts + v + 1) : n;
    if constexpr (V == 1) {
      const T value = static_cast<T>(lower + v);
      memcpy(out + p0 * sizeof(T), &value, sizeof(T));
    } else {
      // Two 64-bit halves of the vector, built in registers. Usually the whole
      // vector lies in one run: the value's bit pattern, replicated. Else the
      // samples one by one (a loop not unrolled, so the value search, and with
      // it the code, appears once).
      constexpr int kBits = 8 * sizeof(T), kPerHalf = 64 / kBits;
      auto pattern = [](int value) {
        u64 bits = static_cast<std::make_unsigned_t<T>>(static_cast<T>(value));
        for (int shift = kBits; shift < 64; shift <<= 1) bits |= bits << shift;
        return bits;
      };
      u64 half[2];
      if (p0 + V <= run_end) {
        half[0] = half[1] = pattern(lower + v);
      } else {
        u64 low = 0, high = 0;
#pragma unroll 1
        for (int e = 0; e < V; ++e) {
          if (p0 + e >= run_end) {
            v = value_at(starts, p0 + e, v + 1, hi);
            run_end = v + 1 < bins ? __ldg(starts + v + 1) : n;
          }
          const u64 bits = static_cast<std::make_unsigned_t<T>>(static_cast<T>(lower + v));
          if (e < kPerHalf) low |= bits << (kBits * e);
          else high |= bits << (kBits * (e - kPerHalf));
        }
        half[0] = low;
        half[1] = high;
      }
      reinterpret_cast<ulonglong2*>(out + head * sizeof(T))[j] = make_ulonglong2(half[0], half[1]);
    }
  }
}

// The samples outside whole vectors: the head before the first 16-byte
// boundary and the tail after the last whole vector (at most 30 samples).
template <class T>
__global__ void expand_edges_kernel(const u64* __restrict__ starts, int bins, u64 n, T* out, u64 head,
                                    u64 tail_begin, int lower) {
  const u64 t = threadIdx.x;
  const u64 p = t < head ? t : tail_begin + (t - head);
  if (p >= n || (t >= head && p < tail_begin)) return;
  out[p] = static_cast<T>(lower + value_at(starts, p, 0, bins - 1));
}

template <class T>
void expand(const u64* d_starts, int bins, u64 n, void* d_out, int lower, cudaStream_t stream) {
  auto* out = static_cast<unsigned char*>(d_out);
  const auto addr = reinterpret_cast<std::uintptr_t>(out);
  if (addr % sizeof(T) != 0) {  // samples straddle their natural alignment: byte stores
    const u64 blocks = (n + kVectorsPerBlock - 1) / kVectorsPerBlock;
    expand_runs_kernel<T, 1><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(d_starts, bins, n, out, 0, n, lower);
    LEVELHIST_CUDA_CHECK_LAUNCH();
    return;
  }
  constexpr int V = 16 / sizeof(T);
  const u64 head = std::min<u64>(n, (16 - addr % 16) % 16 / sizeof(T));
  const u64 vectors = (n - head) / V, tail_begin = head + vectors * V;
  if (vectors) {
    const u64 blocks = (vectors + kVectorsPerBlock - 1) / kVectorsPerBlock;
    expand_runs_kernel<T, V><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(d_starts, bins, n, out, head,
                                                                                   vectors, lower);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  }
  if (head || tail_begin < n) {
    expand_edges_kernel<T><<<1, 32, 0, stream>>>(d_starts, bins, n, reinterpret_cast<T*>(out), head, tail_begin, lower);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  }
}

// Where the parts of the temporary storage lie: the histogram workspace first
// (zero on entry, left zero by the strategy: cuda.hpp), then the counters, the
// run starts and CUB's scan storage (cleared at the end of every call).
struct Layout {
  const Strategy* strategy;
  std::size_t workspace, slots, starts, scan, total;
};

Layout layout_of(SampleType type, const Binning& binning, u64 n) {
  Layout l{};
  const Problem problem{type, &binning, std::max<u64>(n, 1)};
  l.strategy = &choose_strategy(problem, Backend::cuda);
  l.workspace = round_up(std::max<std::size_t>(workspace_bytes(problem, l.strategy), 1));
  l.slots = round_up(binning.slots() * sizeof(u64));
  l.starts = round_up(binning.bins() * sizeof(u64));
  LEVELHIST_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, l.scan, static_cast<const u64*>(nullptr),
                                                     static_cast<u64*>(nullptr), static_cast<int>(binning.bins())));
  l.scan = round_up(std::max<std::size_t>(l.scan, 1));
  l.total = l.workspace + l.slots + l.starts + l.scan;
  return l;
}

}  // namespace

void counting_sort(void* d_temp, std::size_t& temp_bytes, SampleType type, const void* d_in, void* d_out, u64 n,
                   void* stream) {
  if (!counting_sort_supports(type))
    throw Error(ErrorKind::usage, "counting_sort takes u8, i8, u16 or i16 samples, not " + std::string(to_string(type)));
  const Binning binning = Binning::per_value(type);
  const Layout l = layout_of(type, binning, n);
  if (d_temp == nullptr) {
    temp_bytes = l.total;
    return;
  }
  if (temp_bytes < l.total)
    throw Error(ErrorKind::usage, "counting_sort: the temporary storage is too small: " + std::to_string(temp_bytes) +
                                      " bytes given, " + std::to_string(l.total) + " needed");
  if (n == 0) return;
  auto* base = static_cast<unsigned char*>(d_temp);
  auto* d_slots = reinterpret_cast<u64*>(base + l.workspace);
  auto* d_starts = reinterpret_cast<u64*>(base + l.workspace + l.slots);
  void* d_scan = base + l.workspace + l.slots + l.starts;
  const auto s = static_cast<cudaStream_t>(stream);
  histogram(base, l.workspace, d_in, n, type, binning, d_slots, false, stream, l.strategy);
  std::size_t scan_bytes = l.scan;
  LEVELHIST_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_scan, scan_bytes, d_slots, d_starts,
                                                     static_cast<int>(binning.bins()), s));
  const int bins = static_cast<int>(binning.bins()), lower = static_cast<int>(binning.lower());
  visit_sample_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) expand<T>(d_starts, bins, n, d_out, lower, s);
  });
  // The counters, run starts and CUB's storage back to zero (about 1 MiB for
  // 16-bit types): the next call may be of another type or size, whose
  // histogram workspace then overlaps what this one used as scratch.
  LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_slots, 0, l.slots + l.starts + l.scan, s));
}

}  // namespace levelhist::cuda
