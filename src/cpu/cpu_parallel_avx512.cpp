// cpu_parallel's AVX-512 byte counter: a histogram of byte values by
// positional popcount, after the idea in "Histogramming bytes with positional
// popcount (GF2P8AFFINEQB edition)" (bitmath.blogspot.com, November 2024):
//
//  1. Binning. Each 64-byte vector is split by the top two bits of its bytes
//     into four groups (values 0-63, 64-127, 128-191, 192-255); VPCOMPRESSB
//     appends the low six bits of each group's bytes to that group's buffer.
//  2. Counting. A group's byte b becomes the one-hot 64-bit word 1 << b, so a
//     group's histogram is the positional popcount of those words: eight words
//     per vector go through a carry-save adder tree (VPTERNLOGQ; Harley-Seal,
//     as in "Faster Positional-Population Counts for AVX2, AVX-512, and ASIMD",
//     Clausecker, Lemire and Schintke, 2024), and every 16 vectors the tree's "sixteens"
//     output is reduced to 64 per-bin counts with VPERMB (byte transpose),
//     GF2P8AFFINEQB (bit transpose) and VPOPCNTB.
//
//  3. Interleaving. Binning is bound by compresses and stores, counting by
//     ternary logic and shifts, so each round bins its input while it counts
//     the blocks the previous round binned (two sets of group buffers).
//  4. Runs. A pair of vectors holding one repeated value is counted with one
//     addition instead of being binned; a failed check backs off for a while.
//
// Otherwise the work is the same for every data pattern: no counter is
// incremented through memory, so runs of one value do not serialize on a
// store-to-load chain as they do in the table counters (hist[x]++). The
// counter runs only where cpuid reports AVX512F/BW/VBMI/VBMI2/BITALG and
// GFNI; its functions are compiled for those instructions with target
// attributes, never -march.
//
// Measured on Zen 5 (docs/BENCHMARKS.md, "## CPU"): a masked load inside the
// binning loop makes the whole counter 2.5x slower, so the loop uses plain
// loads and a masked load serves only the last partial vector; zero-masking
// compresses were slower than merge-masking ones.
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

constexpr std::size_t kGroups = 4;     // selected by the top two bits of a byte
constexpr std::size_t kGroupBins = 64;  // selected by the low six bits
constexpr std::size_t kVectorBytes = kAvx512VectorBytes;
// One carry-save step: 16 vectors of eight one-hot words = 128 group bytes.
constexpr std::size_t kCsaBlockBytes = kAvx512BlockBytes;
// Input bytes binned per round (and counted during the next one). A group
// gets at most this plus the < 128 bytes carried from the round before, so at
// most 31 full blocks; each block adds at most 8 (the lanes) to a bin's byte
// counter, so 31 * 8 = 248 cannot overflow it before it is added into the
// 64-bit counts, once that group's blocks of the round are counted.
constexpr std::size_t kRoundBytes = kAvx512RoundBytes;
static_assert(kRoundBytes % kVectorBytes == 0);
static_assert((kRoundBytes + kCsaBlockBytes - 1) / kCsaBlockBytes * 8 <= 255);
// Room for the carried bytes, a round, and the full 64-byte store that
// appends a group's last compressed bytes.
constexpr std::size_t kGroupBufferBytes = kRoundBytes + 2 * kCsaBlockBytes;
// Padding byte for a partial last block: 1 << 255 is 0 in VPSLLVQ, so it counts nothing.
constexpr unsigned char kPadByte = 0xFF;
// Run detection: a pair of vectors (128 bytes) of one repeated value is
// counted with one addition instead of being binned. A check that fails is
// not repeated for this many pairs, so data without runs pays almost nothing
// for it (docs/BENCHMARKS.md).
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

// The carry-save state of one group: bit b of a lane in `ones` has weight 1
// for bin b, in `twos` weight 2, and so on.
struct CsaState {
  __m512i ones, twos, fours, eights;
};

// A full adder on every bit: low = a + b + c mod 2, high = the carry.
LEVELHIST_TARGET_AVX512_BYTES inline void carry_save_add(__m512i& high, __m512i& low, __m512i a, __m512i b,
                                                         __m512i c) {
  high = _mm512_ternarylogic_epi64(a, b, c, 0xE8);  // majority
  low = _mm512_ternarylogic_epi64(a, b, c, 0x96);   // a ^ b ^ c
}

