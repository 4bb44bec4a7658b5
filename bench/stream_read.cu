#include <algorithm>

#include "cuda/cuda_common.cuh"
#include "stream_read.hpp"

namespace levelhist::bench {
namespace {

constexpr int kThreads = 256;
// Independent 16-byte loads in flight per thread and iteration: enough bytes
// in flight per SM to cover DRAM latency at full bandwidth.
constexpr int kUnroll = 4;

__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

// Any fixed value works: the point is that the store depends on every load.
constexpr unsigned kImprobable = 0x9E3779B9u;

// kDependent: launched as a programmatic dependent launch (the study's limit
// for calls that are): the next read may start as this one ends, and waits for
// it before its first load, so two reads never overlap.
template <bool kDependent>
__global__ void __launch_bounds__(kThreads) stream_read_kernel(const uint4* __restrict__ in, std::uint64_t vectors,
                                                               const unsigned char* __restrict__ tail,
                                                               unsigned tail_bytes, unsigned* sink) {
  if constexpr (kDependent) {
    cuda_detail::allow_dependent_launch();
    cuda_detail::wait_for_prior_grid();
  }
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = in[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= fold(v[u]);
  }
  for (; i < vectors; i += stride) acc ^= fold(in[i]);
  const std::uint64_t thread = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (thread < tail_bytes) acc ^= tail[thread];
  if (acc == kImprobable) *sink = acc;
}

}  // namespace

void stream_read(const void* d_bytes, std::uint64_t bytes, unsigned* d_sink, void* stream, bool dependent) {
  static const int resident = cuda_detail::resident_blocks(stream_read_kernel<false>, kThreads);
  const std::uint64_t vectors = bytes / sizeof(uint4);
  // No more blocks than there is work for: small inputs should not pay for idle blocks.
  const std::uint64_t useful = std::max<std::uint64_t>(1, (vectors + kThreads - 1) / kThreads);
  const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>(resident, useful));
  const auto* tail = static_cast<const unsigned char*>(d_bytes) + vectors * sizeof(uint4);
  const auto* in = static_cast<const uint4*>(d_bytes);
  const auto tail_bytes = static_cast<unsigned>(bytes % sizeof(uint4));
  const auto s = static_cast<cudaStream_t>(stream);
  if (dependent)
    cuda_detail::launch_kernel<true>(stream_read_kernel<true>, blocks, kThreads, 0, s, in, vectors, tail, tail_bytes, d_sink);
  else
    cuda_detail::launch_kernel<false>(stream_read_kernel<false>, blocks, kThreads, 0, s, in, vectors, tail, tail_bytes,
                                      d_sink);
}

}  // namespace levelhist::bench
