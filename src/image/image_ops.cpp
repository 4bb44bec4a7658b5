// levelhist: channel histograms, statistics, Otsu, threshold and equalization
// of images (image_ops.hpp).
#include "levelhist/image_ops.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

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
    throw Error(ErrorKind::usage,
                std::string(what) + " needs a histogram with one bin per value from 0, not " + b.describe(),
                "use channel_histograms or Binning::per_value");
  ValueCounts v{h.counts(), h.in_range()};
  if (v.total == 0)
    throw Error(ErrorKind::input, std::string(what) + ": the histogram has no sample in its bins",
                "give a histogram of a non-empty image", ErrorSubject::data);
  return v;
}

// The gray-only operations' shape check.
void require_gray(const Image& img, const char* operation, bool eight_bit_only) {
  detail::check_image(img, operation);
  if (img.channels != 1)
    throw Error(ErrorKind::usage,
                std::string(operation) + " works on gray images, this one has " + std::to_string(img.channels) +
                    " channels",
                "convert it to gray first");
  if (eight_bit_only && img.bit_depth != 8)
    throw Error(ErrorKind::usage,
                std::string(operation) + " works on 8-bit images (as OpenCV's), this one is " +
                    std::to_string(img.bit_depth) + "-bit",
                "convert it to 8 bits first");
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
    throw Error(ErrorKind::usage,
                "fill_channels got " + std::to_string(hists.size()) + " histograms for " +
                    std::to_string(img.channels) + " channels",
                "pass one per channel");
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
    throw Error(ErrorKind::usage, "percentile " + std::to_string(p) + " is outside 1..100", "ask for 1 to 100");
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

// ---- joint histograms -------------------------------------------------------------------

HistogramNd joint_histogram(const Image& a, const Image& b, std::uint64_t bins, const Options& options) {
  require_gray(a, "a joint histogram", false);
  require_gray(b, "a joint histogram", false);
  if (a.width != b.width || a.height != b.height || a.bit_depth != b.bit_depth)
    throw Error(ErrorKind::usage,
                "a joint histogram pairs the pixels of two images of one size and depth, and these are " +
                    std::to_string(a.width) + " x " + std::to_string(a.height) + " " + std::to_string(a.bit_depth) +
                    "-bit and " + std::to_string(b.width) + " x " + std::to_string(b.height) + " " +
                    std::to_string(b.bit_depth) + "-bit",
                "give images of the same size and bit depth");
  if (bins > 65536)
    throw Error(ErrorKind::usage, "a joint histogram takes at most 65536 bins per axis, not " + std::to_string(bins),
                "give fewer bins");
  const double range = a.bit_depth == 16 ? 65536.0 : 256.0;
  const Binning axis = bins == 0 && a.bit_depth == 8 ? Binning::per_value(SampleType::u8)
                                                    : Binning::even(bins == 0 ? 256 : bins, 0.0, range);
  HistogramNd h({axis, axis});
  const Plan plan(Request::joint(a.sample_type(), {axis, axis}), options);
  plan.fill(h, Input::columns_of({a.bytes.data(), b.bytes.data()}, std::uint64_t{a.width} * a.height));
  return h;
}

JointInformation joint_information(const HistogramNd& joint) {
  if (joint.rank() != 2)
    throw Error(ErrorKind::usage, "mutual information is of a 2-D histogram, not " + std::to_string(joint.rank()) + "-D",
                "pass a joint histogram of two axes");
  const std::uint64_t na = joint.axes()[0].bins(), nb = joint.axes()[1].bins();
  std::vector<std::uint64_t> row(na, 0), column(nb, 0);
  JointInformation info;
  for (std::uint64_t i = 0; i < na; ++i)
    for (std::uint64_t j = 0; j < nb; ++j) {
      const std::uint64_t c = joint.at(i, j);
      row[i] += c;
      column[j] += c;
      info.pairs += c;
    }
  if (info.pairs == 0)
    throw Error(ErrorKind::input, "the joint histogram has no pair in its bins", "give a histogram of non-empty images");
  // H = log2(N) - (1/N) sum c log2 c: one division, sums of exact integers' logs.
  const double n = static_cast<double>(info.pairs);
  auto entropy = [&](auto&& sum_c_log_c) { return std::log2(n) - sum_c_log_c / n; };
  auto c_log_c = [](std::uint64_t c) { return c ? static_cast<double>(c) * std::log2(static_cast<double>(c)) : 0.0; };
  double sa = 0, sb = 0, sab = 0;
  for (std::uint64_t c : row) sa += c_log_c(c);
  for (std::uint64_t c : column) sb += c_log_c(c);
  for (std::uint64_t i = 0; i < na; ++i)
    for (std::uint64_t j = 0; j < nb; ++j) sab += c_log_c(joint.at(i, j));
  // Clamped at 0: a constant image's entropy is 0, not -1e-16.
  info.entropy_a = std::max(0.0, entropy(sa));
  info.entropy_b = std::max(0.0, entropy(sb));
  info.joint_entropy = std::max(0.0, entropy(sab));
  info.mutual_information = std::max(0.0, info.entropy_a + info.entropy_b - info.joint_entropy);
  info.normalized_mutual_information = info.joint_entropy > 0
                                           ? (info.entropy_a + info.entropy_b) / info.joint_entropy
                                           : std::numeric_limits<double>::quiet_NaN();
  return info;
}

// ---- CLAHE ---------------------------------------------------------------------------
//
// OpenCV 4.x's createCLAHE(clipLimit, Size(tile_cols, tile_rows))->apply on an
// 8-bit gray image (modules/imgproc/src/clahe.cpp), step for step:
//  1. Tiles: when the grid does not divide the image, the image is extended at
//     the bottom by tile_rows - height % tile_rows rows and at the right by
//     tile_cols - width % tile_cols columns, mirrored without repeating the edge
//     pixel (BORDER_REFLECT_101). Both are extended when either does not
//     divide, so a dimension that divides still gains a whole tile count of
//     rows or columns (OpenCV's rule, kept). Tiles are then
//     extended_width / tile_cols x extended_height / tile_rows pixels.
//  2. A histogram per tile: the batch of tiles of the library, so on the GPU
//     when there is one.
//  3. Clip limit (clipLimit > 0 only): max(int(clipLimit x tile area / 256), 1).
//     The excess above it is summed, every bin gets excess / 256 more, and the
//     remaining excess % 256 go one each to bins 0, s, 2s, ... with
//     s = max(256 / remainder, 1).
//  4. LUT of each tile: saturate_cast<uchar>(cdf(v) x (255.f / tile area)),
//     float arithmetic, rounded half to even.
//  5. Each pixel: bilinear between the LUTs of the four nearest tile centres,
//     in OpenCV's float arithmetic: fx = x x (1.f / tile width) - 0.5f,
//     x1 = floor(fx), a = fx - x1, the tile columns clamped to the grid (and the
//     same for y), result ((l11 (1 - a) + l12 a) (1 - b) + (l21 (1 - a) + l22 a) b)
//     rounded half to even.
namespace {

// OpenCV's borderInterpolate for BORDER_REFLECT_101: index p of a row of
// `len` (p >= len here), mirrored about the last element, as often as needed.
std::uint32_t reflect_101(std::int64_t p, std::int64_t len) {
  if (len == 1) return 0;
  while (p < 0 || p >= len) p = p < 0 ? -p : 2 * (len - 1) - p;
  return static_cast<std::uint32_t>(p);
}

std::uint8_t saturate_to_byte(float v) { return static_cast<std::uint8_t>(std::clamp<long>(std::lrint(v), 0, 255)); }

}  // namespace

Image clahe(const Image& img, const ClaheOptions& clahe_options, const Options& options) {
  require_gray(img, "CLAHE", true);
  const std::uint32_t rows = clahe_options.tile_rows, cols = clahe_options.tile_cols;
  if (rows < 1 || cols < 1 || rows > kMaxClaheTiles || cols > kMaxClaheTiles)
    throw Error(ErrorKind::usage,
                "CLAHE takes 1 to " + std::to_string(kMaxClaheTiles) + " tile rows and columns, not " +
                    std::to_string(rows) + " x " + std::to_string(cols),
                "give a grid from 1 x 1 to " + std::to_string(kMaxClaheTiles) + " x " + std::to_string(kMaxClaheTiles));
  if (std::uint64_t{rows} * cols > kMaxClaheTileCount)
    throw Error(ErrorKind::usage,
                "CLAHE takes at most " + std::to_string(kMaxClaheTileCount) + " tiles, not " + std::to_string(rows) +
                    " x " + std::to_string(cols),
                "give a coarser grid");
  if (!std::isfinite(clahe_options.clip_limit))
    throw Error(ErrorKind::usage, "the CLAHE clip limit must be finite", "give a clip limit such as 40 (0: no limit)");
  if (img.width == 0 || img.height == 0) return img;
  const std::uint32_t width = img.width, height = img.height;
  const bool divides = width % cols == 0 && height % rows == 0;
  const std::uint32_t ext_width = divides ? width : width + cols - width % cols;
  const std::uint32_t ext_height = divides ? height : height + rows - height % rows;
  const std::uint32_t tile_width = ext_width / cols, tile_height = ext_height / rows;

  // 1-2. The tile histograms, of the image or of its extension.
  std::vector<std::uint8_t> extended;
  const std::uint8_t* source = img.bytes.data();
  if (!divides) {
    extended.resize(std::size_t{ext_width} * ext_height);
    for (std::uint32_t y = 0; y < ext_height; ++y) {
      const std::uint8_t* row = img.bytes.data() + std::size_t{reflect_101(y, height)} * width;
      std::uint8_t* out = extended.data() + std::size_t{y} * ext_width;
      std::memcpy(out, row, width);
      for (std::uint32_t x = width; x < ext_width; ++x) out[x] = row[reflect_101(x, width)];
    }
    source = extended.data();
  }
  const Binning values = Binning::per_value(SampleType::u8);
  const Plan plan(Request::tiles(SampleType::u8, values, rows, cols), options);
  std::vector<std::uint64_t> hist(plan.request().output_slots(), 0);
  plan.fill_slots(hist.data(), Input::image(source, ext_width, ext_height), /*accumulate=*/false);

  // 3-4. Clip, redistribute, and the LUT of each tile.
  const std::uint64_t tile_area = std::uint64_t{tile_width} * tile_height;
  const float lut_scale = 255.0f / static_cast<float>(tile_area);
  std::int64_t clip_limit = 0;
  if (clahe_options.clip_limit > 0.0) {
    clip_limit = static_cast<std::int64_t>(clahe_options.clip_limit * static_cast<double>(tile_area) / 256.0);
    clip_limit = std::max<std::int64_t>(clip_limit, 1);
  }
  const std::size_t tiles = std::size_t{rows} * cols;
  std::vector<std::uint8_t> luts(tiles * 256);
  for (std::size_t t = 0; t < tiles; ++t) {
    std::int64_t bins[256];
    for (int v = 0; v < 256; ++v) bins[v] = static_cast<std::int64_t>(hist[t * values.slots() + v]);
    if (clip_limit > 0) {
      std::int64_t clipped = 0;
      for (std::int64_t& b : bins)
        if (b > clip_limit) clipped += b - clip_limit, b = clip_limit;
      const std::int64_t batch = clipped / 256;
      std::int64_t residual = clipped - batch * 256;
      for (std::int64_t& b : bins) b += batch;
      if (residual != 0) {
        const std::int64_t step = std::max<std::int64_t>(256 / residual, 1);
        for (std::int64_t v = 0; v < 256 && residual > 0; v += step, --residual) ++bins[v];
      }
    }
    std::int64_t sum = 0;
    for (int v = 0; v < 256; ++v) {
      sum += bins[v];
      luts[t * 256 + v] = saturate_to_byte(static_cast<float>(sum) * lut_scale);
    }
  }

  // 5. Bilinear interpolation between the four nearest tiles' LUTs.
  std::vector<std::uint32_t> left(width), right(width);
  std::vector<float> weight_right(width), weight_left(width);
  const float inv_tile_width = 1.0f / static_cast<float>(tile_width);
  for (std::uint32_t x = 0; x < width; ++x) {
    const float fx = static_cast<float>(x) * inv_tile_width - 0.5f;
    const std::int64_t x1 = static_cast<std::int64_t>(std::floor(fx));
    weight_right[x] = fx - static_cast<float>(x1);
    weight_left[x] = 1.0f - weight_right[x];
    left[x] = static_cast<std::uint32_t>(std::max<std::int64_t>(x1, 0));
    right[x] = static_cast<std::uint32_t>(std::min<std::int64_t>(x1 + 1, cols - 1));
  }
  Image out = Image::blank(width, height, 1, 8, 255);
  const float inv_tile_height = 1.0f / static_cast<float>(tile_height);
  for (std::uint32_t y = 0; y < height; ++y) {
    const float fy = static_cast<float>(y) * inv_tile_height - 0.5f;
    const std::int64_t y1 = static_cast<std::int64_t>(std::floor(fy));
    const float b = fy - static_cast<float>(y1), b1 = 1.0f - b;
    const std::size_t top = std::size_t{static_cast<std::uint32_t>(std::max<std::int64_t>(y1, 0))} * cols;
    const std::size_t bottom = std::size_t{static_cast<std::uint32_t>(std::min<std::int64_t>(y1 + 1, rows - 1))} * cols;
    const std::uint8_t* src = img.bytes.data() + std::size_t{y} * width;
    std::uint8_t* dst = out.bytes.data() + std::size_t{y} * width;
    for (std::uint32_t x = 0; x < width; ++x) {
      const std::uint8_t v = src[x];
      const float l11 = luts[(top + left[x]) * 256 + v], l12 = luts[(top + right[x]) * 256 + v];
      const float l21 = luts[(bottom + left[x]) * 256 + v], l22 = luts[(bottom + right[x]) * 256 + v];
      const float res = (l11 * weight_left[x] + l12 * weight_right[x]) * b1 + (l21 * weight_left[x] + l22 * weight_right[x]) * b;
      dst[x] = saturate_to_byte(res);
    }
  }
  return out;
}

}  // namespace levelhist::image
