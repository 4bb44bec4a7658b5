// End-to-end tests of `levelhist image`, `threshold` and `equalize`: every
// input format, the outputs checked against values computed here from the
// pixels, the errors (one line, exit 2 usage / 1 input), and that the input
// file is never modified.
#include <levelhist/image_ops.hpp>
#include <levelhist/strategy.hpp>
#include <set>

#include "cli_test_support.hpp"
#include "image_test_support.hpp"
#include "svg_check.hpp"

namespace {

using namespace cli_test;
using namespace image_test;
using levelhist::image::FileFormat;
using levelhist::image::jpeg_supported;
using levelhist::image::png_supported;
using levelhist::image::read_image;

// One input file of the tests: its bytes and the image they hold.
struct Input {
  std::string label;
  std::string bytes;
  Image img;
};

std::string encoded(const Image& img, FileFormat f) {
  const std::vector<std::uint8_t> v = levelhist::image::encode_image(img, f);
  return {v.begin(), v.end()};
}

// Every format: P2/P5 gray and P3/P6 RGB at 8 and 16 bits, and PNG of every channel count.
std::vector<Input> every_format() {
  std::vector<Input> in;
  for (std::uint32_t maxval : {255u, 1000u})
    for (std::uint32_t channels : {1u, 3u})
      for (bool plain : {true, false}) {
        Image img = pattern(17, 2, channels, maxval > 255 ? 16 : 8, maxval, channels + maxval);
        const std::string magic = plain ? (channels == 1 ? "P2" : "P3") : (channels == 1 ? "P5" : "P6");
        in.push_back({magic + "_maxval" + std::to_string(maxval) + (channels == 1 ? ".pgm" : ".ppm"),
                      pnm_file(img, plain), img});
      }
  if (png_supported())
    for (std::uint32_t channels = 1; channels <= 4; ++channels)
      for (std::uint32_t depth : {8u, 16u}) {
        Image img = pattern(3, 5, channels, depth, depth == 16 ? 65535 : 255, channels);
        in.push_back({"png" + std::to_string(channels) + "ch" + std::to_string(depth) + ".png",
                      encoded(img, FileFormat::png), img});
      }
  return in;
}

// The samples of channel c, sorted.
std::vector<std::uint32_t> sorted_channel(const Image& img, std::uint32_t c) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t y = 0; y < img.height; ++y)
    for (std::uint32_t x = 0; x < img.width; ++x) v.push_back(img.at(x, y, c));
  std::sort(v.begin(), v.end());
  return v;
}

// Nearest rank on the sorted samples: the value at rank ceil(p * N / 100).
std::uint32_t nearest_rank(const std::vector<std::uint32_t>& sorted, unsigned p) {
  const std::size_t rank = std::max<std::size_t>(1, (p * sorted.size() + 99) / 100);
  return sorted[rank - 1];
}

