// NumPy .npy files: the header parser (tools/npy.hpp) on valid headers of
// every version and on malformed ones (truncated, wrong keys, structured
// dtypes, overflowing shapes, random damage: always a value or one
// Error(input) line), and `levelhist count` on .npy files written here byte
// by byte: the dtype from the header, the header never counted, the data
// size checked against the shape, from files, redirected and piped standard
// input, with --type, --channels, --weights, --per-file, --range auto and
// --sparse.
#include <random>

#include "cli_test_support.hpp"
#include "npy.hpp"
#include "test_support.hpp"

namespace {

using levelhist::Error;
using levelhist::ErrorKind;
namespace npy = levelhist::cli::npy;
using namespace cli_test;

// A .npy file: the magic, version `major`.0, the header length, the dict
// padded with spaces to a multiple of 64 bytes and ended by '\n', the data.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  header += std::string((64 - (preamble + header.size() + 1) % 64) % 64, ' ') + "\n";
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const std::size_t n = header.size();
  for (std::size_t k = 0; k < (major == 1 ? 2u : 4u); ++k) s += static_cast<char>((n >> (8 * k)) & 0xff);
  return s + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

template <class T>
std::string npy_of(const std::string& descr, const std::vector<T>& values, const std::string& shape = "") {
  return npy_file(dict(descr, shape.empty() ? "(" + std::to_string(values.size()) + ",)" : shape), bytes_of(values));
}

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

npy::Header parse(const std::string& file) { return npy::parse_header(bytes(file), "'x.npy'"); }

// One Error(input) line naming the file, with a fix, saying `needle`.
::testing::AssertionResult refused(const std::string& file, const std::string& needle) {
  try {
    parse(file);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (e.kind() != ErrorKind::input) return ::testing::AssertionFailure() << "not an input error: " << what;
    if (what.rfind("'x.npy': ", 0) != 0) return ::testing::AssertionFailure() << "does not name the file: " << what;
    if (what.find("; ") == std::string::npos || what.find('\n') != std::string::npos)
      return ::testing::AssertionFailure() << "not one line with a fix: " << what;
    if (what.find(needle) == std::string::npos) return ::testing::AssertionFailure() << what << " does not say " << needle;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "accepted";
}

// ---- the header parser --------------------------------------------------------------

TEST(NpyHeader, ReadsEveryVersionAndShape) {
  for (int major : {1, 2, 3}) {
    const npy::Header h = parse(npy_file(dict("<f4", "(3, 4)"), "", major));
    EXPECT_EQ(h.descr, "<f4");
    EXPECT_EQ(h.byte_order, '<');
    EXPECT_EQ(h.kind, 'f');
    EXPECT_EQ(h.item_size, 4u);
    EXPECT_FALSE(h.fortran_order);
    EXPECT_EQ(h.shape, (std::vector<std::uint64_t>{3, 4}));
    EXPECT_EQ(h.count, 12u);
    EXPECT_EQ(h.data_offset % 64, 0u) << major;  // numpy pads the header to 64 bytes
    EXPECT_EQ(h.data_offset, npy::header_size(bytes(npy_file(dict("<f4", "(3, 4)"), "", major)), "x"));
  }
  EXPECT_EQ(parse(npy_file(dict("|u1", "()"), "")).count, 1u);  // a scalar
  EXPECT_EQ(parse(npy_file(dict("|u1", "()"), "")).shape_text(), "()");
  EXPECT_EQ(parse(npy_file(dict("|u1", "(5,)"), "")).shape_text(), "(5,)");
  EXPECT_EQ(parse(npy_file(dict("<i8", "(2, 0, 7)"), "")).count, 0u);
  EXPECT_EQ(parse(npy_file(dict("<i8", "(3L, 4L)"), "")).count, 12u);  // written by Python 2
  EXPECT_EQ(parse(npy_file(dict("<u2", "(3, 4,)", true), "")).fortran_order, true);
  // Double quotes, other key orders, no trailing comma, extra spaces.
  const npy::Header h = parse(npy_file("{ \"shape\" : ( 6 , ) , \"fortran_order\":False,\"descr\":\">f8\"}", ""));
  EXPECT_EQ(h.byte_order, '>');
  EXPECT_EQ(h.item_size, 8u);
  EXPECT_EQ(h.count, 6u);
  // A descr without a size or with a unit parses; its size is 0 (the caller refuses it).
  EXPECT_EQ(parse(npy_file(dict("|O", "(2,)"), "")).item_size, 0u);
  EXPECT_EQ(parse(npy_file(dict("<M8[ns]", "(2,)"), "")).item_size, 0u);
  EXPECT_EQ(parse(npy_file(dict("|b1", "(2,)"), "")).kind, 'b');
}

TEST(NpyHeader, MagicAndLength) {
  EXPECT_TRUE(npy::has_magic(bytes("\x93NUMPY\x01")));
  EXPECT_FALSE(npy::has_magic(bytes("\x93NUMP")));
  EXPECT_FALSE(npy::has_magic(bytes("NUMPY\x93")));
  EXPECT_TRUE(refused(std::string("\x93NUMPY\x04\x00\x10\x00", 10), "version 4.0 is unknown"));
  EXPECT_TRUE(refused(std::string("\x93NUMPY\x01\x01\x10\x00", 10), "version 1.1 is unknown"));
  EXPECT_TRUE(refused(std::string("\x93NUMPY\x01\x00\x20\x4e", 10), "claims 20000 bytes"));
  EXPECT_TRUE(refused(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12), "claims 4294967295 bytes"));
  EXPECT_TRUE(refused(std::string("\x93NUMPY\x02\x00\x10", 9), "cut short"));
  EXPECT_TRUE(refused(std::string("\x93NUMPY\x01", 7), "cut short"));
  EXPECT_TRUE(refused("PK\x03\x04", "not a NumPy file"));
}

TEST(NpyHeader, MalformedHeadersAreOneLineErrors) {
  const std::string good = npy_file(dict("<f4", "(3, 4)"), "");
  for (std::size_t keep = 0; keep < good.size(); keep += 7) EXPECT_TRUE(refused(good.substr(0, keep), "")) << keep;
  EXPECT_TRUE(refused(npy_file("'descr': '<f4'}", ""), "expected '{'"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f4', 'shape': (3,), }", ""), "no 'fortran_order' key"));
  EXPECT_TRUE(refused(npy_file("{'fortran_order': False, 'shape': (3,), }", ""), "no 'descr' key"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f4', 'fortran_order': False, }", ""), "no 'shape' key"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", ""), "twice"));
  EXPECT_TRUE(refused(npy_file(dict("<f4", "(3,)").insert(1, "'extra': 1, "), ""), "unknown or repeated key 'extra'"));
  EXPECT_TRUE(refused(npy_file("{'descr': [('x', '<f4'), ('y', '<i2')], 'fortran_order': False, 'shape': (3,), }", ""),
                      "structured dtype"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", ""), "True or False"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': [3], }", ""), "expected '('"));
  EXPECT_TRUE(refused(npy_file(dict("<f4", "(-1,)"), ""), "expected a dimension"));
  EXPECT_TRUE(refused(npy_file(dict("<f4", "(3 4)"), ""), "expected ','"));
  EXPECT_TRUE(refused(npy_file(dict("<f4", "(99999999999999999999,)"), ""), "beyond 2^64"));
  EXPECT_TRUE(refused(npy_file(dict("<f4", "(4294967296, 4294967296)"), ""), "more than 2^64 elements"));
  EXPECT_TRUE(refused(npy_file(dict("<f8", "(2305843009213693952,)"), ""), "needs more than 2^64 bytes"));
  EXPECT_TRUE(refused(npy_file(dict("<f4", "(3,)") + " trailing", ""), "text after the closing brace"));
  EXPECT_TRUE(refused(npy_file("{'descr: '<f4', 'fortran_order': False, 'shape': (3,), }", ""), ""));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,), }", ""), "escape"));
  EXPECT_TRUE(refused(npy_file(dict("<f4", "(3,)").replace(2, 1, "\xe9"), ""), "not printable ASCII"));
  EXPECT_TRUE(refused(npy_file(dict("", "(3,)"), ""), "names no type"));
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  EXPECT_TRUE(refused(npy_file(dict("<f4", many + ")"), ""), "more than 64 dimensions"));
}

// Random damage to a valid header, deterministic: every result is a parsed
// header or one Error(input) line, never a crash or another exception.
TEST(NpyHeader, RandomDamageIsAHeaderOrOneErrorLine) {
  const std::vector<std::string> seeds = {npy_file(dict("<f4", "(3, 4)"), ""), npy_file(dict("|u1", "()"), "", 2),
                                          npy_file(dict(">i8", "(1, 2, 3,)", true), "", 3)};
  std::mt19937_64 rng(2024);
  int parsed = 0, refused_count = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string s = seeds[round % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0: s[at] = static_cast<char>(rng() & 0xff); break;
        case 1: s[at] = "{}()[]',:\"TF0123456789L \n\\"[rng() % 26]; break;
        case 2: s.erase(at, 1); break;
        default: s.resize(at); break;
      }
      if (s.empty()) s = "\x93";
    }
    try {
      const npy::Header h = npy::parse_header(bytes(s), "'f'");
      EXPECT_LE(h.data_offset, s.size());
      ++parsed;
    } catch (const Error& e) {
      const std::string what = e.what();
      ASSERT_EQ(e.kind(), ErrorKind::input) << what;
      ASSERT_EQ(what.find('\n'), std::string::npos) << what;
      ASSERT_NE(what.find("; "), std::string::npos) << what;
      ++refused_count;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(refused_count, 0);
}

// ---- count on .npy files ------------------------------------------------------------

class CliNpy : public CliTest {};

// Counts by the values' own edges, as the CLI's JSON gives them.
std::vector<std::uint64_t> json_counts(const Result& r) { return u64s(parse_json(r.out)["counts"]); }

TEST_F(CliNpy, TheHeaderGivesTheTypeAndIsNeverCounted) {
  const std::vector<std::uint8_t> u8 = {0, 1, 1, 255, 7};
  Json j = parse_json(ok({"count", "--format", "json", file("a.npy", npy_of("|u1", u8))}).out);
  EXPECT_EQ(j["type"].get<std::string>(), "u8");
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 5u);  // the header's 128 bytes are not samples
  std::vector<std::uint64_t> want(256, 0);
  for (auto v : u8) ++want[v];
  EXPECT_EQ(u64s(j["counts"]), want);
  // '<u1', '=u2' (native order) and the 16-bit types: one bin per value.
  const std::vector<std::int16_t> i16 = {-32768, -1, 0, 5, 5, 32767};
  j = parse_json(ok({"count", "--format", "json", file("b.npy", npy_of("<i2", i16))}).out);
  EXPECT_EQ(j["type"].get<std::string>(), "i16");
  EXPECT_EQ(j["bins"].get<std::uint64_t>(), 65536u);
  EXPECT_EQ(u64s(j["counts"])[5 + 32768], 2u);
  j = parse_json(ok({"count", "--format", "json", file("c.npy", npy_of("=u2", std::vector<std::uint16_t>{9, 9}))}).out);
  EXPECT_EQ(j["type"].get<std::string>(), "u16");
  EXPECT_EQ(u64s(j["counts"])[9], 2u);
  // Wider types need bins, as with --type.
  const std::vector<double> f8 = {0.5, 1.5, 1.25, -3, 10, std::nan("")};
  const std::string f = file("d.npy", npy_of("<f8", f8));
  fails(2, {"count", f});
  j = parse_json(ok({"count", "--bins", "4", "--range", "0:2", "--format", "json", f}).out);
  EXPECT_EQ(j["type"].get<std::string>(), "f64");
  const Reference ref = reference(f8, {0, 0.5, 1, 1.5, 2}, false);
  EXPECT_EQ(u64s(j["counts"]), ref.counts);
  EXPECT_EQ(j["underflow"].get<std::uint64_t>(), ref.underflow);
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), ref.overflow);
  EXPECT_EQ(j["nan"].get<std::uint64_t>(), ref.nan);
  for (const auto& [descr, type] : {std::pair<std::string, std::string>{"<i1", "i8"}, {"<u4", "u32"}, {"<i4", "i32"}, {"<f4", "f32"}}) {
    const std::size_t size = type == "i8" ? 1 : 4;
    j = parse_json(ok({"count", "--bins", "2", "--range", "0:10", "--format", "json",
                       file("e" + type + ".npy", npy_file(dict(descr, "(2, 3)"), std::string(6 * size, '\0')))})
                       .out);
    EXPECT_EQ(j["type"].get<std::string>(), type) << descr;
    EXPECT_EQ(u64s(j["counts"]), (std::vector<std::uint64_t>{6, 0})) << descr;  // six zeros
  }
}

