// Wilt's privatized per-thread histograms (part 2): 64
// threads a block, each with 256 packed 8-bit counters in the interleaved
// 64 x 64 layout (Listing 5, Fig. 6), merged into the output with exactly 256
// global atomics per block (Listing 7). One kernel, two overflow policies
// (Listing 8 and "Managing Overflow"):
//
//  * periodic_merge (gpu_thread_packed, bPeriodicMerge = true): a persistent
//    grid; every 63 words (252 bytes) per thread the block merges and clears
//    its counters;
//  * avoid_by_grid (gpu_thread_packed_avoid): no merge inside the loop; the
//    grid is made large enough that no thread sees more than 63 words.
//
// Overflow bound: an 8-bit lane of thread t counts bytes t read since its last
// merge, at most 63 words * 4 = 252 <= 255 (the 0..6 scalar head/tail bytes go
// straight to the output, not through the counters). Merged 16-bit halves hold
// at most 64 * 252 < 65536.
//
// Departures from the listings, for correctness or speed; none changes what is
// counted where, or the 256 atomics per merge:
//  * Listing 8 calls __syncthreads() inside a per-thread-trip-count loop (a
//    thread with one iteration fewer skips a barrier the others wait at) and has
//    no barrier after merge<true> (a thread may increment a word of another
//    thread's row between that thread's read and its clear, losing the count).
//    Here the trip count is grid-uniform and the merge sits between two barriers.
//  * Listing 8 reads one word per iteration; here a batch is kBatch = 7 words
//    per thread (7 divides 63), and each batch prefetches the next into L2
//    (for_each_batch): ptxas issues the loads just before their words are
//    counted, so without the prefetch DRAM latency is exposed.
//  * Listing 7's atomics are transposed through shuffles so that one warp
//    instruction adds 32 consecutive slots (merge_to_output): 4x less L2 atomic
//    traffic. The merges' atomics are this method's bottleneck on uniform data:
//    341 GB/s untransposed, 1280 GB/s transposed (H200, 1 GiB).
//  * Listing 5's index arithmetic is written as byte offsets (Packed8x64::increment).
#pragma once
#include "byte_histogram_common.cuh"

