// New shapes of histograms on the CPU: batches (equal segments, segments by
// offsets, tiles of an image), N-d points, deterministic weighted sums and sums
// of squares. Every strategy that takes a shape (cpu_serial, the reference,
// and cpu_parallel) is checked against expected values the test computes on
// its own: each segment or tile gathered and counted as a plain array, each
// point's slot combined from its axes' slots here, each weight quantized here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "levelhist/levelhist.hpp"

namespace levelhist::test {
namespace {

Options cpu(const char* strategy, unsigned threads = 4) {
  Options o;
  o.strategy = strategy;
  o.backend = BackendChoice::cpu;
  o.threads = threads;
  return o;
}

const char* const kShapeStrategies[] = {"cpu_serial", "cpu_parallel"};

// The plain-array histogram of `n` samples, by the reference loop on its own.
template <class T>
Histogram plain(const T* x, std::uint64_t n, const Binning& b) {
  return histogram(sample_type_of<T>(), x, n, b, cpu("cpu_serial", 1));
}

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
    else x = static_cast<T>(std::uniform_int_distribution<long long>((long long)lo, (long long)hi)(rng));
  }
  return v;
}

// ---- batches of segments ----------------------------------------------------------

TEST(Segments, EqualSegmentsMatchEachSegmentCountedAlone) {
  const Binning b = Binning::per_value(SampleType::u8);
  for (const char* s : kShapeStrategies)
    for (auto [segments, length] : {std::tuple{1, 1000}, std::tuple{7, 1}, std::tuple{300, 4096}, std::tuple{5, 0}}) {
      const std::vector<std::uint8_t> x = random_values<std::uint8_t>(segments * length, segments * 31 + length, 0, 255);
      const Plan plan(Request::segments(SampleType::u8, b, segments), cpu(s));
      std::vector<Histogram> got(segments, Histogram(b));
      plan.fill(got, Input::array(x.data(), x.size()));
      for (int k = 0; k < segments; ++k)
        ASSERT_EQ(got[k], plain(x.data() + k * length, length, b)) << s << " segment " << k << " of " << segments;
    }
}

TEST(Segments, ConstantAndOneHotSegments) {
  const Binning b = Binning::even(10, 0.0, 1.0);
  const int segments = 6, length = 5000;
  std::vector<float> x(segments * length, 0.55f);  // one hot bin everywhere
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[length] = -1.0f;  // underflow of segment 1
  x[2 * length + 7] = 1.0f;  // overflow of segment 2
  for (const char* s : kShapeStrategies) {
    const Plan plan(Request::segments(SampleType::f32, b, segments), cpu(s));
    std::vector<std::uint64_t> out(plan.request().output_slots(), 99);
    plan.fill_slots(out.data(), Input::array(x.data(), x.size()), /*accumulate=*/false);
    for (int k = 0; k < segments; ++k) {
      Histogram want = plain(x.data() + k * length, length, b);
      ASSERT_TRUE(std::equal(want.slots().begin(), want.slots().end(), out.begin() + k * b.slots())) << s << " " << k;
    }
    EXPECT_EQ(out[5], length - 1u);
    EXPECT_EQ(out[b.nan_slot()], 1u);
    EXPECT_EQ(out[b.slots() + b.underflow_slot()], 1u);
    EXPECT_EQ(out[2 * b.slots() + b.overflow_slot()], 1u);
  }
}

