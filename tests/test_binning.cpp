// Binning: the factories accept valid axes and reject invalid ones with
// levelhist::Error of the documented kind; edge(i), unit_integer_bins(),
// slots and describe() give the values written out here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace levelhist {
namespace {

using test::throws_error;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMax = std::numeric_limits<double>::max();

// ---------------------------------------------------------------------------
// Binning::even

TEST(BinningEven, AcceptsValidAxes) {
  const Binning b = Binning::even(4, 0.0, 8.0);
  EXPECT_EQ(b.kind(), BinKind::even);
  EXPECT_EQ(b.bins(), 4u);
  EXPECT_EQ(b.lower(), 0.0);
  EXPECT_EQ(b.upper(), 8.0);
  EXPECT_FALSE(b.last_bin_inclusive());
  EXPECT_TRUE(b.edge_values().empty());
  EXPECT_EQ(b.slots(), 7u);
  EXPECT_EQ(b.underflow_slot(), 4u);
  EXPECT_EQ(b.overflow_slot(), 5u);
  EXPECT_EQ(b.nan_slot(), 6u);
  EXPECT_TRUE(Binning::even(4, 0.0, 8.0, true).last_bin_inclusive());

  EXPECT_NO_THROW(Binning::even(1, -1.0, 1.0));
  EXPECT_NO_THROW(Binning::even(kMaxBins, 0.0, 1.0));  // the largest allowed count
  EXPECT_EQ(Binning::even(kMaxBins, 0.0, 1.0).slots(), kMaxBins + 3);
  EXPECT_NO_THROW(Binning::even(3, -1e9, 1e9));
  EXPECT_NO_THROW(Binning::even(2, -kMax / 2, kMax / 2));  // wide, but the width is finite
  EXPECT_NO_THROW(Binning::even(1000, 1e-40, 1e-35));  // tiny, but bins / width is a double
  EXPECT_NO_THROW(Binning::even(kMaxBins, 0.0, 1e-290));
  EXPECT_NO_THROW(Binning::even(1, 0.0, 1e-300));
  EXPECT_NO_THROW(Binning::even(5, -3.25, -3.0));
}

TEST(BinningEven, RejectsBadBinCounts) {
  EXPECT_TRUE(throws_error([] { Binning::even(0, 0.0, 1.0); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(kMaxBins + 1, 0.0, 1.0); }, ErrorKind::input, std::to_string(kMaxBins)));
  EXPECT_TRUE(throws_error([] { Binning::even(~std::uint64_t{0}, 0.0, 1.0); }, ErrorKind::input));
}

TEST(BinningEven, RejectsBadRanges) {
  // reversed, equal (also -0 and +0, which are equal), NaN and infinite bounds
  EXPECT_TRUE(throws_error([] { Binning::even(10, 1.0, 0.0); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, 1.0, 1.0); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, -0.0, 0.0); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, kNaN, 1.0); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, 0.0, kNaN); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, kNaN, kNaN); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, -kInf, 1.0); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, 0.0, kInf); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, -kInf, kInf); }, ErrorKind::input));
  // finite bounds whose difference overflows double
  EXPECT_TRUE(throws_error([] { Binning::even(10, -kMax, kMax); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::even(10, -1e308, 1e308); }, ErrorKind::input));
}

// A range so narrow that bins / (upper - lower) overflows double: BinIndexer's
// first guess would be infinite, and slot() would walk down from the last bin
// one bin at a time (half a second per sample for 2^28 bins over [0, 1e-300)).
TEST(BinningEven, RejectsRangesTooNarrowForTheBinCount) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_TRUE(throws_error([] { Binning::even(kMaxBins, 0.0, 1e-300); }, ErrorKind::input, "narrow"));
  EXPECT_TRUE(throws_error([&] { Binning::even(2, 0.0, tiny); }, ErrorKind::input, "narrow"));
  EXPECT_TRUE(throws_error([&] { Binning::even(1, 0.0, tiny); }, ErrorKind::input, "narrow"));
  EXPECT_TRUE(throws_error([&] { Binning::even(256, -tiny, tiny); }, ErrorKind::input, "narrow"));
}

