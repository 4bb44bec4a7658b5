// levelhist: what to count. One Request type describes every histogram
// levelhist computes: plain arrays, interleaved pixels in rows, weighted sums.
// A Plan (plan.hpp) resolves a Request once; each call then passes an Input:
// where this call's samples (and weights) are and how many.
//
//   Request r = Request::counts(SampleType::f32, Binning::even(100, 0.0, 1.0));
//   Request p = Request::pixels(SampleType::u8, /*channels=*/4, /*active=*/0b0111, Binning::per_value(SampleType::u8));
//   Request w = Request::weighted(SampleType::f32, SampleType::f64, Binning::even(64, -1.0, 1.0));
//   Request s = Request::segments(SampleType::u8, Binning::per_value(SampleType::u8), /*segments=*/1000);
//   Request t = Request::tiles(SampleType::u8, Binning::per_value(SampleType::u8), /*rows=*/8, /*cols=*/8);
//   Request j = Request::joint(SampleType::u8, {Binning::per_value(SampleType::u8), Binning::per_value(SampleType::u8)});
//
// Adding a request kind is one field here and its validation in
// src/core/request.cpp (docs/ARCHITECTURE.md).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

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

// Batches: one call counts several independent histograms of one binning
// (tiles of an image, rows of a matrix, the samples of each item of a batch).
// The output is one histogram per segment (or tile), segment by segment.
enum class BatchKind : std::uint8_t {
  none,     // one histogram (per active channel)
  equal,    // `segments` segments of equal length: a call's n samples are segments x length
  offsets,  // `segments` segments given by each call's Input::offsets (segments + 1 offsets, as
            // CUB's segmented reductions take them: segment s is samples [offsets[s], offsets[s+1]))
  tiles,    // a grid of tile_rows x tile_cols tiles over each call's frame (Input::image): tiles of
            // ceil(width / tile_cols) x ceil(height / tile_rows) pixels, the last column and row of
            // tiles smaller (or empty) where the grid does not divide the frame; tile (r, c) is
            // histogram r * tile_cols + c
};

struct Batch {
  BatchKind kind = BatchKind::none;
  std::uint64_t segments = 1;   // equal, offsets: the number of segments (>= 1)
  std::uint32_t tile_rows = 1;  // tiles: the grid
  std::uint32_t tile_cols = 1;
  bool is_none() const { return kind == BatchKind::none; }
  // Histograms the batch makes.
  std::uint64_t count() const {
    return kind == BatchKind::none ? 1 : kind == BatchKind::tiles ? std::uint64_t{tile_rows} * tile_cols : segments;
  }
  friend bool operator==(const Batch&, const Batch&) = default;
};

