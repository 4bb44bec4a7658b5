// The CUDA dispatch layer for interleaved pixels and weighted histograms
// (cuda.hpp): the device-pointer entry points and their host-memory paths. It
// splits inputs the way runtime.cu does (at most 2^31 samples per strategy
// call), but never inside a pixel: an image is split by rows, and a single row
// of more than 2^31 samples by whole pixels.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/pixels.hpp"
#include "cuda/cuda_common.cuh"
#include "cuda/runtime_shared.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"

namespace levelhist::cuda {
namespace {

using dispatch::clear_edges;
using dispatch::clear_edges_quietly;
using dispatch::kMaxSamplesPerCall;
using dispatch::prepare;

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

void check_workspace(std::size_t given, std::size_t needed) {
  if (given < needed)
    throw Error(ErrorKind::usage, "the CUDA workspace is too small: " + std::to_string(given) + " bytes given, " +
                                      std::to_string(needed) + " needed");
}

Problem pixels_problem(SampleType type, const PixelLayout& layout, const Binning& binning) {
  detail::validate_layout(type, layout, /*need_width=*/true);
  return Problem{type, &binning, detail::pixel_samples(layout), layout};
}

Problem weighted_problem(SampleType type, std::uint64_t n, SampleType weight_type, const Binning& binning) {
  detail::validate_weight_type(weight_type);
  Problem p{type, &binning, n};
  p.weighted = true;
  p.weight_type = weight_type;
  return p;
}

}  // namespace

std::size_t workspace_bytes_pixels(SampleType type, const PixelLayout& layout, const Binning& binning,
                                   const Strategy* strategy) {
  return workspace_bytes(pixels_problem(type, layout, binning), strategy);
}

std::size_t workspace_bytes_weighted(SampleType type, std::uint64_t n, SampleType weight_type, const Binning& binning,
                                     const Strategy* strategy) {
  return workspace_bytes(weighted_problem(type, n, weight_type, binning), strategy);
}

void histogram_pixels(void* d_workspace, std::size_t ws_bytes, const void* d_pixels, SampleType type,
                      const PixelLayout& layout, const Binning& binning, std::uint64_t* d_slots, bool accumulate,
                      void* stream, const Strategy* strategy) {
  const Problem problem = pixels_problem(type, layout, binning);
  const Strategy& s = dispatch::pick(problem, strategy);
  check_workspace(ws_bytes, workspace_bytes(problem, &s));
  const std::uint64_t slots = binning.slots() * detail::active_count(layout);
  if (problem.n == 0) {
    if (!accumulate)
      LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_slots, 0, slots * sizeof(std::uint64_t), as_stream(stream)));
    return;
  }
  RunArgs args = prepare(d_workspace, ws_bytes, type, binning, stream);
  args.slots = d_slots;
  const std::size_t size = sample_size(type);
  const std::uint64_t row_bytes = layout.width * layout.channels * size;
  // Packed rows are one long row: strategies then stream the image as a plain array.
  std::uint64_t width = layout.width, height = layout.height, pitch = layout.row_pitch ? layout.row_pitch : row_bytes;
  if (pitch == row_bytes) {
    width *= height;
    height = 1;
    pitch = width * layout.channels * size;
  }
  const auto* base = static_cast<const unsigned char*>(d_pixels);
  bool first = true;
  auto run = [&](const unsigned char* p, std::uint64_t w, std::uint64_t h, std::uint64_t row_pitch) {
    args.samples = p;
    args.n = w * h * layout.channels;
    args.layout = PixelLayout{layout.channels, layout.active, w, h, row_pitch};
    args.accumulate = accumulate || !first;
    first = false;
    s.run(args);
  };
  const std::uint64_t row_samples = width * layout.channels;
  try {
    if (row_samples <= kMaxSamplesPerCall) {
      const std::uint64_t rows_per_call = kMaxSamplesPerCall / row_samples;
      for (std::uint64_t r = 0; r < height; r += rows_per_call)
        run(base + r * pitch, width, std::min(rows_per_call, height - r), pitch);
    } else {
      const std::uint64_t pixels_per_call = kMaxSamplesPerCall / layout.channels;
      for (std::uint64_t r = 0; r < height; ++r)
        for (std::uint64_t x = 0; x < width; x += pixels_per_call) {
          const std::uint64_t w = std::min(pixels_per_call, width - x);
          run(base + r * pitch + x * layout.channels * size, w, 1, w * layout.channels * size);
        }
    }
  } catch (...) {
    clear_edges_quietly(args, d_workspace, binning, stream);
    throw;
  }
  clear_edges(args, d_workspace, binning, stream);
}

