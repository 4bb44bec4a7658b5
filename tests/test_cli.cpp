// End-to-end tests of the `levelhist` command-line tool: they run the built
// binary (<build>/levelhist, found next to this test binary's directory, or
// $LEVELHIST_CLI) with posix_spawn, feed its standard input, capture stdout,
// stderr and the exit status, and check every output format against
// histograms computed here independently.
#include "cli_test_support.hpp"

#include <gtest/gtest.h>

#include <regex>

#include <levelhist/cuda.hpp>

namespace {

using namespace cli_test;

// ---- help and version ------------------------------------------------------------

TEST_F(CliTest, HelpForTheToolAndEveryCommand) {
  const std::vector<std::vector<std::string>> calls = {
      {"--help"}, {"-h"}, {"help"}, {"help", "count"}, {"count", "--help"}, {"count", "-h"}, {"help", "text"},
      {"text", "--help"}, {"help", "list"}, {"list", "--help"}, {"list", "-h"}, {"help", "bench"}};
  for (const auto& args : calls) {
    Result r = ok(args);
    EXPECT_EQ(r.out.rfind("Usage: levelhist", 0), 0u) << describe(args, r);
  }
  std::string top = ok({"--help"}).out;
  for (const char* cmd : {"count", "text", "list", "bench", "--version"}) EXPECT_NE(top.find(cmd), std::string::npos) << cmd;
  std::string count = ok({"help", "count"}).out;
  EXPECT_EQ(count, ok({"count", "--help"}).out);
  for (const char* opt : {"--type", "--bins", "--range", "--edges", "--numpy", "--backend", "--strategy", "--threads",
                          "--format", "--per-file", "auto", "u8", "i8", "u16", "i16", "i32", "u32", "f32", "f64"})
    EXPECT_NE(count.find(opt), std::string::npos) << opt;
  std::string text = ok({"text", "--help"}).out;
  for (const char* opt : {"--fold-case", "--format", "--per-file", "a-d", "y-z"})
    EXPECT_NE(text.find(opt), std::string::npos) << opt;
  // Help wins over other arguments, even bad ones.
  EXPECT_EQ(ok({"count", "--bins", "0", "--help"}).out, count);
}

TEST_F(CliTest, Version) {
  Result r = ok({"--version"});
  EXPECT_EQ(r.out.rfind(std::string("levelhist ") + levelhist::version(), 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
}

// ---- count: formats ----------------------------------------------------------------

TEST_F(CliTest, CountCsvMatchesAnIndependentCount) {
  std::string bytes = random_bytes(100000, 1);
  std::string f = file("data.u8", bytes);
  Result r = ok({"count", "--format", "csv", f});
  CsvHistogram h = parse_csv(r.out);
  ASSERT_EQ(h.counts.size(), 256u);
  EXPECT_EQ(h.counts, byte_counts(bytes));
  for (std::size_t i = 0; i <= 256; ++i) EXPECT_EQ(h.edges[i], static_cast<double>(i));
  EXPECT_NE(r.out.find("\n0,0,1,"), std::string::npos);  // integers print as integers
}

TEST_F(CliTest, CountJsonHasEveryField) {
  std::string bytes = random_bytes(5000, 2);
  std::string f = file("data.u8", bytes);
  Result r = ok({"count", "--format", "json", f});
  Json j = parse_json(r.out);
  ASSERT_TRUE(j.is_object());
  for (const char* key : {"counts", "edges", "total", "underflow", "overflow", "nan", "type", "strategy", "bins", "files"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(u64s(j["counts"]), byte_counts(bytes));
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 256u);
  auto edges = doubles(j["edges"]);
  ASSERT_EQ(edges.size(), 257u);
  EXPECT_EQ(edges.front(), 0.0);
  EXPECT_EQ(edges.back(), 256.0);
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 5000u);
  EXPECT_EQ(j["underflow"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["nan"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["type"].get<std::string>(), "u8");
  EXPECT_NE(levelhist::find_strategy(j["strategy"].get<std::string>()), nullptr) << j["strategy"].get<std::string>();
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(j["files"][0].get<std::string>(), f);
}

TEST_F(CliTest, CountTableShowsNonEmptyBinsBarsAndTotals) {
  std::string bytes;
  for (int v : {10, 10, 10, 10, 200, 200, 7}) bytes += static_cast<char>(v);
  std::string f = file("t.u8", bytes);
  for (int columns : {80, 40, 200}) {
    RunSpec spec;
    spec.env = {"COLUMNS=" + std::to_string(columns)};
    Result r = ok({"count", f}, spec);
    auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 7u) << r.out;  // 3 bins + total, underflow, overflow, nan
    std::map<std::string, std::pair<std::uint64_t, std::size_t>> rows;  // label -> count, bar length
    for (std::size_t i = 0; i < 3; ++i) {
      std::istringstream in(lines[i]);
      std::string label, count, pct, bar;
      in >> label >> count >> pct >> bar;
      EXPECT_EQ(pct.back(), '%') << lines[i];
      EXPECT_EQ(bar.find_first_not_of('#'), std::string::npos) << lines[i];
      rows[label] = {std::stoull(count), bar.size()};
      EXPECT_LE(lines[i].size(), static_cast<std::size_t>(columns)) << lines[i];
    }
    EXPECT_EQ(rows["7"].first, 1u);
    EXPECT_EQ(rows["10"].first, 4u);
    EXPECT_EQ(rows["200"].first, 2u);
    EXPECT_GT(rows["10"].second, rows["200"].second);
    EXPECT_GT(rows["200"].second, rows["7"].second);
    EXPECT_GE(rows["7"].second, 1u);
    EXPECT_EQ(lines[3].substr(0, 5), "total");
    EXPECT_NE(lines[3].find(" 7"), std::string::npos);
    EXPECT_EQ(lines[4].substr(0, 9), "underflow");
    EXPECT_EQ(lines[5].substr(0, 8), "overflow");
    EXPECT_EQ(lines[6].substr(0, 3), "nan");
  }
}

// A width from the environment is bounded: COLUMNS=2000000000 once asked for a
// bar of two billion '#' a row (87 s and 18 GB before it failed).
TEST_F(CliTest, CountTableWidthIsAtMostAThousandColumns) {
  std::string bytes;
  for (int v = 0; v < 256; ++v) bytes += std::string(1 + v % 5, static_cast<char>(v));
  std::string f = file("wide.u8", bytes);
  for (const char* columns : {"2000000000", "99999999999999999999", "1000"}) {
    RunSpec spec;
    spec.env = {std::string("COLUMNS=") + columns};
    Result r = ok({"count", f}, spec);
    std::size_t longest = 0;
    for (const std::string& line : lines_of(r.out)) longest = std::max(longest, line.size());
    EXPECT_EQ(longest, 1000u) << "COLUMNS=" << columns;  // the largest bin's bar fills the width
  }
}

// ---- count: every sample type ----------------------------------------------------------

template <class T>
void check_type(CliTest& t, const std::string& type, const std::string& name) {
  (void)t;
  std::mt19937_64 rng(42);
  std::vector<T> v;
  std::vector<std::string> args = {"count", "--type", type, "--format", "csv"};
  std::vector<double> edges;
  constexpr bool per_value = sizeof(T) <= 2 && std::is_integral_v<T>;
  if constexpr (per_value) {
    for (int i = 0; i < 3000; ++i)
      v.push_back(static_cast<T>(std::numeric_limits<T>::min() + rng() % (1u << (8 * sizeof(T)))));
    v.push_back(std::numeric_limits<T>::min());
    v.push_back(std::numeric_limits<T>::max());
    double lo = static_cast<double>(std::numeric_limits<T>::min());
    for (std::size_t i = 0; i <= (std::size_t{1} << (8 * sizeof(T))); ++i) edges.push_back(lo + static_cast<double>(i));
  } else {
    // 10 bins over [0, 100): values from -20 to 120 to fill underflow and overflow.
    for (int i = 0; i < 3000; ++i) {
      long long x = static_cast<long long>(rng() % 141) - 20;
      if (std::is_unsigned_v<T> && x < 0) x = 150;  // u32: overflow instead
      v.push_back(static_cast<T>(x));
    }
    if constexpr (std::is_floating_point_v<T>) {
      v.push_back(static_cast<T>(99.999));
      v.push_back(std::numeric_limits<T>::quiet_NaN());
      v.push_back(std::numeric_limits<T>::infinity());
      v.push_back(-std::numeric_limits<T>::infinity());
    }
    args.insert(args.end(), {"--bins", "10", "--range", "0:100"});
    for (int i = 0; i <= 10; ++i) edges.push_back(10.0 * i);
  }
  std::string f = t.file(name, bytes_of(v));
  args.push_back(f);
  Result r = ok(args);
  CsvHistogram h = parse_csv(r.out);
  EXPECT_EQ(h.edges, edges) << type;
  Reference ref = reference(as_doubles(v), edges, false);
  EXPECT_EQ(h.counts, ref.counts) << type;

  args[4] = "json";
  Json j = parse_json(ok(args).out);
  EXPECT_EQ(j["type"].get<std::string>(), type);
  EXPECT_EQ(u64s(j["counts"]), ref.counts) << type;
  EXPECT_EQ(j["total"].get<std::uint64_t>(), v.size()) << type;
  EXPECT_EQ(j["underflow"].get<std::uint64_t>(), ref.underflow) << type;
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), ref.overflow) << type;
  EXPECT_EQ(j["nan"].get<std::uint64_t>(), ref.nan) << type;
}

TEST_F(CliTest, CountEverySampleType) {
  check_type<std::uint8_t>(*this, "u8", "a.u8");
  check_type<std::int8_t>(*this, "i8", "a.i8");
  check_type<std::uint16_t>(*this, "u16", "a.u16");
  check_type<std::int16_t>(*this, "i16", "a.i16");
  check_type<std::int32_t>(*this, "i32", "a.i32");
  check_type<std::uint32_t>(*this, "u32", "a.u32");
  check_type<float>(*this, "f32", "a.f32");
  check_type<double>(*this, "f64", "a.f64");
}

// ---- count: several inputs ---------------------------------------------------------------

TEST_F(CliTest, CountSeveralFilesEqualsTheirConcatenation) {
  std::string a = random_bytes(1000, 3), b = random_bytes(77, 4), c = random_bytes(4096, 5);
  std::string fa = file("a", a), fb = file("b", b), fc = file("c", c), fall = file("all", a + b + c);
  std::string together = ok({"count", "--format", "csv", fa, fb, fc}).out;
  EXPECT_EQ(together, ok({"count", "--format", "csv", fall}).out);
  EXPECT_EQ(parse_csv(together).counts, byte_counts(a + b + c));
  Json j = parse_json(ok({"count", "--format", "json", fa, fb, fc}).out);
  ASSERT_EQ(j["files"].size(), 3u);
  EXPECT_EQ(j["files"][1].get<std::string>(), fb);
  EXPECT_EQ(j["total"].get<std::uint64_t>(), a.size() + b.size() + c.size());
  // The same file twice counts twice, as cat would.
  EXPECT_EQ(parse_json(ok({"count", "--format", "json", fb, fb}).out)["total"].get<std::uint64_t>(), 2 * b.size());
}

TEST_F(CliTest, CountPerFile) {
  std::string a = random_bytes(500, 6), b = random_bytes(300, 7);
  std::string fa = file("first.bin", a), fb = file("second.bin", b);
  // csv: a file column, every bin of every file, then its underflow, overflow and nan rows
  Result csv = ok({"count", "--per-file", "--format", "csv", fa, fb});
  auto lines = lines_of(csv.out);
  ASSERT_EQ(lines.size(), 1 + 2 * (256u + 3));
  EXPECT_EQ(lines[0], "file,bin,lower,upper,count");
  EXPECT_EQ(lines[257], fa + ",underflow,-inf,0,0");
  EXPECT_EQ(lines[258], fa + ",overflow,256,inf,0");
  EXPECT_EQ(lines[259], fa + ",nan,,,0");
  EXPECT_EQ(lines.back(), fb + ",nan,,,0");
  std::vector<std::uint64_t> ca(256), cb(256);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i]);
    ASSERT_EQ(f.size(), 5u);
    if (f[1] == "underflow" || f[1] == "overflow" || f[1] == "nan") continue;
    (f[0] == fa ? ca : cb)[std::stoul(f[1])] = std::stoull(f[4]);
    EXPECT_TRUE(f[0] == fa || f[0] == fb) << lines[i];
  }
  EXPECT_EQ(ca, byte_counts(a));
  EXPECT_EQ(cb, byte_counts(b));
  // json: the sum, and one entry per file
  Json j = parse_json(ok({"count", "--per-file", "--format", "json", fa, fb}).out);
  EXPECT_EQ(u64s(j["counts"]), byte_counts(a + b));
  ASSERT_EQ(j["per_file"].size(), 2u);
  EXPECT_EQ(j["per_file"][0]["file"].get<std::string>(), fa);
  EXPECT_EQ(u64s(j["per_file"][0]["counts"]), byte_counts(a));
  EXPECT_EQ(j["per_file"][1]["total"].get<std::uint64_t>(), b.size());
  // table: one labelled block per file
  std::string table = ok({"count", "--per-file", fa, fb}).out;
  auto pa = table.find("==> " + fa + " <=="), pb = table.find("==> " + fb + " <==");
  ASSERT_NE(pa, std::string::npos) << table;
  ASSERT_NE(pb, std::string::npos) << table;
  EXPECT_LT(pa, pb);
  EXPECT_NE(table.find("total      500"), std::string::npos) << table;
  EXPECT_NE(table.find("total      300"), std::string::npos) << table;
}

