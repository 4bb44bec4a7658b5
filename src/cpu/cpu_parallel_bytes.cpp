// The scalar byte counter and the run-time choice of byte counter
// (cpu_parallel_bytes.hpp).
#include "cpu/cpu_parallel_bytes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "levelhist/error.hpp"

namespace levelhist::cpu_parallel_detail {
namespace {

// Sub-tables as in zstd's HIST_count: consecutive bytes go to different
// tables, so a run of one value is spread over kSubTables counters instead of
// one store-to-load chain through a single counter.
constexpr std::size_t kSubTables = 4;
// Each table sees at most this many bytes between flushes into the 64-bit
// counts, so its 32-bit counters cannot overflow.
constexpr std::uint64_t kFlushBytes = std::uint64_t{1} << 30;
// Run detection, as in the AVX-512 counter: a 64-byte block of one value is
// counted with one addition; a check that fails is not repeated for this many
// blocks, so data without runs pays almost nothing for it.
constexpr std::size_t kBlockBytes = 64;
constexpr unsigned kRunCheckBackoffBlocks = 8;

std::uint64_t load_word(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);  // any alignment
  return word;
}

// True when all 64 bytes at p equal p[0].
bool one_value(const unsigned char* p) {
  const std::uint64_t pattern = p[0] * 0x0101010101010101ull;
  std::uint64_t differ = 0;
  for (std::size_t w = 0; w < kBlockBytes; w += 8) differ |= load_word(p + w) ^ pattern;
  return differ == 0;
}

}  // namespace

void count_bytes_scalar(const unsigned char* bytes, std::uint64_t n, std::uint64_t* counts) {
  std::uint32_t tables[kSubTables][256] = {};
  unsigned blocks_until_run_check = 0;
  while (n > 0) {
    const std::uint64_t take = std::min(n, kFlushBytes);
    std::uint64_t i = 0;
    for (; i + kBlockBytes <= take; i += kBlockBytes) {
      if (blocks_until_run_check == 0) {
        if (one_value(bytes + i)) {
          tables[0][bytes[i]] += kBlockBytes;
          continue;
        }
        blocks_until_run_check = kRunCheckBackoffBlocks;
      } else {
        --blocks_until_run_check;
      }
      for (std::size_t w = 0; w < kBlockBytes; w += 8) {
        const std::uint64_t word = load_word(bytes + i + w);
        for (std::size_t k = 0; k < 8; ++k) ++tables[k % kSubTables][(word >> (8 * k)) & 0xFF];
      }
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

const std::vector<ByteCounterChoice>& runnable_byte_counters() {
  static const std::vector<ByteCounterChoice> counters = [] {
    std::vector<ByteCounterChoice> runnable;
    if (avx512_byte_counter_supported()) runnable.push_back({count_bytes_avx512, "avx512-pospopcnt"});
    runnable.push_back({count_bytes_scalar, "scalar-subtables"});
    return runnable;
  }();
  return counters;
}

namespace {

const ByteCounterChoice& choose_byte_counter() {
  const std::vector<ByteCounterChoice>& runnable = runnable_byte_counters();
  const char* setting = std::getenv("LEVELHIST_BYTE_COUNTER");
  const std::string wanted = setting ? setting : "";
  if (wanted.empty() || wanted == "auto") return runnable.front();
  if (wanted == "scalar") return runnable.back();
  if (wanted == "avx512") {
    if (runnable.front().count == count_bytes_avx512) return runnable.front();
    throw Error(ErrorKind::unsupported,
                "LEVELHIST_BYTE_COUNTER=avx512, but this CPU lacks what that counter needs (AVX512F, AVX512BW, "
                "AVX512VBMI, AVX512VBMI2, AVX512BITALG and GFNI)",
                "unset it or set it to scalar");
  }
  throw Error(ErrorKind::usage,
              "the environment variable LEVELHIST_BYTE_COUNTER='" + wanted + "' names no byte counter",
              "unset it or set it to auto, scalar or avx512");
}

}  // namespace

const ByteCounterChoice& active_byte_counter() {
  static const ByteCounterChoice& choice = choose_byte_counter();  // a throw leaves it unset: the next call retries
  return choice;
}

}  // namespace levelhist::cpu_parallel_detail
