// cub: CUB's DeviceHistogram behind the Strategy interface, the external
// baseline every levelhist kernel is measured against in the same run. Never
// auto's choice.
//
// CUB counts into 32-bit counters, drops samples outside [lower, upper) and
// has no underflow/overflow/NaN counters, and its HistogramEven computes bins
// with its own arithmetic. So that its counts are levelhist's counts slot for
// slot, each problem is handed to CUB in one of five ways:
//   * byte_values (u8, i8; any binning): HistogramEven over the 256 byte values
//     (257 levels on [0, 256): CUB's own 8-bit path, one privatized 256-bin
//     histogram), then a kernel adds each value's count into slots[slot(value)],
//     underflow/overflow included. i8 samples go to CUB as their bytes: CUB's
//     8-bit path would cast a signed char to a negative bin.
//   * even_integer_levels (16/32-bit integers; even bins with integer bounds
//     whose range is a multiple of the bin count, e.g. u16 in 4096 or 65536
//     bins over [0, 65536)): HistogramEven with 64-bit integer levels. CUB then
//     computes floor((x - lower) * bins / range) exactly, and levelhist's edges
//     lower + i * step are exact integers, so both give floor((x - lower) / step).
//   * word_values (u16, i16; any other binning): as byte_values, over the 65536
//     values of a 16-bit word (HistogramEven, 65537 levels on [0, 65536)); also
//     i16 in more than 32768 bins (per value, say), which CUB's even path gets
//     wrong (bin_indices_fit below).
//   * even_float_levels (f32, f64; even bins over [0, upper) whose width is a
//     power of two, e.g. 1024 bins over [0, 1)): HistogramEven with double
//     levels. CUB computes int((x - 0) * (bins / upper)): x - 0 is exact, bins /
//     upper = 2^-e exactly, so the product is exact (or below 1 where it
//     underflows) and truncation is floor; levelhist's edges i * 2^e are exact.
//   * range_levels (32-bit and float samples otherwise, explicit edges
//     included): HistogramRange with levelhist's own edges as double levels;
//     CUB's binary search picks the last level <= x, levelhist's rule for
//     half-open bins.
// Where CUB's float HistogramEven would disagree with levelhist's edges (any
// other range: x - lower rounds), the range search is used instead, which is
// slower than CUB's even path: the price of exact results.
// In the two level modes CUB drops the samples outside [lower, upper); one
// more pass over the samples counts those into underflow, overflow, NaN and
// (numpy's rule) the last bin. It is skipped when the bins cover every value
// of an integer type (u16 in 4096 bins over [0, 65536), say).
//
// CUB is called with 32-bit sample offsets, at most 2^30 samples a call (a
// 2^31-sample call is two CUB calls; its 64-bit-offset kernels are never
// instantiated). Its 32-bit counts and temp storage live in the workspace; a
// fold kernel adds the counts into the 64-bit slots and clears them, and CUB's
// temp storage is cleared with cudaMemsetAsync (the workspace contract).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cub/device/device_histogram.cuh>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "lab.hpp"
#include "cuda/cuda_common.cuh"
#include "levelhist/error.hpp"

