// Small-call study for gpu_lane_columns (its small-call targets: 1 MiB in
// <= 5 us, 16 MiB in <= 12 us, back to back). Variants of the library's own kernel
// (src/cuda/lane_columns_kernel.cuh), differing only in their policy, timed in
// ONE run, round-robin (one sample of every variant per round), beside the
// streaming-read limit of the same buffer: the machines differ by more than the
// variants do (docs/PERFORMANCE.md section 4), so only same-run ratios count.
// Every variant is checked against a CPU count first, on an unaligned start and
// a ragged end, and the workspace must be zero after each call.
//
// Then the 16 MiB call with workspaces at 8 addresses (the fold's hot
// accumulators live there: docs/PERFORMANCE.md change 12), and a timeline of
// one 1 MiB and one 16 MiB call (in L2) and one 8 MiB call (from DRAM) per variant: clock64 at the kernel's marks
// (Policy::mark) per block, so the time of each phase is measured, not guessed.
//
// Build (CMake option LEVELHIST_EXPERIMENTS=ON): target small_calls_study.
// Usage: small_calls_study [rounds]    (default 21)
// Environment: STUDY_VARIANTS=lib,step2,... and STUDY_SIZES=8388608,... (bytes)
// narrow the run to some variants and sizes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/lane_columns_kernel.cuh"
#include "cuda/lane_columns_policy.cuh"
#include "levelhist/binning.hpp"
#include "stream_read.hpp"

namespace lc = levelhist::cuda_detail::lane_columns;

