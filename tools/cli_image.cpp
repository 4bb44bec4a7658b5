// `levelhist image`, `threshold` and `equalize`: the image workflow of Wilt
// part 1, Figures 1-3 (read an image, histogram its channels, binarize or
// equalize it, write it).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <system_error>

#include "cli.hpp"
#include "cli_plot.hpp"
#include "json.hpp"
#include "levelhist/image.hpp"
#include "levelhist/image_ops.hpp"
#include "levelhist/plot.hpp"

namespace levelhist::cli {

const char* const kImageHelp =
    "Usage: levelhist image [OPTION]... FILE|-\n"
    "The histogram of every channel of an image (PGM, PPM, PNG, JPEG or TIFF; '-' reads\n"
    "it from standard input) and its statistics:\n"
    "min, max, mean, median and the 1st, 5th, 25th, 75th, 95th and 99th percentiles\n"
    "(nearest rank: the smallest value with at least p% of the samples at or below it).\n"
    "One bin per value: 256 for 8-bit images, 65536 for 16-bit ones.\n"
    "\n"
    "  --format F        table (default): statistics and a coarse bar view per channel;\n"
    "                    csv: value,<channel>... one row per value;\n"
    "                    json: the image's shape and, in \"channels\", one object per\n"
    "                    channel with name, counts and the statistics\n"
    "  --plot OUT        also draw the histograms, one color per channel, into OUT\n"
    "                    (.svg, or .png in builds with PNG support)\n"
    "  --log             the plot's count axis logarithmic (a spike at one value no\n"
    "                    longer flattens the rest); needs --plot\n"
    "  --backend B       auto (default), cpu or cuda\n"
    "  --strategy NAME   a strategy from 'levelhist list', or auto (default)\n"
    "  --threads N       CPU worker threads; 0 (default) = all cores\n"
    "  --max-pixels N    refuse an image whose header claims more than N pixels,\n"
    "                    before reading it (default: LEVELHIST_MAX_PIXELS, else 2^28)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
    "Example: levelhist image --format json --plot hist.svg photo.png\n";

const char* const kThresholdHelp =
    "Usage: levelhist threshold FILE|- -o OUT (--value T | --otsu) [--invert]\n"
    "Binarize a gray image as OpenCV's THRESH_BINARY: samples above T become the\n"
    "image's maxval, the others 0. Prints the threshold used (\"threshold T\"), on\n"
    "standard error when the image goes to standard output.\n"
    "\n"
    "  -o, --output OUT  the binarized image; the format follows OUT's extension\n"
    "                    (.pgm, .pnm, .png, .tif, .jpg); '-' writes Netpbm to standard\n"
    "                    output; never the input file\n"
    "  --value T         the threshold, 0..65535\n"
    "  --otsu            Otsu's threshold from the image's histogram, exactly as\n"
    "                    OpenCV's THRESH_OTSU computes it\n"
    "  --invert          samples above T become 0, the others the maxval\n"
    "                    (OpenCV's THRESH_BINARY_INV)\n"
    "  --backend B, --strategy NAME, --threads N   how the histogram is counted\n"
    "  --max-pixels N    refuse an image whose header claims more than N pixels,\n"
    "                    before reading it (default: LEVELHIST_MAX_PIXELS, else 2^28)\n"
    "  -h, --help        show this help\n"
    "\n"
    "OUT is written whole or not at all. Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
    "Examples: levelhist threshold coins.pgm -o coins-bw.pgm --otsu\n"
    "          pngtopnm photo.png | levelhist threshold - -o - --otsu | pnmtopng > bw.png\n";

const char* const kEqualizeHelp =
    "Usage: levelhist equalize FILE|- -o OUT [--clahe [--clip-limit C] [--tiles RxC]]\n"
    "Histogram equalization of an 8-bit gray image, as OpenCV's equalizeHist: value v\n"
    "becomes round((cdf(v) - cdf_min) * 255 / (pixels - cdf_min)); an image of one\n"
    "value is written unchanged. With --clahe, 8- or 16-bit gray images.\n"
    "\n"
    "  -o, --output OUT  the equalized image; the format follows OUT's extension\n"
    "                    (.pgm, .pnm, .png, .tif, .jpg); '-' writes Netpbm to standard\n"
    "                    output; never the input file\n"
    "  --clahe           contrast-limited adaptive equalization instead, pixel for\n"
    "                    pixel OpenCV 4.x's createCLAHE(C, (cols, rows)).apply; a\n"
    "                    16-bit image comes out 16-bit, as there\n"
    "  --clip-limit C    CLAHE's clip limit, a finite number >= 0 (default 40;\n"
    "                    0: no limit)\n"
    "  --tiles RxC       CLAHE's grid: R tile rows, C tile columns, 1..1024 each and\n"
    "                    at most 65536 tiles (default 8x8)\n"
    "  --backend B, --strategy NAME, --threads N   how the histogram is counted\n"
    "  --max-pixels N    refuse an image whose header claims more than N pixels,\n"
    "                    before reading it (default: LEVELHIST_MAX_PIXELS, else 2^28)\n"
    "  -h, --help        show this help\n"
    "\n"
    "OUT is written whole or not at all. Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
    "Example: levelhist equalize dark.png -o even.png\n";

namespace {

namespace fs = std::filesystem;

// ---- what the three commands share ------------------------------------------------

// The one FILE operand ("-": standard input).
std::string single_input(const ParsedArgs& p, const std::string& command) {
  if (p.operands.size() != 1)
    usage_error("'" + command + "' takes one image FILE, not " + std::to_string(p.operands.size()),
                "see 'levelhist " + command + " --help'");
  return p.operands[0];
}

// How an input is named in output headers and plot titles.
std::string input_label(const std::string& file) { return file == "-" ? "standard input" : display_name(file); }

// The image, its read errors naming the file as every CLI message does
// (quoted; standard input as "standard input").
image::Image read_input_image(const std::string& file, const image::ReadLimits& limits) {
  if (file == "-") return call_with_fix([&] { return image::read_image(STDIN_FILENO, "standard input", limits); });
  return call_naming(file, [&] { return image::read_image(file, limits); });
}

// The format of an output image, from its extension, checked before any input
// is read: an extension levelhist cannot write is a usage error. Standard
// output ("-") gets Netpbm, as the Netpbm tools pass images through pipes.
image::FileFormat output_format(const std::string& path) {
  if (path == "-") return image::FileFormat::pnm;
  const std::optional<image::FileFormat> format = image::format_of_extension(path);
  if (!format)
    usage_error("-o " + quote(path) + ": cannot tell the image format from the name",
                "name a .pgm, .ppm, .pnm, .png, .tif or .jpg file, or - for Netpbm on standard output");
  if (!image::format_supported(*format))
    usage_error("-o " + quote(path) + ": " + image::format_name(*format) + " output is not in this build (its library "
                "was missing at build time)", "name a .pgm or .pnm file");
  return *format;
}

// The run options without --format (threshold and equalize print no table),
// with --max-pixels.
std::vector<OptionSpec> image_run_specs(std::vector<OptionSpec> extra) {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.erase(std::remove_if(specs.begin(), specs.end(), [](const OptionSpec& s) { return s.name == "--format"; }),
              specs.end());
  specs.push_back({"--max-pixels", true});
  specs.insert(specs.end(), extra.begin(), extra.end());
  return specs;
}

// --max-pixels, or the library's default (LEVELHIST_MAX_PIXELS, else 2^28).
image::ReadLimits read_limits(const ParsedArgs& p) {
  image::ReadLimits limits;
  if (auto v = p.value("--max-pixels"))
    limits.max_pixels = parse_count("--max-pixels", *v, 1, std::numeric_limits<std::uint64_t>::max());
  return limits;
}

std::string describe_shape(const image::Image& img) {
  static const char* const kKinds[5] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
  return std::to_string(img.bit_depth) + "-bit " + kKinds[img.channels];
}

// The gray-only commands' check: the file's content, so an input error (exit 1).
void require_gray(const image::Image& img, const std::string& path, const std::string& command, bool eight_bit) {
  if (img.channels == 1 && (!eight_bit || img.bit_depth == 8)) return;
  const std::string needs = eight_bit ? "8-bit gray" : "gray";
  input_error(quote(path) + " holds " + describe_shape(img) + " pixels; '" + command + "' works on " + needs +
                  " images only" + (eight_bit ? " (as OpenCV's equalizeHist)" : ""),
              "convert it to " + needs + " first");
}

// JPEG holds 8-bit samples only: a 16-bit input cannot go there. Known only
// once the image is read, so an input error (exit 1), naming both files.
void check_output_fits(const image::Image& img, image::FileFormat format, const std::string& file,
                       const std::string& out) {
  if (format == image::FileFormat::jpeg && img.bit_depth != 8)
    input_error(quote(file) + " holds " + describe_shape(img) + " pixels, and JPEG (-o " + quote(out) +
                    ") holds 8-bit samples only",
                "name a .png, .tif or .pgm output");
}

// One histogram per channel, counted by the strategy the run options pick.
std::vector<Histogram> count_channels(const image::Image& img, const Options& options, StrategyLog& log) {
  std::vector<Histogram> hists(img.channels, Histogram(Binning::per_value(img.sample_type())));
  log.add(call_with_fix([&]() -> const Strategy& { return image::fill_channels(hists, img, options); }));
  return hists;
}

// ---- image: output --------------------------------------------------------------

std::vector<std::string> channel_names(std::uint32_t channels) {
  std::vector<std::string> names;
  for (unsigned c = 0; c < channels; ++c) names.push_back(channel_style(c, channels).label);
  return names;
}

struct ImageReport {
  std::string file;
  const image::Image& img;
  std::vector<std::string> names;
  std::vector<Histogram> hists;
  std::vector<image::ChannelStats> stats;
  std::string strategy;
};

// "p1", "p5", ...: built by appending, as GCC 12 warns (-Wrestrict) on "p" + std::string.
std::string percentile_name(std::size_t k) {
  std::string name = "p";
  name += std::to_string(image::kPercentiles[k]);
  return name;
}

// (label, value) lines of one channel's statistics, shared by the table and its order.
std::vector<std::pair<std::string, std::string>> stat_lines(const image::ChannelStats& s) {
  std::vector<std::pair<std::string, std::string>> lines = {
      {"min", std::to_string(s.min)},
      {"max", std::to_string(s.max)},
      {"mean", format_number(s.mean)},
      {"median", std::to_string(s.median)}};
  for (std::size_t k = 0; k < image::kPercentiles.size(); ++k)
    lines.emplace_back(percentile_name(k), std::to_string(s.percentiles[k]));
  return lines;
}

// At most this many bars per channel in the table: values grouped into ranges.
constexpr std::uint64_t kTableBars = 32;

std::string render_table(const ImageReport& r) {
  const std::uint64_t values = std::uint64_t{r.img.maxval} + 1;
  const std::uint64_t group = (values + kTableBars - 1) / kTableBars;
  const int width = terminal_width();
  std::string out = input_label(r.file) + ": " + std::to_string(r.img.width) + " x " +
                    std::to_string(r.img.height) + ", " + describe_shape(r.img) + ", maxval " +
                    std::to_string(r.img.maxval) + "\n";
  for (std::size_t c = 0; c < r.hists.size(); ++c) {
    out += "\n==> " + r.names[c] + " <==\n";
    out += render_summary(stat_lines(r.stats[c]));
    std::vector<TableRow> rows;
    for (std::uint64_t lo = 0; lo < values; lo += group) {
      const std::uint64_t hi = std::min(values, lo + group);
      std::uint64_t n = 0;
      for (std::uint64_t v = lo; v < hi; ++v) n += r.hists[c].count(v);
      rows.push_back({group == 1 ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi - 1), n});
    }
    out += render_rows(rows, r.hists[c].total(), width);
  }
  return out;
}

std::string render_csv(const ImageReport& r) {
  std::string out = "value";
  for (const std::string& n : r.names) out += ',', out += n;
  out += '\n';
  const std::uint64_t bins = r.hists.front().bins();
  for (std::uint64_t v = 0; v < bins; ++v) {
    out += std::to_string(v);
    for (const Histogram& h : r.hists) out += ',', out += std::to_string(h.count(v));
    out += '\n';
  }
  return out;
}

std::string render_json(const ImageReport& r) {
  Json doc = json_document("image");
  doc["file"] = r.file;
  doc["width"] = r.img.width;
  doc["height"] = r.img.height;
  // "channels" is the list below, so the count has its own name.
  doc["channel_count"] = r.img.channels;
  doc["bit_depth"] = r.img.bit_depth;
  doc["maxval"] = r.img.maxval;
  doc["strategy"] = r.strategy;
  Json list = Json::array();
  for (std::size_t c = 0; c < r.hists.size(); ++c) {
    const image::ChannelStats& s = r.stats[c];
    Json entry = Json::object();
    entry["name"] = r.names[c];
    Json counts = Json::array();
    for (std::uint64_t v = 0; v < r.hists[c].bins(); ++v) counts.push_back(r.hists[c].count(v));
    entry["counts"] = std::move(counts);
    entry["min"] = s.min;
    entry["max"] = s.max;
    entry["mean"] = s.mean;
    entry["median"] = s.median;
    Json percentiles = Json::object();
    for (std::size_t k = 0; k < image::kPercentiles.size(); ++k) percentiles[percentile_name(k)] = s.percentiles[k];
    entry["percentiles"] = std::move(percentiles);
    list.push_back(std::move(entry));
  }
  doc["channels"] = std::move(list);
  return json_text(doc);
}

// Values per plotted bar: one per value up to this many values, else grouped
// (a 16-bit channel is drawn as 256 bars of 256 values).
constexpr std::uint64_t kPlotBars = 1024;

// Bars per channel in the channel's natural color, through the CLI's one bar
// chart builder (cli_plot.hpp), shared with `count --plot`.
plot::Chart histogram_chart(const ImageReport& r) {
  const std::uint64_t values = std::uint64_t{r.img.maxval} + 1;
  const std::uint64_t group = values <= kPlotBars ? 1 : (values + 255) / 256;
  const std::uint64_t bars = (values + group - 1) / group;
  std::vector<BarSeries> series;
  for (std::size_t c = 0; c < r.hists.size(); ++c) {
    const ChannelStyle style = channel_style(static_cast<unsigned>(c), r.img.channels);
    BarSeries s{style.label, std::vector<double>(bars, 0.0), style.color};
    for (std::uint64_t v = 0; v < values; ++v) s.values[v / group] += static_cast<double>(r.hists[c].count(v));
    series.push_back(std::move(s));
  }
  const Binning binning = group == 1 ? Binning::even(bars, 0, static_cast<double>(values))
                                     : Binning::even(bars, 0, static_cast<double>(bars * group));
  const std::string title =
      (r.file == "-" ? input_label(r.file) : display_name(fs::path(r.file).filename().string())) + ": histogram per channel";
  plot::Chart chart =
      bars_chart(binning, series, title, group == 1 ? "pixels" : "pixels per " + std::to_string(group) + " values");
  chart.x.label = "sample value";
  return chart;
}

}  // namespace