TEST_F(CliTest, CountStandardInput) {
  std::string bytes = random_bytes(20000, 8);
  std::string f = file("in", bytes);
  std::string expected = ok({"count", "--format", "csv", f}).out;
  RunSpec pipe;
  pipe.stdin_data = bytes;
  EXPECT_EQ(ok({"count", "--format", "csv"}, pipe).out, expected);
  EXPECT_EQ(ok({"count", "--format", "csv", "-"}, pipe).out, expected);
  RunSpec redirect;
  redirect.stdin_file = f;
  EXPECT_EQ(ok({"count", "--format", "csv"}, redirect).out, expected);
  // "-" among files: stdin in its place
  std::string head = bytes.substr(0, 7000), tail = bytes.substr(7000);
  std::string fh = file("head", head);
  RunSpec rest;
  rest.stdin_data = tail;
  EXPECT_EQ(ok({"count", "--format", "csv", fh, "-"}, rest).out, expected);
  Json j = parse_json(ok({"count", "--format", "json", "--per-file", fh, "-"}, rest).out);
  EXPECT_EQ(j["per_file"][1]["file"].get<std::string>(), "-");
  EXPECT_EQ(j["per_file"][1]["total"].get<std::uint64_t>(), tail.size());
  EXPECT_EQ(j["files"][1].get<std::string>(), "-");
  // --per-file table labels standard input like head(1)
  EXPECT_NE(ok({"count", "--per-file", fh, "-"}, rest).out.find("==> standard input <=="), std::string::npos);
}

