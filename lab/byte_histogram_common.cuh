// Shared pieces of the 256-bin byte-histogram kernels from the literature:
// gpu_thread_packed(_avoid) (Wilt part 2), gpu_trish, gpu_warp_podlozhnyuk and
// gpu_thread_nugteren (Brown & Snoeyink, TRISH; docs/REFERENCES.md).
//
//  * what they count: u8 samples into 256 one-per-value bins (i8 too: the bin
//    of raw byte v is v ^ 0x80, applied only where counts leave the kernel);
//  * ByteWords: the input as an aligned run of 32-bit words plus at most
//    3 + 3 scalar bytes before and after it (any pointer alignment, any n);
//  * for_each_batch: the one loop that hands every thread its words, U at a
//    time, with a grid-uniform hook before each batch for periodic merges;
//  * Packed8x64: per-thread 8-bit counters in the interleaved 64 x 64 word
//    layout of Wilt's Fig. 6 / Listing 5 (TRISH's Fig. 2 is the same), and
//    the staggered 16-bit-pair row sums of Listings 6 and 7;
//  * launch_block_sum: the BlockSum (TRISH) / merge (Podlozhnyuk) / tail
//    (Nugteren) kernel that turns per-block 32-bit counts into the 64-bit
//    output slots, adds the scalar bytes, honours `accumulate` and clears the
//    workspace it read.
#pragma once
#include <algorithm>
#include <type_traits>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/cuda_common.cuh"
#include "levelhist/strategy.hpp"

namespace levelhist::cuda_detail {

// ---- what these kernels count ------------------------------------------------

// True for u8 samples with 256 even bins over [0, 256) and i8 samples with 256
// even bins over [-128, 128): one bin per value (Binning::per_value). Whether
// the last bin is inclusive does not matter: the upper edge is no sample value.
bool supports_byte_per_value(const Problem& problem, std::string* why_not);

// The bin of raw byte v is v ^ byte_bin_flip(type): 0 for u8, 0x80 for i8
// (x + 128 == (x & 0xff) ^ 0x80 for every int8 x).
inline unsigned byte_bin_flip(SampleType type) { return type == SampleType::i8 ? 0x80u : 0u; }

// The 256 one-per-value bins plus underflow, overflow and NaN slots.
inline constexpr unsigned kByteBins = 256;

// ---- the input as 32-bit words -----------------------------------------------

// n bytes at any address: `head` bytes before the first 4-byte aligned address,
// `nwords` aligned words, then `tail` bytes (head, tail <= 3).
struct ByteWords {
  const std::uint32_t* words;
  std::uint64_t nwords;
  const unsigned char* head_ptr;
  const unsigned char* tail_ptr;
  unsigned head;
  unsigned tail;

  // The bytes that are not in a word (0..6 of them), for scalar code.
  __device__ __forceinline__ unsigned extra_count() const { return head + tail; }
  __device__ __forceinline__ unsigned extra_byte(unsigned j) const {
    return j < head ? head_ptr[j] : tail_ptr[j - head];
  }
  std::uint64_t bytes() const { return std::uint64_t{head} + 4 * nwords + tail; }
};

inline ByteWords split_bytes(const void* samples, std::uint64_t n) {
  const auto* p = static_cast<const unsigned char*>(samples);
  const unsigned misalign = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 3u);
  const std::uint64_t head = misalign ? std::min<std::uint64_t>(4 - misalign, n) : 0;
  ByteWords in{};
  in.head_ptr = p;
  in.head = static_cast<unsigned>(head);
  in.words = reinterpret_cast<const std::uint32_t*>(p + head);  // 4-byte aligned whenever nwords > 0
  in.nwords = (n - head) / 4;
  in.tail = static_cast<unsigned>((n - head) % 4);
  in.tail_ptr = p + head + 4 * in.nwords;
  return in;
}

// The word loop's indices are 32-bit: a call must not exceed the dispatcher's
// 2^31 samples (runtime.cu splits larger inputs). Throws Error(internal) if it does.
inline void require_at_most_2g(const RunArgs& a, const char* strategy) {
  if (a.n > (std::uint64_t{1} << 31))
    throw Error(ErrorKind::internal, std::string(strategy) + ": " + std::to_string(a.n) +
                                         " samples in one call; the dispatcher passes at most 2^31");
}

// The words a sample count splits into at the worst alignment, for grid sizing
// in workspace_bytes() (which does not know the pointer): nwords <= n / 4.
inline std::uint64_t max_words(std::uint64_t n) { return n / 4; }

