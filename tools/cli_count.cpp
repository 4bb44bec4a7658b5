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
#include "levelhist/bin_index.hpp"
#include "levelhist/sparse.hpp"

namespace levelhist::cli {

const char* const kCountHelp =
    "Usage: levelhist count [OPTION]... [FILE|-]...\n"
    "Count binary samples (little-endian) from the FILEs, or from standard input when\n"
    "there is no FILE or a FILE is '-', into one histogram over all of them.\n"
    "\n"
    "Samples:\n"
    "  --type T          u8 (default), i8, u16, i16, i32, u32, f32 or f64; with --sparse\n"
    "                    u32, i32, u64 or i64\n"
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
    "Sparse histograms (far more possible values than samples):\n"
    "  --sparse          with --type u32, i32, u64 or i64: one (value, count) pair per\n"
    "                    value that occurs, by value (sort + reduce_by_key); no bins\n"
    "Running:\n"
    "  --backend B       auto (default: CUDA when a GPU is present), cpu or cuda\n"
    "  --strategy NAME   a strategy from 'levelhist list', or auto (default)\n"
    "  --threads N       CPU worker threads; 0 (default) = all cores\n"
    "Output:\n"
    "  --format F        table (default): non-empty bins with bars, then totals;\n"
    "                    csv: bin,lower,upper,count for every bin;\n"
    "                    json: one object with counts, edges, totals, type, strategy\n"
    "                    (--sparse: value,count rows; json \"pairs\": [[value, count], ...])\n"
    "  --per-file        one histogram per FILE, each labelled\n"
    "  --plot OUT        also draw the histogram as bars into OUT, an .svg file (or\n"
    "                    .png in builds with libpng): one series per FILE with\n"
    "                    --per-file, per channel with --channels\n"
    "  -h, --help        show this help\n"
    "\n"
    "Samples below the first edge count as underflow, at or above the last as overflow,\n"
    "NaN on its own; nothing is dropped. Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
    "Example: levelhist count --type f32 --bins 100 --range auto data.f32\n";

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

std::string json_counts(const Histogram& h) {
  std::string out = "[";
  for (std::uint64_t i = 0; i < h.bins(); ++i) {
    if (i) out += ", ";
    out += std::to_string(h.count(i));
  }
  return out + "]";
}

std::string json_totals(const Histogram& h, const std::string& indent) {
  return indent + "\"total\": " + std::to_string(h.total()) + ",\n" + indent + "\"underflow\": " +
         std::to_string(h.underflow()) + ",\n" + indent + "\"overflow\": " + std::to_string(h.overflow()) + ",\n" +
         indent + "\"nan\": " + std::to_string(h.nan());
}

// The fields every JSON document of `count` opens with, after "{":
// command, type and the input files.
std::string json_opening(std::string_view type, const InputSet& inputs) {
  std::string out = "  \"command\": \"count\",\n";
  out += "  \"type\": " + json_string(type) + ",\n";
  out += "  \"files\": [";
  for (std::size_t f = 0; f < inputs.size(); ++f) out += (f ? ", " : "") + json_string(inputs[f].arg);
  out += "],\n";
  return out;
}

// The binning fields: bins, last_bin_inclusive and every edge.
std::string json_binning(const Binning& b, const std::vector<double>& edges) {
  std::string out = "  \"bins\": " + std::to_string(b.bins()) + ",\n";
  out += "  \"last_bin_inclusive\": " + std::string(b.last_bin_inclusive() ? "true" : "false") + ",\n";
  out += "  \"edges\": [";
  for (std::size_t i = 0; i < edges.size(); ++i) out += (i ? ", " : "") + format_number(edges[i]);
  out += "],\n";
  return out;
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
    std::vector<std::string> e(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) e[i] = format_number(edges[i]);
    if (!per_file_mode) {
      out = "bin,lower,upper,count\n";
      for (std::uint64_t i = 0; i < b.bins(); ++i)
        out += std::to_string(i) + "," + e[i] + "," + e[i + 1] + "," + std::to_string(all.count(i)) + "\n";
      return out;
    }
    out = "file,bin,lower,upper,count\n";
    for (std::size_t f = 0; f < per_file.size(); ++f) {
      std::string name = csv_field(inputs[f].arg);
      for (std::uint64_t i = 0; i < b.bins(); ++i)
        out += name + "," + std::to_string(i) + "," + e[i] + "," + e[i + 1] + "," +
               std::to_string(per_file[f].count(i)) + "\n";
    }
    return out;
  }
  // json
  out = "{\n";
  out += json_opening(to_string(type), inputs);
  out += "  \"strategy\": " + json_string(strategy) + ",\n";
  out += json_binning(b, edges);
  out += "  \"counts\": " + json_counts(all) + ",\n";
  out += json_totals(all, "  ");
  if (per_file_mode) {
    out += ",\n  \"per_file\": [";
    for (std::size_t f = 0; f < per_file.size(); ++f) {
      out += f ? ",\n    {\n" : "\n    {\n";
      out += "      \"file\": " + json_string(inputs[f].arg) + ",\n";
      out += "      \"counts\": " + json_counts(per_file[f]) + ",\n";
      out += json_totals(per_file[f], "      ") + "\n    }";
    }
    out += "\n  ]";
  }
  out += "\n}\n";
  return out;
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
    out = "channel,bin,lower,upper,count\n";
    for (std::size_t h = 0; h < hists.size(); ++h)
      for (std::uint64_t i = 0; i < b.bins(); ++i)
        out += std::to_string(ids[h]) + "," + std::to_string(i) + "," + format_number(edges[i]) + "," +
               format_number(edges[i + 1]) + "," + std::to_string(hists[h].count(i)) + "\n";
    return out;
  }
  out = "{\n";
  out += json_opening(to_string(type), inputs);
  out += "  \"strategy\": " + json_string(strategy) + ",\n";
  out += "  \"pixel_channels\": " + std::to_string(channels) + ",\n";
  out += json_binning(b, edges);
  out += "  \"channels\": [";
  for (std::size_t h = 0; h < hists.size(); ++h) {
    out += h ? ",\n    {\n" : "\n    {\n";
    out += "      \"channel\": " + std::to_string(ids[h]) + ",\n";
    out += "      \"counts\": " + json_counts(hists[h]) + ",\n";
    out += json_totals(hists[h], "      ") + "\n    }";
  }
  out += "\n  ]\n}\n";
  return out;
}

