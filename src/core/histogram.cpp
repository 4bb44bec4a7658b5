#include "levelhist/histogram.hpp"

#include <algorithm>
#include <numeric>

#include "levelhist/error.hpp"

namespace levelhist {

std::uint64_t Histogram::total() const { return std::accumulate(slots_.begin(), slots_.end(), std::uint64_t{0}); }

std::uint64_t Histogram::in_range() const {
  auto c = counts();
  return std::accumulate(c.begin(), c.end(), std::uint64_t{0});
}

void Histogram::clear() { std::fill(slots_.begin(), slots_.end(), 0); }

Histogram& Histogram::operator+=(const Histogram& other) {
  if (!(binning_ == other.binning_))
    throw Error(ErrorKind::usage, "cannot add histograms with different binnings");
  for (std::size_t i = 0; i < slots_.size(); ++i) slots_[i] += other.slots_[i];
  return *this;
}

}  // namespace levelhist
