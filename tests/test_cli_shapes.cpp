// End-to-end tests of the N-d and joint commands: `count --columns K` (the
// numpy.histogramdd example worked by hand, every output format, its errors)
// and `joint A B` (the joint histogram of two images and the mutual
// information, computed here from the pixels by the definition
// sum p(a,b) log2(p(a,b) / (p(a) p(b)))).
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace {

using namespace cli_test;

std::string floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::string pgm(std::uint32_t w, std::uint32_t h, const std::vector<std::uint8_t>& v) {
  return "P5 " + std::to_string(w) + " " + std::to_string(h) + " 255\n" + std::string(v.begin(), v.end());
}

class CliShapes : public CliTest {};

TEST_F(CliShapes, ColumnsIsNumpyHistogramdd) {
  // numpy.histogramdd(x[:4], bins=(2, 2), range=((0, 1), (0, 1))) -> [[1, 0], [1, 2]];
  // the last two points are outside (under/overflow, NaN) and counted apart.
  const float nan = std::nanf("");
  const std::string f = file("p.f32", floats({0.1f, 0.1f, 0.6f, 0.2f, 0.6f, 0.9f, 1.0f, 0.5f, -1, 2, nan, 0.5f}));
  const Result json = ok({"count", "--columns", "2", "--type", "f32", "--bins", "2", "--range", "0:1", "--numpy",
                          "--format", "json", f});
  EXPECT_NE(json.out.find("\"counts\": [[1, 0], [1, 2]]"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"outside\": 2"), std::string::npos) << json.out;
  const Result csv = ok({"count", "--columns", "2", "--type", "f32", "--edges", "0,0.5,1/0,1", "--format", "csv", f});
  EXPECT_EQ(csv.out, "bin0,bin1,count\n0,0,1\n1,0,2\n");  // half-open: the point (1.0, 0.5) is outside
  const Result table = ok({"count", "--columns", "2", "--type", "f32", "--bins", "2,1", "--range", "0:1,0:1", f});
  EXPECT_NE(table.out.find("[0.5, 1) x 0  2"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("outside  3"), std::string::npos) << table.out;
}

TEST_F(CliShapes, ColumnsOfBytesAndThreeAxes) {
  // u8 pairs, one bin per value: each distinct pair counted; 3 axes in json nest 3 deep.
  std::string pairs;
  for (int i = 0; i < 300; ++i) pairs += static_cast<char>(i % 3), pairs += static_cast<char>(250 + i % 2);
  const Result r = ok({"count", "--columns", "2", "--format", "csv", file("p.u8", pairs)});
  std::map<std::string, std::string> rows;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("bin0", 0) != 0 && line.substr(line.rfind(',') + 1) != "0") rows[line.substr(0, line.rfind(','))] = line.substr(line.rfind(',') + 1);
  EXPECT_EQ(rows, (std::map<std::string, std::string>{{"0,250", "50"}, {"0,251", "50"}, {"1,250", "50"},
                                                       {"1,251", "50"}, {"2,250", "50"}, {"2,251", "50"}}));
  const Result three = ok({"count", "--columns", "3", "--bins", "2", "--format", "json", file("t.u8", std::string(6, '\0'))});
  EXPECT_NE(three.out.find("\"counts\": [[[2, 0], [0, 0]], [[0, 0], [0, 0]]]"), std::string::npos) << three.out;
}

TEST_F(CliShapes, ColumnsErrors) {
  const std::string f = file("p.f32", floats({0.1f, 0.2f, 0.3f, 0.4f}));
  fails(1, {"count", "--columns", "5", "--type", "f32", "--bins", "2", "--range", "0:1", f});  // 2..4
  fails(2, {"count", "--columns", "2", "--type", "f32", "--bins", "2,2,2", "--range", "0:1", f});
  fails(2, {"count", "--columns", "2", "--type", "f32", "--bins", "2", "--range", "auto", f});
  fails(2, {"count", "--columns", "2", "--type", "f32", "--bins", "2", "--range", "0:1", "--per-file", f});
  fails(2, {"count", "--columns", "2", "--type", "f32", "--edges", "0,1", "--bins", "2", f});
  fails(2, {"count", "--columns", "2", "--type", "f32", f});  // floats need bins
  fails(1, {"count", "--columns", "2", "--type", "u16", f});  // 65539^2 cells
  fails(1, {"count", "--columns", "3", "--type", "f32", "--bins", "2", "--range", "0:1", f});  // 4 floats: no whole 3-float points
}

// The mutual information by its definition, from the pixel pairs.
double mutual_information(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  std::map<std::pair<int, int>, double> pab;
  std::map<int, double> pa, pb;
  const double n = static_cast<double>(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) pab[{a[i], b[i]}] += 1 / n, pa[a[i]] += 1 / n, pb[b[i]] += 1 / n;
  double mi = 0;
  for (auto [k, p] : pab) mi += p * std::log2(p / (pa[k.first] * pb[k.second]));
  return mi;
}

double json_number(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return NAN;
  return std::stod(json.substr(at + key.size() + 4));
}

TEST_F(CliShapes, JointHistogramAndMutualInformation) {
  std::mt19937 rng(3);
  const std::uint32_t w = 37, h = 23;
  std::vector<std::uint8_t> a(w * h), b(w * h), noise(w * h);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::uint8_t>(rng() % 16 * 16);
    b[i] = static_cast<std::uint8_t>(255 - a[i] / 2);  // a function of a
    noise[i] = static_cast<std::uint8_t>(rng());
  }
  const std::string fa = file("a.pgm", pgm(w, h, a)), fb = file("b.pgm", pgm(w, h, b)), fn = file("n.pgm", pgm(w, h, noise));
  const Result same = ok({"joint", fa, fb, "--format", "json"});
  EXPECT_NEAR(json_number(same.out, "mutual_information"), mutual_information(a, b), 1e-9);
  EXPECT_NEAR(json_number(same.out, "normalized_mutual_information"), 2.0, 1e-12);  // b determines a
  // Row i is A's bin i: the pixel count of (a, 255 - a / 2) sits in row a, column 255 - a / 2.
  std::size_t count_0 = std::count(a.begin(), a.end(), 0);
  const nlohmann::json doc = nlohmann::json::parse(same.out);
  EXPECT_EQ(doc["format_version"], 2);
  ASSERT_EQ(doc["counts"].size(), 256u);
  ASSERT_EQ(doc["counts"][0].size(), 256u);
  EXPECT_EQ(doc["counts"][0][255].get<std::uint64_t>(), count_0);
  EXPECT_EQ(doc["counts"][16][255 - 8].get<std::uint64_t>(),
            static_cast<std::uint64_t>(std::count(a.begin(), a.end(), 16)));
  const Result independent = ok({"joint", fa, fn, "--format", "json"});
  EXPECT_NEAR(json_number(independent.out, "mutual_information"), mutual_information(a, noise), 1e-9);
  const Result csv = ok({"joint", fa, fn, "--bins", "4", "--format", "csv"});
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 17);  // header + 4 x 4 cells
  // Two constant images: no information, the normalization undefined.
  const std::string c1 = file("c1.pgm", pgm(4, 4, std::vector<std::uint8_t>(16, 9)));
  const Result constant = ok({"joint", c1, c1, "--format", "json"});
  EXPECT_NE(constant.out.find("\"normalized_mutual_information\": null"), std::string::npos) << constant.out;
  EXPECT_EQ(json_number(constant.out, "mutual_information"), 0.0);
  EXPECT_NE(ok({"joint", c1, c1}).out.find("9  9  16"), std::string::npos);
}

TEST_F(CliShapes, JointErrors) {
  const std::string a = file("a.pgm", pgm(4, 4, std::vector<std::uint8_t>(16, 1)));
  const std::string small = file("s.pgm", pgm(4, 3, std::vector<std::uint8_t>(12, 1)));
  const std::string rgb = file("c.ppm", "P6 1 1 255\nabc");
  fails(2, {"joint", a});
  fails(2, {"joint", a, "-"});
  fails(1, {"joint", a, small});
  fails(1, {"joint", a, rgb});
  fails(1, {"joint", a, path("missing.pgm")});
  fails(1, {"joint", a, a, "--bins", "0"});
  fails(2, {"joint", a, a, "--format", "xml"});
}

}  // namespace