// A sum of weights for tables and CSV (nan, inf, -inf spelled out) and for JSON (null).
std::string sum_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return format_number(v);
}
std::string sum_json(double v) { return std::isfinite(v) ? format_number(v) : "null"; }

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
    for (std::uint64_t i = 0; i < b.bins(); ++i)
      out += std::to_string(i) + "," + format_number(edges[i]) + "," + format_number(edges[i + 1]) + "," +
             sum_text(h.sum(i)) + "\n";
    return out;
  }
  out = "{\n";
  out += json_opening(to_string(type), inputs);
  out += "  \"weights\": " + json_string(weights_file) + ",\n";
  out += "  \"weight_type\": " + json_string(to_string(weight_type)) + ",\n";
  out += "  \"strategy\": " + json_string(strategy) + ",\n";
  out += json_binning(b, edges);
  out += "  \"sums\": [";
  for (std::uint64_t i = 0; i < b.bins(); ++i) out += (i ? ", " : "") + sum_json(h.sum(i));
  out += "],\n";
  out += "  \"total\": " + sum_json(h.total()) + ",\n";
  out += "  \"underflow\": " + sum_json(h.underflow()) + ",\n";
  out += "  \"overflow\": " + sum_json(h.overflow()) + ",\n";
  out += "  \"nan\": " + sum_json(h.nan()) + "\n}\n";
  return out;
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
  out = "{\n";
  out += json_opening(to_string(type), inputs);
  out += "  \"backend\": " + json_string(to_string(backend)) + ",\n";
  out += "  \"pairs\": [";
  for (std::size_t i = 0; i < pairs.size(); ++i)
    out += (i ? ", [" : "[") + key_text(type, pairs[i].value) + ", " + std::to_string(pairs[i].count) + "]";
  out += "],\n";
  out += "  \"distinct\": " + std::to_string(pairs.size()) + ",\n";
  out += "  \"total\": " + std::to_string(total) + "\n}\n";
  return out;
}

// `count --sparse`: the (value, count) pairs of 32/64-bit keys, each input
// block counted by levelhist::sparse_histogram and merged into the pairs so far.
int count_sparse(const ParsedArgs& p) {
  const std::optional<std::string> t = p.value("--type");
  if (!t) usage_error("--sparse needs the key type", "add --type u32, i32, u64 or i64");
  const std::optional<KeyType> key = parse_key_type(*t);
  if (!key) {
    if (parse_sample_type(*t))
      usage_error("--sparse counts 32- and 64-bit integer keys, not " + *t + " samples",
                  "use --type u32, i32, u64 or i64, or drop --sparse for a binned histogram");
    usage_error("unknown key type " + quote(*t), "use --type u32, i32, u64 or i64 with --sparse");
  }
  for (const char* option : {"--bins", "--range", "--edges", "--numpy", "--channels", "--active", "--weights",
                             "--weight-type", "--per-file", "--strategy", kPlotOption})
    if (p.has(option))
      usage_error(std::string(option) + " cannot be combined with --sparse",
                  "drop " + std::string(option) + ": --sparse gives one (value, count) pair per value that occurs");
  const RunOptions run = parse_run_options(p);
  InputSet inputs(input_operands(p), key_size(*key), std::string(to_string(*key)));
  inputs.validate();
  Progress progress(inputs.known_bytes(), inputs.all_known());
  std::vector<ValueCount> pairs;
  Backend backend = Backend::cpu;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) {
      call_with_fix([&] { pairs = merge_pairs(*key, pairs, sparse_histogram(*key, d, n, run.library, &backend)); });
    }, &progress);
  progress.finish();
  if (pairs.empty()) {  // no block was counted: say which backend would have run
    call_with_fix([&] { sparse_histogram(*key, nullptr, 0, run.library, &backend); });
  }
  write_stdout(render_sparse(run.format, *key, pairs, inputs, backend));
  return 0;
}

}  // namespace

