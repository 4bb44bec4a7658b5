// `levelhist count`: the histogram of binary samples in files or standard input.
#include <algorithm>
#include <bit>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>
#include <type_traits>

#include "cli.hpp"
#include "cli_plot.hpp"
#include "input.hpp"
#include "json.hpp"
#include "npy.hpp"
#include "levelhist/bin_index.hpp"
#include "levelhist/sparse.hpp"

namespace levelhist::cli {

const char* const kCountHelp =
    "Usage: levelhist count [OPTION]... [FILE|-]...\n"
    "Count binary samples (little-endian) from the FILEs, or from standard input when\n"
    "there is no FILE or a FILE is '-', into one histogram over all of them. A NumPy\n"
    "file (.npy: numpy.save) gives its samples' type in its header, and only its\n"
    "array is counted, never the header.\n"
    "\n"
    "Samples:\n"
    "  --type T          u8 (default), i8, u16, i16, i32, u32, f32 or f64; with --sparse\n"
    "                    u32, i32, u64 or i64. For .npy files it may be left out; if\n"
    "                    given, it must be the files' dtype\n"
    "Bins (default: one bin per value for 8- and 16-bit types; wider types need bins):\n"
    "  --bins N          N even bins; over --range, or over the type's whole range for\n"
    "                    integer types when --range is not given\n"
    "  --range LO:HI     bins over [LO, HI); without --bins, integer types with integer\n"
    "                    LO, HI get one bin per value (at most 65536)\n"
    "  --range auto      a first pass finds the data's min and max; bins over [min, max],\n"
    "                    the last bin including max (numpy); without --bins: one bin per\n"
    "                    value for integer types when that is <= 65536 bins, else 256\n"
    "  --edges E0,E1,..  explicit, strictly increasing bin edges (not with --bins/--range)\n"
    "  --numpy           the last bin includes its upper edge, as numpy.histogram\n"
    "Pixels and weights:\n"
    "  --channels N      the samples are pixels of N interleaved channels (1-4, e.g.\n"
    "                    4 for RGBA): one histogram per channel, same bins\n"
    "  --active LIST     only these channels, e.g. 0,1,2 (default: all of them)\n"
    "  --weights FILE    sum the weights in FILE (one per sample, in the order of\n"
    "                    the samples) per bin instead of counting samples\n"
    "  --weight-type T   the weights' type: f32 (default) or f64\n"
    "N-d histograms (numpy.histogramdd; each axis keeps its own underflow, overflow\n"
    "and NaN counts):\n"
    "  --columns K       each point is K consecutive samples (2..4), one per axis;\n"
    "                    --bins N1,N2,.. and --range LO:HI,LO:HI,.. give each axis's\n"
    "                    bins (one value: every axis), --edges E0,E1,../E0,E1,..\n"
    "                    explicit edges per axis ('/' between axes); --numpy closes\n"
    "                    every axis's last bin as histogramdd does\n"
    "Sparse histograms (far more possible values than samples):\n"
    "  --sparse          with --type u32, i32, u64 or i64: one (value, count) pair per\n"
    "                    value that occurs, by value (sort + reduce_by_key); no bins\n"
    "Running:\n"
    "  --backend B       auto (default), cpu or cuda; auto counts plain samples and\n"
    "                    pixels on the CPU (faster than a file or pipe is read),\n"
    "                    weights and --columns on a GPU when one is present\n"
    "  --strategy NAME   a strategy from 'levelhist list', or auto (default)\n"
    "  --threads N       CPU worker threads; 0 (default) = all cores\n"
    "  --devices D       CUDA devices that share the counting: all, or a list\n"
    "                    such as 0,2 (default: the current device alone)\n"
    "Output:\n"
    "  --format F        table (default): non-empty bins with bars, then totals;\n"
    "                    csv: bin,lower,upper,count for every bin, then the rows\n"
    "                    underflow, overflow and nan;\n"
    "                    json: one object with counts, edges, totals, type, strategy\n"
    "                    (--sparse: value,count rows; json \"pairs\": [[value, count], ...])\n"
    "  --per-file        one histogram per FILE, each labelled\n"
    "  --plot OUT        also draw the histogram as bars into OUT, an .svg file (or\n"
    "                    .png in builds with libpng): one series per FILE with\n"
    "                    --per-file, per channel with --channels\n"
    "  --log             the plot's count axis logarithmic (a spike no longer\n"
    "                    flattens the other bars); needs --plot\n"
    "  --no-progress     never show the progress bar (shown on a terminal for\n"
    "                    inputs over 256 MiB)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Samples below the first edge count as underflow, at or above the last as overflow,\n"
    "NaN on its own; nothing is dropped. Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
    "Examples: levelhist count --type f32 --bins 100 --range auto data.f32\n"
    "          levelhist count --bins 100 --range auto --format json latency.npy\n";

namespace {

// ---- --range auto: the first pass -------------------------------------------------

struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  std::uint64_t samples = 0;
  std::uint64_t finite = 0;
  std::uint64_t nan = 0;
  std::uint64_t infinite = 0;
  void merge(const Extent& o) {
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
    samples += o.samples;
    finite += o.finite;
    nan += o.nan;
    infinite += o.infinite;
  }
};

// n samples `stride` bytes apart (one channel of interleaved pixels: stride > sizeof(T)).
template <class T>
Extent extent_serial(const unsigned char* p, std::uint64_t n, std::uint64_t stride) {
  Extent e;
  e.samples = n;
  if constexpr (std::is_integral_v<T>) {
    T lo = std::numeric_limits<T>::max(), hi = std::numeric_limits<T>::lowest();
    for (std::uint64_t i = 0; i < n; ++i) {
      T x;
      std::memcpy(&x, p + i * stride, sizeof(T));
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    if (n) e.lo = lo, e.hi = hi, e.finite = n;
  } else {
    T lo = std::numeric_limits<T>::infinity(), hi = -std::numeric_limits<T>::infinity();
    std::uint64_t nan = 0, inf = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      T x;
      std::memcpy(&x, p + i * stride, sizeof(T));
      if (x != x) ++nan;
      else if (std::isinf(x)) ++inf;
      else lo = std::min(lo, x), hi = std::max(hi, x);
    }
    e.nan = nan;
    e.infinite = inf;
    e.finite = n - nan - inf;
    if (e.finite) e.lo = lo, e.hi = hi;
  }
  return e;
}

// stride 0: packed samples.
Extent extent_of(SampleType type, const unsigned char* p, std::uint64_t n, unsigned threads, std::uint64_t stride = 0) {
  return visit_sample_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::uint64_t step = stride ? stride : sizeof(T);
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    if (n * step < (std::uint64_t{4} << 20) || threads == 1) return extent_serial<T>(p, n, step);
    std::vector<Extent> parts(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      std::uint64_t b = n * t / threads, e = n * (t + 1) / threads;
      pool.emplace_back([&, t, b, e] { parts[t] = extent_serial<T>(p + b * step, e - b, step); });
    }
    for (auto& th : pool) th.join();
    Extent all;
    for (const Extent& x : parts) all.merge(x);
    return all;
  });
}

