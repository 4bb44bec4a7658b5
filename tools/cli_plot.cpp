// levelhist CLI: histograms as plots (cli_plot.hpp).
#include "cli_plot.hpp"

#include <cmath>

#include "args.hpp"
#include "cli.hpp"
#include "levelhist/image.hpp"

namespace levelhist::cli {

void check_plot_path(const std::string& path) {
  plot::PlotFormat format{};
  try {
    format = plot::plot_format(path);
  } catch (const Error&) {
    usage_error("--plot " + quote(path) + ": cannot tell the plot format from the name",
                "name an .svg or .png file");
  }
  if (format == plot::PlotFormat::png && !image::png_supported())
    usage_error("--plot " + quote(path) + ": PNG output needs libpng at build time", "name an .svg file");
}

void check_log_option(const ParsedArgs& p) {
  if (p.has(kLogOption) && !p.has(kPlotOption))
    usage_error("--log makes the plot's count axis logarithmic, and there is no plot", "add --plot OUT, or drop --log");
}

void use_log_counts(plot::Chart& chart) {
  chart.y.scale = plot::Scale::log10;
  chart.y.min = 0.5;
  // Ticks at 1, 2, 5, 10, ... (none below 1: no count is a fraction), plain
  // numbers up to 10^5, powers of ten above.
  chart.y.tick_label = [](double v) -> std::string {
    if (v < 1.0) return "";
    if (v < 1e5) return format_number(v);
    const double e = std::log10(v);
    return e == std::floor(e) ? "10^" + format_number(e) : format_number(v);
  };
  chart.y.label += " (log scale)";
}

plot::Chart bars_chart(const Binning& binning, const std::vector<BarSeries>& series, const std::string& title,
                       const std::string& y_label) {
  plot::Chart chart;
  chart.kind = plot::ChartKind::bars;
  chart.title = title;
  chart.y.label = y_label;
  chart.legend = series.size() > 1;  // one series: the title says what it is
  const std::vector<double> edges = bin_edges(binning);
  const bool slots = binning.kind() == BinKind::edges;
  const bool unit = binning.unit_integer_bins();
  if (slots) {
    chart.x.label = "bin (labelled by its lower edge)";
    chart.bar_width = 1.0;
    chart.x.min = 0.0;
    chart.x.max = static_cast<double>(binning.bins());
    chart.x.tick_label = [edges](double v) {
      double i = std::round(v);
      return std::fabs(v - i) < 1e-9 && i >= 0 && i < static_cast<double>(edges.size()) ? format_number(edges[static_cast<std::size_t>(i)])
                                                                                          : std::string();
    };
  } else {
    chart.x.label = "value";
    chart.bar_width = unit ? 1.0 : edges[1] - edges[0];
    // Per-value bins: the bar of value v sits on v; other bins fill [lower, upper).
    chart.x.min = unit ? edges.front() - 0.5 : edges.front();
    chart.x.max = unit ? edges.back() - 0.5 : edges.back();
  }
  for (const BarSeries& s : series) {
    plot::Series out;
    out.label = s.label;
    out.color = s.color;
    for (std::size_t i = 0; i < s.values.size() && i + 1 < edges.size(); ++i) {
      double x = slots ? static_cast<double>(i) + 0.5 : unit ? edges[i] : (edges[i] + edges[i + 1]) / 2;
      out.points.push_back({x, s.values[i]});
    }
    chart.series.push_back(std::move(out));
  }
  return chart;
}

plot::Chart histogram_chart(const std::vector<HistogramSeries>& series, const std::string& title) {
  std::vector<BarSeries> bars;
  for (const HistogramSeries& s : series) {
    BarSeries b{s.label, {}, s.color};
    for (std::uint64_t i = 0; i < s.hist->bins(); ++i) b.values.push_back(static_cast<double>(s.hist->count(i)));
    bars.push_back(std::move(b));
  }
  return bars_chart(series.front().hist->binning(), bars, title, "count");
}

plot::Chart histogram_chart(const Histogram& hist, const std::string& title) {
  return histogram_chart(std::vector<HistogramSeries>{{"", &hist, ""}}, title);
}

ChannelStyle channel_style(unsigned channel, unsigned channels) {
  static const char* const kGray[] = {"gray", "alpha"};
  static const char* const kColor[] = {"red", "green", "blue", "alpha"};
  std::string label = channels <= 2 ? kGray[channel % 2] : kColor[channel % 4];
  // Alpha has no hue of its own: black reads as "how opaque".
  return {label, label == "alpha" ? "black" : label};
}

detail::StagedOutput stage_plot(const std::string& path, const plot::Chart& chart) {
  std::vector<std::uint8_t> bytes;
  if (plot::plot_format(path) == plot::PlotFormat::svg) {
    const std::string svg = plot::render_svg(chart);
    bytes.assign(svg.begin(), svg.end());
  } else {
    bytes = call_with_fix([&] { return image::encode_image(plot::render_image(chart), image::FileFormat::png); });
  }
  return stage_output(path, bytes, kPlotOption, true);
}

}  // namespace levelhist::cli