TEST_F(CliNpy, TypeMayBeGivenButMustAgree) {
  const std::string f = file("a.npy", npy_of("<u2", std::vector<std::uint16_t>{1, 2, 3}));
  EXPECT_EQ(ok({"count", "--type", "u16", "--format", "json", f}).out, ok({"count", "--format", "json", f}).out);
  Result r = fails(2, {"count", "--type", "i16", f});
  EXPECT_NE(r.err.find("holds u16 samples (NumPy dtype '<u2'), not i16 as --type says"), std::string::npos) << r.err;
  // The old behaviour counted the header as f64 samples: now the types disagree.
  fails(2, {"count", "--type", "f64", "--bins", "2", "--range", "0:1", f});
}

TEST_F(CliNpy, WhatCannotBeCountedIsRefused) {
  auto refused_with = [&](const std::string& name, const std::string& contents, const std::string& needle) {
    Result r = fails(1, {"count", "--bins", "2", "--range", "0:1", file(name, contents)});
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  };
  refused_with("be.npy", npy_file(dict(">f8", "(1,)"), std::string(8, '\0')), "big-endian");
  refused_with("obj.npy", npy_file(dict("|O", "(1,)"), std::string(8, '\0')), "Python objects");
  refused_with("bool.npy", npy_file(dict("|b1", "(2,)"), std::string(2, '\0')), "booleans");
  refused_with("half.npy", npy_file(dict("<f2", "(2,)"), std::string(4, '\0')), "'<f2' is not one levelhist counts");
  refused_with("complex.npy", npy_file(dict("<c16", "(1,)"), std::string(16, '\0')), "is not one levelhist counts");
  refused_with("struct.npy", npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "xxxx"),
               "structured dtype");
  refused_with("damaged.npy", std::string("\x93NUMPY\x01\x00\x05\x00{oops", 15), "malformed NumPy header");
  // Big-endian bytes are fine: one byte has no order.
  ok({"count", file("be1.npy", npy_file(dict(">u1", "(1,)"), "x"))});
  // 64-bit integers need --sparse.
  Result r = fails(2, {"count", file("i64.npy", npy_of("<i8", std::vector<std::int64_t>{1}))});
  EXPECT_NE(r.err.find("--sparse"), std::string::npos) << r.err;
}