TEST(Segments, OffsetsWithEmptySingleAndUncountedSamples) {
  const Binning b = Binning::even(16, 0, 65536);
  const std::vector<std::uint16_t> x = random_values<std::uint16_t>(100000, 5, 0, 65535);
  // Empty segments (first, middle, last), segments of one sample, a first
  // offset above 0 and a last below n (samples outside every segment).
  const std::vector<std::uint64_t> offsets = {3, 3, 4, 5, 5, 40000, 40001, 99990, 99990};
  const std::uint64_t segments = offsets.size() - 1;
  for (const char* s : kShapeStrategies) {
    const Plan plan(Request::segments_by_offsets(SampleType::u16, b, segments), cpu(s));
    std::vector<Histogram> got(segments, Histogram(b));
    plan.fill(got, Input::segments(x.data(), x.size(), offsets.data()));
    for (std::uint64_t k = 0; k < segments; ++k)
      ASSERT_EQ(got[k], plain(x.data() + offsets[k], offsets[k + 1] - offsets[k], b)) << s << " segment " << k;
    EXPECT_EQ(got[0].total(), 0u);
    EXPECT_EQ(got[1].total(), 1u);
    EXPECT_EQ(got[7].total(), 0u);
  }
}

TEST(Segments, LargeSegmentsBesideSmallOnes) {
  // cpu_parallel counts segments of 8 MiB and more with all workers, the
  // others whole from a queue: both kinds in one call.
  const Binning b = Binning::per_value(SampleType::u8);
  std::vector<std::uint8_t> x(std::size_t{9} << 20);
  std::mt19937 rng(11);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i < (std::size_t{5} << 20) ? 200 : static_cast<std::uint8_t>(rng());
  const std::vector<std::uint64_t> offsets = {0, 1000, 1000 + (std::uint64_t{8} << 20), x.size()};
  const Plan plan(Request::segments_by_offsets(SampleType::u8, b, 3), cpu("cpu_parallel"));
  std::vector<Histogram> got(3, Histogram(b));
  plan.fill(got, Input::segments(x.data(), x.size(), offsets.data()));
  for (int k = 0; k < 3; ++k) EXPECT_EQ(got[k], plain(x.data() + offsets[k], offsets[k + 1] - offsets[k], b)) << k;
}

TEST(Segments, BadOffsetsAndLengthsAreErrors) {
  const Binning b = Binning::per_value(SampleType::u8);
  std::vector<std::uint8_t> x(100, 1);
  const Plan by_offsets(Request::segments_by_offsets(SampleType::u8, b, 2), cpu("cpu_serial"));
  std::vector<Histogram> h(2, Histogram(b));
  for (const std::vector<std::uint64_t>& bad : {std::vector<std::uint64_t>{0, 50, 40}, {0, 10, 101}}) {
    try {
      by_offsets.fill(h, Input::segments(x.data(), x.size(), bad.data()));
      FAIL() << "bad offsets accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_EQ(e.subject(), ErrorSubject::batch);
    }
  }
  try {
    by_offsets.fill(h, Input::array(x.data(), x.size()));
    FAIL() << "no offsets accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
  const Plan equal(Request::segments(SampleType::u8, b, 3), cpu("cpu_serial"));
  std::vector<Histogram> h3(3, Histogram(b));
  EXPECT_THROW(equal.fill(h3, Input::array(x.data(), 100)), Error);  // 100 is not 3 equal segments
  EXPECT_THROW(equal.fill(h, Input::array(x.data(), 99)), Error);    // 2 histograms for 3 segments
  EXPECT_THROW(Plan(Request::segments(SampleType::u8, b, 0)), Error);
  Request weighted_batch = Request::segments(SampleType::u8, b, 2);
  weighted_batch.weight_type = SampleType::f32;
  EXPECT_THROW(weighted_batch.validate(), Error);
}

// ---- tiles -----------------------------------------------------------------------

// Each tile's pixels gathered from the frame, counted as one plain array.
std::vector<Histogram> tiles_by_gathering(const std::vector<std::uint8_t>& img, std::uint64_t width,
                                          std::uint64_t height, std::uint64_t pitch, std::uint32_t rows,
                                          std::uint32_t cols, const Binning& b) {
  const std::uint64_t tw = (width + cols - 1) / cols, th = (height + rows - 1) / rows;
  std::vector<Histogram> out;
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t c = 0; c < cols; ++c) {
      std::vector<std::uint8_t> tile;
      for (std::uint64_t y = r * th; y < std::min(height, (r + 1) * th); ++y)
        for (std::uint64_t x = c * tw; x < std::min(width, (c + 1) * tw); ++x) tile.push_back(img[y * pitch + x]);
      out.push_back(plain(tile.data(), tile.size(), b));
    }
  return out;
}

