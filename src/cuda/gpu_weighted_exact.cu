// gpu_weighted_exact: weighted sums that are bit-identical on every run, grid
// and strategy (Request::deterministic; the rule and its error bound:
// src/core/fixed_point.hpp), and the sums of squared weights beside them;
// auto's choice for deterministic sums and for sums of squares on the GPU.
//
// The structure is gpu_weighted_shared's (weighted_shared.cuh): one histogram
// per block in shared memory, the same bin maps, a warp whose 32 samples share
// one slot adds them up by shuffles and adds once (so constant data is not 32
// atomics on one address). What is added differs: each weight, rounded to
// integer quanta of 2^(E - 40) (E from the call's largest |weight|), as a
// 64-bit integer. Integer adds give the
// same sum in any order. Blocks take contiguous ranges of at most 2^21 samples,
// so a block's 64-bit sums cannot overflow (2^21 x 2^40 < 2^63); each block
// adds its sums into a 128-bit accumulator per slot in the workspace (two
// 64-bit atomics and a carry), and the last block (a ticket) turns each into
// one double, adds it into the caller's sums and clears the workspace.
// Non-finite weights set flags per slot instead (fixed_point.hpp).
//
// E is needed before the first weight is added, and finding it means reading
// every weight. A call of one piece (the common case) therefore speculates:
// the plan keeps the bound of its last call on the device, and the counting
// pass rounds with that bound's exponent while it finds the call's own bound
// (a maximum a thread and one atomic a warp). Its last block compares the
// two exponents: equal, the sums are final, as if the bound had been found
// first; different (or no guess yet, or blocks that read different guesses
// because another stream's call moved it), it clears the accumulators and a
// second pass counts again with the found bound. That second kernel is always
// launched (the host does not wait to learn) and returns at once when it is
// not needed. The sums depend only on the call's data either way; the guess
// decides only how long the call takes: one pass over samples and weights
// when consecutive calls' largest weights share a binary exponent, two passes
// on a miss, and after a miss the next call first finds its bound alone (a
// pass over the weights), as calls of several pieces always do.
//
// Four choices measured (docs/PERFORMANCE-shapes.md, "Deterministic sums"):
// 4-byte samples with f32 weights take gpu_weighted_shared's column calls (16
// copies of each sum by lane, 1024 threads, no vote a sample), 1 GiB of f32 +
// f32 into 1024 bins 1777 -> 2123 GB/s uniform, 2321 -> 2250 constant (H100);
// the shared 64-bit adds are two native 32-bit adds (shared_add; sm_90's
// 64-bit shared add is a compare-and-swap loop), 1.25x on uniform data; large
// calls take gpu_weighted_shared's 256-thread tuning with the next trip's
// loads first; and a trip whose samples all share one slot across the warp is
// added once for the warp (constant data 1.37x, uniform 0.91x on an H200).
#include <algorithm>
#include <string>
#include <type_traits>

#include "core/env_knob.hpp"
#include "core/fixed_point.hpp"
#include "core/strategies.hpp"
#include "cuda/weight_bound.cuh"
#include "cuda/weighted_shared.cuh"

