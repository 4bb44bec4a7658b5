// Every CPU strategy in the registry against the reference, cpu_serial.
//
// The strategies come from levelhist::all_strategies() (never a hard-coded
// list), so a new CPU strategy is tested here as soon as it is registered.
// Each one runs through Strategy::run with RunArgs built as src/core/api.cpp
// builds them (test_support.hpp: run_cpu_strategy), with threads 1, 2 and 3,
// accumulate false (onto garbage) and true (onto the previous result).
//
// Covering design (the whole suite has to stay fast, also under ASan/UBSan):
//  * StrategyMatrix: strategy x sample type x binning, each test looping over
//    every distribution and the small sizes (0..4095 plus two random sizes);
//    start offsets cycle through 0..15 bytes.
//  * StrategyLargeN: n = 2^20 for a representative set of (type, distribution,
//    binning) triples, one per line of kLargeCases.
//  * StrategyUnaligned: every type at every start offset 0..15.
//  * StrategyBoundaries: n - 1, n, n + 1 around every size the strategy names
//    in Strategy::boundary_sizes (method thresholds, vector widths, workers).
//  * StrategyHuge (slow, normal build only): 2^26 + 3 samples, past the
//    flush interval of 32-bit private counters.
//  * StrategyAccumulate, StrategyOracle, StrategyThreads: the accumulate
//    contract, counts checked against an oracle written in the test (not
//    cpu_serial), and unusual thread counts.
// Failures print the data's seed (rerun with LEVELHIST_TEST_SEED to vary it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace levelhist::test {
namespace {

constexpr unsigned kThreadCounts[] = {1, 2, 3};

// Garbage for slots that a run with accumulate=false must overwrite.
void fill_garbage(std::vector<std::uint64_t>& slots, std::uint64_t salt) {
  const std::uint64_t base = splitmix64(salt) | 1;
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = base + i;
}

// Runs `s` with threads 1, 2 and 3: accumulate=false onto garbage must give
// `ref`, then accumulate=true onto that result must give 2 * ref.
// Sets *ran to false if the strategy does not support the problem.
::testing::AssertionResult agrees_with_reference(const Strategy& s, SampleType type, const void* samples,
                                                 std::uint64_t n, const Binning& b,
                                                 const std::vector<std::uint64_t>& ref, bool* ran) {
  std::vector<std::uint64_t> slots(b.slots()), twice(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) twice[i] = 2 * ref[i];
  *ran = false;
  for (unsigned threads : kThreadCounts) {
    fill_garbage(slots, n * 31 + threads);
    if (!run_cpu_strategy(s, type, samples, n, b, slots, /*accumulate=*/false, threads)) return ::testing::AssertionSuccess();
    *ran = true;
    if (auto r = slots_equal(ref, slots, b); !r)
      return ::testing::AssertionFailure() << s.name << ", threads " << threads << ", accumulate=false onto garbage: "
                                           << r.message();
    run_cpu_strategy(s, type, samples, n, b, slots, /*accumulate=*/true, threads);
    if (auto r = slots_equal(twice, slots, b); !r)
      return ::testing::AssertionFailure() << s.name << ", threads " << threads
                                           << ", second run with accumulate=true (expected twice the reference): "
                                           << r.message();
  }
  return ::testing::AssertionSuccess();
}

const NamedBinning& binning_named(SampleType type, std::string_view name) {
  static std::vector<std::vector<NamedBinning>> cache(std::size(kAllSampleTypes));
  auto& list = cache[static_cast<std::size_t>(type)];
  if (list.empty()) list = standard_binnings(type);
  for (const auto& nb : list)
    if (nb.name == name) return nb;
  throw std::invalid_argument("no standard binning '" + std::string(name) + "' for " + std::string(to_string(type)));
}

// ---------------------------------------------------------------------------
// The matrix: strategy x type x binning; distributions and small n inside.

struct MatrixCase {
  const Strategy* strategy;
  SampleType type;
  NamedBinning binning;
};

std::vector<MatrixCase> matrix_cases() {
  std::vector<MatrixCase> out;
  for (const Strategy* s : cpu_strategies())
    for (SampleType t : kAllSampleTypes)
      for (auto& nb : standard_binnings(t)) out.push_back({s, t, nb});
  return out;
}

void PrintTo(const MatrixCase& c, std::ostream* os) {
  *os << c.strategy->name << ", " << to_string(c.type) << ", " << c.binning.name;
}

class StrategyMatrix : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(StrategyMatrix, AgreesWithCpuSerial) {
  const MatrixCase& c = GetParam();
  const Binning& b = c.binning.binning;
  const std::string tag = std::string(to_string(c.type)) + "/" + c.binning.name;
  std::mt19937_64 rng(seed_for(tag));
  std::vector<std::uint64_t> sizes = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 257, 4095};
  // Many bins make every run cost O(bins) (clearing, merging): fewer sizes there.
  if (b.bins() >= 4096) sizes = {0, 1, 17, 33, 4095};
  if (b.bins() >= 65536) sizes = {0, 17, 4095};
  if (b.bins() < 65536) sizes.push_back(std::uniform_int_distribution<std::uint64_t>(18, 4094)(rng));
  sizes.push_back(std::uniform_int_distribution<std::uint64_t>(4097, 20000)(rng));

