// The pieces of byte_histogram_common.cuh that are code, not templates: the
// support test, the BlockSum kernel and the boundary sizes.
#include "byte_histogram_common.cuh"

namespace levelhist::cuda_detail {

bool supports_byte_per_value(const Problem& problem, std::string* why_not) {
  const bool u8 = problem.type == SampleType::u8;
  if (!u8 && problem.type != SampleType::i8) {
    if (why_not) *why_not = "counts 8-bit samples only (u8, or i8 by an offset), not " + std::string(to_string(problem.type));
    return false;
  }
  const Binning& b = *problem.binning;
  const double lower = u8 ? 0.0 : -128.0;
  if (b.kind() != BinKind::even || b.bins() != kByteBins || b.lower() != lower || b.upper() != lower + 256.0) {
    if (why_not)
      *why_not = std::string("needs one bin per value: 256 even bins over [") + (u8 ? "0, 256" : "-128, 128") +
                 "), not " + b.describe();
    return false;
  }
  return true;
}

namespace {

constexpr int kSumBins = 32;   // bins per block: one warp reads 128 contiguous bytes of a row
constexpr int kSumWarps = 32;  // rows are dealt out over 32 warps

// Block j owns bins 32j .. 32j+31 (raw byte values; the slot is v ^ flip, a
// permutation of the same 32). Warp y sums rows y, y + 32, ... in a fixed
// order, then warp 0 adds the 32 partial sums in a fixed order: the result
// does not depend on scheduling. A bin's total is at most n <= 2^31 (the
// dispatcher's per-call limit), so 32-bit sums cannot overflow.
__global__ void __launch_bounds__(kSumBins * kSumWarps)
    block_sum_kernel(std::uint32_t* __restrict__ counts, unsigned rows, ByteWords in, unsigned flip,
                     unsigned long long* __restrict__ slots, bool accumulate) {
  const unsigned lane = threadIdx.x % kSumBins;
  const unsigned warp = threadIdx.x / kSumBins;
  const unsigned v = blockIdx.x * kSumBins + lane;
  std::uint32_t* col = counts + v;
  std::uint32_t sum = 0;
  unsigned r = warp;
  // Four independent loads in flight per thread, then the four clears.
  for (; r + 3 * kSumWarps < rows; r += 4 * kSumWarps) {
    std::uint32_t* p0 = col + static_cast<std::size_t>(r) * kByteBins;
    std::uint32_t* p1 = p0 + kSumWarps * kByteBins;
    std::uint32_t* p2 = p1 + kSumWarps * kByteBins;
    std::uint32_t* p3 = p2 + kSumWarps * kByteBins;
    const std::uint32_t a = *p0, b = *p1, c = *p2, d = *p3;
    *p0 = 0;
    *p1 = 0;
    *p2 = 0;
    *p3 = 0;
    sum += (a + b) + (c + d);
  }
  for (; r < rows; r += kSumWarps) {
    std::uint32_t* p = col + static_cast<std::size_t>(r) * kByteBins;
    sum += *p;
    *p = 0;
  }
  __shared__ std::uint32_t part[kSumWarps][kSumBins];
  part[warp][lane] = sum;
  __syncthreads();
  if (warp == 0) {
    unsigned long long total = 0;
#pragma unroll 8
    for (int y = 0; y < kSumWarps; ++y) total += part[y][lane];
    for (unsigned j = 0; j < in.extra_count(); ++j) total += in.extra_byte(j) == v;
    const unsigned s = v ^ flip;
    slots[s] = (accumulate ? slots[s] : 0ull) + total;
  }
  if (!accumulate && blockIdx.x == 0 && threadIdx.x < 3) slots[kByteBins + threadIdx.x] = 0;  // underflow, overflow, NaN
}

}  // namespace

void launch_block_sum(std::uint32_t* counts, unsigned rows, const ByteWords& in, unsigned flip, std::uint64_t* slots,
                      bool accumulate, cudaStream_t stream) {
  static_assert(kByteBins % kSumBins == 0);
  block_sum_kernel<<<kByteBins / kSumBins, kSumBins * kSumWarps, 0, stream>>>(
      counts, rows, in, flip, reinterpret_cast<unsigned long long*>(slots), accumulate);
  LEVELHIST_CUDA_CHECK_LAUNCH();
}

std::vector<std::uint64_t> batch_boundaries(std::uint64_t threads_per_block, std::uint64_t grid,
                                            std::uint64_t words_per_batch, std::uint64_t period_words,
                                            int periods) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 31;
  const std::uint64_t T = threads_per_block * grid;
  std::vector<std::uint64_t> sizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16};
  sizes.push_back(4 * threads_per_block);                    // one word per thread of one block
  sizes.push_back(4 * threads_per_block * words_per_batch);  // one batch of one block
  sizes.push_back(4 * T);                                    // one word per thread of the grid
  sizes.push_back(4 * T * words_per_batch);                  // one grid-wide batch
  sizes.push_back(8 * T * words_per_batch);                  // two
  for (int k = 1; k <= periods && period_words; ++k) sizes.push_back(4 * T * period_words * k);  // a merge is due
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : sizes)
    if (s > 0 && s <= kMax) out.push_back(s);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace levelhist::cuda_detail
