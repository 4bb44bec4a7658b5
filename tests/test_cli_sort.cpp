// `levelhist sort` and `levelhist count --sparse` end to end: the built CLI
// run on files, outputs checked against std::sort and std::map
// (sort_test_support.hpp), every error a single line with its exit status.
#include "cli_test_support.hpp"
#include "sort_test_support.hpp"

namespace cli_test {
namespace {

using levelhist::KeyType;
using levelhist::SampleType;

std::string as_string(const std::vector<unsigned char>& v) { return std::string(v.begin(), v.end()); }
std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class CliSort : public CliTest {};

TEST_F(CliSort, EveryTypeEqualsStdSortAndLeavesTheInput) {
  for (SampleType type : levelhist::test::kSortTypes)
    for (std::uint64_t n : {0, 1, 1000, 70001}) {
      const std::string t(levelhist::to_string(type));
      const auto cases = levelhist::test::sort_cases(type, n);
      for (std::size_t i : {std::size_t{0}, std::size_t{3}, cases.size() - 1}) {
        const std::string bytes = as_string(cases[i].bytes);
        const std::string in = file("in." + t, bytes), out = path("out." + t);
        for (const char* backend : {"auto", "cpu"}) {
          ok({"sort", "--type", t, in, "-o", out, "--backend", backend});
          EXPECT_EQ(read_file(out), as_string(levelhist::test::std_sorted(type, cases[i].bytes))) << cases[i].name;
          EXPECT_EQ(read_file(in), bytes) << "the input changed";
        }
      }
    }
}

TEST_F(CliSort, DefaultTypeStdinAndOverwritingAnOutput) {
  const std::string bytes = random_bytes(5000, 7);
  const std::string out = file("out", "old contents");
  RunSpec spec;
  spec.stdin_data = bytes;
  ok({"sort", "-", "--output", out}, spec);
  std::string want = bytes;
  std::sort(want.begin(), want.end(), [](char a, char b) { return static_cast<unsigned char>(a) < static_cast<unsigned char>(b); });
  EXPECT_EQ(read_file(out), want);
  std::vector<std::string> names;  // no temporary file (OUT.tmp-PID-N, core/file_io.hpp) left behind
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"out"});
}

TEST_F(CliSort, Errors) {
  const std::string in = file("in.u16", std::string("abc")), good = file("good.u16", std::string("abcd"));
  fails(1, {"sort", "--type", "u16", in, "-o", path("x")});                 // 3 bytes: not whole u16 samples
  EXPECT_FALSE(fs::exists(path("x")));
  fails(1, {"sort", path("missing"), "-o", path("x")});
  fails(1, {"sort", "--type", "u16", good, "-o", path("no/such/dir/x")});
  fails(2, {"sort", "--type", "u16", good, "-o", good});                     // the input itself
  fails(2, {"sort", "--type", "u16", good, "-o", (dir_ / "." / "good.u16").string()});
  fs::create_symlink(good, path("link"));
  fails(2, {"sort", "--type", "u16", good, "-o", path("link")});
  EXPECT_EQ(read_file(good), "abcd");
  fails(2, {"sort", "--type", "u32", good, "-o", path("x")});
  fails(2, {"sort", "--type", "f32", good, "-o", path("x")});
  fails(2, {"sort", "--type", "nope", good, "-o", path("x")});
  fails(2, {"sort", good});                                                  // no -o
  fails(2, {"sort", "-o", path("x")});                                       // no input
  fails(2, {"sort", good, good, "-o", path("x")});
  fails(2, {"sort", good, "-o", path("x"), "--backend", "gpu"});
  fails(2, {"sort", good, "-o", path("x"), "--bins", "4"});
  if (!levelhist::backend_available(levelhist::Backend::cuda)) fails(1, {"sort", good, "-o", path("x"), "--backend", "cuda"});
  EXPECT_FALSE(fs::exists(path("x")));
}

// ---- count --sparse -------------------------------------------------------------------

std::string key_text(KeyType type, std::uint64_t v) {
  return levelhist::key_is_signed(type) ? std::to_string(static_cast<std::int64_t>(v)) : std::to_string(v);
}

