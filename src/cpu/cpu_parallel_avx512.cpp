// cpu_parallel's AVX-512 byte counter: a histogram of byte values by compress
// binning and positional popcount, after Harold Aptroot, "Histogramming bytes
// with positional popcount (GF2P8AFFINEQB edition)" (bitmath.blogspot.com,
// November 2024), arranged for Zen 5 (docs/PERFORMANCE-cpu.md has the
// measurements behind each choice):
//
//  1. Binning. VPCOMPRESSB appends the bytes of each 64-byte input vector to
//     one of four group buffers by their top two bits (values 0-63, 64-127,
//     128-191, 192-255). The bytes are stored whole: step 2 reads only their
//     low six bits.
//  2. Counting. A group byte b becomes the one-hot 64-bit word 1 << (b mod 64):
//     VPROLVQ rotates a 1 by the lane's low byte (the rotate takes its count
//     mod 64), and VPSRLQ brings byte k of every lane down. A carry-save adder
//     tree (VPTERNLOGQ; Harley-Seal, as in Clausecker, Lemire and Schintke, "Faster
//     Positional-Population Counts for AVX2, AVX-512, and ASIMD", 2024) sums
//     16 such vectors per 128 group bytes; its weight-16 output becomes 64
//     per-bin counts through VPERMB (byte transpose), GF2P8AFFINEQB (bit
//     transpose) and VPOPCNTB. The tree first reduces three inputs off the
//     adders' state, so `ones` changes 4 times per block rather than 8: Zen 5's
//     vector logic has a 2-cycle latency.
//  3. Rounds. Each 4 KiB round bins its input into one set of group buffers
//     while it counts, group by group, the full blocks that the round before
//     left in the other set: binning is bound by compresses and their
//     unaligned stores, counting by ternary logic and shifts, and each half
//     of a block is counted between two vectors' binning. Both sets (eight
//     buffers of 4.25 KiB) stay in L1; larger rounds measured slower.
//  4. Runs. A pair of vectors holding one repeated value is counted with one
//     addition instead of being binned; a failed check backs off for a while.
//
// No counter is incremented through memory, so runs of one value do not
// serialize on a store-to-load chain as they do in table counters
// (hist[x]++). The counter runs only where cpuid reports AVX512F/BW/VBMI/
// VBMI2/BITALG and GFNI; its functions are compiled for those instructions
// with target attributes, never -march.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "cpu/cpu_parallel_bytes.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LEVELHIST_AVX512_BYTE_COUNTER 1
#define LEVELHIST_TARGET_AVX512_BYTES \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512bitalg,gfni,popcnt,bmi2")))
#endif

