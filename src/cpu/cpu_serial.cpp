// cpu_serial: one loop, one counter per bin. Listing 1 of Wilt, "Histograms
// in CUDA: Privatized for Fast, Level Performance" (part 1), generalized
// to every sample type through the shared BinIndexer. It is the reference
// every other strategy is tested against, so it stays as plain as possible.
//
// It also takes every problem a strategy can be asked (every capability of
// strategy.hpp): interleaved pixels in rows, one histogram per active channel;
// weighted sums in double, added in sample order, or deterministic ones
// (core/fixed_point.hpp), and sums of squares; batches of segments and tiles,
// segment by segment; N-d points, one slot per combination of the axes' slots.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/fixed_point.hpp"
#include "core/pixels.hpp"
#include "core/strategies.hpp"

namespace levelhist::strategies {
namespace {

bool supports(const Problem&, std::string*) { return true; }
std::size_t no_workspace(const Problem&) { return 0; }

template <class T>
T load(const unsigned char* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));  // any alignment
  return x;
}

// Plain counts: the original loop.
template <class T>
void count_plain(const RunArgs& a) {
  const unsigned char* bytes = static_cast<const unsigned char*>(a.samples);
  for (std::uint64_t i = 0; i < a.n; ++i) a.slots[a.indexer.slot(static_cast<double>(load<T>(bytes + i * sizeof(T))))] += 1;
}

// Rows of pixels of interleaved channels (a plain array is one row of
// one-channel pixels), counts or weighted sums (one weight per pixel).
template <class T, class W>
void count_general(const RunArgs& a) {
  const detail::PixelGeometry g = detail::geometry_of(a.layout, a.n, sizeof(T));
  const std::uint64_t slots = a.binning->slots();
  const unsigned char* image = static_cast<const unsigned char*>(a.samples);
  const unsigned char* weights = static_cast<const unsigned char*>(a.weights);
  // Deterministic sums: integer quanta per slot (core/fixed_point.hpp), then one conversion.
  const bool exact = a.deterministic;
  const int e = exact ? fixed::exponent_of(*a.weight_bound) : 0;
  const fixed::Quantizer quantize(e), quantize_square(2 * e);
  const std::uint64_t values = slots * detail::active_count(a.layout);
  std::vector<fixed::Wide> sums(exact ? values : 0), squares(exact && a.weight_squares ? values : 0);
  std::vector<unsigned> flags(exact ? values : 0), square_flags(exact && a.weight_squares ? values : 0);
  std::uint64_t pixel = 0;  // index of the pixel in the region, row by row: its weight's index
  for (std::uint64_t r = 0; r < g.height; ++r) {
    const unsigned char* row = image + r * g.pitch;
    for (std::uint64_t x = 0; x < g.width; ++x, ++pixel) {
      for (unsigned c = 0; c < g.channels; ++c) {
        if (!(g.active >> c & 1u)) continue;
        const T v = load<T>(row + (x * g.channels + c) * sizeof(T));
        const std::uint64_t at = detail::active_rank(a.layout, c) * slots + a.indexer.slot(static_cast<double>(v));
        if constexpr (std::is_void_v<W>) {
          a.slots[at] += 1;
        } else {
          const double w = static_cast<double>(load<W>(weights + pixel * sizeof(W)));
          const double w2 = w * w;
          if (!exact) {
            a.weight_sums[at] += w;
            if (a.weight_squares) a.weight_squares[at] += w2;
            continue;
          }
          if (unsigned f = fixed::special_of(w)) flags[at] |= f;
          else sums[at].add(quantize(w));
          if (!a.weight_squares) continue;
          if (unsigned f = fixed::special_of(w2)) square_flags[at] |= f;
          else squares[at].add(quantize_square(w2));
        }
      }
    }
  }
  if constexpr (!std::is_void_v<W>) {
    if (!exact) return;
    for (std::uint64_t i = 0; i < values; ++i) {
      a.weight_sums[i] += fixed::to_double(sums[i], flags[i], e);
      if (a.weight_squares) a.weight_squares[i] += fixed::to_double(squares[i], square_flags[i], 2 * e);
    }
  }
}

