// Requests (request.hpp): the factories, validation, and a call's geometry.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "core/plan_impl.hpp"
#include "levelhist/error.hpp"
#include "levelhist/request.hpp"

namespace levelhist {
namespace {

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

[[noreturn]] void layout_error(const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::usage, what, fix, ErrorSubject::layout);
}

}  // namespace

Request Request::counts(SampleType type, Binning binning) {
  Request r;
  r.type = type;
  r.binning = std::move(binning);
  return r;
}

Request Request::pixels(SampleType type, std::uint32_t channels, std::uint32_t active, Binning binning) {
  Request r;
  r.type = type;
  r.binning = std::move(binning);
  // One channel is a plain array in rows: every strategy can count it (rows
  // with a pitch are split or staged by the plan, not by the strategy).
  if (!(channels == 1 && active == 0x1)) {
    r.layout.channels = channels;
    r.layout.active = active;
  }
  return r;
}

Request Request::weighted(SampleType type, SampleType weight_type, Binning binning) {
  Request r;
  r.type = type;
  r.binning = std::move(binning);
  r.weight_type = weight_type;
  return r;
}

Request Request::segments(SampleType type, Binning binning, std::uint64_t segments) {
  Request r = counts(type, std::move(binning));
  r.batch.kind = BatchKind::equal;
  r.batch.segments = segments;
  return r;
}

Request Request::segments_by_offsets(SampleType type, Binning binning, std::uint64_t segments) {
  Request r = counts(type, std::move(binning));
  r.batch.kind = BatchKind::offsets;
  r.batch.segments = segments;
  return r;
}

Request Request::tiles(SampleType type, Binning binning, std::uint32_t rows, std::uint32_t cols) {
  Request r = counts(type, std::move(binning));
  r.batch.kind = BatchKind::tiles;
  r.batch.tile_rows = rows;
  r.batch.tile_cols = cols;
  r.batch.segments = std::uint64_t{rows} * cols;
  return r;
}

Request Request::joint(SampleType type, std::vector<Binning> axes) {
  Request r;
  r.type = type;
  if (!axes.empty()) r.binning = axes.front();
  r.axes = std::move(axes);
  return r;
}

std::uint64_t Request::histograms() const {
  if (is_batch()) return batch.count();
  return static_cast<unsigned>(std::popcount(layout.active));
}

std::uint64_t Request::histogram_slots() const {
  if (axes.empty()) return binning.slots();
  std::uint64_t s = 1;
  for (const Binning& b : axes) s *= b.slots();
  return s;
}

