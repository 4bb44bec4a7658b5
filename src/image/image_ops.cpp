// levelhist: channel histograms, statistics, Otsu, threshold and equalization
// of images (image_ops.hpp).
#include "levelhist/image_ops.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "image/image_codecs.hpp"

namespace levelhist::image {
namespace {

// The counts of a one-bin-per-value histogram from 0, and how many there are.
struct ValueCounts {
  std::span<const std::uint64_t> counts;  // counts[v]: samples of value v
  std::uint64_t total = 0;
};

ValueCounts value_counts(const Histogram& h, const char* what) {
  const Binning& b = h.binning();
  if (!b.unit_integer_bins() || b.lower() != 0.0)
    throw Error(ErrorKind::usage, std::string(what) + " needs a histogram with one bin per value from 0, not " +
                                      b.describe() + "; use channel_histograms or Binning::per_value");
  ValueCounts v{h.counts(), h.in_range()};
  if (v.total == 0)
    throw Error(ErrorKind::input, std::string(what) + ": the histogram has no sample in its bins; "
                                                      "give a histogram of a non-empty image");
  return v;
}

// The gray-only operations' shape check.
void require_gray(const Image& img, const char* operation, bool eight_bit_only) {
  detail::check_image(img, operation);
  if (img.channels != 1)
    throw Error(ErrorKind::usage, std::string(operation) + " works on gray images, this one has " +
                                      std::to_string(img.channels) + " channels; convert it to gray first");
  if (eight_bit_only && img.bit_depth != 8)
    throw Error(ErrorKind::usage, std::string(operation) + " works on 8-bit images (as OpenCV's), this one is " +
                                      std::to_string(img.bit_depth) + "-bit; convert it to 8 bits first");
}

// The smallest value whose cumulative count reaches `rank` (1-based).
std::uint32_t value_at_rank(const ValueCounts& v, std::uint64_t rank) {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < v.counts.size(); ++i) {
    cumulative += v.counts[i];
    if (cumulative >= rank) return static_cast<std::uint32_t>(i);
  }
  return static_cast<std::uint32_t>(v.counts.size() - 1);  // unreachable: rank <= total
}

std::uint32_t percentile_of(const ValueCounts& v, unsigned p) {
  // ceil(p * N / 100) in 128 bits: p * N overflows 64 bits for N near 2^64.
  const unsigned __int128 scaled = static_cast<unsigned __int128>(p) * v.total;
  const auto rank = static_cast<std::uint64_t>((scaled + 99) / 100);
  return value_at_rank(v, rank == 0 ? 1 : rank);
}

}  // namespace

const Strategy& fill_channels(std::span<Histogram> hists, const Image& img, const Options& options) {
  detail::check_image(img, "histogram the image");
  if (hists.size() != img.channels)
    throw Error(ErrorKind::usage, "fill_channels got " + std::to_string(hists.size()) + " histograms for " +
                                      std::to_string(img.channels) + " channels; pass one per channel");
  const PixelLayout layout{img.channels, (1u << img.channels) - 1u, img.width, img.height, 0};
  return fill_pixels(hists, img.sample_type(), img.bytes.data(), layout, options);
}

std::vector<Histogram> channel_histograms(const Image& img, const Options& options) {
  std::vector<Histogram> hists(img.channels, Histogram(Binning::per_value(img.sample_type())));
  fill_channels(hists, img, options);
  return hists;
}

std::uint32_t percentile(const Histogram& h, unsigned p) {
  if (p == 0 || p > 100)
    throw Error(ErrorKind::usage, "percentile " + std::to_string(p) + " is outside 1..100; ask for 1 to 100");
  return percentile_of(value_counts(h, "a percentile"), p);
}

