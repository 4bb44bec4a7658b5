// Design study: where a call of two 8-bit images counted by raw pair
// (gpu_joint's byte pairs: raw_pairs_kernel of src/cuda/raw_pairs.cuh) spends
// its time, block by block, and what another end costs. A reduced copy of
// that kernel's path for noise (16 returning shared adds a vector of 16 pairs,
// no drains, no runs: on noise no half reaches 2^14 below 8 GiB) stamps
// %globaltimer at each block's start,
// the end of its counting and the end of its adds to the output. Ends:
//   1  the library's: each block adds its 65536 halves to the 64-bit slots
//      (8.7 M 64-bit atomics a call on 132 SMs);
//   2  each block adds four pairs' counts as one 16-byte float add
//      (red.global.add.v4.f32) into a 65536-float workspace (exact: every sum
//      stays below 256 x 65535 < 2^24), and the last block to finish folds
//      the workspace into the slots and leaves it zero;
//   3  as 2, the fold a second kernel over the whole GPU;
//   0  no end (the counting alone: the bound of any end).
// Every end's slots are checked against the CPU's counts before its time is
// printed (docs/PERFORMANCE-shapes.md, N-d change 12).
//
// Build (CMake, with the benchmark): target joint_end_probe, or
// nvcc -std=c++20 -arch=sm_90 -O3 -Iinclude -Isrc bench/experiments/joint_end_probe.cu. Usage:
// joint_end_probe [reps] (default 7; the median is printed).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda/cuda_common.cuh"  // last_block_to_finish

namespace {

constexpr unsigned kWords = 32768;    // 65536 16-bit halves
constexpr unsigned kSlots = 67081;    // 259 x 259: each axis's 256 bins and its flows
constexpr unsigned kBlocksMax = 256;  // float sums exact while blocks x 65535 < 2^24

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__host__ __device__ __forceinline__ unsigned slot_of(unsigned pair) { return (pair >> 8) * 259 + (pair & 255) + 1; }

// Four pairs' float sums into their slots, leaving them zero.
__device__ void fold_four(float* sums, unsigned long long* slots, unsigned p) {
  const float4 f = __ldcg(reinterpret_cast<const float4*>(sums + p));
  if (f.x == 0.f && f.y == 0.f && f.z == 0.f && f.w == 0.f) return;
  *reinterpret_cast<float4*>(sums + p) = make_float4(0.f, 0.f, 0.f, 0.f);
  const float v[4] = {f.x, f.y, f.z, f.w};
  for (int q = 0; q < 4; ++q)
    if (v[q] != 0.f) atomicAdd(slots + slot_of(p + q), static_cast<unsigned long long>(v[q]));
}

__global__ void __launch_bounds__(1024, 1) count_pairs(const uint4* a, const uint4* b, unsigned long long vectors,
                                                       unsigned long long chunk_vectors, unsigned long long* slots,
                                                       unsigned long long* stamps, int end, float* sums,
                                                       unsigned* ticket) {
  extern __shared__ unsigned words[];
  const unsigned long long t0 = now();
  for (unsigned i = threadIdx.x; i < kWords; i += blockDim.x) words[i] = 0;
  __syncthreads();
  const unsigned long long chunks = (vectors + chunk_vectors - 1) / chunk_vectors;
  unsigned flips_seen = 0;
  for (unsigned long long c = blockIdx.x; c < chunks; c += gridDim.x) {
    const unsigned long long v1 = min(vectors, (c + 1) * chunk_vectors);
    for (unsigned long long v = c * chunk_vectors + threadIdx.x; v < v1; v += blockDim.x) {
      const uint4 x = __ldcs(a + v), y = __ldcs(b + v);
      const unsigned wa[4] = {x.x, x.y, x.z, x.w}, wb[4] = {y.x, y.y, y.z, y.w};
      unsigned flips = 0;
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const unsigned pair = __byte_perm(wb[q], wa[q], k | (4 + k) << 4);
          const unsigned increment = 1u + (pair & 1u) * 0xFFFFu;
          const unsigned old = atomicAdd(words + ((pair & 0xFFFEu) >> 1), increment);
          flips |= old ^ (old + increment);
        }
      flips_seen |= flips;  // kept live, as the library tests it
    }
    __syncthreads();
  }
  const unsigned long long t1 = now();
  if (end == 1) {
    for (unsigned w = threadIdx.x; w < kWords; w += blockDim.x) {
      const unsigned value = words[w];
      if (value & 0xFFFFu) atomicAdd(slots + slot_of(2 * w), static_cast<unsigned long long>(value & 0xFFFFu));
      if (value >> 16) atomicAdd(slots + slot_of(2 * w + 1), static_cast<unsigned long long>(value >> 16));
    }
  } else if (end >= 2) {
    for (unsigned w = threadIdx.x * 2; w < kWords; w += blockDim.x * 2) {
      const unsigned v0 = words[w], v1 = words[w + 1];
      if ((v0 | v1) == 0) continue;
#if __CUDA_ARCH__ >= 900
      asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(sums + 2 * w), "f"(float(v0 & 0xFFFFu)),
                   "f"(float(v0 >> 16)), "f"(float(v1 & 0xFFFFu)), "f"(float(v1 >> 16))
                   : "memory");
#else  // no vector adds before sm_90: four
      atomicAdd(sums + 2 * w, float(v0 & 0xFFFFu));
      atomicAdd(sums + 2 * w + 1, float(v0 >> 16));
      atomicAdd(sums + 2 * w + 2, float(v1 & 0xFFFFu));
      atomicAdd(sums + 2 * w + 3, float(v1 >> 16));
#endif
    }
    if (end == 2 && levelhist::cuda_detail::last_block_to_finish(ticket)) {
      for (unsigned p = threadIdx.x * 4; p < 2 * kWords; p += blockDim.x * 4) fold_four(sums, slots, p);
      if (threadIdx.x == 0) *ticket = 0;
    }
  }
  __syncthreads();
  const unsigned long long t2 = now();
  if (threadIdx.x == 0) {
    stamps[blockIdx.x * 3] = t0;
    stamps[blockIdx.x * 3 + 1] = t1;
    stamps[blockIdx.x * 3 + 2] = t2;
  }
  if (flips_seen == 0x12345678u) slots[0] = 0;  // never: keeps the flip test in the code
}

