// The byte counters behind cpu_parallel's 8-bit path (src/cpu/cpu_parallel_bytes.hpp),
// called directly: every counter this CPU can run (the AVX-512 one and the
// scalar fallback on a CPU with AVX-512; a test that needs the AVX-512 one
// skips, saying so, elsewhere). Each result is checked against a plain loop
// (++counts[byte]) over the same bytes, on counts that already hold values
// (a counter adds to them).
//
//  * every length 0..4096, the start offset cycling through 0..63;
//  * every start offset 0..63 around the counters' unit sizes (vector, block,
//    round, flush intervals);
//  * patterns: random, each of the 256 values alone, every value in turn,
//    runs of many lengths (the run detection and its back-off), all bytes in
//    one quarter of the values (one group buffer fills at 4x the rate),
//    random bytes with zero runs between them, 16 MiB + 17 random;
//  * (slow, normal build only) 4.25 GiB without runs, mapped from 2 MiB of
//    memory: one bin past 2^32 and the 1 GiB flush of 32-bit counts;
//  * LEVELHIST_BYTE_COUNTER through the CLI: scalar and avx512 give the
//    reference counts end to end; a bad value is a one-line usage error.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "cpu/cpu_parallel_bytes.hpp"
#include "test_support.hpp"

// GoogleTest prints a counter by its name (found by argument-dependent lookup).
namespace levelhist::cpu_parallel_detail {
inline void PrintTo(const ByteCounterChoice& c, std::ostream* os) { *os << c.name; }
}  // namespace levelhist::cpu_parallel_detail

namespace {

using levelhist::cpu_parallel_detail::ByteCounterChoice;
using levelhist::cpu_parallel_detail::runnable_byte_counters;
using Counts = std::array<std::uint64_t, 256>;

// Counts already in the array before a counter adds to it.
Counts starting_counts() {
  Counts c{};
  for (std::size_t v = 0; v < 256; ++v) c[v] = 1000003 * v + 7;
  return c;
}

Counts plain_loop(const unsigned char* bytes, std::uint64_t n) {
  Counts c = starting_counts();
  for (std::uint64_t i = 0; i < n; ++i) ++c[bytes[i]];
  return c;
}

::testing::AssertionResult counts_like_plain_loop(const ByteCounterChoice& counter, const unsigned char* bytes,
                                                  std::uint64_t n) {
  Counts got = starting_counts();
  counter.count(bytes, n, got.data());
  const Counts want = plain_loop(bytes, n);
  for (std::size_t v = 0; v < 256; ++v)
    if (got[v] != want[v])
      return ::testing::AssertionFailure() << counter.name << ", " << n << " bytes: count of value " << v << " is "
                                           << got[v] - starting_counts()[v] << ", the plain loop's "
                                           << want[v] - starting_counts()[v];
  return ::testing::AssertionSuccess();
}

std::vector<unsigned char> random_bytes(std::size_t n, const char* tag) {
  std::mt19937_64 rng(levelhist::test::seed_for(tag));
  std::vector<unsigned char> bytes(n);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  return bytes;
}

std::string seed_note() {
  return "base seed " + std::to_string(levelhist::test::base_seed()) + " (LEVELHIST_TEST_SEED changes it)";
}

class ByteCounter : public ::testing::TestWithParam<ByteCounterChoice> {};

TEST_P(ByteCounter, EveryLengthTo4096) {
  const std::vector<unsigned char> bytes = random_bytes(4096 + 64, "every-length");
  for (std::size_t n = 0; n <= 4096; ++n)
    ASSERT_TRUE(counts_like_plain_loop(GetParam(), bytes.data() + n % 64, n)) << seed_note();
}

TEST_P(ByteCounter, EveryOffsetAroundUnitSizes) {
  using namespace levelhist::cpu_parallel_detail;
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t unit : {kAvx512VectorBytes, kAvx512BlockBytes, 2 * kAvx512BlockBytes, kAvx512RoundBytes,
                             2 * kAvx512RoundBytes, 31 * kAvx512BlockBytes, 62 * kAvx512BlockBytes})
    for (std::uint64_t n : {unit - 1, unit, unit + 1}) sizes.push_back(n);
  sizes.push_back(3 * kAvx512RoundBytes + 77);
  const std::vector<unsigned char> bytes = random_bytes(3 * kAvx512RoundBytes + 200, "offsets");
  for (std::uint64_t n : sizes)
    for (std::size_t offset = 0; offset < 64; ++offset)
      ASSERT_TRUE(counts_like_plain_loop(GetParam(), bytes.data() + offset, n)) << "offset " << offset << ", "
                                                                                << seed_note();
}

