// The README's library example is a real program: examples/readme_example.cpp,
// built and run by CTest (test `readme_example`). This checks that the README
// shows exactly that program, so the two cannot drift apart.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Readme, LibraryExampleIsTheBuiltProgram) {
  const std::string root = LEVELHIST_SOURCE_DIR;
  const std::string readme = read_file(root + "/README.md");
  const std::string example = read_file(root + "/examples/readme_example.cpp");
  ASSERT_FALSE(readme.empty()) << "cannot read README.md";
  ASSERT_FALSE(example.empty()) << "cannot read examples/readme_example.cpp";
  const std::string open = "```cpp\n";
  std::size_t begin = readme.find(open);
  ASSERT_NE(begin, std::string::npos) << "README.md has no ```cpp block";
  begin += open.size();
  std::size_t end = readme.find("```", begin);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(readme.substr(begin, end - begin), example);
}

TEST(Readme, QuickStartIsTwoCommands) {
  const std::string readme = read_file(std::string(LEVELHIST_SOURCE_DIR) + "/README.md");
  std::size_t section = readme.find("## Quick start");
  ASSERT_NE(section, std::string::npos);
  std::size_t begin = readme.find("```\n", section);
  ASSERT_NE(begin, std::string::npos);
  begin += 4;
  std::size_t end = readme.find("```", begin);
  std::istringstream block(readme.substr(begin, end - begin));
  std::string line;
  int commands = 0;
  while (std::getline(block, line))
    if (!line.empty()) ++commands;
  EXPECT_EQ(commands, 2);
}

}  // namespace