namespace {

constexpr int kMaxTimelineBlocks = 1024;
__device__ long long g_marks[kMaxTimelineBlocks][lc::kMarks];
__device__ unsigned long long g_start_ns[kMaxTimelineBlocks];

// A variant: the library's policy with another grid rule, loop or fold
// layout (Base), and the timeline's marks when Timeline is set.
template <class Base, bool Timeline>
struct Timed : Base {
  static __device__ void mark(lc::Mark m) {
    if constexpr (Timeline) {
      if (blockIdx.x < kMaxTimelineBlocks) {
        g_marks[blockIdx.x][m] = clock64();
        if (m == lc::kMarkStart) {
          unsigned long long ns;
          asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
          g_start_ns[blockIdx.x] = ns;
        }
      }
    }
  }
};

using Launch = void (*)(const unsigned char*, std::uint64_t, void*, std::uint64_t*, bool, bool,
                        const levelhist::BinIndexer&, cudaStream_t);
struct Variant {
  const char* name;
  const char* what;
  Launch launch;
  Launch timeline;
  lc::Grid (*grid)(std::uint64_t);
};

// A plain byte count (one byte position) under Policy.
template <class Policy>
void launch_bytes(const unsigned char* samples, std::uint64_t n, void* workspace, std::uint64_t* slots, bool accumulate,
                  bool is_signed, const levelhist::BinIndexer& indexer, cudaStream_t stream) {
  lc::launch<Policy>(samples, n, workspace, slots, accumulate, is_signed, indexer, stream);
}

template <class Policy>
Variant variant(const char* name, const char* what) {
  return {name, what, launch_bytes<Timed<Policy, false>>, launch_bytes<Timed<Policy, true>>,
          lc::grid<Timed<Policy, false>>};
}

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

using Lib = lc::LaneColumnsPolicy;
// The library's policy before change 13 (docs/PERFORMANCE.md section 4): small
// calls direct, larger ones folded over blocks of one 32 KiB step each, up to
// four per SM; no prefetch, scalar row sums, the shift-and-mask address.
struct Before13 : Lib {
  static constexpr int kMinBlocksPerSM = 4;
  static constexpr bool kPrefetch = false;
  static constexpr bool kVectorRowSums = false;
  static constexpr bool kPermutedAddress = false;
  static constexpr lc::Path kLargePath = lc::Path::fold;
  static constexpr std::uint64_t kLargeBytesPerBlock = std::uint64_t{kBlockThreads} * 16 * kUnroll;
  static constexpr bool kLargeWholeWaves = false;
  static constexpr bool kDependentLaunch = false;
};
// The library's policy with large calls folded (the accumulators, the ticket
// and the last block's fold at the end).
struct LibFold : Lib {
  static constexpr lc::Path kLargePath = lc::Path::fold;
};
// The library's policy with the shift-and-mask address (4 instructions a byte).
struct LibShift : Lib {
  static constexpr bool kPermutedAddress = false;
};

// Change 14's question (docs/PERFORMANCE.md; the answer was no): with four
// loads a step and the next step's four issued before this step is counted,
// an 8 MiB call from DRAM has nearly all of a block's bytes in flight at its
// start, arriving in DRAM's order rather than the order they are counted in;
// would fewer loads a step, issued in counting order, let the counting
// follow the arrival sooner?
struct LibStep2 : Lib {
  static constexpr int kUnroll = 2;
};
struct LibStep2Wide : lc::LaneColumnsWidePolicy {
  static constexpr int kUnroll = 2;
};
struct LibNoPrefetch : Lib {
  static constexpr bool kPrefetch = false;
};
// The library's calls are programmatic dependent launches (docs/PERFORMANCE.md,
// change 15): a call's launch and its columns' clearing overlap the end of the
// call before it. This variant launches plainly; the table times a read
// launched either way (limit, limit_pdl).
struct LibPlainLaunch : Lib {
  static constexpr bool kDependentLaunch = false;
};

std::vector<Variant> variants() {
  return {
      variant<Before13>("before13", "the library before change 13: fold over 32 KiB blocks above 4 MiB"),
      variant<Lib>("lib", "the library's policy (512 threads; the library uses it up to 32 MiB)"),
      variant<lc::LaneColumnsWidePolicy>("wide", "the library's policy above 32 MiB (1024 threads)"),
      variant<LibFold>("lib_fold", "lib, large calls folded"),
      variant<LibShift>("lib_shift", "lib, the shift-and-mask address"),
      variant<LibStep2>("step2", "lib, two loads a step (the next two issued first)"),
      variant<LibStep2Wide>("step2_wide", "wide, two loads a step (the next two issued first)"),
      variant<LibNoPrefetch>("no_prefetch", "lib, four loads a step issued after the step is counted"),
      variant<LibPlainLaunch>("plain", "lib, launched plainly (not as a programmatic dependent launch)"),
  };
}

// STUDY_VARIANTS=a,b,... and STUDY_SIZES=n,n,... (bytes) narrow the run; unset: all.
std::vector<std::string> list_from_env(const char* name) {
  std::vector<std::string> items;
  const char* v = std::getenv(name);
  if (!v) return items;
  std::string s(v);
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    if (comma > at) items.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return items;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int run_study(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  cudaDeviceProp prop{};
  LEVELHIST_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# small_calls_study on %s, %d SMs, L2 %d MiB; %d rounds round-robin\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, rounds);

  // 12,000,000: a 12-megapixel photograph's bytes; 33,177,600: a 4K RGBA frame.
  std::vector<std::uint64_t> sizes = {4 * KiB,  64 * KiB,   1 * MiB,   2 * MiB,  4 * MiB,  8 * MiB,
                                      12000000, 16 * MiB,   32 * MiB,  33177600, 64 * MiB, 256 * MiB};
  // The buffer holds 256 MiB whatever sizes are timed: the cold tables rotate
  // over copies filling 3x the L2, and the cold timeline evicts with it.
  const std::uint64_t max_n = 256 * MiB;
  if (const auto wanted = list_from_env("STUDY_SIZES"); !wanted.empty()) {
    sizes.clear();
    for (const auto& w : wanted) sizes.push_back(std::strtoull(w.c_str(), nullptr, 10));
    for (std::uint64_t n : sizes)
      if (n == 0 || n > max_n) throw std::runtime_error("STUDY_SIZES: each size must be 1 .. 268435456 bytes");
  }
  std::vector<unsigned char> host(max_n + 64);
  std::mt19937_64 rng(20261124);
  for (auto& b : host) b = static_cast<unsigned char>(rng());

  unsigned char* d_data = nullptr;
  std::uint64_t* d_slots = nullptr;
  void* d_ws = nullptr;
  unsigned* d_sink = nullptr;
  LEVELHIST_CUDA_CHECK(cudaMalloc(&d_data, host.size()));
  LEVELHIST_CUDA_CHECK(cudaMemcpy(d_data, host.data(), host.size(), cudaMemcpyHostToDevice));
  LEVELHIST_CUDA_CHECK(cudaMalloc(&d_slots, 259 * sizeof(std::uint64_t)));
  LEVELHIST_CUDA_CHECK(cudaMalloc(&d_ws, sizeof(lc::Workspace)));
  LEVELHIST_CUDA_CHECK(cudaMemset(d_ws, 0, sizeof(lc::Workspace)));
  LEVELHIST_CUDA_CHECK(cudaMalloc(&d_sink, sizeof(unsigned)));
  cudaStream_t stream;
  LEVELHIST_CUDA_CHECK(cudaStreamCreate(&stream));
  const levelhist::BinIndexer indexer = levelhist::make_indexer(levelhist::Binning::per_value(levelhist::SampleType::u8));
  std::vector<Variant> vs;
  {
    const auto wanted = list_from_env("STUDY_VARIANTS");
    for (const auto& v : variants())
      if (wanted.empty() || std::find(wanted.begin(), wanted.end(), v.name) != wanted.end()) vs.push_back(v);
    if (vs.empty()) throw std::runtime_error("STUDY_VARIANTS names no variant of this study");
  }
  for (const auto& v : vs) std::printf("# %-10s %s\n", v.name, v.what);

  // ---- correctness: each variant, each size (+5 bytes, from offset 3), twice
  // (the second call must not see the first's state), workspace zero after.
  int failures = 0;
  for (std::uint64_t n0 : sizes) {
    const std::uint64_t n = n0 + 5, offset = 3;
    std::vector<std::uint64_t> want(259, 0);
    for (std::uint64_t k = 0; k < n; ++k) ++want[host[offset + k]];
    for (const auto& v : vs) {
      for (int call = 0; call < 2; ++call) {
        LEVELHIST_CUDA_CHECK(cudaMemset(d_slots, 0xAB, 259 * sizeof(std::uint64_t)));  // garbage: must be overwritten
        v.launch(d_data + offset, n, d_ws, d_slots, false, false, indexer, stream);
        LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<std::uint64_t> got(259);
        LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), d_slots, got.size() * 8, cudaMemcpyDeviceToHost));
        lc::Workspace ws{};
        LEVELHIST_CUDA_CHECK(cudaMemcpy(&ws, d_ws, sizeof ws, cudaMemcpyDeviceToHost));
        bool ws_zero = ws.blocks_done == 0 && ws.cleared == 0;
        for (const auto& copy : ws.byte_counts)
          for (unsigned c : copy) ws_zero = ws_zero && c == 0;
        if (got != want || !ws_zero) {
          std::printf("FAIL %s n=%llu call %d: %s\n", v.name, static_cast<unsigned long long>(n), call,
                      got != want ? "counts differ" : "workspace not zero");
          ++failures;
        }
      }
    }
  }
  std::printf("# correctness: %d failures\n", failures);
  if (failures) return 1;

  // ---- timing: round-robin samples of R back-to-back calls each.
  auto time_calls = [&](auto&& enqueue, int calls) {
    cudaEvent_t a, b;
    LEVELHIST_CUDA_CHECK(cudaEventCreate(&a));
    LEVELHIST_CUDA_CHECK(cudaEventCreate(&b));
    LEVELHIST_CUDA_CHECK(cudaEventRecord(a, stream));
    for (int k = 0; k < calls; ++k) enqueue();
    LEVELHIST_CUDA_CHECK(cudaEventRecord(b, stream));
    LEVELHIST_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    LEVELHIST_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    LEVELHIST_CUDA_CHECK(cudaEventDestroy(a));
    LEVELHIST_CUDA_CHECK(cudaEventDestroy(b));
    return 1000.0 * ms / calls;  // microseconds per call
  };
  // Two tables: "warm" calls read the same bytes each time (below the L2's
  // size they stay in it: the rate of shared atomics bounds the count there);
  // "cold" calls rotate over copies filling at least 3x the L2, as
  // `levelhist bench` does, so each call reads its input from DRAM.
  const std::uint64_t l2 = static_cast<std::uint64_t>(prop.l2CacheSize);
  for (const bool cold : {false, true}) {
    std::printf("\nmicroseconds per call, back to back, %s (median of %d samples; each sample >= 200 calls)\n",
                cold ? "cold: rotating over >= 3x L2 of copies" : "warm: the same bytes every call", rounds);
    std::printf("%-10s %8s %9s", "n", "limit", "limit_pdl");
    for (const auto& v : vs) std::printf(" %10s", v.name);
    std::printf("   blocks(%s)\n", vs[0].name);
    for (std::uint64_t n : sizes) {
      const int calls = static_cast<int>(std::clamp<std::uint64_t>(200 * MiB / std::max<std::uint64_t>(n, 1), 200, 2000));
      const std::uint64_t spacing = (n + 255) / 256 * 256;
      const std::uint64_t copies = cold ? std::max<std::uint64_t>(1, std::min((max_n - n) / spacing + 1, (3 * l2 + n - 1) / n)) : 1;
      std::uint64_t next = 0;
      auto input = [&] { return d_data + (next++ % copies) * spacing; };
      std::vector<std::vector<double>> samples(vs.size() + 1);
      std::vector<double> limit_pdl_samples;
      auto limit = [&] { levelhist::bench::stream_read(input(), n, d_sink, stream); };
      auto limit_pdl = [&] { levelhist::bench::stream_read(input(), n, d_sink, stream, /*dependent=*/true); };
      auto call = [&](const Variant& v) { v.launch(input(), n, d_ws, d_slots, false, false, indexer, stream); };
      for (int warm = 0; warm < 3; ++warm) {
        time_calls(limit, calls / 4 + 1);
        time_calls(limit_pdl, calls / 4 + 1);
        for (const auto& v : vs) time_calls([&] { call(v); }, calls / 4 + 1);
      }
      for (int r = 0; r < rounds; ++r) {
        samples[0].push_back(time_calls(limit, calls));
        limit_pdl_samples.push_back(time_calls(limit_pdl, calls));
        for (std::size_t k = 0; k < vs.size(); ++k) samples[k + 1].push_back(time_calls([&] { call(vs[k]); }, calls));
      }
      std::printf("%-10llu %8.2f %9.2f", static_cast<unsigned long long>(n), median(samples[0]),
                  median(limit_pdl_samples));
      for (std::size_t k = 0; k < vs.size(); ++k) std::printf(" %10.2f", median(samples[k + 1]));
      std::printf("   %d%s, %llu cop%s\n", vs[0].grid(n).blocks, vs[0].grid(n).path == lc::Path::direct ? " direct" : " fold",
                  static_cast<unsigned long long>(copies), copies == 1 ? "y" : "ies");
    }
  }

  // ---- where the workspace sits: the fold's hot accumulators and ticket live
  // in it, so time the same call with workspaces at different addresses.
  {
    const std::uint64_t n = 16 * MiB;
    constexpr int kPlaces = 8;
    std::vector<void*> places(kPlaces);
    for (auto& w : places) {
      LEVELHIST_CUDA_CHECK(cudaMalloc(&w, sizeof(lc::Workspace)));
      LEVELHIST_CUDA_CHECK(cudaMemset(w, 0, sizeof(lc::Workspace)));
    }
    std::printf("\n16 MiB, microseconds per call, one workspace per column (median of %d samples)\n", rounds);
    std::printf("%-10s", "variant");
    for (void* w : places) std::printf(" %10llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(w) & 0xffffff));
    std::printf("\n");
    for (const auto& v : vs) {
      std::vector<std::vector<double>> samples(kPlaces);
      for (int r = 0; r < rounds; ++r)
        for (int k = 0; k < kPlaces; ++k)
          samples[k].push_back(
              time_calls([&] { v.launch(d_data, n, places[k], d_slots, false, false, indexer, stream); }, 200));
      std::printf("%-10s", v.name);
      for (auto& x : samples) std::printf(" %10.2f", median(x));
      std::printf("\n");
    }
    for (void* w : places) LEVELHIST_CUDA_CHECK(cudaFree(w));
  }

  // ---- timeline of one call per variant and size (after warm calls); the
  // cold one reads bytes that a read of 3x the L2 has just evicted.
  struct TimelineCase {
    std::uint64_t n;
    bool cold;
  };
  for (const TimelineCase tc : {TimelineCase{1 * MiB, false}, TimelineCase{16 * MiB, false}, TimelineCase{8 * MiB, true}}) {
    const std::uint64_t n = tc.n;
    const std::uint64_t evict = std::min<std::uint64_t>(3 * l2, max_n - n) / 256 * 256;
    const unsigned char* at = tc.cold ? d_data + evict : d_data;
    std::printf("\ntimeline of one %llu MiB call, %s (clock64 cycles from each block's start; median over blocks [max])\n",
                static_cast<unsigned long long>(n / MiB), tc.cold ? "cold" : "warm");
    std::printf("%-10s %7s %18s %18s %18s %18s %18s %18s\n", "variant", "blocks", "zeroed+loads out", "counted",
                "ready to add", "end", "flag seen", "raised (blk 0)");
    for (const auto& v : vs) {
      for (int warm = 0; warm < 50; ++warm) v.timeline(at, n, d_ws, d_slots, false, false, indexer, stream);
      LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<long long> zero(kMaxTimelineBlocks * lc::kMarks, -1);
      LEVELHIST_CUDA_CHECK(cudaMemcpyToSymbol(g_marks, zero.data(), zero.size() * sizeof(long long)));
      if (tc.cold) levelhist::bench::stream_read(d_data, evict, d_sink, stream);
      v.timeline(at, n, d_ws, d_slots, false, false, indexer, stream);
      LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<long long> marks(kMaxTimelineBlocks * lc::kMarks);
      std::vector<unsigned long long> start_ns(kMaxTimelineBlocks);
      LEVELHIST_CUDA_CHECK(cudaMemcpyFromSymbol(marks.data(), g_marks, marks.size() * sizeof(long long)));
      LEVELHIST_CUDA_CHECK(cudaMemcpyFromSymbol(start_ns.data(), g_start_ns, start_ns.size() * sizeof(unsigned long long)));
      const int blocks = std::min(v.grid(n).blocks, kMaxTimelineBlocks);
      std::printf("%-10s %7d", v.name, blocks);
      for (int m : {lc::kMarkZeroed, lc::kMarkCounted, lc::kMarkReady, lc::kMarkEnd, lc::kMarkFlagSeen, lc::kMarkRaised}) {
        std::vector<double> d;
        for (int b = 0; b < blocks; ++b) {
          const long long* row = &marks[b * lc::kMarks];
          if (row[m] >= 0 && row[lc::kMarkStart] >= 0) d.push_back(static_cast<double>(row[m] - row[lc::kMarkStart]));
        }
        if (d.empty()) std::printf(" %18s", "-");
        else std::printf(" %10.0f [%5.0f]", median(d), *std::max_element(d.begin(), d.end()));
      }
      unsigned long long first = ~0ull, last = 0;
      for (int b = 0; b < blocks; ++b) {
        first = std::min(first, start_ns[b]);
        last = std::max(last, start_ns[b]);
      }
      std::printf("   block starts spread %llu ns\n", last - first);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run_study(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "small_calls_study: %s\n", e.what());
    return 1;
  }
}