// A batch of segments: each segment's samples into its own histogram.
template <class T>
void count_segments(const RunArgs& a) {
  const unsigned char* bytes = static_cast<const unsigned char*>(a.samples);
  const std::uint64_t slots = a.binning->slots();
  for (std::uint64_t s = 0; s < a.batch.segments; ++s) {
    std::uint64_t begin = s * a.batch.segment_length, end = begin + a.batch.segment_length;
    if (a.batch.offsets) {
      begin = std::min(a.batch.offsets[s], a.n);
      end = std::min(a.batch.offsets[s + 1], a.n);
    }
    std::uint64_t* h = a.slots + s * slots;
    for (std::uint64_t i = begin; i < end; ++i) h[a.indexer.slot(static_cast<double>(load<T>(bytes + i * sizeof(T))))] += 1;
  }
}

// A batch of tiles: each pixel into the histogram of the tile it lies in.
template <class T>
void count_tiles(const RunArgs& a) {
  const detail::PixelGeometry g = detail::geometry_of(a.layout, a.n, sizeof(T));
  const std::uint64_t slots = a.binning->slots();
  const BatchArgs& b = a.batch;
  const unsigned char* image = static_cast<const unsigned char*>(a.samples);
  for (std::uint64_t r = 0; r < g.height; ++r) {
    const unsigned char* row = image + r * g.pitch;
    const std::uint64_t tile_row = r / b.tile_height;
    for (std::uint64_t x = 0; x < g.width; ++x) {
      const std::uint64_t tile = tile_row * b.tile_cols + x / b.tile_width;
      a.slots[tile * slots + a.indexer.slot(static_cast<double>(load<T>(row + x * sizeof(T))))] += 1;
    }
  }
}

// N-d points: the slot of each coordinate on its axis, combined axis 0 slowest.
template <class T>
void count_axes(const RunArgs& a) {
  const AxesArgs& ax = a.axes;
  for (std::uint64_t i = 0; i < a.n; ++i) {
    std::uint64_t at = 0;
    for (unsigned k = 0; k < ax.count; ++k) {
      const T v = load<T>(static_cast<const unsigned char*>(ax.columns[k]) + i * ax.stride);
      at = at * ax.binnings[k]->slots() + ax.indexers[k].slot(static_cast<double>(v));
    }
    a.slots[at] += 1;
  }
}

std::uint64_t output_values(const RunArgs& a) {
  if (a.axes.count > 1) {
    std::uint64_t s = 1;
    for (unsigned k = 0; k < a.axes.count; ++k) s *= a.axes.binnings[k]->slots();
    return s;
  }
  if (a.batch.kind != BatchKind::none) return a.binning->slots() * a.batch.segments;
  return a.binning->slots() * detail::active_count(a.layout);
}

void run(const RunArgs& a) {
  const bool weighted = a.weight_sums != nullptr;
  const std::uint64_t values = output_values(a);
  if (!a.accumulate) {
    if (weighted) std::memset(a.weight_sums, 0, values * sizeof(double));
    if (weighted && a.weight_squares) std::memset(a.weight_squares, 0, values * sizeof(double));
    if (!weighted) std::memset(a.slots, 0, values * sizeof(std::uint64_t));
  }
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (a.axes.count > 1) count_axes<T>(a);
    else if (a.batch.kind == BatchKind::tiles) count_tiles<T>(a);
    else if (a.batch.kind != BatchKind::none) count_segments<T>(a);
    else if (!weighted && a.layout.is_plain()) count_plain<T>(a);
    else if (!weighted) count_general<T, void>(a);
    else if (a.weight_type == SampleType::f64) count_general<T, double>(a);
    else count_general<T, float>(a);
  });
}

}  // namespace

const Strategy cpu_serial{"cpu_serial",
                          Backend::cpu,
                          "one loop, one 64-bit counter per bin (the reference)",
                          "Wilt part 1, Listing 1",
                          supports,
                          no_workspace,
                          run,
                          nullptr,
                          kCapabilityPixels | kCapabilityWeights | kCapabilitySegments | kCapabilityTiles |
                              kCapabilityAxes | kCapabilityDeterministic | kCapabilitySquares};

}  // namespace levelhist::strategies