void Request::validate() const {
  if (layout.channels < 1 || layout.channels > 4)
    layout_error("a pixel has 1 to 4 interleaved channels, not " + std::to_string(layout.channels),
                 "give PixelLayout::channels from 1 to 4");
  if (layout.active == 0) layout_error("no active channel", "set at least one bit of PixelLayout::active");
  if (layout.active >> layout.channels)
    layout_error("the active channel mask " + hex(layout.active) + " names a channel beyond the " +
                     std::to_string(layout.channels) + " of each pixel (channels are 0.." +
                     std::to_string(layout.channels - 1) + ")",
                 "clear the bits of channels that do not exist");
  if (weight_type && *weight_type != SampleType::f32 && *weight_type != SampleType::f64)
    throw Error(ErrorKind::usage, "weights must be f32 or f64, not " + std::string(to_string(*weight_type)),
                "pass f32 or f64 weights", ErrorSubject::weights);
  if (!weight_type && (deterministic || weight_squares))
    throw Error(ErrorKind::usage,
                std::string(deterministic ? "deterministic sums" : "sums of squared weights") + " need weights",
                "make the request with Request::weighted", ErrorSubject::weights);
  if (is_batch()) {
    const bool tiles = batch.kind == BatchKind::tiles;
    if (tiles ? (batch.tile_rows == 0 || batch.tile_cols == 0) : batch.segments == 0)
      throw Error(ErrorKind::usage, tiles ? "a tile grid of no tiles" : "a batch of no segments",
                  tiles ? "give at least one tile row and one tile column" : "give at least one segment",
                  ErrorSubject::batch);
    if (tiles && batch.segments != std::uint64_t{batch.tile_rows} * batch.tile_cols)
      throw Error(ErrorKind::usage, "a tile batch's segments must be tile_rows x tile_cols",
                  "make the request with Request::tiles", ErrorSubject::batch);
    if (is_pixels() || weight_type || !axes.empty())
      throw Error(ErrorKind::usage,
                  std::string("a batch counts one-channel samples without weights or axes, and this request has ") +
                      (is_pixels() ? "pixels of several channels" : weight_type ? "weights" : "axes"),
                  "count the batch's segments or tiles without pixels, weights or axes", ErrorSubject::batch);
  }
  if (!axes.empty()) {
    if (axes.size() < 2 || axes.size() > kMaxAxes)
      throw Error(ErrorKind::usage, "an N-d histogram has 2 to " + std::to_string(kMaxAxes) + " axes, not " +
                                        std::to_string(axes.size()),
                  "give 2 to 4 binnings, or a plain request for one axis", ErrorSubject::axes);
    if (!(binning == axes.front()))
      throw Error(ErrorKind::usage, "an N-d request's binning is not its first axis",
                  "make the request with Request::joint", ErrorSubject::axes);
    if (is_pixels() || weight_type)
      throw Error(ErrorKind::usage,
                  std::string("an N-d histogram counts points without ") + (is_pixels() ? "pixel channels" : "weights"),
                  "count the points without channels or weights", ErrorSubject::axes);
    double slots = 1;
    for (const Binning& b : axes) slots *= static_cast<double>(b.slots());
    if (slots > 4294967296.0)
      throw Error(ErrorKind::input,
                  "the N-d histogram has " + std::to_string(static_cast<unsigned long long>(slots)) +
                      " slots (the product of each axis's bins + 3), more than 2^32",
                  "use fewer bins per axis", ErrorSubject::axes);
  }
}

