#include <gtest/gtest.h>
#include <levelhist/levelhist.hpp>
TEST(Smoke, Bytes) {
  std::vector<std::uint8_t> v = {1, 2, 2, 255};
  auto h = levelhist::histogram<std::uint8_t>(v);
  EXPECT_EQ(h.count(2), 2u);
  EXPECT_EQ(h.total(), 4u);
}