int run_image(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.push_back({"--plot", true});
  specs.push_back({kLogOption, false});
  specs.push_back({"--max-pixels", true});
  ParsedArgs p = parse_args("image", args, specs);
  if (p.help) {
    write_stdout(kImageHelp);
    return 0;
  }
  const std::string file = single_input(p, "image");
  const std::optional<std::string> plot_path = p.value("--plot");
  if (plot_path) {
    check_plot_path(*plot_path);  // a usage error for an unknown extension, before any work
    refuse_overwriting_input(file, *plot_path, "--plot");
  }
  check_log_option(p);
  RunOptions run = parse_run_options(p);
  count_on_cpu_under_auto(run);
  const image::ReadLimits limits = read_limits(p);
  const image::Image img = read_input_image(file, limits);
  StrategyLog log;
  ImageReport report{file, img, channel_names(img.channels), count_channels(img, run.library, log), {}, log.joined()};
  for (const Histogram& h : report.hists) report.stats.push_back(image::stats(h));
  // The plot is staged before the report and appears only once the report is out.
  detail::StagedOutput plot;
  if (plot_path) {
    plot::Chart chart = histogram_chart(report);
    if (p.has(kLogOption)) use_log_counts(chart);
    plot = stage_plot(*plot_path, chart);
  }
  switch (run.format) {
    case Format::table: write_stdout_then_commit(render_table(report), plot); break;
    case Format::csv: write_stdout_then_commit(render_csv(report), plot); break;
    case Format::json: write_stdout_then_commit(render_json(report), plot); break;
  }
  return 0;
}

