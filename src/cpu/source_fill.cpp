// The CPU backend's reading of a Source (Plan::fill from a file or a pipe).
#include "core/plan_impl.hpp"
#include "levelhist/source.hpp"

namespace levelhist::detail {

std::uint64_t cpu_fill_source(const Plan::Impl& plan, Source& source, void* out) {
  return fill_source_in_chunks(plan, source, out, [&](const Geometry& g, const Input& input, bool accumulate) {
    cpu_fill(plan, g, input, out, accumulate);
  });
}

}  // namespace levelhist::detail
