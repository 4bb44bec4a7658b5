// The textbook histogram kernels, built from one template.
//
// Kirk & Hwu, PMPP ch. 9, and Wilt part 1 (docs/REFERENCES.md) give
// seven kernels that differ in a few choices only:
//   * where the counters a thread adds to live: the one output histogram in
//     global memory (Fig. 9.6, Listings 2 and 3), a private copy per block in
//     global memory (Fig. 9.9), or one in shared memory (Fig. 9.10 onwards);
//   * how samples are split among threads: one per thread (Fig. 9.6, 9.9, 9.10),
//     CFACTOR contiguous ones (Fig. 9.12), or interleaved, i.e. grid-stride
//     (Fig. 9.14, 9.15, Listing 2);
//   * whether a thread first aggregates a run of equal bins in a register
//     (Fig. 9.15);
//   * whether it loads four samples with one wide load (Listing 3).
// TextbookPolicy names those choices; textbook_histogram_kernel<Policy, T,
// Aligned> is the one kernel, and each strategy file is a policy plus its
// names. A policy is a type with `static constexpr TextbookPolicy value`
// (nvcc 13's kernel stubs cannot spell a class-type template argument).
// Generalized from the book's 26 letters to levelhist's problems: every
// sample type, any Binning, and the underflow/overflow/NaN slots, with each
// sample's slot from the shared BinIndexer (bin_index.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/strategies.hpp"
#include "cuda/cuda_common.cuh"
#include "levelhist/error.hpp"

namespace levelhist::cuda_detail::textbook {

// ---- the policy ---------------------------------------------------------------

enum class Privatization : std::uint8_t {
  none,              // every thread adds to the 64-bit output slots (Fig. 9.6, Listings 2-3)
  global_per_block,  // each block counts into its own 32-bit copy in the workspace (Fig. 9.9)
  shared_per_block,  // each block counts into its own 32-bit copy in shared memory (Fig. 9.10)
};

enum class Partition : std::uint8_t {
  interleaved,  // sample i goes to thread i mod (grid threads), grid-stride (Fig. 9.14, Listing 2)
  contiguous,   // thread t owns samples [t*CFACTOR, (t+1)*CFACTOR) (Fig. 9.12)
};

struct TextbookPolicy {
  Privatization privatization;
  Partition partition;
  // Samples a thread handles when the grid is sized to cover n: 1 for the
  // one-thread-per-sample figures, CFACTOR for the coarsened ones, 4 for Listing 3.
  unsigned samples_per_thread;
  // Fig. 9.14/9.15: coarsening exists to launch no more blocks than the GPU runs
  // at once (PMPP ch. 9, section on coarsening: otherwise every extra block pays
  // a commit for nothing).
  bool cap_grid_at_resident_blocks;
  // Fig. 9.15: count a run of samples with the same slot in a register and add
  // it with one atomic when the slot changes.
  bool aggregate_runs;
  // Listing 3: one 4*sizeof(T)-byte load brings four samples.
  bool four_samples_per_load;
};

inline constexpr unsigned kBlockThreads = 256;
// CFACTOR of Fig. 9.12/9.14/9.15: with 16 samples a thread, a block's commit of
// bins+3 counters is spread over 4096 samples, and 2^20 samples still fill 256
// blocks (about two per multiprocessor on an H100).
inline constexpr unsigned kCoarseningFactor = 16;
// The one-thread-per-sample figures keep that structure up to this many blocks
// (2^24 samples); past it their threads grid-stride, so a 2^31-sample call does
// not launch 8 million blocks that each clear and commit a private histogram.
inline constexpr std::uint64_t kMaxGridBlocks = std::uint64_t{1} << 16;
// Fig. 9.9 needs one private copy of bins+3 32-bit counters per block in the
// workspace; the grid is capped so the copies stay within this budget (but at
// least one copy, whatever the bin count: kMaxBins + 3 counters are 1 GiB).
inline constexpr std::size_t kPrivateCopiesBudgetBytes = std::size_t{32} << 20;

// ---- host-side sizing, shared by supports / workspace_bytes / run / boundaries --

// The largest dynamic shared memory a block of the current device may opt in
// to; 0 when there is no device to ask.
inline std::size_t max_shared_bytes_per_block() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();  // no device: leave no sticky error behind
    return 0;
  }
  return device_facts(device).max_shared_optin;
}

