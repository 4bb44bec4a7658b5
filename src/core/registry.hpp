// Internal: the registry's extension point. The lab library (lab/) adds the
// methods of the literature to the strategies a program sees, so the tests and
// the benchmark can run them; the library and the CLI never do.
#pragma once
#include <span>

#include "levelhist/strategy.hpp"

namespace levelhist::detail {

// Appends `strategies` to all_strategies() (once per list; later calls with the
// same list do nothing). Call before any other thread uses the registry.
void install_strategies(std::span<const Strategy* const> strategies);

}  // namespace levelhist::detail
