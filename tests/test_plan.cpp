// Plans (plan.hpp): a request resolved once and reused; every request kind
// through the one CPU path; errors in the library's own terms.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/strategies.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::test {
namespace {

Options cpu(const char* strategy = "auto", unsigned threads = 2) {
  Options o;
  o.strategy = strategy;
  o.backend = BackendChoice::cpu;
  o.threads = threads;
  return o;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-0.2f, 1.2f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(Plan, ReusedAcrossCallsEqualsOneCall) {
  const Binning b = Binning::even(37, 0.0, 1.0);
  const Plan plan(Request::counts(SampleType::f32, b), cpu());
  EXPECT_EQ(plan.backend(), Backend::cpu);
  EXPECT_EQ(plan.device(), -1);
  const std::vector<float> x = random_floats(100000, 1);
  Histogram pieces(b);
  for (std::size_t at = 0; at < x.size(); at += 7919)
    plan.fill(pieces, Input::array(x.data() + at, std::min<std::size_t>(7919, x.size() - at)));
  const Histogram whole = histogram(SampleType::f32, x.data(), x.size(), b, cpu("cpu_serial", 1));
  EXPECT_EQ(pieces, whole);
  EXPECT_EQ(pieces.total(), x.size());
}

TEST(Plan, FillSlotsClearsUnlessAccumulating) {
  const Binning b = Binning::per_value(SampleType::u8);
  const Plan plan(Request::counts(SampleType::u8, b), cpu());
  std::vector<std::uint8_t> x(1000, 7);
  std::vector<std::uint64_t> slots(plan.request().output_slots(), 5);
  plan.fill_slots(slots.data(), Input::array(x.data(), x.size()), /*accumulate=*/false);
  EXPECT_EQ(slots[7], 1000u);
  EXPECT_EQ(slots[8], 0u);
  plan.fill_slots(slots.data(), Input::array(x.data(), x.size()));
  EXPECT_EQ(slots[7], 2000u);
}

// Pixels: one plan, frames of other sizes and pitches, the same counts as the
// reference on the gathered region.
TEST(Plan, PixelFramesOfAnySize) {
  const Binning b = Binning::even(16, 0, 256);
  const Plan plan(Request::pixels(SampleType::u8, 4, 0b1011, b), cpu());
  EXPECT_EQ(plan.request().histograms(), 3u);
  std::mt19937 rng(3);
  for (auto [w, h, pad] : {std::tuple{5, 3, 0}, std::tuple{17, 9, 13}, std::tuple{1, 40, 3}}) {
    const std::size_t pitch = w * 4 + pad;
    std::vector<std::uint8_t> img(pitch * h);
    for (auto& v : img) v = static_cast<std::uint8_t>(rng());
    std::vector<Histogram> got(3, Histogram(b));
    plan.fill(got, Input::image(img.data(), w, h, pitch));
    std::vector<Histogram> want(3, Histogram(b));
    for (int c : {0, 1, 3}) {
      std::vector<std::uint8_t> channel;
      for (int r = 0; r < h; ++r)
        for (int x = 0; x < w; ++x) channel.push_back(img[r * pitch + x * 4 + c]);
      want[c == 3 ? 2 : c] = histogram(SampleType::u8, channel.data(), channel.size(), b, cpu("cpu_serial", 1));
    }
    EXPECT_EQ(got, want) << w << " x " << h << " pitch " << pitch;
  }
}

TEST(Plan, WeightedSumsThroughThePlan) {
  const Binning b = Binning::even(4, 0.0, 4.0);
  const Plan plan(Request::weighted(SampleType::i32, SampleType::f64, b), cpu());
  const std::vector<std::int32_t> x = {0, 1, 1, 3, 9, -2};
  const std::vector<double> w = {0.5, 1.0, 2.0, 4.0, 8.0, 16.0};
  WeightedHistogram h(b);
  plan.fill(h, Input::array(x.data(), x.size(), w.data()));
  EXPECT_EQ(h.sum(0), 0.5);
  EXPECT_EQ(h.sum(1), 3.0);
  EXPECT_EQ(h.sum(3), 4.0);
  EXPECT_EQ(h.overflow(), 8.0);
  EXPECT_EQ(h.underflow(), 16.0);
  EXPECT_EQ(h.total(), 31.5);
}

// Errors carry a kind, a subject and a fix in the library's terms: never a
// command-line flag (the CLI adds its own spelling of the fix).
TEST(Plan, ErrorsSpeakTheLibrarysTerms) {
  const Binning b = Binning::per_value(SampleType::u8);
  auto error_of = [](auto&& f) -> Error {
    try {
      f();
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error";
    return Error(ErrorKind::internal, "none");
  };
  std::vector<Error> errors;
  errors.push_back(error_of([&] { Plan(Request::counts(SampleType::u8, b), cpu("no_such_strategy")); }));
  errors.push_back(error_of([&] { Plan(Request::pixels(SampleType::u8, 5, 1, b)); }));
  errors.push_back(error_of([&] { Plan(Request::pixels(SampleType::u8, 2, 4, b)); }));
  errors.push_back(error_of([&] { Plan(Request::weighted(SampleType::u8, SampleType::i32, b)); }));
  const Plan plan(Request::counts(SampleType::u8, b), cpu());
  std::vector<Histogram> two(2, Histogram(b));
  errors.push_back(error_of([&] { plan.fill(two, Input::array(nullptr, 0)); }));
  Histogram other(Binning::even(3, 0, 3));
  errors.push_back(error_of([&] { plan.fill(other, Input::array(nullptr, 0)); }));
  std::uint8_t x = 1;
  errors.push_back(error_of([&] { plan.workspace_bytes(10); }));
  errors.push_back(error_of([&] { plan.run(Input::array(&x, 1), nullptr, false, nullptr, 0); }));
  const double w = 1.0;
  errors.push_back(error_of([&] { plan.fill_slots(&x, Input::array(&x, 1, &w)); }));
  WeightedHistogram sums(b);
  errors.push_back(error_of([&] { plan.fill(sums, Input::array(&x, 1)); }));
  const ErrorSubject subjects[] = {ErrorSubject::strategy, ErrorSubject::layout, ErrorSubject::layout,
                                   ErrorSubject::weights,  ErrorSubject::layout, ErrorSubject::binning,
                                   ErrorSubject::backend,  ErrorSubject::backend, ErrorSubject::weights,
                                   ErrorSubject::weights};
  ASSERT_EQ(errors.size(), std::size(subjects));
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const Error& e = errors[i];
    EXPECT_EQ(e.kind(), ErrorKind::usage) << i << ": " << e.what();
    EXPECT_EQ(e.subject(), subjects[i]) << i << ": " << e.what();
    EXPECT_FALSE(e.message().empty()) << i;
    EXPECT_FALSE(e.fix().empty()) << i << ": " << e.what();
    EXPECT_EQ(std::string(e.what()), e.message() + "; " + e.fix());
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << "a CLI flag in a library error: " << e.what();
    EXPECT_EQ(std::string(e.what()).find("levelhist list"), std::string::npos) << e.what();
  }
}

TEST(Plan, AskedStrategyMustTakeTheRequest) {
  const Binning b = Binning::even(10, 0.0, 1.0);
  Request weighted_pixels = Request::pixels(SampleType::u8, 3, 0x7, Binning::per_value(SampleType::u8));
  weighted_pixels.weight_type = SampleType::f32;
  try {
    Plan(weighted_pixels, cpu("cpu_parallel"));
    FAIL() << "cpu_parallel counts no pixels with channels";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_EQ(e.subject(), ErrorSubject::strategy);
    EXPECT_NE(e.message().find("pixel"), std::string::npos) << e.what();
  }
  const Plan serial(weighted_pixels, cpu("cpu_serial"));
  EXPECT_STREQ(serial.strategy().name, "cpu_serial");
  const Plan parallel(Request::weighted(SampleType::f32, SampleType::f32, b), cpu("cpu_parallel"));
  EXPECT_STREQ(parallel.strategy().name, "cpu_parallel");
}

TEST(Plan, MovesKeepTheResolution) {
  const Binning b = Binning::explicit_edges({0.0, 0.5, 2.0});
  Plan a(Request::counts(SampleType::f64, b), cpu());
  const Strategy* s = &a.strategy();
  Plan moved = std::move(a);
  EXPECT_EQ(&moved.strategy(), s);
  const std::vector<double> x = {0.1, 0.6, 3.0, -1.0, 1.9};
  Histogram h(b);
  moved.fill(h, Input::array(x.data(), x.size()));
  EXPECT_EQ(h.count(0), 1u);
  EXPECT_EQ(h.count(1), 2u);
  EXPECT_EQ(h.overflow(), 1u);
  EXPECT_EQ(h.underflow(), 1u);
}

// Counts and sums are one storage design.
TEST(Storage, CountsAndSumsShareOneDesign) {
  const Binning b = Binning::even(2, 0.0, 2.0);
  Histogram counts(b);
  WeightedHistogram sums(b);
  static_assert(std::is_same_v<decltype(counts.value(0)), std::uint64_t>);
  static_assert(std::is_same_v<decltype(sums.value(0)), double>);
  counts.slots()[1] = 3;
  sums.slots()[1] = 2.5;
  EXPECT_EQ(counts.count(1), counts.value(1));
  EXPECT_EQ(sums.sum(1), sums.value(1));
  EXPECT_EQ(counts.in_range(), 3u);
  EXPECT_EQ(sums.in_range(), 2.5);
  WeightedHistogram other(Binning::even(3, 0.0, 2.0));
  EXPECT_THROW(sums += other, Error);
}

}  // namespace
}  // namespace levelhist::test
