// Design study for general histograms (issue 5): more than 256 bins, 16- and
// 32-bit and float samples, explicit edges, interleaved pixels, weights, huge
// bin counts. Candidate kernels per case are timed side by side with a
// streaming read of the same 1 GiB and with CUB (or the peer that exists),
// every candidate checked against a CPU count through levelhist's own
// BinIndexer::slot first. Standalone on purpose (one nvcc line, no library
// build); the arithmetic behind the candidates is in docs/PERFORMANCE-general.md.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -Iinclude -Xcompiler -ffp-contract=off \
//        -o general_study bench/experiments/general_study.cu
//   ./general_study                 # every case, 1 GiB inputs
//   ./general_study u16_4096 f32    # only cases whose name contains a word
//   ./general_study --bytes 64M ... # smaller inputs (quick check)
//   ./general_study --selftest      # CPU only: the fast index paths against slot()
//
// Simplifications (the library handles them, the study times layouts): input
// sizes are multiples of 16 bytes and 16-byte aligned; candidates count into
// 32-bit per-call accumulators (the library widens them to 64-bit slots once
// per call, O(bins)).
#include <cooperative_groups.h>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "levelhist/bin_index.hpp"

namespace cg = cooperative_groups;
using levelhist::BinIndexer;
using levelhist::BinKind;
using u32 = unsigned;
using u64 = unsigned long long;

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// =====================================================================================
// Index functions, host and device. The host versions exist for --selftest, which
// checks every fast path against BinIndexer::slot on the CPU; the device versions
// use the rounding-mode intrinsics (no FMA contraction, round-toward-zero adds).
// =====================================================================================
#define HD __host__ __device__ __forceinline__

