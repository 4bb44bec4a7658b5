#include "levelhist/binning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "levelhist/bin_index.hpp"
#include "levelhist/error.hpp"

namespace levelhist {
namespace {

// 17 significant digits, as "%.17g" (what an ostream with precision 17 prints):
// snprintf rather than an ostream, whose double formatting crashed inside the
// Python module on the H100 machine (basic_ostream::_M_insert<double>, from
// the error message of a range too narrow for its bins).
std::string number(double v) {
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%.17g", v);
  return std::string(text, n > 0 ? static_cast<std::size_t>(n) : 0);
}

const char* const kBinCountFix = "ask for 1 to 2^28 bins";
const char* const kRangeFix = "give finite bounds with lower < upper";
const char* const kEdgesFix = "give at least two finite, strictly increasing edges";

void check_bin_count(std::uint64_t bins) {
  if (bins == 0) throw Error(ErrorKind::input, "the number of bins must be at least 1", kBinCountFix, ErrorSubject::binning);
  if (bins > kMaxBins)
    throw Error(ErrorKind::input, "too many bins: " + std::to_string(bins) + " (at most " +
                                      std::to_string(kMaxBins) + ")",
                kBinCountFix, ErrorSubject::binning);
}

}  // namespace

Binning Binning::even(std::uint64_t bins, double lower, double upper, bool last_bin_inclusive, EdgeRounding rounding) {
  check_bin_count(bins);
  if (!std::isfinite(lower) || !std::isfinite(upper))
    throw Error(ErrorKind::input, "the range must be finite, got [" + number(lower) + ", " + number(upper) + ")",
                kRangeFix, ErrorSubject::binning);
  if (!(lower < upper))
    throw Error(ErrorKind::input, "the range must have lower < upper, got [" + number(lower) + ", " +
                                      number(upper) + ")",
                kRangeFix, ErrorSubject::binning);
  if (!std::isfinite(upper - lower))
    throw Error(ErrorKind::input, "the range [" + number(lower) + ", " + number(upper) +
                                      ") is too wide for double arithmetic",
                "use a narrower range", ErrorSubject::binning);
  Binning b;
  b.kind_ = BinKind::even;
  b.bins_ = bins;
  b.last_bin_inclusive_ = last_bin_inclusive;
  b.rounding_ = rounding;
  switch (rounding) {
    case EdgeRounding::none:
      b.lower_ = b.origin_ = lower;
      b.upper_ = upper;
      b.step_ = (upper - lower) / static_cast<double>(bins);
      break;
    case EdgeRounding::f32:
      b.origin_ = lower;
      b.step_ = (upper - lower) / static_cast<double>(bins);
      b.lower_ = static_cast<float>(lower);
      b.upper_ = static_cast<float>(upper);
      break;
    case EdgeRounding::f32_arithmetic: {
      // numpy.linspace(lower, upper, bins + 1, dtype=float32) with float32 bounds:
      // delta = f32(upper - lower), step = f32(delta / f32(bins)) (see even_edge).
      const float lo = static_cast<float>(lower), hi = static_cast<float>(upper);
      const float delta = static_cast<float>(static_cast<double>(hi) - static_cast<double>(lo));
      b.origin_ = b.lower_ = lo;
      b.upper_ = hi;
      b.step_ = static_cast<float>(static_cast<double>(delta) / static_cast<double>(static_cast<float>(bins)));
      break;
    }
  }
  if (rounding != EdgeRounding::none) {
    const char* const fix = "use fewer bins or a wider range, or edges that are not rounded to float32";
    if (!std::isfinite(b.lower_) || !std::isfinite(b.upper_) || !std::isfinite(b.step_))
      throw Error(ErrorKind::input, "the range [" + number(lower) + ", " + number(upper) +
                                        ") does not fit float32 edges",
                  fix, ErrorSubject::binning);
    // Rounding may make neighbouring edges equal: then numpy refuses the bins, and
    // so does levelhist. Edges at least two float32 ulps of the largest bound
    // apart cannot meet; closer ones are checked one by one.
    const double largest = std::max(std::fabs(b.lower_), std::fabs(b.upper_));
    const double ulp = std::ldexp(1.0, std::max(std::ilogb(largest), -126) - 23);
    bool increasing = b.lower_ < b.upper_;
    if (increasing && !((b.upper_ - b.lower_) / static_cast<double>(bins) > 4 * ulp)) {
      const BinIndexer ix = make_indexer(b);
      double previous = ix.even_edge(0);
      for (std::uint64_t i = 1; i <= bins && increasing; ++i) {
        const double e = ix.even_edge(i);
        increasing = previous < e;
        previous = e;
      }
    }
    if (!increasing)
      throw Error(ErrorKind::input, "too many bins for the range [" + number(lower) + ", " + number(upper) +
                                        "): " + std::to_string(bins) + " bins with float32 edges are not all of "
                                        "positive width",
                  fix, ErrorSubject::binning);
  }
  // BinIndexer's first guess multiplies by bins / (upper - lower): if that
  // overflows, every guess is the last bin and slot() walks down bin by bin.
  if (!std::isfinite(static_cast<double>(bins) / (b.upper_ - b.lower_)))
    throw Error(ErrorKind::input, "the range [" + number(lower) + ", " + number(upper) + ") is too narrow for " +
                                      std::to_string(bins) + " bins in double arithmetic",
                "use fewer bins or a wider range", ErrorSubject::binning);
  return b;
}

Binning Binning::explicit_edges(std::vector<double> edges, bool last_bin_inclusive) {
  if (edges.size() < 2)
    throw Error(ErrorKind::input, "explicit edges need at least two values", kEdgesFix, ErrorSubject::binning);
  check_bin_count(edges.size() - 1);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (!std::isfinite(edges[i]))
      throw Error(ErrorKind::input, "edge " + std::to_string(i) + " is not a finite number", kEdgesFix,
                  ErrorSubject::binning);
    if (i > 0 && !(edges[i - 1] < edges[i]))
      throw Error(ErrorKind::input, "edges must be strictly increasing, but edge " + std::to_string(i) + " (" +
                                        number(edges[i]) + ") <= edge " + std::to_string(i - 1) + " (" +
                                        number(edges[i - 1]) + ")",
                  kEdgesFix, ErrorSubject::binning);
  }
  Binning b;
  b.kind_ = BinKind::edges;
  b.bins_ = edges.size() - 1;
  b.lower_ = edges.front();
  b.upper_ = edges.back();
  b.last_bin_inclusive_ = last_bin_inclusive;
  b.origin_ = b.lower_;
  b.step_ = (b.upper_ - b.lower_) / static_cast<double>(b.bins_);
  b.edges_ = std::move(edges);
  return b;
}

