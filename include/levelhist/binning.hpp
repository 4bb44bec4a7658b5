// levelhist: the axis. A Binning says which bins a histogram has; BinIndexer
// (bin_index.hpp) maps one sample to one counter slot under these rules.
//
// Edge rules (the same for every backend and every sample type):
//  * every bin is half-open, [e_i, e_{i+1}), as in CUB and OpenCV;
//  * with `last_bin_inclusive` (numpy's rule) the last bin is [e_{k-1}, e_k];
//  * a sample below e_0 (or -inf) counts as underflow, a sample at or above
//    e_k (or +inf) as overflow, a NaN in its own counter: nothing is dropped;
//  * even bins have the edges e_i = lower + i * ((upper - lower) / k), each
//    operation rounded to double (numpy.linspace's arithmetic), and e_k = upper.
//    A sample exactly on an edge lands in the bin above it, rounding included.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "levelhist/sample_type.hpp"

namespace levelhist {

enum class BinKind : std::uint8_t {
  even,   // k equal bins over [lower, upper)
  edges,  // explicit, strictly increasing edges e_0 < e_1 < ... < e_k
};

// The largest number of bins a Binning accepts (counters are 64-bit each).
inline constexpr std::uint64_t kMaxBins = std::uint64_t{1} << 28;

class Binning {
 public:
  // k even bins over [lower, upper). Throws Error(input) unless 1 <= k <= kMaxBins,
  // both bounds are finite and lower < upper.
  static Binning even(std::uint64_t bins, double lower, double upper, bool last_bin_inclusive = false);
  // Explicit edges: at least two, finite, strictly increasing.
  static Binning explicit_edges(std::vector<double> edges, bool last_bin_inclusive = false);
  // One bin per value of an 8- or 16-bit type (256 or 65536 bins); the default
  // for those types. Throws Error(input) for wider types.
  static Binning per_value(SampleType type);
  // per_value for 8/16-bit types; otherwise throws Error(usage) saying bins are needed.
  static Binning default_for(SampleType type);

  Binning() = default;

  BinKind kind() const { return kind_; }
  std::uint64_t bins() const { return bins_; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  bool last_bin_inclusive() const { return last_bin_inclusive_; }
  // Explicit edges (empty for even bins).
  const std::vector<double>& edge_values() const { return edges_; }
  // Edge i, 0 <= i <= bins(), exactly as the bin-index function sees it.
  double edge(std::uint64_t i) const;
  // True when every bin holds exactly one integer value (per_value, or even
  // bins of width 1 on integer bounds): for INTEGER samples, kernels may use
  // x - lower as the index (for floats x - lower rounds: use BinIndexer::slot).
  bool unit_integer_bins() const;

  // Counter slots: bins() regular bins, then underflow, overflow and NaN.
  std::uint64_t slots() const { return bins_ + 3; }
  std::uint64_t underflow_slot() const { return bins_; }
  std::uint64_t overflow_slot() const { return bins_ + 1; }
  std::uint64_t nan_slot() const { return bins_ + 2; }

  std::string describe() const;  // e.g. "256 even bins over [0, 256)"
  friend bool operator==(const Binning&, const Binning&) = default;

 private:
  BinKind kind_ = BinKind::even;
  std::uint64_t bins_ = 1;
  double lower_ = 0.0;
  double upper_ = 1.0;
  bool last_bin_inclusive_ = false;
  std::vector<double> edges_;
};

}  // namespace levelhist
