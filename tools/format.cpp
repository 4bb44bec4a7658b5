#include "format.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "args.hpp"

namespace levelhist::cli {

Format parse_format(std::string_view text) {
  if (text == "table") return Format::table;
  if (text == "csv") return Format::csv;
  if (text == "json") return Format::json;
  usage_error("unknown format " + quote(text), "use --format table, csv or json");
}

std::string format_number(double v) {
  if (v == 0.0) return "0";  // also -0.0: "-0" reads back as 0 anyway, keep tables clean
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return "0";
  return std::string(buf, ptr);
}

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  std::size_t len;
  std::uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) len = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) len = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) len = 4, cp = c & 0x07;
  else return 0;
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return len;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

int terminal_width() {
  // A width past this only lengthens every bar: with COLUMNS=2000000000 a
  // table of 256 rows asked for hundreds of gigabytes of '#'.
  constexpr int kMaxWidth = 1000;
  struct winsize ws {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return std::min<int>(ws.ws_col, kMaxWidth);
  if (const char* columns = std::getenv("COLUMNS")) {
    std::string_view text(columns);
    int n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (!text.empty() && ptr == text.data() + text.size()) {
      if (ec == std::errc::result_out_of_range) return kMaxWidth;  // more digits than an int: a very wide terminal
      if (ec == std::errc() && n > 0) return std::min(n, kMaxWidth);
    }
  }
  return 80;
}

std::string render_rows(const std::vector<TableRow>& rows, std::uint64_t total, int width) {
  std::size_t label_w = 0, count_w = 0;
  std::uint64_t max_count = 0;
  for (const TableRow& r : rows) {
    label_w = std::max(label_w, r.label.size());
    count_w = std::max(count_w, std::to_string(r.count).size());
    max_count = std::max(max_count, r.count);
  }
  constexpr std::size_t percent_w = 6;  // "100.0%"
  // label, 2 spaces, count, 2 spaces, percent, 2 spaces, bar
  long bar_w = static_cast<long>(width) - static_cast<long>(label_w + count_w + percent_w + 6);
  std::string out;
  for (const TableRow& r : rows) {
    std::string line = r.label;
    line.append(label_w - r.label.size() + 2, ' ');
    std::string count = std::to_string(r.count);
    line.append(count_w - count.size(), ' ');
    line += count;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%5.1f%%", total ? 100.0 * static_cast<double>(r.count) / static_cast<double>(total) : 0.0);
    line += "  ";
    line += pct;
    if (bar_w >= 1 && max_count > 0) {
      // Round to the nearest column; any non-empty bin shows at least one '#'.
      auto len = static_cast<long>((static_cast<long double>(r.count) * bar_w + max_count / 2) / max_count);
      if (r.count > 0 && len == 0) len = 1;
      if (len > 0) {
        line += "  ";
        line.append(static_cast<std::size_t>(len), '#');
      }
    }
    out += line;
    out += '\n';
  }
  return out;
}

std::string render_summary(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::size_t w = 0;
  for (const auto& [name, value] : lines) w = std::max(w, name.size());
  std::string out;
  for (const auto& [name, value] : lines) {
    out += name;
    out.append(w - name.size() + 2, ' ');
    out += value;
    out += '\n';
  }
  return out;
}

void write_stdout(std::string_view text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(STDOUT_FILENO, p, std::min<std::size_t>(left, std::size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) throw BrokenPipe{};
      input_error(std::string("cannot write the output: ") + std::strerror(errno),
                  "check where standard output goes (a full disk?)");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void write_stderr_report(std::string_view text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace levelhist::cli
