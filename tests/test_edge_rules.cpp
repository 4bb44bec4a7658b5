// The edge rules of include/levelhist/binning.hpp, with the expected slot of
// every sample WRITTEN OUT BY HAND (not computed by the code under test):
//  * bins are [e_i, e_{i+1}): a sample on an edge lands in the bin above it;
//    on lower -> bin 0; on upper -> overflow, or the last bin with numpy's
//    last_bin_inclusive;
//  * even edges are e_i = lower + i * ((upper - lower) / k) in double, two
//    roundings, e_k = upper; "rounding included": a sample is compared with
//    that rounded edge, not with the exact real number;
//  * -inf / below lower -> underflow, +inf / at or above upper -> overflow,
//    NaN -> the nan slot.
// Where literal edge values were needed they were checked with an
// independent IEEE-754 calculation (Python floats / struct) when the test was
// written. Only the sweeps at the end (hundreds of edges) compute edges, from
// the definition above, in the test itself.
//
// Every test runs through EVERY CPU strategy of the registry (the test
// parameter), since fast paths may treat edges differently: each sample alone
// (n = 1), and all samples together with distinct multiplicities, shuffled,
// more than 2^17 of them, from an unaligned start, with threads 1, 2 and 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace levelhist::test {
namespace {

// Symbolic slots, resolved against the binning: underflow, overflow, NaN.
constexpr std::uint64_t U = ~std::uint64_t{0};
constexpr std::uint64_t O = ~std::uint64_t{0} - 1;
constexpr std::uint64_t N = ~std::uint64_t{0} - 2;

template <class T>
struct Expect {
  T x;
  std::uint64_t slot;  // a bin number, or U / O / N
};

template <class T> T below(T x) { return std::nextafter(x, -std::numeric_limits<T>::infinity()); }
template <class T> T above(T x) { return std::nextafter(x, std::numeric_limits<T>::infinity()); }
template <class T> constexpr T inf() { return std::numeric_limits<T>::infinity(); }
template <class T> constexpr T nan() { return std::numeric_limits<T>::quiet_NaN(); }

std::uint64_t resolve(const Binning& b, std::uint64_t slot) {
  if (slot == U) return b.underflow_slot();
  if (slot == O) return b.overflow_slot();
  if (slot == N) return b.nan_slot();
  return slot;
}

template <class T>
std::string show(T x) {
  char buf[96];
  if constexpr (std::is_floating_point_v<T>)
    std::snprintf(buf, sizeof buf, "%.17g (%a)", static_cast<double>(x), static_cast<double>(x));
  else if constexpr (std::is_signed_v<T>)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
  else
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(x));
  return buf;
}

class EdgeRules : public ::testing::TestWithParam<const Strategy*> {
 protected:
  const Strategy& strategy() const { return *GetParam(); }

  // Checks every case through the strategy under test; see the file comment.
  template <class T>
  void check(const Binning& b, const std::vector<Expect<T>>& cases) {
    const SampleType type = sample_type_of<T>();
    SCOPED_TRACE(std::string(strategy().name) + ", " + std::string(to_string(type)) + " samples, " + b.describe());
    std::string why;
    if (!strategy_accepts(strategy(), Problem{type, &b, 1}, &why) ||
        !strategy_accepts(strategy(), Problem{type, &b, std::uint64_t{1} << 20}, &why))
      GTEST_SKIP() << strategy().name << " does not support this problem: " << why;
    ASSERT_FALSE(cases.empty());
    for (const auto& c : cases) ASSERT_LT(resolve(b, c.slot), b.slots()) << "bad test case for " << show(c.x);

    // 1. Each sample alone (skipped for huge sweeps: the bulk run covers them).
    std::vector<std::uint64_t> slots(b.slots());
    if (cases.size() <= 512 && b.bins() <= 65536) {
      int failures = 0;
      for (const auto& c : cases) {
        std::fill(slots.begin(), slots.end(), 7);  // garbage: accumulate=false must clear it
        ASSERT_TRUE(run_cpu_strategy(strategy(), type, &c.x, 1, b, slots, false, 1));
        const std::uint64_t want = resolve(b, c.slot);
        std::uint64_t got = b.slots();
        for (std::uint64_t s = 0; s < slots.size(); ++s)
          if (slots[s] != 0) got = s;
        const bool ok = slots[want] == 1 && std::count(slots.begin(), slots.end(), 0) == std::ptrdiff_t(slots.size() - 1);
        if (ok) continue;
        ADD_FAILURE() << "sample " << show(c.x) << ": expected " << slot_name(b, want) << ", got "
                      << (got < b.slots() ? slot_name(b, got) : std::string("no slot"));
        if (++failures >= 12) FAIL() << "(more mismatches not shown)";
      }
    }

    // 2. All samples together: case i repeated w_i * r times, with distinct
    //    small weights so that two samples swapping bins changes the counts.
    const bool small = cases.size() <= 64;
    std::vector<std::uint64_t> weight(cases.size());
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) sum += weight[i] = small ? i + 1 : 1 + i % 5;
    const std::uint64_t r = std::max<std::uint64_t>(1, ((std::uint64_t{1} << 17) + sum - 1) / sum);
    std::vector<T> data;
    std::vector<std::uint64_t> expected(b.slots(), 0);
    data.reserve(sum * r);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      data.insert(data.end(), weight[i] * r, cases[i].x);
      expected[resolve(b, cases[i].slot)] += weight[i] * r;
    }
    std::shuffle(data.begin(), data.end(), std::mt19937_64(seed_for("edge-bulk")));
    const SampleBuffer buf(data.data(), data.size() * sizeof(T), 3);
    for (unsigned threads : {1u, 2u, 3u}) {
      std::fill(slots.begin(), slots.end(), 0xBADull);
      run_cpu_strategy(strategy(), type, buf.data(), data.size(), b, slots, false, threads);
      ASSERT_TRUE(slots_equal(expected, slots, b))
          << "all " << cases.size() << " samples together, case i repeated " << r << " * "
          << (small ? "(i + 1)" : "(1 + i % 5)") << " times, shuffled, threads " << threads;
    }
  }
};

