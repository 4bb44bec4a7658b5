// `levelhist count --range auto` reads its input twice (a pass for the range,
// one to count). Every way of giving the same bytes — a file argument, standard
// input redirected from a file (with no operand or as `-`, also at an offset
// other than 0), a pipe — must give the same output, and that output must match
// a histogram computed here from the values.
#include <fstream>
#include <random>

#include "cli_test_support.hpp"

namespace cli_test {
namespace {

class CliStdin : public CliTest {
 public:
  // The ways of feeding `bytes` (also in file `f`) to `count ARGS [operand]`.
  // Each returns stdout; the caller compares them.
  std::vector<std::pair<std::string, std::string>> every_way(const std::vector<std::string>& args, const std::string& f,
                                                             const std::string& bytes) {
    std::vector<std::pair<std::string, std::string>> outs;
    auto with = [&](std::vector<std::string> a, const std::string& operand) {
      if (!operand.empty()) a.push_back(operand);
      return a;
    };
    outs.emplace_back("file argument", ok(with(args, f)).out);
    RunSpec redirect;
    redirect.stdin_file = f;
    outs.emplace_back("< FILE", ok(with(args, ""), redirect).out);
    outs.emplace_back("- < FILE", ok(with(args, "-"), redirect).out);
    RunSpec pipe;
    pipe.stdin_data = bytes;
    outs.emplace_back("a pipe", ok(with(args, ""), pipe).out);
    outs.emplace_back("- from a pipe", ok(with(args, "-"), pipe).out);
    return outs;
  }
};

// f32 values with NaN and infinities (left out of the range, counted apart).
std::vector<float> float_values() {
  std::mt19937 rng(41);
  std::normal_distribution<float> normal(3.0f, 2.0f);
  std::vector<float> v(5000);
  for (float& x : v) x = normal(rng);
  v[10] = std::numeric_limits<float>::quiet_NaN();
  v[20] = std::numeric_limits<float>::infinity();
  v[30] = -std::numeric_limits<float>::infinity();
  return v;
}

TEST_F(CliStdin, RangeAutoGivesTheSameHistogramFromFilesRedirectionsAndPipes) {
  const std::vector<float> v = float_values();
  const std::string bytes = bytes_of(v);
  const std::string f = file("v.f32", bytes);
  // The range the first pass must find, computed here.
  double lo = INFINITY, hi = -INFINITY;
  for (float x : v)
    if (std::isfinite(x)) lo = std::min(lo, double{x}), hi = std::max(hi, double{x});
  for (const std::string format : {"csv", "table"}) {
    const auto outs = every_way({"count", "--type", "f32", "--bins", "7", "--range", "auto", "--format", format}, f, bytes);
    for (const auto& [way, out] : outs) EXPECT_EQ(out, outs.front().second) << format << " through " << way;
    if (format != "csv") continue;
    const CsvHistogram h = parse_csv(outs.front().second);
    ASSERT_EQ(h.edges.size(), 8u);
    EXPECT_EQ(h.edges.front(), lo);
    EXPECT_EQ(h.edges.back(), hi);
    EXPECT_EQ(h.counts, reference(as_doubles(v), h.edges, true).counts);
  }
  // The JSON totals (csv has none): nothing lost on the second pass.
  RunSpec redirect;
  redirect.stdin_file = f;
  const Json j = parse_json(ok({"count", "--type", "f32", "--bins", "7", "--range", "auto", "--format", "json"}, redirect).out);
  EXPECT_EQ(j["total"].get<std::uint64_t>(), v.size());
  EXPECT_EQ(j["nan"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["underflow"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["overflow"].get<std::uint64_t>(), 1u);
}

TEST_F(CliStdin, RangeAutoPerValueBinsOfAnIntegerType) {
  const std::vector<std::int16_t> v = {-7, 3, 3, 250, -7, 0, 12, 250, 250, 1};
  const std::string bytes = bytes_of(v);
  const std::string f = file("v.i16", bytes);
  const auto outs = every_way({"count", "--type", "i16", "--range", "auto", "--format", "csv"}, f, bytes);
  for (const auto& [way, out] : outs) EXPECT_EQ(out, outs.front().second) << way;
  std::vector<double> edges;
  for (int e = -7; e <= 251; ++e) edges.push_back(e);  // one bin per value, [min, max + 1)
  const CsvHistogram h = parse_csv(outs.front().second);
  EXPECT_EQ(h.edges, edges);
  EXPECT_EQ(h.counts, reference(as_doubles(v), edges, false).counts);
}

TEST_F(CliStdin, RangeAutoWithChannels) {
  // RGB pixels: the range is taken over every active channel together.
  std::vector<std::uint8_t> px;
  for (int i = 0; i < 300; ++i) px.insert(px.end(), {std::uint8_t(20 + i % 50), std::uint8_t(40 + i % 7), std::uint8_t(90 + i % 3)});
  const std::string bytes = bytes_of(px);
  const std::string f = file("px.rgb", bytes);
  const auto outs = every_way({"count", "--channels", "3", "--range", "auto", "--format", "csv"}, f, bytes);
  for (const auto& [way, out] : outs) EXPECT_EQ(out, outs.front().second) << way;
  std::vector<double> edges;
  for (int e = 20; e <= 93; ++e) edges.push_back(e);  // min 20 (red), max 92 (blue)
  const std::vector<std::string> lines = lines_of(outs.front().second);
  // Per channel: its bins, then underflow, overflow and nan.
  const std::size_t rows = edges.size() - 1 + 3;
  ASSERT_EQ(lines.size(), 1 + 3 * rows);
  for (unsigned c = 0; c < 3; ++c) {
    std::vector<double> channel;
    for (std::size_t i = c; i < px.size(); i += 3) channel.push_back(px[i]);
    const std::vector<std::uint64_t> want = reference(channel, edges, false).counts;
    for (std::size_t b = 0; b < want.size(); ++b) {
      const std::vector<std::string> f5 = split(lines[1 + c * rows + b]);
      ASSERT_EQ(f5.size(), 5u);
      EXPECT_EQ(f5[0], std::to_string(c));
      EXPECT_EQ(std::stoull(f5[4]), want[b]) << "channel " << c << " bin " << b;
    }
    EXPECT_EQ(lines[1 + c * rows + want.size()], std::to_string(c) + ",underflow,-inf,20,0");
  }
}

TEST_F(CliStdin, RangeAutoPerFileWithStandardInputAmongFiles) {
  // Two inputs: a file, and standard input (redirected or piped) for the second.
  const std::vector<float> v = float_values();
  const std::vector<float> a(v.begin(), v.begin() + 2000), b(v.begin() + 2000, v.end());
  const std::string fa = file("a.f32", bytes_of(a)), fb = file("b.f32", bytes_of(b));
  const std::vector<std::string> args = {"count", "--type", "f32", "--bins", "5", "--range", "auto", "--per-file",
                                         "--format", "json", fa};
  auto with = [&](const std::string& second) {
    std::vector<std::string> x = args;
    x.push_back(second);
    return x;
  };
  const Json files = parse_json(ok(with(fb)).out);
  RunSpec redirect;
  redirect.stdin_file = fb;
  RunSpec pipe;
  pipe.stdin_data = bytes_of(b);
  for (const RunSpec& spec : {redirect, pipe}) {
    const Json j = parse_json(ok(with("-"), spec).out);
    EXPECT_EQ(doubles(j["edges"]), doubles(files["edges"]));
    EXPECT_EQ(u64s(j["counts"]), u64s(files["counts"]));
    ASSERT_EQ(j["per_file"].size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(u64s(j["per_file"][k]["counts"]), u64s(files["per_file"][k]["counts"])) << k;
      EXPECT_EQ(j["per_file"][k]["total"].get<std::uint64_t>(), k ? b.size() : a.size());
    }
  }
  // The expectation computed here, per file, over the edges of both together.
  const std::vector<double> edges = doubles(files["edges"]);
  EXPECT_EQ(u64s(files["per_file"][0]["counts"]), reference(as_doubles(a), edges, true).counts);
  EXPECT_EQ(u64s(files["per_file"][1]["counts"]), reference(as_doubles(b), edges, true).counts);
}

TEST_F(CliStdin, RedirectedStandardInputIsReadFromItsOffsetOnBothPasses) {
  // `{ head -c 8 >/dev/null; levelhist count --range auto; } < f`: what is left.
  const std::vector<std::uint32_t> v = {1000000, 7, 9, 12, 7, 30, 9};
  const std::string f = file("v.u32", bytes_of(v));
  const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::lseek(fd, 8, SEEK_SET), 8);  // past 1000000 and the first 7
  RunSpec spec;
  spec.stdin_fd = fd;
  const std::string out = ok({"count", "--type", "u32", "--range", "auto", "--format", "csv"}, spec).out;
  ::close(fd);
  std::vector<double> edges;
  for (int e = 7; e <= 31; ++e) edges.push_back(e);
  const CsvHistogram h = parse_csv(out);
  EXPECT_EQ(h.edges, edges);
  EXPECT_EQ(h.counts, reference({9, 12, 7, 30, 9}, edges, false).counts);
}

TEST_F(CliStdin, APipeOnStandardInputIsGivenALargerBufferAndCountedWhole) {
  // The pipe's buffer is the pipe's, shared by both ends: holding the read end
  // here, the size the CLI gave it is visible once the CLI has exited.
  int ends[2] = {-1, -1};
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  const int before = ::fcntl(ends[0], F_GETPIPE_SZ);
  const std::string bytes = random_bytes(4000, 17);  // fits the pipe's first buffer: written before the run
  ASSERT_EQ(::write(ends[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(ends[1]);
  RunSpec spec;
  spec.stdin_fd = ends[0];
  const std::string out = ok({"count", "--format", "csv"}, spec).out;
  const int after = ::fcntl(ends[0], F_GETPIPE_SZ);
  ::close(ends[0]);
  EXPECT_EQ(parse_csv(out).counts, byte_counts(bytes));
  std::ifstream limit_file("/proc/sys/fs/pipe-max-size");
  long limit = 0;
  if (!(limit_file >> limit) || limit < (1 << 20)) GTEST_SKIP() << "this system allows pipes of at most " << limit << " bytes";
  EXPECT_LT(before, 1 << 20);
  EXPECT_EQ(after, 1 << 20) << "the CLI reads a pipe with a 1 MiB buffer where the system allows it";
}

// ---- counting through sources: sizes that cross the CPU path's buffers ----------------

// The counts of `count ARGS` (JSON) for bytes given every way, and through
// writes that end inside samples; all must be equal (the documents differ
// only in the input's name).
std::vector<std::uint64_t> counts_every_way(CliStdin& t, const std::vector<std::string>& args, const std::string& f,
                                            const std::string& bytes) {
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  auto outs = t.every_way(json_args, f, bytes);
  RunSpec odd_writes;
  odd_writes.stdin_data = bytes;
  odd_writes.stdin_write_bytes = 4093;
  outs.emplace_back("4093-byte writes", ok(json_args, odd_writes).out);
  const Json first = parse_json(outs.front().second);
  for (const auto& [way, out] : outs) {
    const Json j = parse_json(out);
    EXPECT_EQ(u64s(j["counts"]), u64s(first["counts"])) << "through " << way << ", " << bytes.size() << " bytes";
    EXPECT_EQ(j["total"], first["total"]) << "through " << way << ", " << bytes.size() << " bytes";
  }
  return u64s(first["counts"]);
}

TEST_F(CliStdin, EveryPathCountsTheSameAcrossBufferBoundaries) {
  const std::size_t mib = std::size_t{1} << 20;
  std::mt19937_64 rng(5);
  for (std::size_t n : {mib - 1, 2 * mib, 2 * mib + 1, 4 * mib + 3, 9 * mib + 5}) {
    std::vector<std::uint8_t> v(n);
    for (auto& x : v) x = static_cast<std::uint8_t>(rng() >> 56);
    const std::string bytes = bytes_of(v);
    const std::string f = file("v.u8", bytes);
    std::vector<std::uint64_t> want(256, 0);
    for (std::uint8_t x : v) ++want[x];
    EXPECT_EQ(counts_every_way(*this, {"count", "--backend", "cpu"}, f, bytes), want) << n << " bytes";
  }
}

TEST_F(CliStdin, EveryPathCountsTheSameF64AndPixelsAcrossBufferBoundaries) {
  std::mt19937_64 rng(6);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<double> v((std::size_t{5} << 20) / 8 + 3);
  for (double& x : v) x = normal(rng);
  const std::string f = file("v.f64", bytes_of(v));
  std::vector<double> edges;
  for (int e = -8; e <= 8; ++e) edges.push_back(e);
  EXPECT_EQ(counts_every_way(*this, {"count", "--backend", "cpu", "--type", "f64", "--bins", "16", "--range", "-8:8"}, f,
                             bytes_of(v)),
            reference(v, edges, true).counts);
  // 3-channel pixels: 3 bytes each, so reads and buffers end inside pixels.
  std::vector<std::uint8_t> px((std::size_t{7} << 20) / 3 * 3 + 3);
  for (auto& x : px) x = static_cast<std::uint8_t>(rng() >> 56);
  const std::string pf = file("px.rgb", bytes_of(px));
  const std::vector<std::string> args = {"count", "--backend", "cpu", "--channels", "3", "--active", "0,2",
                                         "--format", "json"};
  RunSpec pipe;
  pipe.stdin_data = bytes_of(px);
  pipe.stdin_write_bytes = 4093;
  RunSpec redirect;
  redirect.stdin_file = pf;
  const std::vector<std::pair<const char*, std::string>> outs = {
      {"file argument", ok([&] { auto a = args; a.push_back(pf); return a; }()).out},
      {"a pipe", ok(args, pipe).out},
      {"< FILE", ok(args, redirect).out}};
  for (const auto& [way, out] : outs) {
    const Json j = parse_json(out);
    ASSERT_EQ(j["channels"].size(), 2u) << way;
    for (unsigned k = 0; k < 2; ++k) {
      const unsigned c = k == 0 ? 0 : 2;
      std::vector<std::uint64_t> want(256, 0);
      for (std::size_t i = c; i < px.size(); i += 3) ++want[px[i]];
      EXPECT_EQ(j["channels"][k]["channel"].get<unsigned>(), c) << way;
      EXPECT_EQ(u64s(j["channels"][k]["counts"]), want) << "channel " << c << " through " << way;
    }
  }
}

TEST_F(CliStdin, PerFileCountsEachInputWholeThroughEveryPath) {
  std::mt19937_64 rng(7);
  std::vector<std::uint16_t> a((std::size_t{3} << 20) / 2 + 1), b(1000);
  for (auto& x : a) x = static_cast<std::uint16_t>(rng());
  for (auto& x : b) x = static_cast<std::uint16_t>(rng() >> 50);
  const std::string fa = file("a.u16", bytes_of(a)), fb = file("b.u16", bytes_of(b));
  const std::vector<std::string> args = {"count", "--backend", "cpu", "--type", "u16", "--bins", "64", "--per-file",
                                         "--format", "json", fa};
  const Json files = parse_json(ok([&] { auto x = args; x.push_back(fb); return x; }()).out);
  RunSpec redirect;
  redirect.stdin_file = fb;
  RunSpec pipe;
  pipe.stdin_data = bytes_of(b);
  pipe.stdin_write_bytes = 333;
  for (const RunSpec& spec : {redirect, pipe}) {
    const Json j = parse_json(ok([&] { auto x = args; x.push_back("-"); return x; }(), spec).out);
    EXPECT_EQ(u64s(j["counts"]), u64s(files["counts"]));
    ASSERT_EQ(j["per_file"].size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) EXPECT_EQ(u64s(j["per_file"][k]["counts"]), u64s(files["per_file"][k]["counts"]));
  }
  std::vector<double> edges;
  for (int e = 0; e <= 64; ++e) edges.push_back(e * 1024.0);
  EXPECT_EQ(u64s(files["per_file"][0]["counts"]), reference(as_doubles(a), edges, true).counts);
  EXPECT_EQ(u64s(files["per_file"][1]["counts"]), reference(as_doubles(b), edges, true).counts);
}

TEST_F(CliStdin, APipeEndingInsideASampleAfterSeveralBuffersNamesTheLeftover) {
  std::string bytes(std::size_t{5} << 20, 'x');
  bytes += "abc";  // 3 bytes of a fourth f32... left over
  RunSpec pipe;
  pipe.stdin_data = bytes;
  pipe.stdin_write_bytes = 65537;
  const Result r = fails(1, {"count", "--backend", "cpu", "--type", "f32", "--bins", "3", "--range", "0:1"}, pipe);
  EXPECT_NE(r.err.find("standard input has " + std::to_string(bytes.size()) + " bytes, not a whole number of f32 "
                       "samples (4 bytes each): 3 bytes left over"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace cli_test
