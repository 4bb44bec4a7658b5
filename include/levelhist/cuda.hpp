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
#include <string>

#include "levelhist/binning.hpp"
#include "levelhist/histogram.hpp"
#include "levelhist/strategy.hpp"

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

// Number of CUDA devices usable now (0 when there is no GPU or driver).
int device_count();
// "NVIDIA H100 80GB HBM3, 132 SMs, CUDA 13.0" or why there is none.
std::string describe_device();

}  // namespace levelhist::cuda
