// Design study: 65536 bins (u16 one bin per value; the joint histogram of two
// 8-bit images has the same 65536 slots) in ONE block's shared memory, as
// packed 16-bit counters, two a 32-bit word, with no returning atomic.
//
// 65536 u32 counters are 256 KB, more than an SM's 227 KB, so the library
// splits the bins over two blocks that both read every sample
// (gpu_split_bins: every sample issues an atomic in both, and the SMs' issue
// rate bounds it at 0.42-0.46 of the read). The study of 2026-11-22 measured
// packed 16-bit counters with a *returning* add per sample (to catch a half's
// carry): fastest on varied data, but 509 GB/s on constant data, where the
// 32 lanes' returning adds to one word serialize.
//
// Here the carries cannot happen, so no add needs its result: a block counts
// in epochs of E samples; after each, a barrier, and every half >= T is moved
// to the global counts (credited T * k, lowered to below T), then a barrier
// again. A half below T before an epoch of at most E = 65536 - T samples stays
// below 65536. The costs to measure: the drain (32768 words read per epoch,
// ~1.3 instructions a sample at E = 32768), two barriers an epoch, one block an
// SM (128 KB), and how the shared-memory unit takes an add whose operand is not
// the constant 1 from 32 lanes on one word (the microbenchmark first).
//
// Build (CMake, with the benchmark): target packed16_probe.
// Usage: packed16_probe [reps [atomics]]   (default 9; `atomics`: the
// microbenchmark alone). Prints two tables; every histogram is checked against
// the CPU's counts before its time is printed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "packed16_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

constexpr int kThreads = 1024;
constexpr std::uint32_t kWords = 32768;  // 65536 halves

__device__ __forceinline__ std::uint32_t swizzle(std::uint32_t a) { return a ^ ((a >> 5) & 31u); }

// ---- 1. the shared-memory add: which words the 32 lanes hit -------------------------
// Mode 0: atomicAdd(p, 1) (ATOMS.POPC.INC); 1: atomicAdd(p, 65536) (an
// immediate); 2: atomicAdd(p, op) with op from the kernel's argument.
// Pattern 0: every lane of every warp one word, always the same; 1: every lane
// one word, the next of 8 words each iteration; 2: every thread its own word,
// always the same; 3: random words of 32768.
// `zero` is 0, passed at run time: with a word the compiler can prove the same
// in every lane it sums the warp's adds itself (VOTEU.ANY, POPC, one lane's
// ATOMS.ADD) and the hardware's own handling of 32 lanes on one word is not
// what is timed.
template <int Mode, int Pattern>
__global__ void __launch_bounds__(kThreads, 1)
    atomics_kernel(int iters, std::uint32_t op, std::uint32_t zero, std::uint32_t* sink) {
  extern __shared__ std::uint32_t s[];
  for (std::uint32_t i = threadIdx.x; i < kWords; i += kThreads) s[i] = 0;
  __syncthreads();
  std::uint32_t x = threadIdx.x * 2654435761u + blockIdx.x;
  for (int i = 0; i < iters; ++i) {
    x = x * 1664525u + 1013904223u;
    const std::uint32_t opaque = x & zero;  // 0, unknown to the compiler
    const std::uint32_t a =
        Pattern == 0 ? opaque : Pattern == 1 ? ((i & 7) | opaque) : Pattern == 2 ? threadIdx.x : (x >> 17);
    if constexpr (Mode == 0) atomicAdd(s + a, 1u);
    else if constexpr (Mode == 1) atomicAdd(s + a, 65536u);
    else atomicAdd(s + a, op);
  }
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = s[threadIdx.x];
}

// ---- 2. the histogram --------------------------------------------------------------
// V 16-byte vectors a thread an epoch: E = 8 V 1024 samples; T the largest
// power of two <= 65536 - E.
template <int V>
struct Epoch {
  static constexpr std::uint32_t kSamples = 8u * V * kThreads;
  static_assert(kSamples < 65536);
  static constexpr std::uint32_t kT = [] {
    std::uint32_t t = 1u << 15;
    while (t > 65536u - kSamples) t >>= 1;
    return t;
  }();
  static constexpr std::uint32_t kHalfMask = 0xFFFFu & ~(kT - 1);  // the bits >= T
  static constexpr std::uint32_t kWordMask = kHalfMask | (kHalfMask << 16);
};

__device__ __forceinline__ void credit(std::uint32_t* accum, std::uint32_t physical, std::uint32_t lo,
                                       std::uint32_t hi) {
  const std::uint32_t w = swizzle(physical);  // an involution
  if (lo) atomicAdd(accum + 2 * w, lo);
  if (hi) atomicAdd(accum + 2 * w + 1, hi);
}