HD float f_sub(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
HD float f_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
HD double d_sub(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
HD double d_add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
HD double d_mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
HD u32 f_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  u32 u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
HD float f_from_bits(u32 u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
// 2^23 + floor(t) for 0 <= t < 2^23: one FADD.RZ instead of a conversion
// (F2I runs at 16/clk/SM, FADD at 128).
HD float f_floor_magic(float t) {
#ifdef __CUDA_ARCH__
  return __fadd_rz(t, 8388608.f);
#else
  return std::floor(t) + 8388608.f;
#endif
}
// 2^52 + floor(t) for 0 <= t < 2^52 (DADD.RZ instead of F2I.F64).
HD double d_floor_magic(double t) {
#ifdef __CUDA_ARCH__
  return __dadd_rz(t, 0x1p52);
#else
  return std::floor(t) + 0x1p52;
#endif
}
HD u32 d_lo(double d) {
#ifdef __CUDA_ARCH__
  return (u32)__double2loint(d);
#else
  u64 u;
  std::memcpy(&u, &d, 8);
  return (u32)u;
#endif
}
// (double)b for b < 2^32 without I2F.F64: the bits of 2^52 + b, minus 2^52 (exact).
HD double d_from_u32(u32 b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(__hiloint2double(0x43300000, (int)b), 0x1p52);
#else
  return (double)b;
#endif
}

// The rare path of every fast index function: THE binning function itself.
__host__ __device__ __noinline__ u32 slow_slot(double x, BinIndexer ix) { return (u32)ix.slot(x); }

// ---- f32 samples, even bins ---------------------------------------------------------
// Range tests in float are exact: for a float x, x >= lower <=> x >= ceil_f(lower)
// (the smallest float >= lower), x < upper <=> x < ceil_f(upper); NaN fails both.
struct EvenF32 {
  BinIndexer ix;
  u32 bins;
  double lower, upper, step, scale;
  float loF, hiF;  // loF <= x < hiF  <=>  lower <= x < upper
  bool incl_eq;    // last_bin_inclusive and upper is a float: x == upF counts in bins - 1
  float upF;
  // float-margin path (valid when `margin`): t = (x - flo) * fsc is within
  // delta_bins of the exact real bin coordinate, edge rounding included, so a
  // fractional part in [delta, 1 - delta] proves floor(t) is the bin.
  bool margin;
  float flo, fsc, delta, one_minus_delta;
};

HD u32 outside_even(float x, const EvenF32& p) {
  if (x != x) return p.bins + 2;
  if (x < p.loF) return p.bins;
  if (p.incl_eq && x == p.upF) return p.bins - 1;
  return p.bins + 1;
}

// MODE 0: BinIndexer::slot per sample (the generic path).
// MODE 1: exact double guess, both neighbouring edges checked, native conversions.
// MODE 2: same as 1 with magic-number conversions (DADD instead of F2I/I2F).
// MODE 3: float guess with a proven margin; slot() only for samples near an edge.
template <int MODE>
HD u32 slot_even_f32(float x, const EvenF32& p) {
  if constexpr (MODE == 0) {
    return (u32)p.ix.slot((double)x);
  } else if constexpr (MODE == 1 || MODE == 2) {
    if (!(x >= p.loF && x < p.hiF)) return outside_even(x, p);
    const double xd = (double)x;
    const double t = d_mul(d_sub(xd, p.lower), p.scale);
    u32 b;
    double db, db1;
    if constexpr (MODE == 1) {
      b = (u32)t;
      b = b < p.bins - 1 ? b : p.bins - 1;
      db = (double)b;
      db1 = (double)(b + 1);
    } else {
      b = d_lo(d_floor_magic(t));
      b = b < p.bins - 1 ? b : p.bins - 1;
      db = d_from_u32(b);
      db1 = d_add(db, 1.0);
    }
    bool ok = xd >= d_add(p.lower, d_mul(db, p.step));
    if (b + 1 < p.bins) ok = ok && xd < d_add(p.lower, d_mul(db1, p.step));
    return ok ? b : slow_slot(xd, p.ix);
  } else {
    if (!(x >= p.loF && x < p.hiF)) return outside_even(x, p);
    const float t = f_mul(f_sub(x, p.flo), p.fsc);
    const float tm = f_floor_magic(t);
    const u32 g = f_bits(tm) - 0x4B000000u;
    const float fr = f_sub(t, f_sub(tm, 8388608.f));  // exact
    if (fr >= p.delta && fr <= p.one_minus_delta && g < p.bins) return g;
    return slow_slot((double)x, p.ix);
  }
}

// ---- f32 samples, explicit edges ------------------------------------------------------
// E[i] = ceil_f(edge i): for a float x, x >= edge_i <=> x >= E[i]. The cell table maps
// cell(x) = floor(clamp((x - loF) * csc)) to the bin of the cell's first float plus
// the thresholds inside the cell; built on the host with the very same float
// function, so it is exact by construction (no error analysis needed).
struct EdgesF32 {
  BinIndexer ix;
  u32 bins;
  float loF, hiF;
  bool incl_eq;
  float upF;
  u32 half;        // binary search: power of two >= bins, halved
  const float* E;  // P = 2 * half thresholds, +inf padded
  u32 cells8;      // 8-byte entries {base or ~0, t1}
  float csc8, cmax8;
  const uint2* lut8;
  u32 cells16;  // 16-byte entries {base or ~0, t1, t2, t3}
  float csc16, cmax16;
  const uint4* lut16;
};

HD u32 outside_edges(float x, const EdgesF32& p) {
  if (x != x) return p.bins + 2;
  if (x < p.loF) return p.bins;
  if (p.incl_eq && x == p.upF) return p.bins - 1;
  return p.bins + 1;
}
HD u32 cell_of(float x, float lo, float csc, float cmax) {
  float t = f_mul(f_sub(x, lo), csc);
  t = fminf(fmaxf(t, 0.f), cmax);
  return f_bits(f_floor_magic(t)) - 0x4B000000u;
}
HD u32 bsearch_bin(float x, const float* E, u32 half) {
  u32 pos = 0;
  for (u32 s = half; s; s >>= 1)
    if (E[pos + s] <= x) pos += s;
  return pos;
}

// ---- packed 16-bit counters: exact bookkeeping ----------------------------------------
// Two 16-bit counters share a 32-bit word (low: even bin, high: odd bin). Every
// change of a word is an atomicAdd of (d_lo + 65536 * d_hi) that returns the old
// word, so the thread that makes a half cross 0 or 65536 knows it and credits the
// exact amount: a carry c out of the low half is taken back from the high half by
// a compensating add and credited to the low bin (65536 c); a carry c2 out of the
// high half is lost from the word and credited to the high bin. A half that
// reaches 0x8000 through an increment is lowered by 0x8000 (credited) so wraps
// practically never happen; the credits keep the result exact even if they do.
// Returns the follow-up operation (at most one) for the same word.
HD void packed16_step(u32 old, int d_lo, int d_hi, int& n_lo, int& n_hi, int& credit_lo, int& credit_hi) {
  const int lo = (int)(old & 0xFFFF), hi = (int)(old >> 16);
  const int sl = lo + d_lo;
  const int c = sl < 0 ? -1 : (sl > 0xFFFF ? 1 : 0);
  const int shh = hi + d_hi + c;
  const int c2 = shh < 0 ? -1 : (shh > 0xFFFF ? 1 : 0);
  credit_lo = c * 65536;
  credit_hi = c2 * 65536;
  n_lo = 0;
  n_hi = 0;
  if (c != 0) {
    n_hi = -c;
  } else if (d_lo == 1 && lo == 0x7FFF) {
    n_lo = -0x8000;
    credit_lo += 0x8000;
  } else if (d_lo == 0 && d_hi == 1 && hi == 0x7FFF) {
    n_hi = -0x8000;
    credit_hi += 0x8000;
  }
}

// =====================================================================================
// Device building blocks
// =====================================================================================
__device__ __forceinline__ u32 swz(u32 a) { return a ^ ((a >> 5) & 31u); }  // XOR-swizzle rows of 32 words
__device__ __forceinline__ size_t gtid() { return blockIdx.x * (size_t)blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t gstride() { return (size_t)gridDim.x * blockDim.x; }

// Grid-stride over 16-byte words, UNROLL loads in flight per thread.
template <int UNROLL, class Body>
__device__ __forceinline__ void for_words(const uint4* p, size_t n16, size_t i, size_t stride, Body&& body) {
  for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) body(v[u]);
  }
  for (; i < n16; i += stride) body(__ldcs(p + i));
}
template <class F>
__device__ __forceinline__ void each_u16(uint4 v, F&& f) {
  const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    f(w[k] & 0xFFFFu);
    f(w[k] >> 16);
  }
}
template <class F>
__device__ __forceinline__ void each_u32(uint4 v, F&& f) {
  f(v.x);
  f(v.y);
  f(v.z);
  f(v.w);
}
__device__ __forceinline__ void zero_smem(u32* h, u32 words) {
  for (u32 i = threadIdx.x; i < words; i += blockDim.x) h[i] = 0;
}

__global__ void stream_read(const uint4* p, size_t n16, u32* sink) {
  u32 acc = 0;
  for (size_t i = gtid(); i < n16; i += gstride()) {
    uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// =====================================================================================
// Case u16: 4096 even bins (12-bit images) and the general shift map
// =====================================================================================
// Integer samples, even bins of width 2^k on integer bounds: exact with integer ops.
struct IntShift {
  u32 lo, span_m1, k, bins;  // in range: (v - lo) <= span_m1 (unsigned)
};
HD u32 int_slot(u32 v, const IntShift& m) {
  const u32 d = v - m.lo;
  const u32 b = (d >> m.k) < m.bins - 1 ? (d >> m.k) : m.bins - 1;
  return d <= m.span_m1 ? b : (v < m.lo ? m.bins : m.bins + 1);
}

// One shared u32 histogram of S = bins + 3 slots per block, COPIES interleaved
// copies (copy = lane % COPIES), optional XOR swizzle against strided patterns.
// MAP 0: integer shift map; MAP 1: BinIndexer::slot per sample.
template <int COPIES, bool SWZ, int MAP>
__global__ void __launch_bounds__(512) k_u16_shared(const uint4* p, size_t n16, u32* out, IntShift m, BinIndexer ix) {
  extern __shared__ u32 h[];
  const u32 S = m.bins + 3;
  const u32 words = (S * COPIES + 31) & ~31u;
  zero_smem(h, words);
  __syncthreads();
  const u32 c = threadIdx.x & (COPIES - 1);
  for_words<2>(p, n16, gtid(), gstride(), [&](uint4 v) {
    each_u16(v, [&](u32 x) {
      u32 s = MAP == 0 ? int_slot(x, m) : (u32)ix.slot((double)x);
      u32 a = s * COPIES + c;
      if (SWZ) a = swz(a);
      atomicAdd(&h[a], 1u);
    });
  });
  __syncthreads();
  for (u32 s = threadIdx.x; s < S; s += blockDim.x) {
    u32 sum = 0;
#pragma unroll
    for (int k = 0; k < COPIES; ++k) sum += h[SWZ ? swz(s * COPIES + k) : s * COPIES + k];
    if (sum) atomicAdd(&out[s], sum);
  }
}

// =====================================================================================
// Case u16: 65536 bins (one per value)
// =====================================================================================
// Half of the bins (32768 u32 = 128 KB) per block. mode 0/1: that half, plain grid
// stride (two launches = two passes over the data). mode 2: one launch, blocks 2j and
// 2j+1 read the same words (the second read should hit L2) and count one half each.
template <int UNROLL>
__global__ void __launch_bounds__(1024, 1) k_u16_half(const uint4* p, size_t n16, u32* out, int mode) {
  extern __shared__ u32 h[];
  zero_smem(h, 32768);
  __syncthreads();
  u32 half;
  size_t first, stride;
  if (mode < 2) {
    half = (u32)mode;
    first = gtid();
    stride = gstride();
  } else {
    half = blockIdx.x & 1;
    first = (blockIdx.x >> 1) * (size_t)blockDim.x + threadIdx.x;
    stride = (size_t)(gridDim.x >> 1) * blockDim.x;
  }
  for_words<UNROLL>(p, n16, first, stride, [&](uint4 v) {
    each_u16(v, [&](u32 x) {
      if ((x >> 15) == half) atomicAdd(&h[swz(x & 32767u)], 1u);
    });
  });
  __syncthreads();
  for (u32 i = threadIdx.x; i < 32768; i += blockDim.x) {
    u32 c = h[swz(i)];
    if (c) atomicAdd(&out[half * 32768 + i], c);
  }
}

// Thread-block cluster of CL blocks (one per SM); block r keeps bins
// [r * 65536/CL, (r+1) * 65536/CL) in its shared memory (distributed shared memory);
// every sample is one atomic on the owner's shared memory: red.shared::cluster for
// all (SPLIT false) or a local ATOMS when the owner is this block (SPLIT true).
template <int CL, bool SPLIT, int UNROLL, int BLOCK>
__global__ void __launch_bounds__(BLOCK) k_u16_cluster(const uint4* p, size_t n16, u32* out) {
  constexpr u32 PER = 65536u / CL;
  constexpr int SHIFT = CL == 2 ? 15 : (CL == 4 ? 14 : 13);
  extern __shared__ u32 h[];
  cg::cluster_group cluster = cg::this_cluster();
  const u32 rank = cluster.block_rank();
  zero_smem(h, PER);
  cluster.sync();
  const u32 local = (u32)__cvta_generic_to_shared(h);
  u32 base[CL];
#pragma unroll
  for (int r = 0; r < CL; ++r) asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(base[r]) : "r"(local), "r"(r));
  for_words<UNROLL>(p, n16, gtid(), gstride(), [&](uint4 v) {
    each_u16(v, [&](u32 x) {
      const u32 r = x >> SHIFT;
      const u32 off = swz(x & (PER - 1));
      if (SPLIT && r == rank) {
        atomicAdd(&h[off], 1u);
      } else {
        u32 b = base[0];
#pragma unroll
        for (int k = 1; k < CL; ++k) b = r == (u32)k ? base[k] : b;
        asm volatile("red.relaxed.cluster.shared::cluster.add.u32 [%0], %1;" ::"r"(b + off * 4), "r"(1u));
      }
    });
  });
  cluster.sync();
  for (u32 i = threadIdx.x; i < PER; i += blockDim.x) {
    u32 c = h[swz(i)];
    if (c) atomicAdd(&out[rank * PER + i], c);
  }
}

// All 65536 bins as packed 16-bit counters in 128 KB, exact through packed16_step.
__device__ __noinline__ void packed16_rare(u32* h, u32* out, u32 addr, u32 bin_lo, int d_lo, int d_hi, u32 old) {
  for (int guard = 0; guard < 8; ++guard) {
    int n_lo, n_hi, cl, ch;
    packed16_step(old, d_lo, d_hi, n_lo, n_hi, cl, ch);
    if (cl) atomicAdd(&out[bin_lo], (u32)cl);
    if (ch) atomicAdd(&out[bin_lo + 1], (u32)ch);
    if (!n_lo && !n_hi) return;
    d_lo = n_lo;
    d_hi = n_hi;
    old = atomicAdd(&h[addr], (u32)n_lo + ((u32)n_hi << 16));
  }
}
template <int UNROLL>
__global__ void __launch_bounds__(1024, 1) k_u16_packed16(const uint4* p, size_t n16, u32* out) {
  extern __shared__ u32 h[];
  zero_smem(h, 32768);
  __syncthreads();
  for_words<UNROLL>(p, n16, gtid(), gstride(), [&](uint4 v) {
    each_u16(v, [&](u32 x) {
      const u32 a = swz(x >> 1);
      const u32 sh = (x & 1u) << 4;
      const u32 old = atomicAdd(&h[a], 1u << sh);
      if (((old >> sh) & 0x7FFFu) == 0x7FFFu) packed16_rare(h, out, a, x & ~1u, sh ? 0 : 1, sh ? 1 : 0, old);
    });
  });
  __syncthreads();
  for (u32 i = threadIdx.x; i < 32768; i += blockDim.x) {
    u32 w = h[swz(i)];
    if (w & 0xFFFF) atomicAdd(&out[2 * i], w & 0xFFFF);
    if (w >> 16) atomicAdd(&out[2 * i + 1], w >> 16);
  }
}

// =====================================================================================
// Case f32, even bins
// =====================================================================================
template <int MODE>
__global__ void __launch_bounds__(512) k_f32_even(const uint4* p, size_t n16, u32* out, EvenF32 prm) {
  extern __shared__ u32 h[];
  const u32 S = prm.bins + 3;
  zero_smem(h, S);
  __syncthreads();
  for_words<2>(p, n16, gtid(), gstride(), [&](uint4 v) {
    each_u32(v, [&](u32 w) { atomicAdd(&h[slot_even_f32<MODE>(__uint_as_float(w), prm)], 1u); });
  });
  __syncthreads();
  for (u32 s = threadIdx.x; s < S; s += blockDim.x)
    if (h[s]) atomicAdd(&out[s], h[s]);
}

// =====================================================================================
// Case f32, explicit edges
// =====================================================================================
// MODE 0: slot() (binary search over double edges in global memory); 1: branchless
// binary search over float thresholds in shared memory; 2: cell table, 8-byte
// entries; 3: cell table, 16-byte entries. LANES: 32 lane-column copies of the
// (small) histogram, conflict-free atomics, instead of one copy.
template <int MODE, bool LANES>
__global__ void __launch_bounds__(512) k_f32_edges(const uint4* p, size_t n16, u32* out, EdgesF32 prm) {
  extern __shared__ u32 smem[];
  const u32 S = prm.bins + 3;
  const u32 hist_words = LANES ? S * 32 : S;
  u32* h = smem;
  float* E = reinterpret_cast<float*>(smem + hist_words);
  const u32 P = 2 * prm.half;
  uint2* L8 = reinterpret_cast<uint2*>(smem + ((hist_words + P + 3) & ~3u));
  uint4* L16 = reinterpret_cast<uint4*>(L8);
  zero_smem(h, hist_words);
  if (MODE >= 1)
    for (u32 i = threadIdx.x; i < P; i += blockDim.x) E[i] = prm.E[i];
  if (MODE == 2)
    for (u32 i = threadIdx.x; i < prm.cells8; i += blockDim.x) L8[i] = prm.lut8[i];
  if (MODE == 3)
    for (u32 i = threadIdx.x; i < prm.cells16; i += blockDim.x) L16[i] = prm.lut16[i];
  __syncthreads();
  const u32 lane = threadIdx.x & 31;
  auto slot = [&](float x) -> u32 {
    if constexpr (MODE == 0) {
      return (u32)prm.ix.slot((double)x);
    } else {
      if (!(x >= prm.loF && x < prm.hiF)) return outside_edges(x, prm);
      if constexpr (MODE == 1) {
        return bsearch_bin(x, E, prm.half);
      } else if constexpr (MODE == 2) {
        const uint2 e = L8[cell_of(x, prm.loF, prm.csc8, prm.cmax8)];
        u32 b = e.x + (x >= __uint_as_float(e.y) ? 1u : 0u);
        if (e.x == ~0u) b = bsearch_bin(x, E, prm.half);
        return b;
      } else {
        const uint4 e = L16[cell_of(x, prm.loF, prm.csc16, prm.cmax16)];
        u32 b = e.x + (x >= __uint_as_float(e.y) ? 1u : 0u) + (x >= __uint_as_float(e.z) ? 1u : 0u) +
                (x >= __uint_as_float(e.w) ? 1u : 0u);
        if (e.x == ~0u) b = bsearch_bin(x, E, prm.half);
        return b;
      }
    }
  };
  for_words<2>(p, n16, gtid(), gstride(), [&](uint4 v) {
    each_u32(v, [&](u32 w) {
      const u32 s = slot(__uint_as_float(w));
      atomicAdd(&h[LANES ? s * 32 + lane : s], 1u);
    });
  });
  __syncthreads();
  for (u32 s = threadIdx.x; s < S; s += blockDim.x) {
    u32 sum = 0;
    if (LANES) {
      for (u32 c = 0; c < 32; ++c) sum += h[s * 32 + ((c + s) & 31)];
    } else {
      sum = h[s];
    }
    if (sum) atomicAdd(&out[s], sum);
  }
}

// =====================================================================================
// Case interleaved u8 pixels
// =====================================================================================
// 4 channels per 32-bit word (RGBA); MASK = active channels. COLS copies of every
// channel's 256 counters, column = lane % COLS: 32 = lane columns (conflict-free,
// 32 KB per channel), 16 (half the memory, lanes l and l+16 may collide), 1 (one copy).
template <u32 MASK, int COLS, int UNROLL, int BLOCK>
__global__ void __launch_bounds__(BLOCK) k_rgba(const uint4* p, size_t n16, u32* out) {
  constexpr int NCH = __builtin_popcount(MASK);
  extern __shared__ u32 h[];
  zero_smem(h, NCH * 256 * COLS);
  __syncthreads();
  u32* col = h + (COLS > 1 ? (threadIdx.x & (COLS - 1)) : 0);
  auto pixel = [&](u32 w) {
    int k = 0;
#pragma unroll
    for (int ch = 0; ch < 4; ++ch)
      if (MASK >> ch & 1) {
        atomicAdd(col + ((k * 256 + ((w >> (8 * ch)) & 0xFF)) * COLS), 1u);
        ++k;
      }
  };
  for_words<UNROLL>(p, n16, gtid(), gstride(), [&](uint4 v) {
    pixel(v.x);
    pixel(v.y);
    pixel(v.z);
    pixel(v.w);
  });
  __syncthreads();
  for (u32 r = threadIdx.x; r < NCH * 256; r += blockDim.x) {
    u32 sum = 0;
#pragma unroll 8
    for (int c = 0; c < COLS; ++c) sum += h[r * COLS + ((c + r) & (COLS - 1))];
    if (sum) atomicAdd(&out[r], sum);
  }
}

// 3 interleaved channels (RGB, 24-bit pixels), lane columns. A warp reads 3 x 32
// consecutive 16-byte words (512 pixels, coalesced); byte j of row r of lane l is
// channel (l + 2r + j) mod 3, so each lane keeps its 3 channel bases rotated by
// l mod 3 and every byte uses a compile-time index.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) k_rgb24(const uint4* p, size_t n16, u32* out) {
  extern __shared__ u32 h[];
  zero_smem(h, 3 * 256 * 32);
  __syncthreads();
  const u32 lane = threadIdx.x & 31;
  const u32 ph = lane % 3;
  u32* rot[3];
#pragma unroll
  for (int k = 0; k < 3; ++k) rot[k] = h + ((ph + k) % 3) * 256 * 32 + lane;
  const size_t warps_total = gstride() / 32;
  const size_t chunks = n16 / 96;
  for (size_t c = gtid() / 32; c < chunks; c += warps_total) {
    uint4 v[3];
#pragma unroll
    for (int r = 0; r < 3; ++r) v[r] = __ldcs(p + c * 96 + r * 32 + lane);
#pragma unroll
    for (int r = 0; r < 3; ++r) {
      const u32 w[4] = {v[r].x, v[r].y, v[r].z, v[r].w};
#pragma unroll
      for (int j = 0; j < 16; ++j) atomicAdd(rot[(2 * r + j) % 3] + (((w[j / 4] >> (8 * (j % 4))) & 0xFF) << 5), 1u);
    }
  }
  __syncthreads();
  for (u32 r = threadIdx.x; r < 3 * 256; r += blockDim.x) {
    u32 sum = 0;
#pragma unroll 8
    for (int c = 0; c < 32; ++c) sum += h[r * 32 + ((c + r) & 31)];
    if (sum) atomicAdd(&out[r], sum);
  }
}

// =====================================================================================
// Case weighted: f32 samples, f32 weights, f64 sums
// =====================================================================================
// ACC 0: shared f64 atomicAdd; 1: four copies (lane % 4); 2: f32 shared atomics
// flushed into f64 every `flush_iters` iterations (approximate: shows the cost of
// the alternative); 3: global f64 atomics (what torch.bincount does); 4: shared f64
// with a warp-uniform fast path (whole warp in one bin: one shuffle sum, one atomic).
template <int ACC>
__global__ void __launch_bounds__(512) k_weighted(const uint4* xs, const uint4* ws, size_t n16, double* out,
                                                  EvenF32 prm, int flush_iters) {
  extern __shared__ double hd[];
  const u32 S = prm.bins + 3;
  const u32 lane = threadIdx.x & 31;
  float* hf = reinterpret_cast<float*>(hd + (ACC == 2 ? S : 0));
  if (ACC == 0 || ACC == 4)
    for (u32 i = threadIdx.x; i < S; i += blockDim.x) hd[i] = 0.0;
  if (ACC == 1)
    for (u32 i = threadIdx.x; i < 4 * S; i += blockDim.x) hd[i] = 0.0;
  if (ACC == 2)
    for (u32 i = threadIdx.x; i < S; i += blockDim.x) {
      hd[i] = 0.0;
      hf[i] = 0.f;
    }
  __syncthreads();
  auto add = [&](u32 s, float w, bool valid) {
    if constexpr (ACC == 0) {
      if (valid) atomicAdd(&hd[s], (double)w);
    } else if constexpr (ACC == 1) {
      if (valid) atomicAdd(&hd[s * 4 + (lane & 3)], (double)w);
    } else if constexpr (ACC == 2) {
      if (valid) atomicAdd(&hf[s], w);
    } else if constexpr (ACC == 3) {
      if (valid) atomicAdd(&out[s], (double)w);
    } else {
      const u32 s0 = __shfl_sync(0xFFFFFFFFu, s, 0);
      if (__all_sync(0xFFFFFFFFu, s == s0)) {
        double v = valid ? (double)w : 0.0;
#pragma unroll
        for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
        if (lane == 0) atomicAdd(&hd[s0], v);
      } else if (valid) {
        atomicAdd(&hd[s], (double)w);
      }
    }
  };
  // Warp-uniform trip count (all 32 lanes iterate together; invalid lanes add nothing)
  // and, for ACC 2, a block-uniform one (barriers inside the loop).
  const size_t stride = gstride();
  const size_t warp_first = gtid() - lane;
  const size_t iters = (n16 + stride - 1) / stride;
  for (size_t it = 0; it < iters; ++it) {
    const size_t i = warp_first + it * stride + lane;
    const bool valid = i < n16;
    uint4 xv = make_uint4(0, 0, 0, 0), wv = make_uint4(0, 0, 0, 0);
    if (valid) {
      xv = __ldcs(xs + i);
      wv = __ldcs(ws + i);
    }
    add(slot_even_f32<3>(__uint_as_float(xv.x), prm), __uint_as_float(wv.x), valid);
    add(slot_even_f32<3>(__uint_as_float(xv.y), prm), __uint_as_float(wv.y), valid);
    add(slot_even_f32<3>(__uint_as_float(xv.z), prm), __uint_as_float(wv.z), valid);
    add(slot_even_f32<3>(__uint_as_float(xv.w), prm), __uint_as_float(wv.w), valid);
    if (ACC == 2 && (it + 1) % flush_iters == 0) {
      __syncthreads();
      for (u32 s = threadIdx.x; s < S; s += blockDim.x) {
        hd[s] += (double)hf[s];
        hf[s] = 0.f;
      }
      __syncthreads();
    }
  }
  __syncthreads();
  if constexpr (ACC != 3) {
    for (u32 s = threadIdx.x; s < S; s += blockDim.x) {
      double v = 0.0;
      if (ACC == 1) v = hd[4 * s] + hd[4 * s + 1] + hd[4 * s + 2] + hd[4 * s + 3];
      else if (ACC == 2) v = hd[s] + (double)hf[s];
      else v = hd[s];
      if (v != 0.0) atomicAdd(&out[s], v);
    }
  }
}

// =====================================================================================
// Case u32 keys, 2^20 / 2^24 even bins over [0, 2^32)
// =====================================================================================
// Global atomics straight into the per-call u32 accumulator (L2-resident for 2^20
// bins: 4 MB; 64 MB for 2^24). AGG: a warp whose 32 samples share one bin adds 32 once.
template <bool AGG>
__global__ void __launch_bounds__(512) k_u32_global(const uint4* p, size_t n16, u32* out, u32 shift) {
  const u32 lane = threadIdx.x & 31;
  const size_t stride = gstride();
  const size_t iters = (n16 + stride - 1) / stride;
  const size_t warp_first = gtid() - lane;
  for (size_t it = 0; it < iters; ++it) {
    const size_t i = warp_first + it * stride + lane;
    const bool valid = i < n16;
    uint4 v = valid ? __ldcs(p + i) : make_uint4(0, 0, 0, 0);
    each_u32(v, [&](u32 key) {
      const u32 b = key >> shift;
      if (AGG) {
        const u32 b0 = __shfl_sync(0xFFFFFFFFu, b, 0);
        const u32 all_valid = __ballot_sync(0xFFFFFFFFu, valid);
        if (__all_sync(0xFFFFFFFFu, b == b0)) {
          if (lane == 0) atomicAdd(&out[b0], (u32)__popc(all_valid));
          return;
        }
      }
      if (valid) atomicAdd(&out[b], 1u);
    });
  }
}

// After a partial radix sort by the top `bb` bits of the key (the bucket), each
// block takes an equal slice of the sorted keys, and for each bucket run in its
// slice counts the 2^lbits bins of that bucket in shared memory, then flushes.
__global__ void __launch_bounds__(1024) k_bucket_hist(const u32* keys, size_t n, u32* out, u32 shift, u32 bucket_shift,
                                                      u32 lbits, size_t chunk) {
  extern __shared__ u32 h[];
  const u32 nb = 1u << lbits;
  const size_t c0 = blockIdx.x * chunk;
  const size_t c1 = min(n, c0 + chunk);
  if (c0 >= c1) return;
  zero_smem(h, nb);
  __syncthreads();
  size_t pos = c0;
  while (pos < c1) {
    const u32 q = keys[pos] >> bucket_shift;
    size_t end = c1;
    if ((keys[c1 - 1] >> bucket_shift) != q) {  // first index with a larger bucket, by bisection
      size_t lo = pos, hi = c1 - 1;             // keys[lo] in q, keys[hi] beyond
      while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((keys[mid] >> bucket_shift) == q) lo = mid; else hi = mid;
      }
      end = hi;
    }
    const u32 mask = nb - 1;
    size_t i = pos + threadIdx.x;
    const size_t B = blockDim.x;
    for (; i + 3 * B < end; i += 4 * B) {
      u32 k0 = __ldcs(keys + i), k1 = __ldcs(keys + i + B), k2 = __ldcs(keys + i + 2 * B), k3 = __ldcs(keys + i + 3 * B);
      atomicAdd(&h[(k0 >> shift) & mask], 1u);
      atomicAdd(&h[(k1 >> shift) & mask], 1u);
      atomicAdd(&h[(k2 >> shift) & mask], 1u);
      atomicAdd(&h[(k3 >> shift) & mask], 1u);
    }
    for (; i < end; i += B) atomicAdd(&h[(__ldcs(keys + i) >> shift) & mask], 1u);
    __syncthreads();
    for (u32 j = threadIdx.x; j < nb; j += blockDim.x) {
      const u32 c = h[j];
      if (c) {
        atomicAdd(&out[((size_t)q << lbits) + j], c);
        h[j] = 0;
      }
    }
    __syncthreads();
    pos = end;
  }
}