namespace levelhist::cuda_detail::exact {
namespace {

using namespace general;

constexpr std::uint64_t kMaxPerBlock = fixed::kPartialSamples / 2;  // 2^21 samples
constexpr std::uint64_t kMinPerBlock = 16 * 1024;

struct Accumulator {  // a 128-bit sum in the workspace
  unsigned long long lo;
  long long hi;
};

// E of a bound kept as a double's bits.
__device__ __forceinline__ int exponent_of_bits(unsigned long long bits) {
  return fixed::exponent_of(__longlong_as_double(static_cast<long long>(bits)));
}

// Which pass a launch is (the file's comment).
enum class Pass : int {
  given,        // the call's bound was found before: count with it
  speculative,  // count with the guess's exponent (or, without a guess, find the bound only) while finding the bound
  again,        // count with the found bound if the speculative pass could not keep its sums, else return
};

// What `again` holds after a speculative pass that keeps no sums.
constexpr unsigned kNoGuess = 1;  // the pass found the bound only; the next call may guess it
constexpr unsigned kMissed = 2;   // the guess's exponent was wrong, or blocks read different guesses

struct ExactArgs {
  const unsigned char* samples;
  const unsigned char* weights;
  std::uint64_t n;
  std::uint64_t per_block;
  Pass pass;
  unsigned long long* bound;         // the call's bound (a double's bits): found before (given) or while counting
  unsigned long long* guess;         // speculative, again: the plan's guess, a bound's bits (0: none)
  unsigned long long* guess_used;    // 1 + the guess the speculative blocks rounded with (0: none read yet)
  unsigned* again;                   // 0, kNoGuess or kMissed (bits)
  Accumulator* accum;    // slots (x2 with squares: the squares' after the sums')
  unsigned* flags;       // the same
  unsigned* ticket;
  double* sums;
  double* squares;       // nullptr: no squares
  std::uint32_t slot_count;
  bool accumulate;
  bool split_adds;       // shared 64-bit adds as two 32-bit ones (shared_add)
  std::uint32_t copies;  // copies of each shared sum, by lane (1, or the column calls' 16)
};

__device__ __forceinline__ void add_wide(Accumulator* a, long long v) {
  if (v == 0) return;
  const unsigned long long u = static_cast<unsigned long long>(v);
  const unsigned long long old = atomicAdd(&a->lo, u);
  const long long carry = (old + u < old ? 1 : 0) + (v < 0 ? -1 : 0);
  if (carry) atomicAdd(reinterpret_cast<unsigned long long*>(&a->hi), static_cast<unsigned long long>(carry));
}

// Adds v to a 64-bit integer in shared memory. sm_90 has no shared 64-bit
// integer add: atomicAdd on one compiles to a compare-and-swap loop
// (ATOMS.CAST.SPIN.64 in the SASS, as the f64 adds of gpu_weighted_shared).
// With `split`, two native 32-bit adds instead: the low word's, whose old
// value says whether this add carried out of it, then the high word's with
// that carry. Each add's carry is counted by the add that made it, so once
// all adds are done the two words hold the sum modulo 2^64, exactly as the
// 64-bit add would (the block's sums are read after a barrier).
__device__ __forceinline__ void shared_add(long long* h, long long v, bool split) {
  if (!split) {
    atomicAdd(reinterpret_cast<unsigned long long*>(h), static_cast<unsigned long long>(v));
    return;
  }
  auto* words = reinterpret_cast<unsigned*>(h);  // little-endian: [0] low, [1] high
  const auto bits = static_cast<unsigned long long>(v);
  const auto low = static_cast<unsigned>(bits);
  const unsigned old = atomicAdd(words, low);
  const unsigned high = static_cast<unsigned>(bits >> 32) + (old + low < old ? 1u : 0u);
  if (high) atomicAdd(words + 1, high);
}

// w * w in double, rounded once, as the host's reference squares it.
__device__ __forceinline__ double square_of(double w) { return __dmul_rn(w, w); }

// A block's shared sums: slot s's copy c at h[s * copies + c], a lane adding
// into copy `column` (its lane mod copies; weighted_shared.cuh's column calls
// say why 16 copies); one word of flags per slot at f[s]. Integer sums: the
// copies' total does not depend on which copy took which weight.
struct SharedSums {
  long long* h;
  unsigned* f;
  std::uint32_t copies, column;
};

// Adds the 32 lanes' rounded weights q, all of slot s, with one add (warp
// aggregation) into copy warp mod copies (the column calls' 32 warps on one
// slot spread over its 16 copies), and each lane's flags of non-finite weights.
__device__ __forceinline__ void add_warp_run(const SharedSums& to, std::uint32_t s, long long q, unsigned special,
                                             bool split) {
  if (special) atomicOr(to.f + s, special);
#pragma unroll
  for (int o = 16; o; o >>= 1) q += __shfl_xor_sync(0xFFFFFFFFu, q, o);
  if ((threadIdx.x & 31) == 0 && q) shared_add(to.h + s * to.copies + ((threadIdx.x >> 5) & (to.copies - 1)), q, split);
}

// Adds one weight w of slot s (the warp's 32 lanes together: `s0` is lane 0's
// slot, `uniform` whether all lanes have it).
__device__ __forceinline__ void add_weight(const SharedSums& to, std::uint32_t s, double w,
                                           const fixed::Quantizer& quantize, bool valid, bool uniform, std::uint32_t s0,
                                           bool split) {
  const unsigned special = valid ? fixed::special_of(w) : 0;
  const long long q = valid && !special ? quantize(w) : 0;
  if (uniform) return add_warp_run(to, s0, q, special, split);
  if (special) atomicOr(to.f + s, special);
  if (q) shared_add(to.h + s * to.copies + to.column, q, split);
}

// Adds a block's range of samples and weights into its shared sums (smem:
// the sums, then the squares, then their flags, then the map's table), each
// weight rounded to quanta of exponent e; `largest` takes the largest finite
// |weight| the thread saw (the speculative pass's bound).
template <class T, class W, class Map, class Tuning>
__device__ __forceinline__ void count_range(const ExactArgs& a, Map& map, int e, const unsigned char* base,
                                            const unsigned char* wbase, std::uint64_t count, unsigned char* smem,
                                            bound::MagnitudeBits<W>& largest) {
  constexpr int K = kPerVector<T>;
  const bool squares = a.squares != nullptr;
  const std::uint32_t sets = squares ? 2 : 1, copies = a.copies;
  const std::uint32_t values = a.slot_count * sets;
  long long* h = reinterpret_cast<long long*>(smem);  // sums, then squares, `copies` each
  unsigned* f = reinterpret_cast<unsigned*>(smem + std::size_t{values} * copies * 8);  // their flags
  for (std::uint32_t i = threadIdx.x; i < values * copies; i += blockDim.x) h[i] = 0;
  for (std::uint32_t i = threadIdx.x; i < values; i += blockDim.x) f[i] = 0;
  map.setup(smem + round_up(std::size_t{values} * (copies * 8 + 4), 16));
  __syncthreads();
  const fixed::Quantizer quantize(e), quantize_square(2 * e);
  const unsigned lane = threadIdx.x & 31;
  const SharedSums sums{h, f, copies, lane & (copies - 1)};
  const SharedSums square_sums{h + std::size_t{a.slot_count} * copies, f + a.slot_count, copies, sums.column};
  // One sample of slot s and its weight w (the warp's lanes together: `s0` is
  // lane 0's slot, `uniform` whether all lanes have it).
  auto one = [&](std::uint32_t s, double w, bool valid, bool uniform, std::uint32_t s0) {
    add_weight(sums, s, w, quantize, valid, uniform, s0, a.split_adds);
    if (squares) add_weight(square_sums, s, square_of(w), quantize_square, valid, uniform, s0, a.split_adds);
  };
  // One sample alone (heads, tails, unaligned samples).
  auto single = [&](std::uint32_t s, W w) {
    bound::keep_larger(largest, bound::finite_magnitude_bits(w));
    one(s, static_cast<double>(w), true, false, 0);
  };
  if (reinterpret_cast<std::uintptr_t>(base) % sizeof(T) == 0) {
    const Split16 sp = split16<T>(base, count);
    const T* xs = reinterpret_cast<const T*>(base);
    // Head and tail: at most 2 x 15 samples, one lane each (never uniform).
    if (threadIdx.x < sp.head) single(map(xs[threadIdx.x]), load_unaligned<W>(wbase + threadIdx.x * sizeof(W)));
    if (sp.tail + threadIdx.x < count)
      single(map(xs[sp.tail + threadIdx.x]), load_unaligned<W>(wbase + (sp.tail + threadIdx.x) * sizeof(W)));
    const uint4* body = reinterpret_cast<const uint4*>(base + sp.head * sizeof(T));
    const unsigned char* wbody = wbase + sp.head * sizeof(W);
    constexpr std::size_t kWeightBytes = K * sizeof(W);
    const bool vector_weights = reinterpret_cast<std::uintptr_t>(wbody) % (kWeightBytes < 16 ? kWeightBytes : 16) == 0;
    weighted::for_each_vector<T, W, Tuning::kPrefetch>(
        body, wbody, vector_weights, sp.vectors, threadIdx.x - lane, blockDim.x,
        [&](const T(&x)[K], const W(&w)[K], bool valid) {
          if (valid) {
#pragma unroll
            for (int k = 0; k < K; ++k) bound::keep_larger(largest, bound::finite_magnitude_bits(w[k]));
          }
          if constexpr (K <= 4) {
            std::uint32_t slot[K];
#pragma unroll
            for (int k = 0; k < K; ++k) slot[k] = valid ? map(x[k]) : 0;
            // The warp's whole trip in one slot (constant data): the K
            // weights of each lane summed first, then one warp add, instead
            // of K of them. Vectors of more samples (1- and 2-byte ones) are
            // not checked: their slots would hold 8 or 16 more registers.
            const std::uint32_t first = __shfl_sync(0xFFFFFFFFu, slot[0], 0);
            bool same = true;
#pragma unroll
            for (int k = 0; k < K; ++k) same = same && (!valid || slot[k] == first);
            if (__all_sync(0xFFFFFFFFu, same)) {
              long long q = 0, q2 = 0;
              unsigned special = 0, special2 = 0;
#pragma unroll
              for (int k = 0; k < K; ++k) {
                const double v = valid ? static_cast<double>(w[k]) : 0.0;
                const unsigned sp = fixed::special_of(v);
                special |= sp;
                if (!sp) q += quantize(v);
                if (squares) {
                  const double v2 = square_of(v);
                  const unsigned sp2 = fixed::special_of(v2);
                  special2 |= sp2;
                  if (!sp2) q2 += quantize_square(v2);
                }
              }
              add_warp_run(sums, first, q, special, a.split_adds);
              if (squares) add_warp_run(square_sums, first, q2, special2, a.split_adds);
              return;
            }
#pragma unroll
            for (int k = 0; k < K; ++k) {
              if constexpr (Tuning::kTripVote) {  // 16 copies: lanes share a copy in pairs, no vote a sample
                if (valid) one(slot[k], static_cast<double>(w[k]), true, false, 0);
              } else {
                const weighted::WarpSlot s = weighted::warp_slot(slot[k], valid);
                one(s.slot, valid ? static_cast<double>(w[k]) : 0.0, valid, s.uniform, s.first);
              }
            }
          } else {
#pragma unroll
            for (int k = 0; k < K; ++k) {
              const weighted::WarpSlot s = weighted::warp_slot(valid ? map(x[k]) : 0, valid);
              one(s.slot, valid ? static_cast<double>(w[k]) : 0.0, valid, s.uniform, s.first);
            }
          }
        });
  } else {  // samples not aligned to their size: one unaligned load each
    for (std::uint64_t i = threadIdx.x; i < count; i += blockDim.x)
      single(map(load_unaligned<T>(base + i * sizeof(T))), load_unaligned<W>(wbase + i * sizeof(W)));
  }
}

template <class T, class W, class Map, class Tuning>
__global__ void __launch_bounds__(Tuning::kThreads) exact_kernel(ExactArgs a, Map map) {
  extern __shared__ __align__(16) unsigned char smem[];
  // What this block does (one thread reads the words every thread must agree on).
  enum : int { kSkip, kCount, kBoundOnly };
  __shared__ int block_work, block_exponent;
  if (threadIdx.x == 0) {
    int work = kCount, e = 0;
    if (a.pass != Pass::speculative) {
      if (a.pass == Pass::again && *reinterpret_cast<volatile unsigned*>(a.again) == 0) work = kSkip;
      e = exponent_of_bits(*reinterpret_cast<volatile unsigned long long*>(a.bound));
    } else {
      const unsigned long long g = *reinterpret_cast<volatile unsigned long long*>(a.guess);
      const unsigned long long old = atomicCAS(a.guess_used, 0ull, g + 1);
      if (old != 0 && old != g + 1) atomicOr(a.again, kMissed);  // another stream's call moved the guess
      work = g != 0 ? kCount : kBoundOnly;
      e = exponent_of_bits(g);
    }
    block_work = work, block_exponent = e;
  }
  __syncthreads();
  const int work = block_work, e = block_exponent;
  if (work == kSkip) return;  // a second pass that is not needed: every block leaves at once
  const std::uint64_t begin = std::uint64_t{blockIdx.x} * a.per_block;
  const std::uint64_t end = begin + a.per_block < a.n ? begin + a.per_block : a.n;
  const unsigned char* base = a.samples + begin * sizeof(T);
  const unsigned char* wbase = a.weights + begin * sizeof(W);
  const std::uint64_t count = end > begin ? end - begin : 0;
  const bool squares = a.squares != nullptr;
  const std::uint32_t sets = squares ? 2 : 1;
  bound::MagnitudeBits<W> largest = 0;  // this thread's largest finite |weight| (speculative pass)
  if (work == kBoundOnly) {
    largest = bound::range_bound<W>(wbase, count, threadIdx.x, blockDim.x);
  } else {
    count_range<T, W, Map, Tuning>(a, map, e, base, wbase, count, smem, largest);
    __syncthreads();
    const std::uint32_t copies = a.copies;
    const long long* h = reinterpret_cast<const long long*>(smem);
    const unsigned* f = reinterpret_cast<const unsigned*>(smem + std::size_t{a.slot_count} * sets * copies * 8);
    for (std::uint32_t s = threadIdx.x; s < a.slot_count * sets; s += blockDim.x) {
      // The copies' sum (exact: modulo 2^64, as the block's one sum was),
      // copy (c + s) mod copies first so that a warp's reads spread over the banks.
      unsigned long long v = 0;
      for (std::uint32_t c = 0; c < copies; ++c)
        v += static_cast<unsigned long long>(h[s * copies + ((c + s) & (copies - 1))]);
      add_wide(a.accum + s, static_cast<long long>(v));
      if (f[s]) atomicOr(a.flags + s, f[s]);
    }
  }
  if (a.pass == Pass::speculative) bound::fold_into<W>(largest, a.bound);
  if (!last_block_to_finish(a.ticket)) return;

  // The last block: keep the sums (final, into the caller's), or clear them for the second pass.
  __shared__ bool keep;
  __shared__ int final_exponent;
  __shared__ unsigned long long found;
  if (threadIdx.x == 0) {
    bool k = true;
    const unsigned long long b = *reinterpret_cast<volatile unsigned long long*>(a.bound);
    const int fe = exponent_of_bits(b);  // e, but for a speculative pass whose guess missed
    if (a.pass == Pass::speculative) {
      const unsigned again = *reinterpret_cast<volatile unsigned*>(a.again) | (work == kBoundOnly ? kNoGuess : 0u) |
                             (work == kCount && fe != e ? kMissed : 0u);
      k = again == 0;
      *a.again = again;
      *a.guess_used = 0;
    }
    keep = k, final_exponent = fe, found = b;
  }
  __syncthreads();
  for (std::uint32_t s = threadIdx.x; s < a.slot_count * sets; s += blockDim.x) {
    fixed::Wide sum;
    sum.lo = atomicExch(&a.accum[s].lo, 0ull);
    sum.hi = static_cast<long long>(atomicExch(reinterpret_cast<unsigned long long*>(&a.accum[s].hi), 0ull));
    const unsigned flags = atomicExch(a.flags + s, 0u);
    if (!keep) continue;
    const bool square = s >= a.slot_count;
    const double v = fixed::to_double(sum, flags, square ? 2 * final_exponent : final_exponent);
    double* out = square ? a.squares + (s - a.slot_count) : a.sums + s;
    *out = (a.accumulate ? *out : 0.0) + v;
  }
  if (threadIdx.x == 0) {
    // The bound stays for the given pass (every piece of the call reads it;
    // the plan clears it after the last).
    if (a.pass == Pass::speculative && keep) *a.guess = found, *a.bound = 0;
    if (a.pass == Pass::again) {
      // After a miss the next call finds its bound first; after a call
      // without a guess, the next one guesses this call's bound.
      *a.guess = *a.again == kNoGuess ? found : 0;
      *a.bound = 0, *a.again = 0;
    }
    *a.ticket = 0;
  }
}

bool supports(const Problem& p, std::string* why_not) {
  auto no = [&](const std::string& why) {
    if (why_not) *why_not = "gpu_weighted_exact: " + why;
    return false;
  };
  if (!p.weighted) return no("sums weights only (Problem::weighted)");
  if (p.weight_type != SampleType::f32 && p.weight_type != SampleType::f64) return no("weights must be f32 or f64");
  if (max_shared_bytes() == 0) return no("no CUDA device to size shared memory for");
  const std::size_t need = round_up(p.binning->slots() * (p.weight_squares ? 2 : 1) * 12, 16) + map_table_bytes(p);
  if (need > max_shared_bytes())
    return no(std::to_string(p.binning->slots()) + " integer sums" + (p.weight_squares ? " and squares" : "") +
              " do not fit in shared memory");
  return true;
}

std::size_t workspace_bytes(const Problem& p) {
  const std::size_t values = p.binning->slots() * (p.weight_squares ? 2 : 1);
  return round_up(values * sizeof(Accumulator), 256) + round_up(values * 4, 256) + 256;
}

// Shared memory of a block with `copies` copies of each sum.
std::size_t shared_bytes(const RunArgs& a, std::size_t table_bytes, std::uint32_t copies) {
  const std::size_t values = a.binning->slots() * (a.weight_squares ? 2 : 1);
  return round_up(values * (copies * 8 + 4), 16) + table_bytes;
}

template <class T, class W, class Map, class Tuning>
void launch_tuned(const RunArgs& a, const Map& map, std::uint32_t copies) {
  auto kernel = exact_kernel<T, W, Map, Tuning>;
  allow_large_shared(kernel);
  const std::size_t slot_count = a.binning->slots();
  const std::size_t values = slot_count * (a.weight_squares ? 2 : 1);
  const std::size_t smem = shared_bytes(a, map.table_bytes(), copies);
  const int resident = std::max(1, resident_blocks_with(kernel, Tuning::kThreads, smem));
  const std::uint64_t per_block =
      std::clamp<std::uint64_t>((a.n + resident - 1) / resident, kMinPerBlock, kMaxPerBlock);
  const std::uint64_t blocks = std::max<std::uint64_t>(1, (a.n + per_block - 1) / per_block);
  auto* ws = static_cast<unsigned char*>(a.workspace);
  ExactArgs args{};
  args.samples = static_cast<const unsigned char*>(a.samples);
  args.weights = static_cast<const unsigned char*>(a.weights);
  args.n = a.n;
  args.per_block = per_block;
  args.accum = reinterpret_cast<Accumulator*>(ws);
  args.flags = reinterpret_cast<unsigned*>(ws + round_up(values * sizeof(Accumulator), 256));
  // The ticket, then the speculative pass's words (the last 256 bytes).
  unsigned char* words = ws + round_up(values * sizeof(Accumulator), 256) + round_up(values * 4, 256);
  args.ticket = reinterpret_cast<unsigned*>(words);
  args.again = reinterpret_cast<unsigned*>(words + 4);
  args.guess_used = reinterpret_cast<unsigned long long*>(words + 8);
  args.sums = a.weight_sums;
  args.squares = a.weight_squares;
  args.slot_count = static_cast<std::uint32_t>(slot_count);
  args.accumulate = a.accumulate;
  args.split_adds = ::levelhist::detail::env_knob("LEVELHIST_EXACT_SPLIT_ADDS", 1, 0, 1) != 0;
  args.copies = copies;
  args.bound = reinterpret_cast<unsigned long long*>(a.weight_bound);  // written as bits, by atomicMax
  if (!a.bound_guess) {
    args.pass = Pass::given;
    kernel<<<static_cast<unsigned>(blocks), Tuning::kThreads, smem, stream_of(a)>>>(args, map);
    LEVELHIST_CUDA_CHECK_LAUNCH();
    return;
  }
  args.guess = a.bound_guess;
  for (const Pass pass : {Pass::speculative, Pass::again}) {
    args.pass = pass;
    kernel<<<static_cast<unsigned>(blocks), Tuning::kThreads, smem, stream_of(a)>>>(args, map);
    LEVELHIST_CUDA_CHECK_LAUNCH();
  }
}

// The tunings of gpu_weighted_shared (weighted::WeightedPolicy, the same
// rules and knobs): 4-byte samples with f32 weights take the column calls'
// 16 copies of each sum where they fit in shared memory, else large calls
// take 256 threads that load the next trip before adding the current one.
template <class T, class W, class Map>
void launch(const RunArgs& a, const Map& map) {
  if (!a.weight_bound)
    throw Error(ErrorKind::internal,
                "gpu_weighted_exact ran without a word for the call's weight bound (run it through a Plan)");
  using Policy = weighted::WeightedPolicy;
  if constexpr (Policy::kHasLargeCalls<T, W>) {
    if (weighted::columns_allowed() && shared_bytes(a, map.table_bytes(), Policy::kColumnCopies) <= max_shared_bytes())
      return launch_tuned<T, W, Map, Policy::ColumnCalls>(a, map, Policy::kColumnCopies);
    if (a.n * (sizeof(T) + sizeof(W)) >= weighted::large_call_bytes())
      return launch_tuned<T, W, Map, Policy::LargeCalls>(a, map, 1);
  }
  launch_tuned<T, W, Map, Policy::SmallCalls>(a, map, 1);
}

void run(const RunArgs& a) {
  const MapKind kind = choose_map(a.type, *a.binning);
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_map<T>(a, kind, [&](const auto& map) {
      if (a.weight_type == SampleType::f64) launch<T, double>(a, map);
      else launch<T, float>(a, map);
    });
  });
}

std::vector<std::uint64_t> boundaries(const Problem& p) {
  const std::uint64_t per_vector = 16 / sample_size(p.type);
  return {per_vector - 1, per_vector, per_vector + 1, 32 * per_vector + 1, kMinPerBlock, kMinPerBlock + 1};
}

}  // namespace
}  // namespace levelhist::cuda_detail::exact

namespace levelhist::strategies {

const Strategy gpu_weighted_exact{
    "gpu_weighted_exact",
    Backend::cuda,
    "deterministic weighted sums: weights rounded to integer quanta of the call's largest weight, 64-bit shared sums "
    "per block, 128-bit totals; optional sums of squares",
    "levelhist, after XGBoost's pre-rounded gradient sums (docs/PERFORMANCE-shapes.md)",
    cuda_detail::exact::supports,
    cuda_detail::exact::workspace_bytes,
    cuda_detail::exact::run,
    cuda_detail::exact::boundaries,
    kCapabilityWeights | kCapabilityDeterministic | kCapabilitySquares,
    cuda_detail::general::prepared_tables_bytes,
    cuda_detail::general::prepare_tables};

}  // namespace levelhist::strategies
