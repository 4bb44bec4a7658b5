// levelhist bench --shapes: batches, N-d histograms and deterministic sums.
//
//   levelhist bench --shapes [--quick] [bench options]
//
// Batches: 256 MiB (64 MiB with --quick) of u8 in equal segments of 4 KiB,
// 64 KiB, 1 MiB and 16 MiB, in segments by offsets of random lengths around
// 4 KiB, and as 8 x 8 tiles of an image: gpu_segments against the
// streaming-read limit of the input and against a loop of one
// cub::DeviceHistogram::HistogramEven call per segment (CUB has no batched
// histogram). N-d: the 256 x 256 joint histogram of two u8 images (noise and
// constant) against the limit of reading both, and a 2-D f32 histogram of
// 100 x 100 bins (CUB has neither). Deterministic weighted sums (f32 samples,
// f32 weights, 256 bins, uniform and constant) against today's weighted
// kernel, gpu_weighted_shared. Every GPU result is checked against the CPU's
// before it is timed (deterministic sums bit for bit). Plain C++: includable
// from bench_main.cpp.
#pragma once
#include <string>
#include <vector>

namespace levelhist::bench {

int shape_bench_main(const std::vector<std::string>& args);

}  // namespace levelhist::bench