  const Window window = window_around(b, c.type);
  std::size_t offset = 0, runs = 0;
  std::string why;
  for (Dist d : dists_for(c.type)) {
    for (std::uint64_t n : sizes) {
      const GenSpec g{c.type, d, n, seed_for(tag, n * 16 + static_cast<unsigned>(d)), window, &b};
      const std::vector<unsigned char> bytes = generate(g);
      const SampleBuffer buf(bytes, offset);
      SCOPED_TRACE(describe(g) + ", start offset " + std::to_string(offset) + " bytes, " + b.describe());
      offset = (offset + 1) % 16;
      const std::vector<std::uint64_t> ref = reference_slots(c.type, buf.data(), n, b);
      bool ran = false;
      ASSERT_TRUE(agrees_with_reference(*c.strategy, c.type, buf.data(), n, b, ref, &ran));
      runs += ran;
    }
  }
  if (runs == 0) {
    strategy_accepts(*c.strategy, Problem{c.type, &b, 1}, &why);
    GTEST_SKIP() << c.strategy->name << " supports none of these problems: " << why;
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyMatrix, ::testing::ValuesIn(matrix_cases()),
                         [](const auto& info) {
                           return param_name(std::string(info.param.strategy->name) + "_" +
                                             std::string(to_string(info.param.type)) + "_" + info.param.binning.name);
                         });

// ---------------------------------------------------------------------------
// n = 2^20 for a representative subset.

struct LargeSpec {
  SampleType type;
  Dist dist;
  const char* binning;
};

constexpr LargeSpec kLargeCases[] = {
    {SampleType::u8, Dist::uniform_full, "per_value"},
    {SampleType::u8, Dist::zeros, "per_value"},
    {SampleType::u8, Dist::distinct4, "unit_narrow"},
    {SampleType::i8, Dist::ramp, "even7_narrow"},
    {SampleType::u16, Dist::uniform_full, "per_value"},
    {SampleType::i16, Dist::geometric, "even4096_narrow"},
    {SampleType::i32, Dist::uniform_full, "even256_full"},
    {SampleType::i32, Dist::on_edges, "explicit_uneven"},
    {SampleType::u32, Dist::ramp, "even65536_full"},
    {SampleType::u32, Dist::uniform_window, "even5_full_inclusive"},
    {SampleType::f32, Dist::specials, "even65536"},
    {SampleType::f32, Dist::uniform_window, "even256_unit"},
    {SampleType::f32, Dist::one_value, "even7"},
    {SampleType::f64, Dist::specials, "explicit_uneven"},
    {SampleType::f64, Dist::on_edges, "even10_inclusive"},
    {SampleType::f64, Dist::distinct16, "three_bins"},
    {SampleType::i32, Dist::uniform_window, "unit_narrow"},
    {SampleType::u16, Dist::on_edges, "even7_narrow"},
    {SampleType::i8, Dist::on_edges, "explicit_inclusive"},
};

struct LargeCase {
  const Strategy* strategy;
  LargeSpec spec;
};

// The reference itself is left out at this size (it would be compared with
// itself); its accumulate and clearing behaviour is covered by the smaller suites.
std::vector<LargeCase> large_cases() {
  std::vector<LargeCase> out;
  for (const Strategy* s : cpu_strategies())
    if (s != &reference_strategy())
      for (const LargeSpec& l : kLargeCases) out.push_back({s, l});
  return out;
}

void PrintTo(const LargeCase& c, std::ostream* os) {
  *os << c.strategy->name << ", " << to_string(c.spec.type) << ", " << to_string(c.spec.dist) << ", " << c.spec.binning;
}

class StrategyLargeN : public ::testing::TestWithParam<LargeCase> {};

TEST_P(StrategyLargeN, AgreesWithCpuSerialAt2Pow20) {
  const LargeCase& c = GetParam();
  const Binning& b = binning_named(c.spec.type, c.spec.binning).binning;
  constexpr std::uint64_t n = std::uint64_t{1} << 20;
  const std::string tag = std::string("large/") + std::string(to_string(c.spec.type)) + "/" + c.spec.binning;
  const GenSpec g{c.spec.type, c.spec.dist, n, seed_for(tag, static_cast<unsigned>(c.spec.dist)),
                  window_around(b, c.spec.type), &b};
  const std::vector<unsigned char> bytes = generate(g);
  const SampleBuffer buf(bytes, 0);
  SCOPED_TRACE(describe(g) + ", " + b.describe());
  const std::vector<std::uint64_t> ref = reference_slots(c.spec.type, buf.data(), n, b);
  bool ran = false;
  ASSERT_TRUE(agrees_with_reference(*c.strategy, c.spec.type, buf.data(), n, b, ref, &ran));
  if (!ran) GTEST_SKIP() << c.strategy->name << " does not support this problem";
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyLargeN, ::testing::ValuesIn(large_cases()),
                         [](const auto& info) {
                           const LargeSpec& l = info.param.spec;
                           return param_name(std::string(info.param.strategy->name) + "_" +
                                             std::string(to_string(l.type)) + "_" + std::string(to_string(l.dist)) +
                                             "_" + l.binning);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StrategyLargeN);

// ---------------------------------------------------------------------------
// Unaligned starts: every type at every offset 0..15 from a 64-byte boundary.

struct TypeCase {
  const Strategy* strategy;
  SampleType type;
};

std::vector<TypeCase> type_cases() {
  std::vector<TypeCase> out;
  for (const Strategy* s : cpu_strategies())
    for (SampleType t : kAllSampleTypes) out.push_back({s, t});
  return out;
}

void PrintTo(const TypeCase& c, std::ostream* os) { *os << c.strategy->name << ", " << to_string(c.type); }

std::string type_case_name(const ::testing::TestParamInfo<TypeCase>& info) {
  return param_name(std::string(info.param.strategy->name) + "_" + std::string(to_string(info.param.type)));
}

class StrategyUnaligned : public ::testing::TestWithParam<TypeCase> {};

TEST_P(StrategyUnaligned, EveryStartOffset) {
  const TypeCase& c = GetParam();
  const std::vector<std::string> names = is_integer(c.type)
                                             ? std::vector<std::string>{"unit_narrow", "even7_narrow"}
                                             : std::vector<std::string>{"even256_unit", "explicit_uneven"};
  for (const std::string& name : names) {
    const Binning& b = binning_named(c.type, name).binning;
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{31}, std::uint64_t{4097},
                            std::uint64_t{33333}}) {
      const std::string tag = "unaligned/" + std::string(to_string(c.type)) + "/" + name;
      const GenSpec g{c.type, Dist::uniform_window, n, seed_for(tag, n), window_around(b, c.type), &b};
      const std::vector<unsigned char> bytes = generate(g);
      const std::vector<std::uint64_t> ref = reference_slots(c.type, bytes.data(), n, b);
      for (std::size_t offset = 0; offset < 16; ++offset) {
        SCOPED_TRACE(describe(g) + ", start offset " + std::to_string(offset) + " bytes, " + b.describe());
        const SampleBuffer buf(bytes, offset);
        bool ran = false;
        ASSERT_TRUE(agrees_with_reference(*c.strategy, c.type, buf.data(), n, b, ref, &ran));
        if (!ran) GTEST_SKIP() << c.strategy->name << " does not support this problem";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyUnaligned, ::testing::ValuesIn(type_cases()), type_case_name);

// ---------------------------------------------------------------------------
// The sizes where a strategy says it changes behaviour (Strategy::boundary_sizes:
// vector widths, blocks, the size that starts a second worker, thresholds
// between methods), probed at n - 1, n and n + 1, for every type with a few
// binnings that select different code paths (unit-width, few bins, many bins,
// explicit edges).

class StrategyBoundaries : public ::testing::TestWithParam<TypeCase> {};

TEST_P(StrategyBoundaries, AgreesWithCpuSerialAroundBoundarySizes) {
  const TypeCase& c = GetParam();
  constexpr std::uint64_t kMaxN = std::uint64_t{1} << 21;  // keeps the test fast
  std::vector<std::string> names = is_integer(c.type)
                                       ? std::vector<std::string>{"unit_narrow", "even7_narrow", "even65536_full",
                                                                  "explicit_uneven"}
                                       : std::vector<std::string>{"even7", "even65536", "explicit_uneven"};
  if (sample_size(c.type) <= 2) names.push_back("per_value");
  std::size_t probed = 0, index = 0;
  for (const std::string& name : names) {
    // One distribution per binning, alternating, to keep the test fast (under ASan too).
    const Dist d = index++ % 2 == 0 ? Dist::on_edges : Dist::uniform_full;
    const Binning& b = binning_named(c.type, name).binning;
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s : c.strategy->boundary_sizes(Problem{c.type, &b, kMaxN}))
      for (std::uint64_t n : {s - 1, s, s + 1})
        if (s > 0 && n <= kMaxN) sizes.push_back(n);
    if (sizes.empty()) continue;
    const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    {
      const std::string tag = "boundary/" + std::string(to_string(c.type)) + "/" + name;
      const GenSpec g{c.type, d, largest, seed_for(tag, static_cast<unsigned>(d)), window_around(b, c.type), &b};
      const std::vector<unsigned char> bytes = generate(g);  // every size uses a prefix of these
      for (std::uint64_t n : sizes) {
        const std::size_t offset = (n % 7) * 2 + 1;  // unaligned, different per size
        SCOPED_TRACE(describe(g) + "; first " + std::to_string(n) + " samples (a boundary size of " +
                     c.strategy->name + " +-1), start offset " + std::to_string(offset) + " bytes, " + b.describe());
        const SampleBuffer buf(bytes.data(), n * sample_size(c.type), offset);
        const std::vector<std::uint64_t> ref = reference_slots(c.type, buf.data(), n, b);
        bool ran = false;
        ASSERT_TRUE(agrees_with_reference(*c.strategy, c.type, buf.data(), n, b, ref, &ran));
        probed += ran;
      }
    }
  }
  if (probed == 0) GTEST_SKIP() << "no boundary size of " << c.strategy->name << " applies to " << to_string(c.type);
}

std::vector<TypeCase> boundary_cases() {
  std::vector<TypeCase> out;
  for (const TypeCase& c : type_cases())
    if (c.strategy->boundary_sizes) out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyBoundaries, ::testing::ValuesIn(boundary_cases()), type_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StrategyBoundaries);

// ---------------------------------------------------------------------------
// SLOW (normal build only): 2^26 + 3 u16 samples, one worker's worth past
// 2^26, the interval at which a strategy with 32-bit private counters must
// flush them into the 64-bit slots (cpu_parallel's kFlushSamples). A 128 MiB
// ramp; a few seconds. Skipped under AddressSanitizer and with
// LEVELHIST_SKIP_SLOW_TESTS=1.

class StrategyHuge : public ::testing::TestWithParam<const Strategy*> {};

TEST_P(StrategyHuge, SixteenBitPastTwoToThe26) {
#if defined(LEVELHIST_TEST_ASAN)
  GTEST_SKIP() << "2^26 samples: too slow under AddressSanitizer; runs in the normal build";
#endif
  if (const char* skip = std::getenv("LEVELHIST_SKIP_SLOW_TESTS"); skip && std::string(skip) == "1")
    GTEST_SKIP() << "LEVELHIST_SKIP_SLOW_TESTS=1";
  const Strategy& s = *GetParam();
  const std::uint64_t n = (std::uint64_t{1} << 26) + 3;
  for (const char* name : {"per_value", "even7_narrow"}) {
    const Binning& b = binning_named(SampleType::u16, name).binning;
    const GenSpec g{SampleType::u16, Dist::ramp, n, 0, Window{0, 65535}, &b};
    const std::vector<unsigned char> bytes = generate(g);
    SCOPED_TRACE(describe(g) + ", " + b.describe());
    const std::vector<std::uint64_t> ref = reference_slots(SampleType::u16, bytes.data(), n, b);
    std::vector<std::uint64_t> slots(b.slots());
    for (unsigned threads : {1u, 2u}) {
      fill_garbage(slots, threads);
      if (!run_cpu_strategy(s, SampleType::u16, bytes.data(), n, b, slots, false, threads))
        GTEST_SKIP() << s.name << " does not support this problem";
      ASSERT_TRUE(slots_equal(ref, slots, b)) << s.name << ", threads " << threads;
    }
  }
}

std::vector<const Strategy*> non_reference_cpu_strategies() {
  std::vector<const Strategy*> out;
  for (const Strategy* s : cpu_strategies())
    if (s != &reference_strategy()) out.push_back(s);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyHuge, ::testing::ValuesIn(non_reference_cpu_strategies()),
                         [](const auto& info) { return param_name(info.param->name); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StrategyHuge);

// ---------------------------------------------------------------------------
// The accumulate contract, with expectations built in the test from the
// reference counts: accumulate=true adds exactly (64-bit, also across 2^32),
// accumulate=false replaces whatever was in the slots, also when n = 0.

class StrategyAccumulate : public ::testing::TestWithParam<TypeCase> {};

TEST_P(StrategyAccumulate, AddsExactlyAndClearsGarbage) {
  const TypeCase& c = GetParam();
  const Binning b = standard_binnings(c.type)[1].binning;  // 7 bins over part of the range
  const std::string tag = "accumulate/" + std::string(to_string(c.type));
  const GenSpec ga{c.type, Dist::on_edges, 5000, seed_for(tag, 1), window_around(b, c.type), &b};
  const GenSpec gb{c.type, Dist::uniform_window, 3001, seed_for(tag, 2), window_around(b, c.type), &b};
  const std::vector<unsigned char> a = generate(ga), bb = generate(gb);
  const SampleBuffer bufa(a, 5), bufb(bb, 3);
  SCOPED_TRACE(describe(ga) + "; then " + describe(gb) + "; " + b.describe());
  const std::vector<std::uint64_t> ra = reference_slots(c.type, bufa.data(), ga.n, b);
  const std::vector<std::uint64_t> rb = reference_slots(c.type, bufb.data(), gb.n, b);

  for (unsigned threads : kThreadCounts) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::vector<std::uint64_t> slots(b.slots()), expected(b.slots());
    // Counters near and above 2^32 and 2^40: the sums must not be truncated to 32 bits.
    for (std::size_t i = 0; i < slots.size(); ++i) {
      slots[i] = (std::uint64_t{1} << 32) - 1 - i + (i % 3) * (std::uint64_t{1} << 40);
      expected[i] = slots[i] + ra[i];
    }
    if (!run_cpu_strategy(*c.strategy, c.type, bufa.data(), ga.n, b, slots, true, threads))
      GTEST_SKIP() << c.strategy->name << " does not support this problem";
    ASSERT_TRUE(slots_equal(expected, slots, b)) << "accumulate=true onto preset counters";

    for (std::size_t i = 0; i < slots.size(); ++i) expected[i] += rb[i];
    run_cpu_strategy(*c.strategy, c.type, bufb.data(), gb.n, b, slots, true, threads);
    ASSERT_TRUE(slots_equal(expected, slots, b)) << "a second, different run with accumulate=true";

    std::fill(slots.begin(), slots.end(), ~std::uint64_t{0});
    run_cpu_strategy(*c.strategy, c.type, bufb.data(), gb.n, b, slots, false, threads);
    ASSERT_TRUE(slots_equal(rb, slots, b)) << "accumulate=false onto all-ones garbage";

    // n = 0: accumulate=true keeps the counts, accumulate=false clears them.
    const std::vector<std::uint64_t> before = slots;
    run_cpu_strategy(*c.strategy, c.type, bufb.data(), 0, b, slots, true, threads);
    ASSERT_TRUE(slots_equal(before, slots, b)) << "n = 0 with accumulate=true must leave the slots alone";
    run_cpu_strategy(*c.strategy, c.type, bufb.data(), 0, b, slots, false, threads);
    ASSERT_TRUE(slots_equal(std::vector<std::uint64_t>(b.slots(), 0), slots, b))
        << "n = 0 with accumulate=false must clear the slots";
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyAccumulate, ::testing::ValuesIn(type_cases()), type_case_name);

// ---------------------------------------------------------------------------
// An oracle independent of the library (so cpu_serial is checked too): bins
// whose edges are consecutive integers, where the bin of a value is plain
// integer arithmetic in the test.

class StrategyOracle : public ::testing::TestWithParam<TypeCase> {};

TEST_P(StrategyOracle, UnitIntegerBinsMatchHandCount) {
  const TypeCase& c = GetParam();
  // 8/16-bit: one bin per value; 32-bit: 1000 unit bins inside the range;
  // floats: 256 unit bins over [0, 256) and values around them.
  const Binning b = sample_size(c.type) <= 2 ? Binning::per_value(c.type)
                    : is_integer(c.type)   ? binning_named(c.type, "unit_narrow").binning
                                           : Binning::even(256, 0.0, 256.0);
  const std::uint64_t n = 100003;
  const std::string tag = "oracle/" + std::string(to_string(c.type));
  const Window window = sample_size(c.type) <= 2 ? full_window(c.type) : window_around(b, c.type);
  const GenSpec g{c.type, is_integer(c.type) ? Dist::uniform_window : Dist::specials, n, seed_for(tag), window, &b};
  const std::vector<unsigned char> bytes = generate(g);
  SCOPED_TRACE(describe(g) + ", " + b.describe());

  std::vector<std::uint64_t> expected(b.slots(), 0);
  visit_sample_type(c.type, [&](auto tag_) {
    using T = typename decltype(tag_)::type;
    const double lower = b.lower(), k = static_cast<double>(b.bins());
    for (std::uint64_t i = 0; i < n; ++i) {
      T x;
      std::memcpy(&x, bytes.data() + i * sizeof(T), sizeof(T));
      const double v = static_cast<double>(x);
      if (std::isnan(v)) ++expected[b.bins() + 2];
      else if (v < lower) ++expected[b.bins()];
      else if (v >= lower + k) ++expected[b.bins() + 1];
      else ++expected[static_cast<std::uint64_t>(std::floor(v - lower))];
    }
  });
  std::uint64_t in_range = 0;
  for (std::uint64_t i = 0; i < b.bins(); ++i) in_range += expected[i];
  ASSERT_GT(in_range, n / 4) << "the data should mostly fall into the bins";

  std::vector<std::uint64_t> slots(b.slots());
  for (unsigned threads : kThreadCounts) {
    fill_garbage(slots, threads);
    if (!run_cpu_strategy(*c.strategy, c.type, bytes.data(), n, b, slots, false, threads))
      GTEST_SKIP() << c.strategy->name << " does not support this problem";
    ASSERT_TRUE(slots_equal(expected, slots, b)) << c.strategy->name << ", threads " << threads;
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyOracle, ::testing::ValuesIn(type_cases()), type_case_name);

// ---------------------------------------------------------------------------
// Thread counts beyond 1..3: 0 (= all cores), more threads than cores, more
// threads than samples.

class StrategyThreads : public ::testing::TestWithParam<const Strategy*> {};

TEST_P(StrategyThreads, AnyThreadCount) {
  const Strategy& s = *GetParam();
  std::size_t runs = 0;
  for (SampleType type : {SampleType::u8, SampleType::i16, SampleType::f64}) {
    const Binning b = standard_binnings(type)[1].binning;
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{100},
                            std::uint64_t{65537}}) {
      const GenSpec g{type, Dist::on_edges, n, seed_for("threads/" + std::string(to_string(type)), n),
                      window_around(b, type), &b};
      const std::vector<unsigned char> bytes = generate(g);
      const SampleBuffer buf(bytes, 1);
      const std::vector<std::uint64_t> ref = reference_slots(type, buf.data(), n, b);
      for (unsigned threads : {0u, 4u, 7u, 16u, 64u}) {
        SCOPED_TRACE(describe(g) + ", threads " + std::to_string(threads) + ", " + b.describe());
        std::vector<std::uint64_t> slots(b.slots());
        fill_garbage(slots, threads);
        if (!run_cpu_strategy(s, type, buf.data(), n, b, slots, false, threads)) continue;
        ++runs;
        ASSERT_TRUE(slots_equal(ref, slots, b)) << s.name;
      }
    }
  }
  if (runs == 0) GTEST_SKIP() << s.name << " supports none of these problems";
}

INSTANTIATE_TEST_SUITE_P(Cpu, StrategyThreads, ::testing::ValuesIn(cpu_strategies()),
                         [](const auto& info) { return param_name(info.param->name); });

// The registry has at least the reference and one other CPU strategy, and
// the list this file iterates over is exactly the registry's CPU part.
TEST(CpuStrategies, RegistryListsCpuSerialAndOthers) {
  const auto cpu = cpu_strategies();
  ASSERT_FALSE(cpu.empty());
  EXPECT_NE(std::find(cpu.begin(), cpu.end(), &strategies::cpu_serial), cpu.end());
  EXPECT_NE(std::find(cpu.begin(), cpu.end(), &strategies::cpu_parallel), cpu.end());
  std::size_t cpu_in_registry = 0;
  for (const Strategy* s : all_strategies()) cpu_in_registry += s->backend == Backend::cpu;
  EXPECT_EQ(cpu.size(), cpu_in_registry);
}

}  // namespace
}  // namespace levelhist::test
