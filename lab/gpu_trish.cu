// gpu_trish: TRISH, "Threaded Registers Independent Strided Histogram"
// (Brown & Snoeyink, InPar 2012, §5, Figs. 2-5): a Count kernel
// that builds one 256-bin histogram per block without atomics, and a BlockSum
// kernel that adds the per-block histograms. Deterministic and data independent.
//
// Count kernel, 64 threads a block:
//  * per-thread histograms: 256 packed 8-bit counters per thread in shared
//    memory, 64 x 64 words (16 KB), thread t owns column t (Fig. 2; the same
//    interleaved layout as Wilt's Fig. 6);
//  * per-block histogram: a register array, 4 32-bit counters per thread
//    (bins 4t .. 4t+3);
//  * rows: each block reads k words per thread per row (block b's chunk of a
//    full row is 64k contiguous words, thread t reads words t, t+64, ...); the
//    left-over row is dealt out word by word over the whole grid, at most k
//    words a thread, with range checks (for_each_batch, which also prefetches
//    each block's next row into L2);
//  * binning: words in batches of four, each word's four bytes handled as two
//    16-bit pairs (§5.3 "Binning optimizations"; nvcc 13 turns this and the
//    byte-wise form of Wilt's Listing 5 into the same 8 instructions a byte);
//  * accumulation (RowSum): thread t sums row t with staggered, circular
//    indexing (Fig. 3: no bank conflicts) as 16-bit pairs (§5.3 "Accumulation
//    optimizations") into its 4 registers, clearing the row.
//
// Overflow bound: accumulate before a row whenever the words counted since the
// last accumulation plus k would exceed 63 (the exact form of Fig. 5's
// `overflowCount >= 63 - K`), so an 8-bit counter never sees more than
// 63 * 4 = 252 bytes. RowSum halves hold at most 64 * 252 < 65536. Per-block
// 32-bit counts hold at most n <= 2^31. k = 31 accumulates every 62 words, k = 63
// every 63, k = 32 every 32 (the paper's "RowSum efficiency").
//
// BlockSum: launch_block_sum (byte_histogram_common.cu) sums the grid's
// per-block histograms from the workspace, clears them, adds the <= 6 scalar
// head/tail bytes and writes the 64-bit slots (= old + sum when accumulating).
//
// Grid: min(blocks resident on the device, blocks with at least one row chunk).
#include <array>

#include "lab.hpp"
#include "byte_histogram_common.cuh"
#include "gpu_trish.hpp"

