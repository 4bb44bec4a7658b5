// The timeline of one call of gpu_shared_swizzle's kernel: u16 samples into
// 4096 bins over [0, 4096) and f32 samples into 1024 even bins over [0, 1),
// uniform and constant data, of a given size (default 16 MiB), in L2 after the
// calls before it. Each block's thread 0 records the global timer at the
// kernel's marks (SharedMark: start, the previous kernel completed, counters
// cleared, samples counted, additions issued, ticket taken, the last block's
// fold done; calls that take the direct end have no ticket and no fold), so the
// time of each phase is measured, not guessed. The kernel is the library's own
// (shared_histogram.cuh) under a policy that differs only in its mark(); the
// library's policy is timed beside it, back to back with CUDA events, to show
// what the marks cost (H200, 16 MiB: 0.2-0.5 us a call with one block an SM,
// up to 2 us with two, whose blocks then start later). The library's earlier
// shape of block is measured the same way: two blocks of 512 threads an SM
// (Pairs) instead of one of 1024. Every call's counts are checked against the
// CPU's.
//
// Build (CMake, with the benchmark): target shared_timeline.
// Usage: shared_timeline [MiB [calls [u16|f32|all]]]    (default 16, 200, all)
// The library's knobs apply (e.g. LEVELHIST_SHARED_DIRECT, LEVELHIST_SHARED_BLOCK_BYTES).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda/shared_histogram.cuh"

