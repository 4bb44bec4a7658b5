// levelhist: the storage. A histogram owns its binning (the axis) and one value
// per counter slot: the bins, then underflow, overflow and NaN. One design
// serves counts and weighted sums (as Boost.Histogram's storages do): the value
// type is a 64-bit count or a double sum of weights.
//
//   Histogram          counts, exact at any input size (64-bit)
//   WeightedHistogram  sums of weights in double precision. The CPU reference
//                      (cpu_serial) adds in sample order; parallel strategies add
//                      in an order that depends on the hardware, so their sums can
//                      differ from it (and from run to run) in the last bits, by at
//                      most about n * 2^-53 relative to the sum of |weights| of the
//                      slot. NaN and infinite weights propagate into their slot.
//                      Request::deterministic sums are bit-identical everywhere
//                      instead (request.hpp says how, and their error bound).
#pragma once
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "levelhist/binning.hpp"
#include "levelhist/error.hpp"

namespace levelhist {

template <class Value>
class BasicHistogram {
  static_assert(std::is_same_v<Value, std::uint64_t> || std::is_same_v<Value, double>,
                "levelhist: a histogram holds 64-bit counts or double sums");

 public:
  using value_type = Value;

  BasicHistogram() : BasicHistogram(Binning()) {}
  explicit BasicHistogram(Binning binning) : binning_(std::move(binning)), slots_(binning_.slots(), Value{0}) {}

  const Binning& binning() const { return binning_; }
  std::uint64_t bins() const { return binning_.bins(); }

  // The regular bins only, and one of them.
  std::span<const Value> values() const { return {slots_.data(), binning_.bins()}; }
  Value value(std::uint64_t bin) const { return slots_[bin]; }
  Value underflow() const { return slots_[binning_.underflow_slot()]; }
  Value overflow() const { return slots_[binning_.overflow_slot()]; }
  Value nan() const { return slots_[binning_.nan_slot()]; }
  // Everything counted, in bins or not; and the regular bins alone.
  Value total() const { return std::accumulate(slots_.begin(), slots_.end(), Value{0}); }
  Value in_range() const { return std::accumulate(slots_.begin(), slots_.begin() + binning_.bins(), Value{0}); }

  // The names of each storage: counts of a Histogram, sums of a WeightedHistogram.
  std::span<const Value> counts() const requires std::is_integral_v<Value> { return values(); }
  Value count(std::uint64_t bin) const requires std::is_integral_v<Value> { return value(bin); }
  std::span<const Value> sums() const requires std::is_floating_point_v<Value> { return values(); }
  Value sum(std::uint64_t bin) const requires std::is_floating_point_v<Value> { return value(bin); }

  // All counter slots (bins, underflow, overflow, NaN): what backends write.
  std::span<Value> slots() { return slots_; }
  std::span<const Value> slots() const { return slots_; }

  void clear() { std::fill(slots_.begin(), slots_.end(), Value{0}); }
  // Adds another histogram of the same binning, slot by slot.
  BasicHistogram& operator+=(const BasicHistogram& other) {
    if (!(binning_ == other.binning_))
      throw Error(ErrorKind::usage, "cannot add histograms with different binnings",
                  "add only histograms made with the same Binning", ErrorSubject::binning);
    for (std::size_t i = 0; i < slots_.size(); ++i) slots_[i] += other.slots_[i];
    return *this;
  }
  friend bool operator==(const BasicHistogram&, const BasicHistogram&) = default;

 private:
  Binning binning_;
  std::vector<Value> slots_;
};

using Histogram = BasicHistogram<std::uint64_t>;
using WeightedHistogram = BasicHistogram<double>;

// An N-d histogram of counts (Request::joint): 2 to 4 axes, one 64-bit count
// per combination of the axes' slots (each axis: its bins, then underflow,
// overflow and NaN), axis 0 slowest, as numpy.histogramdd lays out its bins.
// A point outside an axis's bins is kept in that axis's flow slot, so nothing
// is dropped; numpy.histogramdd's array is the regular part, at(i, j, ...)
// for bins i < bins_0, j < bins_1, ...
class HistogramNd {
 public:
  HistogramNd() = default;
  explicit HistogramNd(std::vector<Binning> axes) : axes_(std::move(axes)) {
    if (axes_.size() < 2 || axes_.size() > 4)
      throw Error(ErrorKind::usage, "an N-d histogram has 2 to 4 axes, not " + std::to_string(axes_.size()),
                  "give 2 to 4 binnings", ErrorSubject::axes);
    std::uint64_t n = 1;
    for (const Binning& b : axes_) n *= b.slots();
    slots_.assign(n, 0);
  }

  const std::vector<Binning>& axes() const { return axes_; }
  unsigned rank() const { return static_cast<unsigned>(axes_.size()); }

  // The flat index of a combination of per-axis slots (each below its axis's slots()).
  std::uint64_t index(std::span<const std::uint64_t> slot_per_axis) const {
    std::uint64_t at = 0;
    for (std::size_t a = 0; a < axes_.size(); ++a) at = at * axes_[a].slots() + slot_per_axis[a];
    return at;
  }
  // The count of a combination of per-axis slots: at(i, j) for 2 axes.
  template <class... Slot>
  std::uint64_t at(Slot... slot) const {
    const std::uint64_t s[] = {static_cast<std::uint64_t>(slot)...};
    return slots_[index(std::span<const std::uint64_t>(s, sizeof...(Slot)))];
  }

  // Every point counted, and the points inside every axis's bins.
  std::uint64_t total() const { return std::accumulate(slots_.begin(), slots_.end(), std::uint64_t{0}); }
  std::uint64_t in_range() const {
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < slots_.size(); ++i) {
      std::uint64_t rest = i;
      bool inside = true;
      for (std::size_t a = axes_.size(); a-- > 0;) {
        inside = inside && rest % axes_[a].slots() < axes_[a].bins();
        rest /= axes_[a].slots();
      }
      if (inside) sum += slots_[i];
    }
    return sum;
  }

  std::span<std::uint64_t> slots() { return slots_; }
  std::span<const std::uint64_t> slots() const { return slots_; }
  void clear() { std::fill(slots_.begin(), slots_.end(), std::uint64_t{0}); }
  HistogramNd& operator+=(const HistogramNd& other) {
    if (!(axes_ == other.axes_))
      throw Error(ErrorKind::usage, "cannot add N-d histograms with different axes",
                  "add only histograms made with the same axes", ErrorSubject::axes);
    for (std::size_t i = 0; i < slots_.size(); ++i) slots_[i] += other.slots_[i];
    return *this;
  }
  friend bool operator==(const HistogramNd&, const HistogramNd&) = default;

 private:
  std::vector<Binning> axes_;
  std::vector<std::uint64_t> slots_;
};

}  // namespace levelhist