void histogram_weighted(void* d_workspace, std::size_t ws_bytes, const void* d_samples, std::uint64_t n,
                        SampleType type, const void* d_weights, SampleType weight_type, const Binning& binning,
                        double* d_sums, bool accumulate, void* stream, const Strategy* strategy) {
  const Problem problem = weighted_problem(type, n, weight_type, binning);
  const Strategy& s = dispatch::pick(problem, strategy);
  check_workspace(ws_bytes, workspace_bytes(problem, &s));
  if (n == 0) {
    if (!accumulate) LEVELHIST_CUDA_CHECK(cudaMemsetAsync(d_sums, 0, binning.slots() * sizeof(double), as_stream(stream)));
    return;
  }
  RunArgs args = prepare(d_workspace, ws_bytes, type, binning, stream);
  args.weight_type = weight_type;
  args.weight_sums = d_sums;
  const std::size_t size = sample_size(type), wsize = sample_size(weight_type);
  try {
    for (std::uint64_t done = 0; done < n; done += kMaxSamplesPerCall) {
      args.samples = static_cast<const unsigned char*>(d_samples) + done * size;
      args.weights = static_cast<const unsigned char*>(d_weights) + done * wsize;
      args.n = std::min(kMaxSamplesPerCall, n - done);
      args.accumulate = accumulate || done > 0;
      s.run(args);
    }
  } catch (...) {
    clear_edges_quietly(args, d_workspace, binning, stream);
    throw;
  }
  clear_edges(args, d_workspace, binning, stream);
}

namespace {

// Staging for the host paths of this file: two pinned buffers for samples and
// two for weights, so the CPU packs chunk k+1 while the GPU copies and counts
// chunk k; a cached workspace and output. Allocated on first use, kept.
struct GeneralHostPath {
  static constexpr std::size_t kChunkBytes = std::size_t{32} << 20;
  std::mutex mutex;
  unsigned char* pinned[2][2] = {};     // [buffer][0 samples, 1 weights]
  unsigned char* device_in[2][2] = {};
  cudaEvent_t done[2] = {nullptr, nullptr};
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_size = 0;
  void* out = nullptr;  // counters or sums
  std::size_t out_size = 0;

  void ensure_base() {
    if (stream) return;
    LEVELHIST_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        LEVELHIST_CUDA_CHECK(cudaMallocHost(&pinned[i][j], kChunkBytes));
        LEVELHIST_CUDA_CHECK(cudaMalloc(&device_in[i][j], kChunkBytes));
      }
      LEVELHIST_CUDA_CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    }
  }
  void ensure_workspace(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 256);
    if (bytes <= workspace_size) return;
    if (workspace) LEVELHIST_CUDA_CHECK(cudaFree(workspace));
    workspace = nullptr;
    workspace_size = 0;
    LEVELHIST_CUDA_CHECK(cudaMalloc(&workspace, bytes));
    LEVELHIST_CUDA_CHECK(cudaMemset(workspace, 0, bytes));  // zeroed once (cuda.hpp)
    workspace_size = bytes;
  }
  void ensure_out(std::size_t bytes) {
    if (bytes <= out_size) return;
    if (out) LEVELHIST_CUDA_CHECK(cudaFree(out));
    out = nullptr;
    out_size = 0;
    LEVELHIST_CUDA_CHECK(cudaMalloc(&out, bytes));
    out_size = bytes;
  }
  // Waits until buffer k is free again (its previous chunk was counted).
  void wait(int k) { LEVELHIST_CUDA_CHECK(cudaEventSynchronize(done[k])); }
  void upload(int k, int which, std::size_t bytes) {
    LEVELHIST_CUDA_CHECK(
        cudaMemcpyAsync(device_in[k][which], pinned[k][which], bytes, cudaMemcpyHostToDevice, stream));
  }
  void counted(int k) { LEVELHIST_CUDA_CHECK(cudaEventRecord(done[k], stream)); }
  template <class T>
  std::vector<T> download(std::size_t count) {
    std::vector<T> result(count);
    LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(result.data(), out, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
    LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(stream));
    return result;
  }
};

GeneralHostPath& general_host_path() {
  static GeneralHostPath* buffers = new GeneralHostPath;  // never destroyed: the driver may be gone at exit
  return *buffers;
}

}  // namespace