// ---------------------------------------------------------------------------
// Even bins with exactly representable edges.

TEST_P(EdgeRules, EvenExactEdgesF64) {
  // Edges 0, 2, 4, 6, 8.
  check<double>(Binning::even(4, 0.0, 8.0),
                {{0.0, 0},         {2.0, 1},         {4.0, 2},         {6.0, 3},         {8.0, O},
                 {-0.0, 0},        {1.0, 0},         {3.0, 1},         {7.5, 3},         {-1.0, U},
                 {below(0.0), U},  {above(0.0), 0},  {below(2.0), 0},  {above(2.0), 1},  {below(4.0), 1},
                 {above(4.0), 2},  {below(6.0), 2},  {above(6.0), 3},  {below(8.0), 3},  {above(8.0), O},
                 {-inf<double>(), U}, {inf<double>(), O}, {nan<double>(), N}, {1e300, O}, {-1e300, U},
                 {std::numeric_limits<double>::denorm_min(), 0}});
}

TEST_P(EdgeRules, EvenExactEdgesInclusiveF64) {
  // numpy: the last bin is [6, 8]; only exactly 8 moves, everything above still overflows.
  check<double>(Binning::even(4, 0.0, 8.0, true),
                {{0.0, 0}, {2.0, 1}, {4.0, 2}, {6.0, 3}, {8.0, 3}, {below(8.0), 3}, {above(8.0), O},
                 {below(0.0), U}, {inf<double>(), O}, {-inf<double>(), U}, {nan<double>(), N}});
}

TEST_P(EdgeRules, EvenExactEdgesF32) {
  check<float>(Binning::even(4, 0.0, 8.0),
               {{0.0f, 0},         {2.0f, 1},         {4.0f, 2},         {6.0f, 3},         {8.0f, O},
                {-0.0f, 0},        {below(0.0f), U},  {above(0.0f), 0},  {below(2.0f), 0},  {above(2.0f), 1},
                {below(4.0f), 1},  {above(4.0f), 2},  {below(6.0f), 2},  {above(6.0f), 3},  {below(8.0f), 3},
                {above(8.0f), O},  {-inf<float>(), U}, {inf<float>(), O}, {nan<float>(), N},
                {std::numeric_limits<float>::max(), O}, {std::numeric_limits<float>::lowest(), U}});
}

TEST_P(EdgeRules, EvenExactEdgesInclusiveF32) {
  check<float>(Binning::even(4, 0.0, 8.0, true),
               {{8.0f, 3}, {below(8.0f), 3}, {above(8.0f), O}, {6.0f, 3}, {0.0f, 0}, {inf<float>(), O}});
}

// ---------------------------------------------------------------------------
// 10 bins over [0, 1): step 0.1 (rounded), e_i = i * 0.1 in double:
// 0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
// 0.7000000000000001, 0.8, 0.9, and e_10 = 1. So the double 0.3 lies BELOW
// e_3 and belongs to bin 2 (as in numpy.histogram).

TEST_P(EdgeRules, TenBinsOverUnitRangeF64) {
  const double e[] = {0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001,
                      0.8, 0.9, 1.0};
  std::vector<Expect<double>> cases = {
      // the decimal literals that are not edges
      {0.3, 2}, {0.6, 5}, {0.7, 6},
      // the edges and their neighbours, written out
      {0.0, 0}, {below(0.0), U}, {above(0.0), 0},
      {0.1, 1}, {0.09999999999999999, 0}, {0.10000000000000002, 1},
      {0.2, 2}, {0.19999999999999998, 1}, {0.20000000000000004, 2},
      {0.30000000000000004, 3}, {0.3000000000000001, 3},
      {0.4, 4}, {0.39999999999999997, 3}, {0.4000000000000001, 4},
      {0.5, 5}, {0.49999999999999994, 4}, {0.5000000000000001, 5},
      {0.6000000000000001, 6}, {0.6000000000000002, 6},
      {0.7000000000000001, 7}, {0.7000000000000002, 7},
      {0.8, 8}, {0.7999999999999999, 7}, {0.8000000000000002, 8},
      {0.9, 9}, {0.8999999999999999, 8}, {0.9000000000000001, 9},
      {1.0, O}, {0.9999999999999999, 9}, {1.0000000000000002, O},
      {nan<double>(), N}, {-inf<double>(), U}, {inf<double>(), O}};
  // The same edges through nextafter: below e_i -> bin i-1, on or just above e_i -> bin i.
  for (std::uint64_t i = 1; i < 10; ++i) {
    cases.push_back({below(e[i]), i - 1});
    cases.push_back({e[i], i});
    cases.push_back({above(e[i]), i});
  }
  check<double>(Binning::even(10, 0.0, 1.0), cases);
}

TEST_P(EdgeRules, TenBinsOverUnitRangeInclusiveF64) {
  check<double>(Binning::even(10, 0.0, 1.0, true),
                {{1.0, 9}, {0.9999999999999999, 9}, {1.0000000000000002, O}, {0.9, 9}, {0.8999999999999999, 8},
                 {0.3, 2}, {0.30000000000000004, 3}, {0.0, 0}, {inf<double>(), O}});
}