constexpr std::uint64_t counter_bytes(std::uint64_t num_slots) { return num_slots * sizeof(unsigned int); }

template <class Policy>
constexpr std::size_t shared_bytes(std::uint64_t num_slots) {
  constexpr TextbookPolicy P = Policy::value;
  return P.privatization == Privatization::shared_per_block ? counter_bytes(num_slots) : 0;
}

// Fig. 9.9: how many private copies fit the workspace budget (at least one).
constexpr std::uint64_t max_private_copies(std::uint64_t num_slots) {
  return std::clamp<std::uint64_t>(kPrivateCopiesBudgetBytes / counter_bytes(num_slots), 1, kMaxGridBlocks);
}

// Blocks to launch for n > 0 samples. `resident` is the number of blocks the
// device runs at once (only read when the policy caps the grid there).
// Non-decreasing in n, so a workspace sized for n serves every smaller call.
template <class Policy>
constexpr std::uint64_t grid_blocks(std::uint64_t n, std::uint64_t num_slots, std::uint64_t resident) {
  constexpr TextbookPolicy P = Policy::value;
  const std::uint64_t per_block = std::uint64_t{kBlockThreads} * P.samples_per_thread;
  std::uint64_t blocks = std::max<std::uint64_t>(1, (n + per_block - 1) / per_block);
  // Contiguous partitioning gives thread t exactly samples [t*CFACTOR, (t+1)*CFACTOR),
  // so its grid must cover n: n <= 2^31 keeps it under 2^31 / 4096 blocks.
  if constexpr (P.partition == Partition::contiguous) return blocks;
  blocks = std::min(blocks, kMaxGridBlocks);
  if constexpr (P.privatization == Privatization::global_per_block)
    blocks = std::min(blocks, max_private_copies(num_slots));
  if constexpr (P.cap_grid_at_resident_blocks) blocks = std::min(blocks, std::max<std::uint64_t>(resident, 1));
  return blocks;
}

// ---- device side ----------------------------------------------------------------

struct TextbookKernelArgs {
  const void* samples;
  std::uint64_t n;
  BinIndexer indexer;
  std::uint64_t* slots;        // binning.slots() 64-bit output counters
  unsigned int* block_copies;  // Fig. 9.9: gridDim.x copies of num_slots counters (zero on entry)
  unsigned int num_slots;      // bins + 3 <= kMaxBins + 3 < 2^32
  bool unit_integer_bins;      // Binning::unit_integer_bins(): enables the integer fast path
};

// The slot of one sample: indexer.slot(double(x)), with a fast path for integer
// samples in unit-width integer bins (per-value bins, [0, 256) in 256 bins...).
// It is exactly slot(): unit_integer_bins() means an even binning with an
// integer lower bound and step == 1.0, so for an integer x with lower <= x < upper
// and k = x - lower < bins, k is computed exactly (both are integers, |lower| <
// 2^53 since upper - lower rounds to bins <= 2^28 while x is a 32-bit integer),
// even_edge(k) = lower + k*1.0 = x <= x, and x < even_edge(k+1) (= x + 1, or
// upper when k+1 == bins); slot()'s search returns that unique k. Everything
// else (outside the range, or k >= bins when upper exceeds lower + bins by less
// than rounding) takes slot() itself.
template <class T>
__device__ __forceinline__ unsigned int slot_of(const TextbookKernelArgs& a, T sample) {
  const double x = static_cast<double>(sample);
  if constexpr (std::is_integral_v<T>) {
    if (a.unit_integer_bins && x >= a.indexer.lower && x < a.indexer.upper) {
      const double k = x - a.indexer.lower;
      if (k < static_cast<double>(a.indexer.bins)) return static_cast<unsigned int>(k);
    }
  }
  return static_cast<unsigned int>(a.indexer.slot(x));
}

