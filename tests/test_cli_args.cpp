// The CLI's list parsers (tools/args.cpp) called directly, with lists longer
// than one argument of argv may be: linear time, and an error about one item
// names that item and its place, quoting a few dozen characters of the list,
// never the whole of it.
#include <chrono>
#include <string>
#include <vector>

#include "args.hpp"
#include "cli_test_support.hpp"
#include "test_support.hpp"

namespace {

using levelhist::Error;
using levelhist::ErrorKind;
using levelhist::cli::parse_channel_list;
using levelhist::cli::parse_edges;
using levelhist::cli::parse_range;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "0,1,...,n-1".
std::string integer_list(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(i);
  }
  return s;
}

// The message of the input error `f` throws ("" and a failure if none).
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

// Slow before (each edge built a message holding the whole list: 3.7 s for
// 20001 edges, 116 s under AddressSanitizer); a few milliseconds now.
TEST(CliLists, TwoHundredThousandEdgesParseInLinearTime) {
  const std::string text = integer_list(200001);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> edges = parse_edges(text);
  EXPECT_LT(seconds_since(start), 2.0);
  ASSERT_EQ(edges.size(), 200001u);
  for (std::size_t i = 0; i < edges.size(); ++i) ASSERT_EQ(edges[i], static_cast<double>(i)) << i;
}

TEST(CliLists, AnEdgeErrorNamesTheEdgeAndItsPlace) {
  std::string text = integer_list(200001);
  const std::size_t at = text.find(",150000,") + 1;  // edge 150000 starts here
  text.replace(at, 6, "15x000");
  const auto start = std::chrono::steady_clock::now();
  const std::string what = input_error_of([&] { parse_edges(text); });
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_EQ(what, "--edges: edge 150000 '15x000' is not a number (character " + std::to_string(at + 1) +
                      " of the list: '...9998,149999,15x000,150001,1500...'); give a finite decimal number such as "
                      "0.5 or -1e3");
}

TEST(CliLists, EveryEdgeErrorIsOneShortLine) {
  const std::string many = integer_list(100000);
  const std::vector<std::string> bad = {
      many + ",",                              // an empty last item
      ",," + many,                             // an empty first item
      many + ",nan",                           // not finite
      many + ",1e999",                         // out of the range of double
      many + "," + std::string(1 << 20, 'x'),  // one item of a megabyte
      std::string(1 << 20, '7'),               // one edge only, a megabyte long
      many + ",5",                             // below the edge before
  };
  for (const std::string& text : bad) {
    const std::string what = input_error_of([&] { parse_edges(text); });
    EXPECT_LT(what.size(), 200u) << what.substr(0, 300);
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_NE(what.find("; "), std::string::npos) << what.substr(0, 300);
  }
  EXPECT_NE(input_error_of([&] { parse_edges(many + ","); }).find("edge 100000 is empty (character 588891 "),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { parse_edges(many + ",5"); }).find("edge 100000 (5) is below edge 99999 (99999)"),
            std::string::npos);
  // A short list is quoted whole, with nothing cut.
  EXPECT_EQ(input_error_of([] { parse_edges("0,,1"); }),
            "--edges: edge 1 is empty (character 3 of the list: '0,,1'); separate the numbers by single commas");
  EXPECT_EQ(input_error_of([] { parse_edges("0,1,a b"); }),
            "--edges: edge 2 'a b' is not a number (character 5 of the list: '0,1,a b'); give a finite decimal "
            "number such as 0.5 or -1e3");
}

TEST(CliLists, ChannelListErrorsNameTheItem) {
  EXPECT_EQ(parse_channel_list("2,0", 4), 0b101u);
  EXPECT_EQ(input_error_of([] { parse_channel_list("0,1,1", 4); }),
            "--active: item 2 names channel 1 again (character 5 of the list: '0,1,1'); give channel numbers from 0 "
            "to 3, e.g. --active 0,1,2");
  EXPECT_EQ(input_error_of([] { parse_channel_list("0,4", 4); }),
            "--active: item 1 '4' is not a channel number from 0 to 3 (character 3 of the list: '0,4'); give "
            "channel numbers from 0 to 3, e.g. --active 0,1,2");
  const std::string long_item = "0," + std::string(1 << 20, '1');
  const std::string what = input_error_of([&] { parse_channel_list(long_item, 4); });
  EXPECT_LT(what.size(), 200u) << what.substr(0, 300);
  EXPECT_NE(input_error_of([] { parse_channel_list("1,,2", 4); }).find("item 1 is empty"), std::string::npos);
}

TEST(CliLists, SingleNumbersKeepTheirMessages) {
  EXPECT_EQ(input_error_of([] { parse_range("0:x"); }),
            "--range '0:x': HI 'x' is not a number; give a finite decimal number such as 0.5 or -1e3");
  EXPECT_EQ(input_error_of([] { parse_range(":1"); }), "--range ':1': LO is empty; give a finite decimal number");
}

class CliListsEndToEnd : public cli_test::CliTest {};

// The longest list one argument can carry, through the CLI (20001 edges took 3.7 s before).
TEST_F(CliListsEndToEnd, TwentyThousandEdgesCountQuickly) {
  const std::string f = file("d", "\x01\x02\x03");
  const cli_test::Result r = cli_test::ok({"count", "--type", "u8", "--edges", integer_list(20001), "--format", "csv", f});
  EXPECT_LT(r.seconds, 2.0);
  EXPECT_EQ(cli_test::parse_csv(r.out).counts.size(), 20000u);
}

}  // namespace