// ---- binning ------------------------------------------------------------------

struct BinArgs {
  std::optional<std::uint64_t> bins;
  std::optional<RangeArg> range;
  std::optional<std::vector<double>> edges;
  bool numpy = false;
};

// Every binning except --range auto; throws the CLI's errors.
Binning static_binning(SampleType type, const BinArgs& a) {
  const std::string t(to_string(type));
  try {
    if (a.edges) return Binning::explicit_edges(*a.edges, a.numpy);
    if (a.range && a.bins) return Binning::even(*a.bins, a.range->lower, a.range->upper, a.numpy);
    if (a.range) {
      double lo = a.range->lower, hi = a.range->upper;
      if (is_integer(type) && std::floor(lo) == lo && std::floor(hi) == hi && hi - lo <= 65536.0)
        return Binning::even(static_cast<std::uint64_t>(hi - lo), lo, hi, a.numpy);
      usage_error("--range " + format_number(lo) + ":" + format_number(hi) + " needs --bins N for " + t +
                      " samples (one bin per value needs an integer type, integer bounds and at most 65536 values)",
                  "add --bins N");
    }
    if (a.bins) {
      if (!is_integer(type))
        usage_error("--bins needs a range for " + t + " samples", "add --range LO:HI or --range auto");
      double lo = 0, hi = 0;
      switch (type) {
        case SampleType::u8: lo = 0, hi = 256; break;
        case SampleType::i8: lo = -128, hi = 128; break;
        case SampleType::u16: lo = 0, hi = 65536; break;
        case SampleType::i16: lo = -32768, hi = 32768; break;
        case SampleType::i32: lo = -2147483648.0, hi = 2147483648.0; break;
        default: lo = 0, hi = 4294967296.0; break;
      }
      return Binning::even(*a.bins, lo, hi, a.numpy);
    }
    if (sample_size(type) > 2)
      usage_error(t + " samples need bins (one bin per value is only the default for 8- and 16-bit types)",
                  "give --bins N with --range LO:HI or --range auto, or --edges E0,E1,...");
    Binning b = Binning::per_value(type);
    return a.numpy ? Binning::even(b.bins(), b.lower(), b.upper(), true) : b;
  } catch (const Error& e) {
    if (e.subject() != ErrorSubject::binning) throw;  // the CLI's own errors carry their fix already
    throw Error(e.kind(), e.message() + "; check --bins, --range and --edges");
  }
}

// The binning of --range auto from the first pass (see kCountHelp and docs/CLI.md).
Binning auto_binning(SampleType type, const BinArgs& a, const Extent& x) {
  if (x.samples > 0 && x.finite == 0) {
    std::string what = "--range auto: the input has no finite samples to take a range from (" + std::to_string(x.nan) +
                       " NaN, " + std::to_string(x.infinite) + " infinite)";
    input_error(what, "give --range LO:HI or --edges");
  }
  double lo = x.lo, hi = x.hi;
  if (x.samples == 0) lo = hi = 0.0;  // empty input: numpy's [0, 1] below
  try {
    if (is_integer(type) && !a.bins) {
      double span = hi - lo + 1.0;
      if (span <= 65536.0) return Binning::even(static_cast<std::uint64_t>(span), lo, hi + 1.0, false);
      return Binning::even(256, lo, hi, true);
    }
    std::uint64_t bins = a.bins ? *a.bins : 256;
    if (x.samples == 0) {
      lo = 0.0, hi = 1.0;
    } else if (lo == hi) {
      // numpy: a single value v gets the range [v - 0.5, v + 0.5].
      double l = lo - 0.5, h = hi + 0.5;
      if (!(l < h)) l = std::nextafter(lo, -INFINITY), h = std::nextafter(hi, INFINITY);
      lo = l, hi = h;
    }
    return Binning::even(bins, lo, hi, true);
  } catch (const Error& e) {
    throw Error(e.kind(), "--range auto found [" + format_number(lo) + ", " + format_number(hi) + "]: " + e.message() +
                              "; give --range LO:HI");
  }
}

// The CLI's own counters must fit in memory: refuse up front rather than be
// killed half-way (the strategies' private copies come on top of this).
void check_counter_memory(const Binning& b, std::size_t histograms) {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  long double need = static_cast<long double>(b.slots()) * 8.0L * static_cast<long double>(histograms);
  long double have = static_cast<long double>(pages) * static_cast<long double>(page);
  if (need <= have) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%llu bins need %.1Lf GiB of counters (%zu histogram%s), more than this machine's %.1Lf GiB",
                static_cast<unsigned long long>(b.bins()), need / (1024.0L * 1024 * 1024), histograms,
                histograms == 1 ? "" : "s", have / (1024.0L * 1024 * 1024));
  input_error(buf, histograms > 1 ? "use fewer bins or drop --per-file" : "use fewer bins");
}

}  // namespace

Binning binning_of_options(SampleType type, const ParsedArgs& p) {
  if (p.has("--edges") && (p.has("--bins") || p.has("--range")))
    usage_error("--edges and --bins/--range both give the bins", "use one of them: --edges sets every edge itself");
  BinArgs a;
  a.numpy = p.has("--numpy");
  if (auto v = p.value("--bins")) a.bins = parse_count("--bins", *v, 1, kMaxBins);
  if (auto v = p.value("--range")) a.range = parse_range(*v);
  if (auto v = p.value("--edges")) a.edges = parse_edges(*v);
  if (a.range && a.range->automatic)
    usage_error("--range auto takes its range from the data", "give --range LO:HI here");
  return static_binning(type, a);
}