// Four consecutive samples, loaded with one 4*sizeof(T)-byte access (two
// 16-byte ones for f64): Listing 3's 32-bit load of four bytes, generalized.
template <class T>
struct alignas(4 * sizeof(T)) FourSamples {
  T sample[4];
};

// Calls visit(x) for every sample x this thread owns, in the order it meets them.
template <class Policy, class T, bool Aligned, class Visit>
__device__ __forceinline__ void for_each_owned_sample(const void* samples, std::uint64_t n, Visit& visit) {
  constexpr TextbookPolicy P = Policy::value;
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t grid_threads = std::uint64_t{gridDim.x} * blockDim.x;
  if constexpr (P.partition == Partition::contiguous) {
    // Fig. 9.12 line 10: i from tid*CFACTOR to min((tid+1)*CFACTOR, length).
    const std::uint64_t begin = thread * P.samples_per_thread;
    const std::uint64_t end = std::min<std::uint64_t>(begin + P.samples_per_thread, n);
    for (std::uint64_t i = begin; i < end; ++i) visit(load_sample<T, Aligned>(samples, i));
  } else if constexpr (P.four_samples_per_load && Aligned) {
    // Listing 3, with what it leaves out: the samples before the first address
    // aligned to 4*sizeof(T) (the head) and the n mod 4 after the last whole
    // group (the tail) are counted one by one; `Aligned` (samples aligned to
    // sizeof(T)) makes the head a whole number of samples.
    constexpr std::uint64_t kGroupBytes = 4 * sizeof(T);
    const auto address = reinterpret_cast<std::uintptr_t>(samples);
    const std::uint64_t head =
        std::min<std::uint64_t>(n, (kGroupBytes - address % kGroupBytes) % kGroupBytes / sizeof(T));
    const std::uint64_t groups = (n - head) / 4;
    const std::uint64_t tail_begin = head + 4 * groups;
    const auto* group = reinterpret_cast<const FourSamples<T>*>(static_cast<const T*>(samples) + head);
    for (std::uint64_t g = thread; g < groups; g += grid_threads) {
      const FourSamples<T> four = group[g];
      visit(four.sample[0]);
      visit(four.sample[1]);
      visit(four.sample[2]);
      visit(four.sample[3]);
    }
    // At most 3 + 3 single samples: threads 0..5 take one each (a grid has >= 256 threads).
    const std::uint64_t singles = head + (n - tail_begin);
    if (thread < singles) {
      const std::uint64_t i = thread < head ? thread : tail_begin + (thread - head);
      visit(load_sample<T, true>(samples, i));
    }
  } else {
    // Fig. 9.14 line 10 / Listing 2: i = tid; i < length; i += blockDim.x*gridDim.x.
    // (Listing 3 on samples not aligned to their size lands here too: no
    // multi-sample access can be aligned then, so it reads them one by one.)
    for (std::uint64_t i = thread; i < n; i += grid_threads) visit(load_sample<T, Aligned>(samples, i));
  }
}

// Fig. 9.15's accumulator and prevBinIdx: the slot of the run being counted and its length.
struct RunOfEqualSlots {
  static constexpr unsigned int kNone = 0xffffffffu;  // no slot is this large (kMaxBins + 3 < 2^32 - 1)
  unsigned int slot = kNone;
  unsigned int length = 0;  // <= n <= 2^31

  template <class Add>
  __device__ __forceinline__ void push(unsigned int next, Add& add) {
    if (next == slot) {
      ++length;
      return;
    }
    if (length > 0) add(slot, length);
    slot = next;
    length = 1;
  }
  // Fig. 9.15 lines 27-29: the last run is still in the register when the loop ends.
  template <class Add>
  __device__ __forceinline__ void flush(Add& add) {
    if (length > 0) add(slot, length);
  }
};