namespace levelhist::cpu_parallel_detail {

#if LEVELHIST_AVX512_BYTE_COUNTER
namespace {

constexpr std::size_t kGroups = 4;      // selected by the top two bits of a byte
constexpr std::size_t kGroupBins = 64;  // selected by the low six bits
constexpr std::size_t kVectorBytes = kAvx512VectorBytes;
constexpr std::size_t kBlockBytes = kAvx512BlockBytes;  // 16 vectors of eight one-hot lanes
constexpr std::size_t kRoundBytes = kAvx512RoundBytes;
static_assert(kRoundBytes % kBlockBytes == 0);
// A group buffer holds the partial block carried from two rounds before
// (< 128 bytes), up to a whole round, and the full 64-byte store that appends
// the round's last compressed bytes.
constexpr std::size_t kGroupBufferBytes = kRoundBytes + 2 * kBlockBytes;
// A block adds at most 8 (the lanes) to a bin's byte of weight-16 counts, so
// those bytes go into the 32-bit counts at least every 31 blocks.
constexpr std::size_t kBlocksPerFlush = 31;
static_assert(kBlocksPerFlush * 8 <= 255);
// The 32-bit counts take at most this many input bytes before they are added
// into the caller's 64-bit counts.
constexpr std::uint64_t kChunkBytes = std::uint64_t{1} << 30;
// Run detection: a pair of vectors (128 bytes) of one repeated value is
// counted with one addition instead of being binned. A check that fails is
// not repeated for this many pairs, so data without runs pays almost nothing
// for it.
constexpr unsigned kRunCheckBackoffPairs = 8;

// VPERMB indices that transpose the 8x8 byte matrix of a vector: byte l of
// qword j goes to byte j of qword l.
struct ByteTranspose {
  alignas(64) unsigned char index[64];
  constexpr ByteTranspose() : index{} {
    for (unsigned j = 0; j < 8; ++j)
      for (unsigned l = 0; l < 8; ++l) index[8 * j + l] = static_cast<unsigned char>(8 * l + j);
  }
};
constexpr ByteTranspose kByteTranspose;

// VPERMB indices that, under the mask 0x1111..., zero-extend bytes 16i to
// 16i + 15 of a vector to its 16 dwords.
struct WidenIndex {
  alignas(64) unsigned char index[4][64];
  constexpr WidenIndex() : index{} {
    for (unsigned i = 0; i < 4; ++i)
      for (unsigned j = 0; j < 64; ++j) index[i][j] = static_cast<unsigned char>(16 * i + j / 4);
  }
};
constexpr WidenIndex kWidenIndex;

// The carry-save state of one group: bit b of a lane in `ones` has weight 1
// for bin b, in `twos` weight 2, and so on.
struct CsaState {
  __m512i ones, twos, fours, eights;
};

// A full adder on every bit: high:low = a + b + c. The sum goes into c's
// register and the carry into b's (the majority is b == a ? a : ~low), so
// the destructive VPTERNLOGQ needs no register copies when b and c die here.
LEVELHIST_TARGET_AVX512_BYTES inline void carry_save_add(__m512i& high, __m512i& low, __m512i a, __m512i b,
                                                         __m512i c) {
  low = _mm512_ternarylogic_epi64(c, a, b, 0x96);
  high = _mm512_ternarylogic_epi64(b, a, low, 0xD4);
}

// Byte b of the result: how many of the eight lanes of x have bit b set.
LEVELHIST_TARGET_AVX512_BYTES inline __m512i lane_bit_counts(__m512i x) {
  const __m512i transpose = _mm512_load_si512(kByteTranspose.index);
  // Qword j now holds byte j (bins 8j..8j+7) of every lane.
  const __m512i by_byte = _mm512_maskz_permutexvar_epi8(~__mmask64{0}, transpose, x);
  // With the data as the matrix and 1 << i as the vector, output byte i of
  // qword j collects bit i of each byte of qword j: bin 8j+i of every lane.
  const __m512i bit_i = _mm512_set1_epi64(static_cast<long long>(0x8040201008040201ull));
  return _mm512_popcnt_epi8(_mm512_gf2p8affine_epi64_epi8(bit_i, by_byte, 0));
}

// counts[b] += byte b of `bytes` << shift, for the 64 bins of one group.
LEVELHIST_TARGET_AVX512_BYTES inline void add_byte_counts(std::uint32_t* counts, __m512i bytes, unsigned shift) {
  for (std::size_t i = 0; i < 4; ++i) {
    const __m512i index = _mm512_load_si512(kWidenIndex.index[i]);
    const __m512i wide = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull, index, bytes);
    const __m512i sum =
        _mm512_add_epi32(_mm512_load_si512(counts + 16 * i), _mm512_maskz_slli_epi32(0xFFFF, wide, shift));
    _mm512_store_si512(counts + 16 * i, sum);
  }
}

// The eight one-hot vectors of the 64 group bytes at p (64-byte aligned):
// lane j of vector k is 1 << (p[8j + k] mod 64).
LEVELHIST_TARGET_AVX512_BYTES inline void one_hot_lanes(const unsigned char* p, __m512i (&one_hot)[8]) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i bytes = _mm512_load_si512(p);
  one_hot[0] = _mm512_maskz_rolv_epi64(0xFF, one, bytes);
  for (int k = 1; k < 8; ++k)
    one_hot[k] = _mm512_maskz_rolv_epi64(0xFF, one, _mm512_maskz_srli_epi64(0xFF, bytes, 8 * k));
}