TEST_F(CliNpy, TheDataMustBeWhatTheShapeSays) {
  const std::string data = bytes_of(std::vector<float>{1, 2, 3, 4, 5, 6});
  Result r = fails(1, {"count", "--bins", "2", "--range", "0:8", file("short.npy", npy_file(dict("<f4", "(7,)"), data))});
  EXPECT_NE(r.err.find("holds 24 bytes after its NumPy header where the shape (7,) of '<f4' needs 28"), std::string::npos)
      << r.err;
  r = fails(1, {"count", "--bins", "2", "--range", "0:8", file("long.npy", npy_file(dict("<f4", "(2, 2)"), data))});
  EXPECT_NE(r.err.find("bytes after the array"), std::string::npos) << r.err;
  // Piped, it is checked when the data ends.
  RunSpec piped;
  piped.stdin_data = npy_file(dict("<f4", "(7,)"), data);
  r = fails(1, {"count", "--bins", "2", "--range", "0:8"}, piped);
  EXPECT_NE(r.err.find("standard input holds 6 elements after its NumPy header where the shape (7,) says 7"),
            std::string::npos)
      << r.err;
  piped.stdin_data = npy_file(dict("<f4", "(5,)"), data);
  fails(1, {"count", "--bins", "2", "--range", "0:8"}, piped);
  // A header cut short is one error too.
  piped.stdin_data = npy_file(dict("<f4", "(5,)"), data).substr(0, 40);
  fails(1, {"count", "--bins", "2", "--range", "0:8"}, piped);
}