namespace {

// ---- output -----------------------------------------------------------------

// The slots after the bins, as csv_rows asks for their values.
constexpr std::uint64_t kUnderflow = ~std::uint64_t{0}, kOverflow = kUnderflow - 1, kNan = kUnderflow - 2;

std::string bin_label(const Binning& b, const std::vector<double>& edges, std::uint64_t i, bool unit) {
  if (unit) return format_number(edges[i]);
  bool closed = b.last_bin_inclusive() && i + 1 == b.bins();
  std::string label = "[";
  label += format_number(edges[i]);
  label += ", ";
  label += format_number(edges[i + 1]);
  label += closed ? "]" : ")";
  return label;
}

std::string table_of(const Histogram& h, const std::vector<double>& edges, int width) {
  const Binning& b = h.binning();
  bool unit = b.unit_integer_bins();
  std::vector<TableRow> rows;
  for (std::uint64_t i = 0; i < h.bins(); ++i)
    if (h.count(i)) rows.push_back({bin_label(b, edges, i, unit), h.count(i)});
  std::string out = rows.empty() ? std::string("(no sample in any bin)\n") : render_rows(rows, h.total(), width);
  out += render_summary({{"total", std::to_string(h.total())},
                         {"underflow", std::to_string(h.underflow())},
                         {"overflow", std::to_string(h.overflow())},
                         {"nan", std::to_string(h.nan())}});
  return out;
}

Json counts_of(const Histogram& h) {
  Json counts = Json::array();
  for (std::uint64_t i = 0; i < h.bins(); ++i) counts.push_back(h.count(i));
  return counts;
}

// total, underflow, overflow and nan: nothing counted is left out.
void add_totals(Json& object, const Histogram& h) {
  object["total"] = h.total();
  object["underflow"] = h.underflow();
  object["overflow"] = h.overflow();
  object["nan"] = h.nan();
}

// The fields every JSON document of `count` opens with: format_version,
// command, type and the input files.
Json count_document(std::string_view type, const InputSet& inputs) {
  Json doc = json_document("count");
  doc["type"] = std::string(type);
  Json files = Json::array();
  for (std::size_t f = 0; f < inputs.size(); ++f) files.push_back(inputs[f].arg);
  doc["files"] = files;
  return doc;
}

// The binning fields: bins, last_bin_inclusive and every edge.
void add_binning(Json& doc, const Binning& b, const std::vector<double>& edges) {
  doc["bins"] = b.bins();
  doc["last_bin_inclusive"] = b.last_bin_inclusive();
  doc["edges"] = edges;
}

// The CSV rows of one histogram: every bin, then underflow (-inf up to the
// first edge), overflow (the last edge up to inf) and nan (no bounds), each
// after `prefix` (a file or channel column). `value` gives a slot's text:
// a count, or a sum of weights.
template <class ValueText>
void csv_rows(std::string& out, const std::string& prefix, const std::vector<std::string>& e, std::uint64_t bins,
              ValueText&& value) {
  for (std::uint64_t i = 0; i < bins; ++i)
    out += prefix + std::to_string(i) + "," + e[i] + "," + e[i + 1] + "," + value(i) + "\n";
  out += prefix + "underflow,-inf," + e.front() + "," + value(kUnderflow) + "\n";
  out += prefix + "overflow," + e.back() + ",inf," + value(kOverflow) + "\n";
  out += prefix + "nan,,," + value(kNan) + "\n";
}

std::vector<std::string> edge_texts(const std::vector<double>& edges) {
  std::vector<std::string> e(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) e[i] = format_number(edges[i]);
  return e;
}

// The count of bin i, or of kUnderflow, kOverflow, kNan.
std::string count_text(const Histogram& h, std::uint64_t i) {
  if (i == kUnderflow) return std::to_string(h.underflow());
  if (i == kOverflow) return std::to_string(h.overflow());
  if (i == kNan) return std::to_string(h.nan());
  return std::to_string(h.count(i));
}

std::string render(Format format, SampleType type, const Histogram& all, const std::vector<Histogram>& per_file,
                   const InputSet& inputs, bool per_file_mode, const std::string& strategy) {
  const Binning& b = all.binning();
  std::vector<double> edges = bin_edges(b);
  std::string out;
  if (format == Format::table) {
    int width = terminal_width();
    if (!per_file_mode) return table_of(all, edges, width);
    for (std::size_t f = 0; f < per_file.size(); ++f) {
      if (f) out += '\n';
      out += "==> " + (inputs[f].is_stdin ? std::string("standard input") : display_name(inputs[f].arg)) + " <==\n";
      out += table_of(per_file[f], edges, width);
    }
    return out;
  }
  if (format == Format::csv) {
    const std::vector<std::string> e = edge_texts(edges);
    if (!per_file_mode) {
      out = "bin,lower,upper,count\n";
      csv_rows(out, "", e, b.bins(), [&](std::uint64_t i) { return count_text(all, i); });
      return out;
    }
    out = "file,bin,lower,upper,count\n";
    for (std::size_t f = 0; f < per_file.size(); ++f)
      csv_rows(out, csv_field(inputs[f].arg) + ",", e, b.bins(), [&](std::uint64_t i) { return count_text(per_file[f], i); });
    return out;
  }
  Json doc = count_document(to_string(type), inputs);
  doc["strategy"] = strategy;
  add_binning(doc, b, edges);
  doc["counts"] = counts_of(all);
  add_totals(doc, all);
  if (per_file_mode) {
    Json list = Json::array();
    for (std::size_t f = 0; f < per_file.size(); ++f) {
      Json entry = Json::object();
      entry["file"] = inputs[f].arg;
      entry["counts"] = counts_of(per_file[f]);
      add_totals(entry, per_file[f]);
      list.push_back(std::move(entry));
    }
    doc["per_file"] = std::move(list);
  }
  return json_text(doc);
}

// ---- output of --channels and --weights ---------------------------------------

// One histogram per active channel: table blocks, a channel column, a JSON list.
std::string render_channels(Format format, SampleType type, unsigned channels, unsigned active,
                            const std::vector<Histogram>& hists, const InputSet& inputs, const std::string& strategy) {
  const Binning& b = hists.front().binning();
  std::vector<unsigned> ids;
  for (unsigned c = 0; c < channels; ++c)
    if (active >> c & 1u) ids.push_back(c);
  std::vector<double> edges = bin_edges(b);
  std::string out;
  if (format == Format::table) {
    int width = terminal_width();
    for (std::size_t h = 0; h < hists.size(); ++h) {
      if (h) out += '\n';
      out += "==> channel " + std::to_string(ids[h]) + " <==\n";
      out += table_of(hists[h], edges, width);
    }
    return out;
  }
  if (format == Format::csv) {
    const std::vector<std::string> e = edge_texts(edges);
    out = "channel,bin,lower,upper,count\n";
    for (std::size_t h = 0; h < hists.size(); ++h)
      csv_rows(out, std::to_string(ids[h]) + ",", e, b.bins(), [&](std::uint64_t i) { return count_text(hists[h], i); });
    return out;
  }
  Json doc = count_document(to_string(type), inputs);
  doc["strategy"] = strategy;
  doc["pixel_channels"] = channels;
  add_binning(doc, b, edges);
  Json list = Json::array();
  for (std::size_t h = 0; h < hists.size(); ++h) {
    Json entry = Json::object();
    entry["channel"] = ids[h];
    entry["counts"] = counts_of(hists[h]);
    add_totals(entry, hists[h]);
    list.push_back(std::move(entry));
  }
  doc["channels"] = std::move(list);
  return json_text(doc);
}

// A sum of weights for tables and CSV, nan, inf and -inf spelled out (in
// JSON, json_text writes them as null).
std::string sum_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return format_number(v);
}

