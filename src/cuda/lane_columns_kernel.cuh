// The kernel of gpu_lane_columns, levelhist's 256-bin byte histogram at the
// memory-bandwidth limit, level on every distribution (design study in
// docs/PERFORMANCE.md, bench/experiments/level256_study.cu). A template on its
// tuning policy so that the strategy (src/cuda/gpu_lane_columns.cu) and the
// small-call study (bench/experiments/small_calls_study.cu) build the same code.
//
// The idea. The slow case of a per-block shared histogram (PMPP Fig. 9.10, CUB)
// is uniform data: 32 random bins of one warp collide in shared-memory banks.
// Wilt's per-thread counters (part 2) avoid that by giving each thread a column,
// but pay a load and a store per byte plus periodic merges. Here every block
// keeps 32 copies of the histogram interleaved as h[bin][lane]: lane l of every
// warp increments only column l, so the 32 accesses of a warp instruction always
// fall in 32 different banks, whatever the data — zeros, one value, uniform
// noise or a photograph. The warps of a block share the columns through shared
// atomics (ATOMS.POPC.INC: one instruction per byte, no read-modify-write, no
// overflow flushes with 32-bit counters). 16-byte loads, four in flight per
// thread, through the non-coherent path as the limit kernel reads.
//
// One launch, no zeroing kernel, and two ways to end a call, chosen on the host
// by the policy and the size of the call (docs/PERFORMANCE.md section 4,
// changes 5, 6, 9-11 and 13). Both go through the shared BinIndexer, so any
// binning of 8-bit samples runs at the same speed.
// - Path::direct (the library's, at every size): block 0 clears the
//   caller's 64-bit slots and raises a flag in the workspace; every block adds
//   its 256 row sums straight into the slots once it has seen the flag. No fold
//   at the end. The clearing, the raise and the wait for the flag are the work
//   of one extra warp per block (the flag warp), so that their round trips to
//   L2 overlap the other warps' reading and counting instead of following
//   them. A 1 MiB call's blocks took 5620 cycles with thread 0 waiting for the
//   flag after the row sums, 4573 with the flag warp, 2955-3242 with the flag
//   warp and twice as many blocks (small_calls_study; docs/PERFORMANCE.md
//   section 4, change 9). The library's policy keeps at most one block per
//   SM, so each slot sees at most one 64-bit addition per SM.
// - Path::fold (the lab's gpu_lane_columns_fold and grids of hundreds of
//   blocks): every warp counts; blocks add their row sums into
//   32-bit accumulators in the workspace, spread over Policy::kFoldCopies
//   copies; the last block to finish (a ticket, as in the CUDA samples'
//   threadFenceReduction) folds them into the slots. Three round trips to L2
//   more at the end, but each address sees one 32-bit addition per block of its
//   copy, not a 64-bit one per block: with hundreds of blocks that
//   serialization is what costs (with one copy, its cost even depended on the
//   workspace's address: change 12).
// Either way the workspace is left zero, as the contract requires.
#pragma once
#include <algorithm>
#include <cstdint>

#include "cuda/cuda_common.cuh"

