// levelhist CLI: histograms drawn as plots (--plot FILE.svg|FILE.png), for
// `count --plot` and `image --plot`.
//
//   check_plot_path(path);                    // before any input is read
//   ... count ...
//   StagedOutput plot = stage_plot(path, histogram_chart(hist, "data.u8"));
//   write_stdout_then_commit(report, plot);   // the plot appears only when the report is out
#pragma once
#include <string>
#include <vector>

#include "args.hpp"
#include "image/file_io.hpp"
#include "levelhist/histogram.hpp"
#include "levelhist/plot.hpp"

namespace levelhist::cli {

// The --plot option of a command: "--plot" with a value; --log (a flag) makes
// its count axis logarithmic.
inline constexpr const char* kPlotOption = "--plot";
inline constexpr const char* kLogOption = "--log";

// A usage error for --log without --plot.
void check_log_option(const ParsedArgs& p);

// Makes a bar chart's y axis (counts or sums) logarithmic, base 10: a spike
// (all the zeros of a photograph's background) no longer flattens the other
// bars. The axis starts at 0.5, so a bar of 1 still shows; bars of 0 or less
// are not drawn (log 0 is -infinity).
void use_log_counts(plot::Chart& chart);

// Usage errors (exit 2) a --plot path can be found to have before any input is
// read: an extension other than .svg/.png, or .png in a build without libpng.
void check_plot_path(const std::string& path);

// One bar series over a binning: one value per bin (counts, or sums of weights).
struct BarSeries {
  std::string label;  // the legend's text; empty: no legend entry
  std::vector<double> values;
  std::string color;  // empty: the palette's color for the label (plot::Series::color)
};

// Bars over the bins of `binning`, one series each, overlapping: bins of one
// integer value each are centred on that value; other even bins span their
// interval on a linear value axis; explicit (uneven) edges are drawn one
// equal-width slot per bin with the edges as tick labels, so narrow bins stay
// visible. Empty bins draw no bar.
plot::Chart bars_chart(const Binning& binning, const std::vector<BarSeries>& series, const std::string& title,
                       const std::string& y_label);

// A histogram's counts (y "count"), in one series or several sharing the binning.
plot::Chart histogram_chart(const Histogram& hist, const std::string& title);
struct HistogramSeries {
  std::string label;
  const Histogram* hist;
  std::string color;  // empty: the palette's
};
plot::Chart histogram_chart(const std::vector<HistogramSeries>& series, const std::string& title);

// The label and natural color of channel c of pixels with `channels` channels:
// gray; gray, alpha; red, green, blue; red, green, blue, alpha.
struct ChannelStyle {
  std::string label, color;
};
ChannelStyle channel_style(unsigned channel, unsigned channels);

// The chart drawn in the format `path` names (check_plot_path) and staged
// through the CLI's one writer (cli.hpp stage_output): commit it after the
// report is on standard output. A path that cannot be written is exit 1, its
// cause named.
detail::StagedOutput stage_plot(const std::string& path, const plot::Chart& chart);

}  // namespace levelhist::cli