std::string render_weighted(Format format, SampleType type, SampleType weight_type, const std::string& weights_file,
                            const WeightedHistogram& h, const InputSet& inputs, const std::string& strategy) {
  const Binning& b = h.binning();
  std::vector<double> edges = bin_edges(b);
  std::string out;
  if (format == Format::table) {
    bool unit = b.unit_integer_bins();
    std::vector<std::pair<std::string, std::string>> rows;
    for (std::uint64_t i = 0; i < b.bins(); ++i)
      if (h.sum(i) != 0.0 || std::isnan(h.sum(i))) rows.push_back({bin_label(b, edges, i, unit), sum_text(h.sum(i))});
    out = rows.empty() ? std::string("(no weight in any bin)\n") : render_summary(rows);
    out += render_summary({{"total", sum_text(h.total())},
                           {"underflow", sum_text(h.underflow())},
                           {"overflow", sum_text(h.overflow())},
                           {"nan", sum_text(h.nan())}});
    return out;
  }
  if (format == Format::csv) {
    out = "bin,lower,upper,sum\n";
    csv_rows(out, "", edge_texts(edges), b.bins(), [&](std::uint64_t i) {
      return sum_text(i == kUnderflow ? h.underflow() : i == kOverflow ? h.overflow() : i == kNan ? h.nan() : h.sum(i));
    });
    return out;
  }
  Json doc = count_document(to_string(type), inputs);
  doc["weights"] = weights_file;
  doc["weight_type"] = std::string(to_string(weight_type));
  doc["strategy"] = strategy;
  add_binning(doc, b, edges);
  Json sums = Json::array();
  for (std::uint64_t i = 0; i < b.bins(); ++i) sums.push_back(h.sum(i));
  doc["sums"] = std::move(sums);
  doc["total"] = h.total();
  doc["underflow"] = h.underflow();
  doc["overflow"] = h.overflow();
  doc["nan"] = h.nan();
  return json_text(doc);
}

// ---- --plot ---------------------------------------------------------------------

std::string input_name(const Input& in) { return in.is_stdin ? std::string("standard input") : display_name(in.arg); }

// The plot's title: the input's name, or the first names and how many more.
std::string inputs_title(const InputSet& inputs) {
  std::string title;
  const std::size_t shown = inputs.size() <= 3 ? inputs.size() : 2;
  for (std::size_t i = 0; i < shown; ++i) title += (i ? ", " : "") + input_name(inputs[i]);
  if (shown < inputs.size()) title += " and " + std::to_string(inputs.size() - shown) + " more";
  return title;
}

// ---- NumPy .npy inputs ----------------------------------------------------------

using NpyHeaders = std::vector<std::optional<npy::Header>>;

// The header of every input that starts with the NumPy magic (nullopt for a
// raw input), read before anything is counted, and skipped: a file that
// starts with the magic is never counted as raw samples.
NpyHeaders read_npy_headers(InputSet& inputs) {
  NpyHeaders headers(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<unsigned char> head = inputs.peek(i, npy::kPreambleSize);
    if (!npy::has_magic(head)) continue;
    const std::size_t size = npy::header_size(head, inputs[i].label);
    head = inputs.peek(i, size);
    headers[i] = npy::parse_header(head, inputs[i].label);
    inputs.skip_header(i, headers[i]->data_offset);
  }
  return headers;
}

// levelhist's name for the dtype of a .npy file ("<f4" -> "f32"); input
// errors for what it cannot count (objects, booleans, big-endian data, ...).
std::string npy_type_name(const npy::Header& h, const std::string& label) {
  const std::string descr = quote(h.descr);
  if (h.kind == 'O')
    input_error(label + ": the array holds Python objects (dtype " + descr + "), not numbers",
                "save numbers, e.g. numpy.save('x.npy', a.astype(numpy.float64))");
  if (h.kind == 'b')
    input_error(label + ": the array holds booleans (dtype " + descr + ")",
                "save them as bytes: numpy.save('x.npy', a.astype(numpy.uint8))");
  const std::uint64_t n = h.item_size;
  const bool integer = (h.kind == 'u' || h.kind == 'i') && (n == 1 || n == 2 || n == 4 || n == 8);
  const bool floating = h.kind == 'f' && (n == 4 || n == 8);
  if (!integer && !floating)
    input_error(label + ": the NumPy dtype " + descr + " is not one levelhist counts",
                "save it as (u)int8/16/32/64, float32 or float64, e.g. a.astype(numpy.float64)");
  const bool big = h.byte_order == '>' || (h.byte_order == '=' && std::endian::native == std::endian::big);
  if (big && n > 1)
    input_error(label + ": the array is big-endian (dtype " + descr + ")",
                "save it little-endian: numpy.save('x.npy', a.astype(a.dtype.newbyteorder('<')))");
  return std::string(1, h.kind) + std::to_string(n * 8);
}

// The one type of the inputs: --type (`option`) or the .npy headers', which
// must all agree with it and with each other; a raw input beside .npy files
// needs --type. Returns "" when there is neither (the caller's default).
std::string resolve_npy_type(const std::optional<std::string>& option, const NpyHeaders& headers,
                             const InputSet& inputs) {
  std::string found;
  std::size_t first = 0;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    if (!headers[i]) continue;
    const std::string name = npy_type_name(*headers[i], inputs[i].label);
    if (found.empty()) {
      found = name;
      first = i;
    } else if (name != found) {
      input_error(inputs[i].label + " holds " + name + " samples and " + inputs[first].label + " " + found +
                      " samples; one histogram counts one type",
                  "count them in separate runs");
    }
  }
  if (found.empty()) return option.value_or("");
  if (option && *option != found)
    usage_error(inputs[first].label + " holds " + found + " samples (NumPy dtype " + quote(headers[first]->descr) +
                    "), not " + *option + " as --type says",
                "drop --type: a .npy file's header gives the type");
  if (!option)
    for (std::size_t i = 0; i < headers.size(); ++i)
      if (!headers[i])
        usage_error(inputs[i].label + " has no NumPy header, so the type of its samples is not known",
                    "give --type " + found + " (the type of " + inputs[first].label + "), or count it in another run");
  return found;
}

// A sized .npy input holds exactly the bytes its shape and dtype need: no
// fewer (a truncated file) and no more (bytes after the array).
void check_npy_sizes(const NpyHeaders& headers, const InputSet& inputs) {
  for (std::size_t i = 0; i < headers.size(); ++i) {
    if (!headers[i] || !inputs[i].sized) continue;
    const npy::Header& h = *headers[i];
    const std::uint64_t need = h.count * h.item_size;
    if (inputs[i].bytes != need)
      input_error(inputs[i].label + " holds " + std::to_string(inputs[i].bytes) + " bytes after its NumPy header where " +
                      "the shape " + h.shape_text() + " of " + quote(h.descr) + " needs " + std::to_string(need),
                  inputs[i].bytes < need ? "the file is incomplete: save the array again"
                                         : "the file has bytes after the array: save it again with numpy.save");
  }
}

// Where the order of the elements matters (--channels interleaves them,
// --weights pairs them with the samples), a .npy input must be in C order,
// and with --channels its last axis must be the channels.
void check_npy_layout(const NpyHeaders& headers, const InputSet& inputs, unsigned channels, const char* option) {
  for (std::size_t i = 0; i < headers.size(); ++i) {
    if (!headers[i]) continue;
    const npy::Header& h = *headers[i];
    if (h.fortran_order && h.shape.size() >= 2)
      input_error(inputs[i].label + ": the array " + h.shape_text() + " is in Fortran order, so its elements are not in " +
                      "the order " + option + " takes them",
                  "save it in C order: numpy.save('x.npy', numpy.ascontiguousarray(a))");
    if (channels > 1 && h.shape.size() >= 2 && h.shape.back() != channels)
      input_error(inputs[i].label + ": the array's shape " + h.shape_text() + " does not end in " +
                      std::to_string(channels) + " channels",
                  "give --channels " + std::to_string(h.shape.back()) + ", or save the array with its channels last");
  }
}