namespace levelhist::strategies {
namespace {

using namespace cuda_detail;

enum class CubMode : std::uint8_t { byte_values, word_values, even_integer_levels, even_float_levels, range_levels };

// CUB privatizes more than 256 bins in global memory, one copy per block of its
// grid (blocks x bins x 4 bytes of temp storage, about 270 MiB for 65536 bins on
// an H100). The baseline is kept to the bin counts it is measured on.
constexpr std::uint64_t kMaxCubBins = 65536;
constexpr std::uint64_t kMaxSamplesPerCubCall = std::uint64_t{1} << 30;
constexpr unsigned kFoldThreads = 256;
constexpr unsigned kOutsideThreads = 256;
constexpr unsigned kOutsideSamplesPerThread = 8;  // sizes the pass's grid for small n

std::size_t round_up_256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// Even bins whose edges are exact integers and whose CUB bin arithmetic cannot
// overflow (range * bins < 2^64).
bool integer_levels_are_exact(const Binning& b) {
  const double lower = b.lower(), upper = b.upper();
  constexpr double kLimit = 4503599627370496.0;  // 2^52: differences of such integers are exact
  if (std::floor(lower) != lower || std::floor(upper) != upper) return false;
  if (std::fabs(lower) > kLimit || std::fabs(upper) > kLimit) return false;
  const double range = upper - lower;
  if (range > 1099511627776.0) return false;  // 2^40
  return static_cast<std::uint64_t>(range) % b.bins() == 0;
}

// Even bins over [0, upper) whose width is a power of two that bins * width == upper.
bool power_of_two_levels_from_zero(const Binning& b) {
  if (b.lower() != 0.0) return false;
  const double step = b.upper() / static_cast<double>(b.bins());
  int exponent = 0;
  if (std::frexp(step, &exponent) != 0.5 || exponent < -1000 || exponent > 1000) return false;
  return step * static_cast<double>(b.bins()) == b.upper();
}

// CUB's last step (AgentHistogram::StoreOutput) casts every bin index to the
// sample type, (SampleT) privatized_bin, before PassThruTransform turns it
// back into an int: with more than 32768 bins an i16 index wraps negative and
// its count is silently dropped. So the indices 0..bins-1 must fit the type.
bool bin_indices_fit(SampleType type, std::uint64_t bins) {
  return visit_sample_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return bins - 1 <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    return bins - 1 < (std::uint64_t{1} << std::numeric_limits<T>::digits);  // exact in a float
  });
}

CubMode mode_for(SampleType type, const Binning& b) {
  if (sample_size(type) == 1) return CubMode::byte_values;
  if (b.kind() == BinKind::even && b.bins() <= kMaxCubBins && bin_indices_fit(type, b.bins())) {
    if (is_integer(type) && integer_levels_are_exact(b)) return CubMode::even_integer_levels;
    if (!is_integer(type) && power_of_two_levels_from_zero(b)) return CubMode::even_float_levels;
  }
  return sample_size(type) == 2 ? CubMode::word_values : CubMode::range_levels;
}

bool counts_values(CubMode mode) { return mode == CubMode::byte_values || mode == CubMode::word_values; }

// Whether any sample of `type` can fall outside [lower, upper).
bool can_fall_outside(SampleType type, const Binning& b) {
  return visit_sample_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>)
      return !(b.lower() <= static_cast<double>(std::numeric_limits<T>::min()) &&
               b.upper() > static_cast<double>(std::numeric_limits<T>::max()));
    return true;
  });
}

// ---- kernels --------------------------------------------------------------------

// levels[i] = edge i, by the same arithmetic as BinIndexer::slot.
__global__ void write_even_levels_kernel(double* levels, BinIndexer ix) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i <= ix.bins) levels[i] = ix.even_edge(i);
}

// byte_values / word_values: adds the count of each value's bit pattern into
// the slot of the sample with that pattern, and clears the count.
template <class T>
__global__ void fold_value_counts_kernel(unsigned int* counts, BinIndexer ix, std::uint64_t* slots) {
  using Bits = std::make_unsigned_t<T>;
  const std::uint64_t v = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (v > std::numeric_limits<Bits>::max()) return;
  const unsigned int count = counts[v];
  if (count == 0) return;
  counts[v] = 0u;
  const T sample = static_cast<T>(static_cast<Bits>(v));  // signed: the value with this bit pattern
  add_to_slot(slots + ix.slot(static_cast<double>(sample)), count);
}

// The other modes: adds CUB's count of bin i into slot i and clears it, and
// clears the levels this strategy wrote (nullptr when it wrote none).
__global__ void fold_bin_counts_kernel(unsigned int* counts, std::uint64_t bins, double* levels, std::uint64_t* slots) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < bins) {
    const unsigned int count = counts[i];
    if (count) {
      add_to_slot(slots + i, count);
      counts[i] = 0u;
    }
  }
  if (levels && i <= bins) levels[i] = 0.0;
}