int run_threshold(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("threshold", args, image_run_specs({{"-o", true}, {"--output", true}, {"--value", true},
                                                                 {"--otsu", false}, {"--invert", false}}));
  if (p.help) {
    write_stdout(kThresholdHelp);
    return 0;
  }
  const std::string file = single_input(p, "threshold");
  const std::string out = output_path(p, "threshold", file);
  const image::FileFormat format = output_format(out);
  if (p.has("--value") == p.has("--otsu"))
    usage_error(p.has("--otsu") ? "--value and --otsu both give the threshold" : "no threshold given",
                "give --value T or --otsu");
  RunOptions run = parse_run_options(p);
  count_on_cpu_under_auto(run);
  std::uint32_t t = 0;
  if (auto v = p.value("--value")) t = static_cast<std::uint32_t>(parse_count("--value", *v, 0, 65535));
  // The image on standard output: the report goes to standard error (known before any input is read).
  const bool image_to_stdout = names_standard_output(out);
  const image::ReadLimits limits = read_limits(p);
  const image::Image img = read_input_image(file, limits);
  require_gray(img, file, "threshold", false);
  if (p.has("--otsu")) {
    StrategyLog log;
    t = image::otsu_threshold(count_channels(img, run.library, log).front());
  }
  check_output_fits(img, format, file, out);
  const std::vector<std::uint8_t> bytes =
      call_with_fix([&] { return image::encode_image(image::threshold(img, t, p.has("--invert")), format); });
  const std::string report = "threshold " + std::to_string(t) + "\n";
  if (image_to_stdout) {
    write_output(out, bytes, "-o");
    write_stderr_report(report);
    return 0;
  }
  // OUT appears only once "threshold T" is printed: a failed standard output leaves no OUT.
  detail::StagedOutput staged = stage_output(out, bytes, "-o", true);
  write_stdout_then_commit(report, staged);
  return 0;
}