std::vector<std::string> names_for(std::uint32_t channels) {
  switch (channels) {
    case 1: return {"gray"};
    case 2: return {"gray", "alpha"};
    case 3: return {"red", "green", "blue"};
    default: return {"red", "green", "blue", "alpha"};
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CliImage : public CliTest {
 protected:
  // Runs a command that must leave `input` exactly as it was.
  Result run_keeping(const std::string& input, const std::vector<std::string>& args, int status) {
    const std::string before = read_file(input);
    const auto mtime = fs::last_write_time(input);
    Result r = status == 0 ? ok(args) : fails(status, args);
    EXPECT_EQ(read_file(input), before) << "the input changed: " << describe(args, r);
    EXPECT_EQ(fs::last_write_time(input), mtime) << describe(args, r);
    return r;
  }
  // The directory's entries: a failed write must leave nothing behind.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// ---- image ---------------------------------------------------------------------------

TEST_F(CliImage, JsonHasTheShapeCountsAndStatisticsOfEveryFormat) {
  for (const Input& in : every_format()) {
    SCOPED_TRACE(in.label);
    const std::string path = file(in.label, in.bytes);
    Json j = parse_json(run_keeping(path, {"image", path, "--format", "json", "--backend", "cpu"}, 0).out);
    EXPECT_EQ(j["file"].get<std::string>(), path);
    EXPECT_EQ(j["width"].get<std::uint64_t>(), in.img.width);
    EXPECT_EQ(j["height"].get<std::uint64_t>(), in.img.height);
    EXPECT_EQ(j["channel_count"].get<std::uint64_t>(), in.img.channels);
    EXPECT_EQ(j["bit_depth"].get<std::uint64_t>(), in.img.bit_depth);
    EXPECT_EQ(j["maxval"].get<std::uint64_t>(), in.img.maxval);
    const Json& channels = j["channels"];
    ASSERT_EQ(channels.size(), in.img.channels);
    for (std::uint32_t c = 0; c < in.img.channels; ++c) {
      const Json& ch = channels[c];
      const std::vector<std::uint32_t> sorted = sorted_channel(in.img, c);
      std::vector<std::uint64_t> counts(in.img.bit_depth == 16 ? 65536 : 256, 0);
      double sum = 0;
      for (std::uint32_t v : sorted) ++counts[v], sum += v;
      EXPECT_EQ(ch["name"].get<std::string>(), names_for(in.img.channels)[c]);
      EXPECT_EQ(u64s(ch["counts"]), counts);
      EXPECT_EQ(ch["min"].get<std::uint64_t>(), sorted.front());
      EXPECT_EQ(ch["max"].get<std::uint64_t>(), sorted.back());
      EXPECT_DOUBLE_EQ(ch["mean"].get<double>(), sum / static_cast<double>(sorted.size()));
      EXPECT_EQ(ch["median"].get<std::uint64_t>(), nearest_rank(sorted, 50));
      for (unsigned p : levelhist::image::kPercentiles) {
        std::string key = "p";  // appended: GCC 12 warns (-Wrestrict) on "p" + std::string
        key += std::to_string(p);
        EXPECT_EQ(ch["percentiles"][key].get<std::uint64_t>(), nearest_rank(sorted, p)) << key;
      }
    }
  }
}

TEST_F(CliImage, CsvHasOneRowPerValueAndOneColumnPerChannel) {
  const Image img = pattern(17, 2, 3, 8, 255, 5);
  const std::string path = file("rgb.ppm", pnm_file(img, false));
  const std::vector<std::string> lines = lines_of(ok({"image", path, "--format", "csv"}).out);
  ASSERT_EQ(lines.size(), 257u);
  EXPECT_EQ(lines[0], "value,red,green,blue");
  for (std::uint32_t v = 0; v < 256; ++v) {
    const std::vector<std::string> f = split(lines[v + 1]);
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f[0], std::to_string(v));
    for (std::uint32_t c = 0; c < 3; ++c) {
      const auto s = sorted_channel(img, c);
      EXPECT_EQ(f[c + 1], std::to_string(std::count(s.begin(), s.end(), v))) << "value " << v << " channel " << c;
    }
  }
}

TEST_F(CliImage, CsvOf16BitHas65536Rows) {
  const std::string path = file("wide.pgm", pnm_file(pattern(3, 5, 1, 16, 65535), true));
  EXPECT_EQ(lines_of(ok({"image", path, "--format", "csv"}).out).size(), 65537u);
}

TEST_F(CliImage, TableShowsEachChannelsStatistics) {
  // Gray 3 1 4 1 5 9 2 6 5 3: median (rank 5 of the sorted 1 1 2 3 3 4 5 5 6 9) is 3, mean 3.9.
  const std::string path = file("ten.pgm", "P2 5 2 9\n3 1 4 1 5\n9 2 6 5 3\n");
  const std::string out = ok({"image", path}).out;
  EXPECT_NE(out.find("5 x 2, 8-bit gray, maxval 9"), std::string::npos) << out;
  EXPECT_NE(out.find("==> gray <=="), std::string::npos) << out;
  EXPECT_NE(out.find("median  3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("mean    3.9\n"), std::string::npos) << out;
  // maxval 9: one bar per value 0..9, value 1 holding 2 of 10 samples.
  EXPECT_NE(out.find("\n1  2   20.0%"), std::string::npos) << out;
}

TEST_F(CliImage, PlotDrawsOneSeriesPerChannel) {
  const Image img = pattern(17, 2, 3, 8, 255);
  const std::string path = file("rgb.ppm", pnm_file(img, false));
  ok({"image", path, "--plot", this->path("hist.svg")});
  const std::string svg = read_file(this->path("hist.svg"));
  // One bar per non-empty (channel, value): the distinct values of each channel.
  std::uint64_t expected_bars = 0;
  for (std::uint32_t c = 0; c < 3; ++c) {
    std::set<std::uint32_t> values;
    for (std::uint32_t y = 0; y < img.height; ++y)
      for (std::uint32_t x = 0; x < img.width; ++x) values.insert(img.at(x, y, c));
    expected_bars += values.size();
  }
  EXPECT_EQ(svg_check::check(svg).count("rect", "bar"), expected_bars);
  for (const char* name : {"red", "green", "blue"}) EXPECT_NE(svg.find(name), std::string::npos) << name;
  EXPECT_NE(svg.find("sample value"), std::string::npos);
}

// ---- threshold -------------------------------------------------------------------------

TEST_F(CliImage, ThresholdAtAValueInEveryGrayFormat) {
  std::vector<std::string> outputs = {"out.pgm", "out.pnm"};
  if (png_supported()) outputs.push_back("out.png");
  for (const Input& in : every_format()) {
    if (in.img.channels != 1) continue;
    SCOPED_TRACE(in.label);
    const std::string path = file(in.label, in.bytes);
    const std::uint32_t t = in.img.maxval / 3;
    for (const std::string& name : outputs) {
      const Result r = run_keeping(path, {"threshold", path, "-o", this->path(name), "--value", std::to_string(t)}, 0);
      EXPECT_EQ(r.out, "threshold " + std::to_string(t) + "\n");
      const Image out = read_image(this->path(name));
      ASSERT_EQ(out.width, in.img.width);
      ASSERT_EQ(out.height, in.img.height);
      for (std::uint32_t y = 0; y < out.height; ++y)
        for (std::uint32_t x = 0; x < out.width; ++x)
          EXPECT_EQ(out.at(x, y, 0), in.img.at(x, y, 0) > t ? in.img.maxval : 0u) << name << " " << x << "," << y;
    }
  }
}

TEST_F(CliImage, OtsuOnTheBimodalImage) {
  // The image of Otsu.BimodalImageSplitsBetweenTheModes (test_image_ops.cpp): 60 pixels
  // in 40..60, 40 in 190..210; every t in [60, 189] splits them alike, the first is 60.
  std::vector<std::vector<std::uint32_t>> rows(10, std::vector<std::uint32_t>(10));
  for (std::uint32_t i = 0; i < 100; ++i) rows[i / 10][i % 10] = i < 60 ? 40 + (i * 5) % 21 : 190 + (i * 11) % 21;
  const std::string path = file("bimodal.pgm", pnm_file(gray8(rows), false));
  const Result r = run_keeping(path, {"threshold", path, "--otsu", "--output", this->path("bw.pgm")}, 0);
  EXPECT_EQ(r.out, "threshold 60\n");
  const Image bw = read_image(this->path("bw.pgm"));
  for (std::uint32_t i = 0; i < 100; ++i) EXPECT_EQ(bw.at(i % 10, i / 10, 0), i < 60 ? 0u : 255u) << i;
}

// ---- equalize -------------------------------------------------------------------------

TEST_F(CliImage, EqualizeWorkedByHand) {
  // As Equalize.TenPixelsWorkedByHand: cdf_min 2, scale 255 / 8 = 31.875;
  // 1 -> 0, 2 -> 32, 3 -> 96, 4 -> 128 (127.5 to even), 5 -> 191, 6 -> 223, 9 -> 255.
  const Image want = gray8({{96, 0, 128, 0, 191}, {255, 32, 223, 191, 96}});
  std::vector<std::pair<std::string, std::string>> inputs = {{"ten.pgm", "P2 5 2 255\n3 1 4 1 5\n9 2 6 5 3\n"},
                                                             {"ten_p5.pgm", pnm_file(gray8({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}), false)}};
  if (png_supported()) inputs.push_back({"ten.png", encoded(gray8({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}), FileFormat::png)});
  for (const auto& [name, bytes] : inputs) {
    const std::string path = file(name, bytes);
    const std::string out = this->path("eq-" + name);
    EXPECT_EQ(run_keeping(path, {"equalize", path, "-o", out}, 0).out, "");
    EXPECT_TRUE(same_pixels(read_image(out), want)) << name;
  }
}

// ---- errors and the input's safety -------------------------------------------------------

TEST_F(CliImage, UsageErrors) {
  const std::string gray = file("g.pgm", pnm_file(pattern(3, 5, 1, 8, 255), false));
  const std::string out = path("o.pgm");
  run_keeping(gray, {"threshold", gray, "--otsu"}, 2);                              // no -o
  run_keeping(gray, {"threshold", gray, "-o", out}, 2);                             // no threshold
  run_keeping(gray, {"threshold", gray, "-o", out, "--otsu", "--value", "3"}, 2);  // both
  run_keeping(gray, {"threshold", gray, "-o", out, "--output", out, "--otsu"}, 2);  // two outputs
  run_keeping(gray, {"threshold", gray, "-o", path("o.gif"), "--value", "3"}, 2);  // unknown format
  run_keeping(gray, {"equalize", gray, "-o", path("o.bmp")}, 2);
  run_keeping(gray, {"equalize", gray, gray, "-o", out}, 2);  // two inputs
  run_keeping(gray, {"image", gray, "--format", "xml"}, 2);
  run_keeping(gray, {"image", gray, "--plot", path("h.bmp")}, 2);
  run_keeping(gray, {"image", gray, "--bins", "3"}, 2);
  fails(2, {"image"});
  fails(2, {"image", "-", gray});
  EXPECT_EQ(entries(), std::vector<std::string>{"g.pgm"});
}

TEST_F(CliImage, NeverOverwritesTheInput) {
  const std::string gray = file("g.pgm", pnm_file(pattern(3, 5, 1, 8, 255), false));
  const Result same = run_keeping(gray, {"threshold", gray, "-o", gray, "--value", "9"}, 2);
  EXPECT_NE(same.err.find("input file"), std::string::npos) << same.err;
  // The same file under another name.
  fs::create_directory(path("sub"));
  const std::string other_name = path("sub/../g.pgm");
  run_keeping(gray, {"equalize", gray, "-o", other_name}, 2);
  fs::create_symlink(gray, path("link.pgm"));
  run_keeping(gray, {"equalize", gray, "-o", path("link.pgm")}, 2);
  run_keeping(gray, {"image", gray, "--plot", gray}, 2);
}

TEST_F(CliImage, InputErrors) {
  const std::string rgb = file("c.ppm", pnm_file(pattern(3, 5, 3, 8, 255), false));
  const std::string wide = file("w.pgm", pnm_file(pattern(3, 5, 1, 16, 65535), false));
  const std::string bad = file("bad.pgm", "P5 3 5 255\n\x01\x02");
  const std::string out = path("o.pgm");
  EXPECT_NE(run_keeping(rgb, {"threshold", rgb, "-o", out, "--otsu"}, 1).err.find("gray"), std::string::npos);
  EXPECT_NE(run_keeping(rgb, {"equalize", rgb, "-o", out}, 1).err.find("8-bit gray"), std::string::npos);
  EXPECT_NE(run_keeping(wide, {"equalize", wide, "-o", out}, 1).err.find("16-bit"), std::string::npos);
  EXPECT_NE(run_keeping(bad, {"image", bad}, 1).err.find("truncated"), std::string::npos);
  EXPECT_NE(run_keeping(bad, {"threshold", bad, "-o", out, "--value", "1"}, 1).err.find("bad.pgm"), std::string::npos);
  const Result missing = fails(1, {"image", path("missing.png")});
  EXPECT_NE(missing.err.find("missing.png"), std::string::npos);
  run_keeping(rgb, {"threshold", rgb, "-o", out, "--value", "70000"}, 1);  // above 65535
  EXPECT_EQ(entries(), (std::vector<std::string>{"bad.pgm", "c.ppm", "w.pgm"}));
}

TEST_F(CliImage, FailedWriteLeavesNoPartialFile) {
  const std::string gray = file("g.pgm", pnm_file(pattern(3, 5, 1, 8, 255), false));
  fs::create_directory(path("taken.pgm"));  // the rename onto a directory fails after the data is written
  run_keeping(gray, {"threshold", gray, "-o", path("taken.pgm"), "--value", "3"}, 1);
  run_keeping(gray, {"equalize", gray, "-o", path("no/such/dir/e.pgm")}, 1);
  EXPECT_EQ(entries(), (std::vector<std::string>{"g.pgm", "taken.pgm"}));
  EXPECT_TRUE(fs::is_empty(path("taken.pgm")));
}

TEST_F(CliImage, ThresholdRefusesGrayAlpha) {
  if (!png_supported()) GTEST_SKIP() << "this build has no PNG support, so no gray+alpha input";
  const std::string ga = file("a.png", encoded(pattern(3, 5, 2, 8, 255), FileFormat::png));
  const Result r = run_keeping(ga, {"threshold", ga, "-o", path("o.png"), "--value", "3"}, 1);
  EXPECT_NE(r.err.find("gray+alpha"), std::string::npos) << r.err;
}

TEST_F(CliImage, GrayImagesTakeEveryStrategyColorOnesThoseForPixels) {
  // Gray samples are one plain array, which cpu_parallel counts; it has no pixel layouts.
  const Image img = gray8({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}});
  const std::string gray = file("g.pgm", pnm_file(img, false));
  Json j = parse_json(ok({"image", gray, "--strategy", "cpu_parallel", "--format", "json"}).out);
  EXPECT_EQ(j["strategy"].get<std::string>(), "cpu_parallel");
  EXPECT_EQ(j["channels"][0]["counts"][1].get<std::uint64_t>(), 2u);  // two 1s
  ok({"equalize", gray, "-o", path("e.pgm"), "--strategy", "cpu_parallel"});
  // The library's Otsu (checked by hand in test_image_ops.cpp) on the same pixels.
  const std::uint32_t t = levelhist::image::otsu_threshold(levelhist::image::channel_histograms(img).front());
  EXPECT_EQ(ok({"threshold", gray, "-o", path("t.pgm"), "--otsu", "--strategy", "cpu_parallel"}).out,
            "threshold " + std::to_string(t) + "\n");
  const std::string rgb = file("c.ppm", pnm_file(pattern(3, 5, 3, 8, 255), false));
  EXPECT_NE(run_keeping(rgb, {"image", rgb, "--strategy", "cpu_parallel"}, 1).err.find("--strategy"), std::string::npos);
}

// Under --backend auto `image` (as threshold, equalize and joint) counts on
// the CPU, GPU or not: one image counts there in less time than a CUDA
// context takes to start.
TEST_F(CliImage, AutoCountsImagesOnTheCpu) {
  const std::string gray = file("g.pgm", pnm_file(gray8({{3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}}), false));
  for (const char* backend : {"auto", "cpu"}) {
    const Json j = parse_json(ok({"image", gray, "--format", "json", "--backend", backend}).out);
    const levelhist::Strategy* s = levelhist::find_strategy(j["strategy"].get<std::string>());
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->backend, levelhist::Backend::cpu) << backend;
  }
}

TEST_F(CliImage, HelpForEachCommand) {
  for (const std::string cmd : {"image", "threshold", "equalize"}) {
    EXPECT_EQ(ok({"help", cmd}).out.rfind("Usage: levelhist " + cmd, 0), 0u) << cmd;
    EXPECT_EQ(ok({cmd, "--help"}).out, ok({"help", cmd}).out) << cmd;
  }
  const std::string main_help = ok({"--help"}).out;
  for (const char* cmd : {"image", "threshold", "equalize"}) EXPECT_NE(main_help.find(cmd), std::string::npos);
}

}  // namespace

// ---- equalize --clahe -----------------------------------------------------------------

TEST_F(CliImage, ClaheWorkedByHand) {
  // Test Clahe.ThreeByThreeReflectedByHand's image and pixels through the CLI.
  const std::string path = file("nine.pgm", "P2 3 3 255\n0 10 20\n30 40 50\n60 70 80\n");
  const std::string out = this->path("clahe.pgm");
  EXPECT_EQ(run_keeping(path, {"equalize", path, "-o", out, "--clahe", "--tiles", "2x2"}, 0).out, "");
  const Image got = read_image(out);
  EXPECT_EQ(got.at(0, 0, 0), 64u);
  EXPECT_EQ(got.at(2, 0, 0), 128u);
  EXPECT_EQ(got.at(0, 2, 0), 223u);
  EXPECT_EQ(got.at(1, 1, 0), 255u);
}

TEST_F(CliImage, ClaheSixteenBitsWorkedByHand) {
  // Test Clahe.TwoByTwoGridOnSixteenBitsByHand's image through the CLI: the
  // output stays 16-bit (maxval 65535), as OpenCV's does.
  std::string text = "P2 8 8 65535\n";
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x)
      text += std::to_string(y < 4 ? (x < 4 ? 0 : 25600) : (x < 4 ? 51200 : 12800)) + (x == 7 ? "\n" : " ");
  const std::string in = file("wide.pgm", text);
  const std::string out = path("wide-clahe.pgm");
  EXPECT_EQ(run_keeping(in, {"equalize", in, "-o", out, "--clahe", "--tiles", "2x2"}, 0).out, "");
  const Image got = read_image(out);
  EXPECT_EQ(got.bit_depth, 16u);
  EXPECT_EQ(got.maxval, 65535u);
  EXPECT_EQ(got.at(0, 0, 0), 8192u);
  EXPECT_EQ(got.at(3, 3, 0), 6400u);
  EXPECT_EQ(got.at(4, 4, 0), 14336u);
  EXPECT_EQ(got.at(7, 0, 0), 28672u);
  // Plain equalization stays 8-bit (OpenCV's equalizeHist), a color image is
  // refused by both, and a 16-bit result cannot go to JPEG.
  const std::string rgb = file("c16.ppm", pnm_file(pattern(3, 5, 3, 16, 65535), false));
  EXPECT_NE(run_keeping(in, {"equalize", in, "-o", path("e.pgm")}, 1).err.find("16-bit"), std::string::npos);
  EXPECT_NE(run_keeping(rgb, {"equalize", rgb, "-o", path("e.pgm"), "--clahe"}, 1).err.find("gray"), std::string::npos);
  if (jpeg_supported()) run_keeping(in, {"equalize", in, "-o", path("e.jpg"), "--clahe"}, 1);
  EXPECT_EQ(entries(), (std::vector<std::string>{"c16.ppm", "wide-clahe.pgm", "wide.pgm"}));
}