namespace {

using namespace levelhist;
using namespace levelhist::cuda_detail::general;

constexpr int kMaxBlocks = 4096;
__device__ unsigned long long g_marks[kMaxBlocks][kSharedMarks];

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

using Library = SharedPolicy<Layout::swizzled>;
// Two blocks of 512 threads an SM, the library's shape until the block of
// 1024 (the same warps, twice the blocks' partial histograms to add at the end).
struct Pairs : Library {
  static constexpr int kThreads = 512;
  static constexpr int kMinBlocksPerSM = 2;
};
template <class P>
struct Timeline : P {
  static __device__ void mark(int m) {
    if (blockIdx.x < kMaxBlocks) g_marks[blockIdx.x][m] = global_ns();
  }
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "shared_timeline: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

using Impl = SharedStrategy<Layout::swizzled>;

template <class T, class P>
void launch(const RunArgs& a) {
  Problem p{a.type, a.binning, a.n};
  std::uint32_t width = 0, parts = 0;
  Impl::shape(p, &width, &parts);
  with_map<T>(a, choose_map(a.type, *a.binning), [&](const auto& map) { Impl::launch_as<P, T>(a, map, width, parts); });
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <class T, class Policy>
void run_case(const char* name, SampleType type, const Binning& binning, const std::vector<T>& host, int calls) {
  const std::uint64_t n = host.size();
  std::vector<std::uint64_t> expected(binning.slots(), 0);
  const BinIndexer indexer = make_indexer(binning);
  for (const T& x : host) ++expected[indexer.slot(static_cast<double>(x))];

  T* samples = nullptr;
  std::uint64_t* slots = nullptr;
  void* workspace = nullptr;
  Problem p{type, &binning, n};
  const std::size_t ws_bytes = Impl::workspace_bytes(p);
  check(cudaMalloc(&samples, n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&slots, binning.slots() * 8), "cudaMalloc");
  check(cudaMalloc(&workspace, ws_bytes), "cudaMalloc");
  check(cudaMemset(workspace, 0, ws_bytes), "cudaMemset");
  check(cudaMemcpy(samples, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  RunArgs a{};
  a.samples = samples;
  a.n = n;
  a.type = type;
  a.binning = &binning;
  a.indexer = indexer;
  a.slots = slots;
  a.workspace = workspace;
  a.workspace_bytes = ws_bytes;
  a.stream = nullptr;

  auto verify = [&](const char* who) {
    std::vector<std::uint64_t> got(binning.slots());
    check(cudaMemcpy(got.data(), slots, got.size() * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (got != expected) {
      std::fprintf(stderr, "shared_timeline: %s, %s: the counts differ from the CPU's\n", name, who);
      std::exit(1);
    }
  };

  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  // Per-call time, back to back, both policies by turns in rounds of `calls`.
  auto time_calls = [&](auto launch_one) {
    launch_one();
    check(cudaEventRecord(e0), "record");
    for (int c = 0; c < calls; ++c) launch_one();
    check(cudaEventRecord(e1), "record");
    check(cudaEventSynchronize(e1), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    return 1e3 * ms / calls;
  };
  std::vector<double> lib_us, tl_us;
  for (int round = 0; round < 5; ++round) {
    lib_us.push_back(time_calls([&] { launch<T, Policy>(a); }));
    verify("library policy");
    tl_us.push_back(time_calls([&] { launch<T, Timeline<Policy>>(a); }));
    verify("timeline policy");
  }
  const double bytes = static_cast<double>(n * sizeof(T));
  std::printf("\n## %s, %.0f MiB, blocks of %d threads\n", name, bytes / (1 << 20), Policy::kThreads);
  std::printf("back to back, median of 5 rounds of %d calls: %.2f us (%.0f GB/s), with marks %.2f us\n", calls,
              median(lib_us), bytes / median(lib_us) / 1e3, median(tl_us));

  // The timeline of calls that follow a call back to back: several, each read.
  std::vector<unsigned long long> marks(std::size_t{kMaxBlocks} * kSharedMarks);
  const char* names[kSharedMarks] = {"start", "waited", "cleared", "counted", "added", "ticket", "folded"};
  std::vector<std::vector<double>> at(kSharedMarks);  // per mark: the blocks' times from the first start, all calls
  std::vector<double> span;
  const std::vector<unsigned long long> unset(marks.size(), 0);
  int blocks = 0;
  for (int rep = 0; rep < 20; ++rep) {
    check(cudaMemcpyToSymbol(g_marks, unset.data(), unset.size() * 8), "cudaMemcpyToSymbol");
    launch<T, Timeline<Policy>>(a);
    launch<T, Timeline<Policy>>(a);  // the one recorded: it follows a call, as in a loop of calls
    check(cudaDeviceSynchronize(), "sync");
    check(cudaMemcpyFromSymbol(marks.data(), g_marks, marks.size() * 8), "cudaMemcpyFromSymbol");
    blocks = 0;
    unsigned long long t0 = ~0ull, t_end = 0;
    for (int b = 0; b < kMaxBlocks; ++b) {
      const unsigned long long* row = &marks[static_cast<std::size_t>(b) * kSharedMarks];
      if (!row[kSharedMarkStart]) break;
      ++blocks;
      t0 = std::min(t0, row[kSharedMarkStart]);
    }
    // The call before wrote the same marks: a mark is this call's only if it
    // is not before this call's first start, and the fold only if after this
    // call's first wait ended (the earlier call had then completed; its fold
    // may come after this call's first blocks started).
    unsigned long long first_waited = ~0ull;
    for (int b = 0; b < blocks; ++b)
      first_waited = std::min(first_waited, marks[static_cast<std::size_t>(b) * kSharedMarks + kSharedMarkWaited]);
    for (int b = 0; b < blocks; ++b) {
      const unsigned long long* row = &marks[static_cast<std::size_t>(b) * kSharedMarks];
      for (int m = 0; m < kSharedMarks; ++m)
        if (row[m] >= t0 && (m != kSharedMarkFolded || row[m] > first_waited)) {
          at[m].push_back(static_cast<double>(row[m] - t0) / 1e3);
          t_end = std::max(t_end, row[m]);
        }
    }
    span.push_back(static_cast<double>(t_end - t0) / 1e3);
  }
  verify("timeline calls");
  std::printf("timeline of %d blocks, 20 calls each after a call (us from the call's first block start; "
              "min / median / 90%% / max over blocks and calls); first start to last mark: median %.2f us\n",
              blocks, median(span));
  std::printf("| mark | min | median | 90%% | max |\n|---|---|---|---|---|\n");
  for (int m = 0; m < kSharedMarks; ++m) {
    auto v = at[m];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", names[m], v.front(), v[v.size() / 2], v[v.size() * 9 / 10],
                v.back());
  }
  check(cudaEventDestroy(e0), "event");
  check(cudaEventDestroy(e1), "event");
  check(cudaFree(samples), "cudaFree");
  check(cudaFree(slots), "cudaFree");
  check(cudaFree(workspace), "cudaFree");
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 16;
  const int calls = argc > 2 ? std::max(1, std::atoi(argv[2])) : 200;
  const std::string cases = argc > 3 ? argv[3] : "all";
  if (mib < 1 || mib > 1024 || (cases != "u16" && cases != "f32" && cases != "all")) {
    std::fprintf(stderr, "usage: shared_timeline [MiB (1-1024) [calls [u16|f32|all]]]\n");
    return 2;
  }
  try {
    std::mt19937_64 rng(20261129);
    const Binning u16_bins = Binning::even(4096, 0, 4096);
    const Binning f32_bins = Binning::even(1024, 0.0, 1.0);
    if (cases != "f32") {
      std::vector<std::uint16_t> u16((mib << 20) / 2);
      for (auto& x : u16) x = static_cast<std::uint16_t>(rng() >> 52);
      run_case<std::uint16_t, Library>("u16 into 4096 bins, uniform", SampleType::u16, u16_bins, u16, calls);
      run_case<std::uint16_t, Pairs>("u16 into 4096 bins, uniform", SampleType::u16, u16_bins, u16, calls);
      std::fill(u16.begin(), u16.end(), std::uint16_t{1234});
      run_case<std::uint16_t, Library>("u16 into 4096 bins, constant", SampleType::u16, u16_bins, u16, calls);
      run_case<std::uint16_t, Pairs>("u16 into 4096 bins, constant", SampleType::u16, u16_bins, u16, calls);
    }
    if (cases != "u16") {
      std::vector<float> f32((mib << 20) / 4);
      for (auto& x : f32) x = static_cast<float>(rng() >> 40) * 0x1p-24f;
      run_case<float, Library>("f32 into 1024 bins, uniform", SampleType::f32, f32_bins, f32, calls);
      run_case<float, Pairs>("f32 into 1024 bins, uniform", SampleType::f32, f32_bins, f32, calls);
      std::fill(f32.begin(), f32.end(), 0.3f);
      run_case<float, Library>("f32 into 1024 bins, constant", SampleType::f32, f32_bins, f32, calls);
      run_case<float, Pairs>("f32 into 1024 bins, constant", SampleType::f32, f32_bins, f32, calls);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shared_timeline: %s\n", e.what());
    return 1;
  }
  return 0;
}
