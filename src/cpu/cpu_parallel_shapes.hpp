// cpu_parallel's batches and N-d points (cpu_parallel_shapes.cpp).
#pragma once
#include "levelhist/strategy.hpp"

namespace levelhist::cpu_parallel_detail {

// A batch of segments or tiles (RunArgs::batch): one histogram each.
// `run_one` counts one plain segment with every worker (cpu_parallel's 1-D path).
void run_batch(const RunArgs& a, void (*run_one)(const RunArgs&));
// N-d points (RunArgs::axes).
void run_axes(const RunArgs& a);

}  // namespace levelhist::cpu_parallel_detail
