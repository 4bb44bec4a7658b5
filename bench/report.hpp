// levelhist bench: printing Results as markdown tables, CSV, JSON and SVG figures.
#pragma once
#include <ostream>
#include <string>

#include "options.hpp"
#include "results.hpp"

namespace levelhist::bench {

// Markdown: the device, how it was timed, one table per sweep series (GB/s,
// plus the best strategy's share of the limit and ratio to cub), and the
// headline tables (GB/s, % of limit, ratio to cub, level ratio).
void write_markdown(std::ostream& out, const Results& results);
// One row per measurement: section, series, x, dataset, problem, n, bytes,
// strategy, ok, gbps, median/min/max ms, reps, ..., pct_of_limit, ratio_to_cub, note.
void write_csv(std::ostream& out, const Results& results);
// {"device": {...}, "settings": [...], "strategies": [...], "measurements": [...], ...}
void write_json(std::ostream& out, const Results& results);
void write_report(std::ostream& out, const Results& results, OutputFormat format);

// DIR/<section>.svg for every sweep section that has measurements: one panel
// per series, one line per strategy, the limit dashed. Returns the paths written.
std::vector<std::string> write_plots(const std::string& dir, const Results& results);
// DIR/bench.md, DIR/bench.csv, DIR/bench.json.
std::vector<std::string> write_all_formats(const std::string& dir, const Results& results);

}  // namespace levelhist::bench
