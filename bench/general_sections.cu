// levelhist bench --general: the general-histogram cases (general_sections.hpp).
//
// Plain problems (u16, f32, u32 keys) go through GpuBench::run_case, which
// times the limit and every registry strategy that takes the case (cub
// included); interleaved pixels and weights, which run_case does not know,
// and the peers that are not registry strategies (CUB's HistogramEven for
// huge bin counts, CUB's MultiHistogramEven for pixels, sort + reduce_by_key,
// global f64 atomics as torch.bincount does) are timed here with the same
// GpuTimer and policy, checked against the CPU first, into the same Results.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cuda/cuda_common.cuh"
#include "cuda/general_common.cuh"
#include "../tools/args.hpp"
#include "bench.hpp"
#include "general_sections.hpp"
#include "gpu_bench.hpp"
#include "gpu_sections.hpp"
#include "gpu_timer.hpp"
#include "side_bench.cuh"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"
#include "reference.hpp"
#include "report.hpp"
#include "stream_read.hpp"

namespace levelhist::bench {
namespace {

using u64 = std::uint64_t;

// ---- data -------------------------------------------------------------------------

u64 mix64(u64 x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
double unit(u64 h) { return static_cast<double>(h >> 11) * 0x1p-53; }
double gauss4(u64 h) {  // mean 0, sd 1, from four 16-bit uniforms
  double s = static_cast<double>(h & 0xFFFF) + static_cast<double>((h >> 16) & 0xFFFF) +
             static_cast<double>((h >> 32) & 0xFFFF) + static_cast<double>(h >> 48);
  return (s / 65536.0 - 2.0) / 0.57735;
}

void parallel_for(u64 count, const std::function<void(u64, u64)>& body) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const u64 block = std::max<u64>(1 << 16, (count + threads * 8 - 1) / (threads * 8));
  const u64 blocks = (count + block - 1) / block;
  std::atomic<u64> next{0};
  auto work = [&] {
    for (u64 b; (b = next.fetch_add(1)) < blocks;) body(b * block, std::min(count, (b + 1) * block));
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<u64>(threads, blocks); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

// A dataset whose sample i is f(i).
template <class T, class F>
Dataset dataset(std::string name, F f) {
  return {std::move(name), sample_type_of<T>(), [f](HostSamples& h) {
            T* x = reinterpret_cast<T*>(h.data());
            parallel_for(h.size(), [&](u64 a, u64 b) {
              for (u64 i = a; i < b; ++i) x[i] = f(i);
            });
          }};
}

std::vector<float> thresholds_of(const Binning& b) {
  std::vector<float> t;
  for (u64 i = 0; i <= b.bins(); ++i) t.push_back(binmap::ceil_f(b.edge(i)));
  return t;
}

// Floats on the edges and one ulp either side: the float margin's worst case.
Dataset on_edges(const Binning& b) {
  std::vector<float> t = thresholds_of(b);
  return dataset<float>("on_edges", [t](u64 i) {
    u64 h = mix64(i ^ 0x999);
    float e = t[h % t.size()];
    int o = static_cast<int>((h >> 32) % 3) - 1;
    return o < 0 ? std::nextafter(e, -INFINITY) : (o > 0 ? std::nextafter(e, INFINITY) : e);
  });
}

std::string problem_text(SampleType type, const Binning& b) { return std::string(to_string(type)) + ", " + b.describe(); }

// ---- kernels of the peers --------------------------------------------------------------

// torch.bincount(weights=)'s method: one global f64 atomic per sample.
__global__ void global_f64_atomics_kernel(const float* xs, const float* ws, u64 n, double* sums,
                                          cuda_detail::general::EvenMap<float> map) {
  for (u64 i = u64{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += u64{gridDim.x} * blockDim.x)
    atomicAdd(sums + map(__ldcs(xs + i)), static_cast<double>(__ldcs(ws + i)));
}

// sort + reduce_by_key: the run-length encoding (bins, counts) scattered into the histogram.
__global__ void scatter_runs_kernel(const unsigned* bins, const unsigned* counts, const int* runs, unsigned* out) {
  const int n = *runs;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[bins[i]] = counts[i];
}

struct ShiftOp {
  unsigned shift;
  __host__ __device__ unsigned operator()(unsigned k) const { return k >> shift; }
};

// ---- timing what run_case does not know ------------------------------------------------

struct Side : SideBench {
  DeviceMemory sink{256};

  Side(GpuBench& b, const BenchOptions& o) : SideBench(b, o) { LEVELHIST_CUDA_CHECK(cudaMemset(sink.get(), 0, 256)); }

  // Times `enqueue` after one checked call (`check` returns "" when the result is right).
  void measure(Measurement m, const EnqueueCall& enqueue, const std::function<std::string()>& check) {
    Results& r = bench.results();
    try {
      const double first_ms = timer->time_calls(enqueue, 0, 1);
      if (check) {
        if (std::string diff = check(); !diff.empty()) {
          fail(m, "wrong result: " + diff);
          return;
        }
      }
      m.timing = timer->measure(enqueue, 1, first_ms, policy);
      if (check) {
        if (std::string diff = check(); !diff.empty()) {
          fail(m, "wrong result after repeated calls: " + diff);
          return;
        }
      }
    } catch (const Error& e) {
      fail(m, std::string("threw: ") + e.what());
      if (cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess)
        throw Error(ErrorKind::cuda, "the GPU is unusable after '" + m.strategy + "' failed: " +
                                         cudaGetErrorString(sticky));
      return;
    }
    if (!options.quiet)
      std::fprintf(stderr, "[%s] %s: %s %.4g GB/s\n", m.section.c_str(), m.dataset.c_str(), m.strategy.c_str(), m.gbps());
    r.rows.push_back(std::move(m));
  }

  void fail(Measurement& m, const std::string& what) {
    m.ok = false;
    m.note = what;
    const std::string line = "strategy '" + m.strategy + "', " + m.section + " / " + m.dataset + ": " + what;
    bench.results().failures.push_back(line);
    std::fprintf(stderr, "\nlevelhist bench: *** FAILED *** %s\n\n", line.c_str());
    bench.results().rows.push_back(m);
  }

  void limit(const Measurement& proto, const void* d, u64 bytes) {
    Measurement m = proto;
    m.strategy = kLimitName;
    measure(m, [=, this](u64) { stream_read(d, bytes, sink.get<unsigned>(), stream); }, nullptr);
  }

  void sync() { LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(stream)); }
};

template <class T>
std::string compare_counts(const std::vector<T>& got, const std::vector<u64>& want, std::size_t count) {
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (static_cast<u64>(got[i]) != want[i] && bad++ == 0) first = i;
  if (!bad) return {};
  return std::to_string(bad) + " of " + std::to_string(count) + " counters differ, first " + std::to_string(first) +
         ": expected " + std::to_string(want[first]) + ", got " + std::to_string(static_cast<u64>(got[first]));
}

// ---- the cases ----------------------------------------------------------------------

struct Context {
  GpuBench& bench;
  const BenchOptions& options;
  Side& side;
  u64 bytes;  // input bytes per case (1 GiB; 256 MiB with --quick)
  std::vector<std::uint8_t> image;  // coins.pgm's pixels, or empty
  u64 l2_bytes;  // the device's L2 (frames are also timed rotating among copies filling 3x it)
};

void plain_case(Context& c, const std::string& name, const std::string& title, const Binning& b,
                const std::vector<Dataset>& datasets,
                const std::function<void(const HostSamples&, const Histogram&, const std::string&)>& extra = {}) {
  c.bench.begin_section({name, title, "", XKind::none});
  for (const Dataset& d : datasets) {
    const u64 n = c.bytes / sample_size(d.type);
    HostSamples input = d.make(n);
    CpuReference reference(input, b);
    const Histogram& expected = reference.of_first(n);
    c.bench.upload(input);
    c.bench.run_case({name, name, static_cast<double>(n), d.name}, n, b, expected);
    if (extra) extra(input, expected, d.name);
  }
}

std::vector<Dataset> u16_datasets(u64 range) {
  return {dataset<std::uint16_t>("uniform", [range](u64 i) { return static_cast<std::uint16_t>(mix64(i) & (range - 1)); }),
          dataset<std::uint16_t>("constant", [range](u64) { return static_cast<std::uint16_t>(range == 4096 ? 1234 : 40000); }),
          dataset<std::uint16_t>("skewed",  // normal around the middle, sd range/64, 1% saturated (65535)
                                 [range](u64 i) {
                                   u64 h = mix64(i ^ 0xABCDEF);
                                   if (h % 100 == 0) return static_cast<std::uint16_t>(65535);
                                   double v = range / 2.0 + gauss4(mix64(h)) * range / 64.0;
                                   return static_cast<std::uint16_t>(std::clamp(v, 0.0, 65535.0));
                                 }),
          dataset<std::uint16_t>("ramp", [range](u64 i) { return static_cast<std::uint16_t>(i & (range - 1)); })};
}

std::vector<Dataset> f32_datasets(const Binning& b, bool unit_interval) {
  const double lo = b.lower(), hi = b.upper(), span = hi - lo;
  return {dataset<float>("uniform",
                         [=](u64 i) {
                           u64 h = mix64(i);
                           if (unit_interval) return static_cast<float>((h >> 40) * 0x1p-24);
                           return static_cast<float>(lo - 0.05 * span + 1.1 * span * unit(h));
                         }),
          dataset<float>("constant", [=](u64) { return static_cast<float>(lo + 0.3 * span); }),
          dataset<float>("skewed",
                         [=](u64 i) {
                           u64 h = mix64(i ^ 0x777);
                           if (h % 100 == 0) {
                             const float sp[8] = {NAN, -INFINITY, INFINITY, -0.0f, static_cast<float>(lo),
                                                  static_cast<float>(hi), static_cast<float>(lo - span),
                                                  static_cast<float>(hi + span)};
                             return sp[(h >> 8) & 7];
                           }
                           return static_cast<float>((lo + hi) / 2 + gauss4(mix64(h)) * span / 20);
                         }),
          on_edges(b)};
}

Binning uneven64() {
  std::vector<double> e(65);
  for (int i = 0; i <= 64; ++i) e[i] = 0.1 + 0.9 * (i / 64.0) * (i / 64.0);
  return Binning::explicit_edges(e);
}

// u32 keys: the registry's strategies through run_case, then CUB's HistogramEven
// and sort + reduce_by_key on the same input.
void u32_case(Context& c, int log2bins) {
  const std::string name = log2bins == 20 ? "u32_2e20" : "u32_2e24";
  const Binning b = Binning::even(u64{1} << log2bins, 0, 4294967296.0);
  const unsigned bins = 1u << log2bins, shift = 32 - log2bins;
  c.side.describe("sort_reduce_by_key", "CUB radix sort on the bin bits, ReduceByKey, scatter (a peer)");
  auto peers = [&](const HostSamples& input, const Histogram& expected, const std::string& dataset_name) {
    const u64 n = input.size();
    const int items = static_cast<int>(n);
    std::vector<u64> want(expected.slots().begin(), expected.slots().begin() + bins);
    DeviceMemory keys(n * 4), out(u64{bins} * 4);
    LEVELHIST_CUDA_CHECK(cudaMemcpy(keys.get(), input.data(), n * 4, cudaMemcpyHostToDevice));
    const Measurement p = proto(name, dataset_name, problem_text(SampleType::u32, b), n, n * 4);
    auto check = [&]() -> std::string {
      c.side.sync();
      std::vector<unsigned> got(bins);
      LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), u64{bins} * 4, cudaMemcpyDeviceToHost));
      return compare_counts(got, want, bins);
    };
    // CUB HistogramEven: one privatized copy of the bins per block in global memory. Its
    // offset blockId * num_bins is a 32-bit int (AgentHistogram's constructor): from
    // blocks x bins >= 2^31 it writes out of bounds (NVIDIA/cub#288). That is what crashed
    // the design study on 2^24 bins (396 blocks x 2^24). Not run there.
    std::size_t cub_bytes = 0;
    LEVELHIST_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, cub_bytes, keys.get<const unsigned>(),
                                                             out.get<int>(), static_cast<int>(bins) + 1, u64{0},
                                                             u64{1} << 32, items));
    std::size_t free_bytes = 0, total_bytes = 0;
    LEVELHIST_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    Measurement m = p;
    m.strategy = kBaselineName;
    if (cub_bytes / 4 >= (u64{1} << 31) - bins) {
      m.note = "not run: CUB's temporary storage of " + std::to_string(cub_bytes >> 20) +
               " MiB holds >= 2^31 privatized counters, beyond its 32-bit offsets (NVIDIA/cub#288)";
      std::fprintf(stderr, "[%s] %s: cub %s\n", name.c_str(), dataset_name.c_str(), m.note.c_str());
      c.bench.results().rows.push_back(m);
    } else if (cub_bytes + (u64{2} << 30) > free_bytes) {
      m.note = "not run: CUB's temporary storage (" + std::to_string(cub_bytes >> 20) + " MiB) does not fit";
      c.bench.results().rows.push_back(m);
    } else {
      DeviceMemory temp(cub_bytes);
      c.side.measure(m, [&](u64) {
        std::size_t t = cub_bytes;
        LEVELHIST_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp.get(), t, keys.get<const unsigned>(), out.get<int>(),
                                                                 static_cast<int>(bins) + 1, u64{0}, u64{1} << 32,
                                                                 items, c.side.stream));
      }, check);
    }
    // Sort on the bin bits, run-length encode the bins, scatter.
    {
      DeviceMemory sorted(n * 4), unique(u64{bins} * 4), counts(u64{bins} * 4), runs(256);
      auto bin_of = thrust::make_transform_iterator(sorted.get<unsigned>(), ShiftOp{shift});
      auto ones = thrust::make_constant_iterator(1u);
      std::size_t sort_bytes = 0, reduce_bytes = 0;
      LEVELHIST_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, keys.get<const unsigned>(),
                                                          sorted.get<unsigned>(), items, static_cast<int>(shift), 32));
      LEVELHIST_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, bin_of, unique.get<unsigned>(), ones,
                                                          counts.get<unsigned>(), runs.get<int>(),
                                                          ::cuda::std::plus<unsigned>{}, items));
      DeviceMemory temp(std::max(sort_bytes, reduce_bytes));
      Measurement s = p;
      s.strategy = "sort_reduce_by_key";
      c.side.measure(s, [&](u64) {
        LEVELHIST_CUDA_CHECK(cudaMemsetAsync(out.get(), 0, u64{bins} * 4, c.side.stream));
        std::size_t t = sort_bytes;
        LEVELHIST_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(), t, keys.get<const unsigned>(), sorted.get<unsigned>(),
                                                            items, static_cast<int>(shift), 32, c.side.stream));
        t = reduce_bytes;
        LEVELHIST_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp.get(), t, bin_of, unique.get<unsigned>(), ones,
                                                            counts.get<unsigned>(), runs.get<int>(),
                                                            ::cuda::std::plus<unsigned>{}, items, c.side.stream));
        scatter_runs_kernel<<<cuda_detail::sm_count() * 8, 256, 0, c.side.stream>>>(
            unique.get<unsigned>(), counts.get<unsigned>(), runs.get<int>(), out.get<unsigned>());
        LEVELHIST_CUDA_CHECK_LAUNCH();
      }, check);
    }
  };
  plain_case(c, name, "u32 keys, 2^" + std::to_string(log2bins) + " even bins over [0, 2^32)", b,
             {dataset<std::uint32_t>("uniform", [](u64 i) { return static_cast<std::uint32_t>(mix64(i)); }),
              dataset<std::uint32_t>("constant", [](u64) { return 0xDEADBEEFu; }),
              dataset<std::uint32_t>("skewed",  // half the keys from 64 hot keys
                                     [](u64 i) {
                                       u64 h = mix64(i ^ 0x1357);
                                       return (h & 1) ? static_cast<std::uint32_t>(mix64(h & 63))
                                                      : static_cast<std::uint32_t>(h >> 32);
                                     })},
             peers);
}