// ---------------------------------------------------------------------------
// Binning::explicit_edges

TEST(BinningExplicitEdges, AcceptsValidEdges) {
  const Binning b = Binning::explicit_edges({-10.0, -1.0, 0.0, 0.5, 3.0, 1000.0});
  EXPECT_EQ(b.kind(), BinKind::edges);
  EXPECT_EQ(b.bins(), 5u);
  EXPECT_EQ(b.lower(), -10.0);
  EXPECT_EQ(b.upper(), 1000.0);
  EXPECT_EQ(b.slots(), 8u);
  EXPECT_EQ(b.edge_values(), (std::vector<double>{-10.0, -1.0, 0.0, 0.5, 3.0, 1000.0}));
  EXPECT_FALSE(b.last_bin_inclusive());
  EXPECT_TRUE(Binning::explicit_edges({0.0, 1.0}, true).last_bin_inclusive());
  EXPECT_EQ(Binning::explicit_edges({0.0, 1.0}).bins(), 1u);
  EXPECT_NO_THROW(Binning::explicit_edges({-kMax, 0.0, kMax}));  // no width arithmetic for explicit edges
  EXPECT_NO_THROW(Binning::explicit_edges({0.0, std::numeric_limits<double>::denorm_min()}));
}

TEST(BinningExplicitEdges, RejectsBadEdges) {
  // fewer than two edges
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({1.0}); }, ErrorKind::input));
  // not strictly increasing: decreasing, equal, -0 == +0
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({0.0, 2.0, 1.0}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({1.0, 0.0}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({0.0, 1.0, 1.0, 2.0}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({5.0, 5.0}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({-0.0, 0.0}); }, ErrorKind::input));
  // NaN anywhere, infinite edges
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({kNaN, 1.0}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({0.0, kNaN, 1.0}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({0.0, 1.0, kNaN}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({-kInf, 0.0, 1.0}); }, ErrorKind::input));
  EXPECT_TRUE(throws_error([] { Binning::explicit_edges({0.0, 1.0, kInf}); }, ErrorKind::input));
  // (More than kMaxBins bins would need a 2 GiB edge vector: not tested.)
}

// ---------------------------------------------------------------------------
// per_value and default_for

TEST(BinningPerValue, EightAndSixteenBitTypes) {
  EXPECT_EQ(Binning::per_value(SampleType::u8), Binning::even(256, 0.0, 256.0));
  EXPECT_EQ(Binning::per_value(SampleType::i8), Binning::even(256, -128.0, 128.0));
  EXPECT_EQ(Binning::per_value(SampleType::u16), Binning::even(65536, 0.0, 65536.0));
  EXPECT_EQ(Binning::per_value(SampleType::i16), Binning::even(65536, -32768.0, 32768.0));
  for (SampleType t : {SampleType::u8, SampleType::i8, SampleType::u16, SampleType::i16}) {
    SCOPED_TRACE(std::string(to_string(t)));
    EXPECT_EQ(Binning::default_for(t), Binning::per_value(t));
    EXPECT_TRUE(Binning::per_value(t).unit_integer_bins());
    EXPECT_FALSE(Binning::per_value(t).last_bin_inclusive());
  }
}

TEST(BinningPerValue, WideTypesAreRejected) {
  for (SampleType t : {SampleType::i32, SampleType::u32, SampleType::f32, SampleType::f64}) {
    SCOPED_TRACE(std::string(to_string(t)));
    EXPECT_TRUE(throws_error([t] { Binning::per_value(t); }, ErrorKind::input, std::string(to_string(t))));
    EXPECT_TRUE(throws_error([t] { Binning::default_for(t); }, ErrorKind::usage, std::string(to_string(t))));
  }
}

// ---------------------------------------------------------------------------
// edge(i): exactly the edges of the rules in binning.hpp.

