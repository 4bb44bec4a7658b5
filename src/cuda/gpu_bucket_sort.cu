// gpu_bucket_sort: u32/i32 keys into huge numbers of even bins (2^20, 2^24,
// up to kMaxBins), where no histogram fits in shared memory and one global
// atomic per key runs at the L2 atomic rate (the H200 study: 5-402 GB/s).
//
// The keys are sorted by their top 8 bits only (one CUB onesweep pass, into
// the workspace), so each of the 256 buckets is a contiguous run of keys whose
// values span 2^24 consecutive integers, i.e. a window of at most
// 2^24 / 2^k + 1 consecutive bins (bin width 2^k). Each block takes an equal
// slice of the sorted keys and, for every bucket run in it, counts the run
// into a shared histogram of that window (windows wider than ~40 K counters
// are counted in two or more passes over the run, which is cheaper than a
// second sort pass), then adds the window into 32-bit per-call accumulators.
// A fold kernel adds those into the 64-bit slots. i32 keys sort as their bit
// patterns: a run never crosses the sign, so it is still a contiguous range.
//
// The input is sorted in chunks of 2^25 keys (128 MiB of workspace per key
// buffer); the workspace (keys, CUB's temporary storage, accumulators) is
// cleared again at the end of each call.
//
// The design study ran the same idea with a 6-bit sort (2^20 bins: 516-640
// GB/s, 1.7-8.6x CUB, 2.5-3x sort + reduce_by_key) and crashed on 2^24 bins:
// not in this kernel but in CUB's HistogramEven, whose privatized-histogram
// offset blockId * num_bins is a 32-bit int (396 blocks x 2^24 bins > 2^31;
// NVIDIA/cub#288). docs/PERFORMANCE-general.md.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bin_maps.hpp"
#include "core/strategies.hpp"
#include "cuda/cuda_common.cuh"
#include "cuda/general_common.cuh"
#include "cuda/int_keys.cuh"