// Eight group bytes at p as eight one-hot lanes 1 << byte. The load
// broadcasts the eight bytes to every lane and VPMULTISHIFTQB picks byte l
// for lane l (the mask zeroes the rest): measured faster than a zero-extending
// VPMOVZXBQ load, which competes with VPCOMPRESSB and VPERMB.
LEVELHIST_TARGET_AVX512_BYTES inline __m512i one_hot_lanes(const unsigned char* p) {
  std::uint64_t eight;
  std::memcpy(&eight, p, sizeof eight);
  const __m512i broadcast = _mm512_set1_epi64(static_cast<long long>(eight));
  const __m512i byte_of_lane = _mm512_set_epi64(56, 48, 40, 32, 24, 16, 8, 0);  // bit offset of byte l in lane l
  const __m512i shifts = _mm512_maskz_multishift_epi64_epi8(0x0101010101010101ull, byte_of_lane, broadcast);
  return _mm512_maskz_sllv_epi64(0xFF, _mm512_set1_epi64(1), shifts);
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
LEVELHIST_TARGET_AVX512_BYTES void add_byte_counts(std::uint64_t* counts, __m512i bytes, unsigned shift) {
  alignas(64) unsigned char spilled[64];
  _mm512_store_si512(spilled, bytes);
  for (std::size_t q = 0; q < 8; ++q) {
    std::uint64_t eight;
    std::memcpy(&eight, spilled + 8 * q, sizeof eight);
    const __m512i wide = _mm512_maskz_cvtepu8_epi64(0xFF, _mm_cvtsi64_si128(static_cast<long long>(eight)));
    const __m512i sum = _mm512_add_epi64(_mm512_loadu_si512(counts + 8 * q), _mm512_maskz_slli_epi64(0xFF, wide, shift));
    _mm512_storeu_si512(counts + 8 * q, sum);
  }
}

// A group's counting state: the carry-save adders, and the "sixteens" of the
// blocks counted since they were last added into the 64-bit counts (a byte
// per bin, at most 8 per block).
struct GroupCounter {
  CsaState csa;
  __m512i sixteens_per_bin;
};

// Counts one full block (128 group bytes) into c.
LEVELHIST_TARGET_AVX512_BYTES inline void count_block(GroupCounter& c, const unsigned char* p) {
  __m512i ones = c.csa.ones, twos = c.csa.twos, fours = c.csa.fours, eights = c.csa.eights;
  __m512i twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;
  carry_save_add(twos_a, ones, ones, one_hot_lanes(p + 0), one_hot_lanes(p + 8));
  carry_save_add(twos_b, ones, ones, one_hot_lanes(p + 16), one_hot_lanes(p + 24));
  carry_save_add(fours_a, twos, twos, twos_a, twos_b);
  carry_save_add(twos_a, ones, ones, one_hot_lanes(p + 32), one_hot_lanes(p + 40));
  carry_save_add(twos_b, ones, ones, one_hot_lanes(p + 48), one_hot_lanes(p + 56));
  carry_save_add(fours_b, twos, twos, twos_a, twos_b);
  carry_save_add(eights_a, fours, fours, fours_a, fours_b);
  carry_save_add(twos_a, ones, ones, one_hot_lanes(p + 64), one_hot_lanes(p + 72));
  carry_save_add(twos_b, ones, ones, one_hot_lanes(p + 80), one_hot_lanes(p + 88));
  carry_save_add(fours_a, twos, twos, twos_a, twos_b);
  carry_save_add(twos_a, ones, ones, one_hot_lanes(p + 96), one_hot_lanes(p + 104));
  carry_save_add(twos_b, ones, ones, one_hot_lanes(p + 112), one_hot_lanes(p + 120));
  carry_save_add(fours_b, twos, twos, twos_a, twos_b);
  carry_save_add(eights_b, fours, fours, fours_a, fours_b);
  carry_save_add(sixteens, eights, eights, eights_a, eights_b);
  c.csa = CsaState{ones, twos, fours, eights};
  c.sixteens_per_bin = _mm512_add_epi8(c.sixteens_per_bin, lane_bit_counts(sixteens));
}

// Adds a group's pending sixteens into its 64 counts.
LEVELHIST_TARGET_AVX512_BYTES void add_sixteens(GroupCounter& c, std::uint64_t* group_counts) {
  add_byte_counts(group_counts, c.sixteens_per_bin, 4);
  c.sixteens_per_bin = _mm512_setzero_si512();
}

using GroupBufferSet = unsigned char[kGroups][kGroupBufferBytes];

// Two sets of group buffers: each round bins its input into one set while it
// counts the full blocks that the previous round left in the other.
struct ByteCounterState {
  alignas(64) GroupBufferSet sets[2];
  GroupCounter counter[kGroups];
  std::size_t binned[kGroups];  // bytes in each group buffer of the set being binned
  std::size_t ready[kGroups];   // full blocks in each group buffer of the other set
  unsigned pairs_until_run_check;
};

// Appends the low six bits of each byte of v (where `valid`) to its group's buffer.
LEVELHIST_TARGET_AVX512_BYTES inline void bin_vector(GroupBufferSet& set, std::size_t (&length)[kGroups], __m512i v,
                                                     __mmask64 valid) {
  const __m512i low_bits = _mm512_and_si512(v, _mm512_set1_epi8(0x3F));
  const __m512i top_bits = _mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(0xC0)));
  for (std::size_t group = 0; group < kGroups; ++group) {
    const __mmask64 in_group =
        valid & _mm512_cmpeq_epi8_mask(top_bits, _mm512_set1_epi8(static_cast<char>(group << 6)));
    // Merge-masking: the zero-masking form is markedly slower here (Zen 5).
    _mm512_storeu_si512(set[group] + length[group], _mm512_mask_compress_epi8(low_bits, in_group, low_bits));
    length[group] += static_cast<std::size_t>(_mm_popcnt_u64(in_group));
  }
}