TEST(BinningEdge, EvenExact) {
  const Binning b = Binning::even(4, 0.0, 8.0);
  EXPECT_EQ(b.edge(0), 0.0);
  EXPECT_EQ(b.edge(1), 2.0);
  EXPECT_EQ(b.edge(2), 4.0);
  EXPECT_EQ(b.edge(3), 6.0);
  EXPECT_EQ(b.edge(4), 8.0);
}

TEST(BinningEdge, EvenRoundedTenBinsOverUnitRange) {
  // lower + i * 0.1, each rounded: numpy.linspace(0, 1, 11).
  const double expected[] = {0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
                             0.7000000000000001, 0.8, 0.9, 1.0};
  const Binning b = Binning::even(10, 0.0, 1.0);
  for (std::uint64_t i = 0; i <= 10; ++i) EXPECT_EQ(b.edge(i), expected[i]) << "edge " << i;
}

TEST(BinningEdge, EvenRoundedOtherRanges) {
  const Binning a = Binning::even(3, 0.1, 0.7);
  EXPECT_EQ(a.edge(0), 0.1);
  EXPECT_EQ(a.edge(1), 0.3);
  EXPECT_EQ(a.edge(2), 0.5);
  EXPECT_EQ(a.edge(3), 0.7);  // e_k is upper itself
  const Binning b = Binning::even(3, -1e9, 1e9);
  EXPECT_EQ(b.edge(1), -333333333.3333334);
  EXPECT_EQ(b.edge(2), 333333333.33333325);
  EXPECT_EQ(b.edge(3), 1e9);
  const Binning c = Binning::even(7, -1e9, 1e9);
  EXPECT_EQ(c.edge(3), -142857142.8571428);
  EXPECT_EQ(c.edge(4), 142857142.85714293);
  EXPECT_EQ(c.edge(7), 1e9);
  // Collapsing edges near 2^53 (see test_edge_rules.cpp, CollapsedEvenEdgesF64).
  const double p = 9007199254740992.0;
  const Binning d = Binning::even(4, p, p + 4);
  EXPECT_EQ(d.edge(0), p);
  EXPECT_EQ(d.edge(1), p);
  EXPECT_EQ(d.edge(2), p + 2);
  EXPECT_EQ(d.edge(3), p + 4);
  EXPECT_EQ(d.edge(4), p + 4);
}

// Float32 edges (EdgeRounding), with numpy's own values: np.linspace(0, 1,
// 11).astype(np.float32), and np.histogram_bin_edges(np.float32([0.1, 0.7]), 3).
TEST(BinningEdge, EvenRoundedToFloat32) {
  const double expected[] = {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896,
                             0.4000000059604645, 0.5, 0.6000000238418579, 0.699999988079071,
                             0.800000011920929, 0.8999999761581421, 1.0};
  const Binning b = Binning::even(10, 0.0, 1.0, true, EdgeRounding::f32);
  for (std::uint64_t i = 0; i <= 10; ++i) EXPECT_EQ(b.edge(i), expected[i]) << "edge " << i;
  EXPECT_EQ(b.rounding(), EdgeRounding::f32);
  const Binning c = Binning::even(3, 0.1, 0.7, false, EdgeRounding::f32);
  EXPECT_EQ(c.lower(), 0.10000000149011612);  // the first and last edge, rounded
  EXPECT_EQ(c.upper(), 0.699999988079071);
  EXPECT_EQ(c.edge(1), 0.30000001192092896);
  EXPECT_EQ(c.origin(), 0.1);  // the arithmetic still starts from the double bounds
  const Binning d = Binning::even(3, 0.10000000149011612, 0.699999988079071, true, EdgeRounding::f32_arithmetic);
  const double computed_in_float[] = {0.10000000149011612, 0.29999998211860657, 0.4999999701976776, 0.699999988079071};
  for (std::uint64_t i = 0; i <= 3; ++i) EXPECT_EQ(d.edge(i), computed_in_float[i]) << "edge " << i;
  // The bounds of f32_arithmetic are rounded to float32 first.
  EXPECT_EQ(Binning::even(3, 0.1, 0.7, true, EdgeRounding::f32_arithmetic), d);
  // The example of numpy's float32 rule: 0.7f is on e_7 of the float32 edges, below e_7 of the double ones.
  EXPECT_EQ(make_indexer(b).slot(static_cast<double>(0.7f)), 7u);
  EXPECT_EQ(make_indexer(Binning::even(10, 0.0, 1.0, true)).slot(static_cast<double>(0.7f)), 6u);
}