// A .npy stream (a pipe: its size unknown up front) must end exactly where
// its shape says: `seen` elements came after the header.
void check_npy_elements(const Input& input, const npy::Header& h, std::uint64_t seen) {
  if (seen != h.count)
    input_error(input.label + " holds " + std::to_string(seen) + " elements after its NumPy header where the " +
                    "shape " + h.shape_text() + " says " + std::to_string(h.count),
                seen < h.count ? "the data is incomplete: save the array again"
                               : "the data has bytes after the array: save it again with numpy.save");
}

// Scans input i; a .npy stream (a pipe: its size unknown up front) must end
// exactly where its shape says, checked when it ends. `elements` is the
// elements per sample the callback gets (the channels of a pixel).
void scan_input(InputSet& inputs, std::size_t i, const NpyHeaders& headers, std::uint64_t elements,
                const BlockFn& fn, Progress* progress) {
  if (!headers[i] || inputs[i].sized) return inputs.scan(i, fn, progress);
  std::uint64_t seen = 0;
  inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) {
    seen += n * elements;
    fn(d, n);
  }, progress);
  check_npy_elements(inputs[i], *headers[i], seen);
}

// Counts input i with `fill` (Plan::fill from the input as a Source,
// returning the bytes read); a .npy stream must end exactly where its shape
// says, as in scan_input. `sample_bytes`: the bytes of one element.
//
// On the CPU backend a regular file is counted where it is mapped instead
// (`mapped`, blocks of `units` samples): counting straight from the page cache
// costs less CPU time than pread's copy followed by the count, 0.24 against
// 0.30 s per GiB on the 2-core machine (docs/PERFORMANCE.md, "Files and pipes
// on the CPU path"). Streams, and every input of a GPU plan (read straight
// into pinned buffers), go through the Source.
void count_input(InputSet& inputs, std::size_t i, const NpyHeaders& headers, std::uint64_t sample_bytes,
                 const SourceFn& fill, Progress* progress, const BlockFn* mapped = nullptr, unsigned units = 1) {
  if (mapped && inputs[i].sized) {
    scan_input(inputs, i, headers, units, *mapped, progress);
    return;
  }
  const std::uint64_t bytes = inputs.read_through(i, fill, progress);
  if (!headers[i] || inputs[i].sized) return;
  const std::uint64_t seen = bytes / sample_bytes;
  check_npy_elements(inputs[i], *headers[i], seen);
}

// ---- --sparse -------------------------------------------------------------------

// The key of a pair as text: signed keys were sign-extended (sparse.hpp).
std::string key_text(KeyType type, std::uint64_t value) {
  return key_is_signed(type) ? std::to_string(static_cast<std::int64_t>(value)) : std::to_string(value);
}

// Two lists of pairs by value (the key type's order) as one; equal values add.
std::vector<ValueCount> merge_pairs(KeyType type, const std::vector<ValueCount>& a, const std::vector<ValueCount>& b) {
  if (a.empty()) return b;
  const std::uint64_t flip = key_is_signed(type) ? std::uint64_t{1} << 63 : 0;  // signed order as unsigned order
  std::vector<ValueCount> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && (a[i].value ^ flip) < (b[j].value ^ flip))) out.push_back(a[i++]);
    else if (i == a.size() || (b[j].value ^ flip) < (a[i].value ^ flip)) out.push_back(b[j++]);
    else out.push_back({a[i].value, a[i++].count + b[j++].count});
  }
  return out;
}

std::string render_sparse(Format format, KeyType type, const std::vector<ValueCount>& pairs, const InputSet& inputs,
                          Backend backend) {
  std::uint64_t total = 0;
  for (const ValueCount& p : pairs) total += p.count;
  std::string out;
  if (format == Format::table) {
    std::vector<TableRow> rows;
    rows.reserve(pairs.size());
    for (const ValueCount& p : pairs) rows.push_back({key_text(type, p.value), p.count});
    out = rows.empty() ? std::string("(no keys)\n") : render_rows(rows, total, terminal_width());
    return out + render_summary({{"total", std::to_string(total)}, {"distinct", std::to_string(pairs.size())}});
  }
  if (format == Format::csv) {
    out = "value,count\n";
    for (const ValueCount& p : pairs) out += key_text(type, p.value) + "," + std::to_string(p.count) + "\n";
    return out;
  }
  Json doc = count_document(to_string(type), inputs);
  doc["backend"] = std::string(to_string(backend));
  Json list = Json::array();
  for (const ValueCount& p : pairs) {
    // Signed keys were sign-extended (sparse.hpp): negative values stay negative.
    if (key_is_signed(type)) list.push_back(Json::array({static_cast<std::int64_t>(p.value), p.count}));
    else list.push_back(Json::array({p.value, p.count}));
  }
  doc["pairs"] = std::move(list);
  doc["distinct"] = pairs.size();
  doc["total"] = total;
  return json_text(doc);
}

// `count --sparse`: the (value, count) pairs of 32/64-bit keys, each input
// block counted by levelhist::sparse_histogram and merged into the pairs so far.
int count_sparse(const ParsedArgs& p) {
  const std::optional<std::string> t = p.value("--type");
  if (t && !parse_key_type(*t)) {
    if (parse_sample_type(*t))
      usage_error("--sparse counts 32- and 64-bit integer keys, not " + *t + " samples",
                  "use --type u32, i32, u64 or i64, or drop --sparse for a binned histogram");
    usage_error("unknown key type " + quote(*t), "use --type u32, i32, u64 or i64 with --sparse");
  }
  for (const char* option : {"--bins", "--range", "--edges", "--numpy", "--channels", "--active", "--weights",
                             "--weight-type", "--per-file", "--strategy", kPlotOption, kLogOption})
    if (p.has(option))
      usage_error(std::string(option) + " cannot be combined with --sparse",
                  "drop " + std::string(option) + ": --sparse gives one (value, count) pair per value that occurs");
  const RunOptions run = parse_run_options(p);
  // The key type: --type, or the header of .npy inputs.
  InputSet inputs(input_operands(p), 1, "byte");
  inputs.validate();
  const NpyHeaders headers = read_npy_headers(inputs);
  const std::string name = resolve_npy_type(t, headers, inputs);
  if (name.empty()) usage_error("--sparse needs the key type", "add --type u32, i32, u64 or i64");
  const std::optional<KeyType> key = parse_key_type(name);
  if (!key)
    input_error("the NumPy arrays hold " + name + " samples, and --sparse counts 32- and 64-bit integer keys",
                "drop --sparse for a binned histogram");
  inputs.set_sample(key_size(*key), name);
  check_npy_sizes(headers, inputs);
  Progress progress(inputs.known_bytes(), inputs.all_known(), !p.has("--no-progress"));
  std::vector<ValueCount> pairs;
  Backend backend = Backend::cpu;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    scan_input(inputs, i, headers, 1, [&](const unsigned char* d, std::uint64_t n) {
      call_with_fix([&] { pairs = merge_pairs(*key, pairs, sparse_histogram(*key, d, n, run.library, &backend)); });
    }, &progress);
  progress.finish();
  if (pairs.empty()) {  // no block was counted: say which backend would have run
    call_with_fix([&] { sparse_histogram(*key, nullptr, 0, run.library, &backend); });
  }
  write_stdout(render_sparse(run.format, *key, pairs, inputs, backend));
  return 0;
}