// Adds eight one-hot vectors (64 group bytes at p) into c.ones and c.twos and
// returns their two carries of weight 4. Three inputs are reduced before each
// addition into the state, so `ones` and `twos` change twice each.
struct Fours {
  __m512i a, b;
};
LEVELHIST_TARGET_AVX512_BYTES inline Fours count_half(CsaState& c, const unsigned char* p) {
  __m512i x[8];
  one_hot_lanes(p, x);
  __m512i sum, twos_a, twos_b, twos_c, twos_d;
  Fours fours;
  carry_save_add(twos_a, sum, x[0], x[1], x[2]);
  carry_save_add(twos_b, c.ones, c.ones, sum, x[3]);
  carry_save_add(twos_c, sum, x[4], x[5], x[6]);
  carry_save_add(twos_d, c.ones, c.ones, sum, x[7]);
  carry_save_add(fours.a, sum, twos_a, twos_b, twos_c);
  carry_save_add(fours.b, c.twos, c.twos, sum, twos_d);
  return fours;
}

// Counts the second half of a block (64 group bytes at p) and the carries of
// the first; returns the block's weight-16 counts, a byte per bin (<= 8).
LEVELHIST_TARGET_AVX512_BYTES inline __m512i count_second_half(CsaState& c, const unsigned char* p, Fours first) {
  const Fours second = count_half(c, p);
  __m512i sum, eights_a, eights_b, sixteens;
  carry_save_add(eights_a, sum, first.a, first.b, second.a);
  carry_save_add(eights_b, c.fours, c.fours, sum, second.b);
  carry_save_add(sixteens, c.eights, c.eights, eights_a, eights_b);
  return lane_bit_counts(sixteens);
}

LEVELHIST_TARGET_AVX512_BYTES inline __m512i count_block(CsaState& c, const unsigned char* p) {
  return count_second_half(c, p + kVectorBytes, count_half(c, p));
}

using GroupBuffers = unsigned char[kGroups][kGroupBufferBytes];

struct ByteCounterState {
  alignas(64) GroupBuffers sets[2];
  alignas(64) std::uint32_t counts[kGroups * kGroupBins];  // flushed into the caller's every chunk
  CsaState csa[kGroups];
  std::size_t binned[2][kGroups];  // bytes in each group buffer of each set
  unsigned pairs_until_run_check;
};

// Where each group's next compressed bytes go.
using GroupEnds = unsigned char* [kGroups];

// Appends the bytes of v (where `valid`) to their groups' buffers.
LEVELHIST_TARGET_AVX512_BYTES inline void bin_vector(GroupEnds& end, __m512i v, __mmask64 valid) {
  const __m512i top_bits = _mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(0xC0)));
  for (std::size_t group = 0; group < kGroups; ++group) {
    const __mmask64 in_group =
        valid & _mm512_cmpeq_epi8_mask(top_bits, _mm512_set1_epi8(static_cast<char>(group << 6)));
    _mm512_storeu_si512(end[group], _mm512_maskz_compress_epi8(in_group, v));
    end[group] += _mm_popcnt_u64(in_group);
  }
}

// True (and counted) if the 128 bytes at p, loaded as v0 and v1, are one value.
LEVELHIST_TARGET_AVX512_BYTES inline bool counted_as_run(unsigned& pairs_until_run_check, const unsigned char* p,
                                                         __m512i v0, __m512i v1, std::uint64_t* counts) {
  if (pairs_until_run_check != 0) {
    --pairs_until_run_check;
    return false;
  }
  const __m512i first = _mm512_set1_epi8(static_cast<char>(p[0]));
  const __m512i differ = _mm512_ternarylogic_epi64(v0, v1, first, 0x7E);  // (v0 ^ first) | (v1 ^ first)
  if (_mm512_test_epi8_mask(differ, differ) == 0) {
    counts[p[0]] += 2 * kVectorBytes;
    return true;
  }
  pairs_until_run_check = kRunCheckBackoffPairs;
  return false;
}