TEST(BinningEven, RejectsFloat32EdgesThatCollapseOrOverflow) {
  for (EdgeRounding r : {EdgeRounding::f32, EdgeRounding::f32_arithmetic}) {
    // A float32 ulp at 1000 is 6.1e-5: 1000 bins of 1e-6 cannot all have width.
    EXPECT_TRUE(throws_error([r] { Binning::even(1000, 1000.0, 1000.001, false, r); }, ErrorKind::input, "too many bins"));
    EXPECT_TRUE(throws_error([r] { Binning::even(2, 1.0, 1.00000001, false, r); }, ErrorKind::input, "too many bins"));
    EXPECT_TRUE(throws_error([r] { Binning::even(2, 0.0, 1e39, false, r); }, ErrorKind::input, "float32"));
    // Just wide enough: 8 bins over 8 float32 ulps of 1.
    EXPECT_NO_THROW(Binning::even(8, 1.0, 1.0 + 8 * 0x1p-23, false, r));
    EXPECT_NO_THROW(Binning::even(1u << 20, 0.0, 1.0, false, r));
  }
}

TEST(BinningEdge, ExplicitEdgesAreReturnedAsGiven) {
  const std::vector<double> e = {-10.0, -1.0, 0.0, 0.5, 3.0, 1000.0};
  const Binning b = Binning::explicit_edges(e, true);
  for (std::uint64_t i = 0; i < e.size(); ++i) EXPECT_EQ(b.edge(i), e[i]);
}

TEST(BinningEdge, PerValueEdgesAreTheIntegers) {
  const Binning b = Binning::per_value(SampleType::i8);
  EXPECT_EQ(b.edge(0), -128.0);
  EXPECT_EQ(b.edge(128), 0.0);
  EXPECT_EQ(b.edge(255), 127.0);
  EXPECT_EQ(b.edge(256), 128.0);
  const Binning c = Binning::per_value(SampleType::u16);
  EXPECT_EQ(c.edge(65535), 65535.0);
  EXPECT_EQ(c.edge(65536), 65536.0);
}

// ---------------------------------------------------------------------------
// unit_integer_bins(): true exactly when every bin holds exactly one integer
// value (per_value, or even bins of width 1 on integer bounds).

TEST(BinningUnitIntegerBins, Literal) {
  EXPECT_TRUE(Binning::even(256, 0.0, 256.0).unit_integer_bins());
  EXPECT_TRUE(Binning::even(256, -128.0, 128.0).unit_integer_bins());
  EXPECT_TRUE(Binning::even(10, 5.0, 15.0).unit_integer_bins());
  EXPECT_TRUE(Binning::even(10, -5.0, 5.0).unit_integer_bins());
  EXPECT_TRUE(Binning::even(1, 0.0, 1.0).unit_integer_bins());
  EXPECT_TRUE(Binning::even(1000, 4294966295.0, 4294967295.0).unit_integer_bins());
  EXPECT_TRUE(Binning::even(1000, -2147483648.0, -2147482648.0).unit_integer_bins());
  EXPECT_TRUE(Binning::even(10, 0.0, 10.0, true).unit_integer_bins());

  EXPECT_FALSE(Binning::even(10, 0.5, 10.5).unit_integer_bins());  // not on integers
  EXPECT_FALSE(Binning::even(5, 0.0, 10.0).unit_integer_bins());   // width 2
  EXPECT_FALSE(Binning::even(20, 0.0, 10.0).unit_integer_bins());  // width 1/2
  EXPECT_FALSE(Binning::even(256, 0.0, 255.0).unit_integer_bins());
  EXPECT_FALSE(Binning::explicit_edges({0.0, 1.0, 2.0, 3.0}).unit_integer_bins());  // explicit, even if unit
  EXPECT_FALSE(Binning::even(256, 0.0, 256.0, false, EdgeRounding::f32).unit_integer_bins());  // float32 edges
  // Beyond 2^53, lower + i is rounded: edges collapse, bins hold 0 or 2 integers.
  const double p = 9007199254740992.0;  // 2^53
  EXPECT_FALSE(Binning::even(4, p, p + 4).unit_integer_bins());
  EXPECT_FALSE(Binning::even(256, 0x1p60, 0x1p60 + 256).unit_integer_bins());
  EXPECT_FALSE(Binning::even(256, -0x1p60 - 256, -0x1p60).unit_integer_bins());
}

