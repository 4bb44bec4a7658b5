// The tests' own names: every value-parameterized case has a readable name
// from its suite's name generator (not a bare index such as ".../3"), and its
// parameter prints as text, never as GoogleTest's dump of raw bytes. ctest
// lists these names (tests/CMakeLists.txt), so they are what a person reads.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace {

TEST(TestNames, ParameterizedCasesHaveReadableNamesAndParameters) {
  const ::testing::UnitTest& all = *::testing::UnitTest::GetInstance();
  int parameterized = 0;
  for (int s = 0; s < all.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *all.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(t);
      if (!info.value_param()) continue;
      ++parameterized;
      const std::string name = info.name();
      const std::string full = std::string(suite.name()) + "." + name;
      const std::string last = name.substr(name.rfind('/') + 1);
      bool digits_only = !last.empty();
      for (char c : last) digits_only = digits_only && std::isdigit(static_cast<unsigned char>(c));
      EXPECT_FALSE(digits_only) << full << ": give INSTANTIATE_TEST_SUITE_P a name generator";
      const std::string param = info.value_param();
      EXPECT_EQ(param.find("-byte object <"), std::string::npos)
          << full << " prints its parameter as raw bytes (" << param.substr(0, 60) << "...): give it a PrintTo";
    }
  }
  EXPECT_GT(parameterized, 0) << "no parameterized test found: this check checks nothing";
}

}  // namespace