TEST_P(ByteCounter, EachValueAlone) {
  for (unsigned v = 0; v < 256; ++v)
    for (std::size_t n : {std::size_t{1}, std::size_t{127}, std::size_t{128} * 9 + 5, std::size_t{5000} + v}) {
      const std::vector<unsigned char> bytes(n + 3, static_cast<unsigned char>(v));
      ASSERT_TRUE(counts_like_plain_loop(GetParam(), bytes.data() + v % 4, n)) << "value " << v;
    }
}

TEST_P(ByteCounter, EveryValueInTurn) {
  std::vector<unsigned char> bytes(70001);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i);
  EXPECT_TRUE(counts_like_plain_loop(GetParam(), bytes.data(), bytes.size()));
  EXPECT_TRUE(counts_like_plain_loop(GetParam(), bytes.data() + 13, bytes.size() - 13));
}

// Runs of r equal bytes, the value changing after each run: runs shorter than,
// equal to and longer than the 128-byte pairs the run detection checks.
TEST_P(ByteCounter, RunsOfManyLengths) {
  for (std::size_t run : {1, 2, 3, 63, 64, 65, 127, 128, 129, 200, 255, 256, 257, 1000, 5000}) {
    std::vector<unsigned char> bytes(50000);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>((i / run) * 37 + 11);
    for (std::size_t offset : {0, 1, 64})
      ASSERT_TRUE(counts_like_plain_loop(GetParam(), bytes.data() + offset, bytes.size() - offset))
          << "runs of " << run << ", offset " << offset;
  }
}

// Random stretches and zero runs in turn, so that run checks succeed, fail and
// back off at many positions.
TEST_P(ByteCounter, RandomBytesBetweenZeroRuns) {
  std::vector<unsigned char> bytes = random_bytes(300000, "zero-runs");
  std::mt19937_64 rng(levelhist::test::seed_for("zero-runs-layout"));
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t random_part = rng() % 700, zero_part = rng() % 900;
    i += random_part;
    for (std::size_t j = 0; j < zero_part && i < bytes.size(); ++j) bytes[i++] = 0;
  }
  EXPECT_TRUE(counts_like_plain_loop(GetParam(), bytes.data(), bytes.size())) << seed_note();
  EXPECT_TRUE(counts_like_plain_loop(GetParam(), bytes.data() + 5, bytes.size() - 5)) << seed_note();
}

// All bytes in one quarter of the values: one of the AVX-512 counter's group
// buffers takes every byte (a whole round, past the 31-block flush interval).
TEST_P(ByteCounter, OneQuarterOfTheValues) {
  for (unsigned quarter = 0; quarter < 4; ++quarter) {
    std::vector<unsigned char> bytes = random_bytes(100003, "quarter");
    for (auto& b : bytes) b = static_cast<unsigned char>(64 * quarter + (b & 63));
    ASSERT_TRUE(counts_like_plain_loop(GetParam(), bytes.data(), bytes.size())) << "values " << 64 * quarter
                                                                                << "..." << 64 * quarter + 63;
  }
  // Two values only, far apart, in random order.
  std::vector<unsigned char> bytes = random_bytes(100003, "two-values");
  for (auto& b : bytes) b = (b & 1) ? 3 : 250;
  EXPECT_TRUE(counts_like_plain_loop(GetParam(), bytes.data(), bytes.size())) << seed_note();
}

TEST_P(ByteCounter, SixteenMiBRandom) {
  const std::vector<unsigned char> bytes = random_bytes((std::size_t{16} << 20) + 20, "sixteen-mib");
  EXPECT_TRUE(counts_like_plain_loop(GetParam(), bytes.data() + 3, (std::size_t{16} << 20) + 17)) << seed_note();
}