TEST(Tiles, GridsThatDivideAndDoNotDivideTheFrame) {
  const Binning b = Binning::even(32, 0, 256);
  std::mt19937 rng(7);
  for (const char* s : kShapeStrategies)
    for (auto [w, h, pad, rows, cols] : {std::tuple{64, 64, 0, 8, 8}, std::tuple{10, 7, 3, 2, 4},
                                         std::tuple{5, 5, 0, 4, 4}, std::tuple{1, 1, 0, 3, 2},
                                         std::tuple{300, 17, 21, 1, 1}, std::tuple{33, 100, 0, 8, 3}}) {
      const std::uint64_t pitch = w + pad;
      std::vector<std::uint8_t> img(pitch * h, 0xEE);  // the padding must not be counted
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img[y * pitch + x] = static_cast<std::uint8_t>(rng() % 200);
      const Plan plan(Request::tiles(SampleType::u8, b, rows, cols), cpu(s));
      std::vector<Histogram> got(rows * cols, Histogram(b));
      plan.fill(got, Input::image(img.data(), w, h, pitch));
      const std::vector<Histogram> want = tiles_by_gathering(img, w, h, pitch, rows, cols, b);
      for (int t = 0; t < rows * cols; ++t)
        ASSERT_EQ(got[t], want[t]) << s << " " << w << "x" << h << " grid " << rows << "x" << cols << " tile " << t;
      std::uint64_t total = 0;
      for (const Histogram& g : got) total += g.total();
      EXPECT_EQ(total, std::uint64_t(w) * h);
    }
}

TEST(Tiles, ConstantImageAndEmptyTiles) {
  // 5 columns in 4 tile columns: tiles 2 wide, so the last tile column is empty.
  const Binning b = Binning::per_value(SampleType::u8);
  std::vector<std::uint8_t> img(5 * 9, 42);
  for (const char* s : kShapeStrategies) {
    const Plan plan(Request::tiles(SampleType::u8, b, 3, 4), cpu(s));
    std::vector<Histogram> got(12, Histogram(b));
    plan.fill(got, Input::image(img.data(), 5, 9));
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(got[r * 4 + 0].count(42), 6u) << s;
      EXPECT_EQ(got[r * 4 + 2].count(42), 3u) << s;
      EXPECT_EQ(got[r * 4 + 3].total(), 0u) << s;
    }
  }
  const Plan plan(Request::tiles(SampleType::u8, b, 2, 2), cpu("cpu_serial"));
  std::vector<Histogram> four(4, Histogram(b));
  EXPECT_THROW(plan.fill(four, Input::array(img.data(), img.size())), Error);  // tiles need a frame
}

// ---- N-d ---------------------------------------------------------------------------

// The flat slot of one point, combined here from each axis's own slot.
std::uint64_t point_slot(const std::vector<Binning>& axes, const std::vector<double>& point) {
  std::uint64_t at = 0;
  for (std::size_t a = 0; a < axes.size(); ++a) at = at * axes[a].slots() + make_indexer(axes[a]).slot(point[a]);
  return at;
}