TEST_P(EdgeRules, TenBinsOverUnitRangeF32) {
  // float(e_i) is above e_i except for 0.7f (0.699999988079071 < 0.7000000000000001)
  // and 0.9f (0.8999999761581421 < 0.9), which fall one bin lower.
  check<float>(Binning::even(10, 0.0, 1.0),
               {{0.0f, 0},         {below(0.0f), U},  {-0.0f, 0},        {above(0.0f), 0},
                {0.1f, 1},         {below(0.1f), 0},  {above(0.1f), 1},
                {0.2f, 2},         {below(0.2f), 1},  {above(0.2f), 2},
                {0.3f, 3},         {below(0.3f), 2},  {above(0.3f), 3},
                {0.4f, 4},         {below(0.4f), 3},  {above(0.4f), 4},
                {0.5f, 5},         {below(0.5f), 4},  {above(0.5f), 5},
                {0.6f, 6},         {below(0.6f), 5},  {above(0.6f), 6},
                {0.7f, 6},         {below(0.7f), 6},  {above(0.7f), 7},
                {0.8f, 8},         {below(0.8f), 7},  {above(0.8f), 8},
                {0.9f, 8},         {below(0.9f), 8},  {above(0.9f), 9},
                {1.0f, O},         {below(1.0f), 9},  {above(1.0f), O},
                {nan<float>(), N}, {-inf<float>(), U}, {inf<float>(), O}});
}

TEST_P(EdgeRules, TenBinsOverUnitRangeInclusiveF32) {
  check<float>(Binning::even(10, 0.0, 1.0, true),
               {{1.0f, 9}, {below(1.0f), 9}, {above(1.0f), O}, {0.9f, 8}, {above(0.9f), 9}, {inf<float>(), O}});
}

// ---------------------------------------------------------------------------
// The same 10 bins with float32 edges (EdgeRounding::f32, numpy.histogram's
// edges for float32 samples: np.linspace(0, 1, 11).astype(np.float32)). Every
// float32 edge is float(e_i), so every float sample equal to one lands in the
// bin above it: 0.7f and 0.9f now start bins 7 and 9 (numpy puts
// np.float32(0.7) in bin 7), unlike the double edges above.

TEST_P(EdgeRules, TenBinsOverUnitRangeFloat32EdgesF32) {
  check<float>(Binning::even(10, 0.0, 1.0, true, EdgeRounding::f32),
               {{0.0f, 0},         {below(0.0f), U},  {-0.0f, 0},        {above(0.0f), 0},
                {0.1f, 1},         {below(0.1f), 0},  {above(0.1f), 1},
                {0.2f, 2},         {below(0.2f), 1},  {above(0.2f), 2},
                {0.3f, 3},         {below(0.3f), 2},  {above(0.3f), 3},
                {0.4f, 4},         {below(0.4f), 3},  {above(0.4f), 4},
                {0.5f, 5},         {below(0.5f), 4},  {above(0.5f), 5},
                {0.6f, 6},         {below(0.6f), 5},  {above(0.6f), 6},
                {0.7f, 7},         {below(0.7f), 6},  {above(0.7f), 7},
                {0.8f, 8},         {below(0.8f), 7},  {above(0.8f), 8},
                {0.9f, 9},         {below(0.9f), 8},  {above(0.9f), 9},
                {1.0f, 9},         {below(1.0f), 9},  {above(1.0f), O},
                {nan<float>(), N}, {-inf<float>(), U}, {inf<float>(), O}});
}

TEST_P(EdgeRules, TenBinsOverUnitRangeFloat32EdgesF64) {
  // Doubles meet the float32 edges too: 0.699999988079071 (= 0.7f) is on e_7,
  // the double 0.7 above it (bin 7 either way), the double below 0.7f in bin 6.
  check<double>(Binning::even(10, 0.0, 1.0, true, EdgeRounding::f32),
                {{0.699999988079071, 7}, {0.69999998807907093, 6}, {0.7, 7}, {0.8999999761581421, 9},
                 {0.89999997615814198, 8}, {0.9, 9}, {0.10000000149011612, 1}, {0.1, 0}, {1.0, 9},
                 {1.0000000000000002, O}, {0.0, 0}, {-1e-300, U}});
}

// 3 bins between the float32 samples 0.1f and 0.7f, with numpy's edges when the
// range comes from the samples (EdgeRounding::f32_arithmetic: np.histogram_bin_edges
// (np.float32([0.1, 0.7]), 3) computes in float32): 0.10000000149011612,
// 0.29999998211860657, 0.4999999701976776, 0.699999988079071. The double
// arithmetic would give 0.3f and 0.5f, each one float above these.
TEST_P(EdgeRules, ThreeBinsEdgesComputedInFloat32) {
  const float e1 = 0.29999998211860657f, e2 = 0.4999999701976776f;
  check<float>(Binning::even(3, 0.10000000149011612, 0.699999988079071, true, EdgeRounding::f32_arithmetic),
               {{0.1f, 0}, {below(0.1f), U}, {e1, 1}, {below(e1), 0}, {0.3f, 1}, {e2, 2}, {below(e2), 1},
                {0.5f, 2}, {0.7f, 2}, {below(0.7f), 2}, {above(0.7f), O}, {nan<float>(), N}});
}

// ---------------------------------------------------------------------------
// 3 bins over [0.1, 0.7): step = 0.6 / 3 = 0.19999999999999998, e_1 = 0.1 + step
// = 0.3 (the double nearest 0.3), e_2 = 0.1 + 2 * step = 0.5 exactly, e_3 = 0.7.

TEST_P(EdgeRules, ThreeBinsPointOneToPointSevenF64) {
  check<double>(Binning::even(3, 0.1, 0.7),
                {{0.1, 0},  {0.09999999999999999, U}, {0.10000000000000002, 0},
                 {0.3, 1},  {0.29999999999999993, 0}, {0.30000000000000004, 1},
                 {0.5, 2},  {0.49999999999999994, 1}, {0.5000000000000001, 2},
                 {0.7, O},  {0.6999999999999998, 2},  {0.7000000000000001, O},
                 {0.2, 0},  {0.4, 1}, {0.6, 2}, {0.0, U}, {1.0, O}, {nan<double>(), N}});
}