// ---- the word loop -----------------------------------------------------------

// Asks the memory system to bring the 128-byte line holding p into L2; no
// register, no fault, no result.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// The words are cut into grid-wide batches of S = T * U words (T = gridDim.x *
// kThreads threads). In a full batch block b reads the contiguous chunk
// [batch + b*kThreads*U, + kThreads*U) and thread t its words t, t + kThreads,
// ..., so every warp load is 128 coalesced bytes at an immediate offset. The
// last, partial batch (< S words) is dealt out word by word over all T threads
// (word base + u*T + g for thread g), so every thread gets at most U words of it
// and the blocks stay balanced.
//
// Every thread therefore sees exactly U words per batch (<= U in the partial
// one), and the number of batches is the same for the whole grid: before_batch()
// runs grid-uniformly and may hold __syncthreads(). count_batch(w, m) gets the
// batch's words in registers; only w[0..m) are data (m == U, a constant after
// inlining, in full batches). count_batch is called with arrays of U words in
// full batches and of min(U, 8) words in the partial one: make it generic
// (`auto& w`, its length std::extent_v of the array type).
//
// Memory latency (kPrefetch): in the packed-counter kernels ptxas issues each
// word's load only a word or two before the word is counted (it sinks the
// batch's loads below the shared-memory read-modify-writes of the words before),
// far too few bytes in flight to cover DRAM latency at 13 blocks per SM. With
// kPrefetch, at the start of each batch the block prefetches its chunk of the
// next batch into L2 (one prefetch.global.L2 per 128-byte line, spread over
// the threads): the loads then hit L2. Together the blocks' next chunks cover
// the partial batch too.
//
// Needs nwords < 2^32 / 4 (the dispatcher's n <= 2^31): word indices are 32-bit.
template <int kThreads, int U, bool kPrefetch, class BeforeBatch, class CountBatch>
__device__ __forceinline__ void for_each_batch(const ByteWords& in, BeforeBatch&& before_batch,
                                               CountBatch&& count_batch) {
  constexpr unsigned kChunk = kThreads * U;                  // words per block per batch
  constexpr unsigned kLines = (kChunk * 4 + 127) / 128 + 1;  // + 1: the chunk need not start on a line
  const unsigned nwords = static_cast<unsigned>(in.nwords);
  const unsigned T = gridDim.x * kThreads;
  const unsigned S = T * U;
  const unsigned nfull = nwords / S;
  const unsigned chunk0 = blockIdx.x * kChunk;
  const std::uint32_t* __restrict__ p = in.words + chunk0 + threadIdx.x;
  unsigned line = chunk0 + S + 32 * threadIdx.x;  // word index of this thread's first line of the next chunk
  for (unsigned b = 0; b < nfull; ++b, p += S, line += S) {
    before_batch();
    if constexpr (kPrefetch) {
#pragma unroll
      for (unsigned l = 0; l < kLines; l += kThreads)
        if (l + threadIdx.x < kLines && line + 32 * l < nwords) prefetch_l2(in.words + line + 32 * l);
    }
    std::uint32_t w[U];
#pragma unroll
    for (int u = 0; u < U; ++u) w[u] = __ldg(p + u * kThreads);
    count_batch(w, U);
  }
  const unsigned base = nfull * S;
  if (base < nwords) {  // grid-uniform
    before_batch();
    const unsigned g = blockIdx.x * kThreads + threadIdx.x;
    const unsigned rem = nwords - base;  // 0 < rem < S = U * T
    // Words base + g + u*T < nwords for u < m; m <= U because rem - g - 1 < U * T.
    const int m = rem > g ? static_cast<int>((rem - g - 1) / T + 1) : 0;
    const std::uint32_t* __restrict__ q = in.words + base + g;
    // In groups of at most 8 words: the unrolled full-batch code would keep
    // all U predicated loads live at once (and spill for U >= 31).
    constexpr int G = U < 8 ? U : 8;
#pragma unroll 1
    for (int u0 = 0; u0 < m; u0 += G) {
      std::uint32_t w[G];
#pragma unroll
      for (int u = 0; u < G; ++u) w[u] = u0 + u < m ? __ldg(q + (u0 + u) * T) : 0u;
      count_batch(w, m - u0 < G ? m - u0 : G);
    }
  }
}