ChannelStats stats(const Histogram& h) {
  const ValueCounts v = value_counts(h, "statistics");
  ChannelStats s;
  s.count = v.total;
  unsigned __int128 sum = 0;  // exact: 65535 * 2^64 needs more than 64 bits
  bool seen = false;
  for (std::size_t i = 0; i < v.counts.size(); ++i) {
    if (!v.counts[i]) continue;
    if (!seen) s.min = static_cast<std::uint32_t>(i), seen = true;
    s.max = static_cast<std::uint32_t>(i);
    sum += static_cast<unsigned __int128>(v.counts[i]) * i;
  }
  s.mean = static_cast<double>(static_cast<long double>(sum) / static_cast<long double>(v.total));
  s.median = percentile_of(v, 50);
  for (std::size_t k = 0; k < kPercentiles.size(); ++k) s.percentiles[k] = percentile_of(v, kPercentiles[k]);
  return s;
}

std::uint32_t otsu_threshold(const Histogram& h) {
  const ValueCounts v = value_counts(h, "Otsu's threshold");
  const std::size_t n = v.counts.size();
  // OpenCV's getThreshVal_Otsu line for line (thresh.cpp), so ties and
  // rounding come out the same: mu1 is re-weighted by q1 before each step and
  // skipped steps leave it so, as there.
  const double scale = 1. / static_cast<double>(v.total);
  double mu = 0;
  for (std::size_t i = 0; i < n; ++i) mu += static_cast<double>(i) * static_cast<double>(v.counts[i]);
  mu *= scale;
  double mu1 = 0, q1 = 0;
  double max_sigma = 0, max_val = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double p_i = static_cast<double>(v.counts[i]) * scale;
    mu1 *= q1;
    q1 += p_i;
    const double q2 = 1. - q1;
    if (std::min(q1, q2) < FLT_EPSILON || std::max(q1, q2) > 1. - FLT_EPSILON) continue;
    mu1 = (mu1 + static_cast<double>(i) * p_i) / q1;
    const double mu2 = (mu - q1 * mu1) / q2;
    const double sigma = q1 * q2 * (mu1 - mu2) * (mu1 - mu2);
    if (sigma > max_sigma) {
      max_sigma = sigma;
      max_val = static_cast<double>(i);
    }
  }
  return static_cast<std::uint32_t>(max_val);
}

Image threshold(const Image& img, std::uint32_t t, bool invert) {
  require_gray(img, "threshold", false);
  Image out = Image::blank(img.width, img.height, 1, img.bit_depth, img.maxval);
  const std::size_t n = static_cast<std::size_t>(img.samples());
  const std::uint32_t above = invert ? 0 : img.maxval, rest = invert ? img.maxval : 0;
  for (std::size_t i = 0; i < n; ++i) detail::store_sample(out, i, detail::load_sample(img, i) > t ? above : rest);
  return out;
}

Image equalize(const Image& img, const Options& options) {
  require_gray(img, "equalize", true);
  const Histogram h = channel_histograms(img, options).front();
  const ValueCounts v = value_counts(h, "equalize");
  std::size_t first = 0;
  while (v.counts[first] == 0) ++first;
  // OpenCV: an image of one value is left as it is.
  if (v.counts[first] == v.total) return img;
  // OpenCV's float arithmetic (equalizeHist): scale = 255.f / (total - hist[first]),
  // lut[i] = saturate_cast<uchar>(sum * scale) with sum = cdf(i) - cdf(first), rounded half to even.
  const float scale = 255.f / static_cast<float>(v.total - v.counts[first]);
  std::array<std::uint8_t, 256> lut{};
  std::uint64_t sum = 0;
  for (std::size_t i = first + 1; i < 256; ++i) {
    sum += v.counts[i];
    const long rounded = std::lrint(static_cast<float>(sum) * scale);
    lut[i] = static_cast<std::uint8_t>(std::clamp<long>(rounded, 0, 255));
  }
  // The output uses the whole 8-bit range, whatever the input's maxval.
  Image out = Image::blank(img.width, img.height, 1, 8, 255);
  for (std::size_t i = 0; i < img.bytes.size(); ++i) out.bytes[i] = lut[img.bytes[i]];
  return out;
}

}  // namespace levelhist::image