// EqualVectors: a thread whose 8 samples of a vector are one value adds them
// as one (8 op), its other adds of that vector predicated off.
template <int V, bool EqualVectors>
__global__ void __launch_bounds__(kThreads, 1)
    packed16_kernel(const uint4* __restrict__ in, std::uint64_t vectors, std::uint32_t* __restrict__ accum) {
  using E = Epoch<V>;
  extern __shared__ __align__(16) std::uint32_t h[];
  for (std::uint32_t i = threadIdx.x; i < kWords; i += kThreads) h[i] = 0;
  __syncthreads();

  // The epochs' loop runs on the block's first vector, the same in every
  // thread, so that every thread meets the barriers inside it.
  const std::uint64_t per_epoch = std::uint64_t{V} * kThreads;
  const std::uint64_t stride = per_epoch * gridDim.x;
  std::uint64_t block_base = blockIdx.x * per_epoch;
  auto load = [&](uint4 (&r)[V], std::uint64_t b) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const std::uint64_t i = b + threadIdx.x + std::uint64_t(j) * kThreads;
      r[j] = i < vectors ? __ldcs(in + i) : make_uint4(0, 0, 0, 0);
    }
  };
  auto add = [&](std::uint32_t v) {
    const std::uint32_t w = swizzle(v >> 1);
    atomicAdd(h + w, 1u << ((v & 1) << 4));
  };
  uint4 cur[V];
  load(cur, block_base);
  while (block_base < vectors) {
    const std::uint64_t next = block_base + stride;
    uint4 ahead[V];
    load(ahead, next);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if (block_base + threadIdx.x + std::uint64_t(j) * kThreads >= vectors) break;
      const std::uint32_t q[4] = {cur[j].x, cur[j].y, cur[j].z, cur[j].w};
      if constexpr (EqualVectors) {
        const bool same = q[0] == q[1] && q[1] == q[2] && q[2] == q[3] && (q[0] >> 16) == (q[0] & 0xFFFFu);
        const std::uint32_t v0 = q[0] & 0xFFFFu;
        atomicAdd(h + swizzle(v0 >> 1), (same ? 8u : 1u) << ((v0 & 1) << 4));
        if (!same) {
          add(q[0] >> 16);
#pragma unroll
          for (int k = 1; k < 4; ++k) {
            add(q[k] & 0xFFFFu);
            add(q[k] >> 16);
          }
        }
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          add(q[k] & 0xFFFFu);
          add(q[k] >> 16);
        }
      }
    }
    __syncthreads();
    // The drain: every half >= T to the global counts.
#pragma unroll
    for (int j = 0; j < int(kWords / (4 * kThreads)); ++j) {
      const std::uint32_t p = 4 * (threadIdx.x + j * kThreads);
      uint4 w = *reinterpret_cast<const uint4*>(h + p);
      if (((w.x | w.y | w.z | w.w) & E::kWordMask) != 0) {
        const std::uint32_t q[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          credit(accum, p + k, q[k] & E::kHalfMask, (q[k] >> 16) & E::kHalfMask);
          h[p + k] = q[k] & ~E::kWordMask;
        }
      }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < V; ++j) cur[j] = ahead[j];
    block_base = next;
  }
  // The rest, every non-zero half.
  for (std::uint32_t p = threadIdx.x; p < kWords; p += kThreads) {
    const std::uint32_t q = h[p];
    if (q) credit(accum, p, q & 0xFFFFu, q >> 16);
  }
}

// The limit: a read of the same bytes, 16 bytes a load, the same grid shape.
__global__ void __launch_bounds__(kThreads, 1) read_kernel(const uint4* __restrict__ in, std::uint64_t vectors,
                                                           std::uint32_t* sink) {
  std::uint32_t acc = 0;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * kThreads + threadIdx.x; i < vectors;
       i += std::uint64_t{gridDim.x} * kThreads) {
    const uint4 v = __ldcs(in + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) sink[0] = acc;  // keeps the loads
}