TEST_F(CliTest, CountEmptyInputIsAllZeros) {
  std::string f = file("empty", "");
  RunSpec none;
  none.stdin_data = "";
  for (const RunSpec& spec : {RunSpec{}, none}) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"count", "--format", "json", f}, {"count", "--format", "json"},
          {"count", "--format", "json", "--type", "f32", "--bins", "3", "--range", "0:1"},
          {"count", "--format", "json", "--type", "f64", "--range", "auto"},
          {"count", "--format", "json", "--type", "i32", "--range", "auto"}}) {
      Json j = parse_json(ok(args, spec).out);
      EXPECT_EQ(j["total"].get<std::uint64_t>(), 0u);
      for (auto c : u64s(j["counts"])) EXPECT_EQ(c, 0u);
      EXPECT_EQ(u64s(j["counts"]).size(), j["bins"].get<std::uint64_t>());
    }
  }
  CsvHistogram h = parse_csv(ok({"count", "--format", "csv", f}).out);
  EXPECT_EQ(h.counts, std::vector<std::uint64_t>(256, 0));
  std::string table = ok({"count", f}).out;
  EXPECT_NE(table.find("total      0"), std::string::npos) << table;
  // numpy's convention for an empty --range auto: [0, 1]
  Json j = parse_json(ok({"count", "--format", "json", "--type", "f32", "--bins", "4", "--range", "auto", f}).out);
  EXPECT_EQ(doubles(j["edges"]), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
}

// ---- count: binning options ------------------------------------------------------------

TEST_F(CliTest, CountRangeAutoInteger) {
  std::vector<std::int16_t> v = {-5, 7, 0, 0, 3, -5, 7, 7, 2};
  std::string f = file("v.i16", bytes_of(v));
  Json j = parse_json(ok({"count", "--type", "i16", "--range", "auto", "--format", "json", f}).out);
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 13u);  // one bin per value, -5..7
  std::vector<double> edges;
  for (int e = -5; e <= 8; ++e) edges.push_back(e);
  EXPECT_EQ(doubles(j["edges"]), edges);
  EXPECT_EQ(u64s(j["counts"]), reference(as_doubles(v), edges, false).counts);
  EXPECT_EQ(j["underflow"].get<std::uint64_t>() + j["overflow"].get<std::uint64_t>(), 0u);
  // With --bins: even bins over [min, max], max in the last bin (numpy).
  j = parse_json(ok({"count", "--type", "i16", "--range", "auto", "--bins", "4", "--format", "json", f}).out);
  EXPECT_EQ(doubles(j["edges"]), (std::vector<double>{-5, -2, 1, 4, 7}));
  EXPECT_TRUE(j["last_bin_inclusive"].get<bool>());
  EXPECT_EQ(u64s(j["counts"]), reference(as_doubles(v), {-5, -2, 1, 4, 7}, true).counts);
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), 0u);
  // A span of more than 65536 values: 256 bins over [min, max].
  std::vector<std::uint32_t> w = {100, 5000000, 2500000, 100, 4999999};
  std::string g = file("w.u32", bytes_of(w));
  j = parse_json(ok({"count", "--type", "u32", "--range", "auto", "--format", "json", g}).out);
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 256u);
  auto e = doubles(j["edges"]);
  EXPECT_EQ(e.front(), 100.0);
  EXPECT_EQ(e.back(), 5000000.0);
  EXPECT_EQ(u64s(j["counts"]), reference(as_doubles(w), e, true).counts);
  EXPECT_EQ(u64s(j["counts"]).back(), 2u);
  // One distinct value: one bin.
  std::string one = file("one.i32", bytes_of(std::vector<std::int32_t>{9, 9, 9}));
  j = parse_json(ok({"count", "--type", "i32", "--range", "auto", "--format", "json", one}).out);
  EXPECT_EQ(doubles(j["edges"]), (std::vector<double>{9, 10}));
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{3}));
}

TEST_F(CliTest, CountRangeAutoFloat) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v = {0.5f, -1.25f, 3.0f, nan, inf, -inf, 2.0f, 3.0f, -1.25f, nan, 0.0f};
  std::string f = file("v.f32", bytes_of(v));
  Json j = parse_json(ok({"count", "--type", "f32", "--bins", "5", "--range", "auto", "--format", "json", f}).out);
  auto e = doubles(j["edges"]);
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e.front(), -1.25);
  EXPECT_EQ(e.back(), 3.0);
  EXPECT_EQ(u64s(j["counts"]), reference(as_doubles(v), e, true).counts);
  EXPECT_EQ(u64s(j["counts"]).back(), 2u);  // both 3.0 in the last bin
  EXPECT_EQ(j["nan"].get<std::uint64_t>(), 2u);
  EXPECT_EQ(j["underflow"].get<std::uint64_t>(), 1u);  // -inf
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), 1u);   // +inf
  EXPECT_EQ(j["total"].get<std::uint64_t>(), v.size());
  // CSV edges round-trip exactly.
  CsvHistogram h = parse_csv(ok({"count", "--type", "f32", "--bins", "5", "--range", "auto", "--format", "csv", f}).out);
  EXPECT_EQ(h.edges, e);
  // Without --bins: 256.
  j = parse_json(ok({"count", "--type", "f32", "--range", "auto", "--format", "json", f}).out);
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 256u);
  // A single value v: numpy's [v - 0.5, v + 0.5].
  std::string one = file("one.f64", bytes_of(std::vector<double>{2.5, 2.5}));
  j = parse_json(ok({"count", "--type", "f64", "--bins", "2", "--range", "auto", "--format", "json", one}).out);
  EXPECT_EQ(doubles(j["edges"]), (std::vector<double>{2, 2.5, 3}));
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{0, 2}));
  // From a pipe (buffered in a temporary file for the second pass): the same result.
  RunSpec pipe;
  pipe.stdin_data = bytes_of(v);
  EXPECT_EQ(ok({"count", "--type", "f32", "--bins", "5", "--range", "auto", "--format", "csv"}, pipe).out,
            ok({"count", "--type", "f32", "--bins", "5", "--range", "auto", "--format", "csv", f}).out);
}

TEST_F(CliTest, CountEdgesAndNumpy) {
  std::vector<double> v = {-1, 0, 5, 9.999, 10, 50, 99.5, 100, 100, 101};
  std::string f = file("v.f64", bytes_of(v));
  const std::vector<double> edges = {0, 10, 100};
  Json j = parse_json(ok({"count", "--type", "f64", "--edges", "0,10,100", "--format", "json", f}).out);
  EXPECT_EQ(doubles(j["edges"]), edges);
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{3, 3}));
  EXPECT_EQ(j["underflow"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), 3u);  // 100, 100, 101
  EXPECT_FALSE(j["last_bin_inclusive"].get<bool>());
  j = parse_json(ok({"count", "--type", "f64", "--edges", "0,10,100", "--numpy", "--format", "json", f}).out);
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{3, 5}));  // 100 is in the last bin
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), 1u);
  EXPECT_TRUE(j["last_bin_inclusive"].get<bool>());
  EXPECT_EQ(u64s(j["counts"]), reference(v, edges, true).counts);
  // Even bins with --numpy.
  j = parse_json(ok({"count", "--type", "f64", "--bins", "4", "--range", "0:100", "--numpy", "--format", "json", f}).out);
  EXPECT_EQ(u64s(j["counts"]), reference(v, {0, 25, 50, 75, 100}, true).counts);
  // The table marks the closed last bin.
  std::string table = ok({"count", "--type", "f64", "--edges", "0,10,100", "--numpy", f}).out;
  EXPECT_NE(table.find("[10, 100]"), std::string::npos) << table;
  EXPECT_NE(table.find("[0, 10)"), std::string::npos) << table;
  // Non-integer edges print with every digit they need.
  Result csv = ok({"count", "--type", "f64", "--edges", "0.1,0.30000000000000004,1e300", "--format", "csv", f});
  EXPECT_NE(csv.out.find("0,0.1,0.30000000000000004,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",1e+300,"), std::string::npos) << csv.out;
}

TEST_F(CliTest, CountDefaultAndRangeOnlyBins) {
  std::vector<std::uint8_t> v = {0, 3, 3, 9, 10, 255};
  std::string f = file("v.u8", bytes_of(v));
  // --range LO:HI without --bins on an integer type: one bin per value.
  Json j = parse_json(ok({"count", "--range", "3:10", "--format", "json", f}).out);
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 7u);
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{2, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(j["underflow"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), 2u);
  // --bins without --range on an integer type: the type's whole range.
  j = parse_json(ok({"count", "--bins", "4", "--format", "json", f}).out);
  EXPECT_EQ(doubles(j["edges"]), (std::vector<double>{0, 64, 128, 192, 256}));
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{5, 0, 0, 1}));
  // i8: one bin per value from -128.
  std::string g = file("v.i8", bytes_of(std::vector<std::int8_t>{-128, -1, 127}));
  std::string table = ok({"count", "--type", "i8", g}).out;
  EXPECT_NE(table.find("-128 "), std::string::npos) << table;
  EXPECT_NE(table.find("127 "), std::string::npos) << table;
}

