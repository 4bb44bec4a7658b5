// levelhist CLI: output formats (table, csv, json) and writing to stdout.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace levelhist::cli {

enum class Format { table, csv, json };
// "table", "csv" or "json"; anything else is a usage error.
Format parse_format(std::string_view text);

// The shortest text that reads back as exactly `v` (std::to_chars): integers
// print as integers ("256", "-128"), other values with as many digits as they
// need ("0.1", "3.0000000000000004", "1e+300"). Valid in JSON and CSV for every
// finite value; never called with NaN or infinity. (JSON documents: json.hpp.)
std::string format_number(double v);

// The length of the valid UTF-8 sequence that starts at text[i] (1 for
// ASCII), or 0 when the byte there does not start one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);
// A CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view text);

// Columns for the table's bars: TIOCGWINSZ on stdout when it is a terminal,
// else $COLUMNS when it is a positive integer, else 80; at most 1000.
int terminal_width();

// One row of a histogram table.
struct TableRow {
  std::string label;
  std::uint64_t count;
};
// Rows as "label  count  percent  bar", columns aligned, the bar of the largest
// count filling what is left of `width` columns. `total` is the percentage base.
std::string render_rows(const std::vector<TableRow>& rows, std::uint64_t total, int width);
// Lines "name  value" with the names padded to one width.
std::string render_summary(const std::vector<std::pair<std::string, std::string>>& lines);

// Writes all of `text` to stdout (fd 1). Throws Error(input) with the system's
// reason when the write fails, and BrokenPipe when the reader went away (EPIPE).
struct BrokenPipe {};
void write_stdout(std::string_view text);
// Writes a report to stderr (fd 2) where stdout carries data (`threshold -o -`);
// a failure there is not worth an error.
void write_stderr_report(std::string_view text);

}  // namespace levelhist::cli