TEST(Axes, HandWorked2D) {
  // numpy.histogramdd([[0.1, 0.1], [0.6, 0.2], [0.6, 0.9], [1.0, 0.5], [-1, 2], [nan, 0.5]],
  //                   bins=(2, 2), range=((0, 1), (0, 1)))
  // counts [[1, 0], [1, 1]] inside; [1.0, 0.5] is on axis 0's upper edge (numpy: in
  // its closed last bin; half-open here: axis 0's overflow), [-1, 2] under/over.
  const std::vector<Binning> axes = {Binning::even(2, 0.0, 1.0), Binning::even(2, 0.0, 1.0)};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> xy = {0.1, 0.1, 0.6, 0.2, 0.6, 0.9, 1.0, 0.5, -1, 2, nan, 0.5};
  for (const char* s : kShapeStrategies) {
    const Plan plan(Request::joint(SampleType::f64, axes), cpu(s));
    HistogramNd h(axes);
    plan.fill(h, Input::array(xy.data(), 6));
    EXPECT_EQ(h.at(0, 0), 1u) << s;
    EXPECT_EQ(h.at(0, 1), 0u);
    EXPECT_EQ(h.at(1, 0), 1u);
    EXPECT_EQ(h.at(1, 1), 1u);
    EXPECT_EQ(h.at(3, 1), 1u);  // overflow on axis 0 (slot bins + 1 = 3), bin 1 on axis 1
    EXPECT_EQ(h.at(2, 3), 1u);  // underflow, overflow
    EXPECT_EQ(h.at(4, 1), 1u);  // NaN on axis 0
    EXPECT_EQ(h.in_range(), 3u);
    EXPECT_EQ(h.total(), 6u);
    // numpy's rule per axis: the last bin closed, so [1.0, 0.5] counts in (1, 1).
    const std::vector<Binning> numpy = {Binning::even(2, 0.0, 1.0, true), Binning::even(2, 0.0, 1.0, true)};
    HistogramNd hn(numpy);
    Plan(Request::joint(SampleType::f64, numpy), cpu(s)).fill(hn, Input::array(xy.data(), 6));
    EXPECT_EQ(hn.at(1, 1), 2u);
  }
}

template <class T>
void check_axes(const std::vector<Binning>& axes, std::size_t points, std::uint64_t seed, double lo, double hi) {
  const unsigned k = static_cast<unsigned>(axes.size());
  std::vector<T> interleaved = random_values<T>(points * k, seed, lo, hi);
  if constexpr (std::is_floating_point_v<T>) {
    if (points > 10) interleaved[5] = std::numeric_limits<T>::quiet_NaN(), interleaved[8] = -INFINITY;
  }
  std::vector<std::vector<T>> columns(k, std::vector<T>(points));
  HistogramNd want(axes);
  for (std::size_t i = 0; i < points; ++i) {
    std::vector<double> p(k);
    for (unsigned a = 0; a < k; ++a) p[a] = static_cast<double>(columns[a][i] = interleaved[i * k + a]);
    want.slots()[point_slot(axes, p)] += 1;
  }
  for (const char* s : kShapeStrategies) {
    const Plan plan(Request::joint(sample_type_of<T>(), axes), cpu(s));
    HistogramNd got(axes);
    plan.fill(got, Input::array(interleaved.data(), points));
    ASSERT_EQ(got, want) << s << " interleaved, " << k << " axes, " << points << " points";
    HistogramNd by_columns(axes);
    Input in;
    in.n = points;
    for (unsigned a = 0; a < k; ++a) in.columns[a] = columns[a].data();
    in.samples = in.columns[0];
    plan.fill(by_columns, in);
    ASSERT_EQ(by_columns, want) << s << " columns";
  }
}

TEST(Axes, RandomPointsOn2To4AxesMatchTheirCombinedSlots) {
  check_axes<float>({Binning::even(100, 0.0, 1.0), Binning::even(100, 0.0, 1.0)}, 300000, 1, -0.1, 1.1);
  check_axes<float>({Binning::even(7, -1.0, 1.0), Binning::explicit_edges({-1, -0.5, 0, 0.1, 0.2, 2})}, 50000, 2, -2, 2);
  check_axes<std::uint8_t>({Binning::per_value(SampleType::u8), Binning::per_value(SampleType::u8)}, 200000, 3, 0, 255);
  // Two 8-bit axes are counted by raw pair, each pair mapped at the flush:
  // pairs that share a slot, flows on both sides, signed bytes, and enough
  // points for several workers' tables.
  check_axes<std::uint8_t>({Binning::even(10, 5, 250), Binning::explicit_edges({0, 3, 100, 200})}, 3000000, 7, 0, 255);
  check_axes<std::int8_t>({Binning::per_value(SampleType::i8), Binning::even(4, -100, 100)}, 600000, 8, -128, 127);
  check_axes<std::int16_t>({Binning::even(8, -100, 100), Binning::even(3, 0, 30), Binning::even(5, -5, 5)}, 70000, 4,
                           -120, 120);
  check_axes<double>({Binning::even(3, 0, 1), Binning::even(4, 0, 1), Binning::even(2, 0, 1), Binning::even(5, 0, 1)},
                     40000, 5, -0.2, 1.2);
  check_axes<float>({Binning::even(4, 0, 1), Binning::even(4, 0, 1)}, 1, 6, 0, 1);
  check_axes<float>({Binning::even(4, 0, 1), Binning::even(4, 0, 1)}, 0, 6, 0, 1);
}

