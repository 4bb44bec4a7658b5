// levelhist bench --sort: counting sort and sparse histograms.
//
//   levelhist bench --sort [--quick] [bench options]
//
// Counting sort of 256 MiB (64 MiB with --quick) of u8 and u16 samples,
// uniform and of 4 values: std::sort on one core (on at most 2^24 samples, the
// row says so), the CPU counting sort, the GPU counting sort and CUB's
// DeviceRadixSort::SortKeys (device-resident, CUDA events, median after
// warm-up). Sparse histograms of 2^26 u32 keys (2^24 with --quick), uniform
// over 2^32 and over 2^20 values: GPU (CUB sort + reduce_by_key) vs CPU. Every
// GPU result is checked against the CPU's before it is timed. Plain C++:
// includable from bench_main.cpp.
#pragma once
#include <string>
#include <vector>

namespace levelhist::bench {

int sort_bench_main(const std::vector<std::string>& args);

}  // namespace levelhist::bench
