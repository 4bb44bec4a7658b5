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
//    A sample exactly on an edge lands in the bin above it, rounding included;
//  * even bins may have their edges rounded to float32 (EdgeRounding), as
//    numpy.histogram builds them for float32 samples: samples are then compared
//    with those float32 edges. lower() and upper() are always the first and the
//    last edge, rounding included.
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

// How even edges are rounded: numpy.histogram computes the edges of float32
// samples in float32 (numpy.linspace(..., dtype=float32)), so a float32 sample
// equal to float32(edge) lands one bin higher than against the double edge
// (np.histogram(np.float32([0.7]), 10, (0, 1)) puts it in bin 7).
enum class EdgeRounding : std::uint8_t {
  none,            // double edges: lower + i * step (numpy for float64 and integer samples)
  f32,             // each double edge rounded to the nearest float32 (numpy for float32
                   // samples and a range given as Python floats: linspace in double, then cast)
  f32_arithmetic,  // numpy.linspace evaluated in float32: the bounds rounded to float32, then
                   // e_i = f32(f32(i * s) + lower) with s = f32(f32(upper - lower) / k)
                   // (numpy for float32 samples whose range comes from their min and max)
};

// The largest number of bins a Binning accepts (counters are 64-bit each).
inline constexpr std::uint64_t kMaxBins = std::uint64_t{1} << 28;

class Binning {
 public:
  // k even bins over [lower, upper). Throws Error(input) unless 1 <= k <= kMaxBins,
  // both bounds are finite and lower < upper. With a rounding other than none,
  // the edges rounded to float32 must also be finite and strictly increasing
  // (numpy raises "Too many bins for data range" otherwise).
  static Binning even(std::uint64_t bins, double lower, double upper, bool last_bin_inclusive = false,
                      EdgeRounding rounding = EdgeRounding::none);
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
  // The first and the last edge (for rounded even edges: after rounding).
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  bool last_bin_inclusive() const { return last_bin_inclusive_; }
  EdgeRounding rounding() const { return rounding_; }
  // Even bins: the origin and the step of the edge arithmetic, e_i = origin +
  // i * step before any rounding (origin is lower() unless rounding is f32).
  double origin() const { return origin_; }
  double step() const { return step_; }
  // Explicit edges (empty for even bins).
  const std::vector<double>& edge_values() const { return edges_; }
  // Edge i, 0 <= i <= bins(), exactly as the bin-index function sees it.
  double edge(std::uint64_t i) const;
  // True when every bin holds exactly one integer value (per_value, or even
  // bins of width 1 on integer bounds, not rounded): for INTEGER samples,
  // kernels may use x - lower as the index (for floats x - lower rounds: use
  // BinIndexer::slot).
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
  EdgeRounding rounding_ = EdgeRounding::none;
  double origin_ = 0.0;
  double step_ = 1.0;
  std::vector<double> edges_;
};

}  // namespace levelhist
