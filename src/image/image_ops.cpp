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

#include "cpu/cpu_parallel_fork_join.hpp"
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
// 8- or 16-bit gray image (modules/imgproc/src/clahe.cpp), step for step, with
// H = 256 values for 8-bit images and 65536 for 16-bit ones:
//  1. Tiles: when the grid does not divide the image, the image is extended at
//     the bottom by tile_rows - height % tile_rows rows and at the right by
//     tile_cols - width % tile_cols columns, mirrored without repeating the edge
//     pixel (BORDER_REFLECT_101). Both are extended when either does not
//     divide, so a dimension that divides still gains a whole tile count of
//     rows or columns (OpenCV's rule, kept). Tiles are then
//     extended_width / tile_cols x extended_height / tile_rows pixels.
//  2. A histogram per tile: batches of tiles of the library, so on the GPU
//     when there is one.
//  3. Clip limit (clipLimit > 0 only): max(int(clipLimit x tile area / H), 1).
//     The excess above it is summed, every bin gets excess / H more, and the
//     remaining excess % H go one each to bins 0, s, 2s, ... with
//     s = max(H / remainder, 1).
//  4. LUT of each tile: saturate_cast(cdf(v) x ((H - 1.f) / tile area)),
//     float arithmetic, rounded half to even.
//  5. Each pixel: bilinear between the LUTs of the four nearest tile centres,
//     in OpenCV's float arithmetic: fx = x x (1.f / tile width) - 0.5f,
//     x1 = floor(fx), a = fx - x1, the tile columns clamped to the grid (and the
//     same for y), result ((l11 (1 - a) + l12 a) (1 - b) + (l21 (1 - a) + l22 a) b)
//     rounded half to even.
// 8-bit images: every tile's histogram in one call, every LUT kept (256 bytes
// a tile). 16-bit images: a LUT is 128 KiB and a histogram 512 KiB a tile, so
// the histograms of one tile row are counted at a time, at most
// kClaheColumnsPerCall tiles a call, and the LUTs of the two tile rows that
// the image row being written needs are kept (OpenCV keeps every tile's).
namespace {

// OpenCV's borderInterpolate for BORDER_REFLECT_101: index p of a row of
// `len` (p >= len here), mirrored about the last element, as often as needed.
std::uint32_t reflect_101(std::int64_t p, std::int64_t len) {
  if (len == 1) return 0;
  while (p < 0 || p >= len) p = p < 0 ? -p : 2 * (len - 1) - p;
  return static_cast<std::uint32_t>(p);
}

// OpenCV's saturate_cast<T>(float): rounded half to even, clamped to T.
template <class T>
T saturate(float v) {
  return static_cast<T>(std::clamp<long>(std::lrint(v), 0, std::numeric_limits<T>::max()));
}

constexpr std::uint32_t kClaheColumnsPerCall = 64;  // 16-bit: 32 MiB of tile histograms a call

template <class T>
Image clahe_of(const Image& img, std::uint32_t rows, std::uint32_t cols, double clip, const Options& options) {
  constexpr std::uint32_t kValues = std::uint32_t{std::numeric_limits<T>::max()} + 1;
  constexpr bool kEveryTileAtOnce = sizeof(T) == 1;
  const std::uint32_t width = img.width, height = img.height;
  const bool divides = width % cols == 0 && height % rows == 0;
  const std::uint32_t ext_width = divides ? width : width + cols - width % cols;
  const std::uint32_t ext_height = divides ? height : height + rows - height % rows;
  const std::uint32_t tile_width = ext_width / cols, tile_height = ext_height / rows;
  const T* pixels = reinterpret_cast<const T*>(img.bytes.data());

  // 1. The image, or its extension.
  std::vector<T> extended;
  const T* source = pixels;
  if (!divides) {
    extended.resize(std::size_t{ext_width} * ext_height);
    for (std::uint32_t y = 0; y < ext_height; ++y) {
      const T* row = pixels + std::size_t{reflect_101(y, height)} * width;
      T* out = extended.data() + std::size_t{y} * ext_width;
      std::copy(row, row + width, out);
      for (std::uint32_t x = width; x < ext_width; ++x) out[x] = row[reflect_101(x, width)];
    }
    source = extended.data();
  }

  // 3-4. Clip, redistribute, and the LUT of a tile from its histogram.
  const std::uint64_t tile_area = std::uint64_t{tile_width} * tile_height;
  const float lut_scale = static_cast<float>(kValues - 1) / static_cast<float>(tile_area);
  std::int64_t clip_limit = 0;
  if (clip > 0.0) {
    clip_limit = static_cast<std::int64_t>(clip * static_cast<double>(tile_area) / kValues);
    clip_limit = std::max<std::int64_t>(clip_limit, 1);
  }
  std::vector<std::int64_t> bins(kValues);
  auto make_lut = [&](const std::uint64_t* hist, T* lut) {
    for (std::uint32_t v = 0; v < kValues; ++v) bins[v] = static_cast<std::int64_t>(hist[v]);
    if (clip_limit > 0) {
      std::int64_t clipped = 0;
      for (std::int64_t& b : bins)
        if (b > clip_limit) clipped += b - clip_limit, b = clip_limit;
      const std::int64_t batch = clipped / kValues;
      std::int64_t residual = clipped - batch * kValues;
      for (std::int64_t& b : bins) b += batch;
      if (residual != 0) {
        const std::int64_t step = std::max<std::int64_t>(kValues / residual, 1);
        for (std::int64_t v = 0; v < kValues && residual > 0; v += step, --residual) ++bins[v];
      }
    }
    std::int64_t sum = 0;
    for (std::uint32_t v = 0; v < kValues; ++v) {
      sum += bins[v];
      lut[v] = saturate<T>(static_cast<float>(sum) * lut_scale);
    }
  };

  // 2. The tile histograms, a band of tile rows and a run of tile columns a
  // call (one plan for each shape of call), and the LUTs of a band's rows into
  // their slots of `luts` (tile row t in slot t % kept_rows).
  const SampleType type = sizeof(T) == 1 ? SampleType::u8 : SampleType::u16;
  const Binning values = Binning::per_value(type);
  const std::uint32_t band_rows = kEveryTileAtOnce ? rows : 1;
  const std::uint32_t run_cols = kEveryTileAtOnce ? cols : std::min(cols, kClaheColumnsPerCall);
  const std::uint32_t kept_rows = kEveryTileAtOnce ? rows : std::min<std::uint32_t>(rows, 2);
  std::vector<T> luts(std::size_t{kept_rows} * cols * kValues);
  std::vector<std::int64_t> lut_row_in_slot(kept_rows, -1);
  std::vector<std::uint64_t> hist;
  std::vector<std::pair<std::uint32_t, Plan>> plans;  // by the run's tile columns: at most two shapes
  plans.reserve(2);
  auto plan_for = [&](std::uint32_t run) -> const Plan& {
    for (const auto& [c, plan] : plans)
      if (c == run) return plan;
    plans.emplace_back(run, Plan(Request::tiles(type, values, band_rows, run), options));
    return plans.back().second;
  };
  auto count_band = [&](std::uint32_t first_row) {
    for (std::uint32_t c0 = 0; c0 < cols; c0 += run_cols) {
      const std::uint32_t run = std::min(run_cols, cols - c0);
      const Plan& plan = plan_for(run);
      hist.resize(plan.request().output_slots());  // fill_slots without accumulate writes every slot
      const T* corner = source + std::size_t{first_row} * tile_height * ext_width + std::size_t{c0} * tile_width;
      plan.fill_slots(hist.data(),
                      Input::image(corner, std::uint64_t{run} * tile_width, std::uint64_t{band_rows} * tile_height,
                                   std::uint64_t{ext_width} * sizeof(T)),
                      /*accumulate=*/false);
      for (std::uint32_t r = 0; r < band_rows; ++r)
        for (std::uint32_t c = 0; c < run; ++c) {
          const std::uint32_t t = first_row + r;
          make_lut(hist.data() + (std::size_t{r} * run + c) * values.slots(),
                   luts.data() + (std::size_t{t % kept_rows} * cols + c0 + c) * kValues);
        }
    }
    for (std::uint32_t r = 0; r < band_rows; ++r) lut_row_in_slot[(first_row + r) % kept_rows] = first_row + r;
  };
  auto lut_row = [&](std::uint32_t t) -> const T* {
    if (lut_row_in_slot[t % kept_rows] != t) count_band(t / band_rows * band_rows);
    return luts.data() + std::size_t{t % kept_rows} * cols * kValues;
  };

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
  Image out = Image::blank(width, height, 1, img.bit_depth);
  T* written = reinterpret_cast<T*>(out.bytes.data());
  const float inv_tile_height = 1.0f / static_cast<float>(tile_height);
  auto tile_rows_of = [&](std::uint32_t y) {
    const std::int64_t y1 = static_cast<std::int64_t>(std::floor(static_cast<float>(y) * inv_tile_height - 0.5f));
    return std::pair{static_cast<std::uint32_t>(std::max<std::int64_t>(y1, 0)),
                     static_cast<std::uint32_t>(std::min<std::int64_t>(y1 + 1, rows - 1))};
  };
  auto write_row = [&](std::uint32_t y, const T* top, const T* bottom) {
    const float fy = static_cast<float>(y) * inv_tile_height - 0.5f;
    const float b = fy - std::floor(fy), b1 = 1.0f - b;
    const T* src = pixels + std::size_t{y} * width;
    T* dst = written + std::size_t{y} * width;
    for (std::uint32_t x = 0; x < width; ++x) {
      const std::size_t v = src[x];
      const float l11 = top[std::size_t{left[x]} * kValues + v], l12 = top[std::size_t{right[x]} * kValues + v];
      const float l21 = bottom[std::size_t{left[x]} * kValues + v], l22 = bottom[std::size_t{right[x]} * kValues + v];
      const float res = (l11 * weight_left[x] + l12 * weight_right[x]) * b1 + (l21 * weight_left[x] + l22 * weight_right[x]) * b;
      dst[x] = saturate<T>(res);
    }
  };
  // The rows between two tile rows' centres share their LUTs: each such group
  // is split among the worker threads (OpenCV's parallel_for_ over rows), with
  // a part per 64 Ki pixels at least, so small images stay on one thread.
  const unsigned threads = cpu_parallel_detail::threads_or_cores(options.threads);
  for (std::uint32_t y0 = 0; y0 < height;) {
    const auto [top_row, bottom_row] = tile_rows_of(y0);
    std::uint32_t y1 = y0 + 1;
    while (y1 < height && tile_rows_of(y1) == std::pair{top_row, bottom_row}) ++y1;
    const T* top = lut_row(top_row);
    const T* bottom = lut_row(bottom_row);
    const std::uint64_t group = y1 - y0;
    const unsigned parts = static_cast<unsigned>(
        std::clamp<std::uint64_t>(group * width / 65536, 1, std::min<std::uint64_t>(threads, group)));
    cpu_parallel_detail::fork_join(parts, [&](unsigned part) {
      const std::uint32_t from = y0 + static_cast<std::uint32_t>(group * part / parts);
      const std::uint32_t to = y0 + static_cast<std::uint32_t>(group * (part + 1) / parts);
      for (std::uint32_t y = from; y < to; ++y) write_row(y, top, bottom);
    });
    y0 = y1;
  }
  return out;
}

}  // namespace

Image clahe(const Image& img, const ClaheOptions& clahe_options, const Options& options) {
  require_gray(img, "CLAHE", false);
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
  return img.bit_depth == 16 ? clahe_of<std::uint16_t>(img, rows, cols, clahe_options.clip_limit, options)
                             : clahe_of<std::uint8_t>(img, rows, cols, clahe_options.clip_limit, options);
}

}  // namespace levelhist::image