// Consistency with edge(): whenever unit_integer_bins() says so, the edges
// really are consecutive integers, so x - lower is the bin of an integer x.
TEST(BinningUnitIntegerBins, AgreesWithEdges) {
  std::vector<Binning> all;
  for (SampleType t : kAllSampleTypes)
    for (const auto& nb : test::standard_binnings(t)) all.push_back(nb.binning);
  for (double lower : {0.0, -7.0, 1e6, 4503599627370496.0 /* 2^52 */, 9007199254740990.0, 9007199254740992.0,
                       1e17, -1e17})
    for (std::uint64_t k : {1u, 2u, 3u, 4u, 256u}) {
      const double upper = lower + static_cast<double>(k);
      if (upper - lower == static_cast<double>(k)) all.push_back(Binning::even(k, lower, upper));
    }
  for (const Binning& b : all) {
    if (!b.unit_integer_bins()) continue;
    SCOPED_TRACE(b.describe());
    for (std::uint64_t i = 0; i < b.bins(); ++i) {
      ASSERT_EQ(b.edge(i), std::floor(b.edge(i))) << "edge " << i << " is not an integer";
      ASSERT_EQ(b.edge(i + 1) - b.edge(i), 1.0) << "bin " << i << " does not hold exactly one integer";
    }
  }
}

// ---------------------------------------------------------------------------
// describe(), equality, defaults.

TEST(BinningDescribe, Literal) {
  EXPECT_EQ(Binning::per_value(SampleType::u8).describe(), "256 even bins over [0, 256)");
  EXPECT_EQ(Binning::per_value(SampleType::i16).describe(), "65536 even bins over [-32768, 32768)");
  EXPECT_EQ(Binning::even(10, 0.0, 1.0, true).describe(), "10 even bins over [0, 1]");
  EXPECT_EQ(Binning::even(4, -2.5, 8.0).describe(), "4 even bins over [-2.5, 8)");
  EXPECT_EQ(Binning::explicit_edges({0.0, 1.0, 5.0}).describe(), "2 bins by explicit edges over [0, 5)");
  EXPECT_EQ(Binning::explicit_edges({0.0, 1.0, 5.0}, true).describe(), "2 bins by explicit edges over [0, 5]");
  EXPECT_EQ(Binning::even(4, 0.0, 1.0, true, EdgeRounding::f32).describe(),
            "4 even bins over [0, 1], edges rounded to float32");
  EXPECT_EQ(Binning::even(4, 0.0, 1.0, false, EdgeRounding::f32_arithmetic).describe(),
            "4 even bins over [0, 1), edges computed in float32");
}