// ---- --columns: N-d points -------------------------------------------------------

// Splits "a<sep>b<sep>c" (an empty text gives one empty item).
std::vector<std::string> split_on(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (std::size_t next; (next = text.find(sep, at)) != std::string::npos; at = next + 1)
    out.push_back(text.substr(at, next - at));
  out.push_back(text.substr(at));
  return out;
}

// One value per axis: `k` values, or one for every axis.
std::vector<std::string> per_axis(const std::string& option, const std::string& text, char sep, unsigned k) {
  std::vector<std::string> items = split_on(text, sep);
  if (items.size() == 1) items.assign(k, items[0]);
  if (items.size() != k)
    usage_error(option + " " + quote(text) + " gives " + std::to_string(items.size()) + " axes for --columns " +
                    std::to_string(k),
                "give one value for every axis, or " + std::to_string(k) + " separated by '" + std::string(1, sep) + "'");
  return items;
}

// The points' cells as rows "i,j,...,count" (csv) or nested lists (json).
std::string render_axes(Format format, SampleType type, const HistogramNd& h, const InputSet& inputs,
                        const std::string& strategy) {
  const std::vector<Binning>& axes = h.axes();
  const unsigned k = h.rank();
  std::vector<std::vector<double>> edges;
  for (const Binning& b : axes) edges.push_back(bin_edges(b));
  std::vector<std::uint64_t> bins(k);
  for (unsigned a = 0; a < k; ++a) bins[a] = axes[a].bins();
  // Every regular cell in row-major order: f(cell index per axis, count).
  auto each_cell = [&](auto&& f) {
    std::vector<std::uint64_t> at(k, 0);
    while (true) {
      f(at, h.slots()[h.index(at)]);
      unsigned a = k;
      while (a > 0 && ++at[a - 1] == bins[a - 1]) at[--a] = 0;
      if (a == 0) return;
    }
  };
  const std::uint64_t total = h.total(), inside = h.in_range();
  std::string out;
  if (format == Format::table) {
    std::vector<TableRow> rows;
    each_cell([&](const std::vector<std::uint64_t>& at, std::uint64_t c) {
      if (!c) return;
      std::string label;
      for (unsigned a = 0; a < k; ++a)
        label += (a ? " x " : "") + bin_label(axes[a], edges[a], at[a], axes[a].unit_integer_bins());
      rows.push_back({label, c});
    });
    out = rows.empty() ? std::string("(no point in every axis's bins)\n") : render_rows(rows, total, terminal_width());
    return out + render_summary({{"total", std::to_string(total)},
                                 {"in_bins", std::to_string(inside)},
                                 {"outside", std::to_string(total - inside)}});
  }
  if (format == Format::csv) {
    for (unsigned a = 0; a < k; ++a) out += "bin" + std::to_string(a) + ",";
    out += "count\n";
    each_cell([&](const std::vector<std::uint64_t>& at, std::uint64_t c) {
      for (unsigned a = 0; a < k; ++a) out += std::to_string(at[a]) + ",";
      out += std::to_string(c) + "\n";
    });
    return out;
  }
  Json doc = count_document(to_string(type), inputs);
  doc["strategy"] = strategy;
  Json axes_json = Json::array();
  for (unsigned a = 0; a < k; ++a) {
    Json axis = Json::object();
    add_binning(axis, axes[a], edges[a]);
    axes_json.push_back(axis);
  }
  doc["axes"] = axes_json;
  // counts: nested lists, axis 0 outermost, as numpy.histogramdd's array.
  std::vector<Json> open(k + 1, Json::array());
  each_cell([&](const std::vector<std::uint64_t>& at, std::uint64_t c) {
    open[k].push_back(c);
    // Close the lists this cell ends: the trailing axes at their last bin.
    for (unsigned a = k; a > 0 && at[a - 1] == bins[a - 1] - 1; --a) {
      open[a - 1].push_back(std::move(open[a]));
      open[a] = Json::array();
    }
  });
  doc["counts"] = open[0].empty() ? Json::array() : open[0][0];
  doc["total"] = total;
  doc["in_bins"] = inside;
  doc["outside"] = total - inside;
  return json_text(doc);
}

int count_columns(const ParsedArgs& p, SampleType type) {
  const unsigned k = static_cast<unsigned>(parse_count("--columns", *p.value("--columns"), 2, kMaxAxes));
  for (const char* option : {"--channels", "--active", "--weights", "--weight-type", "--per-file", kPlotOption})
    if (p.has(option))
      usage_error(std::string(option) + " cannot be combined with --columns",
                  "drop " + std::string(option) + ": --columns counts points into one N-d histogram");
  if (p.has("--edges") && (p.has("--bins") || p.has("--range")))
    usage_error("--edges and --bins/--range both give the bins", "use one of them: --edges sets every edge itself");
  if (auto r = p.value("--range"); r && *r == "auto")
    usage_error("--range auto is not available with --columns", "give --range LO:HI,LO:HI,... for the axes");
  RunOptions run = parse_run_options(p);
  std::vector<std::string> bins, ranges, edges;
  if (auto v = p.value("--bins")) bins = per_axis("--bins", *v, ',', k);
  if (auto v = p.value("--range")) ranges = per_axis("--range", *v, ',', k);
  if (auto v = p.value("--edges")) edges = per_axis("--edges", *v, '/', k);
  std::vector<Binning> axes;
  for (unsigned a = 0; a < k; ++a) {
    BinArgs ba;
    ba.numpy = p.has("--numpy");
    const std::string axis = " (axis " + std::to_string(a) + ")";
    if (!bins.empty()) ba.bins = parse_count("--bins" + axis, bins[a], 1, kMaxBins);
    if (!ranges.empty()) ba.range = parse_range(ranges[a]);
    if (!edges.empty()) ba.edges = parse_edges(edges[a]);
    axes.push_back(static_binning(type, ba));
  }
  const Request request = Request::joint(type, axes);
  call_with_fix([&] { request.validate(); });
  const std::uint64_t slots = request.histogram_slots();
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && static_cast<long double>(slots) * 8 > static_cast<long double>(pages) * page)
    input_error("the " + std::to_string(k) + "-D histogram's " + std::to_string(slots) +
                    " cells need more memory than this machine has",
                "use fewer bins per axis");
  const Plan plan = make_plan(request, run.library);
  const std::string type_name(to_string(type));
  InputSet inputs(input_operands(p), sample_size(type) * k, std::to_string(k) + "-coordinate " + type_name + " point");
  inputs.validate();
  Progress progress(inputs.known_bytes(), inputs.all_known());
  HistogramNd h(axes);
  // N-d points do not come from a Source (levelhist/source.hpp): scanned.
  for (std::size_t i = 0; i < inputs.size(); ++i)
    inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) {  // n whole points
      call_with_fix([&] { plan.fill(h, levelhist::Input::array(d, n)); });
    }, &progress);
  progress.finish();
  write_stdout(render_axes(run.format, type, h, inputs, plan.strategy().name));
  return 0;
}

}  // namespace

