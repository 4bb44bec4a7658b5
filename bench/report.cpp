#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "levelhist/error.hpp"
#include "levelhist/plot.hpp"

namespace levelhist::bench {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A share of the limit in percent, or a ratio: two significant figures below 1 and 10,
// so a 0.04% strategy does not print as 0%.
std::string percent_text(double fraction) {
  double p = fraction * 100;
  if (p >= 10) return fixed(p, 0) + "%";
  if (p >= 1) return fixed(p, 1) + "%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g%%", p);
  return buf;
}
std::string ratio_text(double ratio) {
  if (ratio >= 0.1) return fixed(ratio, 2) + "x";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2gx", ratio);
  return buf;
}

// Three significant figures without exponent notation: 4298, 41.9, 0.48.
std::string rate_text(double gbps) {
  if (gbps >= 100) return fixed(gbps, 0);
  if (gbps >= 10) return fixed(gbps, 1);
  if (gbps >= 1) return fixed(gbps, 2);
  return fixed(gbps, 3);
}

std::string bytes_text(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return (v == std::floor(v) ? fixed(v, 0) : fixed(v, 1)) + " " + units[u];
}

std::string power_of_two_text(double v) {
  double e = std::log2(v);
  if (v > 0 && e == std::floor(e)) return "2^" + fixed(e, 0);
  return fixed(v, 0);
}

std::string x_text(XKind kind, double x) {
  switch (kind) {
    case XKind::samples: return power_of_two_text(x);
    case XKind::side: return fixed(x, 0) + "^2";
    case XKind::count:
    case XKind::none: break;
  }
  return fixed(x, 0);
}

// The columns of a table: the limit first, then strategies in registry order.
std::vector<std::string> column_strategies(const Results& r) {
  std::vector<std::string> names{kLimitName};
  for (const StrategyInfo& s : r.strategies)
    if (s.name != kLimitName) names.push_back(s.name);  // a section may describe its own limit
  return names;
}

template <class T>
void append_unique(std::vector<T>& list, const T& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

std::vector<const Measurement*> rows_of(const Results& r, const std::string& section) {
  std::vector<const Measurement*> out;
  for (const Measurement& m : r.rows)
    if (m.section == section) out.push_back(&m);
  return out;
}

const Measurement* find(const std::vector<const Measurement*>& rows, const std::string& series, double x,
                        const std::string& strategy) {
  for (const Measurement* m : rows)
    if (m->series == series && m->x == x && m->strategy == strategy) return m;
  return nullptr;
}

const Measurement* find_dataset(const std::vector<const Measurement*>& rows, const std::string& dataset,
                                const std::string& strategy) {
  for (const Measurement* m : rows)
    if (m->dataset == dataset && m->strategy == strategy) return m;
  return nullptr;
}

// A table cell: GB/s, FAILED, "-" for not run (the strategy does not take the case), "*" for fewer reps.
std::string rate_cell(const Measurement* m) {
  if (!m) return "-";
  if (!m->ok) return "**FAILED**";
  if (!m->timing) return "-";
  return rate_text(m->gbps()) + (m->timing->fewer_reps ? "*" : "");
}

void table_row(std::ostream& out, const std::vector<std::string>& cells) {
  out << "|";
  for (const std::string& c : cells) out << " " << c << " |";
  out << "\n";
}

void table_header(std::ostream& out, const std::vector<std::string>& names, std::size_t left_aligned) {
  table_row(out, names);
  out << "|";
  for (std::size_t i = 0; i < names.size(); ++i) out << (i < left_aligned ? ":---|" : "---:|");
  out << "\n";
}

// The fastest correct strategy of one case, with its share of the limit and ratio to cub.
std::string best_cell(const Results& r, const std::vector<const Measurement*>& rows, const std::string& series,
                      double x) {
  const Measurement* best = nullptr;
  for (const Measurement* m : rows)
    if (m->series == series && m->x == x && !is_limit(m->strategy) && m->timed_ok() &&
        (!best || m->gbps() > best->gbps()))
      best = m;
  if (!best) return "-";
  std::string text = best->strategy;
  if (auto f = r.fraction_of_limit(*best)) text += " " + percent_text(*f);
  if (auto b = r.ratio_to_baseline(*best)) text += " " + ratio_text(*b);
  return text;
}

bool any_fewer_reps(const std::vector<const Measurement*>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const Measurement* m) { return m->timing && m->timing->fewer_reps; });
}

