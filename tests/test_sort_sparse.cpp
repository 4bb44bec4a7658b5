// Counting sort (sort.hpp) and sparse histograms (sparse.hpp) on the CPU:
// equal to std::sort and to std::map counts on every distribution, size and
// alignment; the argument and backend errors.
#include <gtest/gtest.h>

#include "sort_test_support.hpp"

namespace levelhist::test {
namespace {

const Options kCpu{"auto", BackendChoice::cpu, 0};

// Sorts `c` with `options` into an output at out_offset, from an input at in_offset.
void expect_sorted(const SortCase& c, const Options& options, std::size_t in_offset, std::size_t out_offset) {
  SampleBuffer in(c.bytes, in_offset);
  std::vector<unsigned char> poison(c.bytes.size(), 0xA5);
  SampleBuffer out(poison, out_offset);
  EXPECT_EQ(counting_sort(c.type, in.data(), out.data(), c.n(), options), Backend::cpu) << c.name;
  EXPECT_EQ(sorted_diff(c.type, std_sorted(c.type, c.bytes), out.data()), "")
      << c.name << ", offsets " << in_offset << "/" << out_offset;
  if (!c.bytes.empty()) {  // memcmp of an empty vector's null data() is undefined, even for 0 bytes
    EXPECT_EQ(std::memcmp(in.data(), c.bytes.data(), c.bytes.size()), 0) << c.name << ": the input changed";
  }
}

TEST(CountingSort, EqualsStdSortOnEveryDistributionAndSize) {
  for (SampleType type : kSortTypes)
    for (std::uint64_t n : sort_sizes())
      for (const SortCase& c : sort_cases(type, n)) expect_sorted(c, kCpu, 0, 0);
}

TEST(CountingSort, UnalignedInputAndOutput) {
  for (SampleType type : kSortTypes)
    for (const SortCase& c : sort_cases(type, 4099))
      for (std::size_t in_offset : {1, 3})
        for (std::size_t out_offset : {0, 1, 7}) expect_sorted(c, kCpu, in_offset, out_offset);
}

// Large enough for several output parts (2^20 samples each) on any machine
// (threads = 4), with parts that start inside runs and runs that span parts.
TEST(CountingSort, ManyPartsAndThreadCounts) {
  for (SampleType type : {SampleType::u8, SampleType::i16})
    for (Dist d : {Dist::uniform_full, Dist::distinct2, Dist::one_value}) {
      const GenSpec g{type, d, (std::uint64_t{3} << 20) + 5, seed_for("sort/parts"), full_window(type)};
      const SortCase c{describe(g), generate(g), type};
      for (unsigned threads : {1u, 3u, 4u}) expect_sorted(c, Options{"auto", BackendChoice::cpu, threads}, 1, 1);
    }
}

TEST(CountingSort, SignedOrder) {
  const std::vector<std::int8_t> in = {5, -128, 127, -1, 0, -128, 1};
  std::vector<std::int8_t> out(in.size());
  counting_sort<std::int8_t>(in, out, kCpu);
  EXPECT_EQ(out, (std::vector<std::int8_t>{-128, -128, -1, 0, 1, 5, 127}));
  const std::vector<std::int16_t> in16 = {-32768, 32767, -2, 3, -32768};
  std::vector<std::int16_t> out16(in16.size());
  counting_sort<std::int16_t>(in16, out16, kCpu);
  EXPECT_EQ(out16, (std::vector<std::int16_t>{-32768, -32768, -2, 3, 32767}));
}

TEST(CountingSort, Errors) {
  std::uint32_t x = 7, y = 0;
  EXPECT_TRUE(throws_error([&] { counting_sort(SampleType::u32, &x, &y, 1, kCpu); }, ErrorKind::usage, "u32"));
  EXPECT_TRUE(throws_error([&] { counting_sort(SampleType::f32, &x, &y, 1, kCpu); }, ErrorKind::usage, "f32"));
  std::uint8_t b = 1, c = 0;
  EXPECT_TRUE(throws_error([&] { counting_sort(SampleType::u8, &b, &c, 1, Options{"cpu_serial"}); }, ErrorKind::usage,
                           "no strategies"));
  std::vector<std::uint8_t> small(0), in(3);
  EXPECT_TRUE(throws_error([&] { counting_sort<std::uint8_t>(in, small, kCpu); }, ErrorKind::usage, "smaller"));
}

// Without CUDA (or without a GPU) --backend cuda fails as levelhist::fill does;
// automatic falls back to the CPU.
TEST(CountingSort, BackendChoiceWithoutGpu) {
  if (backend_available(Backend::cuda)) GTEST_SKIP() << "a CUDA GPU is present: test_gpu_sort_sparse covers it";
  std::uint8_t in[3] = {3, 1, 2}, out[3] = {};
  std::string fill_error;
  try {
    Histogram h(Binning::per_value(SampleType::u8));
    fill(h, SampleType::u8, in, 3, Options{"auto", BackendChoice::cuda});
  } catch (const Error& e) {
    fill_error = e.what();
  }
  ASSERT_FALSE(fill_error.empty());
  EXPECT_TRUE(throws_error([&] { counting_sort(SampleType::u8, in, out, 3, Options{"auto", BackendChoice::cuda}); },
                           ErrorKind::unsupported, fill_error));
  std::uint32_t k = 5;
  EXPECT_TRUE(throws_error([&] { sparse_histogram(KeyType::u32, &k, 1, Options{"auto", BackendChoice::cuda}); },
                           ErrorKind::unsupported, fill_error));
  EXPECT_EQ(counting_sort(SampleType::u8, in, out, 3), Backend::cpu);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[2], 3);
  Backend ran = Backend::cuda;
  EXPECT_EQ(sparse_histogram(KeyType::u32, &k, 1, Options{}, &ran), (std::vector<ValueCount>{{5, 1}}));
  EXPECT_EQ(ran, Backend::cpu);
}

// ---- sparse -----------------------------------------------------------------------

void expect_pairs(const KeyCase& c, const std::vector<ValueCount>& want, const Options& options, std::size_t offset) {
  SampleBuffer keys(c.bytes, offset);
  Backend ran = Backend::cuda;
  const std::vector<ValueCount> got = sparse_histogram(c.type, keys.data(), c.n(), options, &ran);
  EXPECT_EQ(ran, Backend::cpu);
  EXPECT_EQ(pairs_diff(want, got), "") << c.name << ", offset " << offset;
}

TEST(SparseHistogram, EqualsMapCountsForEveryKeyType) {
  for (KeyType type : kAllKeyTypes)
    for (std::uint64_t n : {0, 1, 2, 3, 17, 1000, 70001})
      for (const KeyCase& c : key_cases(type, n)) expect_pairs(c, map_counts(c.type, c.bytes), kCpu, 0);
}

TEST(SparseHistogram, UnalignedKeysAndThreadCounts) {
  for (KeyType type : kAllKeyTypes)
    for (const KeyCase& c : key_cases(type, 200003)) {
      const std::vector<ValueCount> want = map_counts(c.type, c.bytes);
      for (unsigned threads : {1u, 4u}) expect_pairs(c, want, Options{"auto", BackendChoice::cpu, threads}, 3);
    }
}

TEST(SparseHistogram, SignedValuesAreSignExtended) {
  const std::vector<std::int32_t> keys = {-1, 5, std::numeric_limits<std::int32_t>::min(), -1, 0};
  const std::vector<ValueCount> got = sparse_histogram<std::int32_t>(keys, kCpu);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(static_cast<std::int64_t>(got[0].value), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(got[1], (ValueCount{~std::uint64_t{0}, 2}));
  EXPECT_EQ(got[2], (ValueCount{0, 1}));
  EXPECT_EQ(got[3], (ValueCount{5, 1}));
  const std::vector<std::uint64_t> big = {~std::uint64_t{0}, 0, ~std::uint64_t{0}};
  EXPECT_EQ(sparse_histogram<std::uint64_t>(big, kCpu), (std::vector<ValueCount>{{0, 1}, {~std::uint64_t{0}, 2}}));
}

TEST(SparseHistogram, KeyTypeNames) {
  for (KeyType t : kAllKeyTypes) EXPECT_EQ(parse_key_type(to_string(t)), t);
  EXPECT_FALSE(parse_key_type("u16").has_value());
  EXPECT_EQ(key_size(KeyType::i64), 8u);
  EXPECT_TRUE(throws_error([] { sparse_histogram(KeyType::u32, nullptr, 0, Options{"cpu_serial"}); },
                           ErrorKind::usage, "no strategies"));
}

}  // namespace
}  // namespace levelhist::test