// Interleaved 8-bit pixels: every strategy with kCapabilityPixels and CUB's MultiHistogramEven.
template <int kChannels, int kActive>
void cub_multi(Context& c, const Measurement& p, const unsigned char* d, u64 pixels, int* out,
               const std::function<std::string()>& check) {
  ::cuda::std::array<int*, kActive> hist;
  ::cuda::std::array<int, kActive> levels, lower, upper;
  for (int k = 0; k < kActive; ++k) {
    hist[k] = out + k * 256;
    levels[k] = 257;
    lower[k] = 0;
    upper[k] = 256;
  }
  std::size_t bytes = 0;
  LEVELHIST_CUDA_CHECK((cub::DeviceHistogram::MultiHistogramEven<kChannels, kActive>(
      nullptr, bytes, d, hist, levels, lower, upper, static_cast<int>(pixels))));
  DeviceMemory temp(bytes);
  Measurement m = p;
  m.strategy = kBaselineName;
  c.side.measure(m, [&](u64) {
    std::size_t t = bytes;
    LEVELHIST_CUDA_CHECK((cub::DeviceHistogram::MultiHistogramEven<kChannels, kActive>(
        temp.get(), t, d, hist, levels, lower, upper, static_cast<int>(pixels), c.side.stream)));
  }, check);
}