// A latency cell: microseconds per call (median), or what rate_cell says when there is no time.
std::string microseconds_cell(const Measurement* m) {
  if (!m || !m->timed_ok()) return rate_cell(m);
  return fixed(m->timing->median_ms * 1000.0, 1) + (m->timing->fewer_reps ? "*" : "");
}

void write_sweep_section(std::ostream& out, const Results& r, const SectionInfo& s) {
  std::vector<const Measurement*> rows = rows_of(r, s.name);
  if (rows.empty()) return;
  const bool latency = s.metric == Metric::microseconds;
  auto cell = latency ? microseconds_cell : rate_cell;
  out << "\n## " << s.name << ": " << s.title << "\n";
  out << (latency ? "Microseconds per call (median of back-to-back calls, launch included)"
                  : "GB/s of input bytes")
      << "; last column: the fastest strategy, its % of the limit and its ratio to " << kBaselineName << ".\n";
  std::vector<std::string> series;
  for (const Measurement* m : rows) append_unique(series, m->series);
  const std::vector<std::string> strategies = column_strategies(r);
  for (const std::string& name : series) {
    std::vector<double> xs;
    for (const Measurement* m : rows)
      if (m->series == name) append_unique(xs, m->x);
    out << "\n### " << name << " (" << rows.front()->problem << ")\n\n";
    std::vector<std::string> header{s.x_label};
    if (s.x_kind == XKind::samples || s.x_kind == XKind::side) header.push_back("bytes");
    header.insert(header.end(), strategies.begin(), strategies.end());
    header.push_back("best");
    table_header(out, header, 1);
    for (double x : xs) {
      std::vector<std::string> cells{x_text(s.x_kind, x)};
      if (header[1] == "bytes") {
        const Measurement* any = find(rows, name, x, kLimitName);
        cells.push_back(any ? bytes_text(any->bytes) : "-");
      }
      for (const std::string& st : strategies) cells.push_back(cell(find(rows, name, x, st)));
      cells.push_back(best_cell(r, rows, name, x));
      table_row(out, cells);
    }
  }
  if (any_fewer_reps(rows)) out << "\n\\* fewer timed samples than asked: the case hit --case-seconds (reps in the CSV).\n";
}

// --auto: one row per case, auto's pick next to the fastest correct strategy.
void write_auto_section(std::ostream& out, const Results& r, const SectionInfo& s) {
  std::vector<const Measurement*> rows = rows_of(r, s.name);
  if (rows.empty()) return;
  out << "\n## " << s.name << ": " << s.title << "\n\n";
  table_header(out, {"case", "problem", "n", "auto's choice", "auto GB/s", "measured best", "best GB/s", "auto / best"}, 4);
  std::vector<std::string> series;
  for (const Measurement* m : rows) append_unique(series, m->series);
  for (const std::string& name : series) {
    const Measurement* best = nullptr;
    const Measurement* chosen = nullptr;
    const Measurement* any = nullptr;
    for (const Measurement* m : rows) {
      if (m->series != name || is_limit(m->strategy)) continue;
      any = m;
      if (m->timed_ok() && (!best || m->gbps() > best->gbps())) best = m;
      if (m->strategy == m->auto_choice) chosen = m;
    }
    if (!any) continue;
    const std::string choice = any->auto_choice.empty() ? "(none)" : any->auto_choice;
    table_row(out, {name, any->problem, power_of_two_text(static_cast<double>(any->n)), choice,
                    chosen ? rate_cell(chosen) : "not measured", best ? best->strategy : "-",
                    best ? rate_text(best->gbps()) : "-",
                    chosen && best && chosen->timed_ok() ? percent_text(chosen->gbps() / best->gbps()) : "-"});
  }
}