TEST(Axes, ConstantPointsAndOneHotBin) {
  const std::vector<Binning> axes = {Binning::per_value(SampleType::u8), Binning::per_value(SampleType::u8)};
  std::vector<std::uint8_t> a(1 << 20, 17), b(1 << 20, 230);
  for (const char* s : kShapeStrategies) {
    HistogramNd h(axes);
    Plan(Request::joint(SampleType::u8, axes), cpu(s)).fill(h, Input::columns_of({a.data(), b.data()}, a.size()));
    EXPECT_EQ(h.at(17, 230), a.size()) << s;
    EXPECT_EQ(h.total(), a.size()) << s;
  }
}

TEST(Axes, RequestErrors) {
  const Binning b = Binning::even(4, 0, 1);
  EXPECT_THROW(Request::joint(SampleType::f32, {b}).validate(), Error);
  EXPECT_THROW(Request::joint(SampleType::f32, {b, b, b, b, b}).validate(), Error);
  Request mismatched = Request::joint(SampleType::f32, {b, b});
  mismatched.binning = Binning::even(5, 0, 1);
  EXPECT_THROW(mismatched.validate(), Error);
  const Binning big = Binning::even(1 << 20, 0, 1);
  try {
    Request::joint(SampleType::f32, {big, big}).validate();
    FAIL() << "2^40 slots accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
  }
  const Plan plan(Request::joint(SampleType::f32, {b, b}), cpu("cpu_serial"));
  std::vector<float> x(10, 0.5f), y(10, 0.5f);
  HistogramNd h({b, b});
  EXPECT_THROW(plan.fill(h, Input::columns_of({x.data()}, 10)), Error);  // one column for two axes
  HistogramNd other({b, Binning::even(3, 0, 1)});
  EXPECT_THROW(plan.fill(other, Input::array(x.data(), 5)), Error);
  Histogram one(b);
  EXPECT_THROW(plan.fill(one, Input::array(x.data(), 5)), Error);
}

// ---- deterministic weights ----------------------------------------------------------

