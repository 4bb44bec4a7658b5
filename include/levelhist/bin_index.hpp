// levelhist: the one binning function. Every backend (CPU loops, SIMD paths,
// CUDA kernels) maps samples to counter slots through BinIndexer, so the edge
// rules of binning.hpp hold bit for bit everywhere.
#pragma once
#include <cstdint>

#include "levelhist/binning.hpp"
#include "levelhist/config.hpp"

namespace levelhist {

// A trivially copyable view of a Binning that can be passed to a kernel by
// value. For explicit edges, `edges` must point to memory the running code can
// read (host memory on the CPU, device memory on the GPU).
struct BinIndexer {
  BinKind kind;
  std::uint64_t bins;
  double lower;   // the first edge (rounding included)
  double upper;   // the last edge (rounding included)
  double step;    // even: the edge arithmetic's step, (upper - lower) / bins rounded once (Binning::step)
  double scale;   // even: bins / (upper - lower); only a first guess, corrected below
  const double* edges;
  bool last_bin_inclusive;
  EdgeRounding rounding;  // even: how edges are rounded (binning.hpp)
  double origin;          // even: the edge arithmetic's origin (Binning::origin)

  // Even edge i as numpy.linspace computes it: origin + i * step, two roundings
  // and no fused multiply-add (nvcc would contract a*b+c; the intrinsics forbid
  // it, and the host build uses -ffp-contract=off); then, for float32 edges,
  // rounded to the nearest float32 (a cast, round-to-nearest on both sides).
  // The rounding is a template argument so that a loop over edges can pick it
  // once: choosing per edge left both roundings' conversions in the GPU's rare
  // path (two double<->float conversions per edge, selected afterwards), which
  // made samples on edges 23% slower (docs/PERFORMANCE-general.md, section 5).
  template <EdgeRounding R>
  LEVELHIST_HD double even_edge_as(std::uint64_t i) const {
    if (i >= bins) return upper;
    if constexpr (R == EdgeRounding::f32_arithmetic) {
      // numpy.linspace in float32: f32(f32(f32(i) * step) + origin). Each float
      // operation is done in double and rounded once to float, which gives the
      // float result exactly: a double holds the product of two floats, and a
      // double sum of two floats rounds correctly to float (53 >= 2 * 24 + 2).
      const double product = static_cast<double>(static_cast<float>(static_cast<double>(static_cast<float>(i)) * step));
      return static_cast<double>(static_cast<float>(product + origin));
    } else {
#if defined(__CUDA_ARCH__)
      const double e = __dadd_rn(origin, __dmul_rn(static_cast<double>(i), step));
#else
      const double e = origin + static_cast<double>(i) * step;
#endif
      if constexpr (R == EdgeRounding::f32) return static_cast<double>(static_cast<float>(e));
      return e;
    }
  }
  LEVELHIST_HD double even_edge(std::uint64_t i) const {
    switch (rounding) {
      case EdgeRounding::f32: return even_edge_as<EdgeRounding::f32>(i);
      case EdgeRounding::f32_arithmetic: return even_edge_as<EdgeRounding::f32_arithmetic>(i);
      default: return even_edge_as<EdgeRounding::none>(i);
    }
  }

  LEVELHIST_HD std::uint64_t underflow_slot() const { return bins; }
  LEVELHIST_HD std::uint64_t overflow_slot() const { return bins + 1; }
  LEVELHIST_HD std::uint64_t nan_slot() const { return bins + 2; }

  // The slot of sample x: a bin in [0, bins), or underflow / overflow / NaN.
  // Every sample type converts to double exactly, so one function serves all.
  LEVELHIST_HD std::uint64_t slot(double x) const {
    if (x != x) return nan_slot();
    if (x < lower) return underflow_slot();
    if (x >= upper) return (last_bin_inclusive && x == upper) ? bins - 1 : overflow_slot();
    if (kind == BinKind::even) {
      // First guess from one multiply, then step to the exact bin: the guess is
      // off by at most one for any bins <= 2^28, the loops make it exact anyway.
      double t = (x - lower) * scale;
      std::uint64_t b = t < static_cast<double>(bins) ? static_cast<std::uint64_t>(t) : bins - 1;
      while (b > 0 && x < even_edge(b)) --b;
      while (b + 1 < bins && x >= even_edge(b + 1)) ++b;
      return b;
    }
    // Explicit edges: the last edge e_i <= x, by binary search over e_0..e_k.
    std::uint64_t lo = 0, hi = bins;  // invariant: edges[lo] <= x < edges[hi]
    while (hi - lo > 1) {
      std::uint64_t mid = lo + (hi - lo) / 2;
      if (x < edges[mid]) hi = mid; else lo = mid;
    }
    return lo;
  }
};

// The indexer for a Binning whose explicit edges (if any) live at `edges`
// (defaults to the Binning's own host copy).
BinIndexer make_indexer(const Binning& binning, const double* edges = nullptr);

}  // namespace levelhist