namespace levelhist::cuda_detail::lane_columns {

constexpr int kBins = 256;
constexpr int kLanes = 32;
// Copies of the fold's accumulators that a policy may spread its blocks over
// (Policy::kFoldCopies <= this): block b adds into copy b % kFoldCopies.
constexpr int kMaxFoldCopies = 8;

// Per-call state in the workspace: zero between calls.
struct Workspace {
  // Large grids: this call's counts per byte value (n <= 2^31 per call), in
  // Policy::kFoldCopies copies, and the blocks that have added theirs.
  unsigned int byte_counts[kMaxFoldCopies][kBins];
  unsigned int blocks_done;
  // Small grids: 0 until block 0 has cleared the slots; then 1 + the blocks
  // that have seen it. The last of them (it reads gridDim.x) sets it back to 0.
  unsigned int cleared;
};

// Points of a call that the small-call study times (Policy::mark); the
// library's policy ignores them.
enum Mark : int {
  kMarkStart,          // the block's first instruction
  kMarkZeroed,         // shared columns cleared, the first loads in flight
  kMarkCounted,        // every byte of the block counted
  kMarkReady,          // direct: row sums done, flag seen, additions start; fold: additions done
  kMarkEnd,            // additions issued
  kMarkFlagSeen,       // the thread that waits for block 0's flag saw it
  kMarkRaised,         // block 0: the flag raised
  kMarks
};

// Named barrier among the first `threads` threads of the block (PTX bar.sync
// with a thread count): the counting warps meet without the flag warp.
__device__ __forceinline__ void sync_first(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// The whole block's barrier, met from two places: the flag warp (flag_warp)
// and the counting warps (after their row sums) reach it at different points
// of the kernel. __syncthreads is the aligned barrier (PTX bar.sync 0, which
// every thread must execute at the same instruction; compute-sanitizer's
// synccheck reports "divergent threads" otherwise); barrier.sync without
// .aligned is the form the PTX ISA allows from different points.
__device__ __forceinline__ void sync_block_unaligned() { asm volatile("barrier.sync 0;" ::: "memory"); }

// Adds bin `bin`'s 32 lane columns, eight 16-byte words at `row`, to `sum`:
// eight 16-byte loads instead of 32 4-byte ones, staggered by 16 bytes so that
// each quarter warp (the unit of a 16-byte shared load) reads 8 different
// 4-bank groups (TRISH's staggered indexing, section 5.1).
__device__ __forceinline__ void add_row(unsigned int& sum, const uint4* row, int bin) {
#pragma unroll
  for (int c = 0; c < kLanes / 4; ++c) {
    const uint4 q = row[(c + bin) & (kLanes / 4 - 1)];
    sum += q.x + q.y + q.z + q.w;
  }
}

enum class Path { direct, fold };

// Policy::kPermutedAddress: the columns in dynamic shared memory, rows 256
// bytes apart (the first 128 used) in a 64 KiB-aligned region of the block's
// window, so that a byte's counter address, region | byte << 8 | lane * 4, is
// one byte permutation (PRMT) of the sample word with a per-thread key. The
// default layout takes a shift, a mask-and-or and an add of the array's base
// (4 instructions a byte with the atomic; 2 here). Any 16-byte-aligned window
// of kPermutedWindowBytes holds such a region.
//
// Positions (kPositions = 4, permuted layout and direct path only): one set of
// columns per byte position of a 32-bit word, two sets per 64 KiB region (the
// two halves of each row). Interleaved pixels of 1, 2 or 4 channels in one
// row put channel (head + p) mod C at position p of every word after the
// head, so an RGBA frame is counted by the same loop as a byte array.
template <class Policy, int kPositions = 1>
constexpr std::size_t dynamic_shared_bytes() {
  // The columns' regions, and up to 64 KiB before the first aligned one.
  return Policy::kPermutedAddress ? std::size_t{64 * 1024} * (1 + (kPositions + 1) / 2) : 0;
}

// The histogram of each byte position (kNoHistogram: an inactive channel's
// bytes, counted and dropped), and how many histograms of bins + 3 slots the
// call's slots hold.
constexpr unsigned char kNoHistogram = 0xff;
struct Positions {
  unsigned char histogram[4] = {0, 0, 0, 0};
  unsigned int histograms = 1;
};

// A shared-memory atomic increment at a shared-window address (no return
// value: RED, as atomicAdd with an unused result compiles to). Volatile keeps
// it in order with the block's barriers (also volatile asm).
__device__ __forceinline__ void shared_increment(unsigned int address) {
  asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(address));
}

// A call's bytes: `head` before the first 16-byte boundary, `words` whole
// 16-byte words, `tail` bytes after them. Found on the host and passed as a
// kernel parameter, so that none of it holds a register while the words are
// in flight (at 32 registers a live head spilled). 32-bit: a call counts at
// most 2^31 samples (the dispatch splits larger inputs), so words + kUnroll
// strides stay far below 2^32.
struct Split {
  unsigned int head;
  unsigned int words;
  unsigned int tail;
};

inline Split split(const unsigned char* samples, std::uint64_t n) {
  const auto head = static_cast<unsigned int>(
      std::min<std::uint64_t>((16 - (reinterpret_cast<std::uintptr_t>(samples) & 15)) & 15, n));
  return {head, static_cast<unsigned int>((n - head) / 16), static_cast<unsigned int>((n - head) % 16)};
}

// The flag warp of a direct call (see the top of this file).
template <class Policy>
__device__ void flag_warp(Workspace* ws, std::uint64_t* slots, std::uint64_t slot_count, bool accumulate) {
  const int lane = threadIdx.x & 31;
  if (blockIdx.x == 0) {
    if (!accumulate) {
      for (std::uint64_t s = lane; s < slot_count; s += 32) slots[s] = 0;
      __syncwarp();
    }
    if (lane == 0) {
      __threadfence();  // the cleared slots, before the flag says so
      atomicAdd(&ws->cleared, 1u);
      Policy::mark(kMarkRaised);
    }
  }
  if (lane == 0) {
    // The grid never exceeds the blocks that fit the GPU at once, and block 0
    // is dispatched first, so it cannot be waiting for a spinning block's place.
    while (*static_cast<volatile unsigned int*>(&ws->cleared) == 0) {
    }
    __threadfence();  // the clearing, before this block's additions (ordered by the barrier below)
    Policy::mark(kMarkFlagSeen);
  }
  __syncwarp();
  sync_block_unaligned();  // the counting warps add their row sums after this
  // The last block to count itself (block 0's raise + every block = gridDim.x
  // before it) leaves the flag at zero for the next call. After the barrier:
  // the round trip overlaps the block's additions instead of delaying them.
  if (lane == 0 && atomicAdd(&ws->cleared, 1u) == gridDim.x) ws->cleared = 0;
}

// Policy members: kBlockThreads, kMinBlocksPerSM and kDirectMinBlocksPerSM
// (launch bounds of the fold and the direct kernel), kUnroll (16-byte loads in
// flight per thread), the grid rule's kDirectBytesPerBlock, kMaxDirectBlocks,
// kMaxDirectBytes, kLargePath, kLargeBytesPerBlock and kLargeWholeWaves (see
// grid()), kFoldCopies (copies of the fold's accumulators, <= kMaxFoldCopies),
// kPrefetch (the next step's loads before this step's counting),
// kDependentLaunch (a programmatic dependent launch: cuda_common.cuh),
// kVectorRowSums (16-byte loads for the row sums), kPermutedAddress (see
// above), and mark(Mark), a timing hook.
template <class Policy, Path kPath, int kPositions = 1>
__global__ void __launch_bounds__(Policy::kBlockThreads,
                                  kPath == Path::direct ? Policy::kDirectMinBlocksPerSM : Policy::kMinBlocksPerSM)
    kernel(const unsigned char* samples, Split bytes, Workspace* ws, std::uint64_t* slots, bool accumulate,
           bool is_signed, BinIndexer indexer, Positions positions) {
  static_assert(kPositions == 1 || (kPositions == 4 && Policy::kPermutedAddress && kPath == Path::direct),
                "byte positions need the permuted layout and the direct path");
  constexpr int kThreads = Policy::kBlockThreads;
  constexpr int kUnroll = Policy::kUnroll;
  constexpr bool kDirect = kPath == Path::direct;
  // The threads that read and count: all but the flag warp of a direct call.
  constexpr int kCounting = kDirect ? kThreads - 32 : kThreads;
  static_assert(kCounting >= kBins, "thread b adds the row sum of byte value b");
  constexpr bool kPermuted = Policy::kPermutedAddress;
  constexpr int kRowWords = kPermuted ? 2 * kLanes : kLanes;  // columns[bin * kRowWords + lane]
  unsigned int* columns;
  unsigned int region = 0;  // kPermuted: the columns' shared-window address (64 KiB-aligned)
  if constexpr (kPermuted) {
    extern __shared__ uint4 window[];
    const auto base = static_cast<unsigned int>(__cvta_generic_to_shared(window));
    region = (base + 0xffffu) & ~0xffffu;
    columns = reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(window) + (region - base));
  } else {
    __shared__ alignas(16) unsigned int static_columns[kBins * kLanes];
    columns = static_columns;
  }
  if (threadIdx.x == 0) Policy::mark(kMarkStart);
  // The next call may be launched now: its blocks wait for this grid's end
  // before they touch global memory, so only its start overlaps this call.
  if constexpr (Policy::kDependentLaunch) allow_dependent_launch();