void write_headline(std::ostream& out, const Results& r, const SectionInfo& s) {
  std::vector<const Measurement*> rows = rows_of(r, s.name);
  if (rows.empty()) return;
  std::vector<std::string> datasets;
  for (const Measurement* m : rows) append_unique(datasets, m->dataset);
  const std::vector<std::string> strategies = column_strategies(r);
  out << "\n## " << s.name << ": " << s.title << "\n";
  out << "n = " << power_of_two_text(static_cast<double>(rows.front()->n)) << " (" << bytes_text(rows.front()->bytes)
      << "), " << rows.front()->problem << ".\n";

  auto table = [&](const std::string& title, bool with_level, const std::function<std::string(const Measurement*)>& cell) {
    // A table with nothing to show (no limit or no CUB measured in this section) is left out.
    bool any_value = false;
    for (const std::string& st : strategies)
      for (const std::string& d : datasets)
        if (const Measurement* m = find_dataset(rows, d, st)) any_value = any_value || cell(m) != "-";
    if (!any_value) return;
    out << "\n### " << title << "\n\n";
    std::vector<std::string> header{"strategy"};
    header.insert(header.end(), datasets.begin(), datasets.end());
    if (with_level) header.push_back("level");
    table_header(out, header, 1);
    for (const std::string& st : strategies) {
      std::vector<std::string> cells{st};
      bool any = false;
      for (const std::string& d : datasets) {
        const Measurement* m = find_dataset(rows, d, st);
        any = any || m;
        cells.push_back(cell(m));
      }
      if (!any) continue;
      if (with_level) {
        // Level: slowest / fastest over the datasets, only when every one was measured correctly.
        double lo = INFINITY, hi = 0;
        bool complete = true;
        for (const std::string& d : datasets) {
          const Measurement* m = find_dataset(rows, d, st);
          if (!m || !m->timed_ok()) {
            complete = false;
            break;
          }
          lo = std::min(lo, m->gbps());
          hi = std::max(hi, m->gbps());
        }
        cells.push_back(complete ? fixed(lo / hi, 2) : "-");
      }
      table_row(out, cells);
    }
  };
  table("GB/s (level = slowest / fastest dataset; 1 is perfectly level)", true, rate_cell);
  table("% of the streaming-read limit", false, [&](const Measurement* m) -> std::string {
    if (m && !m->ok) return "**FAILED**";
    auto f = m ? r.fraction_of_limit(*m) : std::nullopt;
    return f ? percent_text(*f) : "-";
  });
  table(std::string("ratio to ") + kBaselineName, false, [&](const Measurement* m) -> std::string {
    if (m && !m->ok) return "**FAILED**";
    auto b = m ? r.ratio_to_baseline(*m) : std::nullopt;
    return b ? ratio_text(*b) : "-";
  });
  if (any_fewer_reps(rows)) out << "\n\\* fewer timed samples than asked: the case hit --case-seconds (reps in the CSV).\n";
  std::vector<std::string> reused;
  for (const Measurement* m : rows)
    if (m->note.rfind("measured in", 0) == 0) append_unique(reused, m->dataset + " (" + m->note + ")");
  if (!reused.empty()) {
    out << "\nReused, not re-measured:";
    for (const std::string& x : reused) out << " " << x << ";";
    out << "\n";
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Whole numbers (n, x, byte counts) exactly; measured values to six significant figures.
std::string number_text(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 0x1p53) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string optional_number(const std::optional<double>& v, const std::string& none) {
  return v ? number_text(*v) : none;
}

}  // namespace

void write_markdown(std::ostream& out, const Results& r) {
  out << "# levelhist bench\n\n";
  out << "- device: " << r.device.describe() << "\n";
  for (const std::string& line : r.settings) out << "- " << line << "\n";
  out << "\n| strategy | what |\n|:---|:---|\n";
  // The limit first: a section runner may describe its own (the sort runner's is a copy).
  std::string limit_summary = "streaming read of the same buffer: grid-stride 16-byte loads, nothing counted";
  for (const StrategyInfo& s : r.strategies)
    if (s.name == kLimitName) limit_summary = s.summary;
  out << "| " << kLimitName << " | " << markdown_cell(limit_summary) << " |\n";
  for (const StrategyInfo& s : r.strategies)
    if (s.name != kLimitName) out << "| " << markdown_cell(s.name) << " | " << markdown_cell(s.summary) << " |\n";
  for (const SectionInfo& s : r.sections) {
    if (s.metric == Metric::auto_choice) write_auto_section(out, r, s);
    else if (s.x_kind == XKind::none) write_headline(out, r, s);
    else write_sweep_section(out, r, s);
  }
  if (!r.failures.empty()) {
    out << "\n## FAILED: results that differ from the CPU's, or runs that threw\n\n";
    for (const std::string& f : r.failures) out << "- " << f << "\n";
  }
  out << "\nwall time " << fixed(r.wall_seconds, 0) << " s\n";
}

void write_csv(std::ostream& out, const Results& r) {
  out << "section,series,x,dataset,problem,n,bytes,input_buffers,strategy,ok,gbps,median_ms,min_ms,max_ms,reps,"
         "calls_per_sample,fewer_reps,pct_of_limit,ratio_to_cub,note\n";
  for (const Measurement& m : r.rows) {
    out << csv_field(m.section) << "," << csv_field(m.series) << "," << number_text(m.x) << "," << csv_field(m.dataset)
        << "," << csv_field(m.problem) << "," << m.n << "," << m.bytes << "," << m.input_buffers << ","
        << csv_field(m.strategy) << "," << (m.ok ? "true" : "false") << ",";
    if (m.timing) {
      const Timing& t = *m.timing;
      out << number_text(m.gbps()) << "," << number_text(t.median_ms) << "," << number_text(t.min_ms) << ","
          << number_text(t.max_ms) << "," << t.reps << "," << t.calls_per_sample << ","
          << (t.fewer_reps ? "true" : "false") << ",";
    } else {
      out << ",,,,,,,";
    }
    auto f = r.fraction_of_limit(m);
    out << optional_number(f ? std::optional<double>(*f * 100) : std::nullopt, "") << ","
        << optional_number(r.ratio_to_baseline(m), "") << "," << csv_field(m.note) << "\n";
  }
}

void write_json(std::ostream& out, const Results& r) {
  const DeviceInfo& d = r.device;
  out << "{\n  \"device\": {\"index\": " << d.index << ", \"name\": " << json_string(d.name)
      << ", \"sm_count\": " << d.sm_count << ", \"l2_bytes\": " << d.l2_bytes << ", \"memory_bytes\": " << d.memory_bytes
      << ", \"sm_clock_mhz\": " << d.sm_clock_mhz << ", \"memory_clock_mhz\": " << d.memory_clock_mhz
      << ", \"memory_bus_bits\": " << d.memory_bus_bits << ", \"cuda_runtime\": " << d.runtime_version
      << ", \"cuda_driver\": " << d.driver_version << "},\n  \"settings\": [";
  for (std::size_t i = 0; i < r.settings.size(); ++i) out << (i ? ", " : "") << json_string(r.settings[i]);
  out << "],\n  \"strategies\": [";
  for (std::size_t i = 0; i < r.strategies.size(); ++i)
    out << (i ? ", " : "") << "{\"name\": " << json_string(r.strategies[i].name)
        << ", \"summary\": " << json_string(r.strategies[i].summary) << "}";
  out << "],\n  \"measurements\": [\n";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const Measurement& m = r.rows[i];
    out << "    {\"section\": " << json_string(m.section) << ", \"series\": " << json_string(m.series)
        << ", \"x\": " << number_text(m.x) << ", \"dataset\": " << json_string(m.dataset)
        << ", \"problem\": " << json_string(m.problem) << ", \"n\": " << m.n << ", \"bytes\": " << m.bytes
        << ", \"input_buffers\": " << m.input_buffers << ", \"strategy\": " << json_string(m.strategy)
        << ", \"ok\": " << (m.ok ? "true" : "false");
    if (m.timing) {
      const Timing& t = *m.timing;
      out << ", \"gbps\": " << number_text(m.gbps()) << ", \"median_ms\": " << number_text(t.median_ms)
          << ", \"min_ms\": " << number_text(t.min_ms) << ", \"max_ms\": " << number_text(t.max_ms)
          << ", \"reps\": " << t.reps << ", \"calls_per_sample\": " << t.calls_per_sample
          << ", \"fewer_reps\": " << (t.fewer_reps ? "true" : "false");
    }
    auto f = r.fraction_of_limit(m);
    out << ", \"pct_of_limit\": " << optional_number(f ? std::optional<double>(*f * 100) : std::nullopt, "null")
        << ", \"ratio_to_cub\": " << optional_number(r.ratio_to_baseline(m), "null")
        << ", \"note\": " << json_string(m.note) << "}" << (i + 1 < r.rows.size() ? "," : "") << "\n";
  }
  out << "  ],\n  \"failures\": [";
  for (std::size_t i = 0; i < r.failures.size(); ++i) out << (i ? ", " : "") << json_string(r.failures[i]);
  out << "],\n  \"wall_seconds\": " << number_text(r.wall_seconds) << "\n}\n";
}