template <class Policy, class T, bool Aligned>
__global__ void __launch_bounds__(kBlockThreads, 1) textbook_histogram_kernel(const TextbookKernelArgs a) {
  constexpr TextbookPolicy P = Policy::value;
  extern __shared__ unsigned int shared_copy[];
  unsigned int* block_copy = nullptr;
  if constexpr (P.privatization == Privatization::shared_per_block) {
    // Fig. 9.10 lines 03-07: the block clears its private copy together.
    for (unsigned int s = threadIdx.x; s < a.num_slots; s += blockDim.x) shared_copy[s] = 0u;
    __syncthreads();
    block_copy = shared_copy;
  } else if constexpr (P.privatization == Privatization::global_per_block) {
    // Fig. 9.9 line 06: histo[blockIdx.x*NUM_BINS + bin]. The copies are zero on
    // entry: the workspace contract (docs/ARCHITECTURE.md), kept by the commit below.
    block_copy = a.block_copies + std::size_t{blockIdx.x} * a.num_slots;
  }

  auto add = [&](unsigned int slot, unsigned int count) {
    if constexpr (Policy::value.privatization == Privatization::none)
      atomicAdd(reinterpret_cast<unsigned long long*>(a.slots + slot), static_cast<unsigned long long>(count));
    else
      atomicAdd(block_copy + slot, count);
  };
  if constexpr (P.aggregate_runs) {
    RunOfEqualSlots run;
    auto visit = [&](T x) { run.push(slot_of(a, x), add); };
    for_each_owned_sample<Policy, T, Aligned>(a.samples, a.n, visit);
    run.flush(add);
  } else {
    auto visit = [&](T x) { add(slot_of(a, x), 1u); };
    for_each_owned_sample<Policy, T, Aligned>(a.samples, a.n, visit);
  }

  if constexpr (P.privatization != Privatization::none) {
    // Fig. 9.10 lines 16-23: commit the private copy once every thread is done.
    // The output slots are 64-bit, so unlike Fig. 9.9 no block's copy can serve
    // as the public one: every block commits its own.
    __syncthreads();
    for (unsigned int s = threadIdx.x; s < a.num_slots; s += blockDim.x) {
      if constexpr (P.privatization == Privatization::shared_per_block) {
        add_to_slot(a.slots + s, block_copy[s]);  // skips zeros, as Fig. 9.10 line 20
      } else {
        // Read and clear in one L2 operation, where the block's atomics landed:
        // no stale L1 line can be read, and the workspace is left zero.
        add_to_slot(a.slots + s, atomicExch(block_copy + s, 0u));
      }
    }
  }
}

// ---- the strategy functions -----------------------------------------------------

template <class Policy, class T, bool Aligned>
auto* kernel_for() {
  return &textbook_histogram_kernel<Policy, T, Aligned>;
}

// Blocks of this policy's kernel for sample type T the device runs at once.
template <class Policy, class T, bool Aligned>
std::uint64_t resident_grid(std::uint64_t num_slots) {
  constexpr TextbookPolicy P = Policy::value;
  if constexpr (!P.cap_grid_at_resident_blocks) {
    return 0;
  } else {
    auto kernel = kernel_for<Policy, T, Aligned>();
    allow_dynamic_shared(kernel, shared_bytes<Policy>(num_slots));
    return static_cast<std::uint64_t>(resident_blocks(kernel, kBlockThreads, shared_bytes<Policy>(num_slots)));
  }
}

template <class Policy>
bool supports(const Problem& problem, std::string* why_not) {
  constexpr TextbookPolicy P = Policy::value;
  if constexpr (P.privatization == Privatization::shared_per_block) {
    const std::size_t needed = shared_bytes<Policy>(problem.binning->slots());
    const std::size_t limit = max_shared_bytes_per_block();
    if (needed > limit) {
      if (why_not)
        *why_not = limit == 0
                       ? std::string("no CUDA device to size the shared-memory histogram against")
                       : "a private copy of " + std::to_string(problem.binning->bins()) +
                             " bins + 3 32-bit counters needs " + std::to_string(needed) +
                             " bytes of shared memory; this device gives a block at most " + std::to_string(limit);
      return false;
    }
  }
  (void)problem;
  (void)why_not;
  return true;
}

