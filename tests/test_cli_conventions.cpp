// The command line's conventions: -V, format_version in every JSON document,
// the CSV's underflow/overflow/nan rows, the image commands on standard input
// and output ('-'), JPEG and TIFF files through the commands, threshold
// --invert, --log plots and --no-progress (standard error on a
// pseudo-terminal, fed slowly enough for the bar to be drawn).
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <thread>

#include <regex>

#include "cli_test_support.hpp"
#include "image_test_support.hpp"
#include "jpeg_tiff_test_support.hpp"
#include "levelhist/image.hpp"
#include "svg_check.hpp"

namespace cli_test {
namespace {

using levelhist::image::Image;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CliConventions : public CliTest {
 public:
  std::string gray_file(const std::string& name, const Image& img) { return file(name, image_test::pnm_file(img, false)); }
};

TEST_F(CliConventions, DashVIsVersion) {
  const Result v = ok({"-V"});
  EXPECT_EQ(v.out, ok({"--version"}).out);
  EXPECT_EQ(v.out.rfind("levelhist ", 0), 0u) << v.out;
  EXPECT_NE(ok({"--help"}).out.find("-V, --version"), std::string::npos);
}

TEST_F(CliConventions, EveryJsonDocumentStartsWithItsFormatVersion) {
  const std::string bytes = file("b.u8", "abcabc");
  const std::string f32 = file("x.f32", bytes_of(std::vector<float>{0.5f, 2.0f}));
  const std::string keys = file("k.u32", bytes_of(std::vector<std::uint32_t>{7, 7, 9}));
  const std::string gray = gray_file("g.pgm", image_test::pattern(4, 3, 1, 8, 255));
  const std::vector<std::vector<std::string>> commands = {
      {"count", "--format", "json", bytes},
      {"count", "--per-file", "--format", "json", bytes},
      {"count", "--channels", "3", "--format", "json", bytes},
      {"count", "--type", "f32", "--bins", "2", "--range", "0:1", "--weights", f32, "--format", "json", f32},
      {"count", "--type", "u32", "--sparse", "--format", "json", keys},
      {"text", "--format", "json", bytes},
      {"list", "--format", "json"},
      {"image", "--format", "json", gray}};
  for (const auto& args : commands) {
    const Result r = ok(args);
    const Json j = parse_json(r.out);
    ASSERT_TRUE(j.is_object()) << describe(args, r);
    EXPECT_EQ(j.begin().key(), "format_version") << describe(args, r);
    EXPECT_EQ(j["format_version"].get<int>(), 2) << describe(args, r);
    EXPECT_EQ(j["command"].get<std::string>(), args[0]);
    // The text is the layout json_text documents: numbers without ".0", arrays of numbers on one line.
    // (Strings aside: a device name may say "runtime 13.0, driver 13.0".)
    const std::string numbers_only = std::regex_replace(r.out, std::regex(R"("(?:[^"\\]|\\.)*")"), "\"\"");
    EXPECT_EQ(numbers_only.find(".0,"), std::string::npos) << r.out.substr(0, 300);
  }
}

TEST_F(CliConventions, CsvCarriesUnderflowOverflowAndNan) {
  const std::vector<float> v = {-1.0f, 0.25f, 0.75f, 0.75f, 2.0f, 5.0f, std::nanf(""), -INFINITY};
  const std::string f = file("v.f32", bytes_of(v));
  const CsvHistogram h = parse_csv(ok({"count", "--type", "f32", "--bins", "2", "--range", "0:1", "--format", "csv", f}).out);
  const Reference want = reference(as_doubles(v), {0, 0.5, 1}, false);
  EXPECT_EQ(h.counts, want.counts);
  EXPECT_EQ(h.underflow, want.underflow);
  EXPECT_EQ(h.overflow, want.overflow);
  EXPECT_EQ(h.nan, want.nan);
  EXPECT_EQ(h.underflow, 2u);
  EXPECT_EQ(h.nan, 1u);
}

// ---- the image commands on standard input and output ------------------------------

TEST_F(CliConventions, ImageReadsStandardInputPipedOrRedirected) {
  const Image img = image_test::pattern(13, 7, 1, 8, 255);
  const std::string f = gray_file("g.pgm", img);
  const Json from_file = parse_json(ok({"image", "--format", "json", f}).out);
  RunSpec piped;
  piped.stdin_data = image_test::pnm_file(img, false);
  RunSpec redirected;
  redirected.stdin_file = f;
  for (const RunSpec& spec : {piped, redirected}) {
    const Json j = parse_json(ok({"image", "--format", "json", "-"}, spec).out);
    EXPECT_EQ(j["file"].get<std::string>(), "-");
    EXPECT_EQ(j["channels"][0]["counts"], from_file["channels"][0]["counts"]);
    EXPECT_EQ(ok({"image", "-"}, spec).out.rfind("standard input: 13 x 7, 8-bit gray", 0), 0u);
  }
  // Errors name it as standard input.
  RunSpec empty;
  empty.stdin_data = "";
  Result r = fails(1, {"image", "-"}, empty);
  EXPECT_EQ(r.err.rfind("levelhist: standard input: the file is empty", 0), 0u) << r.err;
  RunSpec cut;
  cut.stdin_data = image_test::pnm_file(img, false);
  cut.stdin_data->resize(cut.stdin_data->size() - 10);
  r = fails(1, {"image", "-"}, cut);
  EXPECT_NE(r.err.find("standard input: truncated PGM pixel data"), std::string::npos) << r.err;
}

TEST_F(CliConventions, ThresholdAndEqualizeWorkInAPipeline) {
  const Image img = image_test::pattern(16, 9, 1, 8, 255);
  const std::string f = gray_file("g.pgm", img);
  ok({"threshold", f, "-o", path("t.pgm"), "--otsu"});
  RunSpec piped;
  piped.stdin_data = image_test::pnm_file(img, false);
  // The image on standard output, the report on standard error.
  Result r = run_cli({"threshold", "-", "-o", "-", "--otsu"}, piped);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_all(path("t.pgm")));
  EXPECT_EQ(r.err, ok({"threshold", f, "-o", path("t2.pgm"), "--otsu"}).out);
  EXPECT_EQ(r.err.rfind("threshold ", 0), 0u);
  ok({"equalize", f, "-o", path("e.pgm")});
  EXPECT_EQ(ok({"equalize", "-", "-o", "-"}, piped).out, read_all(path("e.pgm")));
  // Standard input redirected from the output is refused, as a named input would be.
  RunSpec self;
  self.stdin_file = path("e.pgm");
  fails(2, {"equalize", "-", "-o", path("e.pgm")}, self);
}

TEST_F(CliConventions, ThresholdInvert) {
  const Image img = image_test::pattern(11, 6, 1, 16, 1000);
  const std::string f = gray_file("g.pgm", img);
  EXPECT_EQ(ok({"threshold", f, "-o", path("inv.pgm"), "--value", "400", "--invert"}).out, "threshold 400\n");
  const Image out = levelhist::image::read_image(path("inv.pgm"));
  ASSERT_EQ(out.width, img.width);
  EXPECT_EQ(out.maxval, 1000u);
  for (std::uint32_t y = 0; y < img.height; ++y)
    for (std::uint32_t x = 0; x < img.width; ++x)
      EXPECT_EQ(out.at(x, y, 0), img.at(x, y, 0) > 400 ? 0u : 1000u) << x << "," << y;
  EXPECT_NE(ok({"threshold", "--help"}).out.find("--invert"), std::string::npos);
}

// ---- JPEG and TIFF through the commands ------------------------------------------------

TEST_F(CliConventions, JpegAndTiffFilesAreImagesLikeAnyOther) {
  if (!levelhist::image::tiff_supported() || !levelhist::image::jpeg_supported())
    GTEST_SKIP() << "this build lacks JPEG or TIFF support";
#if LEVELHIST_HAVE_TIFF && LEVELHIST_HAVE_JPEG
  const Image rgb16 = image_test::pattern(20, 10, 3, 16, 65535, 5);
  image_test::RawTiff raw;
  raw.img = &rgb16;
  raw.compression = COMPRESSION_LZW;
  const std::string tif = file("c.tif", image_test::raw_tiff(raw));
  Json j = parse_json(ok({"image", "--format", "json", tif}).out);
  EXPECT_EQ(j["bit_depth"].get<int>(), 16);
  for (std::uint32_t c = 0; c < 3; ++c) {
    std::vector<std::uint64_t> want(65536, 0);
    for (std::uint32_t y = 0; y < 10; ++y)
      for (std::uint32_t x = 0; x < 20; ++x) ++want[rgb16.at(x, y, c)];
    EXPECT_EQ(u64s(j["channels"][c]["counts"]), want) << c;
  }
  const Image gray = image_test::pattern(24, 16, 1, 8, 255, 3);
  image_test::RawJpeg rj;
  rj.img = &gray;
  const std::string jpeg_bytes = image_test::raw_jpeg(rj);
  const std::string jpg = file("g.jpg", jpeg_bytes);
  const Image decoded = image_test::libjpeg_decode(jpeg_bytes);
  std::vector<std::uint64_t> want(256, 0);
  for (std::uint8_t b : decoded.bytes) ++want[b];
  j = parse_json(ok({"image", "--format", "json", jpg}).out);
  EXPECT_EQ(u64s(j["channels"][0]["counts"]), want);
  // Outputs: TIFF keeps every sample; JPEG takes 8-bit images only.
  ok({"threshold", jpg, "-o", path("t.tif"), "--value", "100"});
  const Image t = levelhist::image::read_image(path("t.tif"));
  for (std::uint32_t y = 0; y < 16; ++y)
    for (std::uint32_t x = 0; x < 24; ++x) ASSERT_EQ(t.at(x, y, 0), decoded.at(x, y, 0) > 100 ? 255u : 0u);
  ok({"equalize", jpg, "-o", path("e.jpeg")});
  EXPECT_EQ(levelhist::image::read_image(path("e.jpeg")).width, 24u);
  const std::string gray16 = gray_file("g16.pgm", image_test::pattern(4, 4, 1, 16, 65535));
  Result r = fails(1, {"threshold", gray16, "-o", path("t16.jpg"), "--value", "3"});
  EXPECT_NE(r.err.find("holds 8-bit samples only"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("t16.jpg")));
  ok({"threshold", gray16, "-o", path("t16.tiff"), "--value", "3"});
#endif
}

// ---- --log plots ---------------------------------------------------------------------

// The heights of the bars of an SVG plot, in the order drawn.
std::vector<double> bar_heights(const std::string& svg_path) {
  const svg_check::Document d = svg_check::check(svg_check::read_file(svg_path));
  EXPECT_TRUE(d.ok()) << d.error;
  std::vector<double> heights;
  for (const svg_check::Element* e : d.all("rect", "bar")) heights.push_back(std::stod(e->attr("height")));
  return heights;
}

TEST_F(CliConventions, LogPlotsKeepSmallBarsVisibleNextToASpike) {
  // A photograph's black background: 100000 zeros, and 10 of each of 1..50.
  std::string bytes(100000, '\0');
  for (int v = 1; v <= 50; ++v) bytes += std::string(10, static_cast<char>(v));
  const std::string f = file("spike.u8", bytes);
  ok({"count", f, "--plot", path("lin.svg")});
  ok({"count", f, "--plot", path("log.svg"), "--log"});
  const std::vector<double> lin = bar_heights(path("lin.svg")), log = bar_heights(path("log.svg"));
  ASSERT_EQ(lin.size(), 51u);
  ASSERT_EQ(log.size(), 51u);
  // Linear: a bar of 10 is 1/10000 of the spike, under a pixel. Log from 0.5:
  // log(10 / 0.5) / log(100000 / 0.5) of it, about a quarter.
  EXPECT_LT(lin[1] / lin[0], 0.001);
  EXPECT_NEAR(log[1] / log[0], std::log(20.0) / std::log(200000.0), 0.01);
  EXPECT_NE(svg_check::read_file(path("log.svg")).find("count (log scale)"), std::string::npos);
  // The same for image --plot; --log without a plot is a usage error.
  const std::string gray = file("g.pgm", image_test::pnm_file(image_test::pattern(8, 8, 1, 8, 255), false));
  ok({"image", gray, "--plot", path("img.svg"), "--log"});
  EXPECT_NE(svg_check::read_file(path("img.svg")).find("(log scale)"), std::string::npos);
  fails(2, {"count", f, "--log"});
  fails(2, {"image", gray, "--log"});
}

// ---- --no-progress -------------------------------------------------------------------

// Whether this machine gives out pseudo-terminals (a container may not).
bool have_pty() {
  const int fd = posix_openpt(O_RDWR | O_NOCTTY);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// Runs the CLI with standard error on a pseudo-terminal (the progress bar is
// drawn only on a terminal) and standard input fed in pieces over about a
// second; returns what appeared on the terminal.
std::string terminal_stderr(const std::vector<std::string>& args, std::string* out_status = nullptr) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  EXPECT_GE(master, 0);
  if (master < 0) return "";
  EXPECT_EQ(grantpt(master), 0);
  EXPECT_EQ(unlockpt(master), 0);
  const int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  EXPECT_GE(slave, 0);
  int in[2];
  EXPECT_EQ(pipe2(in, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, slave, 2);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("LEVELHIST_", 0) != 0) env_strings.push_back(*e);
  env_strings.push_back("LEVELHIST_PROGRESS_BYTES=1");
  env_strings.push_back("LEVELHIST_CHUNK_BYTES=65536");
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = {cli_path()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(slave);
  std::thread feeder([fd = in[1]] {
    const std::string piece(65536, 'x');
    for (int i = 0; i < 40; ++i) {
      if (write(fd, piece.data(), piece.size()) != static_cast<ssize_t>(piece.size())) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    close(fd);
  });
  std::string seen;
  while (true) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 20000) <= 0) break;
    char buf[4096];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: the terminal's last writer closed it
    seen.append(buf, static_cast<std::size_t>(n));
  }
  feeder.join();
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  if (out_status) *out_status = std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return seen;
}

TEST_F(CliConventions, NoProgressKeepsTheTerminalQuiet) {
  if (!have_pty()) GTEST_SKIP() << "no pseudo-terminal to draw a progress bar on (posix_openpt failed)";
  std::string status;
  const std::string drawn = terminal_stderr({"count"}, &status);
  EXPECT_EQ(status, "0");
  EXPECT_NE(drawn.find("levelhist: "), std::string::npos) << "no progress bar drawn: " << drawn;
  EXPECT_NE(drawn.find(" read "), std::string::npos) << drawn;
  EXPECT_EQ(terminal_stderr({"count", "--no-progress"}, &status), "");
  EXPECT_EQ(status, "0");
  EXPECT_EQ(terminal_stderr({"text", "--no-progress"}, &status), "");
  EXPECT_EQ(terminal_stderr({"sort", "--no-progress", "-", "-o", "/dev/null"}, &status), "");
  EXPECT_EQ(status, "0");
  for (const char* command : {"count", "text", "sort"})
    EXPECT_NE(ok({command, "--help"}).out.find("--no-progress"), std::string::npos) << command;
}

}  // namespace
}  // namespace cli_test