TEST_P(EdgeRules, ThreeBinsPointOneToPointSevenF32) {
  // 0.1f = 0.10000000149 >= 0.1; 0.3f = 0.30000001192 >= 0.3; 0.7f = 0.69999998808 < 0.7.
  check<float>(Binning::even(3, 0.1, 0.7),
               {{0.1f, 0}, {below(0.1f), U}, {above(0.1f), 0},
                {0.3f, 1}, {below(0.3f), 0}, {above(0.3f), 1},
                {0.5f, 2}, {below(0.5f), 1}, {above(0.5f), 2},
                {0.7f, 2}, {below(0.7f), 2}, {above(0.7f), O}});
}

TEST_P(EdgeRules, ThreeBinsPointOneToPointSevenInclusiveF32) {
  // 0.7f is below the double upper edge, so it is simply in bin 2; the next float is above
  // upper (not equal to it), so it overflows even with numpy's rule.
  check<float>(Binning::even(3, 0.1, 0.7, true), {{0.7f, 2}, {above(0.7f), O}, {0.5f, 2}});
}

// ---------------------------------------------------------------------------
// [-1e9, 1e9): 3 bins (step 666666666.6666666, e_1 = -333333333.3333334,
// e_2 = 333333333.33333325 -- note the asymmetry) and 7 bins
// (step 285714285.71428573; e_3 = -142857142.8571428 but e_4 = 142857142.85714293).

TEST_P(EdgeRules, PlusMinusOneBillionThreeBinsF64) {
  check<double>(Binning::even(3, -1e9, 1e9),
                {{-1e9, 0},                 {-1000000000.0000001, U},  {-999999999.9999999, 0},
                 {-333333333.3333334, 1},   {-333333333.33333343, 0},  {-333333333.3333333, 1},
                 {333333333.33333325, 2},   {333333333.3333332, 1},    {333333333.3333333, 2},
                 {1e9, O},                  {999999999.9999999, 2},    {1000000000.0000001, O},
                 {0.0, 1}, {-333333333.0, 1}, {-333333334.0, 0}, {333333333.0, 1}, {333333334.0, 2}});
}

TEST_P(EdgeRules, PlusMinusOneBillionThreeBinsF32) {
  // Floats near 3.3e8 are 32 apart: float(e_1) = -333333344 < e_1, float(e_2) = 333333344 > e_2.
  check<float>(Binning::even(3, -1e9, 1e9),
               {{-1e9f, 0},         {below(-1e9f), U},  {above(-1e9f), 0},
                {-333333344.0f, 0}, {-333333312.0f, 1}, {-333333376.0f, 0},
                {333333312.0f, 1},  {333333344.0f, 2},  {333333376.0f, 2},
                {1e9f, O},          {below(1e9f), 2},   {0.0f, 1}});
}

TEST_P(EdgeRules, PlusMinusOneBillionThreeBinsI32) {
  check<std::int32_t>(Binning::even(3, -1e9, 1e9),
                      {{-1000000000, 0}, {-1000000001, U}, {-333333334, 0}, {-333333333, 1}, {333333333, 1},
                       {333333334, 2},   {999999999, 2},   {1000000000, O}, {INT32_MIN, U},  {INT32_MAX, O},
                       {0, 1}});
}

TEST_P(EdgeRules, PlusMinusOneBillionSevenBinsF64) {
  check<double>(Binning::even(7, -1e9, 1e9),
                {{-714285714.2857143, 1},  {-714285714.2857144, 0},  {-714285714.2857141, 1},
                 {-428571428.57142854, 2}, {-428571428.5714286, 1},  {-428571428.5714285, 2},
                 {-142857142.8571428, 3},  {-142857142.85714284, 2}, {-142857142.85714278, 3},
                 {142857142.85714293, 4},  {142857142.8571429, 3},   {142857142.85714296, 4},
                 {428571428.5714288, 5},   {428571428.5714287, 4},   {428571428.57142884, 5},
                 {714285714.2857144, 6},   {714285714.2857143, 5},   {714285714.2857145, 6},
                 {-1e9, 0}, {1e9, O}, {999999999.9999999, 6}, {0.0, 3}});
}

TEST_P(EdgeRules, PlusMinusOneBillionSevenBinsF32) {
  // Floats near the edges are 32 or 64 apart; float(e_i) and its neighbours:
  check<float>(Binning::even(7, -1e9, 1e9),
               {{-714285760.0f, 0}, {-714285696.0f, 1}, {-714285632.0f, 1},
                {-428571456.0f, 1}, {-428571424.0f, 2}, {-428571392.0f, 2},
                {-142857152.0f, 2}, {-142857136.0f, 3}, {-142857120.0f, 3},
                {142857120.0f, 3},  {142857136.0f, 3},  {142857152.0f, 4},
                {428571392.0f, 4},  {428571424.0f, 4},  {428571456.0f, 5},
                {714285632.0f, 5},  {714285696.0f, 5},  {714285760.0f, 6}});
}

TEST_P(EdgeRules, PlusMinusOneBillionSevenBinsI32) {
  check<std::int32_t>(Binning::even(7, -1e9, 1e9),
                      {{-714285715, 0}, {-714285714, 1}, {-428571429, 1}, {-428571428, 2},
                       {-142857143, 2}, {-142857142, 3}, {142857142, 3},  {142857143, 4},
                       {428571428, 4},  {428571429, 5},  {714285714, 5},  {714285715, 6}});
}

// ---------------------------------------------------------------------------
// Infinities, NaNs and extreme floats, in even and explicit bins.

