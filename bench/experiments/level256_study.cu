// Design study for the 256-bin byte histogram (issue 4): candidate shared-memory
// layouts timed side by side with the streaming-read limit and CUB, each checked
// against a CPU count first. Standalone on purpose (nvcc -O3 -arch=sm_90), so it
// can run before the library builds on the device. Results: docs/PERFORMANCE.md.
#include <cub/device/device_histogram.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

using u32 = unsigned;
using u64 = unsigned long long;

// ---------------------------------------------------------------- limit
__global__ void stream_read(const uint4* p, size_t n16, u32* sink) {
  u32 acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// ---------------------------------------------------------------- common body
// Every variant reads 16-byte words grid-stride (n multiple of 16 here: the study
// times layouts, the library handles heads and tails) and calls Count(word).
template <int UNROLL, class Body>
__device__ __forceinline__ void for_each_word(const uint4* p, size_t n16, Body&& body) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) body(v[u]);
  }
  for (; i < n16; i += stride) body(__ldcs(p + i));
}

// A: one 256-bin shared histogram per block, shared atomics (CUB's layout, 004 Fig. 9.10).
template <int UNROLL>
__global__ void __launch_bounds__(512) k_block_shared(const uint4* p, size_t n16, u32* out) {
  __shared__ u32 h[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
  __syncthreads();
  for_each_word<UNROLL>(p, n16, [&](uint4 v) {
    u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int b = 0; b < 4; ++b) atomicAdd(&h[(w[k] >> (8 * b)) & 0xff], 1u);
  });
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&out[i], h[i]);
}

// B: 32 lane columns: h[bin][lane], 32-bit counters, shared atomics. Bank = lane for
// every access, whatever the data: no bank conflicts at all; atomics only resolve
// the warps of one block sharing a column.
template <int BLOCK, int UNROLL, bool RUNTIME_INCREMENT = false>
__global__ void __launch_bounds__(BLOCK) k_lane_columns(const uint4* p, size_t n16, u32* out, u32 increment = 1) {
  __shared__ u32 h[256 * 32];
  for (int i = threadIdx.x; i < 256 * 32; i += BLOCK) h[i] = 0;
  __syncthreads();
  const u32 lane = threadIdx.x & 31;
  u32* col = h + lane;
  for_each_word<UNROLL>(p, n16, [&](uint4 v) {
    u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int b = 0; b < 4; ++b) atomicAdd(col + (((w[k] >> (8 * b)) & 0xff) << 5), RUNTIME_INCREMENT ? increment : 1u);
  });
  __syncthreads();
  // Row sums: thread t sums bin t's 32 columns, starting at column t so that the
  // 32 lanes of a warp read 32 different banks (TRISH's staggered indexing, 003).
  for (int bin = threadIdx.x; bin < 256; bin += BLOCK) {
    u32 s = 0;
#pragma unroll 8
    for (int c = 0; c < 32; ++c) s += h[bin * 32 + ((c + bin) & 31)];
    if (s) atomicAdd(&out[bin], s);
  }
}