// Counts what CUB dropped: the samples outside [lower, upper). slot() maps such
// a sample to one of four consecutive slots: bins-1 (x == upper under numpy's
// rule), underflow, overflow, NaN.
template <class T, bool Aligned>
__global__ void __launch_bounds__(kOutsideThreads)
    count_outside_range_kernel(const void* samples, std::uint64_t n, BinIndexer ix, std::uint64_t* slots) {
  __shared__ unsigned int block_counts[4];
  if (threadIdx.x < 4) block_counts[threadIdx.x] = 0u;
  __syncthreads();
  unsigned int at_upper = 0, underflow = 0, overflow = 0, nan = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double x = static_cast<double>(load_sample<T, Aligned>(samples, i));
    if (x >= ix.lower && x < ix.upper) continue;  // CUB counted it
    const std::uint64_t slot = ix.slot(x);
    if (slot == ix.underflow_slot())
      ++underflow;
    else if (slot == ix.overflow_slot())
      ++overflow;
    else if (slot == ix.nan_slot())
      ++nan;
    else
      ++at_upper;
  }
  const unsigned int mine[4] = {at_upper, underflow, overflow, nan};
#pragma unroll
  for (int k = 0; k < 4; ++k)
    if (mine[k]) atomicAdd(&block_counts[k], mine[k]);
  __syncthreads();
  if (threadIdx.x < 4) add_to_slot(slots + (ix.bins - 1) + threadIdx.x, block_counts[threadIdx.x]);
}

// ---- CUB calls ------------------------------------------------------------------

// Reads sample i of an array not aligned to sizeof(T): CUB would dereference
// a T* (a misaligned access); through this iterator it reads bytes.
template <class T>
struct UnalignedLoad {
  const unsigned char* bytes;
  __host__ __device__ T operator()(std::int64_t i) const {
    T value;
    memcpy(&value, bytes + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    return value;
  }
};
template <class T>
using UnalignedSamples = thrust::transform_iterator<UnalignedLoad<T>, thrust::counting_iterator<std::int64_t>>;

template <class T>
UnalignedSamples<T> unaligned_samples(const void* samples) {
  return UnalignedSamples<T>(thrust::counting_iterator<std::int64_t>(0),
                             UnalignedLoad<T>{static_cast<const unsigned char*>(samples)});
}

// One CUB call (a size query when temp is nullptr) on n <= 2^30 samples of T
// read through `samples` (a pointer, or UnalignedSamples). For the value modes
// T is the unsigned type of the samples' width: CUB counts bit patterns.
template <class SampleIt>
cudaError_t histogram_with_cub(CubMode mode, void* temp, std::size_t& temp_bytes, SampleIt samples,
                               unsigned int* counts, const Binning& b, const double* levels, int n,
                               cudaStream_t stream) {
  using T = cub::detail::it_value_t<SampleIt>;
  const int num_levels = static_cast<int>(b.bins() + 1);
  if (counts_values(mode)) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) <= 2) {
      constexpr int kValues = 1 << (8 * sizeof(T));
      return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, samples, counts, kValues + 1, 0, kValues, n, stream);
    }
  } else if (mode == CubMode::even_integer_levels) {
    if constexpr (std::is_integral_v<T> && sizeof(T) > 1)
      return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, samples, counts, num_levels,
                                                 static_cast<long long>(b.lower()), static_cast<long long>(b.upper()),
                                                 n, stream);
  } else if (mode == CubMode::even_float_levels) {
    if constexpr (std::is_floating_point_v<T>)
      return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, samples, counts, num_levels, b.lower(), b.upper(), n,
                                                 stream);
  } else if (mode == CubMode::range_levels) {
    if constexpr (sizeof(T) >= 4)
      return cub::DeviceHistogram::HistogramRange(temp, temp_bytes, samples, counts, num_levels, levels, n, stream);
  }
  return cudaErrorInvalidValue;  // a mode that does not fit T: mode_for never picks one
}

// Calls f.template operator()<C, Aligned>() with the type CUB reads for this
// problem (the sample type, or for the value modes the unsigned type of its
// width) and whether the samples are aligned to it: the few combinations of
// sample type and mode that are instantiated.
template <class F>
void dispatch_cub_type(SampleType type, CubMode mode, const void* samples, F&& f) {
  visit_sample_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto with_alignment = [&]<class C>() {
      if (reinterpret_cast<std::uintptr_t>(samples) % sizeof(C) == 0)
        f.template operator()<C, true>();
      else if constexpr (sizeof(C) > 1)
        f.template operator()<C, false>();
    };
    if constexpr (sizeof(T) <= 2) {
      if (counts_values(mode)) {
        with_alignment.template operator()<std::make_unsigned_t<T>>();  // bit patterns
        return;
      }
    }
    with_alignment.template operator()<T>();
  });
}

