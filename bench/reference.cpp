#include "reference.hpp"

#include "levelhist/error.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::bench {

CpuReference::CpuReference(const HostSamples& input, const Binning& binning) : input_(input), histogram_(binning) {}

const Histogram& CpuReference::of_first(std::uint64_t n) {
  if (n < counted_ || n > input_.size())
    throw Error(ErrorKind::internal, "CpuReference: n = " + std::to_string(n) + " after " + std::to_string(counted_) +
                                         " of " + std::to_string(input_.size()));
  if (n > counted_) {
    Options cpu;
    cpu.strategy = "cpu_parallel";
    cpu.backend = BackendChoice::cpu;
    // fill() adds to the counts already there: only the new samples are counted.
    fill(histogram_, input_.type(), input_.data() + counted_ * sample_size(input_.type()), n - counted_, cpu);
    counted_ = n;
  }
  return histogram_;
}

}  // namespace levelhist::bench