// ---- packed 8-bit per-thread counters (Wilt Listing 5, TRISH Fig. 2) ----------
//
// 64 threads, each with 256 8-bit counters packed four to a 32-bit word: bin v
// of thread t is byte lane (v & 3) of word priv[(v >> 2) * 64 + t]. A thread
// only ever touches its own column, so bank(word) == t % 32 for any data: the
// increments are free of bank conflicts whatever the input (Wilt Fig. 6).
struct Packed8x64 {
  static constexpr int kThreads = 64;
  static constexpr int kRows = 64;
  static constexpr int kWords = kRows * kThreads;  // 16 KB
  // The most bytes one thread may count between two row sums: 8-bit lanes hold
  // 255; 252 = 63 words, the bound of Wilt's Listing 8 and of TRISH.
  static constexpr int kMaxWordsBetweenMerges = 63;

  // Clears this thread's column; no barrier needed before the thread's own
  // increments (nobody else touches the column until the next row sum).
  __device__ __forceinline__ static void zero_column(std::uint32_t* priv, unsigned tid) {
#pragma unroll 16
    for (int r = 0; r < kRows; ++r) priv[r * kThreads + tid] = 0;
  }

  // Listing 5: one byte, priv[(v >> 2) * 64 + t] += 1 << 8 * (v & 3), with the
  // address as a byte offset: row (v >> 2) * 256 = (v & 0xfc) << 6 in bits
  // 8..13, column col = 4 t in bits 2..7, so OR adds them (nvcc does not find
  // this form by itself from the index expression: 11 instead of 8 instructions
  // a byte).
  __device__ __forceinline__ static void increment(std::uint32_t* priv, unsigned col, unsigned v) {
    *reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(priv) + (((v & 0xfcu) << 6) | col)) +=
        1u << ((v & 3u) << 3);
  }

  // The 16-bit-pair binning of TRISH (§5.3) for one word: the row offsets
  // (bytes) and lane shifts of bytes 0 and 2, and of bytes 1 and 3, come from
  // one shift and one mask each; `col` = 4 * tid occupies bits 2..7 and the row
  // offset (v >> 2) * 256 bits 8..13, so OR adds them. Assumes priv is the
  // kernel's shared array at `priv`.
  __device__ __forceinline__ static void increment_word_pairs(std::uint32_t* priv, unsigned col, std::uint32_t w) {
    const std::uint32_t r02 = (w << 6) & 0x3f003f00u;  // (v0 >> 2) << 8 | (v2 >> 2) << 24
    const std::uint32_t r13 = (w >> 2) & 0x3f003f00u;  // (v1 >> 2) << 8 | (v3 >> 2) << 24
    const std::uint32_t s02 = (w << 3) & 0x00180018u;  // (v0 & 3) * 8 | (v2 & 3) * 8 << 16
    const std::uint32_t s13 = (w >> 5) & 0x00180018u;  // (v1 & 3) * 8 | (v3 & 3) * 8 << 16
    auto* base = reinterpret_cast<unsigned char*>(priv);
    auto at = [&](std::uint32_t off) -> std::uint32_t& { return *reinterpret_cast<std::uint32_t*>(base + (off | col)); };
    at(r02 & 0xffffu) += 1u << (s02 & 0xffffu);
    at(r13 & 0xffffu) += 1u << (s13 & 0xffffu);
    at(r02 >> 16) += 1u << (s02 >> 16);
    at(r13 >> 16) += 1u << (s13 >> 16);
  }

  // Listings 6 and 7: thread `tid` sums row `tid` (bins 4*tid .. 4*tid+3) over
  // the 64 columns as two 32-bit words of two 16-bit partial sums each: lanes
  // 0 and 2 (sum02), lanes 1 and 3 (sum13). A lane holds at most 255, so a
  // 16-bit half sums at most 64 * 255 = 16320 < 65536 and never carries.
  // Staggered start (TRISH Fig. 3): in step i thread t reads column (i + t) & 63,
  // bank (i + t) % 32: the 32 threads of a warp hit 32 different banks.
  // Needs a barrier before (the columns are written by other threads) and,
  // with Clear, one after (the cleared row belongs to other threads' columns).
  template <bool Clear>
  __device__ __forceinline__ static void row_sums(std::uint32_t* priv, unsigned tid, std::uint32_t& sum02,
                                                  std::uint32_t& sum13) {
    auto* bytes = reinterpret_cast<unsigned char*>(priv);
    const unsigned row = tid * (kThreads * 4);  // byte offset of row tid
    const unsigned start = tid * 4;             // byte offset of column tid within a row
    std::uint32_t s02 = 0, s13 = 0;
#pragma unroll 16
    for (int i = 0; i < kThreads; i += 2) {
      // Circular: column (tid + i) % 64, as a byte offset ((4 tid + 4 i) & 252) | row.
      auto& a = *reinterpret_cast<std::uint32_t*>(bytes + (((start + 4u * i) & 252u) | row));
      auto& b = *reinterpret_cast<std::uint32_t*>(bytes + (((start + 4u * (i + 1)) & 252u) | row));
      const std::uint32_t va = a, vb = b;
      if constexpr (Clear) {
        a = 0;
        b = 0;
      }
      s02 += (va & 0x00ff00ffu) + (vb & 0x00ff00ffu);
      // (v >> 8) & 0x00ff00ff in one byte permute: bytes [0, v3, 0, v1].
      s13 += __byte_perm(va, 0, 0x4341) + __byte_perm(vb, 0, 0x4341);
    }
    sum02 = s02;
    sum13 = s13;
  }
};

