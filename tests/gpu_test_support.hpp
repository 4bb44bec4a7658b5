// Helpers for testing CUDA strategies through the public device API
// (levelhist::cuda::histogram, include/levelhist/cuda.hpp) against the CPU
// reference: device buffers, one reused zero-once workspace, and a harness that
// runs one strategy on one problem and checks the counts slot for slot and the
// workspace contract (zero on return). Host code only: compiled by the C++
// compiler, linked against the CUDA runtime through the levelhist target.
// Data generators, binnings and comparisons come from test_support.hpp.
#pragma once
#if LEVELHIST_HAVE_CUDA

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"
#include "test_support.hpp"

namespace levelhist::test {

// Skips the running test, saying why, on a machine without a CUDA GPU.
#define LEVELHIST_SKIP_WITHOUT_GPU()                                                                       \
  do {                                                                                                     \
    if (::levelhist::cuda::device_count() == 0)                                                            \
      GTEST_SKIP() << "no CUDA GPU: " << ::levelhist::cuda::describe_device();                             \
  } while (0)

// Throws (GoogleTest reports it as a failure of the running test) when a CUDA
// call made by the test itself fails.
#define LEVELHIST_TEST_CUDA(call)                                                        \
  do {                                                                                   \
    cudaError_t levelhist_test_status_ = (call);                                         \
    if (levelhist_test_status_ != cudaSuccess)                                           \
      throw std::runtime_error(std::string("CUDA error in test code, ") + #call + ": " + \
                               cudaGetErrorString(levelhist_test_status_));              \
  } while (0)

// Device memory owned by the test.
class DeviceBytes {
 public:
  DeviceBytes() = default;
  explicit DeviceBytes(std::size_t bytes) { resize(bytes); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  DeviceBytes(DeviceBytes&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBytes& operator=(DeviceBytes&& other) noexcept {
    if (this != &other) {
      release();
      ptr_ = std::exchange(other.ptr_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~DeviceBytes() { release(); }
  // Reallocates (contents lost) to exactly `bytes`.
  void resize(std::size_t bytes) {
    release();
    if (bytes) LEVELHIST_TEST_CUDA(cudaMalloc(&ptr_, bytes));
    size_ = bytes;
  }
  unsigned char* get() const { return ptr_; }
  std::size_t size() const { return size_; }

 private:
  void release() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  unsigned char* ptr_ = nullptr;
  std::size_t size_ = 0;
};

// Every CUDA strategy in the registry, in registry order; LEVELHIST_TEST_STRATEGIES
// (comma-separated names) narrows the list, e.g. to debug one strategy.
inline std::vector<const Strategy*> cuda_strategies() {
  std::vector<const Strategy*> out;
  const char* only = std::getenv("LEVELHIST_TEST_STRATEGIES");
  const std::string filter = only ? "," + std::string(only) + "," : "";
  for (const Strategy* s : all_strategies()) {
    if (s->backend != Backend::cuda) continue;
    // (Appended, not "," + name + ",": GCC 12 warns falsely about that form at -O3.)
    std::string item(",");
    item.append(s->name).append(",");
    if (!filter.empty() && filter.find(item) == std::string::npos) continue;
    out.push_back(s);
  }
  return out;
}

// Runs strategies on device samples through levelhist::cuda::histogram with
// one workspace, allocated and zeroed once (grown, and zeroed once more, only
// when a problem needs more), and checks after every call that the strategy
// left its part of the workspace zero.
class GpuHarness {
 public:
  GpuHarness() {
    LEVELHIST_TEST_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ensure_workspace(std::size_t{64} << 20);
  }
  GpuHarness(const GpuHarness&) = delete;
  GpuHarness& operator=(const GpuHarness&) = delete;
  ~GpuHarness() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream() const { return stream_; }

  // Copies `bytes` to device memory starting `offset` bytes past a 256-byte
  // aligned address; returns that device pointer (valid until the next upload).
  const void* upload(std::span<const unsigned char> bytes, std::size_t offset) {
    const std::size_t needed = offset + bytes.size() + 64;
    if (samples_.size() < needed) samples_.resize(std::max(needed, samples_.size() * 2));
    if (!bytes.empty())
      LEVELHIST_TEST_CUDA(cudaMemcpy(samples_.get() + offset, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    return samples_.get() + offset;
  }

  // Counts n samples at d_samples with `s` into slots that start as `initial`
  // and must end as `expected`; checks the workspace contract. Failures carry
  // the strategy, the problem and `context`. Strategies that fail more than a
  // few times are not run again by this harness (one note says so).
  void check(const Strategy& s, SampleType type, const void* d_samples, std::uint64_t n, const Binning& binning,
             bool accumulate, std::span<const std::uint64_t> initial, std::span<const std::uint64_t> expected,
             const std::string& context) {
    if (gave_up(s)) return;
    const Problem problem{type, &binning, n};
    const std::string where = std::string(s.name) + " on " + std::to_string(n) + " " + std::string(to_string(type)) +
                              " samples, " + binning.describe() + (accumulate ? ", accumulate" : ", no accumulate") +
                              "; " + context;
    const std::size_t ws_needed = cuda::workspace_bytes(problem, &s);
    ensure_workspace(ws_needed);
    if (slots_.size() < binning.slots() * sizeof(std::uint64_t)) slots_.resize(binning.slots() * sizeof(std::uint64_t));
    LEVELHIST_TEST_CUDA(
        cudaMemcpyAsync(slots_.get(), initial.data(), initial.size_bytes(), cudaMemcpyHostToDevice, stream_));
    try {
      cuda::histogram(workspace_.get(), workspace_.size(), d_samples, n, type, binning,
                      reinterpret_cast<std::uint64_t*>(slots_.get()), accumulate, stream_, &s);
      LEVELHIST_TEST_CUDA(cudaStreamSynchronize(stream_));
    } catch (const Error& e) {
      // A fault in a kernel poisons the context: nothing later can run.
      if (cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess)
        throw std::runtime_error(where + ": " + e.what() + " (the CUDA context is lost: " + cudaGetErrorString(sticky) +
                                 ")");
      fail(s, where + ": threw " + e.what());
      return;
    }
    std::vector<std::uint64_t> got(binning.slots());
    LEVELHIST_TEST_CUDA(
        cudaMemcpy(got.data(), slots_.get(), got.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    if (auto same = slots_equal(expected, got, binning); !same) fail(s, where + ": " + same.message());
    check_workspace(s, binning, ws_needed, where);
  }

  // check() with accumulate false over poisoned slots, expecting `reference`.
  void check_fresh(const Strategy& s, SampleType type, const void* d_samples, std::uint64_t n, const Binning& binning,
                   std::span<const std::uint64_t> reference, const std::string& context) {
    std::vector<std::uint64_t> poison(binning.slots());
    for (std::size_t i = 0; i < poison.size(); ++i) poison[i] = 0xDEADBEEF00000000ULL + i * 977;
    check(s, type, d_samples, n, binning, false, poison, reference, context);
  }

  // Strategies that failed in this harness, with how often.
  const std::map<std::string, int>& failures() const { return failures_; }

 private:
  static constexpr int kMaxReportedFailures = 4;

  bool gave_up(const Strategy& s) const {
    auto it = failures_.find(s.name);
    return it != failures_.end() && it->second > kMaxReportedFailures;
  }
  void fail(const Strategy& s, const std::string& message) {
    const int count = ++failures_[s.name];
    if (count <= kMaxReportedFailures) ADD_FAILURE() << message;
    if (count == kMaxReportedFailures + 1)
      ADD_FAILURE() << s.name << " failed " << count << " times in this test; its remaining cases are skipped";
  }

  void ensure_workspace(std::size_t bytes) {
    if (bytes <= workspace_.size()) return;
    LEVELHIST_TEST_CUDA(cudaStreamSynchronize(stream_));
    workspace_.resize(std::max(bytes, workspace_.size() * 2));
    LEVELHIST_TEST_CUDA(cudaMemset(workspace_.get(), 0, workspace_.size()));  // zeroed once, as cuda.hpp asks
  }

  // The workspace must be zero again after every call (explicit edges and
  // tables live in the plan's memory, not in the workspace).
  void check_workspace(const Strategy& s, const Binning&, std::size_t used, const std::string& where) {
    if (used == 0) return;
    host_workspace_.resize(used);
    LEVELHIST_TEST_CUDA(cudaMemcpy(host_workspace_.data(), workspace_.get(), used, cudaMemcpyDeviceToHost));
    auto dirty = std::find_if(host_workspace_.begin(), host_workspace_.end(), [](unsigned char b) { return b != 0; });
    if (dirty == host_workspace_.end()) return;
    const std::size_t at = static_cast<std::size_t>(dirty - host_workspace_.begin());
    const std::size_t count = static_cast<std::size_t>(
        std::count_if(host_workspace_.begin(), host_workspace_.end(), [](unsigned char b) { return b != 0; }));
    fail(s, where + ": left " + std::to_string(count) + " non-zero bytes in its " + std::to_string(used) +
                " bytes of workspace, the first at byte " + std::to_string(at) +
                " (the workspace must be zero on return)");
    LEVELHIST_TEST_CUDA(cudaMemset(workspace_.get(), 0, workspace_.size()));
  }

  cudaStream_t stream_ = nullptr;
  DeviceBytes workspace_;
  DeviceBytes samples_;
  DeviceBytes slots_;
  std::vector<unsigned char> host_workspace_;
  std::map<std::string, int> failures_;
};

}  // namespace levelhist::test

#endif  // LEVELHIST_HAVE_CUDA
