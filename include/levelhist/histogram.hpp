// levelhist: the storage. A Histogram owns its binning and 64-bit counters:
// one per bin, then underflow, overflow and NaN.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "levelhist/binning.hpp"

namespace levelhist {

class Histogram {
 public:
  Histogram() : Histogram(Binning()) {}
  explicit Histogram(Binning binning)
      : binning_(std::move(binning)), slots_(binning_.slots(), 0) {}

  const Binning& binning() const { return binning_; }
  std::uint64_t bins() const { return binning_.bins(); }

  // The regular bins only.
  std::span<const std::uint64_t> counts() const { return {slots_.data(), binning_.bins()}; }
  std::uint64_t count(std::uint64_t bin) const { return slots_[bin]; }
  std::uint64_t underflow() const { return slots_[binning_.underflow_slot()]; }
  std::uint64_t overflow() const { return slots_[binning_.overflow_slot()]; }
  std::uint64_t nan() const { return slots_[binning_.nan_slot()]; }
  // Every sample counted, in bins or not.
  std::uint64_t total() const;
  // Samples in the regular bins.
  std::uint64_t in_range() const;

  // All counter slots (bins, underflow, overflow, NaN): what backends write.
  std::span<std::uint64_t> slots() { return slots_; }
  std::span<const std::uint64_t> slots() const { return slots_; }

  void clear();
  Histogram& operator+=(const Histogram& other);  // same binning required
  friend bool operator==(const Histogram&, const Histogram&) = default;

 private:
  Binning binning_;
  std::vector<std::uint64_t> slots_;
};

}  // namespace levelhist
