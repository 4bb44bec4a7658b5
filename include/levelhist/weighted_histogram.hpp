// levelhist: the storage of a weighted histogram. Like Histogram, it owns its
// binning and one value per slot (bins, then underflow, overflow and NaN), but
// each slot holds the sum of the weights of the samples that fell into it, as
// a double.
//
// Sums are accumulated in double precision. The CPU reference (cpu_serial)
// adds in sample order; parallel strategies add in an order that depends on
// the hardware, so their sums can differ from it (and from run to run) in the
// last bits, by at most about n * 2^-53 relative to the sum of |weights| of
// the slot. NaN and infinite weights propagate into their slot's sum.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "levelhist/binning.hpp"

namespace levelhist {

class WeightedHistogram {
 public:
  WeightedHistogram() = default;
  explicit WeightedHistogram(Binning binning) : binning_(std::move(binning)), slots_(binning_.slots(), 0.0) {}

  const Binning& binning() const { return binning_; }
  std::uint64_t bins() const { return binning_.bins(); }

  // The sums of the regular bins only.
  std::span<const double> sums() const { return {slots_.data(), binning_.bins()}; }
  double sum(std::uint64_t bin) const { return slots_[bin]; }
  double underflow() const { return slots_[binning_.underflow_slot()]; }
  double overflow() const { return slots_[binning_.overflow_slot()]; }
  double nan() const { return slots_[binning_.nan_slot()]; }
  // The sum of every slot: every weight counted, in bins or not.
  double total() const;
  // The sum of the regular bins.
  double in_range() const;

  // All slots (bins, underflow, overflow, NaN): what backends write.
  std::span<double> slots() { return slots_; }
  std::span<const double> slots() const { return slots_; }

  void clear();
  WeightedHistogram& operator+=(const WeightedHistogram& other);  // same binning required
  friend bool operator==(const WeightedHistogram&, const WeightedHistogram&) = default;

 private:
  Binning binning_;
  std::vector<double> slots_;
};

}  // namespace levelhist