TEST_P(EdgeRules, InfinitiesAndNaNF64) {
  using L = std::numeric_limits<double>;
  const std::vector<Expect<double>> cases = {
      {-inf<double>(), U}, {inf<double>(), O}, {L::quiet_NaN(), N}, {-L::quiet_NaN(), N}, {L::signaling_NaN(), N},
      {std::bit_cast<double>(std::uint64_t{0x7ff0000000000001}), N},  // NaN, lowest payload
      {std::bit_cast<double>(std::uint64_t{0xfff8dead0000beef}), N},  // negative NaN with a payload
      {L::max(), O}, {L::lowest(), U}, {L::denorm_min(), 1}, {-L::denorm_min(), 0}, {0.0, 1}, {-0.0, 1},
      {L::min(), 1}, {-L::min(), 0}};
  check<double>(Binning::even(2, -1.0, 1.0), cases);
  check<double>(Binning::even(2, -1.0, 1.0, true), cases);  // inf still overflows with numpy's rule
  check<double>(Binning::explicit_edges({-1.0, 0.0, 1.0}), cases);
  check<double>(Binning::explicit_edges({-1.0, 0.0, 1.0}, true), cases);
}

TEST_P(EdgeRules, InfinitiesAndNaNF32) {
  using L = std::numeric_limits<float>;
  const std::vector<Expect<float>> cases = {
      {-inf<float>(), U}, {inf<float>(), O}, {L::quiet_NaN(), N}, {-L::quiet_NaN(), N}, {L::signaling_NaN(), N},
      {std::bit_cast<float>(std::uint32_t{0x7f800001}), N}, {std::bit_cast<float>(std::uint32_t{0xffc0beef}), N},
      {L::max(), O}, {L::lowest(), U}, {L::denorm_min(), 1}, {-L::denorm_min(), 0}, {0.0f, 1}, {-0.0f, 1}};
  check<float>(Binning::even(2, -1.0, 1.0), cases);
  check<float>(Binning::even(2, -1.0, 1.0, true), cases);
  check<float>(Binning::explicit_edges({-1.0, 0.0, 1.0}), cases);
  check<float>(Binning::explicit_edges({-1.0, 0.0, 1.0}, true), cases);
}

// ---------------------------------------------------------------------------
// Integer extremes.

TEST_P(EdgeRules, PerValueU8) {
  check<std::uint8_t>(Binning::per_value(SampleType::u8), {{0, 0}, {1, 1}, {127, 127}, {128, 128}, {254, 254}, {255, 255}});
}
TEST_P(EdgeRules, PerValueI8) {
  check<std::int8_t>(Binning::per_value(SampleType::i8),
                     {{-128, 0}, {-127, 1}, {-1, 127}, {0, 128}, {1, 129}, {126, 254}, {127, 255}});
}
TEST_P(EdgeRules, PerValueU16) {
  check<std::uint16_t>(Binning::per_value(SampleType::u16),
                       {{0, 0}, {1, 1}, {255, 255}, {256, 256}, {32768, 32768}, {65534, 65534}, {65535, 65535}});
}
TEST_P(EdgeRules, PerValueI16) {
  check<std::int16_t>(Binning::per_value(SampleType::i16),
                      {{-32768, 0}, {-32767, 1}, {-1, 32767}, {0, 32768}, {1, 32769}, {32767, 65535}});
}

TEST_P(EdgeRules, EvenBinsU8) {
  // Edges 10, 70, 130, 190, 250.
  check<std::uint8_t>(Binning::even(4, 10.0, 250.0),
                      {{0, U}, {9, U}, {10, 0}, {69, 0}, {70, 1}, {129, 1}, {130, 2}, {189, 2}, {190, 3},
                       {249, 3}, {250, O}, {255, O}});
  // Bounds between integers: [-0.5, 255.5) in 2 bins, edge 127.5.
  check<std::uint8_t>(Binning::even(2, -0.5, 255.5), {{0, 0}, {127, 0}, {128, 1}, {255, 1}});
  // [0, 255] with numpy's rule: 255 is in the last bin; edges 0, 51, 102, 153, 204, 255.
  check<std::uint8_t>(Binning::even(5, 0.0, 255.0, true),
                      {{0, 0}, {50, 0}, {51, 1}, {203, 3}, {204, 4}, {254, 4}, {255, 4}});
  check<std::uint8_t>(Binning::even(5, 0.0, 255.0), {{254, 4}, {255, O}});
}

TEST_P(EdgeRules, EvenBinsI8) {
  // Edges -0.5, 0, 0.5: 0 is on the middle edge.
  check<std::int8_t>(Binning::even(2, -0.5, 0.5), {{-128, U}, {-1, U}, {0, 1}, {1, O}, {127, O}});
  // Edges -128, -64, 0, 64, 128.
  check<std::int8_t>(Binning::even(4, -128.0, 128.0),
                     {{-128, 0}, {-65, 0}, {-64, 1}, {-1, 1}, {0, 2}, {63, 2}, {64, 3}, {127, 3}});
}

TEST_P(EdgeRules, EvenBinsU16AndI16) {
  // Edges 0, 16384, 32768, 49152, 65536.
  check<std::uint16_t>(Binning::even(4, 0.0, 65536.0),
                       {{0, 0}, {16383, 0}, {16384, 1}, {32767, 1}, {32768, 2}, {49151, 2}, {49152, 3}, {65535, 3}});
  check<std::uint16_t>(Binning::even(1, 0.0, 65535.0), {{0, 0}, {65534, 0}, {65535, O}});
  check<std::uint16_t>(Binning::even(1, 0.0, 65535.0, true), {{65535, 0}});
  // Edges -1000, -500, 0, 500, 1000.
  check<std::int16_t>(Binning::even(4, -1000.0, 1000.0),
                      {{-32768, U}, {-1001, U}, {-1000, 0}, {-501, 0}, {-500, 1}, {-1, 1}, {0, 2}, {499, 2},
                       {500, 3}, {999, 3}, {1000, O}, {32767, O}});
}