// Scatter the run-length encoding (unique bins, counts) into the histogram.
__global__ void k_scatter(const u32* unique, const u32* counts, const int* num_runs, u32* out) {
  const int n = *num_runs;
  for (size_t i = gtid(); i < (size_t)n; i += gstride()) out[unique[i]] = counts[i];
}

struct ShiftOp {
  u32 shift;
  __host__ __device__ u32 operator()(u32 k) const { return k >> shift; }
};

// =====================================================================================
// Host side: parameters, tables, data, references
// =====================================================================================
BinIndexer make_even(u64 bins, double lo, double hi, bool incl = false) {
  BinIndexer ix{};
  ix.kind = BinKind::even;
  ix.bins = bins;
  ix.lower = lo;
  ix.upper = hi;
  ix.step = (hi - lo) / static_cast<double>(bins);
  ix.scale = static_cast<double>(bins) / (hi - lo);
  ix.edges = nullptr;
  ix.last_bin_inclusive = incl;
  return ix;
}
BinIndexer make_edges_ix(const std::vector<double>& e, const double* ptr, bool incl = false) {
  BinIndexer ix = make_even(e.size() - 1, e.front(), e.back(), incl);
  ix.kind = BinKind::edges;
  ix.edges = ptr;
  return ix;
}

// The smallest float >= d.
float ceil_f(double d) {
  float f = (float)d;
  if ((double)f < d) f = std::nextafterf(f, INFINITY);
  return f;
}

EvenF32 make_even_f32(const BinIndexer& ix) {
  EvenF32 p{};
  p.ix = ix;
  p.bins = (u32)ix.bins;
  p.lower = ix.lower;
  p.upper = ix.upper;
  p.step = ix.step;
  p.scale = ix.scale;
  p.loF = ceil_f(ix.lower);
  p.hiF = ceil_f(ix.upper);
  p.upF = (float)ix.upper;
  p.incl_eq = ix.last_bin_inclusive && (double)p.upF == ix.upper;
  // Margin (docs/PERFORMANCE-general.md): |t - u| <= 3.0001 * 2^-24 * bins + |flo - lower| / W
  // for the float guess t and the real coordinate u = (x - lower) / W; the double
  // edges deviate from lower + i W by at most 3.02 * 2^-53 * bins + 1.02 * 2^-53 * max|bound| / W.
  const double bins = (double)ix.bins;
  const double W = (ix.upper - ix.lower) / bins;
  p.flo = (float)ix.lower;
  p.fsc = (float)ix.scale;
  const double flo_err = std::fabs((double)p.flo - ix.lower);
  const double delta = 3.0001 * 0x1p-24 * bins + 1.0001 * flo_err / W + 3.02 * 0x1p-53 * bins +
                       1.02 * 0x1p-53 * std::max(std::fabs(ix.lower), std::fabs(ix.upper)) / W + 0x1p-40;
  float df = (float)delta;
  if ((double)df < delta) df = std::nextafterf(df, INFINITY);
  p.delta = df;
  p.one_minus_delta = std::nextafterf((float)(1.0 - (double)df), 0.f);
  p.margin = delta < 0.25 && ix.bins <= (1u << 22) && std::isnormal(p.fsc) && std::isfinite(p.flo) &&
             std::fabs(ix.lower) < 1e37 && std::fabs(ix.upper) < 1e37;
  return p;
}