namespace levelhist::strategies {
namespace {

using cuda_detail::stream_of;
using cuda_detail::general::round_up;

struct BucketPolicy {
  static constexpr int kThreads = 1024;
  static constexpr int kBucketBits = 8;  // one onesweep pass
  static constexpr int kShift = 32 - kBucketBits;
  static constexpr std::uint64_t kChunkKeys = std::uint64_t{1} << 25;
  static constexpr std::uint32_t kMaxWindow = 40 * 1024;  // counters per pass over a run (160 KB)
  static constexpr int kFoldThreads = 256;
};

using cuda_detail::KeyShiftMap;

struct BucketArgs {
  const unsigned* keys;  // sorted by their top 8 bits
  std::uint64_t m;
  std::uint64_t per_block;
  KeyShiftMap map;
  bool is_signed;
  std::uint32_t window;  // shared counters per pass
  unsigned* accum;
};

__global__ void __launch_bounds__(BucketPolicy::kThreads) bucket_kernel(BucketArgs a) {
  extern __shared__ unsigned h[];
  __shared__ unsigned outside[2];  // underflow, overflow of this block
  const std::uint64_t c0 = std::uint64_t{blockIdx.x} * a.per_block;
  const std::uint64_t c1 = min(a.m, c0 + a.per_block);
  if (c0 >= c1) return;  // the whole block
  if (threadIdx.x < 2) outside[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t bins = a.map.bins;
  unsigned under = 0, over = 0;
  std::uint64_t pos = c0;
  while (pos < c1) {
    const unsigned q = a.keys[pos] >> BucketPolicy::kShift;
    std::uint64_t end = c1;
    if ((a.keys[c1 - 1] >> BucketPolicy::kShift) != q) {  // the first key of a later bucket, by bisection
      std::uint64_t lo = pos, hi = c1 - 1;                 // keys[lo] in q, keys[hi] beyond
      while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if ((a.keys[mid] >> BucketPolicy::kShift) == q) lo = mid;
        else hi = mid;
      }
      end = hi;
    }
    const unsigned first_bits = q << BucketPolicy::kShift, last_bits = first_bits | ((1u << BucketPolicy::kShift) - 1);
    const std::uint32_t s_first = a.map(cuda_detail::key_value(first_bits, a.is_signed));
    const std::uint32_t s_last = a.map(cuda_detail::key_value(last_bits, a.is_signed));
    if (s_last == bins) {  // the whole run is below the range
      if (threadIdx.x == 0) under += static_cast<unsigned>(end - pos);
    } else if (s_first == bins + 1) {  // the whole run is above it
      if (threadIdx.x == 0) over += static_cast<unsigned>(end - pos);
    } else {
      const std::uint32_t b_first = s_first < bins ? s_first : 0;
      const std::uint32_t b_last = s_last < bins ? s_last : bins - 1;
      for (std::uint32_t w0 = b_first; w0 <= b_last; w0 += a.window) {
        const std::uint32_t width = min(a.window, b_last - w0 + 1);
        for (std::uint32_t j = threadIdx.x; j < width; j += blockDim.x) h[j] = 0;
        __syncthreads();
        const bool first_pass = w0 == b_first;
        auto count = [&](unsigned bits) {
          const std::uint32_t s = a.map(cuda_detail::key_value(bits, a.is_signed));
          const std::uint32_t j = s - w0;
          if (j < width) atomicAdd(h + j, 1u);
          else if (first_pass && s >= bins) (s == bins ? under : over) += 1;
        };
        constexpr std::uint64_t B = BucketPolicy::kThreads;
        std::uint64_t i = pos + threadIdx.x;
        for (; i + 3 * B < end; i += 4 * B) {
          const unsigned k0 = __ldcs(a.keys + i), k1 = __ldcs(a.keys + i + B), k2 = __ldcs(a.keys + i + 2 * B),
                         k3 = __ldcs(a.keys + i + 3 * B);
          count(k0);
          count(k1);
          count(k2);
          count(k3);
        }
        for (; i < end; i += B) count(__ldcs(a.keys + i));
        __syncthreads();
        for (std::uint32_t j = threadIdx.x; j < width; j += blockDim.x)
          if (const unsigned c = h[j]) atomicAdd(a.accum + w0 + j, c);
        __syncthreads();
        if (b_last - w0 < a.window) break;  // w0 + window would pass b_last (and might wrap)
      }
    }
    pos = end;
  }
  if (under) atomicAdd(outside, under);
  if (over) atomicAdd(outside + 1, over);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (outside[0]) atomicAdd(a.accum + bins, outside[0]);
    if (outside[1]) atomicAdd(a.accum + bins + 1, outside[1]);
  }
}

// slots (+)= accum; accum = 0.
__global__ void fold_kernel(unsigned* accum, std::uint64_t* slots, std::uint64_t count, bool accumulate) {
  for (std::uint64_t s = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; s < count;
       s += std::uint64_t{gridDim.x} * blockDim.x) {
    const unsigned c = accum[s];
    accum[s] = 0;
    slots[s] = (accumulate ? slots[s] : 0) + c;
  }
}

bool supports(const Problem& p, std::string* why_not) {
  return cuda_detail::int_keys_in_shift_bins(p, "gpu_bucket_sort", why_not);
}

std::uint64_t chunk_keys(std::uint64_t n) { return std::max<std::uint64_t>(1, std::min(n, BucketPolicy::kChunkKeys)); }

// CUB's temporary storage for sorting a chunk by the top 8 bits (asked for the
// largest chunk, so that the workspace never shrinks as n grows).
std::size_t cub_temp_bytes() {
  static const std::size_t bytes = [] {
    std::size_t b = 0;
    LEVELHIST_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, b, static_cast<const unsigned*>(nullptr),
                                                        static_cast<unsigned*>(nullptr),
                                                        static_cast<int>(BucketPolicy::kChunkKeys),
                                                        BucketPolicy::kShift, 32));
    return b;
  }();
  return bytes;
}

struct Layout {
  std::size_t accum, keys, copy, temp, total;
};
Layout layout_for(std::uint64_t slots, std::uint64_t n) {
  Layout l{};
  const std::size_t key_bytes = round_up(chunk_keys(n) * 4, 256);
  l.accum = 0;
  l.keys = round_up(slots * 4, 256);
  l.copy = l.keys + key_bytes;
  l.temp = l.copy + key_bytes;
  l.total = l.temp + round_up(cub_temp_bytes(), 256);
  return l;
}

std::size_t workspace_bytes(const Problem& p) { return layout_for(p.binning->slots(), p.n).total; }

