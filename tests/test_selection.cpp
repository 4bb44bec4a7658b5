// auto's selection table (src/core/selection.cpp): every row names a strategy of
// the library and the measurement behind it; the library holds exactly what
// the table can choose (and cpu_serial, the reference); the CPU choices.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/strategies.hpp"
#include "lab.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::test {
namespace {

const Binning kBytes = Binning::per_value(SampleType::u8);

std::vector<SelectionStep> rows_of(Backend backend) {
  return explain_choice(Problem{SampleType::u8, &kBytes, 0}, backend);  // every row, whatever matched
}

TEST(Selection, EveryRowNamesALibraryStrategyAndItsMeasurement) {
  const std::set<std::string> lab = [] {
    std::set<std::string> names;
    for (const Strategy* s : lab::strategies()) names.insert(s->name);
    return names;
  }();
  for (Backend backend : {Backend::cpu, Backend::cuda}) {
    const std::vector<SelectionStep> rows = rows_of(backend);
    EXPECT_FALSE(rows.empty()) << to_string(backend);
    for (const SelectionStep& row : rows) {
      EXPECT_FALSE(row.evidence.empty()) << row.strategy << ": a row says which measurement put it there";
      EXPECT_FALSE(row.row.empty()) << row.strategy;
      EXPECT_EQ(lab.count(row.strategy), 0u) << row.strategy << " is a lab strategy: auto never chooses those";
      if (backend == Backend::cuda && !built_with_cuda()) continue;
      const Strategy* s = find_strategy(row.strategy);
      ASSERT_NE(s, nullptr) << row.strategy << " is named by the table but not in the library";
      EXPECT_EQ(s->backend, backend) << row.strategy;
    }
  }
}

// The library is what auto can choose, plus the reference: no strategy sits in
// it that no row names.
TEST(Selection, EveryLibraryStrategyHasARow) {
  std::set<std::string> named;
  for (Backend backend : {Backend::cpu, Backend::cuda})
    for (const SelectionStep& row : rows_of(backend)) named.insert(row.strategy);
  const std::set<std::string> lab = [] {
    std::set<std::string> names;
    for (const Strategy* s : lab::strategies()) names.insert(s->name);
    return names;
  }();
  std::size_t library = 0;
  for (const Strategy* s : all_strategies()) {
    if (lab.count(s->name)) continue;
    ++library;
    EXPECT_EQ(named.count(s->name), 1u) << s->name << " is in the library but no row of the selection table names it";
  }
  EXPECT_GE(library, 2u);
}

TEST(Selection, CpuChoicesFollowTheRows) {
  const Binning f32 = Binning::even(100, 0.0, 1.0);
  EXPECT_STREQ(choose_strategy(Problem{SampleType::f32, &f32, 1000}, Backend::cpu).name, "cpu_parallel");
  Problem weighted{SampleType::f32, &f32, 1000};
  weighted.weighted = true;
  EXPECT_STREQ(choose_strategy(weighted, Backend::cpu).name, "cpu_parallel");
  Problem pixels{SampleType::u8, &kBytes, 1200, PixelLayout{3, 0x7, 400, 1, 0}};
  EXPECT_STREQ(choose_strategy(pixels, Backend::cpu).name, "cpu_serial");
  Problem weighted_pixels = pixels;
  weighted_pixels.weighted = true;
  EXPECT_STREQ(choose_strategy(weighted_pixels, Backend::cpu).name, "cpu_serial");
  // The steps say why each row did or did not take the problem.
  const std::vector<SelectionStep> steps = explain_choice(weighted, Backend::cpu);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_FALSE(steps[0].matched);
  EXPECT_NE(steps[0].why.find("weights"), std::string::npos) << steps[0].why;
  EXPECT_TRUE(steps[1].chosen);
  EXPECT_EQ(steps[1].strategy, "cpu_parallel");
  EXPECT_FALSE(steps[2].chosen);
}

TEST(Selection, WithoutADeviceNoCudaRowMatches) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  for (const SelectionStep& row : rows_of(Backend::cuda)) {
    EXPECT_FALSE(row.chosen) << row.strategy;
    EXPECT_FALSE(row.why.empty());
  }
  EXPECT_THROW(choose_strategy(Problem{SampleType::u8, &kBytes, 10}, Backend::cuda), Error);
}

}  // namespace
}  // namespace levelhist::test