void write_report(std::ostream& out, const Results& results, OutputFormat format) {
  switch (format) {
    case OutputFormat::markdown: write_markdown(out, results); break;
    case OutputFormat::csv: write_csv(out, results); break;
    case OutputFormat::json: write_json(out, results); break;
  }
}

std::vector<std::string> write_plots(const std::string& dir, const Results& r) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  for (const SectionInfo& s : r.sections) {
    if (s.x_kind == XKind::none) continue;
    std::vector<const Measurement*> rows = rows_of(r, s.name);
    if (rows.empty()) continue;
    plot::Figure fig;
    fig.title = s.name + ": " + s.title;
    std::vector<std::string> series;
    for (const Measurement* m : rows) append_unique(series, m->series);
    fig.columns = static_cast<int>(std::min<std::size_t>(series.size(), 3));
    for (const std::string& name : series) {
      plot::Chart chart;
      chart.title = name;
      chart.x.label = s.x_label;
      chart.x.scale = plot::Scale::log2;
      if (s.x_kind != XKind::samples) chart.x.tick_label = [](double v) { return fixed(v, 0); };
      // Strategies span 1 to 5000 GB/s: on a linear axis the slow ones would all lie on zero.
      chart.y.label = "GB/s (log scale)";
      chart.y.scale = plot::Scale::log10;
      const std::vector<std::string> strategies = column_strategies(r);
      std::size_t palette = 0;
      for (std::size_t i = 0; i < strategies.size(); ++i) {
        const std::string& st = strategies[i];
        plot::Series line;
        line.label = st == kLimitName ? std::string("limit (streaming read)") : st;
        if (is_limit(st)) {
          line.color = st == kLimitName ? "#444444" : "#999999";
          line.style = plot::LineStyle::dashed;
          line.markers = false;
        } else {
          // A strategy keeps its color in every figure: the color follows its registry position.
          line.color = std::string(plot::palette_color(palette++));
        }
        for (const Measurement* m : rows)
          if (m->series == name && m->strategy == st && m->timed_ok()) line.points.push_back({m->x, m->gbps()});
        if (!line.points.empty()) chart.series.push_back(std::move(line));
      }
      fig.panels.push_back(std::move(chart));
    }
    std::string path = (std::filesystem::path(dir) / (s.name + ".svg")).string();
    plot::write_plot(path, fig);
    written.push_back(path);
  }
  return written;
}

std::vector<std::string> write_all_formats(const std::string& dir, const Results& results) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  const std::pair<const char*, OutputFormat> files[] = {
      {"bench.md", OutputFormat::markdown}, {"bench.csv", OutputFormat::csv}, {"bench.json", OutputFormat::json}};
  for (const auto& [name, format] : files) {
    std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path);
    write_report(out, results, format);
    out.flush();
    if (!out) throw Error(ErrorKind::input, "cannot write " + path);
    written.push_back(path);
  }
  return written;
}

}  // namespace levelhist::bench