void run(const RunArgs& a) {
  using P = BucketPolicy;
  const std::uint64_t slots = a.binning->slots();
  const Layout l = layout_for(slots, a.n);
  auto* ws = static_cast<unsigned char*>(a.workspace);
  auto* accum = reinterpret_cast<unsigned*>(ws + l.accum);
  auto* keys = reinterpret_cast<unsigned*>(ws + l.keys);
  auto* copy = reinterpret_cast<unsigned*>(ws + l.copy);
  void* temp = ws + l.temp;
  const cudaStream_t stream = stream_of(a);

  BucketArgs args{};
  args.map = binmap::make_int_shift<true>(*a.binning);
  args.is_signed = a.type == SampleType::i32;
  args.accum = accum;
  args.keys = keys;
  // Bins a bucket's 2^24 values can touch, counted in passes of at most kMaxWindow.
  const std::uint32_t k = args.map.shift;
  const std::uint64_t span_bins =
      std::min<std::uint64_t>(k >= P::kShift ? 2 : (std::uint64_t{1} << (P::kShift - k)) + 1, a.binning->bins());
  const std::uint64_t passes = (span_bins + P::kMaxWindow - 1) / P::kMaxWindow;
  args.window = static_cast<std::uint32_t>((span_bins + passes - 1) / passes);
  const std::size_t smem = std::size_t{args.window} * 4;
  cuda_detail::general::allow_large_shared(bucket_kernel);
  const int resident = cuda_detail::general::resident_blocks_with(bucket_kernel, P::kThreads, smem);

  const bool aligned = reinterpret_cast<std::uintptr_t>(a.samples) % 4 == 0;
  std::size_t temp_bytes = cub_temp_bytes();
  std::uint64_t largest = 0;
  for (std::uint64_t done = 0; done < a.n; done += P::kChunkKeys) {
    const std::uint64_t m = std::min(P::kChunkKeys, a.n - done);
    largest = std::max(largest, m);
    const unsigned char* src = static_cast<const unsigned char*>(a.samples) + done * 4;
    const unsigned* in = reinterpret_cast<const unsigned*>(src);
    if (!aligned) {  // CUB loads whole keys: copy the bytes to an aligned buffer first
      LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(copy, src, m * 4, cudaMemcpyDeviceToDevice, stream));
      in = copy;
    }
    LEVELHIST_CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, keys, static_cast<int>(m), P::kShift, 32, stream));
    args.m = m;
    const std::uint64_t blocks = std::clamp<std::uint64_t>((m + 8191) / 8192, 1, static_cast<std::uint64_t>(resident));
    args.per_block = (m + blocks - 1) / blocks;
    bucket_kernel<<<static_cast<unsigned>(blocks), P::kThreads, smem, stream>>>(args);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  }
  const std::uint64_t fold_blocks = std::clamp<std::uint64_t>((slots + P::kFoldThreads - 1) / P::kFoldThreads, 1,
                                                              static_cast<std::uint64_t>(cuda_detail::sm_count()) * 8);
  fold_kernel<<<static_cast<unsigned>(fold_blocks), P::kFoldThreads, 0, stream>>>(accum, a.slots, slots, a.accumulate);
  LEVELHIST_CUDA_CHECK_LAUNCH();
  // The workspace contract: leave it zero (the accumulators were cleared by the fold).
  LEVELHIST_CUDA_CHECK(cudaMemsetAsync(keys, 0, largest * 4, stream));
  if (!aligned) LEVELHIST_CUDA_CHECK(cudaMemsetAsync(copy, 0, largest * 4, stream));
  LEVELHIST_CUDA_CHECK(cudaMemsetAsync(temp, 0, cub_temp_bytes(), stream));
}

// Above ~56 K bins no shared histogram holds them all; gpu_split_bins reads
// the input once per part, so from 2^20 bins on (and whenever split cannot)
// sorting wins: 516-640 GB/s measured for 2^20 bins, level (the selection
// table's row: u32/i32 keys in more than 65536 even bins).

std::vector<std::uint64_t> boundaries(const Problem&) {
  return {1, 1024, 4096, 8192, 8193, 4 * 1024 * 3 + 1, BucketPolicy::kChunkKeys};
}

}  // namespace

const Strategy gpu_bucket_sort{
    "gpu_bucket_sort",
    Backend::cuda,
    "u32/i32 keys in huge even bin counts (2^20, 2^24): one CUB radix pass on the top 8 bits, then a shared "
    "histogram per bucket run (in windows of up to 40 K bins)",
    "levelhist (docs/PERFORMANCE-general.md: bucket_sort_smem, fixed for 2^24 bins)",
    supports,
    workspace_bytes,
    run,
    boundaries};

}  // namespace levelhist::strategies
