// `levelhist bench`: every option's range checked before anything runs, errors
// in the one-line `levelhist: <what>; <fix>` form (exit 2 usage, 1 a bad
// value), and the CPU benchmark's acceptance verdict as its exit status.
#include "cli_test_support.hpp"

namespace cli_test {
namespace {

class CliBench : public CliTest {};

TEST_F(CliBench, CpuOptionsOutOfRangeAreOneLineErrors) {
  const std::vector<std::vector<std::string>> bad_values = {
      {"--runs", "0"},       {"--runs", "1001"},    {"--runs", "-1"},      {"--runs", "2x"},
      {"--threads", "5000"}, {"--threads", "1025"}, {"--threads", "-2"},   {"--threads", "x"},
      {"--size", "0"},       {"--size", "0K"},      {"--size", "1.5G"},    {"--size", "10X"},
      {"--size", "-5"},      {"--size", ""},        {"--size", "99999999999999999999"}, {"--size=0"},
  };
  for (const auto& option : bad_values) {
    std::vector<std::string> args = {"bench", "--cpu", "--dir", dir_.string()};
    args.insert(args.end(), option.begin(), option.end());
    const Result r = fails(1, args);
    EXPECT_NE(r.err.find(option.front().substr(0, option.front().find('='))), std::string::npos) << r.err;
  }
  for (const auto& usage : std::vector<std::vector<std::string>>{
           {"--frob"}, {"--runs"}, {"--format", "xml"}, {"--page-cache", "cold"}})
  {
    std::vector<std::string> args = {"bench", "--cpu"};
    args.insert(args.end(), usage.begin(), usage.end());
    fails(2, args);
  }
  // Nothing was created in --dir: the options are checked first.
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(CliBench, GpuOptionsOutOfRangeAreOneLineErrors) {
  // Checked before the GPU is looked for, so the same on every machine.
  for (const auto& option : std::vector<std::vector<std::string>>{{"--reps", "0"},
                                                                  {"--reps", "1001"},
                                                                  {"--case-seconds", "0"},
                                                                  {"--case-seconds", "inf"},
                                                                  {"--case-seconds", "nan"},
                                                                  {"--section-seconds", "-1"},
                                                                  {"--device", "-1"},
                                                                  {"--device", "99999999999"},
                                                                  {"--seed", "x"}}) {
    std::vector<std::string> args = {"bench"};
    args.insert(args.end(), option.begin(), option.end());
    const Result r = fails(1, args);
    EXPECT_NE(r.err.find(option.front()), std::string::npos) << r.err;
  }
  for (const auto& usage : std::vector<std::vector<std::string>>{
           {"--frob"}, {"--reps"}, {"--format", "xml"}, {"--section", "nope"}, {"--section", ","}, {"--out", ""}})
  {
    std::vector<std::string> args = {"bench"};
    args.insert(args.end(), usage.begin(), usage.end());
    fails(2, args);
  }
}

TEST_F(CliBench, LinkDevicesOnlyNeedsADeviceList) {
  const Result r = fails(2, {"bench", "--link", "--devices-only"});
  EXPECT_NE(r.err.find("--devices-only needs --devices"), std::string::npos) << r.err;
}

TEST_F(CliBench, CpuVerdictIsTheExitStatus) {
  // A tiny run: whatever the verdict on this machine, exit 0 means PASS and 1 FAIL.
  const std::vector<std::string> args = {"bench", "--cpu", "--size", "4K", "--runs", "1", "--format", "json",
                                         "--dir", dir_.string()};
  const Result r = run_cli(args);
  const Json j = parse_json(r.out);
  ASSERT_TRUE(j.is_object() && j.contains("pass")) << describe(args, r);
  const bool pass = j["pass"].get<bool>();
  EXPECT_EQ(r.status, pass ? 0 : 1) << describe(args, r);
  EXPECT_EQ(j["verdict"].get<std::string>().rfind(pass ? "PASS" : "FAIL", 0), 0u) << j["verdict"].get<std::string>();
  // Progress lines, then (on FAIL) the reason as one error line.
  const std::vector<std::string> err = lines_of(r.err);
  ASSERT_FALSE(err.empty()) << describe(args, r);
  if (!pass) {
    EXPECT_EQ(err.back().rfind("levelhist: bench --cpu: the verdict is FAIL: ", 0), 0u) << r.err;
    EXPECT_NE(err.back().find("; "), std::string::npos) << r.err;
  }
  for (const std::string& line : err) EXPECT_EQ(line.rfind("levelhist", 0), 0u) << line;
  // The scratch files are gone.
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace cli_test
