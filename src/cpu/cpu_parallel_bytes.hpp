// Byte-value counters behind cpu_parallel's 8-bit path. Each one adds to
// counts[v] (v = 0..255) the number of bytes equal to v in bytes[0, n): a
// histogram of raw byte values that cpu_parallel then maps to counter slots
// through BinIndexer, so any binning of u8 or i8 samples can use them.
//
// Which counter runs is decided once, at run time, from what the CPU reports
// (cpuid): the build itself uses no -march flag.
#pragma once
#include <cstdint>

namespace levelhist::cpu_parallel_detail {

using ByteCounter = void (*)(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts);

// Portable scalar counter: 8-byte loads, several sub-tables of 32-bit counters
// (zstd's HIST_count idea), flushed into counts before a counter could overflow.
void count_bytes_scalar(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts);

// AVX-512 positional-popcount counter (cpu_parallel_avx512.cpp). Call it only
// when avx512_byte_counter_supported() is true.
bool avx512_byte_counter_supported();
void count_bytes_avx512(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts);
// Its units of work: a 64-byte vector is binned at a time; a group's bytes are
// counted 128 at a time (16 vectors of eight one-hot words); a round bins 31
// blocks' worth of input before counting, so that a bin's 8-bit block counter
// (at most 8 per block) cannot overflow within a round.
inline constexpr std::uint64_t kAvx512VectorBytes = 64;
inline constexpr std::uint64_t kAvx512BlockBytes = 128;
inline constexpr std::uint64_t kAvx512RoundBytes = 31 * kAvx512BlockBytes;

struct ByteCounterChoice {
  ByteCounter count;
  const char* name;  // for reports: "avx512-pospopcnt" or "scalar-subtables"
};

// The fastest counter this CPU can run.
const ByteCounterChoice& fastest_byte_counter();

}  // namespace levelhist::cpu_parallel_detail