LEVELHIST_TARGET_AVX512_BYTES inline void bin_pair(GroupEnds& end, unsigned& pairs_until_run_check,
                                                   const unsigned char* p, std::uint64_t* counts) {
  const __m512i v0 = _mm512_loadu_si512(p), v1 = _mm512_loadu_si512(p + kVectorBytes);
  if (counted_as_run(pairs_until_run_check, p, v0, v1, counts)) return;
  bin_vector(end, v0, ~__mmask64{0});
  bin_vector(end, v1, ~__mmask64{0});
}

// Bins the 128 bytes at p while it counts the block at `block`: half the block
// between the two vectors, so that compresses and adder trees overlap.
LEVELHIST_TARGET_AVX512_BYTES inline __m512i bin_pair_count_block(GroupEnds& end, unsigned& pairs_until_run_check,
                                                                  const unsigned char* p, std::uint64_t* counts,
                                                                  CsaState& c, const unsigned char* block) {
  const __m512i v0 = _mm512_loadu_si512(p), v1 = _mm512_loadu_si512(p + kVectorBytes);
  const bool run = counted_as_run(pairs_until_run_check, p, v0, v1, counts);
  if (!run) bin_vector(end, v0, ~__mmask64{0});
  const Fours first = count_half(c, block);
  if (!run) bin_vector(end, v1, ~__mmask64{0});
  return count_second_half(c, block + kVectorBytes, first);
}

// One round: bins the n <= kRoundBytes bytes at p into set `binning` while it
// counts the full blocks of the other set, one group after the other.
LEVELHIST_TARGET_AVX512_BYTES void run_round(ByteCounterState& s, unsigned binning, const unsigned char* p,
                                             std::size_t n, std::uint64_t* counts) {
  GroupBuffers& set = s.sets[binning];
  const unsigned counting = binning ^ 1;
  GroupEnds end;
  // The partial block that each group left in this set two rounds ago moves
  // to the front. Its bytes were stored that long ago, so these loads do not
  // wait for the stores (as loads of bytes just compressed would).
  for (std::size_t group = 0; group < kGroups; ++group) {
    const std::size_t full = s.binned[binning][group] / kBlockBytes * kBlockBytes;
    const __m512i rest0 = _mm512_loadu_si512(set[group] + full);
    const __m512i rest1 = _mm512_loadu_si512(set[group] + full + kVectorBytes);
    _mm512_store_si512(set[group], rest0);
    _mm512_store_si512(set[group] + kVectorBytes, rest1);
    end[group] = set[group] + (s.binned[binning][group] - full);
  }
  unsigned pairs_until_run_check = s.pairs_until_run_check;
  const std::size_t pairs = n / kBlockBytes;
  std::size_t pair = 0;
  for (std::size_t group = 0; group < kGroups; ++group) {
    const std::size_t blocks = s.binned[counting][group] / kBlockBytes;
    if (blocks == 0) continue;
    const unsigned char* block = s.sets[counting][group];
    CsaState c = s.csa[group];  // a local: the compressed stores could alias s
    for (std::size_t done = 0; done < blocks;) {
      const std::size_t flush_at = std::min(blocks, done + kBlocksPerFlush);
      __m512i sixteens = _mm512_setzero_si512();
      for (; done < flush_at; ++done, block += kBlockBytes) {
        __m512i counted;
        if (pair < pairs) {
          counted = bin_pair_count_block(end, pairs_until_run_check, p + pair * kBlockBytes, counts, c, block);
          ++pair;
        } else {
          counted = count_block(c, block);
        }
        sixteens = _mm512_add_epi8(sixteens, counted);
      }
      add_byte_counts(s.counts + group * kGroupBins, sixteens, 4);
    }
    s.csa[group] = c;
  }
  for (; pair < pairs; ++pair) bin_pair(end, pairs_until_run_check, p + pair * kBlockBytes, counts);
  s.pairs_until_run_check = pairs_until_run_check;
  // The last partial pair (n is not a multiple of 128 only in a call's last round).
  for (std::size_t at = pairs * kBlockBytes; at < n; at += kVectorBytes) {
    const __mmask64 valid = _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(std::min(n - at, kVectorBytes)));
    bin_vector(end, _mm512_maskz_loadu_epi8(valid, p + at), valid);
  }
  for (std::size_t group = 0; group < kGroups; ++group)
    s.binned[binning][group] = static_cast<std::size_t>(end[group] - set[group]);
}