TEST_F(CliNpy, FilesRedirectedAndPipedStandardInputGiveTheSameOutput) {
  std::vector<float> v;
  for (int i = 0; i < 1000; ++i) v.push_back(static_cast<float>(i % 37) * 0.25f);
  const std::string contents = npy_of("<f4", v, "(10, 100)");
  const std::string f = file("v.npy", contents);
  for (const std::vector<std::string>& bins :
       {std::vector<std::string>{"--bins", "5", "--range", "0:9"}, std::vector<std::string>{"--bins", "5", "--range", "auto"}}) {
    std::vector<std::string> args = {"count", "--format", "csv"};
    args.insert(args.end(), bins.begin(), bins.end());
    std::vector<std::string> with_file = args;
    with_file.push_back(f);
    const std::string want = ok(with_file).out;
    RunSpec redirected;
    redirected.stdin_file = f;
    EXPECT_EQ(ok(args, redirected).out, want);
    RunSpec piped;
    piped.stdin_data = contents;
    EXPECT_EQ(ok(args, piped).out, want);
    // Small windows and chunks: the header is skipped whatever the reads.
    RunSpec small = piped;
    small.env = {"LEVELHIST_CHUNK_BYTES=7", "LEVELHIST_WINDOW_BYTES=4100"};
    EXPECT_EQ(ok(args, small).out, want);
    redirected.env = small.env;
    EXPECT_EQ(ok(args, redirected).out, want);
    const CsvHistogram h = parse_csv(want);
    std::uint64_t sum = h.underflow + h.overflow + h.nan;
    for (auto c : h.counts) sum += c;
    EXPECT_EQ(sum, 1000u);
  }
}