TEST(BinningDescribe, BoundsRoundTrip) {
  // Bounds that are not short decimals are printed with enough digits to read them back exactly.
  const Binning b = Binning::even(3, 0.1, 0.7);
  const std::string d = b.describe();
  const auto open = d.find('['), comma = d.find(", ", open), close = d.find(')', comma);
  ASSERT_NE(open, std::string::npos);
  ASSERT_NE(comma, std::string::npos);
  ASSERT_NE(close, std::string::npos);
  EXPECT_EQ(d.substr(0, open), "3 even bins over ");
  EXPECT_EQ(std::stod(d.substr(open + 1, comma - open - 1)), 0.1) << d;
  EXPECT_EQ(std::stod(d.substr(comma + 2, close - comma - 2)), 0.7) << d;
}

TEST(BinningEquality, ComparesEverything) {
  EXPECT_EQ(Binning::even(4, 0.0, 8.0), Binning::even(4, 0.0, 8.0));
  EXPECT_NE(Binning::even(4, 0.0, 8.0), Binning::even(5, 0.0, 8.0));
  EXPECT_NE(Binning::even(4, 0.0, 8.0), Binning::even(4, 0.0, 9.0));
  EXPECT_NE(Binning::even(4, 0.0, 8.0), Binning::even(4, 0.0, 8.0, true));
  EXPECT_NE(Binning::even(4, 0.0, 8.0), Binning::even(4, 0.0, 8.0, false, EdgeRounding::f32));
  EXPECT_NE(Binning::even(4, 0.0, 8.0, false, EdgeRounding::f32),
            Binning::even(4, 0.0, 8.0, false, EdgeRounding::f32_arithmetic));
  EXPECT_NE(Binning::even(2, 0.0, 2.0), Binning::explicit_edges({0.0, 1.0, 2.0}));
  EXPECT_NE(Binning::explicit_edges({0.0, 1.0, 2.0}), Binning::explicit_edges({0.0, 1.5, 2.0}));
}

TEST(BinningDefault, IsOneBinOverUnitRange) {
  const Binning b;
  EXPECT_EQ(b.kind(), BinKind::even);
  EXPECT_EQ(b.bins(), 1u);
  EXPECT_EQ(b.lower(), 0.0);
  EXPECT_EQ(b.upper(), 1.0);
  EXPECT_EQ(b.slots(), 4u);
  EXPECT_EQ(b, Binning::even(1, 0.0, 1.0));
}

// make_indexer: the kernel view carries the binning and its host edges.
TEST(BinningIndexer, MakeIndexer) {
  const Binning e = Binning::explicit_edges({0.0, 1.0, 5.0}, true);
  const BinIndexer ix = make_indexer(e);
  EXPECT_EQ(ix.kind, BinKind::edges);
  EXPECT_EQ(ix.bins, 2u);
  EXPECT_EQ(ix.edges, e.edge_values().data());
  EXPECT_TRUE(ix.last_bin_inclusive);
  EXPECT_EQ(ix.underflow_slot(), 2u);
  EXPECT_EQ(ix.overflow_slot(), 3u);
  EXPECT_EQ(ix.nan_slot(), 4u);
  const double device_edges[] = {0.0, 1.0, 5.0};
  EXPECT_EQ(make_indexer(e, device_edges).edges, device_edges);
  const BinIndexer even = make_indexer(Binning::even(4, 0.0, 8.0));
  EXPECT_EQ(even.kind, BinKind::even);
  EXPECT_EQ(even.step, 2.0);
  EXPECT_EQ(even.lower, 0.0);
  EXPECT_EQ(even.upper, 8.0);
  EXPECT_EQ(even.edges, nullptr);
  // slot() itself, a few literal cases (the full rules are in test_edge_rules.cpp)
  EXPECT_EQ(even.slot(2.0), 1u);
  EXPECT_EQ(even.slot(-0.5), 4u);
  EXPECT_EQ(even.slot(8.0), 5u);
  EXPECT_EQ(even.slot(std::nan("")), 6u);
  EXPECT_EQ(ix.slot(5.0), 1u);
  EXPECT_EQ(ix.slot(1.0), 1u);
  EXPECT_EQ(ix.slot(0.999), 0u);
}

}  // namespace
}  // namespace levelhist