  if (kDirect && static_cast<int>(threadIdx.x) >= kCounting) {
    if constexpr (Policy::kDependentLaunch) wait_for_prior_grid();
    flag_warp<Policy>(ws, slots, (indexer.bins + 3) * positions.histograms, accumulate);
    return;
  }

  // The slot of byte value b (thread b). Found before the data's loads go out:
  // while they are in flight, an explicit-edge search would need registers
  // that the four 16-byte words hold (32 registers at four blocks per SM).
  const bool per_value = indexer.kind == BinKind::even && indexer.bins == kBins &&
                         indexer.lower == (is_signed ? -128.0 : 0.0) && indexer.upper == indexer.lower + kBins;
  std::uint64_t my_slot = 0;
  if (threadIdx.x < kBins) {  // (with byte positions too: thread b sums bin b of each position)
    const int byte = threadIdx.x;
    if (per_value) my_slot = is_signed ? static_cast<std::uint64_t>(byte ^ 0x80) : byte;  // two's complement order
    else my_slot = indexer.slot(is_signed ? static_cast<double>(static_cast<signed char>(byte)) : static_cast<double>(byte));
  }

  // The first loads go out before the columns are cleared, so that their round
  // trip overlaps the clearing and its barrier.
  const unsigned int words = bytes.words;
  const uint4* body = reinterpret_cast<const uint4*>(samples + bytes.head);
  const unsigned int stride = gridDim.x * kCounting;
  unsigned int i = blockIdx.x * kCounting + threadIdx.x;
  uint4 v[kUnroll];
  // One step: kUnroll loads, each guarded, all in flight together (a remainder
  // loop would wait one round trip per word: 13.4 us at 16 MiB, change 3).
  auto load_step_into = [&](uint4(&dst)[kUnroll], unsigned int first) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (first + u * stride < words) dst[u] = __ldg(body + first + u * stride);
  };
  // A dependent launch clears the columns first (before the wait), the others
  // send their loads first so that the round trip overlaps the clearing.
  if constexpr (!Policy::kDependentLaunch) load_step_into(v, i);

  // The used 128 bytes of each row: with byte positions, position p in
  // region p / 2, half p % 2 of each row.
  for (int k = threadIdx.x; k < kPositions * kBins * kLanes / 4; k += kCounting) {
    const int p = k / (kBins * kLanes / 4), row = k / (kLanes / 4) % kBins, q = k % (kLanes / 4);
    reinterpret_cast<uint4*>(reinterpret_cast<char*>(columns) + (p >> 1) * 0x10000 + row * kRowWords * 4 +
                             (p & 1) * 128)[q] = make_uint4(0, 0, 0, 0);
  }
  if constexpr (Policy::kDependentLaunch) {
    wait_for_prior_grid();
    load_step_into(v, i);
  }
  sync_first(1, kCounting);
  if (threadIdx.x == 0) Policy::mark(kMarkZeroed);

  // Without kPermutedAddress, counting a byte is one shared atomic at byte
  // offset bin * 128 + lane * 4 of the columns: a shift, one mask-and-or with
  // the lane's offset, an add of the array's base and the ATOMS, 4
  // instructions per byte. A per-thread
  // column pointer plus bin * 32 words compiled to 4.75 and measured 1-2%
  // slower at 16-256 MiB in the same run (H100; docs/PERFORMANCE.md, change 11).
  const unsigned int lane_offset = (threadIdx.x & (kLanes - 1)) * 4;
  auto count_at = [&](unsigned int offset) {
    atomicAdd(reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(columns) + offset), 1u);
  };
  // kPermuted: bytes 0 and 2-3 of a key are the lane's offset (and the row
  // half of the byte position) and the region's; __byte_perm puts sample
  // byte k between them.
  auto key_of = [&](unsigned int p) { return (region + (p >> 1) * 0x10000) | (p & 1) << 7 | lane_offset; };
  unsigned int key[kPositions];