template <class C, bool Aligned>
auto cub_input(const void* samples) {
  if constexpr (Aligned)
    return static_cast<const C*>(samples);
  else
    return unaligned_samples<C>(samples);
}

// CUB's temp storage for this problem: the larger of the aligned (pointer)
// and unaligned (iterator) instantiations, since their grids may differ.
std::size_t cub_temp_bytes(SampleType type, const Binning& b, std::uint64_t n) {
  const CubMode mode = mode_for(type, b);
  const int count = static_cast<int>(std::min(n, kMaxSamplesPerCubCall));
  std::size_t bytes = 0;
  for (std::uintptr_t address : {std::uintptr_t{256}, std::uintptr_t{257}}) {
    dispatch_cub_type(type, mode, reinterpret_cast<const void*>(address), [&]<class C, bool Aligned>() {
      std::size_t needed = 0;
      LEVELHIST_CUDA_CHECK(histogram_with_cub(mode, nullptr, needed, cub_input<C, Aligned>(nullptr), nullptr, b,
                                              nullptr, count, nullptr));
      bytes = std::max(bytes, needed);
    });
  }
  return bytes;
}

// The workspace: CUB's 32-bit counts, the even levels (range_levels on even
// bins only), CUB's temp storage; each part 256-byte aligned.
struct Layout {
  std::size_t counts_bytes = 0;
  std::size_t levels_bytes = 0;
  std::size_t temp_offset = 0;
};

// CUB's counters: one per bit pattern in the value modes, else one per bin.
std::uint64_t cub_counters(SampleType type, CubMode mode, const Binning& b) {
  return counts_values(mode) ? std::uint64_t{1} << (8 * sample_size(type)) : b.bins();
}

Layout layout_for(SampleType type, const Binning& b) {
  Layout l;
  const CubMode mode = mode_for(type, b);
  l.counts_bytes = round_up_256(cub_counters(type, mode, b) * sizeof(unsigned int));
  if (mode == CubMode::range_levels && b.kind() == BinKind::even)
    l.levels_bytes = round_up_256((b.bins() + 1) * sizeof(double));
  l.temp_offset = l.counts_bytes + l.levels_bytes;
  return l;
}

// ---- the strategy functions -------------------------------------------------------

bool supports(const Problem& problem, std::string* why_not) {
  if (counts_values(mode_for(problem.type, *problem.binning)) || problem.binning->bins() <= kMaxCubBins) return true;
  if (why_not)
    *why_not = "above " + std::to_string(kMaxCubBins) +
               " bins CUB keeps one privatized copy per block in global memory (temp storage of blocks x bins x 4 "
               "bytes); the baseline is limited to the bin counts it is measured on";
  return false;
}

std::size_t workspace_bytes(const Problem& problem) {
  return layout_for(problem.type, *problem.binning).temp_offset +
         cub_temp_bytes(problem.type, *problem.binning, problem.n);
}

