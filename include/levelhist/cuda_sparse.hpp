// levelhist: sparse histograms on the GPU, device-pointer API (sparse.hpp has
// the host entry point). Compiles without nvcc; streams are passed as void*.
//
// Wilt part 1's method (sort + reduce_by_key) in CUB: cub::DeviceRadixSort::
// SortKeys (signed keys in signed order: CUB flips the sign bit itself), then
// cub::DeviceReduce::ReduceByKey over the sorted keys with a constant 1 per key
// and 64-bit sums: one (value, count) pair per run of equal keys. Both take the
// 64-bit num_items of CUB 3, so inputs beyond 2^31 keys run in one call.
//
// Two phases, as in CUB: call with d_temp == nullptr to get temp_bytes (it
// depends on n and the type), allocate it, call again. The temporary storage
// is scratch: no zeroing needed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "levelhist/sparse.hpp"

namespace levelhist::cuda {

// Counts the n keys of `type` at device pointer d_keys (aligned to the key
// size) into device memory: d_values (up to n keys of `type`: each distinct
// key once, ascending), d_counts (up to n 64-bit counts, same order) and
// *d_pairs (one 64-bit count of the pairs written). Asynchronous on `stream`.
// Throws Error(usage) when temp_bytes is too small or d_keys is misaligned,
// Error(cuda) with CUDA's message on failure.
void sparse_histogram(void* d_temp, std::size_t& temp_bytes, KeyType type, const void* d_keys, std::uint64_t n,
                      void* d_values, std::uint64_t* d_counts, std::uint64_t* d_pairs, void* stream = nullptr);

// Host memory (any alignment): copies the keys in, counts, copies the pairs
// out (values widened as ValueCount says). Synchronous.
std::vector<ValueCount> sparse_histogram_from_host(KeyType type, const void* keys, std::uint64_t n);

}  // namespace levelhist::cuda