#pragma unroll
  for (int p = 0; p < kPositions; ++p) key[p] = key_of(p);
  auto count_byte = [&](unsigned int byte, unsigned int position) {
    if constexpr (kPermuted) {
      // The key computed, not looked up: a runtime index would put the keys in local memory.
      const unsigned int p = kPositions == 1 ? 0 : position & 3;
      shared_increment(key_of(p) | byte << 8);
    } else {
      count_at(byte * 128 | lane_offset);
    }
  };
  auto count_word = [&](unsigned int w) {
    if constexpr (kPermuted) {
      shared_increment(__byte_perm(w, key[0], 0x7604));
      shared_increment(__byte_perm(w, key[kPositions == 1 ? 0 : 1], 0x7614));
      shared_increment(__byte_perm(w, key[kPositions == 1 ? 0 : 2], 0x7624));
      shared_increment(__byte_perm(w, key[kPositions == 1 ? 0 : 3], 0x7634));
    } else {
      count_at(((w << 7) & 0x7f80) | lane_offset);
      count_at(((w >> 1) & 0x7f80) | lane_offset);
      count_at(((w >> 9) & 0x7f80) | lane_offset);
      count_at(((w >> 17) & 0x7f80) | lane_offset);
    }
  };

  auto count_vector = [&](uint4 w) {
    count_word(w.x);
    count_word(w.y);
    count_word(w.z);
    count_word(w.w);
  };
  // Full steps: the counting unguarded (a guard per word made each word a
  // divergent region, BSSY/BSYNC in the SASS), the next step's loads guarded
  // (predicated, no branch) and issued as soon as their registers are free.
  // With Policy::kPrefetch the next step's loads go out before this step is
  // counted (twice the registers for words), so that a thread's counting
  // overlaps its own next round trip, not only other warps'.
  for (; i + (kUnroll - 1) * stride < words; i += kUnroll * stride) {
    if constexpr (Policy::kPrefetch) {
      uint4 next[kUnroll];
      load_step_into(next, i + kUnroll * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) count_vector(v[u]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = next[u];
    } else {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) count_vector(v[u]);
      load_step_into(v, i + kUnroll * stride);
    }
  }
  // The last, partial step (fewer than kUnroll words left for this thread).
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (i + u * stride < words) count_vector(v[u]);
  // Bytes before the first 16-byte boundary and after the last one: block 0
  // counts them (at most 15 + 15 bytes), after the loop so that they hold no
  // registers while the words are in flight.
  // A head byte k words before the body has position (k - head) mod 4, a tail
  // byte t after it t mod 4.
  if (blockIdx.x == 0) {
    if (threadIdx.x < bytes.head) count_byte(samples[threadIdx.x], threadIdx.x - bytes.head);
    if (threadIdx.x < bytes.tail)
      count_byte(reinterpret_cast<const unsigned char*>(body + words)[threadIdx.x], threadIdx.x);
  }
  sync_first(1, kCounting);
  if (threadIdx.x == 0) Policy::mark(kMarkCounted);

  // Byte positions: thread b adds bin b's columns of each position (as below)
  // straight into the slot of that position's histogram.
  if constexpr (kPositions > 1) {
    unsigned int sums[kPositions] = {};
    if (threadIdx.x < kBins) {
      const int bin = threadIdx.x;
#pragma unroll
      for (int p = 0; p < kPositions; ++p)
        add_row(sums[p],
                reinterpret_cast<const uint4*>(reinterpret_cast<const char*>(columns) + (p >> 1) * 0x10000 +
                                               bin * kRowWords * 4 + (p & 1) * 128),
                bin);
    }
    sync_block_unaligned();  // with the flag warp, which has seen block 0's flag
    if (threadIdx.x == 0) Policy::mark(kMarkReady);
#pragma unroll
    for (int p = 0; p < kPositions; ++p)
      if (sums[p] && positions.histogram[p] != kNoHistogram)
        add_to_slot(&slots[positions.histogram[p] * (indexer.bins + 3) + my_slot], sums[p]);
    if (threadIdx.x == 0) Policy::mark(kMarkEnd);
    return;
  }

  // Row sums: thread b adds bin b's 32 columns, starting at column b so the
  // lanes of a warp read 32 different banks (TRISH's staggered indexing, §5.1).
  unsigned int sum = 0;
  if (threadIdx.x < kBins) {
    const int bin = threadIdx.x;
    if constexpr (Policy::kVectorRowSums || kPermuted) {
      add_row(sum, reinterpret_cast<const uint4*>(columns + bin * kRowWords), bin);
    } else {
#pragma unroll 8
      for (int c = 0; c < kLanes; ++c) sum += columns[bin * kLanes + ((c + bin) & (kLanes - 1))];
    }
  }

  if constexpr (kDirect) {
    sync_block_unaligned();  // with the flag warp, which has seen block 0's flag
    if (threadIdx.x == 0) Policy::mark(kMarkReady);
    if (sum) add_to_slot(&slots[my_slot], sum);
    if (threadIdx.x == 0) Policy::mark(kMarkEnd);
    return;
  }

  // Large grids: the row sums into the accumulators; the last block to finish
  // folds them into the slots. One fence by the thread that takes the ticket
  // orders the whole block's additions before it (the barrier makes them its
  // own; as cooperative groups' grid sync does).
  __shared__ bool is_last_block;
  static_assert(Policy::kFoldCopies >= 1 && Policy::kFoldCopies <= kMaxFoldCopies);
  if (sum) atomicAdd(&ws->byte_counts[blockIdx.x % Policy::kFoldCopies][threadIdx.x], sum);
  sync_first(1, kCounting);
  if (threadIdx.x == 0) {
    Policy::mark(kMarkReady);
    __threadfence();
    is_last_block = atomicAdd(&ws->blocks_done, 1u) == gridDim.x - 1;
  }
  sync_first(1, kCounting);
  if (!is_last_block) {
    if (threadIdx.x == 0) Policy::mark(kMarkEnd);
    return;
  }
  __threadfence();
  // Taking each total leaves its accumulators zero for the next call.
  auto take_count = [&] {
    unsigned int count = 0;
#pragma unroll
    for (int c = 0; c < Policy::kFoldCopies; ++c) count += atomicExch(&ws->byte_counts[c][threadIdx.x], 0u);
    return count;
  };
  if (per_value) {
    // One byte value per slot: each thread owns its slot, a plain store, no clearing pass.
    if (threadIdx.x < kBins) {
      const unsigned int count = take_count();
      slots[my_slot] = (accumulate ? slots[my_slot] : 0) + count;
    }
    if (!accumulate && threadIdx.x < 3) slots[kBins + threadIdx.x] = 0;  // underflow, overflow, NaN: none
  } else {
    if (!accumulate) {
      for (std::uint64_t s = threadIdx.x; s < indexer.bins + 3; s += kCounting) slots[s] = 0;
      sync_first(1, kCounting);
    }
    if (threadIdx.x < kBins) add_to_slot(&slots[my_slot], take_count());
  }
  if (threadIdx.x == 0) {
    ws->blocks_done = 0;
    Policy::mark(kMarkEnd);
  }
}