TEST_F(CliImage, ClaheOptionErrors) {
  const std::string gray = file("g.pgm", pnm_file(pattern(9, 7, 1, 8, 255), false));
  const std::string out = path("o.pgm");
  run_keeping(gray, {"equalize", gray, "-o", out, "--tiles", "2x2"}, 2);         // --tiles needs --clahe
  run_keeping(gray, {"equalize", gray, "-o", out, "--clip-limit", "3"}, 2);      // so does --clip-limit
  run_keeping(gray, {"equalize", gray, "-o", out, "--clahe", "--tiles", "8"}, 2);  // not RxC
  run_keeping(gray, {"equalize", gray, "-o", out, "--clahe", "--tiles", "0x8"}, 1);
  run_keeping(gray, {"equalize", gray, "-o", out, "--clahe", "--tiles", "8x1025"}, 1);
  run_keeping(gray, {"equalize", gray, "-o", out, "--clahe", "--tiles", "512x512"}, 1);  // 262144 tiles
  run_keeping(gray, {"equalize", gray, "-o", out, "--clahe", "--clip-limit", "-1"}, 1);
  run_keeping(gray, {"equalize", gray, "-o", out, "--clahe", "--clip-limit", "nan"}, 1);
  EXPECT_EQ(entries(), std::vector<std::string>{"g.pgm"});
  EXPECT_EQ(run_keeping(gray, {"equalize", gray, "-o", out, "--clahe", "--tiles", "3X4", "--clip-limit", "2.5"}, 0).out, "");
  EXPECT_EQ(read_image(out).width, 9u);
}
