// The tests' main: the lab's strategies join the registry first, so every
// suite that iterates over all_strategies() checks the methods of the
// literature against the reference too.
#include <gtest/gtest.h>

#include "lab.hpp"

int main(int argc, char** argv) {
  levelhist::lab::install();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