struct CellTable {
  u32 cells = 0, flagged = 0, max_internal = 0;
  float csc = 0, cmax = 0;
  std::vector<u32> base;
  std::vector<std::vector<float>> internal;
};
// E: bins + 1 float thresholds (E[0] = loF, E[bins] = hiF). Exact by construction:
// for x in cell c, bin(x) = base[c] + #{t in internal[c] : t <= x}.
CellTable build_cells(const std::vector<float>& E, u32 bins, u32 cells) {
  CellTable t;
  t.cells = cells;
  const float loF = E[0], hiF = E[bins];
  t.csc = (float)((double)cells / ((double)hiF - (double)loF));
  t.cmax = (float)cells - 0.5f;
  std::vector<int> diff(cells + 1, 0);
  t.internal.assign(cells, {});
  for (u32 i = 1; i < bins; ++i) {
    const float Ei = E[i];
    if (!(Ei < hiF)) continue;  // no in-range float reaches it
    if (Ei <= loF) {            // every in-range float is at or above it
      diff[0]++;
      continue;
    }
    const float pv = std::nextafterf(Ei, -INFINITY);
    const u32 cp = cell_of(pv, loF, t.csc, t.cmax), ce = cell_of(Ei, loF, t.csc, t.cmax);
    diff[cp + 1]++;
    if (cp == ce) t.internal[ce].push_back(Ei);
  }
  t.base.resize(cells);
  int run = 0;
  for (u32 c = 0; c < cells; ++c) {
    run += diff[c];
    t.base[c] = (u32)run;
    t.max_internal = std::max<u32>(t.max_internal, (u32)t.internal[c].size());
  }
  return t;
}

struct EdgesHost {
  EdgesF32 p{};
  std::vector<float> E;  // 2 * half entries, +inf padded
  std::vector<uint2> lut8;
  std::vector<uint4> lut16;
  CellTable t8, t16;
};
EdgesHost make_edges_f32(const BinIndexer& ix, const std::vector<double>& edges) {
  EdgesHost h;
  EdgesF32& p = h.p;
  p.ix = ix;
  p.bins = (u32)ix.bins;
  p.loF = ceil_f(ix.lower);
  p.hiF = ceil_f(ix.upper);
  p.upF = (float)ix.upper;
  p.incl_eq = ix.last_bin_inclusive && (double)p.upF == ix.upper;
  std::vector<float> thr(p.bins + 1);
  for (u32 i = 0; i <= p.bins; ++i) thr[i] = ceil_f(edges[i]);
  u32 P = 1;
  while (P < p.bins) P *= 2;
  p.half = P / 2;
  h.E.assign(std::max<u32>(P, 2), INFINITY);
  for (u32 i = 0; i < p.bins && i < P; ++i) h.E[i] = thr[i];
  if (p.half == 0) p.half = 0;  // one bin: the search loop does nothing, pos = 0
  u32 c8 = 64;
  while (c8 < 2 * p.bins) c8 *= 2;
  for (; ; c8 *= 2) {
    h.t8 = build_cells(thr, p.bins, c8);
    u32 flagged = 0;
    for (auto& v : h.t8.internal) flagged += v.size() > 1;
    h.t8.flagged = flagged;
    if (flagged == 0 || c8 >= 8192) break;
  }
  u32 c16 = 32;
  while (c16 < p.bins / 2) c16 *= 2;
  for (; ; c16 *= 2) {
    h.t16 = build_cells(thr, p.bins, c16);
    u32 flagged = 0;
    for (auto& v : h.t16.internal) flagged += v.size() > 3;
    h.t16.flagged = flagged;
    if (flagged == 0 || c16 >= 4096) break;
  }
  const u32 inf = f_bits(INFINITY);
  h.lut8.resize(c8);
  for (u32 c = 0; c < c8; ++c) {
    auto& in = h.t8.internal[c];
    h.lut8[c] = in.size() <= 1 ? make_uint2(h.t8.base[c], in.empty() ? inf : f_bits(in[0])) : make_uint2(~0u, 0);
  }
  h.lut16.resize(c16);
  for (u32 c = 0; c < c16; ++c) {
    auto& in = h.t16.internal[c];
    if (in.size() <= 3) {
      u32 t[3] = {inf, inf, inf};
      for (size_t k = 0; k < in.size(); ++k) t[k] = f_bits(in[k]);
      h.lut16[c] = make_uint4(h.t16.base[c], t[0], t[1], t[2]);
    } else {
      h.lut16[c] = make_uint4(~0u, 0, 0, 0);
    }
  }
  p.cells8 = c8;
  p.csc8 = h.t8.csc;
  p.cmax8 = h.t8.cmax;
  p.cells16 = c16;
  p.csc16 = h.t16.csc;
  p.cmax16 = h.t16.cmax;
  return h;
}

// Host versions of the two table lookups (for --selftest).
u32 host_edges_slot(float x, const EdgesHost& h, int mode) {
  const EdgesF32& p = h.p;
  if (!(x >= p.loF && x < p.hiF)) return outside_edges(x, p);
  if (mode == 1) return bsearch_bin(x, h.E.data(), p.half);
  if (mode == 2) {
    uint2 e = h.lut8[cell_of(x, p.loF, p.csc8, p.cmax8)];
    if (e.x == ~0u) return bsearch_bin(x, h.E.data(), p.half);
    return e.x + (x >= f_from_bits(e.y) ? 1u : 0u);
  }
  uint4 e = h.lut16[cell_of(x, p.loF, p.csc16, p.cmax16)];
  if (e.x == ~0u) return bsearch_bin(x, h.E.data(), p.half);
  return e.x + (x >= f_from_bits(e.y)) + (x >= f_from_bits(e.z)) + (x >= f_from_bits(e.w));
}

unsigned n_threads() { return std::max(1u, std::min(16u, std::thread::hardware_concurrency())); }

template <class F>
void parallel_for(size_t n, F&& f) {
  const unsigned T = n_threads();
  std::vector<std::thread> th;
  const size_t chunk = (n + T - 1) / T;
  for (unsigned t = 0; t < T; ++t)
    th.emplace_back([&, t] {
      size_t a = t * chunk, b = std::min(n, a + chunk);
      if (a < b) f(t, a, b);
    });
  for (auto& x : th) x.join();
}

inline u64 mix64(u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline double unit(u64 h) { return (double)(h >> 11) * 0x1p-53; }
inline double gauss4(u64 h) {  // mean 0, sd 1, from four 16-bit uniforms
  double s = (double)(h & 0xFFFF) + (double)((h >> 16) & 0xFFFF) + (double)((h >> 32) & 0xFFFF) + (double)(h >> 48);
  return (s / 65536.0 - 2.0) / 0.57735;
}

// Counts per slot of n samples, in parallel (u32 per thread, summed).
template <class T, class SlotF>
std::vector<u64> ref_counts(const unsigned char* data, size_t n, size_t slots, SlotF slot) {
  const unsigned NT = n_threads();
  std::vector<std::vector<u32>> part(NT);
  parallel_for(n, [&](unsigned t, size_t a, size_t b) {
    part[t].assign(slots, 0);
    for (size_t i = a; i < b; ++i) {
      T x;
      std::memcpy(&x, data + i * sizeof(T), sizeof(T));
      part[t][slot(x)]++;
    }
  });
  std::vector<u64> r(slots, 0);
  for (auto& p : part)
    if (!p.empty())
      for (size_t s = 0; s < slots; ++s) r[s] += p[s];
  return r;
}

std::vector<uint8_t> load_pgm(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> px;
  if (!f) return px;
  std::string magic;
  f >> magic;
  auto skip = [&] {
    int c;
    while ((c = f.peek()) != EOF) {
      if (c == '#') {
        std::string line;
        std::getline(f, line);
      } else if (std::isspace(c)) {
        f.get();
      } else {
        break;
      }
    }
  };
  int w = 0, h = 0, maxv = 0;
  skip();
  f >> w;
  skip();
  f >> h;
  skip();
  f >> maxv;
  f.get();
  if (magic != "P5" || w <= 0 || h <= 0 || maxv > 255) return px;
  px.resize((size_t)w * h);
  f.read((char*)px.data(), px.size());
  return px;
}

// =====================================================================================
// Harness
// =====================================================================================
struct Ctx {
  size_t bytes = size_t{1} << 30;
  unsigned char* host = nullptr;
  unsigned char* d_in = nullptr;
  u32* d_out = nullptr;
  double* d_wout = nullptr;
  u32* d_sink = nullptr;
  int sms = 0;
  std::vector<uint8_t> image;
};

struct Variant {
  std::string name;
  std::function<void()> run;
  int kind = 0;  // -1 read limit, 0 u32 counts (all slots), 1 CUB (int, bins only), 2 f64 sums
  double tol = 1e-9;
};
struct Dist {
  std::string name;
  std::function<void(unsigned char*, size_t)> gen;  // fills `bytes` bytes
};
struct Case {
  std::string key, title;
  size_t bytes = 0;  // input bytes timed (GB/s = bytes / time)
  size_t slots = 0;  // counters compared
  size_t cub_bins = 0;
  std::vector<Dist> dists;
  // reference counts (kind 0/1) or sums (kind 2)
  std::function<void(const unsigned char*, std::vector<u64>&, std::vector<double>&)> reference;
  std::vector<Variant> variants;
  std::vector<std::string> notes;
  std::vector<void*> device_allocs;
};

template <class K>
int occ_grid(const Ctx& c, K kernel, int block, size_t smem) {
  if (smem > 48 * 1024) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, block, smem));
  if (per < 1) {
    std::fprintf(stderr, "kernel does not fit (block %d, smem %zu)\n", block, smem);
    std::exit(1);
  }
  return per * c.sms;
}
template <class K>
std::string kinfo(const std::string& name, K kernel, int grid, int block, size_t smem) {
  cudaFuncAttributes a{};
  CK(cudaFuncGetAttributes(&a, kernel));
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: grid %d x %d, %.1f KB dynamic smem, %d regs, %zu B local (spills)",
                name.c_str(), grid, block, smem / 1024.0, a.numRegs, (size_t)a.localSizeBytes);
  return buf;
}

double median_ms(const std::function<void()>& f, int* reps_used) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  float first = 0;
  CK(cudaEventRecord(a));
  f();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  CK(cudaEventElapsedTime(&first, a, b));
  // Median of 15 after 3 warm-ups; slow candidates (global atomics on skewed data,
  // CUB's global-memory fallback) get fewer runs to keep the study short.
  int warm = first > 50 ? 0 : 3, reps = first > 200 ? 3 : (first > 50 ? 5 : 15);
  for (int w = 0; w < warm; ++w) f();
  std::vector<float> ms(reps);
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms[r], a, b));
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  *reps_used = reps;
  return ms[reps / 2];
}

