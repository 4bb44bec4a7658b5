#include "levelhist/weighted_histogram.hpp"

#include <algorithm>
#include <numeric>

#include "levelhist/error.hpp"

namespace levelhist {

double WeightedHistogram::total() const { return std::accumulate(slots_.begin(), slots_.end(), 0.0); }

double WeightedHistogram::in_range() const {
  auto s = sums();
  return std::accumulate(s.begin(), s.end(), 0.0);
}

void WeightedHistogram::clear() { std::fill(slots_.begin(), slots_.end(), 0.0); }

WeightedHistogram& WeightedHistogram::operator+=(const WeightedHistogram& other) {
  if (!(binning_ == other.binning_))
    throw Error(ErrorKind::usage, "cannot add weighted histograms with different binnings");
  for (std::size_t i = 0; i < slots_.size(); ++i) slots_[i] += other.slots_[i];
  return *this;
}

}  // namespace levelhist
