// levelhist bench: the general-histogram cases (u16, f32, explicit edges,
// pixels, weights, u32 keys), each a section of
// its own (1 GiB resident, uniform / constant / a skewed or structured
// distribution), every CUDA strategy that takes the case side by side with
// CUB (or the peer that exists: sort + reduce_by_key for huge bin counts,
// torch.bincount's global f64 atomics for weights) and the streaming-read
// limit of the same run, every result checked against the CPU first.
//
//   levelhist bench --general [--cases u16_4096,rgba,...] [bench options]
//
// (bench_main.cpp hands the arguments over when it sees --general.) Plain
// C++: includable from bench_main.cpp.
#pragma once
#include <string>
#include <vector>

namespace levelhist::bench {

// The cases, in the order they run.
inline const std::vector<std::string> kGeneralCases = {
    "u16_4096",      "u16_65536",       "f32_1024", "f32_1000", "f32_edges64", "rgba",    "rgb_of_rgba",
    "rgb24",         "frame_rgba_4k",   "frame_rgb_1080p", "weighted", "u32_2e20", "u32_2e24"};

// `levelhist bench --general ...`: runs the cases, prints the report (the
// bench's own formats and --out), returns the exit status (1 when any
// strategy's result differed from the CPU's).
int general_bench_main(const std::vector<std::string>& args);
std::string general_bench_help();

}  // namespace levelhist::bench