TEST_F(CliNpy, FortranOrderCountsTheSameUnlessTheOrderMatters) {
  std::vector<std::uint8_t> v(12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(i * 7);
  const std::string c = file("c.npy", npy_file(dict("|u1", "(3, 4)"), bytes_of(v)));
  const std::string fo = file("f.npy", npy_file(dict("|u1", "(3, 4)", true), bytes_of(v)));
  EXPECT_EQ(json_counts(ok({"count", "--format", "json", fo})), json_counts(ok({"count", "--format", "json", c})));
  ok({"count", "--channels", "4", c});
  Result r = fails(1, {"count", "--channels", "4", fo});
  EXPECT_NE(r.err.find("Fortran order"), std::string::npos) << r.err;
  r = fails(1, {"count", "--channels", "3", c});
  EXPECT_NE(r.err.find("shape (3, 4) does not end in 3 channels"), std::string::npos) << r.err;
  // A flat array with --channels: its elements are the interleaved samples.
  Json j = parse_json(ok({"count", "--channels", "4", "--format", "json", file("flat.npy", npy_file(dict("|u1", "(12,)"), bytes_of(v)))}).out);
  ASSERT_EQ(j["channels"].size(), 4u);
  EXPECT_EQ(u64s(j["channels"][1]["counts"])[7], 1u);  // pixel 0, channel 1: 7
}

TEST_F(CliNpy, RawFilesBesideNpyFilesNeedTheType) {
  const std::string a = file("a.npy", npy_of("|u1", std::vector<std::uint8_t>{1, 2}));
  const std::string raw = file("b.raw", "\x01\x03");
  Result r = fails(2, {"count", a, raw});
  EXPECT_NE(r.err.find("has no NumPy header"), std::string::npos) << r.err;
  Json j = parse_json(ok({"count", "--type", "u8", "--format", "json", a, raw}).out);
  EXPECT_EQ(u64s(j["counts"])[1], 2u);
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 4u);
  // Per file, each its own histogram.
  j = parse_json(ok({"count", "--type", "u8", "--per-file", "--format", "json", a, raw}).out);
  EXPECT_EQ(j["per_file"][0]["total"].get<std::uint64_t>(), 2u);
  // Two .npy files of different types cannot share one histogram.
  r = fails(1, {"count", a, file("c.npy", npy_of("<u2", std::vector<std::uint16_t>{1}))});
  EXPECT_NE(r.err.find("one histogram counts one type"), std::string::npos) << r.err;
}