// C: lane columns with two 16-bit counters per word (16 KB per block): half the
// shared memory, same number of atomics; a 16-bit counter of a column gets at
// most BLOCK/32 warps x 16 bytes per iteration, so flush every FLUSH iterations.
template <int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK) k_lane_columns16(const uint4* p, size_t n16, u32* out) {
  __shared__ u32 h[128 * 32];
  constexpr int kWarps = BLOCK / 32;
  constexpr int kFlushIters = 65535 / (kWarps * 16);  // iterations of one 16-byte word per thread
  for (int i = threadIdx.x; i < 128 * 32; i += BLOCK) h[i] = 0;
  u32 acc = 0;  // bin threadIdx.x (< 256)
  __syncthreads();
  const u32 lane = threadIdx.x & 31;
  u32* col = h + lane;
  size_t stride = (size_t)gridDim.x * BLOCK;
  size_t total_iters = (n16 + stride - 1) / stride;  // uniform across the block
  size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x;
  for (size_t it0 = 0; it0 < total_iters; it0 += kFlushIters) {
    size_t it_end = min(total_iters, it0 + (size_t)kFlushIters);
    for (size_t it = it0; it < it_end; ++it, i += stride) {
      if (i < n16) {
        uint4 v = __ldcs(p + i);
        u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
          for (int b = 0; b < 4; ++b) {
            u32 bin = (w[k] >> (8 * b)) & 0xff;
            atomicAdd(col + ((bin >> 1) << 5), 1u << ((bin & 1) * 16));
          }
      }
    }
    __syncthreads();
    if (threadIdx.x < 256) {
      u32 bin = threadIdx.x, row = bin >> 1, sh = (bin & 1) * 16;
      for (int c = 0; c < 32; ++c) acc += (h[row * 32 + ((c + row) & 31)] >> sh) & 0xffff;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < 128 * 32; j += BLOCK) h[j] = 0;
    __syncthreads();
  }
  if (threadIdx.x < 256 && acc) atomicAdd(&out[threadIdx.x], acc);
}

// D: per-warp private copies, packed 8-bit counters per lane (Wilt's interleaved
// layout, 000, but one copy per warp instead of per block), plain read-modify-write
// without atomics; flush into 16-bit pair registers before a byte can overflow.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) k_warp_packed8(const uint4* p, size_t n16, u32* out) {
  extern __shared__ u32 smem[];
  constexpr int kWarps = BLOCK / 32;
  const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  u32* h = smem + warp * (64 * 32);  // [64 rows of 4 bins][32 lanes]
  for (int i = lane; i < 64 * 32; i += 32) h[i] = 0;
  __syncwarp();
  u32 wide[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // lane owns rows 2*lane, 2*lane+1 (bins 8l..8l+7)
  size_t stride = (size_t)gridDim.x * BLOCK;
  size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x;
  size_t total_iters = (n16 + stride - 1) / stride;
  auto flush = [&]() {
    __syncwarp();
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      int row = 2 * lane + r;
      u32 p02 = 0, p13 = 0;  // 16-bit pairs: 32 columns x < 256 fits
      for (int c = 0; c < 32; ++c) {
        int idx = row * 32 + ((c + lane) & 31);
        u32 x = h[idx];
        h[idx] = 0;
        p02 += x & 0x00ff00ffu;
        p13 += (x >> 8) & 0x00ff00ffu;
      }
      wide[4 * r + 0] += p02 & 0xffff;
      wide[4 * r + 2] += p02 >> 16;
      wide[4 * r + 1] += p13 & 0xffff;
      wide[4 * r + 3] += p13 >> 16;
    }
    __syncwarp();
  };
  int since_flush = 0;
  for (size_t it = 0; it < total_iters; ++it, i += stride) {
    if (i < n16) {
      uint4 v = __ldcs(p + i);
      u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          u32 bin = (w[k] >> (8 * b)) & 0xff;
          h[((bin >> 2) << 5) + lane] += 1u << ((bin & 3) * 8);
        }
    }
    if (++since_flush == 15) {  // 15 x 16 bytes = 240 < 256 per lane counter
      since_flush = 0;
      flush();
    }
  }
  flush();
#pragma unroll
  for (int j = 0; j < 8; ++j)
    if (wide[j]) atomicAdd(&out[8 * lane + j], wide[j]);
  (void)kWarps;
}

// ---------------------------------------------------------------- harness
struct Timer {
  cudaEvent_t a, b;
  Timer() { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); }
};

template <class F>
double median_ms(F&& f, int reps = 15) {
  Timer t;
  for (int w = 0; w < 3; ++w) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> ms(reps);
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(t.a));
    f();
    CK(cudaEventRecord(t.b));
    CK(cudaEventSynchronize(t.b));
    CK(cudaEventElapsedTime(&ms[r], t.a, t.b));
  }
  std::sort(ms.begin(), ms.end());
  return ms[reps / 2];
}

