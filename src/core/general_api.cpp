// The factory layer for interleaved pixels and weighted histograms
// (levelhist.hpp): validates the request, resolves Options to a strategy that
// has the capability, and runs it as api.cpp runs plain problems.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "core/pixels.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist {
namespace detail {
namespace {

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

}  // namespace

void validate_layout(SampleType type, const PixelLayout& layout, bool need_width) {
  if (layout.channels < 1 || layout.channels > 4)
    throw Error(ErrorKind::usage, "a pixel has 1 to 4 interleaved channels, not " + std::to_string(layout.channels));
  if (layout.active == 0) throw Error(ErrorKind::usage, "no active channel: set at least one bit of PixelLayout::active");
  if (layout.active >> layout.channels)
    throw Error(ErrorKind::usage, "the active channel mask " + hex(layout.active) + " names a channel beyond the " +
                                      std::to_string(layout.channels) + " of each pixel (channels are 0.." +
                                      std::to_string(layout.channels - 1) + ")");
  if (need_width && layout.width == 0)
    throw Error(ErrorKind::usage, "the image width is 0: give PixelLayout::width (pixels per row) and height (rows)");
  const std::uint64_t size = sample_size(type);
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  if (layout.width > kMax / layout.channels / size)
    throw Error(ErrorKind::input, "an image row of " + std::to_string(layout.width) + " pixels is too large");
  const std::uint64_t row_bytes = layout.width * layout.channels * size;
  if (layout.row_pitch != 0 && layout.row_pitch < row_bytes)
    throw Error(ErrorKind::usage, "the row pitch (" + std::to_string(layout.row_pitch) +
                                      " bytes) is shorter than a row of the region (" + std::to_string(layout.width) +
                                      " pixels x " + std::to_string(layout.channels) + " channels x " +
                                      std::to_string(size) + " bytes = " + std::to_string(row_bytes) + " bytes)");
  if (layout.height != 0 && layout.width * layout.channels > kMax / layout.height)
    throw Error(ErrorKind::input, "an image of " + std::to_string(layout.width) + " x " + std::to_string(layout.height) +
                                      " pixels is too large");
}

std::uint64_t pixel_samples(const PixelLayout& layout) { return layout.width * layout.height * layout.channels; }

void validate_weight_type(SampleType weight_type) {
  if (weight_type != SampleType::f32 && weight_type != SampleType::f64)
    throw Error(ErrorKind::usage, "weights must be f32 or f64, not " + std::string(to_string(weight_type)));
}

}  // namespace detail

namespace {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

// A CPU strategy's workspace: 256-byte aligned, as RunArgs promises.
std::unique_ptr<void, AlignedFree> cpu_workspace(const Strategy& s, const Problem& problem, std::size_t* bytes) {
  *bytes = s.workspace_bytes ? s.workspace_bytes(problem) : 0;
  std::unique_ptr<void, AlignedFree> workspace;
  if (*bytes) {
    workspace.reset(std::aligned_alloc(256, (*bytes + 255) / 256 * 256));
    if (!workspace) throw Error(ErrorKind::input, "out of memory: the workspace needs " + std::to_string(*bytes) + " bytes");
  }
  return workspace;
}

}  // namespace

const Strategy& fill_pixels(std::span<Histogram> hists, SampleType type, const void* pixels, const PixelLayout& layout,
                            const Options& options) {
  detail::validate_layout(type, layout, /*need_width=*/true);
  const unsigned k = detail::active_count(layout);
  if (hists.size() != k)
    throw Error(ErrorKind::usage, "fill_pixels needs one histogram per active channel: " + std::to_string(k) +
                                      ", got " + std::to_string(hists.size()));
  const Binning& binning = hists[0].binning();
  for (const Histogram& h : hists)
    if (!(h.binning() == binning))
      throw Error(ErrorKind::usage, "fill_pixels: the histograms of the channels must share one binning");
  // One channel in packed rows is a plain array: every strategy can count it,
  // not only the pixel-layout ones (cpu_parallel, gpu_lane_columns, ...).
  if (layout.channels == 1 && (layout.row_pitch == 0 || layout.row_pitch == layout.width * sample_size(type)))
    return fill(hists[0], type, pixels, detail::pixel_samples(layout), options);
  const Problem problem{type, &binning, detail::pixel_samples(layout), layout};
  const Strategy& s = resolve_strategy(problem, options);
  if (problem.n == 0) return s;
  if (s.backend == Backend::cuda) {
    cuda::fill_pixels_from_host(hists, type, pixels, layout, s);
    return s;
  }
  std::size_t bytes = 0;
  auto workspace = cpu_workspace(s, problem, &bytes);
  const std::uint64_t slots = binning.slots();
  std::vector<std::uint64_t> counts(slots * k, 0);
  RunArgs args{};
  args.samples = pixels;
  args.n = problem.n;
  args.type = type;
  args.binning = &binning;
  args.indexer = make_indexer(binning);
  args.slots = counts.data();
  args.accumulate = false;
  args.workspace = workspace.get();
  args.workspace_bytes = bytes;
  args.threads = options.threads;
  args.stream = nullptr;
  args.layout = layout;
  s.run(args);
  for (unsigned h = 0; h < k; ++h) {
    auto out = hists[h].slots();
    for (std::uint64_t i = 0; i < slots; ++i) out[i] += counts[h * slots + i];
  }
  return s;
}

std::vector<Histogram> histogram_pixels(SampleType type, const void* pixels, const PixelLayout& layout,
                                        const Binning& binning, const Options& options) {
  detail::validate_layout(type, layout, /*need_width=*/true);
  std::vector<Histogram> hists(detail::active_count(layout), Histogram(binning));
  fill_pixels(hists, type, pixels, layout, options);
  return hists;
}

const Strategy& fill_weighted(WeightedHistogram& hist, SampleType type, const void* samples, std::uint64_t n,
                              SampleType weight_type, const void* weights, const Options& options) {
  detail::validate_weight_type(weight_type);
  const Binning& binning = hist.binning();
  Problem problem{type, &binning, n};
  problem.weighted = true;
  problem.weight_type = weight_type;
  const Strategy& s = resolve_strategy(problem, options);
  if (n == 0) return s;
  if (s.backend == Backend::cuda) {
    cuda::fill_weighted_from_host(hist, type, samples, n, weights, weight_type, s);
    return s;
  }
  std::size_t bytes = 0;
  auto workspace = cpu_workspace(s, problem, &bytes);
  RunArgs args{};
  args.samples = samples;
  args.n = n;
  args.type = type;
  args.binning = &binning;
  args.indexer = make_indexer(binning);
  args.slots = nullptr;
  args.accumulate = true;  // adds into the histogram's sums, in sample order after what is there
  args.workspace = workspace.get();
  args.workspace_bytes = bytes;
  args.threads = options.threads;
  args.stream = nullptr;
  args.weights = weights;
  args.weight_type = weight_type;
  args.weight_sums = hist.slots().data();
  s.run(args);
  return s;
}

WeightedHistogram histogram_weighted(SampleType type, const void* samples, std::uint64_t n, SampleType weight_type,
                                     const void* weights, const Binning& binning, const Options& options) {
  WeightedHistogram h(binning);
  fill_weighted(h, type, samples, n, weight_type, weights, options);
  return h;
}

}  // namespace levelhist