namespace detail {
namespace {

// N-d points: n of them, interleaved (one item = axis_count samples) or one
// array per axis (one item = one sample of each array).
Geometry nd_geometry(const Request& request, const Input& input, Geometry g) {
  const unsigned k = request.axis_count();
  if (input.frame.width != 0 || input.offsets != nullptr)
    throw Error(ErrorKind::usage, "an N-d input is n points, not a frame or segments",
                "pass Input::array(coordinates, n) or Input::columns_of({...}, n)", ErrorSubject::axes);
  g.axes = k;
  g.separate_columns = input.has_columns();
  if (g.separate_columns) {
    for (unsigned a = 0; a < kMaxAxes; ++a)
      if ((a < k) != (input.columns[a] != nullptr) && input.n != 0)
        throw Error(ErrorKind::usage,
                    "the request has " + std::to_string(k) + " axes, and the input does not give exactly " +
                        std::to_string(k) + " columns",
                    "pass one column per axis", ErrorSubject::axes);
    g.channels = 1;
  } else {
    g.channels = k;
    if (input.n != 0 && input.samples == nullptr)
      throw Error(ErrorKind::usage, "the input's samples pointer is null", "pass the points", ErrorSubject::data);
  }
  if (input.n > std::numeric_limits<std::uint64_t>::max() / (k * g.sample_bytes))
    throw Error(ErrorKind::input, std::to_string(input.n) + " points are too many", "", ErrorSubject::data);
  g.width = input.n;
  g.height = g.width ? 1 : 0;
  g.pitch = g.row_bytes();
  if (input.weights != nullptr)
    throw Error(ErrorKind::usage, "the input has weights, but the request counts samples",
                "make the plan with Request::weighted to sum weights", ErrorSubject::weights);
  return g;
}

}  // namespace

Problem problem_of(const Request& request, std::uint64_t n) {
  Problem p{request.type, &request.binning, n, request.layout};
  p.weighted = request.is_weighted();
  if (request.weight_type) p.weight_type = *request.weight_type;
  p.deterministic = p.weighted && request.deterministic;
  p.weight_squares = p.weighted && request.weight_squares;
  p.batch = request.batch;
  p.axis_count = request.axis_count();
  if (request.is_nd())
    for (unsigned a = 0; a < p.axis_count; ++a) p.axes[a] = &request.axes[a];
  else
    p.axes[0] = &request.binning;
  return p;
}

Geometry geometry_of(const Request& request, const Input& input) {
  Geometry g;
  g.channels = request.layout.channels;
  g.sample_bytes = sample_size(request.type);
  g.weight_bytes = request.weight_type ? sample_size(*request.weight_type) : 0;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  if (request.is_nd()) return nd_geometry(request, input, g);
  if (request.batch.kind == BatchKind::tiles && input.frame.width == 0 && input.n != 0)
    throw Error(ErrorKind::usage, "a tile batch counts a frame, and the input gives n samples",
                "pass Input::image(pixels, width, height, row_pitch)", ErrorSubject::batch);
  if ((request.batch.kind == BatchKind::equal || request.batch.kind == BatchKind::offsets) && input.frame.width != 0)
    throw Error(ErrorKind::usage, "a batch of segments counts a 1-D array, and the input gives a frame",
                "pass Input::array(samples, n) (Input::segments for offsets)", ErrorSubject::batch);
  if (request.batch.kind == BatchKind::equal && input.n % request.batch.segments != 0)
    throw Error(ErrorKind::usage,
                std::to_string(input.n) + " samples are not " + std::to_string(request.batch.segments) +
                    " segments of equal length",
                "pass segments x length samples, or use segments by offsets", ErrorSubject::batch);
  if (request.batch.kind == BatchKind::offsets && input.offsets == nullptr)
    throw Error(ErrorKind::usage, "a batch by offsets needs the input's offsets",
                "pass Input::offsets (segments + 1 of them)", ErrorSubject::batch);
  if (request.batch.kind != BatchKind::offsets && input.offsets != nullptr)
    throw Error(ErrorKind::usage, "the input has offsets, and the request is no batch by offsets",
                "make the plan with Request::segments_by_offsets", ErrorSubject::batch);
  if (input.has_columns())
    throw Error(ErrorKind::usage, "the input has columns, and the request has one axis",
                "make the plan with Request::joint for N-d points", ErrorSubject::axes);
  if (input.frame.width == 0) {
    // A packed run of samples: n of them, whole items.
    if (input.n % g.channels != 0)
      throw Error(ErrorKind::usage,
                  std::to_string(input.n) + " samples are not a whole number of " + std::to_string(g.channels) +
                      "-channel pixels",
                  "pass whole pixels", ErrorSubject::layout);
    g.width = input.n / g.channels;
    g.height = g.width ? 1 : 0;
    g.pitch = g.row_bytes();
  } else {
    if (input.n != 0)
      throw Error(ErrorKind::usage, "an input gives both n and a frame",
                  "give n for a packed array, or the frame's width and height", ErrorSubject::layout);
    if (input.frame.width > kMax / g.item_bytes())
      throw Error(ErrorKind::input, "an image row of " + std::to_string(input.frame.width) + " pixels is too large",
                  "", ErrorSubject::layout);
    g.width = input.frame.width;
    g.height = input.frame.height;
    if (g.height != 0 && g.width * g.channels > kMax / g.height)
      throw Error(ErrorKind::input,
                  "an image of " + std::to_string(g.width) + " x " + std::to_string(g.height) + " pixels is too large",
                  "", ErrorSubject::layout);
    g.pitch = input.frame.row_pitch ? input.frame.row_pitch : g.row_bytes();
    if (g.pitch < g.row_bytes())
      throw Error(ErrorKind::usage,
                  "the row pitch (" + std::to_string(g.pitch) + " bytes) is shorter than a row of the region (" +
                      std::to_string(g.width) + " pixels x " + std::to_string(g.channels) + " channels x " +
                      std::to_string(g.sample_bytes) + " bytes = " + std::to_string(g.row_bytes()) + " bytes)",
                  "give a row pitch of at least the row's bytes, or 0 for packed rows", ErrorSubject::layout);
    if (g.weight_bytes && !g.packed())
      throw Error(ErrorKind::usage, "weights go with packed samples, not rows with a pitch",
                  "pass packed rows (row pitch 0)", ErrorSubject::weights);
  }
  if (g.items() != 0 && input.samples == nullptr)
    throw Error(ErrorKind::usage, "the input's samples pointer is null", "pass the samples", ErrorSubject::data);
  if (g.weight_bytes && g.items() != 0 && input.weights == nullptr)
    throw Error(ErrorKind::usage, "a weighted request needs one weight per sample, and the input has none",
                "pass Input::weights", ErrorSubject::weights);
  if (!g.weight_bytes && input.weights != nullptr)
    throw Error(ErrorKind::usage, "the input has weights, but the request counts samples",
                "make the plan with Request::weighted to sum weights", ErrorSubject::weights);
  return g;
}

BatchArgs batch_of(const Request& request, const Geometry& g, const Input& input) {
  BatchArgs b;
  b.kind = request.batch.kind;
  b.segments = request.batch.count();
  switch (b.kind) {
    case BatchKind::none: break;
    case BatchKind::equal: b.segment_length = g.samples() / request.batch.segments; break;
    case BatchKind::offsets: b.offsets = input.offsets; break;
    case BatchKind::tiles:
      b.tile_rows = request.batch.tile_rows;
      b.tile_cols = request.batch.tile_cols;
      // ceil(width / cols) x ceil(height / rows): OpenCV's tile size where the grid divides the frame.
      b.tile_width = std::max<std::uint64_t>(1, (g.width + b.tile_cols - 1) / b.tile_cols);
      b.tile_height = std::max<std::uint64_t>(1, (g.height + b.tile_rows - 1) / b.tile_rows);
      break;
  }
  return b;
}

void check_offsets(const std::uint64_t* offsets, std::uint64_t segments, std::uint64_t n) {
  for (std::uint64_t s = 0; s < segments; ++s)
    if (offsets[s + 1] < offsets[s])
      throw Error(ErrorKind::input,
                  "segment " + std::to_string(s) + " ends (offset " + std::to_string(offsets[s + 1]) +
                      ") before it begins (offset " + std::to_string(offsets[s]) + ")",
                  "give non-decreasing offsets", ErrorSubject::batch);
  if (offsets[segments] > n)
    throw Error(ErrorKind::input,
                "the last offset (" + std::to_string(offsets[segments]) + ") is beyond the " + std::to_string(n) +
                    " samples",
                "give offsets of at most n", ErrorSubject::batch);
}

void set_columns(AxesArgs& axes, const Geometry& g, const Input& input) {
  if (g.separate_columns) {
    for (unsigned a = 0; a < axes.count; ++a) axes.columns[a] = input.columns[a];
    axes.stride = g.sample_bytes;
  } else {
    for (unsigned a = 0; a < axes.count; ++a)
      axes.columns[a] = static_cast<const unsigned char*>(input.samples) + a * g.sample_bytes;
    axes.stride = g.item_bytes();
  }
}

double weight_bound(SampleType type, const void* weights, std::uint64_t n) {
  const auto* p = static_cast<const unsigned char*>(weights);
  double bound = 0.0;
  auto scan = [&](auto zero) {
    using W = decltype(zero);
    for (std::uint64_t i = 0; i < n; ++i) {
      W w;
      std::memcpy(&w, p + i * sizeof(W), sizeof(W));
      const double m = std::fabs(static_cast<double>(w));
      if (m > bound && m != INFINITY) bound = m;  // NaN fails the first test
    }
  };
  if (type == SampleType::f64) scan(0.0);
  else scan(0.0f);
  return bound;
}

}  // namespace detail
}  // namespace levelhist
