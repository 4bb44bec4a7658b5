// levelhist: the device-pointer API for CUDA callers, CUB-style. Compiles
// without nvcc: streams are passed as void* (a cudaStream_t), pointers are
// device pointers.
//
// Two phases, as in CUB: ask workspace_bytes(), allocate that much device
// memory once, zero it once (cudaMemset), then call histogram() as often as you
// like with that workspace. Every call leaves the workspace zeroed again, so no
// call needs a separate clearing launch.
//
// These functions are thin wrappers: each finds the plan for its problem in a
// small per-device cache (levelhist.hpp) and calls Plan::run. A program can
// hold the Plan itself (plan.hpp; examples/device_pointers.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "levelhist/binning.hpp"
#include "levelhist/histogram.hpp"
#include "levelhist/request.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist::cuda {

// Device workspace for `strategy` (nullptr = auto) on `problem`.
std::size_t workspace_bytes(const Problem& problem, const Strategy* strategy = nullptr);

// Counts n samples at device pointer d_samples into d_slots (binning.slots()
// 64-bit counters in device memory), asynchronously on `stream`. Clears d_slots
// first unless `accumulate`. Throws Error(cuda) with CUDA's message on failure,
// Error(unsupported) if the strategy cannot take the problem.
void histogram(void* d_workspace, std::size_t workspace_bytes, const void* d_samples, std::uint64_t n,
               SampleType type, const Binning& binning, std::uint64_t* d_slots, bool accumulate,
               void* stream = nullptr, const Strategy* strategy = nullptr);

// ---- interleaved pixels ------------------------------------------------------
// Workspace for histogram_pixels on this layout (width > 0) and binning.
std::size_t workspace_bytes_pixels(SampleType type, const PixelLayout& layout, const Binning& binning,
                                   const Strategy* strategy = nullptr);
// One histogram per active channel of the region of interest at device pointer
// d_pixels (its first sample, any alignment; rows layout.row_pitch bytes apart,
// 0 = packed) into d_slots: popcount(layout.active) x binning.slots() 64-bit
// counters, channel by channel in ascending order. Clears them first unless
// `accumulate`. Inputs of more than 2^31 samples are split by rows (or whole
// pixels), never inside a pixel.
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

// ---- devices -------------------------------------------------------------------
// Number of CUDA devices usable now (0 when there is no GPU or driver).
int device_count();
// "NVIDIA H100 80GB HBM3, 132 SMs, 50 MiB L2, runtime 13.0, driver 13.0", or why there is none.
std::string describe_device();
// The current CUDA device (cudaGetDevice), or -1 without one.
int current_device();
// The current device's compute capability as major * 10 + minor (90 for Hopper); 0 without a device.
int compute_capability();

}  // namespace levelhist::cuda