// ---- count: windows and chunks ------------------------------------------------------------

TEST_F(CliTest, CountExactAcrossWindowAndChunkBoundaries) {
  std::mt19937_64 rng(9);
  std::vector<double> v(3001);
  for (double& x : v) x = static_cast<double>(rng() % 1000) / 10.0;
  std::string bytes = bytes_of(v);
  std::string f = file("v.f64", bytes);
  const std::vector<std::string> args = {"count", "--type", "f64", "--bins", "37", "--range", "0:100", "--format", "csv"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = args;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  std::string expected = ok(with({f})).out;
  std::vector<double> edges = parse_csv(expected).edges;
  EXPECT_EQ(parse_csv(expected).counts, reference(v, edges, false).counts);
  // Mapped windows that end inside a sample (4100 = 512.5 samples), tiny ones, page-sized ones.
  for (const char* w : {"1", "7", "4096", "4100", "5000", "8191", "12345"}) {
    RunSpec spec;
    spec.env = {std::string("LEVELHIST_WINDOW_BYTES=") + w};
    EXPECT_EQ(ok(with({f}), spec).out, expected) << "window " << w;
    if (std::string(w) != "1") {
      EXPECT_EQ(ok(with({f, f}), spec).out, ok(with({f, f})).out) << "window " << w;
    }
  }
  // Read() chunks that end inside a sample, from a pipe.
  for (const char* c : {"1", "7", "13", "4096", "10000"}) {
    RunSpec spec;
    spec.env = {std::string("LEVELHIST_CHUNK_BYTES=") + c};
    spec.stdin_data = bytes;
    EXPECT_EQ(ok(args, spec).out, expected) << "chunk " << c;
  }
  // Standard input redirected from a file at an offset that is not sample-aligned:
  // every window boundary falls inside a sample.
  std::string padded = file("padded", "xyz" + bytes);
  int fd = open(padded.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  for (const char* w : {"4100", "4096", "1073741824"}) {
    ASSERT_EQ(lseek(fd, 3, SEEK_SET), 3);
    RunSpec spec;
    spec.env = {std::string("LEVELHIST_WINDOW_BYTES=") + w};
    spec.stdin_fd = fd;
    EXPECT_EQ(ok(args, spec).out, expected) << "offset 3, window " << w;
    EXPECT_EQ(lseek(fd, 0, SEEK_CUR), static_cast<off_t>(3 + bytes.size()));  // consumed, as a reader would
  }
  close(fd);
  // A bad knob is a usage error.
  RunSpec bad;
  bad.env = {"LEVELHIST_WINDOW_BYTES=0"};
  fails(2, with({f}), bad);
}

// ---- count: running options -------------------------------------------------------------

TEST_F(CliTest, CountThreadsAndStrategies) {
  std::string bytes = random_bytes(300000, 10);
  std::string f = file("d", bytes);
  std::string expected = ok({"count", "--format", "csv", f}).out;
  for (const char* t : {"0", "1", "3", "16"})
    EXPECT_EQ(ok({"count", "--format", "csv", "--threads", t, f}).out, expected) << t;
  EXPECT_EQ(ok({"count", "--format", "csv", "--backend", "cpu", f}).out, expected);
  EXPECT_EQ(ok({"count", "--format", "csv", "--strategy", "auto", f}).out, expected);
  for (const levelhist::Strategy* s : cli_test::library_strategies()) {
    if (!levelhist::backend_available(s->backend)) continue;
    levelhist::Binning b = levelhist::Binning::per_value(levelhist::SampleType::u8);
    if (!s->supports(levelhist::Problem{levelhist::SampleType::u8, &b, bytes.size()}, nullptr)) continue;
    Json j = parse_json(ok({"count", "--format", "json", "--strategy", s->name, f}).out);
    EXPECT_EQ(j["strategy"].get<std::string>(), s->name);
    EXPECT_EQ(u64s(j["counts"]), byte_counts(bytes)) << s->name;
  }
  Json j = parse_json(ok({"count", "--format", "json", "--backend", "cpu", f}).out);
  const levelhist::Strategy* s = levelhist::find_strategy(j["strategy"].get<std::string>());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->backend, levelhist::Backend::cpu);
}

TEST_F(CliTest, CountStrategiesThatCannotRunOrCannotCount) {
  std::string f = file("d", random_bytes(4096, 11));
  using levelhist::SampleType;
  for (const levelhist::Strategy* s : cli_test::library_strategies()) {
    if (!levelhist::backend_available(s->backend)) {
      fails(1, {"count", "--strategy", s->name, f});
      continue;
    }
    // Problems this strategy refuses, if any: each must be a clean input error.
    struct Case {
      SampleType type;
      std::vector<std::string> bins;
      levelhist::Binning binning;
    };
    std::vector<Case> cases = {
        {SampleType::u8, {}, levelhist::Binning::per_value(SampleType::u8)},
        {SampleType::u16, {}, levelhist::Binning::per_value(SampleType::u16)},
        {SampleType::u8, {"--bins", "7", "--range", "0:256"}, levelhist::Binning::even(7, 0, 256)},
        {SampleType::f32, {"--bins", "1000", "--range", "0:1"}, levelhist::Binning::even(1000, 0, 1)},
        {SampleType::f64, {"--edges", "0,1,10,100"}, levelhist::Binning::explicit_edges({0, 1, 10, 100})},
        {SampleType::i32, {"--bins", "100000", "--range", "0:1000000"}, levelhist::Binning::even(100000, 0, 1000000)},
    };
    for (const Case& c : cases) {
      std::vector<std::string> args = {"count", "--strategy", s->name, "--type", std::string(levelhist::to_string(c.type))};
      args.insert(args.end(), c.bins.begin(), c.bins.end());
      args.push_back(f);
      if (s->supports(levelhist::Problem{c.type, &c.binning, 4096 / levelhist::sample_size(c.type)}, nullptr)) ok(args);
      else fails(1, args);
    }
  }
}

TEST_F(CliTest, CountBackendCuda) {
  std::string f = file("d", random_bytes(100000, 12));
  if (!levelhist::backend_available(levelhist::Backend::cuda)) {
    Result r = fails(1, {"count", "--backend", "cuda", f});
    EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
    return;
  }
  Json j = parse_json(ok({"count", "--backend", "cuda", "--format", "json", f}).out);
  const levelhist::Strategy* s = levelhist::find_strategy(j["strategy"].get<std::string>());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->backend, levelhist::Backend::cuda);
  EXPECT_EQ(ok({"count", "--backend", "cuda", "--format", "csv", f}).out,
            ok({"count", "--backend", "cpu", "--format", "csv", f}).out);
}

// ---- text ---------------------------------------------------------------------------

