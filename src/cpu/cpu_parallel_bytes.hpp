// Byte-value counters behind cpu_parallel's 8-bit path. Each one adds to
// counts[v] (v = 0..255) the number of bytes equal to v in bytes[0, n): a
// histogram of raw byte values that cpu_parallel then maps to counter slots
// through BinIndexer, so any binning of u8 or i8 samples can use them.
//
// Which counter runs is decided once, at run time, from what the CPU reports
// (cpuid): the build itself uses no -march flag.
#pragma once
#include <cstdint>
#include <vector>

namespace levelhist::cpu_parallel_detail {

using ByteCounter = void (*)(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts);

// Portable scalar counter: 8-byte loads, several sub-tables of 32-bit counters
// (zstd's HIST_count idea), flushed into counts before a counter could overflow.
void count_bytes_scalar(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts);

// AVX-512 compress-and-positional-popcount counter (cpu_parallel_avx512.cpp).
// Call it only when avx512_byte_counter_supported() is true.
bool avx512_byte_counter_supported();
void count_bytes_avx512(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts);
// Its units of work: a 64-byte vector is binned at a time, input pairs of
// vectors are checked for runs; a group's bytes are counted 128 at a time (16
// vectors of eight one-hot words); a round bins 4 KiB of input while it counts
// what the round before binned.
inline constexpr std::uint64_t kAvx512VectorBytes = 64;
inline constexpr std::uint64_t kAvx512BlockBytes = 128;
inline constexpr std::uint64_t kAvx512RoundBytes = 4096;

struct ByteCounterChoice {
  ByteCounter count;
  const char* name;  // for reports: "avx512-pospopcnt" or "scalar-subtables"
};

// Every counter this CPU can run, fastest first; the scalar one is always there.
const std::vector<ByteCounterChoice>& runnable_byte_counters();

// The counter cpu_parallel uses: the fastest this CPU can run, unless the
// environment variable LEVELHIST_BYTE_COUNTER (a testing knob, read once)
// names another: scalar, avx512 or auto. Throws Error (usage) for any other
// value, and (unsupported) for avx512 on a CPU that cannot run it.
const ByteCounterChoice& active_byte_counter();

}  // namespace levelhist::cpu_parallel_detail
