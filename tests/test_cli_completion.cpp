// The bash completion (completions/levelhist.bash) and the man page (made by
// help2man from the help texts): both must know every option each command's
// --help lists, and the completion must complete commands, options, option
// values and files, run in a real bash.
#include <regex>
#include <set>

#include "cli_test_support.hpp"

namespace cli_test {
namespace {

const std::vector<std::string> kCommands = {"count", "text", "sort", "list", "image", "threshold", "equalize", "joint"};

// The options a command's help lists: every -x / --name in its usage lines
// (the first, "Usage: ...", and those indented under it) and on the lines of
// its option table (two spaces, then a dash); -h aside (the completion offers --help).
std::set<std::string> help_options(const std::string& command) {
  std::set<std::string> out;
  const std::regex option("(^|[\\s,\\[|])(--?[a-zA-Z][a-zA-Z-]*)");
  bool usage = true;
  for (const std::string& line : lines_of(ok({"help", command}).out)) {
    usage = usage && (line.rfind("Usage:", 0) == 0 || line.rfind("       ", 0) == 0);
    if (!usage && line.rfind("  -", 0) != 0) continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), option); it != std::sregex_iterator(); ++it)
      if ((*it)[2] != "-h") out.insert((*it)[2]);
  }
  return out;
}

std::string completion_script() { return std::string(LEVELHIST_SOURCE_DIR) + "/completions/levelhist.bash"; }

// What the completion offers for the command line `line` (the cursor at its
// end; a trailing space starts a new word), run in bash in `dir`.
std::vector<std::string> complete(const std::string& line, const std::string& dir) {
  RunSpec spec;
  spec.program = "/bin/bash";
  const std::string script =
      "cd \"$3\" && source \"$1\" && read -ra COMP_WORDS <<< \"$2\"; [[ $2 == *' ' ]] && COMP_WORDS+=(''); "
      "COMP_WORDS[0]=\"$4\"; COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _levelhist; printf '%s\\n' \"${COMPREPLY[@]}\"";
  const Result r = run_cli({"-c", script, "bash", completion_script(), line, dir, cli_path()}, spec);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> words;
  for (const std::string& w : lines_of(r.out))
    if (!w.empty()) words.push_back(w);
  std::sort(words.begin(), words.end());
  return words;
}

class CliCompletion : public CliTest {};

TEST_F(CliCompletion, KnowsEveryOptionOfEveryCommandAndNoOther) {
  if (!fs::exists("/bin/bash")) GTEST_SKIP() << "no bash";
  for (const std::string& command : kCommands) {
    const std::set<std::string> want = help_options(command);
    ASSERT_FALSE(want.empty()) << command;
    const std::vector<std::string> offered = complete("levelhist " + command + " -", dir_.string());
    EXPECT_EQ(std::set<std::string>(offered.begin(), offered.end()), want) << command;
  }
}

TEST_F(CliCompletion, CompletesCommandsValuesAndFiles) {
  if (!fs::exists("/bin/bash")) GTEST_SKIP() << "no bash";
  const std::string d = dir_.string();
  for (const char* name : {"photo.png", "scan.TIF", "a b.pgm", "notes.txt", "data.npy"}) file(name, "x");
  fs::create_directory(dir_ / "sub");
  using V = std::vector<std::string>;
  EXPECT_EQ(complete("levelhist co", d), V{"count"});
  EXPECT_EQ(complete("levelhist -", d), (V{"--help", "--version", "-V", "-h"}));
  EXPECT_EQ(complete("levelhist help th", d), V{"threshold"});
  EXPECT_EQ(complete("levelhist count --format ", d), (V{"csv", "json", "table"}));
  EXPECT_EQ(complete("levelhist sort --type ", d), (V{"i16", "i8", "u16", "u8"}));
  EXPECT_EQ(complete("levelhist count --type f", d), (V{"f32", "f64"}));
  EXPECT_EQ(complete("levelhist image --backend c", d), (V{"cpu", "cuda"}));
  EXPECT_EQ(complete("levelhist count --range ", d), V{"auto"});
  EXPECT_EQ(complete("levelhist count --bins ", d), V{});
  // Strategies: those of the levelhist being completed, and auto.
  const V strategies = complete("levelhist count --strategy ", d);
  EXPECT_NE(std::find(strategies.begin(), strategies.end(), "auto"), strategies.end());
  EXPECT_NE(std::find(strategies.begin(), strategies.end(), "cpu_serial"), strategies.end());
  // Image commands: image files and directories; count: every file.
  EXPECT_EQ(complete("levelhist image ", d), (V{"a b.pgm", "photo.png", "scan.TIF", "sub"}));
  EXPECT_EQ(complete("levelhist threshold photo.png -o ", d), (V{"a b.pgm", "photo.png", "scan.TIF", "sub"}));
  EXPECT_EQ(complete("levelhist count d", d), V{"data.npy"});
  EXPECT_EQ(complete("levelhist count --plot ", d), (V{"photo.png", "sub"}));
}

TEST_F(CliCompletion, ManPageHoldsEveryCommandAndOption) {
#ifndef LEVELHIST_MAN_PAGE
  GTEST_SKIP() << "help2man was not found at configure time: no man page was made";
#else
  std::ifstream in(LEVELHIST_MAN_PAGE);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(page.empty()) << LEVELHIST_MAN_PAGE;
  EXPECT_NE(page.find(".TH LEVELHIST \"1\""), std::string::npos) << page.substr(0, 300);
  EXPECT_NE(page.find("levelhist \\- fast, level histograms"), std::string::npos);
  EXPECT_NE(page.find(".SH EXAMPLES"), std::string::npos);
  EXPECT_NE(page.find(".SH ENVIRONMENT"), std::string::npos);
  for (const std::string& command : kCommands) {
    EXPECT_NE(page.find(".SS \"levelhist " + command + "\""), std::string::npos) << command;
    // In roff every '-' is \-: options read as typed.
    for (std::string option : help_options(command)) {
      std::string roff;
      for (char c : option) roff += c == '-' ? std::string("\\-") : std::string(1, c);
      EXPECT_NE(page.find(roff), std::string::npos) << command << " " << option;
    }
  }
  // groff, where installed, finds nothing to warn about.
  if (fs::exists("/usr/bin/groff")) {
    RunSpec spec;
    spec.program = "/usr/bin/groff";
    const Result r = run_cli({"-man", "-Tutf8", "-ww", "-z", LEVELHIST_MAN_PAGE}, spec);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
  }
#endif
}

}  // namespace
}  // namespace cli_test
