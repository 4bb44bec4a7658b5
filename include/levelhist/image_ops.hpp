// levelhist: what the image workflow (image.hpp) does with an image — one
// histogram per channel, statistics from a histogram, Otsu's threshold,
// binarization and histogram equalization (OpenCV's definitions).
//
//   auto img = levelhist::image::read_image("coins.pgm");
//   auto h = levelhist::image::channel_histograms(img);          // one per channel
//   std::uint32_t t = levelhist::image::otsu_threshold(h[0]);    // cv::THRESH_OTSU
//   levelhist::image::write_image("coins-bw.pgm", levelhist::image::threshold(img, t));
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "levelhist/histogram.hpp"
#include "levelhist/image.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::image {

// One histogram per channel in channel order, one bin per value (256 bins for
// 8-bit images, 65536 for 16-bit ones, whatever the maxval), counted by
// levelhist's strategies, so on the GPU when `options` allow it.
std::vector<Histogram> channel_histograms(const Image& img, const Options& options = {});
// Adds `img`'s samples into `hists` (one per channel, each with the binning
// Binning::per_value(img.sample_type())) and returns the strategy that ran.
// Counted through levelhist::fill_pixels, which takes a gray image as one plain
// array (any strategy), color images as interleaved pixels.
const Strategy& fill_channels(std::span<Histogram> hists, const Image& img, const Options& options = {});

// The percentiles ChannelStats reports, in this order.
inline constexpr std::array<unsigned, 6> kPercentiles = {1, 5, 25, 75, 95, 99};

// Statistics of the samples a histogram counted. Percentiles use the
// nearest-rank definition: the p-th percentile of N samples is the smallest
// value v with at least ceil(p * N / 100) samples <= v (and at least one);
// the median is the 50th percentile, so the lower middle value for even N.
struct ChannelStats {
  std::uint64_t count = 0;  // samples in the bins
  std::uint32_t min = 0;
  std::uint32_t max = 0;
  double mean = 0.0;
  std::uint32_t median = 0;
  std::array<std::uint32_t, kPercentiles.size()> percentiles{};  // of kPercentiles
};

// From the cumulative counts of a histogram with one bin per value starting
// at 0 (channel_histograms'). Throws Error(usage) for any other binning and
// Error(input) for a histogram with no sample in its bins.
ChannelStats stats(const Histogram& h);
// The nearest-rank p-th percentile, p in 1..100 (Error(usage) otherwise).
std::uint32_t percentile(const Histogram& h, unsigned p);

// Otsu's threshold exactly as OpenCV's cv::threshold(..., THRESH_OTSU)
// computes it (getThreshVal_Otsu): the bin index maximizing the between-class
// variance q1 q2 (mu1 - mu2)^2 of the classes [0, t] and (t, N), first
// maximum wins, in OpenCV's double arithmetic; 0 when no split has two
// non-empty classes. Defined the same way for 65536 bins. Same errors as stats().
std::uint32_t otsu_threshold(const Histogram& h);

// cv::THRESH_BINARY: samples > t become the maxval, the others 0; with
// `invert`, cv::THRESH_BINARY_INV: samples > t become 0, the others the
// maxval. Gray images only: Error(usage) for more channels.
Image threshold(const Image& img, std::uint32_t t, bool invert = false);

// cv::equalizeHist: on 8-bit gray images, value v becomes
// round((cdf(v) - cdf_min) * 255 / (N - cdf_min)) in OpenCV's float
// arithmetic, cdf_min the count of the smallest value present; an image of one
// value is returned unchanged. Error(usage) for other images.
Image equalize(const Image& img, const Options& options = {});

// The joint histogram of two gray images of one size and bit depth (the core of
// mutual-information registration): a 2-D histogram of the pixel pairs (a, b),
// `bins` even bins per axis over the samples' range [0, 256) or [0, 65536);
// bins 0 means one bin per value for 8-bit images (256 x 256). Axis 0 is a's.
// Counted by the library's N-d histograms (Request::joint), so on the GPU when
// `options` allow it. Error(usage) for images that are not gray or differ in
// size or depth, or for bins above 65536 (Error(input) when bins x bins do not
// fit the counters).
HistogramNd joint_histogram(const Image& a, const Image& b, std::uint64_t bins = 0, const Options& options = {});

// The information of a 2-D histogram's regular bins (flow slots left out), in
// bits: the entropies H(A), H(B), H(A,B) of the marginal and joint
// distributions, the mutual information I = H(A) + H(B) - H(A,B), and the
// normalized mutual information of Studholme, Hill & Hawkes (1999),
// (H(A) + H(B)) / H(A,B), which is 1 for independent images and 2 for images
// that determine each other; NaN when H(A,B) = 0 (both images constant).
// Error(usage) for a histogram without two axes, Error(input) for one with no
// count in its regular bins.
struct JointInformation {
  double entropy_a = 0, entropy_b = 0, joint_entropy = 0;
  double mutual_information = 0;
  double normalized_mutual_information = 0;
  std::uint64_t pairs = 0;  // counts in the regular bins
};
JointInformation joint_information(const HistogramNd& joint);

// Contrast-limited adaptive histogram equalization (CLAHE), pixel for pixel
// what OpenCV 4.x's cv::createCLAHE(clip_limit, cv::Size(tile_cols, tile_rows))
// ->apply(img) gives on an 8- or 16-bit gray image, of the same depth (the
// algorithm, step by step: src/image/image_ops.cpp). The defaults are
// OpenCV's: clip limit 40, 8 x 8 tiles. The tile histograms are batches of the
// library (Request::tiles), so they are counted on the GPU when `options` ask
// for it.
inline constexpr std::uint32_t kMaxClaheTiles = 1024;
inline constexpr std::uint64_t kMaxClaheTileCount = 65536;  // rows x cols
struct ClaheOptions {
  double clip_limit = 40.0;     // <= 0: no clipping (plain adaptive equalization)
  std::uint32_t tile_rows = 8;  // 1 .. kMaxClaheTiles
  std::uint32_t tile_cols = 8;
};
// Error(usage) for an image that is not gray, a grid outside 1 ..
// kMaxClaheTiles per side or of more than kMaxClaheTileCount tiles, or a clip
// limit that is not finite. An image with
// no pixel is returned as it is.
Image clahe(const Image& img, const ClaheOptions& clahe = {}, const Options& options = {});

}  // namespace levelhist::image