// Bins two vectors, or, if all their 128 bytes are one value, counts them at
// once (runs of one value: constant data, zero padding, flat image regions).
LEVELHIST_TARGET_AVX512_BYTES inline void bin_pair(GroupBufferSet& set, std::size_t (&length)[kGroups],
                                                   unsigned& pairs_until_run_check, const unsigned char* p,
                                                   std::uint64_t* counts) {
  const __m512i v0 = _mm512_loadu_si512(p), v1 = _mm512_loadu_si512(p + kVectorBytes);
  if (pairs_until_run_check == 0) {
    const __m512i first = _mm512_set1_epi8(static_cast<char>(p[0]));
    const __m512i differ = _mm512_ternarylogic_epi64(v0, v1, first, 0x7E);  // (v0 ^ first) | (v1 ^ first)
    if (_mm512_test_epi8_mask(differ, differ) == 0) {
      counts[p[0]] += 2 * kVectorBytes;
      return;
    }
    pairs_until_run_check = kRunCheckBackoffPairs;
  } else {
    --pairs_until_run_check;
  }
  bin_vector(set, length, v0, ~__mmask64{0});
  bin_vector(set, length, v1, ~__mmask64{0});
}

// One round: bins the n <= kRoundBytes bytes at p into set `binning`, and
// after every pair of vectors counts one of the blocks ready in the other set.
// Binning is bound by compresses and stores, counting by ternary logic and
// shifts, so interleaving them keeps more execution units busy than binning a
// whole round and then counting it (docs/BENCHMARKS.md). Then the blocks just
// binned become ready and each group's partial block moves to the front of
// the other set, which the next round bins into.
LEVELHIST_TARGET_AVX512_BYTES void run_round(ByteCounterState& s, unsigned binning, const unsigned char* p, std::size_t n,
                                         std::uint64_t* counts) {
  GroupBufferSet& set = s.sets[binning];
  GroupBufferSet& other = s.sets[binning ^ 1];
  // Locals, not members of s: the compiler must assume that the byte stores
  // into the buffers may change any member of s, so it would reload them.
  std::size_t length[kGroups], ready[kGroups];
  for (std::size_t g = 0; g < kGroups; ++g) {
    length[g] = s.binned[g];
    ready[g] = s.ready[g];
  }
  unsigned pairs_until_run_check = s.pairs_until_run_check;
  const std::size_t vectors = n / kVectorBytes;
  std::size_t vector = 0, group = 0, block = 0;
  while (group < kGroups && ready[group] == 0) ++group;
  GroupCounter counter = group < kGroups ? s.counter[group] : GroupCounter{};
  while (vector < vectors || group < kGroups) {
    if (vector + 2 <= vectors) {
      bin_pair(set, length, pairs_until_run_check, p + vector * kVectorBytes, counts);
      vector += 2;
    } else if (vector < vectors) {
      bin_vector(set, length, _mm512_loadu_si512(p + vector * kVectorBytes), ~__mmask64{0});
      ++vector;
    }
    if (group == kGroups) continue;
    count_block(counter, other[group] + block * kCsaBlockBytes);
    if (++block < ready[group]) continue;
    // At most 31 blocks per group per round: the sixteens bytes cannot overflow.
    add_sixteens(counter, counts + group * kGroupBins);
    s.counter[group] = counter;
    block = 0;
    do ++group;
    while (group < kGroups && ready[group] == 0);
    if (group < kGroups) counter = s.counter[group];
  }
  s.pairs_until_run_check = pairs_until_run_check;
  if (const std::size_t tail = n - vectors * kVectorBytes; tail != 0) {
    const __mmask64 valid = _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(tail));
    bin_vector(set, length, _mm512_maskz_loadu_epi8(valid, p + vectors * kVectorBytes), valid);
  }
  for (std::size_t g = 0; g < kGroups; ++g) {
    s.ready[g] = length[g] / kCsaBlockBytes;
    const unsigned char* rest = set[g] + s.ready[g] * kCsaBlockBytes;
    const __m512i rest0 = _mm512_loadu_si512(rest), rest1 = _mm512_loadu_si512(rest + kVectorBytes);
    _mm512_store_si512(other[g], rest0);
    _mm512_store_si512(other[g] + kVectorBytes, rest1);
    s.binned[g] = length[g] - s.ready[g] * kCsaBlockBytes;
  }
}