// Pixels of c.bytes as one row, or (width > 0) one packed width x height frame.
void pixels_case(Context& c, const std::string& name, const std::string& title, unsigned channels, unsigned active,
                 u64 width = 0, u64 height = 0) {
  c.bench.begin_section({name, title, "", XKind::none});
  const Binning b = Binning::per_value(SampleType::u8);
  const u64 pixels = width ? width * height : c.bytes / channels, bytes = pixels * channels;
  const unsigned k = static_cast<unsigned>(std::popcount(active));
  const PixelLayout layout = width ? PixelLayout{channels, active, width, height, 0} : PixelLayout{channels, active, pixels, 1, 0};
  const std::string problem = "u8, " + std::to_string(channels) + " channels (" + std::to_string(k) + " active), " +
                              b.describe() + " each";
  std::vector<unsigned char> host(bytes);
  DeviceMemory d(bytes), slots(u64{k} * b.slots() * 8), cub_out(u64{k} * 256 * 4);
  const std::uint8_t constant_px[4] = {12, 200, 77, 255};
  for (const std::string dataset_name : {"uniform", "constant", "image"}) {
    parallel_for(pixels, [&](u64 a, u64 e) {
      for (u64 p = a; p < e; ++p)
        for (unsigned ch = 0; ch < channels; ++ch) {
          std::uint8_t v;
          if (dataset_name == "uniform") v = static_cast<std::uint8_t>(mix64(p * channels + ch) >> 24);
          else if (dataset_name == "constant") v = constant_px[ch];
          else {
            const std::uint8_t g = c.image.empty() ? static_cast<std::uint8_t>((p * 7) >> 10) : c.image[p % c.image.size()];
            const std::uint8_t px[4] = {g, static_cast<std::uint8_t>(g / 2 + 64), static_cast<std::uint8_t>(255 - g), 255};
            v = px[ch];
          }
          host[p * channels + ch] = v;
        }
    });
    // The CPU's counts per channel and byte value (per-value bins: the slots).
    std::vector<u64> byte_counts(4 * 256, 0);
    std::mutex merge;
    parallel_for(pixels, [&](u64 a, u64 e) {
      std::vector<u64> local(4 * 256, 0);
      for (u64 q = a; q < e; ++q)
        for (unsigned ch = 0; ch < channels; ++ch) local[ch * 256 + host[q * channels + ch]]++;
      std::lock_guard<std::mutex> lock(merge);
      for (std::size_t i = 0; i < local.size(); ++i) byte_counts[i] += local[i];
    });
    std::vector<u64> want_slots(u64{k} * b.slots(), 0), want_cub(u64{k} * 256, 0);
    unsigned h = 0;
    for (unsigned ch = 0; ch < channels; ++ch) {
      if (!(active >> ch & 1u)) continue;
      for (unsigned v = 0; v < 256; ++v) {
        want_slots[h * b.slots() + v] = byte_counts[ch * 256 + v];
        want_cub[h * 256 + v] = byte_counts[ch * 256 + v];
      }
      ++h;
    }
    LEVELHIST_CUDA_CHECK(cudaMemcpy(d.get(), host.data(), bytes, cudaMemcpyHostToDevice));
    // A frame is timed twice: the same frame call after call (in L2, as a
    // frame just written by a copy or a decoder is), and, as `levelhist bench`
    // times every call of its size, rotating among copies that fill 3x the L2
    // (from DRAM, as a frame of a batch already on the device is). A row of
    // pixels is larger than the L2 and timed once.
    const u64 stride = (bytes + 255) / 256 * 256;
    const u64 copies = width ? std::max<u64>(2, (3 * c.l2_bytes + stride - 1) / stride) : 1;
    std::unique_ptr<DeviceMemory> rotation;
    if (copies > 1) {
      rotation = std::make_unique<DeviceMemory>(copies * stride);
      for (u64 k = 0; k < copies; ++k)
        LEVELHIST_CUDA_CHECK(cudaMemcpy(rotation->get() + k * stride, d.get(), bytes, cudaMemcpyDeviceToDevice));
    }
    for (const bool from_dram : {false, true}) {
      if (from_dram && copies == 1) continue;
      const unsigned char* base = from_dram ? rotation->get() : d.get();
      const u64 rotate = from_dram ? copies : 1;
      auto frame = [=](u64 call) { return base + (call % rotate) * stride; };
      const Measurement p = proto(name, width ? dataset_name + (from_dram ? ", from DRAM" : ", in L2") : dataset_name,
                                  problem, pixels * channels, bytes);
      {
        Measurement m = p;
        m.strategy = kLimitName;
        c.side.measure(m, [&](u64 call) { stream_read(frame(call), bytes, c.side.sink.get<unsigned>(), c.side.stream); },
                       nullptr);
      }
      for (const Strategy* s : all_strategies()) {
        if (s->backend != Backend::cuda || !(s->capabilities & kCapabilityPixels)) continue;
        if (!c.options.strategies.empty() &&
            std::find(c.options.strategies.begin(), c.options.strategies.end(), s->name) == c.options.strategies.end())
          continue;
        if (!strategy_accepts(*s, Problem{SampleType::u8, &b, pixels * channels, layout})) continue;
        c.side.describe(s->name, s->summary);
        const std::size_t ws_bytes = cuda::workspace_bytes_pixels(SampleType::u8, layout, b, s);
        DeviceMemory ws(ws_bytes);
        LEVELHIST_CUDA_CHECK(cudaMemset(ws.get(), 0, std::max<std::size_t>(ws_bytes, 256)));
        Measurement m = p;
        m.strategy = s->name;
        c.side.measure(m, [&](u64 call) {
          cuda::histogram_pixels(ws.get(), ws_bytes, frame(call), SampleType::u8, layout, b, slots.get<u64>(), false,
                                 c.side.stream, s);
        }, [&]() -> std::string {
          c.side.sync();
          std::vector<u64> got(want_slots.size());
          LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), slots.get(), got.size() * 8, cudaMemcpyDeviceToHost));
          return compare_counts(got, want_slots, got.size());
        });
      }
      if (from_dram) continue;  // CUB once, in L2 (as before)
      auto check_cub = [&]() -> std::string {
        c.side.sync();
        std::vector<int> got(want_cub.size());
        LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), cub_out.get(), got.size() * 4, cudaMemcpyDeviceToHost));
        return compare_counts(got, want_cub, got.size());
      };
      if (channels == 4 && active == 0xF) cub_multi<4, 4>(c, p, d.get(), pixels, cub_out.get<int>(), check_cub);
      else if (channels == 4 && active == 0x7) cub_multi<4, 3>(c, p, d.get(), pixels, cub_out.get<int>(), check_cub);
      else if (channels == 3 && active == 0x7) cub_multi<3, 3>(c, p, d.get(), pixels, cub_out.get<int>(), check_cub);
    }
  }
}