namespace levelhist::cuda_detail::thread_packed {

enum class Overflow { periodic_merge, avoid_by_grid };

inline constexpr int kThreads = Packed8x64::kThreads;  // 64: the layout is square
inline constexpr int kBatch = 7;                       // words per thread per batch
inline constexpr int kMaxWords = Packed8x64::kMaxWordsBetweenMerges;  // 63
static_assert(kMaxWords % kBatch == 0, "merge after whole batches");

// Listing 7: thread t sums row t (bins 4t .. 4t+3), and the block adds its 256
// sums to the output with exactly 256 global atomics (none for an empty bin).
// Listing 7 has thread t add its own four bins, so one warp instruction hits 32
// addresses 32 bytes apart (32 L2 sectors); here the warp first transposes its
// 128 sums with shuffles so that atomic round j of lane l adds bin
// 128 w + 32 j + l: 32 consecutive 64-bit slots, 8 sectors per instruction.
// Same atomics, a quarter of the L2 atomic traffic: the merges' global atomics
// are this method's bottleneck on uniform data (the atomic unit serializes
// updates of the same few lines, the 2 KB of output slots).
template <bool Clear>
__device__ __forceinline__ void merge_to_output(std::uint32_t* priv, unsigned tid, unsigned flip,
                                                std::uint64_t* slots) {
  std::uint32_t sum02, sum13;
  Packed8x64::row_sums<Clear>(priv, tid, sum02, sum13);
  const std::uint32_t c0 = sum02 & 0xffffu, c1 = sum13 & 0xffffu, c2 = sum02 >> 16, c3 = sum13 >> 16;
  const unsigned lane = tid % 32;
  const unsigned k = lane % 4;
#pragma unroll
  for (unsigned j = 0; j < 4; ++j) {
    // Bin 128 w + 32 j + lane is bin k of lane 8 j + lane / 4 of this warp.
    const int src = static_cast<int>(8 * j + lane / 4);
    const std::uint32_t v0 = __shfl_sync(0xffffffffu, c0, src);
    const std::uint32_t v1 = __shfl_sync(0xffffffffu, c1, src);
    const std::uint32_t v2 = __shfl_sync(0xffffffffu, c2, src);
    const std::uint32_t v3 = __shfl_sync(0xffffffffu, c3, src);
    const std::uint32_t v = k == 0 ? v0 : k == 1 ? v1 : k == 2 ? v2 : v3;
    const unsigned bin = (tid - lane) * 4 + 32 * j + lane;  // (tid - lane) * 4 = 128 w
    add_to_slot(slots + (bin ^ flip), v);
  }
}

template <Overflow kPolicy>
__global__ void __launch_bounds__(kThreads) histogram1d_per_thread_4x64(ByteWords in, unsigned flip,
                                                                      std::uint64_t* slots) {
  __shared__ std::uint32_t priv[Packed8x64::kWords];
  const unsigned tid = threadIdx.x;
  const unsigned col = 4 * tid;  // byte offset of this thread's column
  Packed8x64::zero_column(priv, tid);

  // The head and tail bytes (at most 6): one global atomic each.
  const std::uint64_t g = static_cast<std::uint64_t>(blockIdx.x) * kThreads + tid;
  if (g < in.extra_count())
    atomicAdd(reinterpret_cast<unsigned long long*>(slots + (in.extra_byte(static_cast<unsigned>(g)) ^ flip)), 1ull);

  int since_merge = 0;  // words per thread since the last merge, the same in every thread
  for_each_batch<kThreads, kBatch, true>(
      in,
      [&] {
        if constexpr (kPolicy == Overflow::periodic_merge) {
          if (since_merge + kBatch > kMaxWords) {
            __syncthreads();  // every column complete
            merge_to_output<true>(priv, tid, flip, slots);
            __syncthreads();  // every row cleared before anyone counts into it
            since_merge = 0;
          }
          since_merge += kBatch;
        }
      },
      [&](const auto& w, int m) {
        constexpr int kN = std::extent_v<std::remove_reference_t<decltype(w)>>;
#pragma unroll
        for (int u = 0; u < kN; ++u) {
          if (u < m) {
            std::uint32_t value = w[u];
            Packed8x64::increment(priv, col, value & 0xff);
            value >>= 8;
            Packed8x64::increment(priv, col, value & 0xff);
            value >>= 8;
            Packed8x64::increment(priv, col, value & 0xff);
            value >>= 8;
            Packed8x64::increment(priv, col, value);
          }
        }
      });
  __syncthreads();
  merge_to_output<false>(priv, tid, flip, slots);
}

template <Overflow kPolicy>
unsigned grid_for(std::uint64_t nwords) {
  if constexpr (kPolicy == Overflow::avoid_by_grid) {
    // Wilt: numblocks = ceil(N / (numthreads * (255/4))), i.e. at most 63 words
    // (252 bytes) per thread. (Read with N in bytes, as printed, that formula
    // would give each thread only 63 bytes: 4x the blocks the bound needs.)
    // With T = 64 * grid >= nwords / 63 threads, a grid-wide batch is
    // S = 7 T >= nwords / 9 words: at most 9 full batches of 7 words per
    // thread, and a partial (at most 7 words) only if fewer than 9 are full
    // (9 full batches mean nwords >= 63 T, so nwords == 63 T, no remainder).
    // So no thread counts more than 63 words.
    constexpr std::uint64_t per_block = std::uint64_t{kThreads} * kMaxWords;  // 4032 words
    return static_cast<unsigned>(std::max<std::uint64_t>(1, (nwords + per_block - 1) / per_block));
  } else {
    prefer_max_shared(histogram1d_per_thread_4x64<kPolicy>);
    const int resident = resident_blocks(histogram1d_per_thread_4x64<kPolicy>, kThreads);
    // At least a merge period of words per block: a block costs 256 atomics
    // however little it reads.
    return clamp_grid(static_cast<std::uint64_t>(resident), nwords, std::uint64_t{kThreads} * kMaxWords);
  }
}

template <Overflow kPolicy>
void run(const RunArgs& a) {
  require_at_most_2g(a, kPolicy == Overflow::periodic_merge ? "gpu_thread_packed" : "gpu_thread_packed_avoid");
  clear_slots_unless_accumulating(a);
  if (a.n == 0) return;
  const ByteWords in = split_bytes(a.samples, a.n);
  if constexpr (kPolicy == Overflow::avoid_by_grid) {
    prefer_max_shared(histogram1d_per_thread_4x64<kPolicy>);
  }
  const unsigned grid = grid_for<kPolicy>(in.nwords);
  histogram1d_per_thread_4x64<kPolicy><<<grid, kThreads, 0, stream_of(a)>>>(in, byte_bin_flip(a.type), a.slots);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

template <Overflow kPolicy>
std::vector<std::uint64_t> boundary_sizes(const Problem&) {
  if constexpr (kPolicy == Overflow::avoid_by_grid) {
    // The grid grows by one block every 4032 words; the batch structure repeats
    // inside each grid size.
    std::vector<std::uint64_t> sizes = batch_boundaries(kThreads, 1, kBatch, kMaxWords, 1);
    for (std::uint64_t blocks : {2ull, 3ull, 1000ull})
      sizes.push_back(4 * std::uint64_t{kThreads} * kMaxWords * blocks);
    return sizes;
  } else {
    std::uint64_t grid = 1;
    try {
      grid = grid_for<kPolicy>(~std::uint64_t{0} / 2);  // the persistent grid
    } catch (const Error&) {
      // no device: the sizes that do not depend on it
    }
    std::vector<std::uint64_t> sizes = batch_boundaries(kThreads, grid, kBatch, kMaxWords, 2);
    // Below the persistent grid there is one block per merge period (4032 words).
    for (std::uint64_t blocks : {1ull, 2ull})
      sizes.push_back(4 * std::uint64_t{kThreads} * kMaxWords * blocks);
    return sizes;
  }
}

}  // namespace levelhist::cuda_detail::thread_packed