TEST_P(EdgeRules, EvenBinsI32) {
  // Edges -2^31, -2^30, 0, 2^30, 2^31 (step 2^30, exact).
  check<std::int32_t>(Binning::even(4, -2147483648.0, 2147483648.0),
                      {{INT32_MIN, 0}, {-1073741825, 0}, {-1073741824, 1}, {-1, 1}, {0, 2}, {1073741823, 2},
                       {1073741824, 3}, {INT32_MAX, 3}});
  // Upper bound INT32_MAX itself: it overflows, or is in the last bin with numpy's rule.
  check<std::int32_t>(Binning::even(1, -2147483648.0, 2147483647.0), {{INT32_MIN, 0}, {INT32_MAX - 1, 0}, {INT32_MAX, O}});
  check<std::int32_t>(Binning::even(1, -2147483648.0, 2147483647.0, true), {{INT32_MAX, 0}});
  // A narrow range: the extremes are far outside.
  check<std::int32_t>(Binning::even(10, -5.0, 5.0),
                      {{INT32_MIN, U}, {-6, U}, {-5, 0}, {0, 5}, {4, 9}, {5, O}, {INT32_MAX, O}});
}

TEST_P(EdgeRules, EvenBinsU32) {
  // Edges 0, 2^31, 2^32.
  check<std::uint32_t>(Binning::even(2, 0.0, 4294967296.0),
                       {{0, 0}, {2147483647u, 0}, {2147483648u, 1}, {UINT32_MAX, 1}});
  // [0, 4294967295] in 3 bins: step 1431655765 exactly; edges 0, 1431655765, 2863311530, 4294967295.
  check<std::uint32_t>(Binning::even(3, 0.0, 4294967295.0, true),
                       {{0, 0}, {1431655764u, 0}, {1431655765u, 1}, {2863311529u, 1}, {2863311530u, 2},
                        {4294967294u, 2}, {UINT32_MAX, 2}});
  check<std::uint32_t>(Binning::even(3, 0.0, 4294967295.0), {{4294967294u, 2}, {UINT32_MAX, O}});
  check<std::uint32_t>(Binning::even(7, 100.0, 200.0), {{0, U}, {99, U}, {100, 0}, {199, 6}, {200, O}, {UINT32_MAX, O}});
}

// ---------------------------------------------------------------------------
// Unit-width integer bins (Binning::unit_integer_bins(), where a kernel may
// index by x - lower) with FLOAT samples: fractions, -0, tiny negatives
// (x - lower rounds up to an integer, but x is still below the edge), and
// values whose x - lower rounds up in float arithmetic.

TEST_P(EdgeRules, UnitIntegerBinsFloatSamplesF32) {
  check<float>(Binning::even(256, 0.0, 256.0),
               {{-1.0f, U}, {-0.5f, U}, {below(0.0f), U}, {-0.0f, 0}, {0.0f, 0},
                {std::numeric_limits<float>::denorm_min(), 0}, {0.5f, 0}, {below(1.0f), 0}, {1.0f, 1},
                {127.5f, 127}, {below(256.0f), 255}, {256.0f, O}, {256.5f, O}, {1e10f, O}, {-1e10f, U},
                {nan<float>(), N}, {inf<float>(), O}, {-inf<float>(), U}});
  // Negative lower: -0.5 is in bin 127 (not 128, as truncation toward zero would say);
  // the smallest negative float is below edge 128 = 0, although -1.4e-45 + 128 == 128;
  // below(1.0f) + 128 rounds to 129 in float, but the sample is in bin 128.
  check<float>(Binning::even(256, -128.0, 128.0),
               {{-128.5f, U}, {below(-128.0f), U}, {-128.0f, 0}, {-127.5f, 0}, {-0.5f, 127},
                {below(0.0f), 127}, {-0.0f, 128}, {0.0f, 128}, {0.5f, 128}, {below(1.0f), 128}, {1.0f, 129},
                {127.5f, 255}, {below(128.0f), 255}, {128.0f, O}});
  check<float>(Binning::even(100, 50.0, 150.0),
               {{below(50.0f), U}, {50.0f, 0}, {50.5f, 0}, {below(51.0f), 0}, {51.0f, 1}, {below(150.0f), 99},
                {150.0f, O}});
}

TEST_P(EdgeRules, UnitIntegerBinsFloatSamplesF64) {
  check<double>(Binning::even(256, -128.0, 128.0),
                {{-128.5, U}, {below(-128.0), U}, {-128.0, 0}, {-0.5, 127}, {-1e-300, 127}, {below(0.0), 127},
                 {-0.0, 128}, {0.0, 128}, {1e-300, 128}, {below(1.0), 128}, {1.0, 129}, {below(128.0), 255},
                 {128.0, O}, {nan<double>(), N}});
  check<double>(Binning::even(256, 0.0, 256.0),
                {{below(0.0), U}, {0.0, 0}, {0.9999999999999999, 0}, {255.99999999999997, 255}, {256.0, O}});
}

TEST_P(EdgeRules, UnitIntegerBinsIntegerSamples) {
  check<std::int32_t>(Binning::even(100, 50.0, 150.0),
                      {{INT32_MIN, U}, {49, U}, {50, 0}, {51, 1}, {149, 99}, {150, O}, {INT32_MAX, O}});
  check<std::uint32_t>(Binning::even(1000, 4294966295.0, 4294967295.0),
                       {{0, U}, {4294966294u, U}, {4294966295u, 0}, {4294967294u, 999}, {UINT32_MAX, O}});
  check<std::uint32_t>(Binning::even(1000, 4294966295.0, 4294967295.0, true), {{UINT32_MAX, 999}});
  check<std::int16_t>(Binning::even(16, -8.0, 8.0), {{-32768, U}, {-9, U}, {-8, 0}, {-1, 7}, {0, 8}, {7, 15}, {8, O}});
  check<std::uint8_t>(Binning::even(100, 50.0, 150.0), {{0, U}, {49, U}, {50, 0}, {149, 99}, {150, O}, {255, O}});
}