void run_case(Ctx& c, Case& k) {
  std::printf("\n### %s\n\n", k.title.c_str());
  for (auto& n : k.notes) std::printf("- %s\n", n.c_str());
  const size_t V = k.variants.size(), D = k.dists.size();
  std::vector<std::vector<double>> gbs(V, std::vector<double>(D, 0)), err(V, std::vector<double>(D, 0));
  std::vector<std::vector<std::string>> flag(V, std::vector<std::string>(D));
  std::vector<std::vector<int>> reps(V, std::vector<int>(D, 0));
  double t_case = 0;
  for (size_t d = 0; d < D; ++d) {
    auto t0 = std::chrono::steady_clock::now();
    k.dists[d].gen(c.host, k.bytes);
    std::vector<u64> ref;
    std::vector<double> refw;
    k.reference(c.host, ref, refw);
    CK(cudaMemcpy(c.d_in, c.host, k.bytes, cudaMemcpyHostToDevice));
    for (size_t v = 0; v < V; ++v) {
      Variant& var = k.variants[v];
      if (var.kind >= 0) {
        if (var.kind == 2) CK(cudaMemset(c.d_wout, 0, k.slots * sizeof(double)));
        else CK(cudaMemset(c.d_out, 0, k.slots * sizeof(u32)));
        var.run();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (var.kind == 2) {
          std::vector<double> got(k.slots);
          CK(cudaMemcpy(got.data(), c.d_wout, k.slots * sizeof(double), cudaMemcpyDeviceToHost));
          double e = 0;
          for (size_t s = 0; s < k.slots; ++s) {
            double denom = std::max(std::fabs(refw[s]), 1e-300);
            e = std::max(e, refw[s] == 0 ? (got[s] == 0 ? 0.0 : 1.0) : std::fabs(got[s] - refw[s]) / denom);
          }
          err[v][d] = e;
          if (!(e <= var.tol)) flag[v][d] = " WRONG";
        } else {
          std::vector<u32> got(k.slots);
          CK(cudaMemcpy(got.data(), c.d_out, k.slots * sizeof(u32), cudaMemcpyDeviceToHost));
          size_t upto = var.kind == 1 ? k.cub_bins : k.slots, bad = 0;
          for (size_t s = 0; s < upto; ++s) bad += got[s] != (u32)ref[s];
          if (bad) flag[v][d] = var.kind == 1 ? " ~" + std::to_string(bad) : " WRONG(" + std::to_string(bad) + ")";
        }
      }
      double ms = median_ms(var.run, &reps[v][d]);
      gbs[v][d] = k.bytes / ms / 1e6;
    }
    t_case += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // The table: GB/s (% of the read limit of the same distribution, x the first CUB-like row).
  size_t lim = V, base = V;
  for (size_t v = 0; v < V; ++v) {  // x column: CUB where it ran, else the first measured row
    if (k.variants[v].kind == -1 && lim == V) lim = v;
    if (k.variants[v].kind == 1 && base == V) base = v;
  }
  for (size_t v = 0; v < V && base == V; ++v)
    if (k.variants[v].kind != -1) base = v;
  std::printf("\n| variant |");
  for (auto& d : k.dists) std::printf(" %s |", d.name.c_str());
  std::printf("\n|---|");
  for (size_t d = 0; d < D; ++d) std::printf("---|");
  std::printf("\n");
  for (size_t v = 0; v < V; ++v) {
    std::printf("| %s |", k.variants[v].name.c_str());
    for (size_t d = 0; d < D; ++d) {
      if (k.variants[v].kind == -1) {
        std::printf(" %.0f |", gbs[v][d]);
        continue;
      }
      std::printf(" %.0f (%.0f%%, %.2fx)%s", gbs[v][d], 100.0 * gbs[v][d] / gbs[lim][d], gbs[v][d] / gbs[base][d],
                  flag[v][d].c_str());
      if (k.variants[v].kind == 2) std::printf(" err %.0e", err[v][d]);
      if (reps[v][d] != 15) std::printf(" [%d runs]", reps[v][d]);
      std::printf(" |");
    }
    std::printf("\n");
  }
  std::printf("\n(GB/s of input read; %% of the streaming read of the same buffer; x %s. "
              "WRONG(k): k slots differ from the CPU count; ~k: CUB's own binning differs in k bins. %.1f s)\n",
              k.variants[base].name.c_str(), t_case);
  std::fflush(stdout);
}

Variant read_limit_variant(Ctx& c, size_t bytes) {
  return {"read_limit", [&c, bytes] { stream_read<<<c.sms * 8, 512>>>((const uint4*)c.d_in, bytes / 16, c.d_sink); },
          -1};
}
void* dalloc(Case& k, size_t bytes) {
  void* p = nullptr;
  CK(cudaMalloc(&p, std::max<size_t>(bytes, 256)));
  k.device_allocs.push_back(p);
  return p;
}

template <class K>
int cluster_grid(const Ctx& c, K kernel, int cl, int block, size_t smem) {
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(cl * c.sms);
  cfg.blockDim = dim3(block);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = cl;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  int nc = 0;
  CK(cudaOccupancyMaxActiveClusters(&nc, kernel, &cfg));
  if (nc < 1) {
    std::fprintf(stderr, "cluster of %d does not fit\n", cl);
    std::exit(1);
  }
  return nc * cl;
}
template <class... P, class... A>
void launch_cluster(void (*kernel)(P...), int grid, int cl, int block, size_t smem, A... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = cl;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

template <class T, class F>
Dist make_dist(const char* name, F f) {
  return {name, [f](unsigned char* h, size_t bytes) {
            T* x = reinterpret_cast<T*>(h);
            parallel_for(bytes / sizeof(T), [&](unsigned, size_t a, size_t b) {
              for (size_t i = a; i < b; ++i) x[i] = f(i);
            });
          }};
}

// ---------------------------------------------------------------- u16 cases
std::vector<Dist> u16_dists(u32 range) {
  return {
      make_dist<uint16_t>("uniform", [range](size_t i) { return (uint16_t)(mix64(i) & (range - 1)); }),
      make_dist<uint16_t>("constant", [range](size_t) { return (uint16_t)(range == 4096 ? 1234 : 40000); }),
      // normal around the middle, sd range/64, plus 1% saturated pixels (65535: overflow for 4096 bins)
      make_dist<uint16_t>("skewed",
                          [range](size_t i) {
                            u64 h = mix64(i ^ 0xABCDEF);
                            if (h % 100 == 0) return (uint16_t)65535;
                            double v = range / 2.0 + gauss4(mix64(h)) * range / 64.0;
                            return (uint16_t)std::clamp(v, 0.0, 65535.0);
                          }),
      make_dist<uint16_t>("ramp", [range](size_t i) { return (uint16_t)(i & (range - 1)); }),
  };
}

Case case_u16_4096(Ctx& c) {
  Case k;
  k.key = "u16_4096";
  k.title = "u16 samples, 4096 even bins over [0, 4096) (12-bit images)";
  k.bytes = c.bytes;
  const size_t n = k.bytes / 2, n16 = k.bytes / 16;
  const u32 bins = 4096;
  k.slots = bins + 3;
  k.cub_bins = bins;
  const BinIndexer ix = make_even(bins, 0, 4096);
  const IntShift m{0, 4095, 0, bins};
  k.dists = u16_dists(4096);
  k.reference = [ix, n, slots = k.slots](const unsigned char* h, std::vector<u64>& r, std::vector<double>&) {
    r = ref_counts<uint16_t>(h, n, slots, [&](uint16_t v) { return ix.slot((double)v); });
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  size_t tb = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, (const uint16_t*)c.d_in, (int*)c.d_out, (int)bins + 1, 0,
                                         (int)bins, (int)n));
  void* tmp = dalloc(k, tb);
  k.variants.push_back({"cub_even",
                        [&c, tmp, tb, n, bins] {
                          size_t t = tb;
                          CK(cub::DeviceHistogram::HistogramEven(tmp, t, (const uint16_t*)c.d_in, (int*)c.d_out,
                                                                 (int)bins + 1, 0, (int)bins, (int)n));
                        },
                        1});
  auto add = [&](const char* name, auto kernel, u32 copies) {
    const size_t smem = (((size_t)k.slots * copies + 31) & ~size_t{31}) * 4;
    const int grid = occ_grid(c, kernel, 512, smem);
    k.notes.push_back(kinfo(name, kernel, grid, 512, smem));
    k.variants.push_back({name, [&c, kernel, grid, smem, n16, m, ix, slots = k.slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kernel<<<grid, 512, smem>>>((const uint4*)c.d_in, n16, c.d_out, m, ix);
                          }});
  };
  add("generic_slot_x1", k_u16_shared<1, true, 1>, 1);
  add("shared_x1", k_u16_shared<1, false, 0>, 1);
  add("shared_x1_swz", k_u16_shared<1, true, 0>, 1);
  add("shared_x2_swz", k_u16_shared<2, true, 0>, 2);
  add("shared_x4_swz", k_u16_shared<4, true, 0>, 4);
  add("shared_x8_swz", k_u16_shared<8, true, 0>, 8);
  return k;
}

Case case_u16_65536(Ctx& c) {
  Case k;
  k.key = "u16_65536";
  k.title = "u16 samples, 65536 bins (one per value)";
  k.bytes = c.bytes;
  const size_t n = k.bytes / 2, n16 = k.bytes / 16;
  const u32 bins = 65536;
  k.slots = bins + 3;
  k.cub_bins = bins;
  const BinIndexer ix = make_even(bins, 0, 65536);
  k.dists = u16_dists(65536);
  k.reference = [ix, n, slots = k.slots](const unsigned char* h, std::vector<u64>& r, std::vector<double>&) {
    r = ref_counts<uint16_t>(h, n, slots, [&](uint16_t v) { return ix.slot((double)v); });
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  size_t tb = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, (const uint16_t*)c.d_in, (int*)c.d_out, (int)bins + 1, 0,
                                         (int)bins, (int)n));
  void* tmp = dalloc(k, tb);
  k.variants.push_back({"cub_even",
                        [&c, tmp, tb, n, bins] {
                          size_t t = tb;
                          CK(cub::DeviceHistogram::HistogramEven(tmp, t, (const uint16_t*)c.d_in, (int*)c.d_out,
                                                                 (int)bins + 1, 0, (int)bins, (int)n));
                        },
                        1});
  const size_t slots = k.slots;
  {
    auto kern = k_u16_half<4>;
    const size_t smem = 32768 * 4;
    const int grid = occ_grid(c, kern, 1024, smem);
    k.notes.push_back(kinfo("two_pass / halves_paired", kern, grid, 1024, smem));
    k.variants.push_back({"two_pass", [&c, kern, grid, smem, n16, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern<<<grid, 1024, smem>>>((const uint4*)c.d_in, n16, c.d_out, 0);
                            kern<<<grid, 1024, smem>>>((const uint4*)c.d_in, n16, c.d_out, 1);
                          }});
    const int g2 = grid & ~1;
    k.variants.push_back({"halves_paired_L2", [&c, kern, g2, smem, n16, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern<<<g2, 1024, smem>>>((const uint4*)c.d_in, n16, c.d_out, 2);
                          }});
  }
  auto add_cluster = [&](const char* name, auto kern, int cl, int block) {
    const size_t smem = 65536 / cl * 4;
    const int grid = cluster_grid(c, kern, cl, block, smem);
    k.notes.push_back(kinfo(name, kern, grid, block, smem) + ", cluster " + std::to_string(cl));
    k.variants.push_back({name, [&c, kern, grid, cl, block, smem, n16, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            launch_cluster(kern, grid, cl, block, smem, (const uint4*)c.d_in, n16, c.d_out);
                          }});
  };
  add_cluster("cluster2_dsmem", k_u16_cluster<2, false, 4, 1024>, 2, 1024);
  add_cluster("cluster2_split", k_u16_cluster<2, true, 4, 1024>, 2, 1024);
  add_cluster("cluster4_dsmem", k_u16_cluster<4, false, 2, 512>, 4, 512);
  add_cluster("cluster4_split", k_u16_cluster<4, true, 2, 512>, 4, 512);
  {
    auto kern = k_u16_packed16<4>;
    const size_t smem = 32768 * 4;
    const int grid = occ_grid(c, kern, 1024, smem);
    k.notes.push_back(kinfo("packed16", kern, grid, 1024, smem));
    k.variants.push_back({"packed16", [&c, kern, grid, smem, n16, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern<<<grid, 1024, smem>>>((const uint4*)c.d_in, n16, c.d_out);
                          }});
  }
  return k;
}