TEST_F(CliTest, TextPmppPhrase) {
  // Figure 9.1 of PMPP, counted by hand: programming / massively / parallel / processors
  //   a-d: a, a, a a, c            = 5     e-h: g g, e, e, e        = 5
  //   i-l: i, i l, l l l           = 6     m-p: p o m m n, m, p, p o o = 10
  //   q-t: r r, s s, r, r s s r s  = 10    u-x: v = 1     y-z: y = 1
  const std::vector<std::uint64_t> expected = {5, 5, 6, 10, 10, 1, 1};
  std::string f = file("phrase.txt", letters_phrase());
  Json j = parse_json(ok({"text", "--format", "json", f}).out);
  EXPECT_EQ(u64s(j["counts"]), expected);
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 7u);
  EXPECT_EQ(j["other"].get<std::uint64_t>(), 3u);  // three spaces
  EXPECT_EQ(j["letters"].get<std::uint64_t>(), 38u);
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 41u);
  EXPECT_FALSE(j["fold_case"].get<bool>());
  ASSERT_EQ(j["labels"].size(), 7u);
  EXPECT_EQ(j["labels"][0].get<std::string>(), "a-d");
  EXPECT_EQ(j["labels"][6].get<std::string>(), "y-z");
  EXPECT_NE(levelhist::find_strategy(j["strategy"].get<std::string>()), nullptr);

  EXPECT_EQ(ok({"text", "--format", "csv", f}).out,
            "bin,letters,count\n0,a-d,5\n1,e-h,5\n2,i-l,6\n3,m-p,10\n4,q-t,10\n5,u-x,1\n6,y-z,1\nother,,3\n");
  std::string table = ok({"text", f}).out;
  auto lines = lines_of(table);
  ASSERT_EQ(lines.size(), 10u) << table;
  const char* labels[] = {"a-d", "e-h", "i-l", "m-p", "q-t", "u-x", "y-z"};
  for (int i = 0; i < 7; ++i) {
    std::istringstream in(lines[static_cast<std::size_t>(i)]);
    std::string label, count;
    in >> label >> count;
    EXPECT_EQ(label, labels[i]);
    EXPECT_EQ(std::stoull(count), expected[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(lines[7], "letters  38");
  EXPECT_EQ(lines[8], "other    3");
  EXPECT_EQ(lines[9], "total    41");
  // Standard input, "-", and echo's newline (one more "other").
  RunSpec spec;
  spec.stdin_data = letters_phrase() + "\n";
  j = parse_json(ok({"text", "--format", "json"}, spec).out);
  EXPECT_EQ(u64s(j["counts"]), expected);
  EXPECT_EQ(j["other"].get<std::uint64_t>(), 4u);
  EXPECT_EQ(ok({"text", "--format", "json", "-"}, spec).out, ok({"text", "--format", "json"}, spec).out);
}

TEST_F(CliTest, TextCaseNonAsciiAndFolding) {
  std::string f = file("t.txt", "Programming MASSIVELY \xc3\xa9t\xc3\xa9 {|}~ `@ AZaz");
  Json j = parse_json(ok({"text", "--format", "json", f}).out);
  // 40 bytes. Lowercase only: "rogramming" -> a-d 1, e-h 2, i-l 1, m-p 4, q-t 2; the t of
  // "\xc3\xa9t\xc3\xa9" -> q-t; "az" -> a-d, y-z. The bytes of 'é' (0xc3 0xa9) are other.
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{2, 2, 1, 4, 3, 0, 1}));
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 40u);
  EXPECT_EQ(j["other"].get<std::uint64_t>(), 40u - 13u);
  j = parse_json(ok({"text", "--fold-case", "--format", "json", f}).out);
  EXPECT_TRUE(j["fold_case"].get<bool>());
  // + P (m-p); M A S S I V E L Y (m-p, a-d, q-t x2, i-l x2, u-x, e-h, y-z); A Z
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{4, 3, 3, 6, 5, 1, 3}));
  EXPECT_EQ(j["other"].get<std::uint64_t>(), 40u - 25u);
}