// Even edges collapse when lower is so large that lower + i is rounded:
// even(4, 2^53, 2^53 + 4) has step 1 and edges 2^53, 2^53 (2^53 + 1 rounds to
// even), 2^53 + 2, 2^53 + 4 (2^53 + 3 rounds to even), and e_4 = 2^53 + 4.
// A sample on a repeated edge lands in the highest bin starting there.
TEST_P(EdgeRules, CollapsedEvenEdgesF64) {
  const double p = 9007199254740992.0;  // 2^53
  check<double>(Binning::even(4, p, p + 4),
                {{p - 1, U}, {p, 1}, {p + 2, 2}, {p + 4, O}, {p + 6, O}});
  check<double>(Binning::even(4, p, p + 4, true), {{p, 1}, {p + 2, 2}, {p + 4, 3}});
}

// ---------------------------------------------------------------------------
// Explicit edges.

TEST_P(EdgeRules, ExplicitEdgesF64) {
  const Binning b = Binning::explicit_edges({-10.0, -1.0, 0.0, 0.5, 3.0, 1000.0});
  const std::vector<Expect<double>> common = {
      // on each edge
      {-10.0, 0}, {-1.0, 1}, {0.0, 2}, {-0.0, 2}, {0.5, 3}, {3.0, 4},
      // between
      {-5.0, 0}, {-0.5, 1}, {0.25, 2}, {1.0, 3}, {500.0, 4},
      // next to each edge
      {below(-10.0), U}, {above(-10.0), 0}, {below(-1.0), 0}, {above(-1.0), 1}, {below(0.0), 1},
      {above(0.0), 2}, {below(0.5), 2}, {above(0.5), 3}, {below(3.0), 3}, {above(3.0), 4}, {below(1000.0), 4},
      // below the first, above the last
      {-11.0, U}, {-1e300, U}, {-inf<double>(), U}, {above(1000.0), O}, {1e300, O}, {inf<double>(), O},
      {nan<double>(), N}};
  std::vector<Expect<double>> half_open = common, inclusive = common;
  half_open.push_back({1000.0, O});
  inclusive.push_back({1000.0, 4});
  check<double>(b, half_open);
  check<double>(Binning::explicit_edges({-10.0, -1.0, 0.0, 0.5, 3.0, 1000.0}, true), inclusive);
}

TEST_P(EdgeRules, ExplicitEdgesF32) {
  check<float>(Binning::explicit_edges({-10.0, -1.0, 0.0, 0.5, 3.0, 1000.0}),
               {{-10.0f, 0}, {-1.0f, 1}, {0.0f, 2}, {-0.0f, 2}, {0.5f, 3}, {3.0f, 4}, {1000.0f, O},
                {below(-10.0f), U}, {below(-1.0f), 0}, {below(0.0f), 1}, {below(0.5f), 2}, {below(3.0f), 3},
                {below(1000.0f), 4}, {above(1000.0f), O}, {nan<float>(), N}});
  check<float>(Binning::explicit_edges({-10.0, -1.0, 0.0, 0.5, 3.0, 1000.0}, true),
               {{1000.0f, 4}, {above(1000.0f), O}, {below(1000.0f), 4}});
  // Edges that floats cannot hold: 0.1f > 0.1, 0.2f > 0.2, 0.3f > 0.3 (so 0.3f overflows,
  // even with numpy's rule, which only takes x == upper).
  const std::vector<Expect<float>> inexact = {{0.1f, 0}, {below(0.1f), U}, {0.2f, 1}, {below(0.2f), 0},
                                              {0.3f, O}, {below(0.3f), 1}};
  check<float>(Binning::explicit_edges({0.1, 0.2, 0.3}), inexact);
  check<float>(Binning::explicit_edges({0.1, 0.2, 0.3}, true), inexact);
}

TEST_P(EdgeRules, ExplicitEdgesIntegers) {
  check<std::int16_t>(Binning::explicit_edges({-32768.0, -100.0, 0.0, 1.0, 2.0, 32767.0}),
                      {{-32768, 0}, {-101, 0}, {-100, 1}, {-1, 1}, {0, 2}, {1, 3}, {2, 4}, {32766, 4}, {32767, O}});
  check<std::int16_t>(Binning::explicit_edges({-32768.0, -100.0, 0.0, 1.0, 2.0, 32767.0}, true), {{32767, 4}});
  check<std::uint32_t>(Binning::explicit_edges({10.0, 1000.5, 4294967295.0}),
                       {{0, U}, {9, U}, {10, 0}, {1000, 0}, {1001, 1}, {4294967294u, 1}, {UINT32_MAX, O}});
  check<std::uint32_t>(Binning::explicit_edges({10.0, 1000.5, 4294967295.0}, true), {{UINT32_MAX, 1}});
  check<std::int32_t>(Binning::explicit_edges({-2147483648.0, -0.5, 0.5, 2147483647.5}),
                      {{INT32_MIN, 0}, {-1, 0}, {0, 1}, {1, 2}, {INT32_MAX, 2}});
  check<std::uint8_t>(Binning::explicit_edges({0.0, 1.0, 2.0, 100.0, 255.0}, true),
                      {{0, 0}, {1, 1}, {2, 2}, {99, 2}, {100, 3}, {254, 3}, {255, 3}});
  check<std::int8_t>(Binning::explicit_edges({-128.0, -127.5, 126.5, 127.0}),
                     {{-128, 0}, {-127, 1}, {126, 1}, {127, O}});
}

// ---------------------------------------------------------------------------
// Every value of the 8- and 16-bit types in its per-value bin: value v is in
// bin v - min (the definition of per-value bins).

template <class T>
std::vector<Expect<T>> every_value() {
  std::vector<Expect<T>> out;
  for (long v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v)
    out.push_back({static_cast<T>(v), static_cast<std::uint64_t>(v - std::numeric_limits<T>::min())});
  return out;
}

