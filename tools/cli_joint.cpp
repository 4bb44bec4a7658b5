// `levelhist joint`: the joint histogram of two gray images and their mutual
// information (the measure of mutual-information registration).
#include <cmath>
#include <limits>

#include "cli.hpp"
#include "json.hpp"
#include "levelhist/image.hpp"
#include "levelhist/image_ops.hpp"

namespace levelhist::cli {

const char* const kJointHelp =
    "Usage: levelhist joint [OPTION]... A B\n"
    "The joint histogram of two gray images of the same size and bit depth (PGM,\n"
    "PNG, JPEG or TIFF): count[i][j] is the number of pixels whose value is in bin i in A and in\n"
    "bin j in B. Beside it, in bits, the entropies H(A), H(B), H(A,B), the mutual\n"
    "information H(A) + H(B) - H(A,B) and the normalized mutual information of\n"
    "Studholme et al., (H(A) + H(B)) / H(A,B): 1 for independent images, 2 for\n"
    "images that determine each other, undefined (null) when both are constant.\n"
    "\n"
    "  --bins N          N even bins per axis over [0, 256) (8-bit) or [0, 65536)\n"
    "                    (16-bit), 1..65536 (default: 256; for 8-bit images one bin\n"
    "                    per value)\n"
    "  --format F        table (default): the measures, then every non-empty cell as\n"
    "                    'i j count'; csv: a,b,count for every cell; json: the\n"
    "                    measures and \"counts\", a list of rows (row i: A's bin i)\n"
    "  --backend B       auto (default), cpu or cuda\n"
    "  --strategy NAME   a strategy from 'levelhist list', or auto (default)\n"
    "  --threads N       CPU worker threads; 0 (default) = all cores\n"
    "  --max-pixels N    refuse an image whose header claims more than N pixels,\n"
    "                    before reading it (default: LEVELHIST_MAX_PIXELS, else 2^28)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
    "Example: levelhist joint --format json fixed.png moving.png\n";

namespace {

std::string measure(double v) { return std::isfinite(v) ? format_number(v) : "null"; }

}  // namespace

int run_joint(const std::vector<std::string>& args) {
  std::vector<OptionSpec> specs = run_option_specs();
  specs.push_back({"--bins", true});
  specs.push_back({"--max-pixels", true});
  ParsedArgs p = parse_args("joint", args, specs);
  if (p.help) {
    write_stdout(kJointHelp);
    return 0;
  }
  if (p.operands.size() != 2)
    usage_error("'joint' takes two image files, A and B, not " + std::to_string(p.operands.size()),
                "see 'levelhist joint --help'");
  for (const std::string& f : p.operands)
    if (f == "-") usage_error("'joint' reads image files, not standard input", "give the images' file names");
  RunOptions run = parse_run_options(p);
  count_on_cpu_under_auto(run);
  std::uint64_t bins = 0;
  if (auto v = p.value("--bins")) bins = parse_count("--bins", *v, 1, 65536);
  image::ReadLimits limits;
  if (auto v = p.value("--max-pixels"))
    limits.max_pixels = parse_count("--max-pixels", *v, 1, std::numeric_limits<std::uint64_t>::max());
  const std::string& fa = p.operands[0];
  const std::string& fb = p.operands[1];
  const image::Image a = call_naming(fa, [&] { return image::read_image(fa, limits); });
  const image::Image b = call_naming(fb, [&] { return image::read_image(fb, limits); });
  for (const auto& [img, name] : {std::pair{&a, &fa}, std::pair{&b, &fb}})
    if (img->channels != 1)
      input_error(quote(*name) + " holds a " + std::to_string(img->channels) +
                      "-channel image; 'joint' pairs gray images",
                  "convert it to gray first");
  if (a.width != b.width || a.height != b.height || a.bit_depth != b.bit_depth)
    input_error(quote(fa) + " is " + std::to_string(a.width) + " x " + std::to_string(a.height) + " " +
                    std::to_string(a.bit_depth) + "-bit and " + quote(fb) + " " + std::to_string(b.width) + " x " +
                    std::to_string(b.height) + " " + std::to_string(b.bit_depth) + "-bit",
                "give two images of the same size and bit depth");
  const HistogramNd h = call_with_fix([&] { return image::joint_histogram(a, b, bins, run.library); });
  const image::JointInformation info = call_with_fix([&] { return image::joint_information(h); });
  const Binning& axis = h.axes()[0];
  const std::uint64_t n = axis.bins();
  std::string out;
  switch (run.format) {
    case Format::table: {
      out = "A  " + display_name(fa) + "\nB  " + display_name(fb) + "\n";
      out += render_summary({{"pixels", std::to_string(info.pairs)},
                             {"bins", std::to_string(n) + " x " + std::to_string(n)},
                             {"H(A)", measure(info.entropy_a)},
                             {"H(B)", measure(info.entropy_b)},
                             {"H(A,B)", measure(info.joint_entropy)},
                             {"mutual_information", measure(info.mutual_information)},
                             {"normalized_mutual_information", std::isfinite(info.normalized_mutual_information)
                                                                   ? format_number(info.normalized_mutual_information)
                                                                   : "undefined (both images constant)"}});
      out += "\na  b  count\n";
      for (std::uint64_t i = 0; i < n; ++i)
        for (std::uint64_t j = 0; j < n; ++j)
          if (std::uint64_t c = h.at(i, j)) out += std::to_string(i) + "  " + std::to_string(j) + "  " + std::to_string(c) + "\n";
      break;
    }
    case Format::csv:
      out = "a,b,count\n";
      for (std::uint64_t i = 0; i < n; ++i)
        for (std::uint64_t j = 0; j < n; ++j)
          out += std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(h.at(i, j)) + "\n";
      break;
    case Format::json: {
      // Measures that are undefined (both images constant) are null.
      auto measure_json = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
      Json doc = json_document("joint");
      doc["files"] = Json::array({fa, fb});
      doc["width"] = a.width;
      doc["height"] = a.height;
      doc["bins"] = n;
      Json edges = Json::array();
      for (std::uint64_t i = 0; i <= n; ++i) edges.push_back(axis.edge(i));
      doc["edges"] = edges;
      doc["entropy_a"] = measure_json(info.entropy_a);
      doc["entropy_b"] = measure_json(info.entropy_b);
      doc["joint_entropy"] = measure_json(info.joint_entropy);
      doc["mutual_information"] = measure_json(info.mutual_information);
      doc["normalized_mutual_information"] = measure_json(info.normalized_mutual_information);
      doc["normalization"] = "studholme: (H(A) + H(B)) / H(A,B)";
      doc["units"] = "bits";
      Json rows = Json::array();
      for (std::uint64_t i = 0; i < n; ++i) {
        Json row = Json::array();
        for (std::uint64_t j = 0; j < n; ++j) row.push_back(h.at(i, j));
        rows.push_back(std::move(row));
      }
      doc["counts"] = std::move(rows);
      out = json_text(doc);
      break;
    }
  }
  write_stdout(out);
  return 0;
}

}  // namespace levelhist::cli