template <class Policy>
std::size_t workspace_bytes(const Problem& problem) {
  constexpr TextbookPolicy P = Policy::value;
  if constexpr (P.privatization == Privatization::global_per_block) {
    const std::uint64_t num_slots = problem.binning->slots();
    return grid_blocks<Policy>(problem.n, num_slots, 0) * counter_bytes(num_slots);
  } else {
    (void)problem;
    return 0;
  }
}

template <class Policy>
void run(const RunArgs& args) {
  clear_slots_unless_accumulating(args);
  if (args.n == 0) return;
  const std::uint64_t num_slots = args.binning->slots();
  TextbookKernelArgs k{};
  k.samples = args.samples;
  k.n = args.n;
  k.indexer = args.indexer;
  k.slots = args.slots;
  k.num_slots = static_cast<unsigned int>(num_slots);
  k.unit_integer_bins = args.binning->unit_integer_bins();
  dispatch_type_and_alignment(args, [&]<class T, bool Aligned>() {
    auto kernel = kernel_for<Policy, T, Aligned>();
    const std::size_t smem = shared_bytes<Policy>(num_slots);
    allow_dynamic_shared(kernel, smem);
    const std::uint64_t grid = grid_blocks<Policy>(args.n, num_slots, resident_grid<Policy, T, Aligned>(num_slots));
    if constexpr (Policy::value.privatization == Privatization::global_per_block) {
      if (args.workspace_bytes < grid * counter_bytes(num_slots))
        throw Error(ErrorKind::internal, "textbook kernel: the workspace holds fewer private copies than blocks");
      k.block_copies = static_cast<unsigned int*>(args.workspace);
    }
    kernel<<<static_cast<unsigned int>(grid), kBlockThreads, smem, stream_of(args)>>>(k);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  });
}

// The sample counts where the kernel's shape changes: a block's worth of
// samples, the end of one-thread-per-sample (grid cap), Fig. 9.9's copy budget,
// the resident grid of the coarsened kernels, Listing 3's groups of four.
template <class Policy>
std::vector<std::uint64_t> boundary_sizes(const Problem& problem) {
  constexpr TextbookPolicy P = Policy::value;
  const std::uint64_t num_slots = problem.binning->slots();
  const std::uint64_t per_thread = P.samples_per_thread;
  const std::uint64_t per_block = kBlockThreads * per_thread;
  std::vector<std::uint64_t> sizes = {per_thread, per_block, 2 * per_block};
  if constexpr (P.four_samples_per_load) sizes.insert(sizes.end(), {3, 4, 5, 7, 8, 9});
  if constexpr (P.partition == Partition::interleaved) {
    std::uint64_t capped = kMaxGridBlocks;
    if constexpr (P.privatization == Privatization::global_per_block) capped = max_private_copies(num_slots);
    if constexpr (P.cap_grid_at_resident_blocks) {
      try {
        visit_sample_type(problem.type, [&](auto tag) {
          capped = std::min(capped, resident_grid<Policy, typename decltype(tag)::type, true>(num_slots));
        });
      } catch (const Error&) {
        // no device to ask: leave out the resident-grid boundary
      }
    }
    sizes.push_back(capped * per_block);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// A Strategy whose functions are this policy's instantiations.
template <class Policy>
constexpr Strategy make_strategy(const char* name, const char* summary, const char* source) {
  return Strategy{name,         Backend::cuda,     summary,
                  source,       &supports<Policy>, &workspace_bytes<Policy>,
                  &run<Policy>, &boundary_sizes<Policy>};
}

}  // namespace levelhist::cuda_detail::textbook
