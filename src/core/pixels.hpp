// Internal helpers for interleaved pixels (request.hpp's PixelLayout): the
// histograms a layout asks for, and the geometry a strategy derives from a
// layout and its sample count. Requests are validated by Request::validate.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "levelhist/strategy.hpp"

namespace levelhist::detail {

// The number of histograms a layout asks for: one per active channel.
inline unsigned active_count(const PixelLayout& layout) { return static_cast<unsigned>(std::popcount(layout.active)); }

// The rank of channel c among the active ones (its histogram's index).
inline unsigned active_rank(const PixelLayout& layout, unsigned channel) {
  return static_cast<unsigned>(std::popcount(layout.active & ((1u << channel) - 1u)));
}

// A layout as rows: `width` pixels of `channels` samples in each of `height`
// rows, `pitch` bytes apart. PixelLayout::width == 0 means one row holding all
// n samples; row_pitch == 0 means packed rows.
struct PixelGeometry {
  unsigned channels = 1;
  unsigned active = 1;
  std::uint64_t width = 0;   // pixels per row
  std::uint64_t height = 0;  // rows
  std::uint64_t pitch = 0;   // bytes from one row's first sample to the next's
  std::uint64_t row_samples() const { return width * channels; }
};

inline PixelGeometry geometry_of(const PixelLayout& layout, std::uint64_t n, std::size_t sample_bytes) {
  PixelGeometry g;
  g.channels = layout.channels;
  g.active = layout.active;
  if (layout.width == 0) {
    g.width = n / layout.channels;
    g.height = g.width ? 1 : 0;
  } else {
    g.width = layout.width;
    g.height = layout.height;
  }
  g.pitch = layout.row_pitch ? layout.row_pitch : g.width * g.channels * sample_bytes;
  return g;
}

}  // namespace levelhist::detail