// Counts all that is still binned after the last round (set `last`): its
// blocks, the partial block of the other set, and the bits left in the adders.
LEVELHIST_TARGET_AVX512_BYTES void finish(ByteCounterState& s, unsigned last) {
  for (std::size_t group = 0; group < kGroups; ++group) {
    CsaState& c = s.csa[group];
    std::uint32_t* group_counts = s.counts + group * kGroupBins;
    std::uint32_t padding = 0;
    for (const unsigned set : {last, last ^ 1}) {
      unsigned char* buffer = s.sets[set][group];
      const std::size_t end = s.binned[set][group];
      std::size_t begin = set == last ? 0 : end / kBlockBytes * kBlockBytes;
      for (; begin < end; begin += kBlockBytes) {
        if (end - begin < kBlockBytes) {
          // Zero bytes count in bin 0 of the group; taken back below.
          std::memset(buffer + end, 0, kBlockBytes - (end - begin));
          padding += static_cast<std::uint32_t>(kBlockBytes - (end - begin));
        }
        add_byte_counts(group_counts, count_block(c, buffer + begin), 4);
      }
    }
    // 1*ones + 2*twos + 4*fours + 8*eights <= 120 per bin: bytes do not overflow.
    __m512i weighted = lane_bit_counts(c.eights);
    weighted = _mm512_add_epi8(_mm512_add_epi8(weighted, weighted), lane_bit_counts(c.fours));
    weighted = _mm512_add_epi8(_mm512_add_epi8(weighted, weighted), lane_bit_counts(c.twos));
    weighted = _mm512_add_epi8(_mm512_add_epi8(weighted, weighted), lane_bit_counts(c.ones));
    add_byte_counts(group_counts, weighted, 0);
    group_counts[0] -= padding;
  }
}

// Counts n <= kChunkBytes bytes into s.counts, then adds those into counts.
LEVELHIST_TARGET_AVX512_BYTES void count_chunk(ByteCounterState& s, const unsigned char* bytes, std::uint64_t n,
                                               std::uint64_t* counts) {
  std::memset(s.counts, 0, sizeof s.counts);
  std::memset(s.csa, 0, sizeof s.csa);
  std::memset(s.binned, 0, sizeof s.binned);
  s.pairs_until_run_check = 0;
  unsigned binning = 0;
  for (std::uint64_t done = 0; done < n; done += kRoundBytes, binning ^= 1)
    run_round(s, binning, bytes + done, static_cast<std::size_t>(std::min<std::uint64_t>(n - done, kRoundBytes)),
              counts);
  finish(s, binning ^ 1);
  for (std::size_t v = 0; v < kGroups * kGroupBins; ++v) counts[v] += s.counts[v];
}

}  // namespace

bool avx512_byte_counter_supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
         __builtin_cpu_supports("avx512bitalg") && __builtin_cpu_supports("gfni") &&
         __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi2");
}

void count_bytes_avx512(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts) {
  // Zeroed once per call: no buffer byte is ever read indeterminate (the
  // front moves copy whole blocks past the bytes binned).
  ByteCounterState s{};
  for (std::uint64_t done = 0; done < n; done += kChunkBytes)
    count_chunk(s, bytes + done, std::min(n - done, kChunkBytes), counts);
}

#else  // no x86-64 vector extensions in this compiler: the scalar counter only

bool avx512_byte_counter_supported() { return false; }
void count_bytes_avx512(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts) {
  count_bytes_scalar(bytes, n, counts);
}

#endif

}  // namespace levelhist::cpu_parallel_detail