// ---------------------------------------------------------------- f32, even bins
Case case_f32_even(Ctx& c, const char* key, u32 bins, double lo, double hi) {
  Case k;
  k.key = key;
  char title[160];
  std::snprintf(title, sizeof title, "f32 samples, %u even bins over [%g, %g)", bins, lo, hi);
  k.title = title;
  k.bytes = c.bytes;
  const size_t n = k.bytes / 4, n16 = k.bytes / 16;
  k.slots = bins + 3;
  k.cub_bins = bins;
  const BinIndexer ix = make_even(bins, lo, hi);
  const EvenF32 p = make_even_f32(ix);
  char note[200];
  std::snprintf(note, sizeof note, "float-margin path %s, delta = %.3g bins (samples within delta of an edge take slot())",
                p.margin ? "on" : "OFF", (double)p.delta);
  k.notes.push_back(note);
  const double span = hi - lo;
  std::vector<float> thr(bins + 1);
  for (u32 i = 0; i <= bins; ++i) thr[i] = ceil_f(ix.even_edge(i));
  const bool is01 = lo == 0 && hi == 1;
  k.dists = {
      make_dist<float>("uniform",
                       [=](size_t i) {
                         u64 h = mix64(i);
                         if (is01) return (float)((h >> 40) * 0x1p-24);  // [0, 1) on the 2^-24 grid
                         return (float)(lo - 0.05 * span + 1.1 * span * unit(h));
                       }),
      make_dist<float>("constant", [=](size_t) { return (float)(lo + 0.3 * span); }),
      make_dist<float>("skewed",
                       [=](size_t i) {
                         u64 h = mix64(i ^ 0x777);
                         if (h % 100 == 0) {
                           const float sp[8] = {NAN, -INFINITY, INFINITY, -0.0f, (float)lo, (float)hi,
                                                (float)(lo - span), (float)(hi + span)};
                           return sp[(h >> 8) & 7];
                         }
                         return (float)((lo + hi) / 2 + gauss4(mix64(h)) * span / 20);
                       }),
      make_dist<float>("on_edges",
                       [thr](size_t i) {
                         u64 h = mix64(i ^ 0x999);
                         float e = thr[h % thr.size()];
                         int o = (int)((h >> 32) % 3) - 1;
                         return o < 0 ? std::nextafterf(e, -INFINITY) : (o > 0 ? std::nextafterf(e, INFINITY) : e);
                       }),
  };
  k.reference = [ix, n, slots = k.slots](const unsigned char* h, std::vector<u64>& r, std::vector<double>&) {
    r = ref_counts<float>(h, n, slots, [&](float v) { return ix.slot((double)v); });
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  size_t tb = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, (const float*)c.d_in, (int*)c.d_out, (int)bins + 1, (float)lo,
                                         (float)hi, (int)n));
  void* tmp = dalloc(k, tb);
  k.variants.push_back({"cub_even",
                        [&c, tmp, tb, n, bins, lo, hi] {
                          size_t t = tb;
                          CK(cub::DeviceHistogram::HistogramEven(tmp, t, (const float*)c.d_in, (int*)c.d_out,
                                                                 (int)bins + 1, (float)lo, (float)hi, (int)n));
                        },
                        1});
  const size_t slots = k.slots;
  auto add = [&](const char* name, auto kern) {
    const size_t smem = slots * 4;
    const int grid = occ_grid(c, kern, 512, smem);
    k.notes.push_back(kinfo(name, kern, grid, 512, smem));
    k.variants.push_back({name, [&c, kern, grid, smem, n16, p, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern<<<grid, 512, smem>>>((const uint4*)c.d_in, n16, c.d_out, p);
                          }});
  };
  add("generic_slot", k_f32_even<0>);
  add("double_native", k_f32_even<1>);
  add("double_magic", k_f32_even<2>);
  if (p.margin) add("float_margin", k_f32_even<3>);
  return k;
}

