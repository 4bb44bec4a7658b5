// The largest finite |weight| of a call, which deterministic sums round every
// weight by (src/core/fixed_point.hpp): found by the plan's pass over the
// weights before the counting (plan_cuda.cu), or by gpu_weighted_exact while
// it counts. Both keep it as the bits of a non-negative double, which order as
// integers, so one atomicMax on a 64-bit word folds the blocks' maxima; the
// weights' own bits are compared the same way (sign cleared; a value at or
// above infinity's bits is not finite), so the fold is integer maxima.
#pragma once
#include <type_traits>

#include "cuda/general_common.cuh"

namespace levelhist::cuda_detail::bound {

__device__ __forceinline__ unsigned finite_magnitude_bits(float w) {
  const unsigned b = __float_as_uint(w) & 0x7FFFFFFFu;
  return b < 0x7F800000u ? b : 0u;
}
__device__ __forceinline__ unsigned long long finite_magnitude_bits(double w) {
  const unsigned long long b = static_cast<unsigned long long>(__double_as_longlong(w)) & 0x7FFFFFFFFFFFFFFFull;
  return b < 0x7FF0000000000000ull ? b : 0u;
}
template <class W>
using MagnitudeBits = std::conditional_t<sizeof(W) == 4, unsigned, unsigned long long>;

template <class B>
__device__ __forceinline__ void keep_larger(B& m, B b) {
  m = b > m ? b : m;
}
template <class W>
__device__ __forceinline__ void fold_vector(const uint4& v, MagnitudeBits<W>& m) {
  if constexpr (sizeof(W) == 4) {
    keep_larger(m, finite_magnitude_bits(__uint_as_float(v.x)));
    keep_larger(m, finite_magnitude_bits(__uint_as_float(v.y)));
    keep_larger(m, finite_magnitude_bits(__uint_as_float(v.z)));
    keep_larger(m, finite_magnitude_bits(__uint_as_float(v.w)));
  } else {
    keep_larger(m, finite_magnitude_bits(__hiloint2double(static_cast<int>(v.y), static_cast<int>(v.x))));
    keep_larger(m, finite_magnitude_bits(__hiloint2double(static_cast<int>(v.w), static_cast<int>(v.z))));
  }
}

inline constexpr int kRangeLoads = 4;  // range_bound's 16-byte loads in flight a thread

// The largest finite |weight| of those of n weights at `weights` that this
// thread visits: 16-byte vectors first, first + stride, ..., four loads in
// flight (and, for first < 15, the weights before the first vector and after
// the last), where the weights are aligned to their size; else one unaligned
// load each, first, first + stride, ...
template <class W>
__device__ __forceinline__ MagnitudeBits<W> range_bound(const unsigned char* weights, std::uint64_t n,
                                                        std::uint64_t first, std::uint64_t stride) {
  MagnitudeBits<W> m = 0;
  if (reinterpret_cast<std::uintptr_t>(weights) % sizeof(W) == 0) {
    const general::Split16 sp = general::split16<W>(weights, n);
    const W* w = reinterpret_cast<const W*>(weights);
    if (first < sp.head) keep_larger(m, finite_magnitude_bits(w[first]));
    if (sp.tail + first < n) keep_larger(m, finite_magnitude_bits(w[sp.tail + first]));
    const uint4* body = reinterpret_cast<const uint4*>(w + sp.head);
    std::uint64_t i = first;
    for (; i + (kRangeLoads - 1) * stride < sp.vectors; i += kRangeLoads * stride) {
      uint4 v[kRangeLoads];
#pragma unroll
      for (int k = 0; k < kRangeLoads; ++k) v[k] = __ldcs(body + i + k * stride);
#pragma unroll
      for (int k = 0; k < kRangeLoads; ++k) fold_vector<W>(v[k], m);
    }
    for (; i < sp.vectors; i += stride) fold_vector<W>(__ldcs(body + i), m);
  } else {
    for (std::uint64_t i = first; i < n; i += stride)
      keep_larger(m, finite_magnitude_bits(load_unaligned<W>(weights + i * sizeof(W))));
  }
  return m;
}

// Folds each lane's maximum m into *bound (the bits of a double): a warp's
// maximum by shuffles, then one atomicMax a warp. Every lane of the warp calls it.
template <class W>
__device__ __forceinline__ void fold_into(MagnitudeBits<W> m, unsigned long long* bound) {
  for (int o = 16; o; o >>= 1) keep_larger(m, static_cast<MagnitudeBits<W>>(__shfl_xor_sync(0xFFFFFFFFu, m, o)));
  if ((threadIdx.x & 31) == 0 && m > 0) {
    double magnitude;
    if constexpr (sizeof(W) == 4) magnitude = static_cast<double>(__uint_as_float(m));
    else magnitude = __longlong_as_double(static_cast<long long>(m));
    atomicMax(bound, static_cast<unsigned long long>(__double_as_longlong(magnitude)));
  }
}

}  // namespace levelhist::cuda_detail::bound