template <class F>
double median_ms(int reps, F&& launch) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  launch();  // warm-up
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(a), "record");
    launch();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 9;
  const bool only_atomics = argc > 2 && std::string(argv[2]) == "atomics";
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  int clock_khz = 0;
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "clock");
  const int sms = prop.multiProcessorCount;
  const std::size_t smem = kWords * 4;
  std::uint32_t* sink = nullptr;
  check(cudaMalloc(&sink, 4096 * 4), "malloc");

  // 1. Atomics: instructions an SM a clock.
  std::printf("## shared atomics: warp instructions / SM / clock (%d SMs, %d MHz)\n", sms, clock_khz / 1000);
  std::printf("| add | all lanes one word | all lanes one word, 8 words in turn | each thread its own word | random of 32768 "
              "words |\n|---|---|---|---|---|\n");
  const int iters = 1 << 14;
  auto rate = [&](auto kernel, std::uint32_t op) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "attr");
    const double ms = median_ms(reps, [&] { kernel<<<sms, kThreads, smem>>>(iters, op, 0u, sink); });
    check(cudaGetLastError(), "atomics launch");
    return double(sms) * (kThreads / 32) * iters / (ms * 1e-3) / sms / (clock_khz * 1e3);
  };
  std::printf("| atomicAdd(p, 1) | %.3f | %.3f | %.3f | %.3f |\n", rate(atomics_kernel<0, 0>, 1),
              rate(atomics_kernel<0, 1>, 1), rate(atomics_kernel<0, 2>, 1), rate(atomics_kernel<0, 3>, 1));
  std::printf("| atomicAdd(p, 65536) | %.3f | %.3f | %.3f | %.3f |\n", rate(atomics_kernel<1, 0>, 1),
              rate(atomics_kernel<1, 1>, 1), rate(atomics_kernel<1, 2>, 1), rate(atomics_kernel<1, 3>, 1));
  std::printf("| atomicAdd(p, op), op = 65536 from an argument | %.3f | %.3f | %.3f | %.3f |\n",
              rate(atomics_kernel<2, 0>, 65536), rate(atomics_kernel<2, 1>, 65536), rate(atomics_kernel<2, 2>, 65536),
              rate(atomics_kernel<2, 3>, 65536));

  if (only_atomics) return 0;

  // 2. The histogram, 1 GiB of u16.
  const std::uint64_t n = std::uint64_t{1} << 29, vectors = n / 8;
  std::vector<std::uint16_t> host(n);
  std::uint16_t* dev = nullptr;
  std::uint32_t* accum = nullptr;
  check(cudaMalloc(&dev, n * 2), "malloc");
  check(cudaMalloc(&accum, 65536 * 4), "malloc");
  const char* dists[] = {"uniform", "constant even", "constant odd", "ramp", "two values, one word", "skewed", "period 8 (every lane the same 8 values)"};
  std::printf("\n## u16, 65536 bins, 1 GiB: GB/s (median of %d), each checked against the CPU\n", reps);
  std::printf("| distribution | read | packed16 V=4 (T=32768) | V=6 (T=16384) | V=6, equal vectors as one add |\n|---|---|---|---|---|\n");
  std::mt19937_64 rng(20261129);
  for (int d = 0; d < 7; ++d) {
    for (std::uint64_t i = 0; i < n; i += 4) {
      const std::uint64_t r = rng();
      for (int k = 0; k < 4; ++k) {
        const std::uint16_t u = static_cast<std::uint16_t>(r >> (16 * k));
        std::uint16_t v = u;
        switch (d) {
          case 1: v = 1234; break;
          case 2: v = 4321; break;
          case 3: v = static_cast<std::uint16_t>(i + k); break;
          case 4: v = 100 + (u & 1); break;
          case 6: v = static_cast<std::uint16_t>(1000 + ((i + k) & 7)); break;
          case 5: v = static_cast<std::uint16_t>(std::min<std::uint32_t>(65535, __builtin_ctz(u | 0x8000u) * 4096u + (u & 63))); break;
          default: break;
        }
        host[i + k] = v;
      }
    }
    std::vector<std::uint64_t> ref(65536, 0);
    for (std::uint64_t i = 0; i < n; ++i) ++ref[host[i]];
    check(cudaMemcpy(dev, host.data(), n * 2, cudaMemcpyHostToDevice), "copy");
    const uint4* in = reinterpret_cast<const uint4*>(dev);
    const double read_ms = median_ms(reps, [&] { read_kernel<<<sms * 2, kThreads>>>(in, vectors, sink); });
    std::printf("| %s | %.0f", dists[d], n * 2 / (read_ms * 1e-3) / 1e9);
    auto run = [&](auto kernel) {
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "attr");
      auto launch = [&] {
        cudaMemsetAsync(accum, 0, 65536 * 4);
        kernel<<<sms, kThreads, smem>>>(in, vectors, accum);
      };
      launch();
      check(cudaDeviceSynchronize(), "histogram");
      std::vector<std::uint32_t> got(65536);
      check(cudaMemcpy(got.data(), accum, 65536 * 4, cudaMemcpyDeviceToHost), "copy back");
      for (int b = 0; b < 65536; ++b)
        if (got[b] != ref[b]) {
          std::printf("\npacked16_probe: WRONG count, bin %d: %u, the CPU %llu\n", b, got[b],
                      static_cast<unsigned long long>(ref[b]));
          std::exit(1);
        }
      const double ms = median_ms(reps, launch);
      std::printf(" | %.0f", n * 2 / (ms * 1e-3) / 1e9);
    };
    run(packed16_kernel<4, false>);
    run(packed16_kernel<6, false>);
    run(packed16_kernel<6, true>);
    std::printf(" |\n");
    std::fflush(stdout);
  }
  return 0;
}
