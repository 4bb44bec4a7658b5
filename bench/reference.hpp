// levelhist bench: the CPU reference every GPU result is checked against.
#pragma once
#include <cstdint>

#include "datasets.hpp"
#include "levelhist/binning.hpp"
#include "levelhist/histogram.hpp"

namespace levelhist::bench {

// The CPU's histogram (strategy cpu_parallel) of the first n samples of an
// input, grown as n grows: a size sweep up to 2^30 counts each sample once,
// not once per size.
class CpuReference {
 public:
  CpuReference(const HostSamples& input, const Binning& binning);
  // n must not be smaller than in the previous call, nor larger than the input.
  const Histogram& of_first(std::uint64_t n);

 private:
  const HostSamples& input_;
  Histogram histogram_;
  std::uint64_t counted_ = 0;
};

}  // namespace levelhist::bench