// The grid of a call of n bytes. Small calls (n <= kMaxDirectBytes) take the
// direct path with one block per kDirectBytesPerBlock, at most kMaxDirectBlocks;
// larger ones Policy::kLargePath with one block per kLargeBytesPerBlock,
// rounded up to as many blocks on every SM where kLargeWholeWaves (a grid of
// 1.5 blocks per SM leaves half the SMs counting twice as long as the others).
// Never more blocks than fit at once: a direct call's blocks wait for block
// 0's flag, and a persistent grid is what large calls want anyway.
struct Grid {
  Path path;
  int blocks;
};

template <class Policy, Path kPath, int kPositions>
int resident_grid() {
  constexpr std::size_t smem = dynamic_shared_bytes<Policy, kPositions>();
  allow_dynamic_shared(kernel<Policy, kPath, kPositions>, smem);
  return resident_blocks(kernel<Policy, kPath, kPositions>, Policy::kBlockThreads, smem);
}

template <class Policy, int kPositions = 1>
Grid grid(std::uint64_t n) {
  auto blocks = [n](std::uint64_t bytes_per_block, std::uint64_t most) {
    return static_cast<int>(std::clamp<std::uint64_t>((n + bytes_per_block - 1) / bytes_per_block, 1, most));
  };
  if (n <= Policy::kMaxDirectBytes) {
    const int resident = resident_grid<Policy, Path::direct, kPositions>();
    const auto most = std::min<std::uint64_t>(Policy::kMaxDirectBlocks, resident);
    return {Path::direct, blocks(Policy::kDirectBytesPerBlock, most)};
  }
  const int resident = resident_grid<Policy, Policy::kLargePath, kPositions>();
  int large_blocks = blocks(Policy::kLargeBytesPerBlock, resident);
  if constexpr (Policy::kLargeWholeWaves) {
    const int sms = sm_count();
    large_blocks = std::min(resident, (large_blocks + sms - 1) / sms * sms);
  }
  return {Policy::kLargePath, large_blocks};
}