// Weighted: f32 samples and f32 weights, 1024 bins over [0, 1), GB/s of samples + weights.
void weighted_case(Context& c) {
  const std::string name = "weighted";
  c.bench.begin_section({name, "f32 samples with f32 weights, 1024 even bins over [0, 1), f64 sums (GB/s of samples + weights)",
                         "", XKind::none});
  c.side.describe("global_f64_atomics", "one global f64 atomicAdd per sample: torch.bincount(weights=)'s method");
  const Binning b = Binning::even(1024, 0.0, 1.0);
  const u64 n = c.bytes / 8, S = b.slots();
  std::vector<float> xs(n), ws(n);
  DeviceMemory dx(n * 4), dw(n * 4), sums(S * 8);
  for (const std::string dataset_name : {"uniform", "constant", "skewed"}) {
    parallel_for(n, [&](u64 a, u64 e) {
      for (u64 i = a; i < e; ++i) {
        if (dataset_name == "uniform") xs[i] = static_cast<float>((mix64(i) >> 40) * 0x1p-24);
        else if (dataset_name == "constant") xs[i] = 0.3f;
        else xs[i] = static_cast<float>(0.5 + gauss4(mix64(i ^ 0x777)) * 0.05);
        ws[i] = static_cast<float>(((mix64(i ^ 0x4242) >> 40) + 1) * 0x1p-24);  // (0, 1]
      }
    });
    // The CPU's sums (cpu_serial on slices, added up) and the sums of |w| for the tolerance (w > 0).
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<WeightedHistogram> parts(threads, WeightedHistogram(b));
    {
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          const u64 a = n * t / threads, e = n * (t + 1) / threads;
          fill_weighted(parts[t], SampleType::f32, xs.data() + a, e - a, SampleType::f32, ws.data() + a,
                        Options{"cpu_serial", BackendChoice::cpu, 1});
        });
      for (auto& th : pool) th.join();
    }
    WeightedHistogram want(b);
    for (const auto& p : parts) want += p;
    LEVELHIST_CUDA_CHECK(cudaMemcpy(dx.get(), xs.data(), n * 4, cudaMemcpyHostToDevice));
    LEVELHIST_CUDA_CHECK(cudaMemcpy(dw.get(), ws.data(), n * 4, cudaMemcpyHostToDevice));
    auto check = [&]() -> std::string {
      c.side.sync();
      std::vector<double> got(S);
      LEVELHIST_CUDA_CHECK(cudaMemcpy(got.data(), sums.get(), S * 8, cudaMemcpyDeviceToHost));
      for (u64 s = 0; s < S; ++s) {
        const double tol = 2.0 * static_cast<double>(n) * 0x1p-53 * want.slots()[s] + 1e-300;  // weights > 0: sum = sum|w|
        if (!(std::fabs(got[s] - want.slots()[s]) <= tol))
          return "slot " + std::to_string(s) + ": expected " + std::to_string(want.slots()[s]) + ", got " +
                 std::to_string(got[s]);
      }
      return {};
    };
    const Measurement p = proto(name, dataset_name, "f32 + f32 weights, " + b.describe(), n, n * 8);
    // The limit of reading both arrays: the sum of two streaming reads' times is not it; one read of a
    // buffer of the same total size is (the weights buffer follows the samples buffer nowhere).
    {
      DeviceMemory both(n * 8);
      Measurement m = p;
      m.strategy = kLimitName;
      c.side.measure(m, [&](u64) { stream_read(both.get(), n * 8, c.side.sink.get<unsigned>(), c.side.stream); }, nullptr);
    }
    for (const Strategy* s : all_strategies()) {
      if (s->backend != Backend::cuda || !(s->capabilities & kCapabilityWeights)) continue;
      if (!c.options.strategies.empty() &&
          std::find(c.options.strategies.begin(), c.options.strategies.end(), s->name) == c.options.strategies.end())
        continue;
      c.side.describe(s->name, s->summary);
      const std::size_t ws_bytes = cuda::workspace_bytes_weighted(SampleType::f32, n, SampleType::f32, b, s);
      DeviceMemory wsp(ws_bytes);
      LEVELHIST_CUDA_CHECK(cudaMemset(wsp.get(), 0, std::max<std::size_t>(ws_bytes, 256)));
      Measurement m = p;
      m.strategy = s->name;
      c.side.measure(m, [&](u64) {
        cuda::histogram_weighted(wsp.get(), ws_bytes, dx.get(), n, SampleType::f32, dw.get(), SampleType::f32, b,
                                 sums.get<double>(), false, c.side.stream, s);
      }, check);
    }
    Measurement m = p;
    m.strategy = "global_f64_atomics";
    const cuda_detail::general::EvenMap<float> map{binmap::make_even_params(b)};
    c.side.measure(m, [&](u64) {
      LEVELHIST_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, S * 8, c.side.stream));
      global_f64_atomics_kernel<<<cuda_detail::sm_count() * 4, 512, 0, c.side.stream>>>(
          dx.get<float>(), dw.get<float>(), n, sums.get<double>(), map);
      LEVELHIST_CUDA_CHECK_LAUNCH();
    }, check);
  }
}

