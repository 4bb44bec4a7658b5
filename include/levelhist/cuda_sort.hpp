// levelhist: counting sort on the GPU, device-pointer API (sort.hpp has the
// host entry point). Compiles without nvcc; streams are passed as void*.
//
// Two phases, as in CUB: call with d_temp == nullptr to get temp_bytes,
// allocate that much device memory and zero it ONCE (cudaMemset), then call
// as often as you like with it, for any type and n whose temp_bytes fit. Part
// of the temporary storage is the CUDA histogram workspace, which must be zero
// on entry (cuda.hpp); every call leaves ALL of the storage zero again, so the
// next call finds its workspace zero wherever its layout puts it.
//
// Three steps, all asynchronous on `stream` (Wilt part 1, counting sort):
//  1. one counter per value through levelhist::cuda::histogram, so the
//     registry's fastest u8/u16 strategy for the input does the counting;
//  2. cub::DeviceScan::ExclusiveSum of the 256 or 65536 counts: where each
//     value's run starts in the output;
//  3. an expansion kernel: each block owns a chunk of output positions, finds
//     the values of its chunk by binary search in the run starts, and writes
//     the runs with coalesced 16-byte stores.
#pragma once
#include <cstddef>
#include <cstdint>

#include "levelhist/sample_type.hpp"

namespace levelhist::cuda {

// Sorts the n samples of `type` (u8, i8, u16, i16) at device pointer d_in into
// d_out (device memory, no overlap with d_in; any alignment, but 16-byte
// aligned outputs take the vector stores). With d_temp == nullptr only sets
// temp_bytes (n may then be anything: the size does not depend on it).
// Otherwise throws Error(usage) when temp_bytes is too small or the type is
// wider than 16 bits, Error(cuda) with CUDA's message on failure.
void counting_sort(void* d_temp, std::size_t& temp_bytes, SampleType type, const void* d_in, void* d_out,
                   std::uint64_t n, void* stream = nullptr);

// Host memory: the counts come from the GPU (levelhist::fill's pinned,
// double-buffered host path: the pass over the input), the runs are written
// by the CPU cores straight into `out`. Writing the output costs the same
// memset-speed pass either way, and a GPU expansion would add a copy of the
// whole output back over PCIe. Synchronous. `threads` as Options::threads.
void counting_sort_from_host(SampleType type, const void* in, void* out, std::uint64_t n, unsigned threads);

}  // namespace levelhist::cuda