std::vector<OptionSpec> count_option_specs() {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.insert(specs.end(), {{"--type", true},
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
                             {"--sparse", false}});
  return specs;
}

int run_count(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("count", args, count_option_specs());
  if (p.help) {
    write_stdout(kCountHelp);
    return 0;
  }
  if (p.has("--sparse")) return count_sparse(p);
  // Usage first: names and conflicts (exit 2) ...
  SampleType type = SampleType::u8;
  if (auto t = p.value("--type")) {
    auto parsed = parse_sample_type(*t);
    if (!parsed && parse_key_type(*t))
      usage_error(*t + " samples can only be counted with --sparse", "add --sparse for (value, count) pairs");
    if (!parsed) usage_error("unknown sample type " + quote(*t), "use --type u8, i8, u16, i16, i32, u32, f32 or f64");
    type = *parsed;
  }
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
  if (auto t = p.value("--weight-type")) {
    auto parsed = parse_sample_type(*t);
    if (!parsed || (*parsed != SampleType::f32 && *parsed != SampleType::f64))
      usage_error("unknown weight type " + quote(*t), "use --weight-type f32 or f64");
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

  // With --channels a "sample" of the inputs is a whole pixel.
  const std::uint64_t ss = sample_size(type);
  const std::string type_name = std::string(to_string(type));
  InputSet inputs(input_operands(p), ss * channels,
                  pixels ? std::to_string(channels) + "-channel " + type_name + " pixel" : type_name);
  inputs.validate();
  // The weights, read whole before any sample (one per sample, in order).
  std::vector<unsigned char> weights;
  if (weighted) {
    InputSet weight_input({*p.value("--weights")}, sample_size(weight_type), std::string(to_string(weight_type)));
    weight_input.validate();
    weight_input.scan(0, [&](const unsigned char* d, std::uint64_t n) {
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
  if (automatic) {
    Progress spill_progress(0, false);
    inputs.make_rescannable(&spill_progress);
  }
  const unsigned passes = automatic ? 2 : 1;
  Progress progress(inputs.known_bytes() * passes, inputs.all_known());

  if (automatic) {
    Extent extent;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) {
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
  const Plan plan = make_plan(request, run.library);
  const std::string strategy = plan.strategy().name;
  auto fill = [&](auto& hists, const levelhist::Input& in) { call_with_fix([&] { plan.fill(hists, in); }); };

  if (pixels) {
    std::vector<Histogram> channel_hists(hists, Histogram(*binning));
    for (std::size_t i = 0; i < inputs.size(); ++i)
      inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) {  // n whole pixels
        fill(channel_hists, levelhist::Input::array(d, n * channels));
      }, &progress);
    progress.finish();
    detail::StagedOutput plot;
    if (plot_path) {
      std::vector<HistogramSeries> series;
      for (unsigned c = 0, h = 0; c < channels; ++c)
        if (active >> c & 1u) {
          ChannelStyle style = channel_style(c, channels);
          series.push_back({style.label, &channel_hists[h++], style.color});
        }
      plot = stage_plot(*plot_path, histogram_chart(series, inputs_title(inputs)));
    }
    write_stdout_then_commit(render_channels(run.format, type, channels, active, channel_hists, inputs, strategy),
                             plot);
    return 0;
  }
  if (weighted) {
    WeightedHistogram sums(*binning);
    std::uint64_t used = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) {
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
      plot = stage_plot(*plot_path, bars_chart(*binning, {bars}, inputs_title(inputs), "sum of weights"));
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
    inputs.scan(i, [&](const unsigned char* d, std::uint64_t n) { fill(*target, levelhist::Input::array(d, n)); }, &progress);
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
    plot = stage_plot(*plot_path, per_file_mode ? histogram_chart(series, inputs_title(inputs))
                                                : histogram_chart(all, inputs_title(inputs)));
  }
  write_stdout_then_commit(render(run.format, type, all, per_file, inputs, per_file_mode, strategy), plot);
  return 0;
}

}  // namespace levelhist::cli