void fill_pixels_from_host(std::span<Histogram> hists, SampleType type, const void* pixels, const PixelLayout& layout,
                           const Strategy& strategy) {
  detail::validate_layout(type, layout, /*need_width=*/true);
  const unsigned k_hists = detail::active_count(layout);
  if (hists.size() != k_hists) throw Error(ErrorKind::usage, "fill_pixels_from_host: one histogram per active channel");
  GeneralHostPath& b = general_host_path();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.ensure_base();
  const Binning& binning = hists[0].binning();
  const std::size_t size = sample_size(type);
  const std::uint64_t pixel_bytes = layout.channels * size;
  const std::uint64_t row_bytes = layout.width * pixel_bytes;
  const std::uint64_t pitch = layout.row_pitch ? layout.row_pitch : row_bytes;
  const std::uint64_t total_pixels = layout.width * layout.height;
  const std::uint64_t chunk_pixels = std::max<std::uint64_t>(1, GeneralHostPath::kChunkBytes / pixel_bytes);
  // Every chunk is a packed run of whole pixels, counted as one row.
  const PixelLayout chunk_layout{layout.channels, layout.active, std::min(total_pixels, chunk_pixels), 1, 0};
  b.ensure_workspace(workspace_bytes_pixels(type, chunk_layout, binning, &strategy));
  const std::size_t out_count = binning.slots() * k_hists;
  b.ensure_out(out_count * sizeof(std::uint64_t));
  LEVELHIST_CUDA_CHECK(cudaMemsetAsync(b.out, 0, out_count * sizeof(std::uint64_t), b.stream));
  const auto* src = static_cast<const unsigned char*>(pixels);
  int k = 0;
  for (std::uint64_t done = 0; done < total_pixels; done += chunk_pixels, k ^= 1) {
    const std::uint64_t count = std::min(chunk_pixels, total_pixels - done);
    b.wait(k);
    // Gather the chunk's pixels row piece by row piece (one copy when rows are packed).
    unsigned char* dst = b.pinned[k][0];
    for (std::uint64_t p = done; p < done + count;) {
      const std::uint64_t row = p / layout.width, x = p % layout.width;
      const std::uint64_t run = std::min(layout.width - x, done + count - p);
      const std::uint64_t contiguous = pitch == row_bytes ? done + count - p : run;  // packed: to the chunk's end
      dispatch::copy_to_staging(dst, src + row * pitch + x * pixel_bytes, contiguous * pixel_bytes);
      dst += contiguous * pixel_bytes;
      p += contiguous;
    }
    b.upload(k, 0, count * pixel_bytes);
    const PixelLayout piece{layout.channels, layout.active, count, 1, 0};
    histogram_pixels(b.workspace, b.workspace_size, b.device_in[k][0], type, piece, binning,
                     static_cast<std::uint64_t*>(b.out), true, b.stream, &strategy);
    b.counted(k);
  }
  const std::vector<std::uint64_t> result = b.download<std::uint64_t>(out_count);
  for (unsigned h = 0; h < k_hists; ++h) {
    auto out = hists[h].slots();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += result[h * binning.slots() + i];
  }
}

void fill_weighted_from_host(WeightedHistogram& hist, SampleType type, const void* samples, std::uint64_t n,
                             const void* weights, SampleType weight_type, const Strategy& strategy) {
  detail::validate_weight_type(weight_type);
  GeneralHostPath& b = general_host_path();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.ensure_base();
  const Binning& binning = hist.binning();
  const std::size_t size = sample_size(type), wsize = sample_size(weight_type);
  const std::uint64_t chunk = GeneralHostPath::kChunkBytes / std::max(size, wsize);
  b.ensure_workspace(workspace_bytes_weighted(type, std::min(n, chunk), weight_type, binning, &strategy));
  const std::size_t out_count = binning.slots();
  b.ensure_out(out_count * sizeof(double));
  LEVELHIST_CUDA_CHECK(cudaMemsetAsync(b.out, 0, out_count * sizeof(double), b.stream));
  const auto* xs = static_cast<const unsigned char*>(samples);
  const auto* ws = static_cast<const unsigned char*>(weights);
  int k = 0;
  for (std::uint64_t done = 0; done < n; done += chunk, k ^= 1) {
    const std::uint64_t count = std::min(chunk, n - done);
    b.wait(k);
    dispatch::copy_to_staging(b.pinned[k][0], xs + done * size, count * size);
    dispatch::copy_to_staging(b.pinned[k][1], ws + done * wsize, count * wsize);
    b.upload(k, 0, count * size);
    b.upload(k, 1, count * wsize);
    histogram_weighted(b.workspace, b.workspace_size, b.device_in[k][0], count, type, b.device_in[k][1], weight_type,
                       binning, static_cast<double*>(b.out), true, b.stream, &strategy);
    b.counted(k);
  }
  const std::vector<double> result = b.download<double>(out_count);
  auto out = hist.slots();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] += result[i];
}

}  // namespace levelhist::cuda