namespace levelhist::cuda_detail {
namespace trish {

constexpr int kThreads = Packed8x64::kThreads;                    // 64
constexpr int kMaxWords = Packed8x64::kMaxWordsBetweenMerges;     // 63
// 13 blocks of 16 KB (+1 KB reserved each) fill Hopper's 228 KB of shared memory;
// registers must not be what limits occupancy: at most 72 per thread.
constexpr int kMinBlocks = 13;

// RowSum: add row `tid` (bins 4 tid .. 4 tid + 3) of the per-thread histograms
// into this thread's part of the per-block register array.
template <bool Clear>
__device__ __forceinline__ void row_sum(std::uint32_t* priv, unsigned tid, std::uint32_t (&count)[4]) {
  std::uint32_t sum02, sum13;
  Packed8x64::row_sums<Clear>(priv, tid, sum02, sum13);
  count[0] += sum02 & 0xffffu;
  count[1] += sum13 & 0xffffu;
  count[2] += sum02 >> 16;
  count[3] += sum13 >> 16;
}

template <int K>
__global__ void __launch_bounds__(kThreads, kMinBlocks) count_kernel(ByteWords in, std::uint32_t* __restrict__ block_counts) {
  static_assert(K >= 1 && K <= kMaxWords, "k words per row, 1 <= k <= 63");
  __shared__ std::uint32_t priv[Packed8x64::kWords];
  const unsigned tid = threadIdx.x;
  const unsigned col = 4 * tid;
  Packed8x64::zero_column(priv, tid);
  std::uint32_t count[4] = {0, 0, 0, 0};

  int since = 0;  // words per thread since the last RowSum, the same in every thread
  for_each_batch<kThreads, K, true>(
      in,
      [&] {
        if (since + K > kMaxWords) {
          __syncthreads();
          row_sum<true>(priv, tid, count);
          __syncthreads();
          since = 0;
        }
        since += K;
      },
      [&](const auto& w, int m) {
        constexpr int kN = std::extent_v<std::remove_reference_t<decltype(w)>>;
        // Batches of four words; every increment of the batch is computed
        // before the shared-memory updates.
#pragma unroll
        for (int j = 0; j < kN; j += 4) {
#pragma unroll
          for (int u = j; u < j + 4 && u < kN; ++u)
            if (u < m) Packed8x64::increment_word_pairs(priv, col, w[u]);
        }
      });
  __syncthreads();
  row_sum<false>(priv, tid, count);
  // Coalesced: the block's 256 counts are 1 KB, thread t writes bins 4t .. 4t+3.
  reinterpret_cast<uint4*>(block_counts)[static_cast<std::size_t>(blockIdx.x) * kThreads + tid] =
      make_uint4(count[0], count[1], count[2], count[3]);
}

template <int K>
unsigned grid_for(std::uint64_t nwords) {
  prefer_max_shared(count_kernel<K>);
  const int resident = resident_blocks(count_kernel<K>, kThreads);
  return clamp_grid(static_cast<std::uint64_t>(resident), nwords, std::uint64_t{kThreads} * K);
}

template <int K>
std::size_t workspace_bytes(const Problem& problem) {
  return block_counts_bytes(grid_for<K>(max_words(problem.n)));
}

template <int K>
void run(const RunArgs& a) {
  run_count_then_block_sum(a, "gpu_trish", count_kernel<K>, kThreads, grid_for<K>);
}

template <int K>
std::vector<std::uint64_t> boundary_sizes(const Problem&) {
  std::uint64_t grid = 1;
  try {
    grid = grid_for<K>(~std::uint64_t{0} / 2);  // the persistent grid
  } catch (const Error&) {
    // no device: the sizes that do not depend on it
  }
  // A RowSum is due after every (63 / k) rows: k * (63 / k) words per thread.
  return batch_boundaries(kThreads, grid, K, static_cast<std::uint64_t>(kMaxWords / K) * K, 2);
}


template <int K>
constexpr Strategy make(const char* name, const char* summary) {
  return Strategy{name,
                  Backend::cuda,
                  summary,
                  "Brown & Snoeyink, TRISH §5 (Count + BlockSum kernels, Figs. 2-5)",
                  supports_byte_per_value,
                  workspace_bytes<K>,
                  run<K>,
                  boundary_sizes<K>};
}

// The k study (Fig. 4): the paper's best values 31 and 63, the worst RowSum
// efficiency 32, the ideal-efficiency divisors of 63 and the small k where
// loop overhead and missing ILP dominate.
const Strategy kStudy[] = {
    make<1>("gpu_trish_k1", "TRISH with k = 1 word per thread per row"),
    make<2>("gpu_trish_k2", "TRISH with k = 2 words per thread per row"),
    make<4>("gpu_trish_k4", "TRISH with k = 4 words per thread per row"),
    make<7>("gpu_trish_k7", "TRISH with k = 7 words per thread per row"),
    make<8>("gpu_trish_k8", "TRISH with k = 8 words per thread per row"),
    make<9>("gpu_trish_k9", "TRISH with k = 9 words per thread per row"),
    make<16>("gpu_trish_k16", "TRISH with k = 16 words per thread per row"),
    make<21>("gpu_trish_k21", "TRISH with k = 21 words per thread per row"),
    make<32>("gpu_trish_k32", "TRISH with k = 32 words per thread per row"),
};
constexpr std::array kStudyK = {1, 2, 4, 7, 8, 9, 16, 21, 31, 32, 63};

}  // namespace trish

std::span<const int> trish_k_values() { return trish::kStudyK; }

const Strategy* trish_strategy(int k) {
  if (k == 31) return &strategies::gpu_trish;
  if (k == 63) return &strategies::gpu_trish_k63;
  for (const Strategy& s : trish::kStudy)
    if (std::string_view(s.name) == "gpu_trish_k" + std::to_string(k)) return &s;
  return nullptr;
}

}  // namespace levelhist::cuda_detail

namespace levelhist::strategies {

const Strategy gpu_trish = cuda_detail::trish::make<31>(
    "gpu_trish", "TRISH: per-thread 8-bit counters, per-block counts in registers, no atomics (k = 31)");
const Strategy gpu_trish_k63 = cuda_detail::trish::make<63>(
    "gpu_trish_k63", "TRISH with k = 63 words per thread per row (the paper's fastest for large n)");

}  // namespace levelhist::strategies