void run_cases(Context& c, const std::vector<std::string>& cases) {
  auto wants = [&](const char* k) { return std::find(cases.begin(), cases.end(), k) != cases.end(); };
  if (wants("u16_4096"))
    plain_case(c, "u16_4096", "u16 samples, 4096 even bins over [0, 4096) (12-bit images)", Binning::even(4096, 0, 4096),
               u16_datasets(4096));
  if (wants("u16_65536")) {
    // Beside the four distributions: few values in random order (a label
    // image's ten labels, as noise), a pattern every lane of a warp sees
    // alike (8 values repeated) and a constant channel (16-bit RGBA, opaque):
    // the data a counter of raw values in 16-bit halves finds hardest
    // (docs/PERFORMANCE-general.md, sections 16 and 21).
    std::vector<Dataset> datasets = u16_datasets(65536);
    datasets.push_back(
        dataset<std::uint16_t>("ten labels", [](u64 i) { return static_cast<std::uint16_t>(mix64(i ^ 0x1AB) % 10); }));
    datasets.push_back(
        dataset<std::uint16_t>("period 8", [](u64 i) { return static_cast<std::uint16_t>(1000 + (i % 8) * 4099); }));
    datasets.push_back(dataset<std::uint16_t>(  // RGBA of 16 bits, alpha 65535: one value every fourth sample
        "opaque RGBA", [](u64 i) { return i % 4 == 3 ? std::uint16_t{65535} : static_cast<std::uint16_t>(mix64(i)); }));
    plain_case(c, "u16_65536", "u16 samples, 65536 bins (one per value)", Binning::per_value(SampleType::u16),
               datasets);
  }
  if (wants("f32_1024")) {
    const Binning b = Binning::even(1024, 0.0, 1.0);
    plain_case(c, "f32_1024", "f32 samples, 1024 even bins over [0, 1)", b, f32_datasets(b, true));
  }
  if (wants("f32_1000")) {
    const Binning b = Binning::even(1000, -0.3, 0.7);
    plain_case(c, "f32_1000", "f32 samples, 1000 even bins over [-0.3, 0.7)", b, f32_datasets(b, false));
  }
  if (wants("f32_edges64")) {
    const Binning b = uneven64();
    plain_case(c, "f32_edges64", "f32 samples, 64 bins by uneven explicit edges 0.1 + 0.9 (i/64)^2", b,
               {dataset<float>("uniform", [](u64 i) { return static_cast<float>((mix64(i) >> 40) * 0x1p-24); }),
                dataset<float>("constant", [](u64) { return 0.55f; }),
                dataset<float>("skewed",
                               [](u64 i) {
                                 double u = unit(mix64(i ^ 0x31));
                                 return static_cast<float>(0.1 + 0.9 * u * u * u);
                               }),
                on_edges(b)});
  }
  if (wants("rgba")) pixels_case(c, "rgba", "RGBA u8 pixels, 4 x 256 bins", 4, 0xF);
  if (wants("rgb_of_rgba")) pixels_case(c, "rgb_of_rgba", "RGB of RGBA u8 pixels (3 active channels of 4), 3 x 256 bins", 4, 0x7);
  if (wants("rgb24")) pixels_case(c, "rgb24", "RGB u8 pixels, 3 interleaved channels (24-bit pixels), 3 x 256 bins", 3, 0x7);
  if (wants("frame_rgba_4k"))
    pixels_case(c, "frame_rgba_4k", "one RGBA u8 frame, 3840 x 2160 (33 MB), 4 x 256 bins", 4, 0xF, 3840, 2160);
  if (wants("frame_rgb_1080p"))
    pixels_case(c, "frame_rgb_1080p", "one RGB u8 frame, 1920 x 1080 (6.2 MB), 3 x 256 bins", 3, 0x7, 1920, 1080);
  if (wants("weighted")) weighted_case(c);
  if (wants("u32_2e20")) u32_case(c, 20);
  if (wants("u32_2e24")) u32_case(c, 24);
}

}  // namespace