TEST_F(CliSort, SparseEveryFormatAndKeyType) {
  for (KeyType type : levelhist::kAllKeyTypes)
    for (const char* kind : {"few", "extremes"}) {
      const auto c = levelhist::test::key_case(type, kind, 3001);
      const auto want = levelhist::test::map_counts(type, c.bytes);
      const std::string t(levelhist::to_string(type));
      // Two files: their pairs are merged.
      const std::size_t half = c.bytes.size() / 2 / levelhist::key_size(type) * levelhist::key_size(type);
      const std::string a = file("a", as_string({c.bytes.begin(), c.bytes.begin() + half}));
      const std::string b = file("b", as_string({c.bytes.begin() + half, c.bytes.end()}));
      const std::vector<std::string> base = {"count", "--type", t, "--sparse", a, b, "--backend", "cpu"};
      auto with = [&](const char* format) {
        std::vector<std::string> v = base;
        v.insert(v.end(), {"--format", format});
        return v;
      };
      // csv
      std::vector<std::string> lines = lines_of(ok(with("csv")).out);
      ASSERT_EQ(lines.size(), want.size() + 1) << c.name;
      EXPECT_EQ(lines[0], "value,count");
      for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(lines[i + 1], key_text(type, want[i].value) + "," + std::to_string(want[i].count)) << c.name;
      // json
      const Json j = parse_json(ok(with("json")).out);
      EXPECT_EQ(j["type"].get<std::string>(), t);
      EXPECT_EQ(j["total"].get<std::uint64_t>(), c.n());
      EXPECT_EQ(j["distinct"].get<std::uint64_t>(), want.size());
      ASSERT_EQ(j["pairs"].size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        const Json& pair = j["pairs"][i];
        ASSERT_EQ(pair.size(), 2u);
        EXPECT_EQ(pair[0].dump(), key_text(type, want[i].value)) << c.name;
        EXPECT_EQ(pair[1].get<std::uint64_t>(), want[i].count) << c.name;
      }
      // table: one row per pair, then the totals
      const std::string table = ok(with("table")).out;
      lines = lines_of(table);
      ASSERT_EQ(lines.size(), want.size() + 2) << table;
      for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(lines[i].rfind(key_text(type, want[i].value) + " ", 0), 0u) << lines[i];
      EXPECT_NE(table.find("total     " + std::to_string(c.n())), std::string::npos) << table;
      // the default backend gives the same pairs
      std::vector<std::string> auto_backend = {"count", "--type", t, "--sparse", "--format", "csv", a, b};
      EXPECT_EQ(ok(auto_backend).out, ok(with("csv")).out);
    }
}

TEST_F(CliSort, SparseEmptyInput) {
  const Json j = parse_json(ok({"count", "--type", "u64", "--sparse", "--format", "json", file("e", "")}).out);
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(j["pairs"].empty());
  EXPECT_EQ(ok({"count", "--type", "i32", "--sparse", "--format", "csv", file("e", "")}).out, "value,count\n");
}

TEST_F(CliSort, SparseErrors) {
  const std::string f = file("k", std::string(12, '\1'));
  for (const char* t : {"u8", "i8", "u16", "i16", "f32", "f64", "bogus"}) fails(2, {"count", "--type", t, "--sparse", f});
  fails(2, {"count", "--sparse", f});                                  // no type
  fails(2, {"count", "--type", "u64", f});                             // u64 only with --sparse
  fails(2, {"count", "--type", "u32", "--sparse", "--bins", "4", f});
  fails(2, {"count", "--type", "u32", "--sparse", "--per-file", f});
  fails(2, {"count", "--type", "u32", "--sparse", "--strategy", "cpu_serial", f});
  fails(2, {"count", "--type", "u32", "--sparse", "--format", "xml", f});
  fails(1, {"count", "--type", "u64", "--sparse", f});                 // 12 bytes: not whole u64 keys
  fails(1, {"count", "--type", "u32", "--sparse", path("missing")});
  if (!levelhist::backend_available(levelhist::Backend::cuda))
    fails(1, {"count", "--type", "u32", "--sparse", "--backend", "cuda", f});
}

// --sparse draws no plot: --plot with it is refused, not ignored with exit 0
// and no plot written (found by fuzz_count).
TEST_F(CliSort, SparseRefusesPlot) {
  const std::string f = file("k", std::string(16, '\1'));
  for (const char* name : {"plot.svg", "plot.png", "plot.txt"}) {
    const std::string plot = path(name);
    const Result r = fails(2, {"count", "--type", "u32", "--sparse", "--plot", plot, f});
    EXPECT_NE(r.err.find("--plot cannot be combined with --sparse"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(plot));
  }
}

}  // namespace
}  // namespace cli_test
