// The library example of README.md, built and run by the tests.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <levelhist/levelhist.hpp>

int main() {
  // 1000 bytes: the values 0..9, each 100 times.
  std::vector<std::uint8_t> bytes(1000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i % 10);
  levelhist::Histogram h = levelhist::histogram<std::uint8_t>(bytes);  // one bin per value
  std::printf("bins=%llu count[3]=%llu total=%llu\n", (unsigned long long)h.bins(),
              (unsigned long long)h.count(3), (unsigned long long)h.total());

  // Floats into 4 even bins over [0, 1); out-of-range values are kept aside.
  std::vector<float> x = {0.0f, 0.25f, 0.5f, 0.99f, 1.0f, -0.5f};
  levelhist::Histogram g = levelhist::histogram<float>(x, levelhist::Binning::even(4, 0.0, 1.0));
  std::printf("counts=%llu,%llu,%llu,%llu underflow=%llu overflow=%llu\n", (unsigned long long)g.count(0),
              (unsigned long long)g.count(1), (unsigned long long)g.count(2), (unsigned long long)g.count(3),
              (unsigned long long)g.underflow(), (unsigned long long)g.overflow());
  return (h.count(3) == 100 && g.count(0) == 1 && g.count(3) == 1 && g.underflow() == 1 && g.overflow() == 1) ? 0 : 1;
}