// kPositions = 4: `positions` says which histogram each byte position of a
// word (after the head: split(samples, n).head) goes to.
template <class Policy, int kPositions = 1>
void launch(const unsigned char* samples, std::uint64_t n, void* workspace, std::uint64_t* slots, bool accumulate,
            bool is_signed, const BinIndexer& indexer, cudaStream_t stream, const Positions& positions = {}) {
  const Grid g = grid<Policy, kPositions>(n);
  const Split bytes = split(samples, n);
  auto* ws = static_cast<Workspace*>(workspace);
  constexpr std::size_t smem = dynamic_shared_bytes<Policy, kPositions>();
  constexpr bool kDependent = Policy::kDependentLaunch;
  if constexpr (kPositions > 1) {
    if (g.path != Path::direct) throw Error(ErrorKind::internal, "byte positions are counted on the direct path only");
    launch_kernel<kDependent>(kernel<Policy, Path::direct, kPositions>, g.blocks, Policy::kBlockThreads, smem, stream,
                              samples, bytes, ws, slots, accumulate, is_signed, indexer, positions);
  } else if (g.path == Path::direct) {
    launch_kernel<kDependent>(kernel<Policy, Path::direct>, g.blocks, Policy::kBlockThreads, smem, stream, samples,
                              bytes, ws, slots, accumulate, is_signed, indexer, positions);
  } else {
    launch_kernel<kDependent>(kernel<Policy, Path::fold>, g.blocks, Policy::kBlockThreads, smem, stream, samples, bytes,
                              ws, slots, accumulate, is_signed, indexer, positions);
  }
}

}  // namespace levelhist::cuda_detail::lane_columns
