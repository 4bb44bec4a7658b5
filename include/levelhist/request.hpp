// levelhist: what to count. One Request type describes every histogram
// levelhist computes: plain arrays, interleaved pixels in rows, weighted sums.
// A Plan (plan.hpp) resolves a Request once; each call then passes an Input:
// where this call's samples (and weights) are and how many.
//
//   Request r = Request::counts(SampleType::f32, Binning::even(100, 0.0, 1.0));
//   Request p = Request::pixels(SampleType::u8, /*channels=*/4, /*active=*/0b0111, Binning::per_value(SampleType::u8));
//   Request w = Request::weighted(SampleType::f32, SampleType::f64, Binning::even(64, -1.0, 1.0));
//
// Adding a request kind (a batch of segments, several axes) is one field here
// and its validation in src/core/request.cpp (docs/ARCHITECTURE.md).
#pragma once
#include <cstdint>
#include <optional>

#include "levelhist/binning.hpp"
#include "levelhist/sample_type.hpp"

namespace levelhist {

// Interleaved pixels in rows (an image, or a region of interest of one). The
// default describes a plain 1-D array of samples.
struct PixelLayout {
  std::uint32_t channels = 1;   // interleaved samples per pixel, 1..4
  std::uint32_t active = 0x1;   // bit c set: histogram channel c (one histogram per set bit, ascending)
  std::uint64_t width = 0;      // pixels per row; 0: the whole input is one row of n / channels pixels
  std::uint64_t height = 1;     // rows
  std::uint64_t row_pitch = 0;  // bytes from one row's first sample to the next's; 0: packed rows
  bool is_plain() const { return channels == 1 && active == 0x1 && width == 0 && height == 1 && row_pitch == 0; }
  friend bool operator==(const PixelLayout&, const PixelLayout&) = default;
};

struct Request {
  SampleType type = SampleType::u8;
  Binning binning;  // every histogram of the request has these bins
  // Plain arrays: the default. Pixels: `channels` and `active` fix which
  // histograms there are; width, height and row_pitch describe the frame the
  // plan is made for, and each call may pass another frame (Input::frame).
  PixelLayout layout = {};
  // Set: each sample (each pixel) carries a weight of this type (f32 or f64)
  // and the histogram holds sums of weights instead of counts.
  std::optional<SampleType> weight_type;

  static Request counts(SampleType type, Binning binning);
  static Request pixels(SampleType type, std::uint32_t channels, std::uint32_t active, Binning binning);
  static Request weighted(SampleType type, SampleType weight_type, Binning binning);

  bool is_pixels() const { return !layout.is_plain(); }
  bool is_weighted() const { return weight_type.has_value(); }
  // One histogram per active channel (one for a plain array).
  unsigned histograms() const;
  // Values a call writes: histograms() x binning.slots().
  std::uint64_t output_slots() const { return histograms() * binning.slots(); }

  // Throws Error(usage) naming what is wrong: channels outside 1..4, no active
  // channel or one beyond the channels, a row pitch shorter than a row, a weight
  // type other than f32 or f64.
  void validate() const;
  friend bool operator==(const Request&, const Request&) = default;
};

// One call's data: host memory for host entry points, device memory for the
// device ones. Any alignment.
struct Input {
  const void* samples = nullptr;
  // Plain arrays: the number of samples.
  std::uint64_t n = 0;
  // Pixel requests: this frame's width, height and row_pitch (channels and
  // active come from the request). Its samples are width x height x channels.
  PixelLayout frame = {};
  // Weighted requests: one weight of the request's weight type per sample (per
  // pixel for pixels), in the order of the samples.
  const void* weights = nullptr;

  static Input array(const void* samples, std::uint64_t n, const void* weights = nullptr) {
    Input in;
    in.samples = samples;
    in.n = n;
    in.weights = weights;
    return in;
  }
  static Input image(const void* pixels, std::uint64_t width, std::uint64_t height, std::uint64_t row_pitch = 0) {
    Input in;
    in.samples = pixels;
    in.frame.width = width;
    in.frame.height = height;
    in.frame.row_pitch = row_pitch;
    return in;
  }
};

}  // namespace levelhist