Binning Binning::per_value(SampleType type) {
  switch (type) {
    case SampleType::u8: return even(256, 0.0, 256.0);
    case SampleType::i8: return even(256, -128.0, 128.0);
    case SampleType::u16: return even(65536, 0.0, 65536.0);
    case SampleType::i16: return even(65536, -32768.0, 32768.0);
    default: break;
  }
  throw Error(ErrorKind::input,
              "one bin per value is only defined for 8- and 16-bit samples, not " + std::string(to_string(type)),
              "give even bins or explicit edges", ErrorSubject::binning);
}

Binning Binning::default_for(SampleType type) {
  if (sample_size(type) <= 2) return per_value(type);
  throw Error(ErrorKind::usage, std::string(to_string(type)) + " samples need bins",
              "give Binning::even(bins, lower, upper) or Binning::explicit_edges (one bin per value is the default "
              "for 8- and 16-bit samples only)",
              ErrorSubject::binning);
}

double Binning::edge(std::uint64_t i) const {
  if (kind_ == BinKind::edges) return edges_.at(i);
  return make_indexer(*this).even_edge(i);
}

bool Binning::unit_integer_bins() const {
  // Beyond 2^53 not every integer is a double: lower + i would be rounded and edges would collapse.
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  return kind_ == BinKind::even && rounding_ == EdgeRounding::none && std::floor(lower_) == lower_ && std::fabs(lower_) <= kExactIntegers &&
         std::fabs(upper_) <= kExactIntegers && upper_ - lower_ == static_cast<double>(bins_) &&
         (upper_ - lower_) / static_cast<double>(bins_) == 1.0;
}

std::string Binning::describe() const {
  std::string range = "[";  // appended piecewise: GCC 12 warns (-Wrestrict) about "[" + std::string
  range += number(lower_);
  range += ", ";
  range += number(upper_);
  range += last_bin_inclusive_ ? "]" : ")";
  if (kind_ == BinKind::edges) return std::to_string(bins_) + " bins by explicit edges over " + range;
  switch (rounding_) {
    case EdgeRounding::none: break;
    case EdgeRounding::f32: return std::to_string(bins_) + " even bins over " + range + ", edges rounded to float32";
    case EdgeRounding::f32_arithmetic:
      return std::to_string(bins_) + " even bins over " + range + ", edges computed in float32";
  }
  return std::to_string(bins_) + " even bins over " + range;
}

BinIndexer make_indexer(const Binning& binning, const double* edges) {
  BinIndexer ix{};
  ix.kind = binning.kind();
  ix.bins = binning.bins();
  ix.lower = binning.lower();
  ix.upper = binning.upper();
  ix.step = binning.step();
  ix.origin = binning.origin();
  ix.rounding = binning.rounding();
  ix.scale = static_cast<double>(binning.bins()) / (binning.upper() - binning.lower());
  ix.edges = edges ? edges : (binning.edge_values().empty() ? nullptr : binning.edge_values().data());
  ix.last_bin_inclusive = binning.last_bin_inclusive();
  return ix;
}

}  // namespace levelhist