// ---------------------------------------------------------------- f32, explicit edges
Case case_f32_edges(Ctx& c) {
  Case k;
  k.key = "f32_edges";
  const u32 bins = 64;
  std::vector<double> edges(bins + 1);
  for (u32 i = 0; i <= bins; ++i) edges[i] = 0.1 + 0.9 * ((double)i / bins) * ((double)i / bins);
  k.title = "f32 samples, 64 bins by uneven explicit edges 0.1 + 0.9 (i/64)^2";
  k.bytes = c.bytes;
  const size_t n = k.bytes / 4, n16 = k.bytes / 16;
  k.slots = bins + 3;
  k.cub_bins = bins;
  double* d_edges = (double*)dalloc(k, edges.size() * 8);
  CK(cudaMemcpy(d_edges, edges.data(), edges.size() * 8, cudaMemcpyHostToDevice));
  const BinIndexer ix_host = make_edges_ix(edges, nullptr);
  EdgesHost eh = make_edges_f32(ix_host, edges);
  EdgesF32 p = eh.p;
  p.ix = make_edges_ix(edges, d_edges);
  float* dE = (float*)dalloc(k, eh.E.size() * 4);
  CK(cudaMemcpy(dE, eh.E.data(), eh.E.size() * 4, cudaMemcpyHostToDevice));
  uint2* d8 = (uint2*)dalloc(k, eh.lut8.size() * 8);
  CK(cudaMemcpy(d8, eh.lut8.data(), eh.lut8.size() * 8, cudaMemcpyHostToDevice));
  uint4* d16 = (uint4*)dalloc(k, eh.lut16.size() * 16);
  CK(cudaMemcpy(d16, eh.lut16.data(), eh.lut16.size() * 16, cudaMemcpyHostToDevice));
  p.E = dE;
  p.lut8 = d8;
  p.lut16 = d16;
  char note[200];
  std::snprintf(note, sizeof note, "cell tables: 8-byte entries %u cells (%u need the search), 16-byte entries %u cells (%u)",
                eh.t8.cells, eh.t8.flagged, eh.t16.cells, eh.t16.flagged);
  k.notes.push_back(note);
  std::vector<float> thr(bins + 1);
  for (u32 i = 0; i <= bins; ++i) thr[i] = ceil_f(edges[i]);
  k.dists = {
      make_dist<float>("uniform", [](size_t i) { return (float)((mix64(i) >> 40) * 0x1p-24); }),
      make_dist<float>("constant", [](size_t) { return 0.55f; }),
      make_dist<float>("skewed",  // dense where the edges are dense
                       [](size_t i) {
                         double u = unit(mix64(i ^ 0x31));
                         return (float)(0.1 + 0.9 * u * u * u);
                       }),
      make_dist<float>("on_edges",
                       [thr](size_t i) {
                         u64 h = mix64(i ^ 0x999);
                         float e = thr[h % thr.size()];
                         int o = (int)((h >> 32) % 3) - 1;
                         return o < 0 ? std::nextafterf(e, -INFINITY) : (o > 0 ? std::nextafterf(e, INFINITY) : e);
                       }),
  };
  k.reference = [ix_host, edges, n, slots = k.slots](const unsigned char* h, std::vector<u64>& r, std::vector<double>&) {
    BinIndexer ix = ix_host;
    ix.edges = edges.data();
    r = ref_counts<float>(h, n, slots, [&](float v) { return ix.slot((double)v); });
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  std::vector<float> lv(bins + 1);
  for (u32 i = 0; i <= bins; ++i) lv[i] = (float)edges[i];
  float* d_lv = (float*)dalloc(k, lv.size() * 4);
  CK(cudaMemcpy(d_lv, lv.data(), lv.size() * 4, cudaMemcpyHostToDevice));
  size_t tb = 0;
  CK(cub::DeviceHistogram::HistogramRange(nullptr, tb, (const float*)c.d_in, (int*)c.d_out, (int)bins + 1, d_lv, (int)n));
  void* tmp = dalloc(k, tb);
  k.variants.push_back({"cub_range",
                        [&c, tmp, tb, n, bins, d_lv] {
                          size_t t = tb;
                          CK(cub::DeviceHistogram::HistogramRange(tmp, t, (const float*)c.d_in, (int*)c.d_out,
                                                                  (int)bins + 1, d_lv, (int)n));
                        },
                        1});
  const size_t slots = k.slots;
  const u32 P = 2 * p.half;
  auto add = [&](const char* name, auto kern, bool lanes, int mode) {
    size_t words = lanes ? slots * 32 : slots;
    words = (words + P + 3) & ~size_t{3};
    if (mode == 2) words += 2 * p.cells8;
    if (mode == 3) words += 4 * p.cells16;
    const size_t smem = words * 4;
    const int grid = occ_grid(c, kern, 512, smem);
    k.notes.push_back(kinfo(name, kern, grid, 512, smem));
    k.variants.push_back({name, [&c, kern, grid, smem, n16, p, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern<<<grid, 512, smem>>>((const uint4*)c.d_in, n16, c.d_out, p);
                          }});
  };
  add("generic_slot", k_f32_edges<0, false>, false, 0);
  add("bsearch_smem", k_f32_edges<1, false>, false, 1);
  add("bsearch_lanes", k_f32_edges<1, true>, true, 1);
  add("cells8", k_f32_edges<2, false>, false, 2);
  add("cells8_lanes", k_f32_edges<2, true>, true, 2);
  add("cells16_lanes", k_f32_edges<3, true>, true, 3);
  return k;
}

// ---------------------------------------------------------------- interleaved u8 pixels
std::vector<Dist> pixel_dists(const Ctx& c, int channels) {
  const std::vector<uint8_t>* img = &c.image;
  return {
      make_dist<uint8_t>("uniform", [](size_t i) { return (uint8_t)(mix64(i >> 3) >> (8 * (i & 7))); }),
      make_dist<uint8_t>("constant",
                         [channels](size_t i) {
                           const uint8_t px[4] = {12, 200, 77, 255};
                           return px[i % channels];
                         }),
      make_dist<uint8_t>("image",
                         [img, channels](size_t i) {
                           const size_t pix = i / channels;
                           const uint8_t g = img->empty() ? (uint8_t)((pix * 7) >> 10) : (*img)[pix % img->size()];
                           const uint8_t px[4] = {g, (uint8_t)(g / 2 + 64), (uint8_t)(255 - g), 255};
                           return px[i % channels];
                         }),
  };
}

template <int NCH, int NACT>
Variant cub_multi(Ctx& c, Case& k, size_t pixels) {
  ::cuda::std::array<int*, NACT> hist;
  ::cuda::std::array<int, NACT> levels, lower, upper;
  for (int ch = 0; ch < NACT; ++ch) {
    hist[ch] = (int*)c.d_out + ch * 256;
    levels[ch] = 257;
    lower[ch] = 0;
    upper[ch] = 256;
  }
  size_t tb = 0;
  CK((cub::DeviceHistogram::MultiHistogramEven<NCH, NACT>(nullptr, tb, (const unsigned char*)c.d_in, hist, levels,
                                                          lower, upper, (int)pixels)));
  void* tmp = dalloc(k, tb);
  return {"cub_multi_even",
          [&c, tmp, tb, pixels, hist, levels, lower, upper] {
            size_t t = tb;
            CK((cub::DeviceHistogram::MultiHistogramEven<NCH, NACT>(tmp, t, (const unsigned char*)c.d_in, hist, levels,
                                                                    lower, upper, (int)pixels)));
          },
          1};
}

template <u32 MASK>
Case case_rgba(Ctx& c) {
  constexpr int NCH = __builtin_popcount(MASK);
  Case k;
  k.key = MASK == 0xF ? "rgba" : "rgb_of_rgba";
  k.title = MASK == 0xF ? "RGBA u8 pixels, 4 x 256 bins" : "RGB of RGBA u8 pixels (3 active channels of 4), 3 x 256 bins";
  k.bytes = c.bytes;
  const size_t pixels = k.bytes / 4, n16 = k.bytes / 16;
  k.slots = NCH * 256;
  k.cub_bins = k.slots;
  k.dists = pixel_dists(c, 4);
  k.reference = [pixels](const unsigned char* h, std::vector<u64>& r, std::vector<double>&) {
    r.assign(NCH * 256, 0);
    const unsigned T = n_threads();
    std::vector<std::vector<u64>> part(T, std::vector<u64>(NCH * 256, 0));
    parallel_for(pixels, [&](unsigned t, size_t a, size_t b) {
      for (size_t i = a; i < b; ++i) {
        int kk = 0;
        for (int ch = 0; ch < 4; ++ch)
          if (MASK >> ch & 1) part[t][kk++ * 256 + h[4 * i + ch]]++;
      }
    });
    for (auto& p : part)
      for (size_t s = 0; s < r.size(); ++s) r[s] += p[s];
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  k.variants.push_back(cub_multi<4, NCH>(c, k, pixels));
  const size_t slots = k.slots;
  auto add = [&](const char* name, auto kern, int block, int cols) {
    const size_t smem = (size_t)NCH * 256 * cols * 4;
    const int grid = occ_grid(c, kern, block, smem);
    k.notes.push_back(kinfo(name, kern, grid, block, smem));
    k.variants.push_back({name, [&c, kern, grid, block, smem, n16, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern<<<grid, block, smem>>>((const uint4*)c.d_in, n16, c.d_out);
                          }});
  };
  add("lane32_u4_1024", k_rgba<MASK, 32, 4, 1024>, 1024, 32);
  add("lane32_u2_1024", k_rgba<MASK, 32, 2, 1024>, 1024, 32);
  add("lane16_u2_1024", k_rgba<MASK, 16, 2, 1024>, 1024, 16);
  add("lane16_u2_512", k_rgba<MASK, 16, 2, 512>, 512, 16);
  add("shared_x1_u2_512", k_rgba<MASK, 1, 2, 512>, 512, 1);
  return k;
}

Case case_rgb24(Ctx& c) {
  Case k;
  k.key = "rgb24";
  k.title = "RGB u8 pixels, 3 interleaved channels (24-bit pixels), 3 x 256 bins";
  k.bytes = c.bytes / 1536 * 1536;
  const size_t pixels = k.bytes / 3, n16 = k.bytes / 16;
  k.slots = 3 * 256;
  k.cub_bins = k.slots;
  k.dists = pixel_dists(c, 3);
  k.reference = [pixels](const unsigned char* h, std::vector<u64>& r, std::vector<double>&) {
    r.assign(768, 0);
    const unsigned T = n_threads();
    std::vector<std::vector<u64>> part(T, std::vector<u64>(768, 0));
    parallel_for(pixels, [&](unsigned t, size_t a, size_t b) {
      for (size_t i = a; i < b; ++i)
        for (int ch = 0; ch < 3; ++ch) part[t][ch * 256 + h[3 * i + ch]]++;
    });
    for (auto& p : part)
      for (size_t s = 0; s < 768; ++s) r[s] += p[s];
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  k.variants.push_back(cub_multi<3, 3>(c, k, pixels));
  auto kern = k_rgb24<1024>;
  const size_t smem = 3 * 256 * 32 * 4;
  const int grid = occ_grid(c, kern, 1024, smem);
  k.notes.push_back(kinfo("lane32_rgb24", kern, grid, 1024, smem));
  const size_t slots = k.slots;
  k.variants.push_back({"lane32_rgb24", [&c, kern, grid, smem, n16, slots] {
                          CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                          kern<<<grid, 1024, smem>>>((const uint4*)c.d_in, n16, c.d_out);
                        }});
  return k;
}

// ---------------------------------------------------------------- weighted
Case case_weighted(Ctx& c) {
  Case k;
  k.key = "weighted";
  k.title = "f32 samples with f32 weights, 1024 even bins over [0, 1), f64 sums (GB/s of samples + weights)";
  k.bytes = c.bytes;
  const size_t n = k.bytes / 8, n16 = n / 4;
  const u32 bins = 1024;
  k.slots = bins + 3;
  const BinIndexer ix = make_even(bins, 0, 1);
  const EvenF32 p = make_even_f32(ix);
  auto gen = [n](auto sample) {
    return [n, sample](unsigned char* h, size_t) {
      float* x = (float*)h;
      float* w = x + n;
      parallel_for(n, [&](unsigned, size_t a, size_t b) {
        for (size_t i = a; i < b; ++i) {
          x[i] = sample(i);
          w[i] = (float)(((mix64(i ^ 0x4242) >> 40) + 1) * 0x1p-24);  // (0, 1]
        }
      });
    };
  };
  k.dists = {
      {"uniform", gen([](size_t i) { return (float)((mix64(i) >> 40) * 0x1p-24); })},
      {"constant", gen([](size_t) { return 0.3f; })},
      {"skewed", gen([](size_t i) { return (float)(0.5 + gauss4(mix64(i ^ 0x777)) * 0.05); })},
  };
  k.reference = [ix, n, slots = k.slots](const unsigned char* h, std::vector<u64>&, std::vector<double>& r) {
    const float* x = (const float*)h;
    const float* w = x + n;
    const unsigned T = n_threads();
    std::vector<std::vector<double>> part(T, std::vector<double>(slots, 0.0));
    parallel_for(n, [&](unsigned t, size_t a, size_t b) {
      for (size_t i = a; i < b; ++i) part[t][ix.slot((double)x[i])] += (double)w[i];
    });
    r.assign(slots, 0.0);
    for (auto& pp : part)
      for (size_t s = 0; s < slots; ++s) r[s] += pp[s];
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  const size_t slots = k.slots;
  auto add = [&](const char* name, auto kern, size_t smem, int flush, double tol) {
    const int grid = occ_grid(c, kern, 512, smem);
    k.notes.push_back(kinfo(name, kern, grid, 512, smem));
    Variant v{name, [&c, kern, grid, smem, n, n16, p, slots, flush] {
                CK(cudaMemsetAsync(c.d_wout, 0, slots * 8));
                kern<<<grid, 512, smem>>>((const uint4*)c.d_in, (const uint4*)(c.d_in + n * 4), n16, c.d_wout, p, flush);
              },
              2};
    v.tol = tol;
    k.variants.push_back(v);
  };
  add("global_f64_atomics", k_weighted<3>, 0, 1, 1e-9);
  add("smem_f64", k_weighted<0>, slots * 8, 1, 1e-9);
  add("smem_f64_x4", k_weighted<1>, slots * 32, 1, 1e-9);
  add("smem_f64_warpagg", k_weighted<4>, slots * 8, 1, 1e-9);
  add("smem_f32_flush8_f64", k_weighted<2>, slots * 12, 8, 1e-2);
  return k;
}

// ---------------------------------------------------------------- u32 keys
Case case_u32(Ctx& c, int log2bins) {
  Case k;
  k.key = log2bins == 20 ? "u32_2e20" : "u32_2e24";
  k.title = "u32 keys, 2^" + std::to_string(log2bins) + " even bins over [0, 2^32)";
  k.bytes = c.bytes;
  const size_t n = k.bytes / 4, n16 = k.bytes / 16;
  const u32 bins = 1u << log2bins, shift = 32 - log2bins;
  k.slots = bins + 3;
  k.cub_bins = bins;
  const BinIndexer ix = make_even(bins, 0, 4294967296.0);
  k.dists = {
      make_dist<u32>("uniform", [](size_t i) { return (u32)mix64(i); }),
      make_dist<u32>("constant", [](size_t) { return 0xDEADBEEFu; }),
      make_dist<u32>("skewed",  // half the keys from 64 hot keys
                     [](size_t i) {
                       u64 h = mix64(i ^ 0x1357);
                       return (h & 1) ? (u32)mix64(h & 63) : (u32)(h >> 32);
                     }),
  };
  k.reference = [ix, n, slots = k.slots](const unsigned char* h, std::vector<u64>& r, std::vector<double>&) {
    r = ref_counts<u32>(h, n, slots, [&](u32 v) { return ix.slot((double)v); });
  };
  k.variants.push_back(read_limit_variant(c, k.bytes));
  const size_t slots = k.slots;
  {
    auto kern = k_u32_global<false>;
    const int grid = occ_grid(c, kern, 512, 0);
    k.notes.push_back(kinfo("global_u32", kern, grid, 512, 0));
    k.variants.push_back({"global_u32", [&c, kern, grid, n16, slots, shift] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern<<<grid, 512>>>((const uint4*)c.d_in, n16, c.d_out, shift);
                          }});
    auto kern2 = k_u32_global<true>;
    k.variants.push_back({"global_u32_warpagg", [&c, kern2, grid, n16, slots, shift] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            kern2<<<grid, 512>>>((const uint4*)c.d_in, n16, c.d_out, shift);
                          }});
  }
  // Sort-based: (a) full radix sort of the keys on the bin bits, reduce-by-key of the
  // bins, scatter; (b) partial sort on the top bb bits (one or two onesweep passes),
  // then a shared-memory histogram per bucket run.
  u32* A = (u32*)dalloc(k, n * 4);
  u32* uniq = (u32*)dalloc(k, (size_t)bins * 4);
  u32* cnts = (u32*)dalloc(k, (size_t)bins * 4);
  int* nruns = (int*)dalloc(k, 4);
  const int bb = log2bins == 20 ? 6 : 9;
  const u32 lbits = log2bins - bb;
  size_t ts1 = 0, ts2 = 0, tr = 0;
  CK(cub::DeviceRadixSort::SortKeys(nullptr, ts1, (const u32*)c.d_in, A, (int)n, (int)shift, 32));
  CK(cub::DeviceRadixSort::SortKeys(nullptr, ts2, (const u32*)c.d_in, A, (int)n, 32 - bb, 32));
  auto keys_it = thrust::make_transform_iterator(A, ShiftOp{shift});
  auto ones = thrust::make_constant_iterator(1u);
  CK(cub::DeviceReduce::ReduceByKey(nullptr, tr, keys_it, uniq, ones, cnts, nruns, ::cuda::std::plus<u32>{}, (int)n));
  const size_t ts = std::max({ts1, ts2, tr});
  void* tmp = dalloc(k, ts);
  k.variants.push_back({"sort_reduce_by_key", [&c, tmp, ts1, tr, A, uniq, cnts, nruns, n, shift, slots, keys_it, ones] {
                          CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                          size_t t = ts1;
                          CK(cub::DeviceRadixSort::SortKeys(tmp, t, (const u32*)c.d_in, A, (int)n, (int)shift, 32));
                          t = tr;
                          CK(cub::DeviceReduce::ReduceByKey(tmp, t, keys_it, uniq, ones, cnts, nruns,
                                                            ::cuda::std::plus<u32>{}, (int)n));
                          k_scatter<<<c.sms * 8, 256>>>(uniq, cnts, nruns, c.d_out);
                        }});
  {
    const size_t smem = (size_t{1} << lbits) * 4;
    const int grid = occ_grid(c, k_bucket_hist, 1024, smem);
    const size_t chunk = (n + grid - 1) / grid;
    k.notes.push_back(kinfo("bucket_sort_smem", k_bucket_hist, grid, 1024, smem) + ", sort on the top " +
                      std::to_string(bb) + " bits");
    k.variants.push_back({"bucket_sort_smem", [&c, tmp, ts2, A, n, shift, bb, lbits, grid, smem, chunk, slots] {
                            CK(cudaMemsetAsync(c.d_out, 0, slots * 4));
                            size_t t = ts2;
                            CK(cub::DeviceRadixSort::SortKeys(tmp, t, (const u32*)c.d_in, A, (int)n, 32 - bb, 32));
                            k_bucket_hist<<<grid, 1024, smem>>>(A, n, c.d_out, shift, 32 - bb, lbits, chunk);
                          }});
  }
  // CUB keeps one privatized histogram per block in global memory above 256 bins:
  // its temporary storage grows as blocks x bins; run it only where that fits
  // (after the sort buffers are allocated), and only where blocks x bins < 2^31:
  // AgentHistogram computes a block's offset as int blockId * num_privatized_bins,
  // which overflows beyond that and writes out of bounds (NVIDIA/cub#288). That was
  // the "illegal memory access" of the first H200 run on 2^24 bins: 26.58 GB of
  // temporary storage = 396 blocks x 2^24 bins x 4 B, and 128 x 2^24 = 2^31 already.
  size_t tb = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, (const u32*)c.d_in, (int*)c.d_out, (int)bins + 1, (u64)0,
                                         (u64)1 << 32, (int)n));
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  char note[200];
  std::snprintf(note, sizeof note, "CUB HistogramEven temporary storage: %.2f GB", tb / 1e9);
  k.notes.push_back(note);
  const bool cub_offsets_fit = tb / 4 < (size_t{1} << 31) - bins;
  if (!cub_offsets_fit) {
    k.notes.push_back("cub_even skipped: blocks x bins >= 2^31 overflows its 32-bit privatized-histogram offsets");
  } else if ((double)tb < (double)free_b - 4e9) {
    void* tmp = dalloc(k, tb);
    k.variants.push_back({"cub_even",
                          [&c, tmp, tb, n, bins] {
                            size_t t = tb;
                            CK(cub::DeviceHistogram::HistogramEven(tmp, t, (const u32*)c.d_in, (int*)c.d_out,
                                                                   (int)bins + 1, (u64)0, (u64)1 << 32, (int)n));
                          },
                          1});
  } else {
    k.notes.push_back("cub_even skipped: its temporary storage does not fit");
  }
  return k;
}

