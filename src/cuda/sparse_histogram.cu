// Sparse histograms on the GPU (cuda_sparse.hpp): Wilt part 1's "sort the N
// inputs and look for adjacent duplicates" (Thrust's reduce_by_key) in CUB.
//
// cub::DeviceRadixSort::SortKeys into the head of the temporary storage
// (CUB orders signed keys by value: it flips the sign bit in its digit
// extraction), then cub::DeviceReduce::ReduceByKey over the sorted keys with
// a constant 1 per key summed in 64 bits: unique keys, their counts and the
// number of runs, all in device memory. Both calls take num_items as a 64-bit
// integer (CUB 3's choose_offset_t picks 64-bit offsets for it), so there is
// no 2^31 limit and no chunk-and-merge step. DeviceRunLengthEncode::Encode
// would do the same work but takes an int num_items.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/constant_iterator.h>

#include <algorithm>
#include <string>

#include "cuda/cuda_common.cuh"
#include "levelhist/cuda_sparse.hpp"
#include "levelhist/error.hpp"

namespace levelhist::cuda {
namespace {

using u64 = std::uint64_t;

constexpr std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

template <class T>
void sparse_typed(void* d_temp, std::size_t& temp_bytes, const T* d_keys, u64 n, T* d_values, u64* d_counts,
                  u64* d_pairs, cudaStream_t stream) {
  const auto ones = thrust::make_constant_iterator(u64{1});
  std::size_t sort_bytes = 0, reduce_bytes = 0;
  LEVELHIST_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, d_keys, static_cast<T*>(nullptr), n, 0,
                                                      static_cast<int>(sizeof(T) * 8), stream));
  LEVELHIST_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, static_cast<const T*>(nullptr), d_values,
                                                      ones, d_counts, d_pairs, ::cuda::std::plus<u64>{}, n, stream));
  const std::size_t sorted_bytes = round_up(std::max<std::size_t>(n * sizeof(T), 1));
  const std::size_t needed = sorted_bytes + round_up(std::max({sort_bytes, reduce_bytes, std::size_t{1}}));
  if (d_temp == nullptr) {
    temp_bytes = needed;
    return;
  }
  if (temp_bytes < needed)
    throw Error(ErrorKind::usage, "sparse_histogram: the temporary storage is too small: " + std::to_string(temp_bytes) +
                                      " bytes given, " + std::to_string(needed) + " needed");
  if (n == 0) {
    LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_pairs, 0, sizeof(u64), stream));
    return;
  }
  T* sorted = static_cast<T*>(d_temp);
  void* cub_temp = static_cast<unsigned char*>(d_temp) + sorted_bytes;
  std::size_t bytes = sort_bytes;
  LEVELHIST_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(cub_temp, bytes, d_keys, sorted, n, 0,
                                                      static_cast<int>(sizeof(T) * 8), stream));
  bytes = reduce_bytes;
  LEVELHIST_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(cub_temp, bytes, static_cast<const T*>(sorted), d_values, ones,
                                                      d_counts, d_pairs, ::cuda::std::plus<u64>{}, n, stream));
}

// Device memory of one host-path call, freed however the call ends.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes)
      : p(cuda_detail::device_alloc(std::max<std::size_t>(bytes, 256), "a buffer of the sparse histogram")) {}
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace

void sparse_histogram(void* d_temp, std::size_t& temp_bytes, KeyType type, const void* d_keys, u64 n, void* d_values,
                      u64* d_counts, u64* d_pairs, void* stream) {
  if (d_temp && reinterpret_cast<std::uintptr_t>(d_keys) % key_size(type) != 0)
    throw Error(ErrorKind::usage, "sparse_histogram: the device keys must be aligned to their size (" +
                                      std::to_string(key_size(type)) + " bytes)");
  visit_key_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sparse_typed<T>(d_temp, temp_bytes, static_cast<const T*>(d_keys), n, static_cast<T*>(d_values), d_counts,
                    d_pairs, static_cast<cudaStream_t>(stream));
  });
}

std::vector<ValueCount> sparse_histogram_from_host(KeyType type, const void* keys, u64 n) {
  if (n == 0) return {};
  const std::size_t size = key_size(type);
  std::size_t temp_bytes = 0;
  sparse_histogram(nullptr, temp_bytes, type, nullptr, n, nullptr, nullptr, nullptr);
  DeviceBuffer d_keys(n * size), d_values(n * size), d_counts(n * sizeof(u64)), d_pairs(sizeof(u64)),
      d_temp(temp_bytes);
  // cudaMemcpy takes host memory of any alignment; the device copy is aligned.
  LEVELHIST_CUDA_CHECK(cudaMemcpy(d_keys.p, keys, n * size, cudaMemcpyHostToDevice));
  sparse_histogram(d_temp.p, temp_bytes, type, d_keys.p, n, d_values.p, static_cast<u64*>(d_counts.p),
                   static_cast<u64*>(d_pairs.p), nullptr);
  u64 pairs = 0;
  LEVELHIST_CUDA_CHECK(cudaMemcpy(&pairs, d_pairs.p, sizeof(u64), cudaMemcpyDeviceToHost));
  if (pairs > n) throw Error(ErrorKind::internal, "sparse_histogram: CUB reported more runs than keys");
  std::vector<u64> counts(pairs);
  std::vector<unsigned char> values(pairs * size);
  LEVELHIST_CUDA_CHECK(cudaMemcpy(counts.data(), d_counts.p, pairs * sizeof(u64), cudaMemcpyDeviceToHost));
  LEVELHIST_CUDA_CHECK(cudaMemcpy(values.data(), d_values.p, pairs * size, cudaMemcpyDeviceToHost));
  std::vector<ValueCount> out(pairs);
  visit_key_type(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* v = reinterpret_cast<const T*>(values.data());
    // Widened as ValueCount says: signed keys sign-extend.
    for (u64 i = 0; i < pairs; ++i)
      out[i] = {std::is_signed_v<T> ? static_cast<u64>(static_cast<std::int64_t>(v[i])) : static_cast<u64>(v[i]),
                counts[i]};
  });
  return out;
}

}  // namespace levelhist::cuda
