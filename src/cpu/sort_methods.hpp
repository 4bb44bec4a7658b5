// The CPU halves of counting sort and sparse histograms (sort.hpp,
// sparse.hpp): one method per file, src/cpu/counting_sort.cpp and
// src/cpu/sparse_radix_sort.cpp; the dispatch is src/core/sort_api.cpp.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "levelhist/sample_type.hpp"
#include "levelhist/sparse.hpp"

namespace levelhist::cpu_sort {

// Step 3 of counting sort: writes, for every per-value slot v in order,
// counts[v] copies of the value of slot v (Binning::per_value(type): slot v
// holds lower + v, so signed types come out in signed order) to `out` (any
// alignment), n = the sum of the counts. Parallel over output ranges when n is
// large; `threads` 0 = every core.
void expand_runs(SampleType type, std::span<const std::uint64_t> counts, void* out, std::uint64_t n,
                 unsigned threads);

// The CPU counting sort: levelhist::fill on the CPU (its fastest strategy for
// the type), then expand_runs.
void counting_sort(SampleType type, const void* in, void* out, std::uint64_t n, unsigned threads);

// The CPU sparse histogram: a parallel LSD radix sort of a copy of the keys,
// then one pass counting runs of equal keys.
std::vector<ValueCount> sparse_histogram(KeyType type, const void* keys, std::uint64_t n, unsigned threads);

}  // namespace levelhist::cpu_sort