// Counts each group's last partial block (padded; it is in set `last`) and
// the bits left in the carry-save adders.
LEVELHIST_TARGET_AVX512_BYTES void finish(ByteCounterState& s, unsigned last, std::uint64_t* counts) {
  for (std::size_t group = 0; group < kGroups; ++group) {
    unsigned char* buffer = s.sets[last][group];
    GroupCounter& c = s.counter[group];
    std::uint64_t* group_counts = counts + group * kGroupBins;
    if (s.binned[group] != 0) {
      std::memset(buffer + s.binned[group], kPadByte, kCsaBlockBytes - s.binned[group]);
      count_block(c, buffer);
    }
    add_sixteens(c, group_counts);
    // 1*ones + 2*twos + 4*fours + 8*eights <= 120 per bin: bytes do not overflow.
    __m512i weighted = lane_bit_counts(c.csa.eights);
    weighted = _mm512_add_epi8(_mm512_add_epi8(weighted, weighted), lane_bit_counts(c.csa.fours));
    weighted = _mm512_add_epi8(_mm512_add_epi8(weighted, weighted), lane_bit_counts(c.csa.twos));
    weighted = _mm512_add_epi8(_mm512_add_epi8(weighted, weighted), lane_bit_counts(c.csa.ones));
    add_byte_counts(group_counts, weighted, 0);
  }
}

}  // namespace

bool avx512_byte_counter_supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
         __builtin_cpu_supports("avx512bitalg") && __builtin_cpu_supports("gfni") &&
         __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi2");
}

LEVELHIST_TARGET_AVX512_BYTES void count_bytes_avx512(const unsigned char* bytes, std::uint64_t n,
                                                      std::uint64_t* counts) {
  ByteCounterState s{};  // zeroed: counters, lengths, and no indeterminate buffer bytes
  unsigned binning = 0;
  for (std::uint64_t done = 0;; binning ^= 1) {
    const std::size_t take = static_cast<std::size_t>(n - done < kRoundBytes ? n - done : kRoundBytes);
    run_round(s, binning, bytes + done, take, counts);
    done += take;
    if (take == 0) break;  // that round only counted the blocks of the one before
  }
  finish(s, binning ^ 1, counts);
}

#else  // no x86-64 vector extensions in this compiler: the scalar counter only

bool avx512_byte_counter_supported() { return false; }
void count_bytes_avx512(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts) {
  count_bytes_scalar(bytes, n, counts);
}

#endif

}  // namespace levelhist::cpu_parallel_detail