TEST_F(CliTest, TextSeveralFilesAndPerFile) {
  std::string a = file("a.txt", "abcd"), b = file("b.txt", "zzz!");
  Json j = parse_json(ok({"text", "--format", "json", a, b}).out);
  EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{4, 0, 0, 0, 0, 0, 3}));
  EXPECT_EQ(j["other"].get<std::uint64_t>(), 1u);
  j = parse_json(ok({"text", "--format", "json", "--per-file", a, b}).out);
  ASSERT_EQ(j["per_file"].size(), 2u);
  EXPECT_EQ(u64s(j["per_file"][0]["counts"]), (std::vector<std::uint64_t>{4, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(j["per_file"][1]["other"].get<std::uint64_t>(), 1u);
  std::string csv = ok({"text", "--format", "csv", "--per-file", a, b}).out;
  EXPECT_EQ(lines_of(csv).size(), 17u);  // 7 bins and 'other' per file
  EXPECT_EQ(lines_of(csv)[0], "file,bin,letters,count");
  EXPECT_NE(csv.find(b + ",other,,1\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(b + ",6,y-z,3\n"), std::string::npos) << csv;
  std::string table = ok({"text", "--per-file", a, b}).out;
  EXPECT_NE(table.find("==> " + a + " <=="), std::string::npos);
  // Empty text: zeros.
  j = parse_json(ok({"text", "--format", "json", file("e", "")}).out);
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 0u);
}

TEST_F(CliTest, TextLibraryHelper) {
  namespace text = levelhist::text;
  levelhist::Binning b = text::letter_binning();
  EXPECT_EQ(b.edge_values(), (std::vector<double>{97, 101, 105, 109, 113, 117, 121, 123}));
  for (unsigned c = 0; c < 256; ++c) {
    int expected = (c >= 'a' && c <= 'z') ? static_cast<int>(c - 'a') / 4 : -1;
    EXPECT_EQ(text::letter_bin(static_cast<unsigned char>(c)), expected) << c;
    int folded = (c >= 'A' && c <= 'Z') ? static_cast<int>(c - 'A') / 4 : expected;
    EXPECT_EQ(text::letter_bin(static_cast<unsigned char>(c), true), folded) << c;
  }
  EXPECT_EQ(text::letter_bin_label(0), "a-d");
  EXPECT_EQ(text::letter_bin_label(6), "y-z");
  EXPECT_EQ(text::letter_bin_first(6), 'y');
  EXPECT_EQ(text::letter_bin_last(6), 'z');
  EXPECT_EQ(text::letter_bin_last(1), 'h');
  levelhist::Histogram h = text::letter_histogram(letters_phrase());
  EXPECT_EQ(std::vector<std::uint64_t>(h.counts().begin(), h.counts().end()),
            (std::vector<std::uint64_t>{5, 5, 6, 10, 10, 1, 1}));
  EXPECT_EQ(text::other(h), 3u);
  // Every byte value once: 26 letters; folding adds 26 more.
  std::string all(256, '\0');
  for (unsigned c = 0; c < 256; ++c) all[c] = static_cast<char>(c);
  h = text::letter_histogram(all);
  EXPECT_EQ(std::vector<std::uint64_t>(h.counts().begin(), h.counts().end()),
            (std::vector<std::uint64_t>{4, 4, 4, 4, 4, 4, 2}));
  EXPECT_EQ(h.underflow(), 97u);
  EXPECT_EQ(h.overflow(), 256u - 123u);
  h = text::letter_histogram(all, true);
  EXPECT_EQ(std::vector<std::uint64_t>(h.counts().begin(), h.counts().end()),
            (std::vector<std::uint64_t>{8, 8, 8, 8, 8, 8, 4}));
  EXPECT_EQ(text::other(h), 256u - 52u);
  EXPECT_THROW(text::letters_from_bytes(levelhist::Histogram(text::letter_binning())), levelhist::Error);
}

TEST_F(CliTest, TextHistogramExample) {
  RunSpec spec;
  spec.program = (fs::path(cli_path()).parent_path() / "example_text_histogram").string();
  if (!fs::exists(spec.program)) GTEST_SKIP() << "not built: " << spec.program;
  spec.stdin_data = letters_phrase() + "\n";
  EXPECT_EQ(ok({}, spec).out, "a-d 5\ne-h 5\ni-l 6\nm-p 10\nq-t 10\nu-x 1\ny-z 1\nother 4\n");
  spec.stdin_data.reset();
  EXPECT_EQ(ok({"--fold-case", file("p", "PROGRAMMING")}, spec).out,
            "a-d 1\ne-h 2\ni-l 1\nm-p 5\nq-t 2\nu-x 0\ny-z 0\nother 0\n");
}

// ---- list -----------------------------------------------------------------------------

TEST_F(CliTest, ListEveryStrategy) {
  const auto registry = cli_test::library_strategies();
  std::string table = ok({"list"}).out;
  for (const levelhist::Strategy* s : registry) {
    EXPECT_NE(table.find(s->name), std::string::npos) << s->name;
    EXPECT_NE(table.find(s->summary), std::string::npos) << s->name;
  }
  auto csv = lines_of(ok({"list", "--format", "csv"}).out);
  ASSERT_EQ(csv.size(), registry.size() + 1);
  EXPECT_EQ(csv[0], "name,backend,available,reason,summary,source");
  Json j = parse_json(ok({"list", "--format", "json"}).out);
  const auto& rows = j["strategies"];
  ASSERT_EQ(rows.size(), registry.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const levelhist::Strategy* s = registry[i];
    EXPECT_EQ(rows[i]["name"].get<std::string>(), s->name);
    EXPECT_EQ(rows[i]["backend"].get<std::string>(), levelhist::to_string(s->backend));
    EXPECT_EQ(rows[i]["summary"].get<std::string>(), s->summary);
    EXPECT_EQ(rows[i]["source"].get<std::string>(), s->source);
    std::string why;
    bool available = levelhist::backend_available(s->backend, &why);
    EXPECT_EQ(rows[i]["available"].get<bool>(), available);
    if (!available) {
      EXPECT_EQ(rows[i]["reason"].get<std::string>(), why);
    }
    EXPECT_EQ(csv[i + 1].rfind(std::string(s->name) + "," + std::string(levelhist::to_string(s->backend)) + "," +
                                   (available ? "yes" : "no") + ",", 0),
              0u)
        << csv[i + 1];
  }
  EXPECT_EQ(j["built_with_cuda"].get<bool>(), levelhist::built_with_cuda());
}

// The works docs/REFERENCES.md lists, by the keys of its "### `key`" headings.
std::vector<std::string> reference_keys() {
  std::ifstream in(std::string(LEVELHIST_SOURCE_DIR) + "/docs/REFERENCES.md");
  std::vector<std::string> keys;
  for (std::string line; std::getline(in, line);)
    if (line.size() > 6 && line.rfind("### `", 0) == 0 && line.back() == '`')
      keys.push_back(line.substr(5, line.size() - 6));
  return keys;
}

// What `list` prints as each strategy's source is something a user can look
// up: a work of docs/REFERENCES.md by its key, or (levelhist's own kernels) a
// document of this tree; never a team-internal file name or an issue number.
TEST_F(CliTest, ListCitesReferencesAReaderCanFollow) {
  const std::regex internal_document("[0-9]{3}_[0-9a-f]{16}");
  const std::regex issue_number("[Ii]ssues? #?[0-9]");
  for (const char* format : {"table", "csv", "json"}) {
    const std::string out = ok({"list", "--format", format}).out;
    EXPECT_FALSE(std::regex_search(out, internal_document)) << format << ":\n" << out;
    EXPECT_FALSE(std::regex_search(out, issue_number)) << format << ":\n" << out;
  }
  const std::vector<std::string> keys = reference_keys();
  ASSERT_GE(keys.size(), 8u) << "docs/REFERENCES.md lists too few works";
  for (const std::string key : {"Wilt part 1", "Wilt part 2", "PMPP ch. 9", "TRISH", "CUB"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  Json j = parse_json(ok({"list", "--format", "json"}).out);
  for (const Json& row : j["strategies"]) {
    const std::string source = row["source"].get<std::string>();
    bool cited = std::any_of(keys.begin(), keys.end(),
                             [&](const std::string& key) { return source.find(key) != std::string::npos; });
    if (const std::size_t doc = source.find("docs/"); !cited && doc != std::string::npos) {
      const std::size_t end = source.find(".md", doc);
      cited = end != std::string::npos &&
              fs::exists(fs::path(LEVELHIST_SOURCE_DIR) / source.substr(doc, end + 3 - doc));
    }
    EXPECT_TRUE(cited) << row["name"].get<std::string>() << ": " << source;
  }
}

// ---- errors ----------------------------------------------------------------------------

// The GPU benchmark runners where there is no GPU (or no CUDA backend): one
// line naming the runner and why, exit 1, nothing on stdout.
TEST_F(CliTest, GpuBenchRunnersWithoutAGpuExitOne) {
  if (levelhist::cuda::device_count() > 0) GTEST_SKIP() << "a CUDA GPU is present: the runners would run";
  for (const std::string runner : {"--general", "--sort"}) {
    const Result r = run_cli({"bench", runner});
    EXPECT_EQ(r.status, 1) << describe({"bench", runner}, r);
    EXPECT_EQ(r.out, "") << describe({"bench", runner}, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe({"bench", runner}, r);
    EXPECT_EQ(r.err.rfind("levelhist: bench " + runner, 0), 0u) << describe({"bench", runner}, r);
    EXPECT_NE(r.err.find("; "), std::string::npos) << "no fix: " << describe({"bench", runner}, r);
  }
}

// The GPU runners' own name lists (--general --cases, --shapes --sections)
// are checked before anything runs, with a GPU or without: one line, exit 2.
TEST_F(CliTest, GpuBenchRunnersRefuseUnknownNames) {
#if !LEVELHIST_HAVE_CUDA
  GTEST_SKIP() << "this build has no GPU benchmark runners";
#else
  const std::vector<std::vector<std::string>> cases = {{"bench", "--shapes", "--sections", "joint,nope"},
                                                       {"bench", "--shapes", "--sections"},
                                                       {"bench", "--general", "--cases=u16_4096,nope"}};
  for (const std::vector<std::string>& args : cases) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.status, 2) << describe(args, r);
    EXPECT_EQ(r.out, "") << describe(args, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(args, r);
    const bool named = r.err.find("'nope'") != std::string::npos || r.err.find("needs a list") != std::string::npos;
    EXPECT_TRUE(named) << describe(args, r);
  }
#endif
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  std::string f = file("d", "abcd");
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"frobnicate"},
      {"--frob"},
      {"count", "--frob", f},
      {"count", "-x", f},
      {"count", "--type", "u64", f},
      {"count", "--type", "U8", f},
      {"count", "--format", "xml", f},
      {"count", "--strategy", "no_such_strategy", f},
      {"count", "--backend", "gpu", f},
      {"count", "--bins"},
      {"count", "--bins", "--range", "0:1", f},
      {"count", f, "--type"},
      {"count", "--edges", "0,1,2", "--bins", "2", f},
      {"count", "--edges", "0,1", "--range", "0:1", f},
      {"count", "--type", "f32", f},
      {"count", "--type", "i32", f},
      {"count", "--type", "f64", "--bins", "10", f},
      {"count", "--type", "f32", "--range", "0:1", f},
      {"count", "--range", "0.5:10", f},
      {"count", "--numpy=yes", f},
      {"count", "-", "-"},
      {"text", "--type", "u8", f},
      {"text", "--bins", "3", f},
      {"text", "--format", "yaml", f},
      {"list", "extra"},
      {"list", "--type", "u8"},
      {"help", "frob"},
      {"help", "count", "text"},
  };
  for (const auto& args : cases) fails(2, args);
  // A strategy on the wrong backend is a conflict.
  for (const levelhist::Strategy* s : cli_test::library_strategies())
    fails(2, {"count", "--strategy", s->name, "--backend", s->backend == levelhist::Backend::cpu ? "cuda" : "cpu", f});
}

TEST_F(CliTest, InputErrorsExitOne) {
  std::string f = file("d", "abcdefg");  // 7 bytes
  std::string dir = path("subdir");
  fs::create_directory(dir);
  const std::vector<std::vector<std::string>> cases = {
      {"count", path("missing")},
      {"count", f, path("missing")},
      {"count", dir},
      {"count", f + "/child"},
      {"count", "--type", "u16", f},
      {"count", "--type", "f64", "--bins", "2", "--range", "0:1", f},
      {"text", path("missing")},
      {"text", dir},
  };
  for (const auto& args : cases) fails(1, args);
  // The message names the leftover bytes.
  Result r = fails(1, {"count", "--type", "i32", "--bins", "4", f});
  EXPECT_NE(r.err.find("3 bytes left over"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
  RunSpec ragged;
  ragged.stdin_data = "abcde";
  r = fails(1, {"count", "--type", "u16"}, ragged);
  EXPECT_NE(r.err.find("standard input"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 byte left over"), std::string::npos) << r.err;
  fails(1, {"count", "--type", "f32", "--bins", "3", "--range", "auto"}, ragged);  // through the spill
  // Nothing on stdout even though the first file was fine and counted.
  fails(1, {"count", "--type", "u16", file("even", "abcd"), f});
  fails(1, {"count", "--per-file", "--type", "u16", file("even2", "abcd"), f});
  // Unreadable (root reads everything: skip that part).
  if (geteuid() != 0) {
    std::string locked = file("locked", "abcd");
    fs::permissions(locked, fs::perms::none);
    r = fails(1, {"count", locked});
    EXPECT_NE(r.err.find("ermission"), std::string::npos) << r.err;
  }
  r = fails(1, {"count", path("missing")});
  EXPECT_NE(r.err.find("No such file"), std::string::npos) << r.err;
  r = fails(1, {"count", dir});
  EXPECT_NE(r.err.find("directory"), std::string::npos) << r.err;
}

TEST_F(CliTest, BadBinOptionsExitOne) {
  std::string f = file("d", "abcdefgh");
  const std::vector<std::string> bad_bins = {"0",   "-3",   "10x",  "",   "1e3", "99999999999999999999",
                                             "268435457", " 5", "+5", "0x10", "nan", "4.0"};
  for (const auto& b : bad_bins) fails(1, {"count", "--bins", b, "--range", "0:1", f});
  const std::vector<std::string> bad_ranges = {"5:1",   "1:1",  "nan:1", "0:nan", "0:abc", "0:1x", "0",   "inf:1",
                                               "0:inf", "0:1:2", ":1",   "0:",    "",      "-1e400:0", "Auto",
                                               "-1.7e308:1.7e308"};
  for (const auto& r : bad_ranges) fails(1, {"count", "--bins", "4", "--range", r, f});
  const std::vector<std::string> bad_edges = {"3,2", "1,1", "0,nan", "0,1x", "1", "", "0,,1", ",1", "0,1,", "0,inf", "a,b",
                                              "0,2,1"};
  for (const auto& e : bad_edges) fails(1, {"count", "--edges", e, f});
  for (const auto& t : std::vector<std::string>{"abc", "-1", "99999999", "", "2x"}) fails(1, {"count", "--threads", t, f});
  // Messages say what and how.
  Result r = fails(1, {"count", "--bins", "10x", "--range", "0:1", f});
  EXPECT_NE(r.err.find("10x"), std::string::npos) << r.err;
  r = fails(1, {"count", "--bins", "4", "--range", "5:1", f});
  EXPECT_NE(r.err.find("reversed"), std::string::npos) << r.err;
  // All-NaN data with --range auto.
  std::string nans = file("nan.f32", bytes_of(std::vector<float>(5, std::numeric_limits<float>::quiet_NaN())));
  r = fails(1, {"count", "--type", "f32", "--range", "auto", nans});
  EXPECT_NE(r.err.find("5 NaN"), std::string::npos) << r.err;
  // Usage errors are reported before bad values.
  fails(2, {"count", "--bins", "0", "--format", "xml", f});
  // The backend without a GPU.
  if (!levelhist::backend_available(levelhist::Backend::cuda)) fails(1, {"text", "--backend", "cuda", f});
}

// ---- output plumbing ------------------------------------------------------------------

TEST_F(CliTest, QuietWhenTheReaderGoesAway) {
  std::string f = file("d.u16", random_bytes(1 << 20, 13));
  RunSpec spec;
  spec.close_stdout_early = true;
  Result r = run_cli({"count", "--type", "u16", "--format", "csv", f}, spec);  // ~1 MB of output
  EXPECT_EQ(r.err, "") << describe({}, r);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.status, 0);
}

TEST_F(CliTest, WriteErrorIsOneLine) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  std::string f = file("d", "abcd");
  RunSpec spec;
  spec.stdout_file = "/dev/full";
  Result r = run_cli({"count", f}, spec);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("levelhist: ", 0), 0u) << r.err;
}

TEST_F(CliTest, NoProgressWhenStderrIsNotATerminal) {
  std::string f = file("d", random_bytes(1 << 20, 14));
  RunSpec spec;
  spec.env = {"LEVELHIST_PROGRESS_BYTES=1", "LEVELHIST_WINDOW_BYTES=65536"};
  ok({"count", f}, spec);  // ok() checks that stderr is empty
}

TEST_F(CliTest, InputFilesAreNeverModified) {
  std::string bytes = random_bytes(10000, 15);
  std::string f = file("keep", bytes);
  auto before = fs::last_write_time(f);
  ok({"count", f});
  ok({"count", "--range", "auto", "--per-file", "--format", "json", f});
  ok({"text", f});
  std::ifstream in(f, std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, bytes);
  EXPECT_EQ(fs::last_write_time(f), before);
}

TEST_F(CliTest, FileNamesInJsonAndMessagesAreEscaped) {
  std::string f = file("we\"ird\\na,me", "ab");
  Json j = parse_json(ok({"count", "--format", "json", f}).out);
  EXPECT_EQ(j["files"][0].get<std::string>(), f);
  std::string csv = ok({"count", "--per-file", "--format", "csv", f}).out;
  EXPECT_NE(csv.find("\"" + path("we\"\"ird\\na,me") + "\",97,97,98,1"), std::string::npos) << csv;
  // A newline in a name must not break the one-line error.
  fails(1, {"count", path("no\nsuch")});
}

// ---- count: interleaved pixels and weights ----------------------------------------------

TEST_F(CliTest, CountChannelsOfPixels) {
  // Three RGBA pixels.
  const std::vector<std::uint8_t> px = {1, 2, 3, 4, 1, 5, 3, 4, 9, 2, 3, 200};
  std::string f = file("img.rgba", bytes_of(px));
  Json j = parse_json(ok({"count", "--channels", "4", "--active", "0,1,3", "--format", "json", f}).out);
  EXPECT_EQ(j["pixel_channels"].get<std::uint64_t>(), 4u);
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 256u);
  const Json& ch = j["channels"];
  ASSERT_EQ(ch.size(), 3u);
  const std::uint64_t want[3][3] = {{0, 1, 9}, {1, 2, 5}, {3, 4, 200}};  // channel, value seen twice, value seen once
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(ch[k]["channel"].get<std::uint64_t>(), want[k][0]);
    std::vector<std::uint64_t> counts = u64s(ch[k]["counts"]);
    ASSERT_EQ(counts.size(), 256u);
    EXPECT_EQ(counts[want[k][1]], 2u);
    EXPECT_EQ(counts[want[k][2]], 1u);
    EXPECT_EQ(ch[k]["total"].get<std::uint64_t>(), 3u);
    EXPECT_EQ(ch[k]["underflow"].get<std::uint64_t>() + ch[k]["overflow"].get<std::uint64_t>() + ch[k]["nan"].get<std::uint64_t>(), 0u);
  }
  // CSV: a channel column; one channel given alone.
  std::string csv = ok({"count", "--channels", "4", "--active", "2", "--format", "csv", f}).out;
  std::vector<std::string> lines = lines_of(csv);
  ASSERT_EQ(lines.size(), 260u);
  EXPECT_EQ(lines[0], "channel,bin,lower,upper,count");
  EXPECT_EQ(lines[1 + 3], "2,3,3,4,3");
  EXPECT_EQ(std::vector<std::string>(lines.end() - 3, lines.end()),
            (std::vector<std::string>{"2,underflow,-inf,0,0", "2,overflow,256,inf,0", "2,nan,,,0"}));
  // The table: one block per channel; all channels by default.
  std::string table = ok({"count", "--channels", "4", f}).out;
  for (const char* head : {"==> channel 0 <==", "==> channel 1 <==", "==> channel 2 <==", "==> channel 3 <=="})
    EXPECT_NE(table.find(head), std::string::npos) << table;
  // --channels 1 is the plain histogram, as one channel.
  j = parse_json(ok({"count", "--channels", "1", "--format", "json", f}).out);
  EXPECT_EQ(j["channels"].size(), 1u);
  EXPECT_EQ(u64s(j["channels"][0]["counts"]), byte_counts(bytes_of(px)));
}

TEST_F(CliTest, CountChannelsRangeAutoAndTypes) {
  // Two u16 channels; channel 1 holds 60000 everywhere. --range auto over the
  // active channel only gives [10, 30].
  const std::vector<std::uint16_t> v = {10, 60000, 20, 60000, 30, 60000};
  std::string f = file("two.u16", bytes_of(v));
  Json j = parse_json(
      ok({"count", "--type", "u16", "--channels", "2", "--active", "0", "--bins", "2", "--range", "auto", "--format",
          "json", f}).out);
  EXPECT_EQ(doubles(j["edges"]), (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(u64s(j["channels"][0]["counts"]), (std::vector<std::uint64_t>{1, 2}));
  // f32 pixels with NaN and infinities in their own counters.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::string g = file("px.f32", bytes_of(std::vector<float>{0.25f, nan, -inf, 0.75f, inf, 0.5f}));
  j = parse_json(ok({"count", "--type", "f32", "--channels", "2", "--bins", "2", "--range", "0:1", "--format", "json", g}).out);
  const Json& ch = j["channels"];
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(u64s(ch[0]["counts"]), (std::vector<std::uint64_t>{1, 0}));
  EXPECT_EQ(ch[0]["underflow"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(ch[0]["overflow"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(u64s(ch[1]["counts"]), (std::vector<std::uint64_t>{0, 2}));
  EXPECT_EQ(ch[1]["nan"].get<std::uint64_t>(), 1u);
}

TEST_F(CliTest, CountChannelsErrors) {
  std::string f = file("img", std::string(12, 'a'));
  std::string odd = file("odd", std::string(13, 'a'));
  Result r = fails(1, {"count", "--channels", "3", odd});
  EXPECT_NE(r.err.find("3-channel u8 pixel"), std::string::npos) << r.err;
  fails(2, {"count", "--active", "0", f});                        // --active needs --channels
  fails(2, {"count", "--channels", "2", "--per-file", f});
  fails(1, {"count", "--channels", "5", f});                      // 1..4
  fails(1, {"count", "--channels", "0", f});
  fails(1, {"count", "--channels", "4", "--active", "4", f});     // beyond the channels
  fails(1, {"count", "--channels", "4", "--active", "1,1", f});   // twice
  fails(1, {"count", "--channels", "4", "--active", "1,,2", f});
  fails(1, {"count", "--channels", "4", "--active", "x", f});
  // A strategy without the pixel capability cannot count channels.
  fails(1, {"count", "--channels", "4", "--strategy", "cpu_parallel", f});
}

TEST_F(CliTest, CountWeights) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.1f, 0.6f, 0.6f, -1.0f, 2.0f, nan};
  const std::vector<float> w = {1.5f, 2.0f, 0.25f, 4.0f, 8.0f, 16.0f};
  std::string xf = file("x.f32", bytes_of(x)), wf = file("w.f32", bytes_of(w));
  const std::vector<std::string> base = {"count", "--type", "f32", "--bins", "2", "--range", "0:1", "--weights", wf};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Json j = parse_json(ok(with({"--format", "json", xf})).out);
  EXPECT_EQ(doubles(j["sums"]), (std::vector<double>{1.5, 2.25}));
  EXPECT_EQ(j["underflow"].get<double>(), 4.0);
  EXPECT_EQ(j["overflow"].get<double>(), 8.0);
  EXPECT_EQ(j["nan"].get<double>(), 16.0);
  EXPECT_EQ(j["total"].get<double>(), 31.75);
  EXPECT_EQ(j["weight_type"].get<std::string>(), "f32");
  EXPECT_EQ(j["weights"].get<std::string>(), wf);
  std::vector<std::string> csv = lines_of(ok(with({"--format", "csv", xf})).out);
  EXPECT_EQ(csv, (std::vector<std::string>{"bin,lower,upper,sum", "0,0,0.5,1.5", "1,0.5,1,2.25", "underflow,-inf,0,4",
                                           "overflow,1,inf,8", "nan,,,16"}));
  // Both CPU strategies sum weights, to the same sums.
  for (const char* strategy : {"cpu_serial", "cpu_parallel"}) {
    const Json s = parse_json(ok(with({"--strategy", strategy, "--format", "json", xf})).out);
    EXPECT_EQ(s["strategy"].get<std::string>(), strategy);
    EXPECT_EQ(doubles(s["sums"]), (std::vector<double>{1.5, 2.25})) << strategy;
    EXPECT_EQ(s["nan"].get<double>(), 16.0) << strategy;
  }
  std::string table = ok(with({xf})).out;
  EXPECT_NE(table.find("31.75"), std::string::npos) << table;
  EXPECT_NE(table.find("[0.5, 1)"), std::string::npos) << table;
  // f64 weights over two sample files, consumed in order.
  std::string x1 = file("x1.f32", bytes_of(std::vector<float>{0.1f})), x2 = file("x2.f32", bytes_of(std::vector<float>{0.9f, 0.2f}));
  std::string w64 = file("w.f64", bytes_of(std::vector<double>{0.5, 1e300, 0.25}));
  j = parse_json(ok({"count", "--type", "f32", "--bins", "2", "--range", "0:1", "--weights", w64, "--weight-type", "f64",
                     "--format", "json", x1, x2}).out);
  EXPECT_EQ(doubles(j["sums"]), (std::vector<double>{0.75, 1e300}));
  // A NaN weight: its sum is NaN, null in JSON, nan in CSV.
  std::string wn = file("wn.f32", bytes_of(std::vector<float>{nan, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f}));
  j = parse_json(ok({"count", "--type", "f32", "--bins", "2", "--range", "0:1", "--weights", wn, "--format", "json", xf}).out);
  EXPECT_TRUE(j["sums"][0].is_null());
  EXPECT_NE(ok({"count", "--type", "f32", "--bins", "2", "--range", "0:1", "--weights", wn, "--format", "csv", xf}).out.find("0,0,0.5,nan"),
            std::string::npos);
}

TEST_F(CliTest, CountWeightsErrors) {
  std::string xf = file("x.f32", bytes_of(std::vector<float>{0.1f, 0.2f, 0.3f}));
  std::string two = file("two.f32", bytes_of(std::vector<float>{1.0f, 2.0f}));
  std::string ragged = file("ragged.f32", std::string(7, 'a'));
  const std::vector<std::string> bins = {"count", "--type", "f32", "--bins", "2", "--range", "0:1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = bins;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Result r = fails(1, with({"--weights", two, xf}));
  EXPECT_NE(r.err.find("2 weights for 3 samples"), std::string::npos) << r.err;
  RunSpec pipe;  // samples of unknown size: found at the end
  pipe.stdin_data = bytes_of(std::vector<float>{0.1f, 0.2f, 0.3f});
  fails(1, with({"--weights", two}), pipe);
  fails(1, with({"--weights", ragged, xf}));
  fails(1, with({"--weights", path("missing"), xf}));
  fails(2, with({"--weights", two, "--weight-type", "u8", xf}));
  fails(2, with({"--weight-type", "f64", xf}));  // --weight-type needs --weights
  fails(2, with({"--weights", two, "--channels", "2", xf}));
  fails(2, with({"--weights", two, "--per-file", xf}));
  fails(2, with({"--weights", "-", xf}));
}

}  // namespace