TEST_F(CliNpy, WeightsAndSparseKeys) {
  const std::string x = file("x.npy", npy_of("<f4", std::vector<float>{0.1f, 0.6f, 0.7f}));
  const std::string w = file("w.npy", npy_of("<f8", std::vector<double>{1.5, 2.0, 4.0}));
  Json j = parse_json(ok({"count", "--bins", "2", "--range", "0:1", "--weights", w, "--format", "json", x}).out);
  EXPECT_EQ(j["weight_type"].get<std::string>(), "f64");
  EXPECT_EQ(doubles(j["sums"]), (std::vector<double>{1.5, 6.0}));
  Result r = fails(2, {"count", "--bins", "2", "--range", "0:1", "--weights", w, "--weight-type", "f32", x});
  EXPECT_NE(r.err.find("not f32 as --weight-type says"), std::string::npos) << r.err;
  fails(1, {"count", "--bins", "2", "--range", "0:1", "--weights", file("wi.npy", npy_of("<i4", std::vector<std::int32_t>{1, 2, 3})), x});
  fails(1, {"count", "--bins", "2", "--range", "0:1", "--weights", file("w2.npy", npy_of("<f8", std::vector<double>{1, 2})), x});
  // --sparse takes its key type from the header.
  const std::string ids = file("ids.npy", npy_of("<i8", std::vector<std::int64_t>{-5, 7, -5}));
  j = parse_json(ok({"count", "--sparse", "--format", "json", ids}).out);
  EXPECT_EQ(j["type"].get<std::string>(), "i64");
  EXPECT_EQ(j["pairs"].dump(), "[[-5,2],[7,1]]");
  fails(2, {"count", "--sparse", "--type", "u32", ids});
  fails(1, {"count", "--sparse", x});  // f32: not keys
  fails(2, {"count", "--sparse", file("r.raw", "abcd")});  // no header, no --type
}

TEST_F(CliNpy, SortRefusesNpyFiles) {
  const std::string f = file("a.npy", npy_of("|u1", std::vector<std::uint8_t>{3, 1, 2}));
  Result r = fails(1, {"sort", f, "-o", path("out.raw")});
  EXPECT_NE(r.err.find("NumPy"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.raw")));
}

}  // namespace