TEST_P(EdgeRules, PerValueEveryValue) {
  check<std::uint8_t>(Binning::per_value(SampleType::u8), every_value<std::uint8_t>());
  check<std::int8_t>(Binning::per_value(SampleType::i8), every_value<std::int8_t>());
  check<std::uint16_t>(Binning::per_value(SampleType::u16), every_value<std::uint16_t>());
  check<std::int16_t>(Binning::per_value(SampleType::i16), every_value<std::int16_t>());
}

// ---------------------------------------------------------------------------
// Sweeps over every edge of larger even binnings. Hundreds of edges cannot be
// written out, so here (and only here) the test computes the edges from the
// definition in binning.hpp, independently of the library:
// e_i = lower + i * ((upper - lower) / k), each operation rounded to double
// (this file is compiled with -ffp-contract=off, like the library), e_k = upper.

std::vector<double> edges_by_definition(std::uint64_t k, double lower, double upper) {
  std::vector<double> e(k + 1);
  const double step = (upper - lower) / static_cast<double>(k);
  for (std::uint64_t i = 0; i < k; ++i) e[i] = lower + static_cast<double>(i) * step;
  e[k] = upper;
  return e;
}

// The slot of x under strictly increasing edges e (half-open bins).
std::uint64_t slot_by_definition(const std::vector<double>& e, double x) {
  const std::uint64_t k = e.size() - 1;
  if (x < e[0]) return U;
  if (x >= e[k]) return O;
  return static_cast<std::uint64_t>(std::upper_bound(e.begin(), e.end(), x) - e.begin()) - 1;
}

struct Sweep {
  std::uint64_t k;
  double lower, upper;
};
constexpr Sweep kSweeps[] = {{1000, 0.0, 1.0}, {4096, 0.1, 0.7}, {999, -1.0, 1.0}, {7, -1e9, 1e9},
                             {65536, -3.5, 1000.25}, {20000, -1234.5, 6789.25}};

TEST_P(EdgeRules, EvenEdgeSweepF64) {
  for (const Sweep& s : kSweeps) {
    const std::vector<double> e = edges_by_definition(s.k, s.lower, s.upper);
    std::vector<Expect<double>> cases;
    for (std::uint64_t i = 0; i <= s.k; ++i) {
      ASSERT_TRUE(i == 0 || above(e[i - 1]) < e[i]) << "the sweep needs bins wider than one ulp";
      cases.push_back({below(e[i]), i == 0 ? U : i - 1});
      cases.push_back({e[i], i == s.k ? O : i});
      cases.push_back({above(e[i]), i == s.k ? O : i});
    }
    check<double>(Binning::even(s.k, s.lower, s.upper), cases);
    if (HasFatalFailure() || IsSkipped()) return;
  }
}

TEST_P(EdgeRules, EvenEdgeSweepF32) {
  for (const Sweep& s : kSweeps) {
    const std::vector<double> e = edges_by_definition(s.k, s.lower, s.upper);
    std::vector<Expect<float>> cases;
    for (std::uint64_t i = 0; i <= s.k; ++i) {
      const float f = static_cast<float>(e[i]);
      for (float x : {below(f), f, above(f)}) cases.push_back({x, slot_by_definition(e, x)});
    }
    check<float>(Binning::even(s.k, s.lower, s.upper), cases);
    if (HasFatalFailure() || IsSkipped()) return;
  }
}

// Float32 edges: the expected slots from the edges computed here by each
// definition (binning.hpp, EdgeRounding) and compared as floats.
TEST_P(EdgeRules, EvenEdgeSweepFloat32Edges) {
  for (const Sweep& s : kSweeps) {
    for (EdgeRounding rounding : {EdgeRounding::f32, EdgeRounding::f32_arithmetic}) {
      std::vector<double> e(s.k + 1);
      if (rounding == EdgeRounding::f32) {
        const std::vector<double> d = edges_by_definition(s.k, s.lower, s.upper);
        for (std::uint64_t i = 0; i <= s.k; ++i) e[i] = static_cast<float>(d[i]);
      } else {
        const float lo = static_cast<float>(s.lower), hi = static_cast<float>(s.upper);
        const float step = (hi - lo) / static_cast<float>(s.k);
        for (std::uint64_t i = 0; i < s.k; ++i) e[i] = static_cast<float>(static_cast<float>(i) * step) + lo;
        e[s.k] = hi;
      }
      std::vector<Expect<float>> cases;
      for (std::uint64_t i = 0; i <= s.k; ++i) {
        const float f = static_cast<float>(e[i]);
        for (float x : {below(f), f, above(f)}) cases.push_back({x, slot_by_definition(e, x)});
      }
      check<float>(Binning::even(s.k, s.lower, s.upper, false, rounding), cases);
      if (HasFatalFailure() || IsSkipped()) return;
    }
  }
}

TEST_P(EdgeRules, EvenEdgeSweepI32) {
  for (const Sweep& s : {Sweep{997, -1e9, 1e9}, Sweep{16384, -2147483648.0, 2147483647.0}, Sweep{3, -7.5, 7.5}}) {
    const std::vector<double> e = edges_by_definition(s.k, s.lower, s.upper);
    std::vector<Expect<std::int32_t>> cases;
    for (std::uint64_t i = 0; i <= s.k; ++i)
      for (double x : {std::floor(e[i]) - 1, std::floor(e[i]), std::ceil(e[i]), std::ceil(e[i]) + 1})
        if (x >= INT32_MIN && x <= INT32_MAX) cases.push_back({static_cast<std::int32_t>(x), slot_by_definition(e, x)});
    check<std::int32_t>(Binning::even(s.k, s.lower, s.upper), cases);
    if (HasFatalFailure() || IsSkipped()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, EdgeRules, ::testing::ValuesIn(cpu_strategies()),
                         [](const auto& info) { return param_name(info.param->name); });

}  // namespace
}  // namespace levelhist::test