// =====================================================================================
// --selftest: every fast index path against BinIndexer::slot, on the CPU
// =====================================================================================
std::vector<float> probe_values(double lo, double hi, const std::vector<float>& thresholds, u64 seed, size_t randoms) {
  std::vector<float> xs;
  const double span = hi - lo;
  for (size_t i = 0; i < randoms; ++i) {
    u64 h = mix64(seed + i);
    double u = unit(h);
    xs.push_back((float)(lo - 0.1 * span + 1.2 * span * u));
    if ((h & 15) == 0) xs.push_back((float)(lo + span * u * 1e-6));  // crowd the lower bound
  }
  for (float e : thresholds) {
    float a = e, b = e;
    xs.push_back(e);
    for (int k = 0; k < 2; ++k) {
      a = std::nextafterf(a, -INFINITY);
      b = std::nextafterf(b, INFINITY);
      xs.push_back(a);
      xs.push_back(b);
    }
  }
  const float sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 1e-45f,
                      -1e-45f, (float)lo, (float)hi, ceil_f(lo), ceil_f(hi)};
  for (float s : sp) {
    xs.push_back(s);
    xs.push_back(std::nextafterf(s, INFINITY));
    xs.push_back(std::nextafterf(s, -INFINITY));
  }
  return xs;
}

int selftest() {
  int failures = 0;
  std::printf("even bins, f32 samples: mismatches against slot() per mode (1 double native, 2 double magic, 3 float margin)\n");
  struct EB {
    u64 bins;
    double lo, hi;
    bool incl;
  };
  const EB ebs[] = {{1024, 0, 1, false},         {1000, -0.3, 0.7, false},   {1024, 0, 1, true},
                    {10, 0.1, 0.7, true},         {4096, 0, 4096, false},     {100, 1e6, 1e6 + 1, false},
                    {1u << 20, 0, 1, false},      {3, -1e-3, 2e-3, false},    {1u << 22, -1, 1, false},
                    {65536, -1e5, 3e5, false},    {7, -1e30, 1e30, false},    {1000, 1e-40, 1e-35, false},
                    {255, -128.5, 127.5, true},   {1u << 28, 0, 1, false},    {333, 0.1, 0.1000001, false},
                    {1, -5, 5, false},            {2, 0, 3e-45, false},       {1024, -1, -0.5, false}};
  for (const EB& e : ebs) {
    BinIndexer ix = make_even(e.bins, e.lo, e.hi, e.incl);
    EvenF32 p = make_even_f32(ix);
    std::vector<float> thr;
    const u64 step = e.bins <= 65536 ? 1 : e.bins / 65536;
    for (u64 i = 0; i <= e.bins; i += step) thr.push_back(ceil_f(ix.even_edge(i)));
    thr.push_back(ceil_f(ix.even_edge(e.bins)));
    std::vector<float> xs = probe_values(e.lo, e.hi, thr, e.bins * 7919, 400000);
    size_t bad[4] = {0, 0, 0, 0}, slow = 0, inr = 0;
    for (float x : xs) {
      const u32 ref = (u32)ix.slot((double)x);
      bad[1] += slot_even_f32<1>(x, p) != ref;
      bad[2] += slot_even_f32<2>(x, p) != ref;
      if (p.margin) {
        bad[3] += slot_even_f32<3>(x, p) != ref;
        if (x >= p.loF && x < p.hiF) {
          ++inr;
          float t = f_mul(f_sub(x, p.flo), p.fsc), tm = f_floor_magic(t);
          float fr = f_sub(t, f_sub(tm, 8388608.f));
          slow += !(fr >= p.delta && fr <= p.one_minus_delta && f_bits(tm) - 0x4B000000u < p.bins);
        }
      }
    }
    failures += bad[1] + bad[2] + bad[3];
    std::printf("  %9llu bins [%g, %g%s: %zu probes, bad %zu/%zu/%zu, margin %s delta %.3g, slow %.4f%% of in-range probes\n",
                (unsigned long long)e.bins, e.lo, e.hi, e.incl ? "]" : ")", xs.size(), bad[1], bad[2],
                p.margin ? bad[3] : 0, p.margin ? "on" : "off", (double)p.delta, inr ? 100.0 * slow / inr : 0.0);
  }

  std::printf("explicit edges, f32 samples: mismatches per mode (1 binary search, 2 cells8, 3 cells16)\n");
  std::vector<std::vector<double>> sets;
  {
    std::vector<double> a(65);
    for (int i = 0; i <= 64; ++i) a[i] = 0.1 + 0.9 * (i / 64.0) * (i / 64.0);
    sets.push_back(a);
    std::vector<double> b;
    double x = -5;
    for (int i = 0; i <= 1000; ++i) {
      b.push_back(x);
      x += std::exp(gauss4(mix64(i + 99)) * 3) * 1e-3;
    }
    sets.push_back(b);
    sets.push_back({0, 1e-8, 1e-8 + 1e-16, 0.5, 0.5 + 0x1p-25, 0.5 + 0x1p-24, 1});
    std::vector<double> c;
    for (int i = 0; i <= 4096; ++i) c.push_back(std::pow(10.0, -3 + 6.0 * i / 4096));
    sets.push_back(c);
    sets.push_back({-1, 1});
    sets.push_back({-3e38, -1, 0, 1, 3e38});
    std::vector<double> d;
    for (int i = 0; i <= 200; ++i) d.push_back(i < 100 ? i * 1e-7 : 1.0 + i);  // a dense cluster, then wide bins
    sets.push_back(d);
  }
  for (size_t si = 0; si < sets.size(); ++si)
    for (bool incl : {false, true}) {
      const auto& edges = sets[si];
      BinIndexer ix = make_edges_ix(edges, edges.data(), incl);
      EdgesHost h = make_edges_f32(ix, edges);
      std::vector<float> thr;
      for (double e : edges) thr.push_back(ceil_f(e));
      std::vector<float> xs = probe_values(edges.front(), edges.back(), thr, si * 31 + incl, 200000);
      size_t bad[4] = {0, 0, 0, 0};
      for (float x : xs) {
        const u32 ref = (u32)ix.slot((double)x);
        for (int m = 1; m <= 3; ++m) bad[m] += host_edges_slot(x, h, m) != ref;
      }
      failures += bad[1] + bad[2] + bad[3];
      std::printf("  set %zu (%zu bins%s): %zu probes, bad %zu/%zu/%zu; cells8 %u (%u searched), cells16 %u (%u)\n", si,
                  edges.size() - 1, incl ? ", inclusive" : "", xs.size(), bad[1], bad[2], bad[3], h.t8.cells,
                  h.t8.flagged, h.t16.cells, h.t16.flagged);
    }

  std::printf("integer shift map, every u16 value:\n");
  struct IB {
    u32 bins;
    double lo;
    u32 k;
    bool incl;
  };
  const IB ibs[] = {{4096, 0, 0, false}, {256, 0, 8, false}, {100, 1000, 2, false}, {100, 1000, 2, true},
                    {65536, 0, 0, false}, {16, 65000, 5, true}};
  for (const IB& b : ibs) {
    const double hi = b.lo + (double)b.bins * (1u << b.k);
    BinIndexer ix = make_even(b.bins, b.lo, hi, b.incl);
    const u32 span = b.bins << b.k;
    IntShift m{(u32)b.lo, b.incl ? span : span - 1, b.k, b.bins};
    size_t bad = 0;
    for (u32 v = 0; v < 65536; ++v) bad += int_slot(v, m) != (u32)ix.slot((double)v);
    failures += bad;
    std::printf("  %u bins of width %u from %g%s: bad %zu\n", b.bins, 1u << b.k, b.lo, b.incl ? " (inclusive)" : "", bad);
  }

  std::printf("packed 16-bit counters: random increments with follow-ups delayed (some past a wrap)\n");
  size_t bad_words = 0, wraps = 0;
  for (int trial = 0; trial < 200; ++trial) {
    u32 W = 0;
    long long true_lo = 0, true_hi = 0, cred_lo = 0, cred_hi = 0;
    struct Pending {
      long long due;
      int d_lo, d_hi;
    };
    std::vector<Pending> pend;
    u64 h = mix64(trial);
    auto apply = [&](int d_lo, int d_hi, long long now) {
      const u32 old = W;
      W += (u32)d_lo + ((u32)d_hi << 16);
      int n_lo, n_hi, cl, ch;
      packed16_step(old, d_lo, d_hi, n_lo, n_hi, cl, ch);
      cred_lo += cl;
      cred_hi += ch;
      wraps += (std::abs(cl) == 65536) + (std::abs(ch) == 65536);
      if (n_lo || n_hi) {
        h = mix64(h);
        long long delay = (h % 20 == 0) ? 40000 + (long long)(h >> 40) % 90000 : (long long)(h >> 40) % 3;
        pend.push_back({now + delay, n_lo, n_hi});
      }
    };
    const long long ops = 300000;
    for (long long t = 0; t < ops + 200000; ++t) {
      for (size_t i = 0; i < pend.size();)
        if (pend[i].due <= t) {
          Pending q = pend[i];
          pend.erase(pend.begin() + i);
          apply(q.d_lo, q.d_hi, t);
        } else {
          ++i;
        }
      if (t < ops) {
        h = mix64(h);
        const bool hi_op = (h >> 20) % 3 == 0;  // skew: more low increments
        if (hi_op) {
          ++true_hi;
          apply(0, 1, t);
        } else {
          ++true_lo;
          apply(1, 0, t);
        }
      } else if (pend.empty()) {
        break;
      }
    }
    const long long got_lo = (long long)(W & 0xFFFF) + cred_lo, got_hi = (long long)(W >> 16) + cred_hi;
    bad_words += got_lo != true_lo || got_hi != true_hi;
  }
  failures += bad_words;
  std::printf("  200 words x 300000 increments: %zu words wrong, %zu wraps compensated\n", bad_words, wraps);
  std::printf("%s\n", failures ? "SELFTEST FAILED" : "selftest passed");
  return failures ? 1 : 0;
}

// =====================================================================================
int main(int argc, char** argv) {
  std::vector<std::string> filters;
  Ctx c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--selftest") return selftest();
    if (a == "--bytes" && i + 1 < argc) {
      char* end = nullptr;
      double v = std::strtod(argv[++i], &end);
      if (*end == 'K' || *end == 'k') v *= 1024;
      if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
      if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
      c.bytes = std::max<size_t>(1536 * 64, (size_t)v / 1536 * 1536 / 16 * 16);
      continue;
    }
    filters.push_back(a);
  }
  c.bytes = c.bytes / 16 * 16;
  auto t_start = std::chrono::steady_clock::now();
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  c.sms = prop.multiProcessorCount;
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  std::printf("# general histogram design study\n\ndevice %s, %d SMs, %.2f GHz, L2 %d MiB, %.0f KB smem per SM, "
              "input %zu bytes per case\n",
              prop.name, c.sms, clock_khz / 1e6, prop.l2CacheSize >> 20, prop.sharedMemPerMultiprocessor / 1024.0, c.bytes);
  CK(cudaMallocHost(&c.host, c.bytes));
  CK(cudaMalloc(&c.d_in, c.bytes));
  CK(cudaMalloc(&c.d_out, ((size_t{1} << 24) + 1024) * 4));
  CK(cudaMalloc(&c.d_wout, 4096 * 8));
  CK(cudaMalloc(&c.d_sink, 1024));
  c.image = load_pgm("bench/data/coins.pgm");
  if (c.image.empty()) std::printf("(bench/data/coins.pgm not found: the image distribution is a synthetic ramp)\n");

  struct Entry {
    const char* key;
    std::function<Case(Ctx&)> make;
  };
  const std::vector<Entry> cases = {
      {"u16_4096", case_u16_4096},
      {"u16_65536", case_u16_65536},
      {"f32_even_1024", [](Ctx& x) { return case_f32_even(x, "f32_even_1024", 1024, 0.0, 1.0); }},
      {"f32_even_1000", [](Ctx& x) { return case_f32_even(x, "f32_even_1000", 1000, -0.3, 0.7); }},
      {"f32_edges", case_f32_edges},
      {"rgba", case_rgba<0xF>},
      {"rgb_of_rgba", case_rgba<0x7>},
      {"rgb24", case_rgb24},
      {"weighted", case_weighted},
      {"u32_2e20", [](Ctx& x) { return case_u32(x, 20); }},
      {"u32_2e24", [](Ctx& x) { return case_u32(x, 24); }},
  };
  for (const Entry& e : cases) {
    bool want = filters.empty();
    for (auto& f : filters) want |= std::string(e.key).find(f) != std::string::npos;
    if (!want) continue;
    Case k = e.make(c);
    run_case(c, k);
    for (void* p : k.device_allocs) CK(cudaFree(p));
  }
  std::printf("\ntotal %.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
  return 0;
}