std::vector<uint8_t> load_pgm(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::string magic;
  f >> magic;
  auto skip = [&] {
    int c;
    while ((c = f.peek()) != EOF) {
      if (c == '#') { std::string line; std::getline(f, line); }
      else if (std::isspace(c)) f.get();
      else break;
    }
  };
  int w, h, maxv;
  skip(); f >> w; skip(); f >> h; skip(); f >> maxv; f.get();
  std::vector<uint8_t> px((size_t)w * h);
  f.read((char*)px.data(), px.size());
  return px;
}

int main(int argc, char** argv) {
  size_t n = (size_t)1 << 30;
  if (argc > 1) n = std::strtoull(argv[1], nullptr, 0);
  const char* image = argc > 2 ? argv[2] : "bench/data/coins.pgm";
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs, L2 %d MiB, n = %zu bytes\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, n);
  std::vector<uint8_t> host(n);
  uint8_t* d;
  u32* dout;
  CK(cudaMalloc(&d, n));
  CK(cudaMalloc(&dout, 1024 * sizeof(u32)));
  void* cub_tmp = nullptr;
  size_t cub_bytes = 0;
  CK(cub::DeviceHistogram::HistogramEven(cub_tmp, cub_bytes, d, (int*)dout, 257, 0, 256, (int)std::min<size_t>(n, INT32_MAX)));
  CK(cudaMalloc(&cub_tmp, cub_bytes));
  const int sms = prop.multiProcessorCount;
  size_t n16 = n / 16;

  struct Variant { const char* name; std::function<void()> run; };
  auto occ = [&](auto kernel, int block, size_t smem) {
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, block, smem));
    return per * sms;
  };
  CK(cudaFuncSetAttribute(k_warp_packed8<256>, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * 8192));
  const int gA = occ(k_block_shared<2>, 512, 0);
  const int gB512 = occ(k_lane_columns<512, 2>, 512, 0), gB1024 = occ(k_lane_columns<1024, 2>, 1024, 0);
  const int gC = occ(k_lane_columns16<1024, 1>, 1024, 0);
  const int gD = occ(k_warp_packed8<256>, 256, 8 * 8192);
  std::printf("grids: block_shared %d, lane32x512 %d, lane32x1024 %d, lane16x1024 %d, warp8x256 %d\n", gA, gB512, gB1024, gC, gD);
  std::vector<Variant> variants = {
      {"read_limit", [&] { stream_read<<<sms * 8, 512>>>((const uint4*)d, n16, dout + 512); }},
      {"cub_even", [&] { CK(cub::DeviceHistogram::HistogramEven(cub_tmp, cub_bytes, d, (int*)dout, 257, 0, 256, (int)n)); }},
      {"block_shared_u2", [&] { cudaMemsetAsync(dout, 0, 1024); k_block_shared<2><<<gA, 512>>>((const uint4*)d, n16, dout); }},
      {"lane32_512_u1", [&] { cudaMemsetAsync(dout, 0, 1024); k_lane_columns<512, 1><<<gB512, 512>>>((const uint4*)d, n16, dout); }},
      {"lane32_512_u2", [&] { cudaMemsetAsync(dout, 0, 1024); k_lane_columns<512, 2><<<gB512, 512>>>((const uint4*)d, n16, dout); }},
      {"lane32_512_u4", [&] { cudaMemsetAsync(dout, 0, 1024); k_lane_columns<512, 4><<<gB512, 512>>>((const uint4*)d, n16, dout); }},
      // B with the increment a kernel argument: separates the atomic kind (ATOMS.ADD
      // instead of ATOMS.POPC.INC) from everything else that differs in C.
      {"lane32_512_u2_runtime_inc", [&] { cudaMemsetAsync(dout, 0, 1024); k_lane_columns<512, 2, true><<<gB512, 512>>>((const uint4*)d, n16, dout, 1u); }},
      {"lane32_1024_u2", [&] { cudaMemsetAsync(dout, 0, 1024); k_lane_columns<1024, 2><<<gB1024, 1024>>>((const uint4*)d, n16, dout); }},
      {"lane16_1024", [&] { cudaMemsetAsync(dout, 0, 1024); k_lane_columns16<1024, 1><<<gC, 1024>>>((const uint4*)d, n16, dout); }},
      {"warp_packed8_256", [&] { cudaMemsetAsync(dout, 0, 1024); k_warp_packed8<256><<<gD, 256, 8 * 8192>>>((const uint4*)d, n16, dout); }},
  };

  std::vector<uint8_t> img = load_pgm(image);
  const char* dists[] = {"uniform", "zeros", "1 value", "2 values", "4 values", "16 values", "linear", "image"};
  std::printf("\n| variant |");
  for (auto* dn : dists) std::printf(" %s |", dn);
  std::printf(" min/max |\n|---|");
  for (size_t i = 0; i < std::size(dists); ++i) std::printf("---|");
  std::printf("---|\n");
  std::vector<std::vector<double>> gbs(variants.size(), std::vector<double>(std::size(dists)));
  std::vector<std::vector<int>> bad(variants.size(), std::vector<int>(std::size(dists)));
  uint64_t seed = 0x1234567;
  auto rnd = [&] { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; return seed; };
  for (size_t di = 0; di < std::size(dists); ++di) {
    std::string dn = dists[di];
    int distinct = dn == "uniform" ? 256 : dn == "zeros" ? 0 : dn == "1 value" ? 1 : dn == "2 values" ? 2 : dn == "4 values" ? 4 : dn == "16 values" ? 16 : -1;
    uint8_t pool[256];
    for (int i = 0; i < 256; ++i) pool[i] = (uint8_t)(rnd() >> 11);
    if (distinct == 256) for (int i = 0; i < 256; ++i) pool[i] = (uint8_t)i;
    for (size_t i = 0; i < n; i += 8) {
      uint64_t r = rnd();
      for (int b = 0; b < 8 && i + b < n; ++b) {
        uint8_t v;
        if (distinct == 0) v = 0;
        else if (distinct > 0) v = pool[((r >> (8 * b)) & 0xff) % distinct];
        else if (dn == "linear") v = (uint8_t)((i + b) & 0xff);
        else v = img[(i + b) % img.size()];
        host[i + b] = v;
      }
    }
    std::vector<u64> ref(256, 0);
    for (size_t i = 0; i < n; ++i) ref[host[i]]++;
    CK(cudaMemcpy(d, host.data(), n, cudaMemcpyHostToDevice));
    for (size_t vi = 0; vi < variants.size(); ++vi) {
      if (vi > 0) {  // check
        CK(cudaMemset(dout, 0, 1024));
        variants[vi].run();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        u32 got[256];
        CK(cudaMemcpy(got, dout, sizeof(got), cudaMemcpyDeviceToHost));
        for (int b = 0; b < 256; ++b)
          if (got[b] != (u32)ref[b]) { bad[vi][di] = 1; break; }
      }
      double ms = median_ms(variants[vi].run);
      CK(cudaGetLastError());
      gbs[vi][di] = n / ms / 1e6;
    }
  }
  for (size_t vi = 0; vi < variants.size(); ++vi) {
    std::printf("| %s |", variants[vi].name);
    double lo = 1e30, hi = 0;
    for (size_t di = 0; di < std::size(dists); ++di) {
      std::printf(" %.0f%s |", gbs[vi][di], bad[vi][di] ? " WRONG" : "");
      lo = std::min(lo, gbs[vi][di]);
      hi = std::max(hi, gbs[vi][di]);
    }
    std::printf(" %.2f |\n", lo / hi);
  }
  return 0;
}
