// levelhist: fast, level histograms on CPUs and NVIDIA GPUs.
//
//   std::vector<std::uint8_t> bytes = ...;
//   levelhist::Histogram h = levelhist::histogram<std::uint8_t>(bytes);   // 256 bins
//   levelhist::Histogram g = levelhist::histogram<float>(values, levelhist::Binning::even(100, 0.0, 1.0));
//
// The functions below take host memory and are thin wrappers around a Plan
// (plan.hpp): each resolves its request through a small per-process cache of
// plans, so a program counting frame after frame pays the resolution once. A
// program that knows its request up front can hold the Plan itself; device
// pointers go through Plan::run (or the CUB-style wrappers of cuda.hpp).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "levelhist/binning.hpp"
#include "levelhist/error.hpp"
#include "levelhist/histogram.hpp"
#include "levelhist/plan.hpp"
#include "levelhist/request.hpp"
#include "levelhist/sample_type.hpp"
#include "levelhist/source.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist {

// Adds n samples of `type` at `samples` (host memory, any alignment) into `hist`
// (its counts are kept: call hist.clear() first for a fresh count). Returns the
// strategy that ran.
const Strategy& fill(Histogram& hist, SampleType type, const void* samples, std::uint64_t n,
                     const Options& options = {});

// A new histogram of the samples.
Histogram histogram(SampleType type, const void* samples, std::uint64_t n, const Binning& binning,
                    const Options& options = {});

template <class T>
Histogram histogram(std::span<const T> samples, const Binning& binning, const Options& options = {}) {
  return histogram(sample_type_of<T>(), samples.data(), samples.size(), binning, options);
}
// One bin per value (8- and 16-bit types only).
template <class T>
Histogram histogram(std::span<const T> samples, const Options& options = {}) {
  return histogram(samples, Binning::default_for(sample_type_of<T>()), options);
}

// ---- interleaved pixels (images, regions of interest) ----------------------
// One histogram per active channel of an image (layout.active, ascending
// channel order), all with `binning`. `pixels` (host memory, any alignment)
// points at the first sample of the region of interest: layout.width pixels of
// layout.channels interleaved samples per row, layout.height rows,
// layout.row_pitch bytes from one row's start to the next in the larger image
// (0: packed rows). Throws Error(usage) for a bad layout: channels outside
// 1..4, no active channel or one >= channels, width 0, a pitch below
// width * channels * sample size.
std::vector<Histogram> histogram_pixels(SampleType type, const void* pixels, const PixelLayout& layout,
                                        const Binning& binning, const Options& options = {});
// Adds the pixels into `hists` (one per active channel, all of one binning;
// their counts are kept). Returns the strategy that ran. One channel in packed
// rows is counted as a plain array, by any strategy (levelhist::fill).
const Strategy& fill_pixels(std::span<Histogram> hists, SampleType type, const void* pixels, const PixelLayout& layout,
                            const Options& options = {});

// ---- weighted histograms ---------------------------------------------------
// Sums of the weights (one per sample, f32 or f64, host memory, any
// alignment) per slot, in double precision (weighted_histogram.hpp). Throws
// Error(usage) for a weight type other than f32 or f64.
WeightedHistogram histogram_weighted(SampleType type, const void* samples, std::uint64_t n, SampleType weight_type,
                                     const void* weights, const Binning& binning, const Options& options = {});
// Adds into `hist` (its sums are kept). Returns the strategy that ran.
const Strategy& fill_weighted(WeightedHistogram& hist, SampleType type, const void* samples, std::uint64_t n,
                              SampleType weight_type, const void* weights, const Options& options = {});

// The strategy a plan for `problem` with `options` runs (the backend follows from it).
const Strategy& resolve_strategy(const Problem& problem, const Options& options);

const char* version();

}  // namespace levelhist