template <class T, bool Aligned>
void count_outside_range(const RunArgs& a) {
  auto kernel = count_outside_range_kernel<T, Aligned>;
  const std::uint64_t per_block = std::uint64_t{kOutsideThreads} * kOutsideSamplesPerThread;
  const std::uint64_t grid = std::min<std::uint64_t>(
      (a.n + per_block - 1) / per_block, static_cast<std::uint64_t>(resident_blocks(kernel, kOutsideThreads)));
  kernel<<<static_cast<unsigned int>(grid), kOutsideThreads, 0, stream_of(a)>>>(a.samples, a.n, a.indexer, a.slots);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

void run(const RunArgs& a) {
  clear_slots_unless_accumulating(a);
  if (a.n == 0) return;
  const Binning& b = *a.binning;
  const CubMode mode = mode_for(a.type, b);
  const Layout layout = layout_for(a.type, b);
  const cudaStream_t stream = stream_of(a);
  auto* workspace = static_cast<unsigned char*>(a.workspace);
  auto* counts = reinterpret_cast<unsigned int*>(workspace);
  double* own_levels = layout.levels_bytes ? reinterpret_cast<double*>(workspace + layout.counts_bytes) : nullptr;
  void* temp = workspace + layout.temp_offset;
  if (a.workspace_bytes < layout.temp_offset)
    throw Error(ErrorKind::internal, "cub: the workspace is smaller than workspace_bytes() said");
  const std::size_t temp_available = a.workspace_bytes - layout.temp_offset;

  const double* levels = a.indexer.edges;  // explicit edges: already on the device
  if (own_levels) {
    const auto blocks = static_cast<unsigned int>((b.bins() + 1 + kFoldThreads - 1) / kFoldThreads);
    write_even_levels_kernel<<<blocks, kFoldThreads, 0, stream>>>(own_levels, a.indexer);
    LEVELHIST_CUDA_CHECK_LAUNCH();
    levels = own_levels;
  }
  const std::uint64_t counters = cub_counters(a.type, mode, b);
  const auto fold_blocks = static_cast<unsigned int>((counters + 1 + kFoldThreads - 1) / kFoldThreads);
  std::size_t temp_used = 0;
  dispatch_cub_type(a.type, mode, a.samples, [&]<class C, bool Aligned>() {
    for (std::uint64_t done = 0; done < a.n; done += kMaxSamplesPerCubCall) {
      const int count = static_cast<int>(std::min(a.n - done, kMaxSamplesPerCubCall));
      const auto input = cub_input<C, Aligned>(static_cast<const unsigned char*>(a.samples) + done * sizeof(C));
      // Ask CUB how much temp storage this call uses (exactly that much is
      // cleared at the end), then run it.
      std::size_t needed = 0;
      LEVELHIST_CUDA_CHECK(histogram_with_cub(mode, nullptr, needed, input, counts, b, levels, count, stream));
      if (needed > temp_available)
        throw Error(ErrorKind::internal, "cub: CUB needs " + std::to_string(needed) +
                                             " bytes of temp storage, the workspace has " +
                                             std::to_string(temp_available));
      std::size_t given = temp_available;
      LEVELHIST_CUDA_CHECK(histogram_with_cub(mode, temp, given, input, counts, b, levels, count, stream));
      temp_used = std::max(temp_used, needed);
      if (counts_values(mode)) {
        if constexpr (std::is_unsigned_v<C> && sizeof(C) <= 2) {
          // CUB counted bit patterns; signed samples read them as their own type.
          using Signed = std::make_signed_t<C>;
          if (is_integer(a.type) && a.type != sample_type_of<C>())
            fold_value_counts_kernel<Signed><<<fold_blocks, kFoldThreads, 0, stream>>>(counts, a.indexer, a.slots);
          else
            fold_value_counts_kernel<C><<<fold_blocks, kFoldThreads, 0, stream>>>(counts, a.indexer, a.slots);
        }
      } else {
        // The levels are cleared after the last call only.
        double* clear_levels = done + kMaxSamplesPerCubCall >= a.n ? own_levels : nullptr;
        fold_bin_counts_kernel<<<fold_blocks, kFoldThreads, 0, stream>>>(counts, b.bins(), clear_levels, a.slots);
      }
      LEVELHIST_CUDA_CHECK_LAUNCH();
    }
  });
  if (!counts_values(mode) && can_fall_outside(a.type, b)) {
    dispatch_type_and_alignment(a, [&]<class T, bool Aligned>() { count_outside_range<T, Aligned>(a); });
  }
  if (temp_used) LEVELHIST_CUDA_CHECK(cudaMemsetAsync(temp, 0, temp_used, stream));
}

std::vector<std::uint64_t> boundary_sizes(const Problem&) {
  // The out-of-range pass: one block's samples, and its first grid-stride wrap
  // is device-dependent; CUB's own tiles are its business.
  return {kOutsideThreads, std::uint64_t{kOutsideThreads} * kOutsideSamplesPerThread};
}


}  // namespace

const Strategy cub{"cub",
                   Backend::cuda,
                   "CUB DeviceHistogram (HistogramEven where CUB's arithmetic is exact, else HistogramRange on the "
                   "exact edges) plus a pass for underflow/overflow/NaN: the baseline",
                   "NVIDIA CUB, cub::DeviceHistogram (HistogramEven, HistogramRange); the aim of level "
                   "performance: Wilt part 1",
                   supports,
                   workspace_bytes,
                   run,
                   boundary_sizes};

}  // namespace levelhist::strategies