// 4.25 GiB of input, made of one 2 MiB block of memory mapped again and again
// at consecutive addresses. The block has no 128-byte run (so every byte is
// binned and counted, none added at once) and value 7 is 127 of every 128
// bytes, so its count passes 2^32.
TEST_P(ByteCounter, PastTwoToThe32) {
#if defined(LEVELHIST_TEST_ASAN)
  GTEST_SKIP() << "4.25 GiB: too slow under AddressSanitizer; runs in the normal build";
#endif
  if (const char* skip = std::getenv("LEVELHIST_SKIP_SLOW_TESTS"); skip && std::string(skip) == "1")
    GTEST_SKIP() << "LEVELHIST_SKIP_SLOW_TESTS=1";
  constexpr std::size_t kBlock = std::size_t{2} << 20;
  constexpr std::size_t kCopies = 2176;  // 4.25 GiB
  const int fd = memfd_create("levelhist-byte-counter-test", 0);
  if (fd < 0) GTEST_SKIP() << "memfd_create failed: " << std::strerror(errno);
  std::vector<unsigned char> block(kBlock, 7);
  for (std::size_t i = 0; i < kBlock; i += 128) block[i + (i / 128) % 128] = static_cast<unsigned char>(8 + i / 128 % 240);
  ASSERT_EQ(ftruncate(fd, kBlock), 0);
  ASSERT_EQ(pwrite(fd, block.data(), kBlock, 0), static_cast<ssize_t>(kBlock));
  const std::size_t total = kBlock * kCopies;
  void* area = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) {
    close(fd);
    GTEST_SKIP() << "cannot reserve 4.25 GiB of address space: " << std::strerror(errno);
  }
  auto* bytes = static_cast<unsigned char*>(area);
  bool mapped = true;
  for (std::size_t c = 0; c < kCopies && mapped; ++c)
    mapped = mmap(bytes + c * kBlock, kBlock, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
  close(fd);
  if (!mapped) {
    munmap(area, total);
    GTEST_SKIP() << "cannot map the block " << kCopies << " times";
  }
  // The expected counts, from the block's counts times the copies.
  Counts want{};
  for (unsigned char b : block) ++want[b];
  for (auto& c : want) c *= kCopies;
  ASSERT_GT(want[7], std::uint64_t{1} << 32);
  Counts got{};
  GetParam().count(bytes, total, got.data());
  munmap(area, total);
  for (std::size_t v = 0; v < 256; ++v) EXPECT_EQ(got[v], want[v]) << GetParam().name << ", value " << v;
}

INSTANTIATE_TEST_SUITE_P(Cpu, ByteCounter, ::testing::ValuesIn(runnable_byte_counters()),
                         [](const auto& info) { return levelhist::test::param_name(info.param.name); });

TEST(ByteCounters, ScalarOneIsAlwaysThere) {
  const auto& counters = runnable_byte_counters();
  ASSERT_FALSE(counters.empty());
  EXPECT_EQ(counters.back().count, levelhist::cpu_parallel_detail::count_bytes_scalar);
  if (!levelhist::cpu_parallel_detail::avx512_byte_counter_supported())
    GTEST_SKIP() << "this CPU cannot run the AVX-512 byte counter (it needs AVX512F/BW/VBMI/VBMI2/BITALG and GFNI): "
                    "only the scalar counter is tested here";
  EXPECT_EQ(counters.size(), 2u);
}

// ---- LEVELHIST_BYTE_COUNTER, end to end -------------------------------------------

using cli_test::CliTest;

TEST_F(CliTest, ByteCounterKnobPicksACounter) {
  const std::string bytes = cli_test::random_bytes((1 << 20) + 333, 77);
  const std::string f = file("bytes", bytes);
  std::vector<std::string> settings = {"scalar", "auto"};
  if (levelhist::cpu_parallel_detail::avx512_byte_counter_supported()) settings.push_back("avx512");
  for (const std::string& setting : settings) {
    cli_test::RunSpec spec;
    spec.env = {"LEVELHIST_BYTE_COUNTER=" + setting};
    const cli_test::Result r = cli_test::ok({"count", "--backend", "cpu", "--format", "csv", f}, spec);
    EXPECT_EQ(cli_test::parse_csv(r.out).counts, cli_test::byte_counts(bytes)) << "LEVELHIST_BYTE_COUNTER=" << setting;
  }
}

TEST_F(CliTest, ByteCounterKnobRefusesUnknownValues) {
  const std::string f = file("bytes", "abc");
  cli_test::RunSpec spec;
  spec.env = {"LEVELHIST_BYTE_COUNTER=avx2"};
  const cli_test::Result r = cli_test::fails(2, {"count", "--backend", "cpu", f}, spec);
  EXPECT_NE(r.err.find("LEVELHIST_BYTE_COUNTER='avx2'"), std::string::npos) << r.err;
  if (!levelhist::cpu_parallel_detail::avx512_byte_counter_supported()) {
    spec.env = {"LEVELHIST_BYTE_COUNTER=avx512"};
    cli_test::fails(1, {"count", "--backend", "cpu", f}, spec);
  }
}

}  // namespace
