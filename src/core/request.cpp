// Requests (request.hpp): the factories, validation, and a call's geometry.
#include <bit>
#include <cstdio>
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

unsigned Request::histograms() const { return static_cast<unsigned>(std::popcount(layout.active)); }

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
}

namespace detail {

Problem problem_of(const Request& request, std::uint64_t n) {
  Problem p{request.type, &request.binning, n, request.layout};
  p.weighted = request.is_weighted();
  if (request.weight_type) p.weight_type = *request.weight_type;
  return p;
}

Geometry geometry_of(const Request& request, const Input& input) {
  Geometry g;
  g.channels = request.layout.channels;
  g.sample_bytes = sample_size(request.type);
  g.weight_bytes = request.weight_type ? sample_size(*request.weight_type) : 0;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
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

}  // namespace detail
}  // namespace levelhist