__global__ void fold_kernel(float* sums, unsigned long long* slots) {
  const unsigned p = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (p < 2 * kWords) fold_four(sums, slots, p);
}

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "joint_end_probe: %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned blocks = std::min<unsigned>(static_cast<unsigned>(sms), kBlocksMax);  // one block an SM (128 KiB)
  const std::size_t smem = kWords * 4;
  CHECK(cudaFuncSetAttribute(count_pairs, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  unsigned long long *slots = nullptr, *stamps = nullptr;
  float* sums = nullptr;
  unsigned* ticket = nullptr;
  CHECK(cudaMalloc(&slots, kSlots * 8));
  CHECK(cudaMalloc(&stamps, blocks * 3 * 8));
  CHECK(cudaMalloc(&sums, 2 * kWords * 4));
  CHECK(cudaMemset(sums, 0, 2 * kWords * 4));
  CHECK(cudaMalloc(&ticket, 4));
  CHECK(cudaMemset(ticket, 0, 4));
  std::printf("%u blocks of 1024 threads; noise (xorshift bytes); us a call, median of %d\n", blocks, reps);
  for (std::size_t mib : {std::size_t{256}, std::size_t{1024}}) {
    const std::size_t half = (mib << 20) / 2;  // two columns of half the bytes each
    std::vector<unsigned char> ha(half), hb(half);
    unsigned long long s = 88172645463325252ull;
    auto next = [&] {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      return static_cast<unsigned char>(s >> 24);
    };
    for (auto& x : ha) x = next();
    for (auto& x : hb) x = next();
    std::vector<unsigned long long> want(kSlots, 0), got(kSlots);
    for (std::size_t i = 0; i < half; ++i) ++want[slot_of(unsigned{ha[i]} << 8 | hb[i])];
    unsigned char *a = nullptr, *b = nullptr;
    CHECK(cudaMalloc(&a, half));
    CHECK(cudaMalloc(&b, half));
    CHECK(cudaMemcpy(a, ha.data(), half, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb.data(), half, cudaMemcpyHostToDevice));
    for (int end : {1, 3, 2, 0, 3, 1}) {
      cudaEvent_t e0, e1;
      CHECK(cudaEventCreate(&e0));
      CHECK(cudaEventCreate(&e1));
      std::vector<float> ms;
      for (int r = 0; r < reps + 1; ++r) {  // the first a warm-up, not timed
        CHECK(cudaMemsetAsync(slots, 0, kSlots * 8));
        CHECK(cudaEventRecord(e0));
        count_pairs<<<blocks, 1024, smem>>>(reinterpret_cast<const uint4*>(a), reinterpret_cast<const uint4*>(b),
                                           half / 16, 49152 / 16, slots, stamps, end, sums, ticket);
        if (end == 3) fold_kernel<<<(2 * kWords / 4 + 255) / 256, 256>>>(sums, slots);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float m = 0;
        CHECK(cudaEventElapsedTime(&m, e0, e1));
        if (r > 0) ms.push_back(m);
      }
      CHECK(cudaEventDestroy(e0));
      CHECK(cudaEventDestroy(e1));
      CHECK(cudaMemcpy(got.data(), slots, kSlots * 8, cudaMemcpyDeviceToHost));
      if (end != 0 && got != want) {
        std::printf("%4zu MiB end %d: WRONG counts\n", mib, end);
        return 1;
      }
      std::vector<unsigned long long> st(blocks * 3);
      CHECK(cudaMemcpy(st.data(), stamps, st.size() * 8, cudaMemcpyDeviceToHost));
      unsigned long long t0 = ~0ull, done = 0;
      std::vector<double> counted, adds;
      for (unsigned i = 0; i < blocks; ++i) t0 = std::min(t0, st[i * 3]);
      for (unsigned i = 0; i < blocks; ++i) {
        counted.push_back((st[i * 3 + 1] - t0) / 1e3);
        adds.push_back((st[i * 3 + 2] - st[i * 3 + 1]) / 1e3);
        done = std::max(done, st[i * 3 + 2]);
      }
      std::sort(ms.begin(), ms.end());
      std::sort(counted.begin(), counted.end());
      std::sort(adds.begin(), adds.end());
      const double us = ms[ms.size() / 2] * 1e3;
      std::printf("%4zu MiB end %d: %6.1f us (%4.0f GB/s)%s; counting ends %.1f-%.1f us, a block's end %.1f-%.1f "
                  "(median %.1f), the last block done at %.1f\n",
                  mib, end, us, static_cast<double>(mib << 20) / (us * 1e-6) / 1e9, end ? ", counts checked" : "",
                  counted.front(), counted.back(), adds.front(), adds.back(), adds[adds.size() / 2],
                  (done - t0) / 1e3);
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
  }
  return 0;
}