// The deterministic sum of `w` as the request's rule defines it, computed here
// with a 128-bit integer: E from the largest finite |w|, each weight rounded
// to nearest-even quanta of 2^(E-40).
double expected_deterministic(const std::vector<double>& slot_weights, double bound, bool squares) {
  int e = 0;
  if (bound > 0) std::frexp(bound, &e);
  if (squares) e *= 2;
  __int128 sum = 0;
  bool pinf = false, ninf = false, nan = false;
  for (double w : slot_weights) {
    const double v = squares ? w * w : w;
    if (std::isnan(v)) nan = true;
    else if (std::isinf(v)) (v > 0 ? pinf : ninf) = true;
    else sum += static_cast<__int128>(std::nearbyint(std::ldexp(v, 40 - e)));
  }
  if (nan || (pinf && ninf)) return std::numeric_limits<double>::quiet_NaN();
  if (pinf) return INFINITY;
  if (ninf) return -INFINITY;
  const std::int64_t hi = static_cast<std::int64_t>(sum >> 64);
  const std::uint64_t lo = static_cast<std::uint64_t>(sum);
  const bool narrow = (hi == 0 && lo < (1ULL << 63)) || (hi == -1 && lo >= (1ULL << 63));
  const double v = narrow ? static_cast<double>(static_cast<std::int64_t>(lo))
                          : static_cast<double>(hi) * 18446744073709551616.0 + static_cast<double>(lo);
  return std::ldexp(v, e - 40);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

TEST(DeterministicWeights, EqualTheRuleComputedHereAndAnyOrder) {
  const Binning b = Binning::even(20, 0.0, 1.0);
  const std::size_t n = 200000;
  std::mt19937_64 rng(9);
  std::vector<float> x(n);
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::uniform_real_distribution<float>(-0.1f, 1.1f)(rng);
    // Magnitudes over 12 orders, both signs: double sums of these depend on the order.
    w[i] = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), static_cast<int>(rng() % 40) - 20);
  }
  w[100] = 3e6;  // the bound
  Request r = Request::weighted(SampleType::f32, SampleType::f64, b);
  r.deterministic = true;
  r.weight_squares = true;
  const Plan plan(r, cpu("cpu_serial"));
  std::vector<WeightedHistogram> got(2, WeightedHistogram(b));
  plan.fill(got, Input::array(x.data(), n, w.data()));
  std::vector<std::vector<double>> per_slot(b.slots());
  const BinIndexer ix = make_indexer(b);
  for (std::size_t i = 0; i < n; ++i) per_slot[ix.slot(x[i])].push_back(w[i]);
  for (std::uint64_t s = 0; s < b.slots(); ++s) {
    EXPECT_TRUE(same_bits(got[0].slots()[s], expected_deterministic(per_slot[s], 3e6, false))) << s;
    EXPECT_TRUE(same_bits(got[1].slots()[s], expected_deterministic(per_slot[s], 3e6, true))) << s;
    // Within the documented bound of the exact sum (long double holds these sums closely enough).
    long double exact = 0;
    for (double v : per_slot[s]) exact += v;
    EXPECT_LE(std::fabs(static_cast<double>(exact) - got[0].slots()[s]),
              per_slot[s].size() * std::ldexp(3e6, -40) + std::fabs(got[0].slots()[s]) * 0x1p-52)
        << s;
  }
  // The same pairs in another order: bit-identical sums.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<float> xs(n);
  std::vector<double> ws(n);
  for (std::size_t i = 0; i < n; ++i) xs[i] = x[order[i]], ws[i] = w[order[i]];
  std::vector<WeightedHistogram> shuffled(2, WeightedHistogram(b));
  plan.fill(shuffled, Input::array(xs.data(), n, ws.data()));
  for (std::uint64_t s = 0; s < b.slots(); ++s) {
    EXPECT_TRUE(same_bits(got[0].slots()[s], shuffled[0].slots()[s])) << s;
    EXPECT_TRUE(same_bits(got[1].slots()[s], shuffled[1].slots()[s])) << s;
  }
}

TEST(DeterministicWeights, SpecialsZerosAndOneHotSlot) {
  const Binning b = Binning::per_value(SampleType::u8);
  std::vector<std::uint8_t> x = {1, 1, 2, 2, 3, 3, 4, 5, 5, 5};
  const float inf = INFINITY, nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> w = {inf, 1.0f, inf, -inf, nan, 2.0f, 0.0f, 0.25f, 0.25f, -0.5f};
  Request r = Request::weighted(SampleType::u8, SampleType::f32, b);
  r.deterministic = true;
  WeightedHistogram h(b);
  Plan(r, cpu("cpu_serial")).fill(h, Input::array(x.data(), x.size(), w.data()));
  EXPECT_EQ(h.sum(1), INFINITY);
  EXPECT_TRUE(std::isnan(h.sum(2)));
  EXPECT_TRUE(std::isnan(h.sum(3)));
  EXPECT_EQ(h.sum(4), 0.0);
  EXPECT_EQ(h.sum(5), 0.0);
  EXPECT_EQ(h.sum(0), 0.0);
  // Every weight zero: sums of zero.
  std::vector<float> zeros(x.size(), 0.0f);
  WeightedHistogram z(b);
  Plan(r, cpu("cpu_serial")).fill(z, Input::array(x.data(), x.size(), zeros.data()));
  EXPECT_EQ(z.total(), 0.0);
  // One hot slot, a million equal weights: exact (0.1f is a multiple of the quantum).
  std::vector<std::uint8_t> hot(1000000, 9);
  std::vector<float> tenth(hot.size(), 0.1f);
  WeightedHistogram one(b);
  Plan(r, cpu("cpu_serial")).fill(one, Input::array(hot.data(), hot.size(), tenth.data()));
  EXPECT_EQ(one.sum(9), static_cast<double>(0.1f) * 1000000.0);
}