namespace {

// --tiles RxC: two counts in 1..kMaxClaheTiles, at most kMaxClaheTileCount tiles.
image::ClaheOptions clahe_options(const ParsedArgs& p) {
  image::ClaheOptions c;
  if (auto v = p.value("--clip-limit")) {
    c.clip_limit = parse_finite("--clip-limit", *v);
    if (c.clip_limit < 0)
      input_error("--clip-limit " + quote(*v) + " is negative", "give a clip limit >= 0 (0: no limit)");
  }
  if (auto v = p.value("--tiles")) {
    const std::size_t x = v->find_first_of("xX");
    if (x == std::string::npos)
      usage_error("--tiles " + quote(*v) + " is not RxC", "give tile rows and columns, e.g. --tiles 8x8");
    const std::uint64_t max = image::kMaxClaheTiles;
    c.tile_rows = static_cast<std::uint32_t>(parse_count("--tiles " + quote(*v) + ": R", v->substr(0, x), 1, max));
    c.tile_cols = static_cast<std::uint32_t>(parse_count("--tiles " + quote(*v) + ": C", v->substr(x + 1), 1, max));
    if (std::uint64_t{c.tile_rows} * c.tile_cols > image::kMaxClaheTileCount)
      input_error("--tiles " + quote(*v) + " makes " + std::to_string(std::uint64_t{c.tile_rows} * c.tile_cols) +
                      " tiles", "give at most " + std::to_string(image::kMaxClaheTileCount) + " tiles");
  }
  return c;
}

}  // namespace

