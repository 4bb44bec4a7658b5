// The scalar byte counter and the run-time choice of byte counter
// (cpu_parallel_bytes.hpp).
#include "cpu/cpu_parallel_bytes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace levelhist::cpu_parallel_detail {
namespace {

// Sub-tables as in zstd's HIST_count: consecutive bytes go to different
// tables, so a run of one value is spread over kSubTables counters instead of
// one store-to-load chain through a single counter.
constexpr std::size_t kSubTables = 4;
// Each table sees at most this many bytes between flushes into the 64-bit
// counts, so its 32-bit counters cannot overflow.
constexpr std::uint64_t kFlushBytes = std::uint64_t{1} << 30;

}  // namespace

void count_bytes_scalar(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts) {
  std::uint32_t tables[kSubTables][256] = {};
  while (n > 0) {
    const std::uint64_t take = std::min(n, kFlushBytes);
    std::uint64_t i = 0;
    for (; i + 8 <= take; i += 8) {
      std::uint64_t eight;
      std::memcpy(&eight, bytes + i, sizeof eight);  // any alignment
      for (std::size_t k = 0; k < 8; ++k) ++tables[k % kSubTables][(eight >> (8 * k)) & 0xFF];
    }
    for (; i < take; ++i) ++tables[0][bytes[i]];
    for (auto& table : tables)
      for (std::size_t v = 0; v < 256; ++v) {
        counts[v] += table[v];
        table[v] = 0;
      }
    bytes += take;
    n -= take;
  }
}

const ByteCounterChoice& fastest_byte_counter() {
  static const ByteCounterChoice choice = avx512_byte_counter_supported()
                                              ? ByteCounterChoice{count_bytes_avx512, "avx512-pospopcnt"}
                                              : ByteCounterChoice{count_bytes_scalar, "scalar-subtables"};
  return choice;
}

}  // namespace levelhist::cpu_parallel_detail