TEST(DeterministicWeights, SquaresBesideFloatingSums) {
  const Binning b = Binning::even(4, 0, 4);
  std::vector<std::int32_t> x = {0, 1, 1, 3, 3, 3, 7};
  std::vector<double> w = {0.5, 1.5, -2.0, 1.0, 2.0, 3.0, 10.0};
  Request r = Request::weighted(SampleType::i32, SampleType::f64, b);
  r.weight_squares = true;
  EXPECT_EQ(r.output_slots(), 2 * b.slots());
  std::vector<WeightedHistogram> h(2, WeightedHistogram(b));
  Plan(r, cpu("cpu_serial")).fill(h, Input::array(x.data(), x.size(), w.data()));
  EXPECT_EQ(h[0].sum(1), -0.5);
  EXPECT_EQ(h[1].sum(1), 1.5 * 1.5 + 4.0);
  EXPECT_EQ(h[1].sum(3), 14.0);
  EXPECT_EQ(h[1].overflow(), 100.0);
  std::vector<WeightedHistogram> one(1, WeightedHistogram(b));
  EXPECT_THROW(Plan(r, cpu("cpu_serial")).fill(one, Input::array(x.data(), x.size(), w.data())), Error);
  Request no_weights = Request::counts(SampleType::i32, b);
  no_weights.deterministic = true;
  EXPECT_THROW(no_weights.validate(), Error);
  // Both CPU strategies sum weights of a plain array; auto takes cpu_parallel.
  Request det = Request::weighted(SampleType::i32, SampleType::f64, b);
  det.deterministic = true;
  EXPECT_STREQ(Plan(det, cpu("cpu_parallel")).strategy().name, "cpu_parallel");
  EXPECT_STREQ(Plan(det, cpu("auto")).strategy().name, "cpu_parallel");
}

