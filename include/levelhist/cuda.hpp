// levelhist: the device-pointer API for CUDA callers. Compiles without nvcc:
// streams are passed as void* (a cudaStream_t), pointers are device pointers.
//
// Two phases, as in CUB: ask workspace_bytes(), allocate that much device
// memory once, zero it once (cudaMemset), then call histogram() as often as you
// like with that workspace. Every strategy leaves the workspace zeroed again, so
// no call needs a separate clearing launch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "levelhist/binning.hpp"
#include "levelhist/histogram.hpp"
#include "levelhist/strategy.hpp"
#include "levelhist/weighted_histogram.hpp"

namespace levelhist::cuda {

// Device workspace for `strategy` (nullptr = auto) on `problem`, edges included.
std::size_t workspace_bytes(const Problem& problem, const Strategy* strategy = nullptr);

// Counts n samples at device pointer d_samples into d_slots (binning.slots()
// 64-bit counters in device memory), asynchronously on `stream`. Clears d_slots
// first unless `accumulate`. Throws Error(cuda) with CUDA's message on failure,
// Error(unsupported) if the strategy cannot take the problem.
void histogram(void* d_workspace, std::size_t workspace_bytes, const void* d_samples, std::uint64_t n,
               SampleType type, const Binning& binning, std::uint64_t* d_slots, bool accumulate,
               void* stream = nullptr, const Strategy* strategy = nullptr);

// Host samples: copies through pinned staging buffers in chunks, overlapping the
// copy of one chunk with the counting of the previous one, and adds the result
// into hist. Synchronous.
void fill_from_host(Histogram& hist, SampleType type, const void* samples, std::uint64_t n,
                    const Strategy& strategy);

// ---- interleaved pixels ------------------------------------------------------
// Workspace for histogram_pixels on this layout (width > 0) and binning.
std::size_t workspace_bytes_pixels(SampleType type, const PixelLayout& layout, const Binning& binning,
                                   const Strategy* strategy = nullptr);
// One histogram per active channel of the region of interest at device pointer
// d_pixels (its first sample, any alignment; rows layout.row_pitch bytes apart,
// 0 = packed) into d_slots: popcount(layout.active) x binning.slots() 64-bit
// counters, channel by channel in ascending order. Clears them first unless
// `accumulate`. Layout errors as levelhist::histogram_pixels; inputs of more
// than 2^31 samples are split by rows (or whole pixels), never inside a pixel.
void histogram_pixels(void* d_workspace, std::size_t workspace_bytes, const void* d_pixels, SampleType type,
                      const PixelLayout& layout, const Binning& binning, std::uint64_t* d_slots, bool accumulate,
                      void* stream = nullptr, const Strategy* strategy = nullptr);

// ---- weighted ----------------------------------------------------------------
// Workspace for histogram_weighted on n samples.
std::size_t workspace_bytes_weighted(SampleType type, std::uint64_t n, SampleType weight_type, const Binning& binning,
                                     const Strategy* strategy = nullptr);
// Sums the weights at d_weights (one of weight_type, f32 or f64, per sample)
// of the n samples at d_samples per slot into d_sums (binning.slots() doubles
// in device memory); clears them first unless `accumulate`.
void histogram_weighted(void* d_workspace, std::size_t workspace_bytes, const void* d_samples, std::uint64_t n,
                        SampleType type, const void* d_weights, SampleType weight_type, const Binning& binning,
                        double* d_sums, bool accumulate, void* stream = nullptr, const Strategy* strategy = nullptr);

// Host-memory pixels and weights, staged through pinned buffers as
// fill_from_host; add into the histograms. Synchronous.
void fill_pixels_from_host(std::span<Histogram> hists, SampleType type, const void* pixels, const PixelLayout& layout,
                           const Strategy& strategy);
void fill_weighted_from_host(WeightedHistogram& hist, SampleType type, const void* samples, std::uint64_t n,
                             const void* weights, SampleType weight_type, const Strategy& strategy);

// Number of CUDA devices usable now (0 when there is no GPU or driver).
int device_count();
// "NVIDIA H100 80GB HBM3, 132 SMs, CUDA 13.0" or why there is none.
std::string describe_device();

}  // namespace levelhist::cuda