// The largest number of axes of an N-d request.
inline constexpr unsigned kMaxAxes = 4;

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
  // Weighted requests: sums that are bit-identical on every run, strategy and
  // grid size. Each weight is rounded to a multiple of 2^(E - 40), where 2^E is
  // the smallest power of two above the call's largest finite |weight|, and
  // the multiples are added as integers (exactly, in any order); each slot's
  // integer sum becomes a double once, at the end of the call. The error is at
  // most 2^-41 x (largest |weight|) per weight, so at most count x 2^-41 x
  // (largest |weight|) per slot, plus the final rounding to double.
  // NaN and infinite weights still propagate into their slot. Off: sums in
  // double in an order that depends on the hardware (histogram.hpp).
  bool deterministic = false;
  // Weighted requests: also the sums of the squared weights (boost-histogram's
  // Weight storage: the variance estimate of each slot, for error bars). A call
  // then writes the sums of all histograms, then the sums of squares.
  bool weight_squares = false;
  // Batches: several histograms per call (BatchKind). Plain one-channel counts only.
  Batch batch = {};
  // N-d histograms: 2 to 4 axes; each point has one coordinate per axis, all of
  // `type`, and the histogram one slot per combination of the axes' slots
  // (bins + 3 per axis: each axis keeps its underflow, overflow and NaN), axis
  // 0 slowest (numpy.histogramdd's order). `binning` is then axes[0]. Empty:
  // one axis, `binning`. Counts only, no pixels or batches.
  std::vector<Binning> axes;

  static Request counts(SampleType type, Binning binning);
  static Request pixels(SampleType type, std::uint32_t channels, std::uint32_t active, Binning binning);
  static Request weighted(SampleType type, SampleType weight_type, Binning binning);
  // `segments` histograms per call: equal segments of each call's samples.
  static Request segments(SampleType type, Binning binning, std::uint64_t segments);
  // `segments` histograms per call, their bounds in Input::offsets.
  static Request segments_by_offsets(SampleType type, Binning binning, std::uint64_t segments);
  // rows x cols tile histograms of each call's frame (Input::image).
  static Request tiles(SampleType type, Binning binning, std::uint32_t rows, std::uint32_t cols);
  // The joint histogram of 2 to 4 coordinates per point, one binning per axis.
  static Request joint(SampleType type, std::vector<Binning> axes);
  static Request joint(SampleType type, std::initializer_list<Binning> axes) {
    return joint(type, std::vector<Binning>(axes));
  }

  bool is_pixels() const { return !layout.is_plain(); }
  bool is_weighted() const { return weight_type.has_value(); }
  bool is_batch() const { return !batch.is_none(); }
  bool is_nd() const { return !axes.empty(); }
  // The number of axes: 1, or axes.size().
  unsigned axis_count() const { return axes.empty() ? 1u : static_cast<unsigned>(axes.size()); }
  // One histogram per active channel (one for a plain array), per segment or
  // tile for batches.
  std::uint64_t histograms() const;
  // Counter slots of one histogram: binning.slots(), or the product of the
  // axes' slots for N-d requests.
  std::uint64_t histogram_slots() const;
  // Values a call writes: histograms() x histogram_slots(), twice that with
  // weight_squares (the sums, then the sums of squares).
  std::uint64_t output_slots() const { return histograms() * histogram_slots() * (weight_squares ? 2 : 1); }

  // Throws Error(usage) naming what is wrong: channels outside 1..4, no active
  // channel or one beyond the channels, a row pitch shorter than a row, a weight
  // type other than f32 or f64, deterministic sums or squares without weights,
  // a batch of no segments or combined with pixels, weights or axes, fewer
  // than 2 or more than 4 axes, an N-d request whose binning is not axes[0],
  // or whose slots do not fit 2^32 (Error(input) then).
  void validate() const;
  friend bool operator==(const Request&, const Request&) = default;
};

// One call's data: host memory for host entry points, device memory for the
// device ones. Any alignment.
struct Input {
  const void* samples = nullptr;
  // Plain arrays: the number of samples. N-d requests: the number of points.
  std::uint64_t n = 0;
  // Pixel requests: this frame's width, height and row_pitch (channels and
  // active come from the request). Its samples are width x height x channels.
  PixelLayout frame = {};
  // Weighted requests: one weight of the request's weight type per sample (per
  // pixel for pixels), in the order of the samples.
  const void* weights = nullptr;
  // Batches by offsets: segments + 1 offsets into the samples, non-decreasing,
  // at most n. Host entry points check them (Error(input)); device entry points
  // cannot without a copy to the host: there offsets beyond n count as n, and
  // offsets that are not non-decreasing give unspecified counts, but nothing
  // outside the input is read and nothing outside the output written.
  const std::uint64_t* offsets = nullptr;
  // N-d requests with the coordinates in separate arrays: columns[a] holds the
  // n coordinates of axis a (samples is then unused). Without them, `samples`
  // holds the n points' coordinates interleaved (x0, y0, x1, y1, ...).
  const void* columns[kMaxAxes] = {};

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
  static Input segments(const void* samples, std::uint64_t n, const std::uint64_t* offsets) {
    Input in = array(samples, n);
    in.offsets = offsets;
    return in;
  }
  // N-d points from one array per axis, n coordinates each.
  static Input columns_of(std::initializer_list<const void*> columns, std::uint64_t n) {
    Input in;
    in.n = n;
    unsigned a = 0;
    for (const void* c : columns)
      if (a < kMaxAxes) in.columns[a++] = c;
    in.samples = in.columns[0];
    return in;
  }
  bool has_columns() const { return columns[0] != nullptr; }
};

}  // namespace levelhist