int run_equalize(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("equalize", args,
                            image_run_specs({{"-o", true},
                                             {"--output", true},
                                             {"--clahe", false},
                                             {"--clip-limit", true},
                                             {"--tiles", true}}));
  if (p.help) {
    write_stdout(kEqualizeHelp);
    return 0;
  }
  const std::string file = single_input(p, "equalize");
  const std::string out = output_path(p, "equalize", file);
  const image::FileFormat format = output_format(out);
  const bool adaptive = p.has("--clahe");
  for (const char* option : {"--clip-limit", "--tiles"})
    if (p.has(option) && !adaptive) usage_error(std::string(option) + " needs --clahe", "add --clahe");
  RunOptions run = parse_run_options(p);
  count_on_cpu_under_auto(run);
  const image::ClaheOptions clahe = clahe_options(p);
  const image::ReadLimits limits = read_limits(p);
  const image::Image img = read_input_image(file, limits);
  require_gray(img, file, adaptive ? "equalize --clahe" : "equalize", !adaptive);
  check_output_fits(img, format, file, out);
  const image::Image equalized = call_with_fix([&] {
    return adaptive ? image::clahe(img, clahe, run.library) : image::equalize(img, run.library);
  });
  write_output(out, call_with_fix([&] { return image::encode_image(equalized, format); }), "-o");
  return 0;
}

}  // namespace levelhist::cli