std::vector<OptionSpec> count_option_specs() {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.insert(specs.end(), {{"--devices", true},
                             {"--type", true},
                             {"--bins", true},
                             {"--range", true},
                             {"--edges", true},
                             {"--numpy", false},
                             {"--per-file", false},
                             {"--channels", true},
                             {"--active", true},
                             {"--weights", true},
                             {"--weight-type", true},
                             {kPlotOption, true},
                             {kLogOption, false},
                             {"--no-progress", false},
                             {"--sparse", false},
                             {"--columns", true}});
  return specs;
}

int run_count(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("count", args, count_option_specs());
  if (p.help) {
    write_stdout(kCountHelp);
    return 0;
  }
  check_log_option(p);
  if (p.has("--sparse")) return count_sparse(p);
  // Usage first: names and conflicts (exit 2) ...
  // The type: --type, else (once the inputs are open) the .npy headers', else u8.
  SampleType type = SampleType::u8;
  const std::optional<std::string> type_option = p.value("--type");
  if (type_option) {
    auto parsed = parse_sample_type(*type_option);
    if (!parsed && parse_key_type(*type_option))
      usage_error(*type_option + " samples can only be counted with --sparse", "add --sparse for (value, count) pairs");
    if (!parsed)
      usage_error("unknown sample type " + quote(*type_option), "use --type u8, i8, u16, i16, i32, u32, f32 or f64");
    type = *parsed;
  }
  if (p.has("--columns")) return count_columns(p, type);
  if (p.has("--edges") && p.has("--bins"))
    usage_error("--edges and --bins both give the bins", "use one of them: --edges sets every edge itself");
  if (p.has("--edges") && p.has("--range"))
    usage_error("--edges and --range both give the range", "use one of them: --edges sets every edge itself");
  const bool pixels = p.has("--channels"), weighted = p.has("--weights");
  if (p.has("--active") && !pixels) usage_error("--active needs --channels", "add --channels N, the channels of a pixel");
  if (p.has("--weight-type") && !weighted) usage_error("--weight-type needs --weights", "add --weights FILE");
  if (pixels && weighted)
    usage_error("--weights cannot be combined with --channels", "count the channels without weights, or drop --channels");
  if ((pixels || weighted) && p.has("--per-file"))
    usage_error(std::string(pixels ? "--channels" : "--weights") + " cannot be combined with --per-file",
                "run levelhist once per file");
  SampleType weight_type = SampleType::f32;
  const std::optional<std::string> weight_type_option = p.value("--weight-type");
  if (weight_type_option) {
    auto parsed = parse_sample_type(*weight_type_option);
    if (!parsed || (*parsed != SampleType::f32 && *parsed != SampleType::f64))
      usage_error("unknown weight type " + quote(*weight_type_option), "use --weight-type f32 or f64");
    weight_type = *parsed;
  }
  if (weighted && *p.value("--weights") == "-")
    usage_error("--weights cannot read standard input", "give the weights in a file");
  RunOptions run = parse_run_options(p);
  const std::optional<std::string> plot_path = p.value(kPlotOption);
  if (plot_path) {
    check_plot_path(*plot_path);
    for (const std::string& input : input_operands(p)) refuse_overwriting_input(input, *plot_path, kPlotOption);
    if (weighted) refuse_overwriting_input(*p.value("--weights"), *plot_path, kPlotOption);
  }
  // ... then values (exit 1).
  BinArgs bin_args;
  bin_args.numpy = p.has("--numpy");
  if (auto v = p.value("--bins")) bin_args.bins = parse_count("--bins", *v, 1, kMaxBins);
  if (auto v = p.value("--range")) bin_args.range = parse_range(*v);
  if (auto v = p.value("--edges")) bin_args.edges = parse_edges(*v);
  unsigned channels = 1, active = 1;
  if (auto v = p.value("--channels")) {
    channels = static_cast<unsigned>(parse_count("--channels", *v, 1, 4));
    active = (1u << channels) - 1;
    if (auto a = p.value("--active")) active = parse_channel_list(*a, channels);
  }
  const bool automatic = bin_args.range && bin_args.range->automatic;
  std::optional<Binning> binning;
  if (!automatic) binning = static_binning(type, bin_args);

  // The inputs are opened and the .npy headers read: they may give the type.
  InputSet inputs(input_operands(p), 1, "byte");
  inputs.validate();
  const NpyHeaders headers = read_npy_headers(inputs);
  if (const std::string name = resolve_npy_type(type_option, headers, inputs); !name.empty() && !type_option) {
    const std::optional<SampleType> parsed = parse_sample_type(name);
    if (!parsed)
      usage_error("the NumPy arrays hold " + name + " samples, which can only be counted with --sparse",
                  "add --sparse for (value, count) pairs");
    if (*parsed != type) {
      type = *parsed;
      if (!automatic) binning = static_binning(type, bin_args);
    }
  }
  if (pixels || weighted) check_npy_layout(headers, inputs, channels, pixels ? "--channels" : "--weights");
  // With --channels a "sample" of the inputs is a whole pixel.
  const std::uint64_t ss = sample_size(type);
  const std::string type_name = std::string(to_string(type));
  inputs.set_sample(ss * channels, pixels ? std::to_string(channels) + "-channel " + type_name + " pixel" : type_name);
  check_npy_sizes(headers, inputs);
  // The weights, read whole before any sample (one per sample, in order); a
  // .npy file of them gives their type.
  std::vector<unsigned char> weights;
  if (weighted) {
    InputSet weight_input({*p.value("--weights")}, 1, "byte");
    weight_input.validate();
    const NpyHeaders weight_header = read_npy_headers(weight_input);
    if (weight_header[0]) {
      const std::string name = npy_type_name(*weight_header[0], weight_input[0].label);
      if (name != "f32" && name != "f64")
        input_error("the weights in " + weight_input[0].label + " are " + name + ", not f32 or f64",
                    "save them as float32 or float64");
      if (weight_type_option && *weight_type_option != name)
        usage_error("the weights in " + weight_input[0].label + " are " + name + " (NumPy dtype " +
                        quote(weight_header[0]->descr) + "), not " + *weight_type_option + " as --weight-type says",
                    "drop --weight-type: the .npy header gives the type");
      weight_type = *parse_sample_type(name);
      check_npy_layout(weight_header, weight_input, 1, "--weights");
    }
    weight_input.set_sample(sample_size(weight_type), std::string(to_string(weight_type)));
    check_npy_sizes(weight_header, weight_input);
    for (std::size_t i = 0; i < weight_input.size(); ++i)
      scan_input(weight_input, i, weight_header, 1, [&](const unsigned char* d, std::uint64_t n) {
        weights.insert(weights.end(), d, d + n * sample_size(weight_type));
      }, nullptr);
  }
  const std::uint64_t weight_count = weights.size() / sample_size(weight_type);
  auto weights_mismatch = [&](std::uint64_t samples) {
    input_error(quote(*p.value("--weights")) + " has " + std::to_string(weight_count) + " weights for " +
                    (samples == ~std::uint64_t{0} ? std::string("more") : std::to_string(samples)) + " samples",
                "give one " + std::string(to_string(weight_type)) + " weight per sample");
  };
  if (weighted && inputs.all_known() && inputs.known_bytes() / ss != weight_count) weights_mismatch(inputs.known_bytes() / ss);
  const bool show_progress = !p.has("--no-progress");
  if (automatic) {
    Progress spill_progress(0, false, show_progress);
    inputs.make_rescannable(&spill_progress);
    check_npy_sizes(headers, inputs);  // a piped .npy is sized now
  }
  const unsigned passes = automatic ? 2 : 1;
  Progress progress(inputs.known_bytes() * passes, inputs.all_known(), show_progress);

  if (automatic) {
    // The range pass finds the extent of blocks of samples in place (mapped
    // files); it counts nothing, so it needs no Source.
    Extent extent;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      scan_input(inputs, i, headers, channels, [&](const unsigned char* d, std::uint64_t n) {
        if (!pixels) return extent.merge(extent_of(type, d, n, run.library.threads));
        for (unsigned c = 0; c < channels; ++c)  // the active channels' samples only
          if (active >> c & 1u) extent.merge(extent_of(type, d + c * ss, n, run.library.threads, ss * channels));
      }, &progress);
    binning = auto_binning(type, bin_args, extent);
  }
  const bool per_file_mode = p.has("--per-file");
  const unsigned hists = static_cast<unsigned>(std::popcount(active));
  check_counter_memory(*binning, per_file_mode ? inputs.size() + 1 : hists);
  // One plan for the whole run: the strategy is chosen (and a strategy or
  // backend that cannot take the request fails) before a sample is read.
  Request request = weighted ? Request::weighted(type, weight_type, *binning)
                             : Request::pixels(type, channels, active, *binning);
  // What `count` reads is files and pipes, and there the read is the limit:
  // on the H100 machine pread of a page-cached file gives 25.6 GB/s and a pipe
  // 1.9, while the CPU counts 49.9 GB/s; the GPU only adds a CUDA context and
  // pinned buffers to the run (a 1 GiB file: 21.4 GB/s counted on the CPU,
  // 2.7 with the GPU; docs/BENCHMARKS.md, "Host data to the GPU"). So auto
  // counts plain samples and pixels on the CPU; --backend cuda (or a CUDA
  // --strategy) takes the GPU path.
  if (!weighted) count_on_cpu_under_auto(run);
  const Plan plan = make_plan(request, run.library);
  const std::string strategy = plan.strategy().name;
  auto fill = [&](auto& hists, const levelhist::Input& in) { call_with_fix([&] { plan.fill(hists, in); }); };
  // Plain samples and pixels are counted as the library reads each input (a
  // Source); it adds an input's counts only once the input is read whole.
  auto fill_from = [&plan](auto& hists) {
    return [&plan, target = &hists](Source& source) {
      std::uint64_t bytes = 0;
      call_with_fix([&] { bytes = plan.fill(*target, source); });
      return bytes;
    };
  };

  const bool on_cpu = plan.backend() == Backend::cpu;
  if (pixels) {
    std::vector<Histogram> channel_hists(hists, Histogram(*binning));
    const BlockFn map_pixels = [&](const unsigned char* d, std::uint64_t n) {  // n whole pixels
      fill(channel_hists, levelhist::Input::array(d, n * channels));
    };
    for (std::size_t i = 0; i < inputs.size(); ++i)
      count_input(inputs, i, headers, ss, fill_from(channel_hists), &progress, on_cpu ? &map_pixels : nullptr,
                  channels);
    progress.finish();
    detail::StagedOutput plot;
    if (plot_path) {
      std::vector<HistogramSeries> series;
      for (unsigned c = 0, h = 0; c < channels; ++c)
        if (active >> c & 1u) {
          ChannelStyle style = channel_style(c, channels);
          series.push_back({style.label, &channel_hists[h++], style.color});
        }
      plot::Chart chart = histogram_chart(series, inputs_title(inputs));
      if (p.has(kLogOption)) use_log_counts(chart);
      plot = stage_plot(*plot_path, chart);
    }
    write_stdout_then_commit(render_channels(run.format, type, channels, active, channel_hists, inputs, strategy),
                             plot);
    return 0;
  }
  if (weighted) {
    // Samples and their weights go together, a block at a time: the weights
    // are in memory, so the samples are scanned (a Source carries no weights).
    WeightedHistogram sums(*binning);
    std::uint64_t used = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      scan_input(inputs, i, headers, 1, [&](const unsigned char* d, std::uint64_t n) {
        if (n > weight_count - used) weights_mismatch(~std::uint64_t{0});
        fill(sums, levelhist::Input::array(d, n, weights.data() + used * sample_size(weight_type)));
        used += n;
      }, &progress);
    progress.finish();
    if (used != weight_count) weights_mismatch(used);
    detail::StagedOutput plot;
    if (plot_path) {
      BarSeries bars{"", {}, ""};
      for (std::uint64_t i = 0; i < binning->bins(); ++i) bars.values.push_back(sums.sum(i));
      plot::Chart chart = bars_chart(*binning, {bars}, inputs_title(inputs), "sum of weights");
      if (p.has(kLogOption)) use_log_counts(chart);
      plot = stage_plot(*plot_path, chart);
    }
    write_stdout_then_commit(
        render_weighted(run.format, type, weight_type, *p.value("--weights"), sums, inputs, strategy), plot);
    return 0;
  }

  Histogram all(*binning);
  std::vector<Histogram> per_file;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Histogram* target = &all;
    if (per_file_mode) target = &per_file.emplace_back(*binning);
    const BlockFn map_samples = [&](const unsigned char* d, std::uint64_t n) {
      fill(*target, levelhist::Input::array(d, n));
    };
    count_input(inputs, i, headers, ss, fill_from(*target), &progress, on_cpu ? &map_samples : nullptr);
    if (per_file_mode) all += *target;
  }
  progress.finish();
  // The plot is written before standard output, so that a plot that cannot be
  // written fails the run with nothing printed, as every other failure does;
  // a replaced plot file appears only once standard output was written.
  detail::StagedOutput plot;
  if (plot_path) {
    std::vector<HistogramSeries> series;
    for (std::size_t f = 0; f < per_file.size(); ++f) series.push_back({input_name(inputs[f]), &per_file[f], ""});
    plot::Chart chart = per_file_mode ? histogram_chart(series, inputs_title(inputs)) : histogram_chart(all, inputs_title(inputs));
    if (p.has(kLogOption)) use_log_counts(chart);
    plot = stage_plot(*plot_path, chart);
  }
  write_stdout_then_commit(render(run.format, type, all, per_file, inputs, per_file_mode, strategy), plot);
  return 0;
}

}  // namespace levelhist::cli