// cpu_parallel's weighted sums against cpu_serial's, with and without
// deterministic sums and squares, on 1-3 workers, sizes around the first
// second worker, specials among the weights: deterministic sums bit for bit;
// double sums bit for bit with one worker (its loop is cpu_serial's), else
// within the rounding of a reordered sum; the same bits again from a second
// plan with the same threads, and accumulation into what is there.
template <class T, class W>
void check_parallel_weights(const Binning& b, const std::vector<T>& x, const std::vector<W>& w, const char* what) {
  const SampleType type = sample_type_of<T>(), wtype = sample_type_of<W>();
  std::vector<W> magnitudes(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) magnitudes[i] = std::fabs(w[i]);
  for (const bool deterministic : {false, true})
    for (const bool squares : {false, true}) {
      Request r = Request::weighted(type, wtype, b);
      r.deterministic = deterministic;
      r.weight_squares = squares;
      const std::size_t outputs = squares ? 2 : 1;
      const Input input = Input::array(x.data(), x.size(), w.data());
      std::vector<WeightedHistogram> want(outputs, WeightedHistogram(b)), bound(outputs, WeightedHistogram(b));
      const Plan serial(r, cpu("cpu_serial", 1));
      serial.fill(want, input);
      serial.fill(want, input);  // twice: the accumulation below adds a second call too
      Request abs_request = Request::weighted(type, wtype, b);
      abs_request.weight_squares = squares;
      Plan(abs_request, cpu("cpu_serial", 1)).fill(bound, Input::array(x.data(), x.size(), magnitudes.data()));
      for (const unsigned threads : {1u, 2u, 3u}) {
        SCOPED_TRACE(std::string(what) + ", n " + std::to_string(x.size()) + ", threads " + std::to_string(threads) +
                     (deterministic ? ", deterministic" : "") + (squares ? ", squares" : ""));
        std::vector<WeightedHistogram> got(outputs, WeightedHistogram(b)), again(outputs, WeightedHistogram(b));
        const Plan parallel(r, cpu("cpu_parallel", threads));
        ASSERT_STREQ(parallel.strategy().name, "cpu_parallel");
        parallel.fill(got, input);
        parallel.fill(got, input);
        Plan(r, cpu("cpu_parallel", threads)).fill(again, input);
        Plan(r, cpu("cpu_parallel", threads)).fill(again, input);
        for (std::size_t o = 0; o < outputs; ++o)
          for (std::uint64_t s = 0; s < b.slots(); ++s) {
            const double g = got[o].slots()[s], e = want[o].slots()[s];
            EXPECT_TRUE(same_bits(g, again[o].slots()[s])) << "output " << o << ", slot " << s;
            if (deterministic || threads == 1) {
              EXPECT_TRUE(same_bits(g, e)) << "output " << o << ", slot " << s << ": " << g << " against " << e;
            } else if (std::isnan(e) || std::isinf(e)) {
              EXPECT_TRUE(same_bits(g, e)) << "output " << o << ", slot " << s << ": " << g << " against " << e;
            } else {
              // Each of two sums of m terms in any order is within (m - 1) u of the terms'
              // magnitudes' sum (u = 2^-53); both sums here are of two calls' terms.
              const double m = 2.0 * static_cast<double>(x.size());
              EXPECT_LE(std::fabs(g - e), 2 * m * 0x1p-53 * 2 * bound[o].slots()[s])
                  << "output " << o << ", slot " << s;
            }
          }
      }
    }
}

TEST(DeterministicWeights, CpuParallelAgreesWithCpuSerial) {
  std::mt19937_64 rng(33);
  // 0, 1, around the first second worker (2 x 32 KiB of 12-, 6- and 5-byte pairs), larger.
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5461}, std::size_t{5462},
                              std::size_t{10923}, std::size_t{13108}, std::size_t{70001},
                              std::size_t{(1 << 20) + 13}}) {
    std::vector<float> xf(n);
    std::vector<double> wd(n);
    std::vector<std::int16_t> xi(n);
    std::vector<float> wf(n);
    std::vector<std::uint8_t> xb(n);
    for (std::size_t i = 0; i < n; ++i) {
      xf[i] = std::uniform_real_distribution<float>(-0.1f, 1.1f)(rng);
      // Magnitudes over 12 orders, both signs: double sums of these depend on the order.
      wd[i] = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), static_cast<int>(rng() % 40) - 20);
      xi[i] = static_cast<std::int16_t>(static_cast<int>(rng() % 260) - 130);
      wf[i] = std::uniform_real_distribution<float>(-4, 4)(rng);
      xb[i] = static_cast<std::uint8_t>(rng());
    }
    if (n > 100) {
      wd[n / 3] = INFINITY;        // one slot infinite
      wf[n / 2] = std::numeric_limits<float>::quiet_NaN();  // one slot NaN
      xf[n / 4] = 1.0f;            // the last edge
      wd[n / 5] = 3e6;             // the bound
    }
    check_parallel_weights(Binning::even(100, 0.0, 1.0), xf, wd, "f32 samples, f64 weights, even bins");
    check_parallel_weights(Binning::even(200, -100, 100), xi, wf, "i16 samples, unit bins");
    check_parallel_weights(Binning::explicit_edges({0, 10, 100, 200, 255}), xb, wf, "u8 samples, explicit edges");
  }
}

}  // namespace
}  // namespace levelhist::test