// ---- grid sizing -------------------------------------------------------------

// Blocks for a kernel of `threads` threads that takes `words_per_block` words
// per batch: enough for one batch each, at most `resident` (a persistent grid).
inline unsigned clamp_grid(std::uint64_t resident, std::uint64_t nwords, std::uint64_t words_per_block) {
  const std::uint64_t needed = std::max<std::uint64_t>(1, (nwords + words_per_block - 1) / words_per_block);
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(resident, needed)));
}

// ---- per-block counts -> 64-bit slots ----------------------------------------

// Bytes of workspace for `rows` per-block histograms of 256 32-bit counts.
inline std::size_t block_counts_bytes(std::uint64_t rows) { return rows * kByteBins * sizeof(std::uint32_t); }
// How many such rows the run's workspace holds.
inline std::uint64_t block_count_rows(const RunArgs& a) { return a.workspace_bytes / block_counts_bytes(1); }

// The BlockSum kernel (TRISH §5.5), also Podlozhnyuk's merge and Nugteren's
// tail kernel: for every bin v, slot[v ^ flip] = (accumulate ? slot : 0) +
// sum over rows of counts[row][v] + the scalar bytes of `in` equal to v; the
// counts are zeroed as they are read; without `accumulate` the underflow,
// overflow and NaN slots are zeroed. Deterministic: fixed summation order, no
// atomics. rows >= 1.
void launch_block_sum(std::uint32_t* counts, unsigned rows, const ByteWords& in, unsigned flip,
                      std::uint64_t* slots, bool accumulate, cudaStream_t stream);

// The run function of every Count + BlockSum strategy (TRISH, Podlozhnyuk's
// per-warp merge, Nugteren's tail kernel): `count` runs on grid_for(words)
// blocks of `threads`, each block writing its 256 counts as one row of the
// workspace, then launch_block_sum folds the rows into the 64-bit slots.
template <class CountKernel, class GridFor>
void run_count_then_block_sum(const RunArgs& a, const char* strategy, CountKernel count, int threads,
                              GridFor grid_for) {
  require_at_most_2g(a, strategy);
  if (a.n == 0) {
    clear_slots_unless_accumulating(a);
    return;
  }
  const ByteWords in = split_bytes(a.samples, a.n);
  const unsigned grid = grid_for(in.nwords);
  if (grid > block_count_rows(a))
    throw Error(ErrorKind::internal, std::string(strategy) + ": the workspace holds " +
                                         std::to_string(block_count_rows(a)) + " block histograms, " +
                                         std::to_string(grid) + " needed");
  auto* counts = static_cast<std::uint32_t*>(a.workspace);
  count<<<grid, threads, 0, stream_of(a)>>>(in, counts);
  LEVELHIST_CUDA_CHECK_LAUNCH();
  launch_block_sum(counts, grid, in, byte_bin_flip(a.type), a.slots, a.accumulate, stream_of(a));
}

// Sample counts where a word-batched kernel changes behaviour, for
// Strategy::boundary_sizes: the 4-byte head/tail sizes, one word per thread,
// one batch per block, one grid-wide batch, and each `period_words` (per
// thread) multiple up to `periods`, each as bytes; only sizes <= 2^31.
std::vector<std::uint64_t> batch_boundaries(std::uint64_t threads_per_block, std::uint64_t grid,
                                            std::uint64_t words_per_batch, std::uint64_t period_words,
                                            int periods);

}  // namespace levelhist::cuda_detail