std::string general_bench_help() {
  std::string cases;
  for (const std::string& k : kGeneralCases) cases += (cases.empty() ? "" : ",") + k;
  return "Usage: levelhist bench --general [--cases LIST] [OPTION]...\n"
         "The general-histogram cases (u16, f32, explicit edges, pixels, weights, u32 keys), one\n"
         "section each, 1 GiB resident on the GPU (256 MiB with --quick): every CUDA strategy that\n"
         "takes the case, CUB (or the peer that exists) and the streaming-read limit, every result\n"
         "checked against the CPU first.\n"
         "  --cases LIST   some of " + cases + " (default: all)\n"
         "  --mib N        N MiB a case instead (1-16384), e.g. 16 for a middle-sized call\n"
         "The other options are the GPU benchmark's (--strategies, --quick, --reps, --out, --format,\n"
         "--case-seconds, --quiet, ...). Then run bench/torch_bincount.py for torch.bincount(weights=).\n";
}

int general_bench_main(const std::vector<std::string>& args) {
  std::vector<std::string> given = args, rest;
  const std::vector<std::string> cases =
      take_name_list(given, "--cases", kGeneralCases, "see levelhist bench --general --help");
  std::uint64_t mib_per_case = 0;  // 0: 1 GiB, 256 MiB with --quick
  for (std::size_t i = 0; i < given.size(); ++i) {
    std::string a = given[i];
    if (a == "--general") continue;
    if (a == "--mib" || a.rfind("--mib=", 0) == 0) {
      const std::string value = a == "--mib" ? (i + 1 < given.size() ? given[++i] : "") : a.substr(6);
      mib_per_case = cli::parse_count("--mib", value, 1, 16384);
      continue;
    }
    rest.push_back(a);
  }
  BenchOptions o;
  if (const auto status = begin_gpu_mode(rest, "--general", general_bench_help() + "\n", o)) return *status;
  GpuBench bench(o);
  std::fprintf(stderr, "levelhist bench --general on %s\n", bench.results().device.describe().c_str());
  Side side(bench, o);
  const u64 l2 = bench.results().device.l2_bytes;
  Context ctx{bench, o, side, mib_per_case ? mib_per_case << 20 : o.quick ? u64{1} << 28 : u64{1} << 30, {},
              l2 ? l2 : u64{128} << 20};
  try {
    const Image coins = read_pgm((std::filesystem::path(find_data_dir(o.data_dir)) / "coins.pgm").string());
    ctx.image = coins.pixels;
  } catch (const Error& e) {
    std::fprintf(stderr, "levelhist bench --general: %s; the image dataset is a synthetic ramp\n", e.what());
  }
  std::string fatal;
  try {
    run_cases(ctx, cases);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::cuda) throw;
    fatal = e.what();
  }
  return finish_side_run("levelhist bench --general", bench, o, fatal);
}

}  // namespace levelhist::bench
