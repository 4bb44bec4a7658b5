// Faults on the device, and what a plan is like after them:
//  * a full device: a plan that needs device memory cannot be made, a host-path
//    call cannot stage or keep its workspace: Error(resource) saying what
//    needed how much, and nothing added to the caller's histogram; once the
//    memory is free again the same plan counts (the host path's half-made
//    staging is completed, not trusted);
//  * a CUDA error in the middle of the host path's pipeline (injected after a
//    chunk's copy and kernels are in the stream, with the workspace left dirty,
//    as a strategy that fails between its kernels leaves it): Error(cuda), then
//    the same plan and another one on the device count right;
//  * the same in the device path (Plan::run): the caller's workspace is zero
//    again once the stream has run, so it serves the next call.
// Without a GPU every test skips and says why.
#include <gtest/gtest.h>

#if !LEVELHIST_HAVE_CUDA

TEST(GpuFaults, NeedACudaBuild) { GTEST_SKIP() << "this build has no CUDA backend (LEVELHIST_CUDA=OFF or no nvcc)"; }

#else

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/plan_impl.hpp"
#include "gpu_test_support.hpp"

namespace levelhist::test {
namespace {

Options on_cuda(const char* strategy = "auto") {
  Options o;
  o.strategy = strategy;
  o.backend = BackendChoice::cuda;
  return o;
}

Histogram reference_of(SampleType type, const void* data, std::uint64_t n, const Binning& b) {
  Histogram h(b);
  const auto slots = reference_slots(type, data, n, b);
  std::copy(slots.begin(), slots.end(), h.slots().begin());
  return h;
}

// Takes all the device memory it can get, in ever smaller pieces down to 256
// bytes (so small allocations fail too), until it goes out of scope.
class DeviceHog {
 public:
  DeviceHog() {
    for (std::size_t size = std::size_t{1} << 32; size >= 256; size /= 2)
      for (;;) {
        void* p = nullptr;
        if (cudaMalloc(&p, size) != cudaSuccess) {
          cudaGetLastError();
          break;
        }
        blocks_.push_back(p);
        bytes_ += size;
      }
  }
  ~DeviceHog() {
    for (void* p : blocks_) cudaFree(p);
  }
  DeviceHog(const DeviceHog&) = delete;
  DeviceHog& operator=(const DeviceHog&) = delete;
  std::size_t bytes() const { return bytes_; }

 private:
  std::vector<void*> blocks_;
  std::size_t bytes_ = 0;
};

::testing::AssertionResult one_clear_line(const std::function<void()>& fn, ErrorKind kind, const std::string& needle) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string what = e.what();
    if (e.kind() != kind) return ::testing::AssertionFailure() << "kind " << static_cast<int>(e.kind()) << ": " << what;
    if (what.find(needle) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << what << "' does not say '" << needle << "'";
    if (what.find('\n') != std::string::npos) return ::testing::AssertionFailure() << "more than one line: " << what;
    if (e.fix().empty()) return ::testing::AssertionFailure() << "no fix: " << what;
    return ::testing::AssertionSuccess() << what;
  }
  return ::testing::AssertionFailure() << "did not throw";
}

TEST(GpuFaults, AFullDeviceIsAResourceErrorAndTheSamePlanWorksOnceFreed) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const int device = cuda::current_device();
  const Binning b = Binning::even(4096, 0, 65536);
  std::vector<std::uint16_t> x(3'000'001);
  std::mt19937_64 rng(11);
  for (auto& v : x) v = static_cast<std::uint16_t>(rng());
  const Histogram want = reference_of(SampleType::u16, x.data(), x.size(), b);
  const Histogram untouched = [&] {
    Histogram h(b);
    for (std::size_t i = 0; i < h.slots().size(); ++i) h.slots()[i] = 1000 + i;
    return h;
  }();
  std::vector<double> edges;
  for (int i = 0; i <= 100; ++i) edges.push_back(i * i * 0.01);
  const Request with_edges = Request::counts(SampleType::f32, Binning::explicit_edges(edges));

  // Plans made while memory is free: one whose host path has run (staging made),
  // one that has never run (no workspace yet).
  const Plan used(Request::counts(SampleType::u16, b), on_cuda());
  const Plan fresh(Request::counts(SampleType::u16, b), on_cuda());
  {
    Histogram h(b);
    used.fill(h, Input::array(x.data(), x.size()));
    ASSERT_EQ(h, want);
  }
  {
    DeviceHog hog;
    ASSERT_GT(hog.bytes(), 0u);
    std::printf("[ note     ] the device is full: %zu MiB taken\n", hog.bytes() >> 20);
    Histogram h = untouched;
    EXPECT_TRUE(one_clear_line([&] { fresh.fill(h, Input::array(x.data(), x.size())); }, ErrorKind::resource,
                               "out of device memory: the plan's workspace"));
    EXPECT_EQ(h, untouched) << "a failed call added to the histogram";
    EXPECT_TRUE(one_clear_line([&] { Plan p(with_edges, on_cuda()); }, ErrorKind::resource,
                               "out of device memory: the plan's bin edges"));
  }
  {
    // Freed: the same plan counts.
    Histogram h(b);
    fresh.fill(h, Input::array(x.data(), x.size()));
    EXPECT_EQ(h, want);
    EXPECT_NO_THROW(Plan p(with_edges, on_cuda()));
  }
  // The host path's staging, made again on a full device: the pinned buffers
  // come (host memory), the device buffers do not. The next call, with memory,
  // must make what is missing rather than use what half-exists.
  levelhist::detail::release_host_path_staging(device);
  {
    DeviceHog hog;
    Histogram h = untouched;
    // (Pinned memory is mapped into the device's address space: on a full
    // device it may be the pinned buffer that fails. Either names the buffer.)
    EXPECT_TRUE(one_clear_line([&] { used.fill(h, Input::array(x.data(), x.size())); }, ErrorKind::resource,
                               "a staging buffer of the host path"));
    EXPECT_EQ(h, untouched);
  }
  for (const Plan* plan : {&used, &fresh}) {
    Histogram h(b);
    plan->fill(h, Input::array(x.data(), x.size()));
    EXPECT_EQ(h, want) << "after the staging failed half-way";
  }
}

// Many staging chunks (16 MiB by default, staged by several threads); the
// fault comes after the first, second or third chunk's copy and kernels are
// in the streams.
TEST(GpuFaults, AnErrorMidPipelineLeavesTheHostPathUsable) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const std::size_t n = (std::size_t{150} << 20) + 3;
  std::vector<std::uint8_t> x(n);
  std::mt19937_64 rng(12);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t r = rng();
    std::memcpy(x.data() + i, &r, std::min<std::size_t>(8, n - i));
  }
  const Binning per_value = Binning::per_value(SampleType::u8);
  const Histogram want = reference_of(SampleType::u8, x.data(), n, per_value);
  const Plan plan(Request::counts(SampleType::u8, per_value), on_cuda());
  for (unsigned after : {1u, 2u, 3u}) {
    Histogram h(per_value);
    levelhist::detail::inject_cuda_fault_after(after);
    EXPECT_TRUE(one_clear_line([&] { plan.fill(h, Input::array(x.data(), n)); }, ErrorKind::cuda,
                               "too many resources requested for launch"))
        << "fault after chunk " << after;
    levelhist::detail::inject_cuda_fault_after(0);
    EXPECT_EQ(h, Histogram(per_value)) << "a failed call added to the histogram";
    plan.fill(h, Input::array(x.data(), n));
    EXPECT_EQ(h, want) << "the call after a fault after chunk " << after;
  }
  // Another plan on the device shares the staging: it is not poisoned either.
  const Binning b = Binning::even(7, 10.5, 200);
  const Plan other(Request::counts(SampleType::u8, b), on_cuda());
  Histogram h(b);
  other.fill(h, Input::array(x.data(), n));
  EXPECT_EQ(h, reference_of(SampleType::u8, x.data(), n, b));
}

// The device path: rows with a pitch go to a strategy that does not take rows
// one row per piece; the fault comes after the third. The caller's workspace
// must be zero again once the stream has run, and serve the next call.
TEST(GpuFaults, AnErrorInPlanRunLeavesTheWorkspaceZero) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning per_value = Binning::per_value(SampleType::u8);
  const Strategy* row_by_row = nullptr;
  for (const Strategy* s : cuda_strategies())
    if (!(s->capabilities & kCapabilityPixels) && strategy_accepts(*s, Problem{SampleType::u8, &per_value, 1 << 20}) &&
        s->workspace_bytes && s->workspace_bytes(Problem{SampleType::u8, &per_value, 1 << 20}) > 0) {
      row_by_row = s;
      break;
    }
  if (!row_by_row) GTEST_SKIP() << "no CUDA strategy counts bytes row by row with a workspace";
  const Plan plan(Request::counts(SampleType::u8, per_value), on_cuda(row_by_row->name));
  constexpr std::uint64_t kWidth = 100000, kHeight = 8, kPitch = kWidth + 61;
  std::vector<std::uint8_t> image(kPitch * kHeight);
  std::mt19937_64 rng(13);
  for (auto& v : image) v = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> packed;
  for (std::uint64_t r = 0; r < kHeight; ++r)
    packed.insert(packed.end(), image.begin() + r * kPitch, image.begin() + r * kPitch + kWidth);
  const Histogram want = reference_of(SampleType::u8, packed.data(), packed.size(), per_value);

  DeviceBytes d_image(image.size()), d_out(per_value.slots() * 8);
  LEVELHIST_TEST_CUDA(cudaMemcpy(d_image.get(), image.data(), image.size(), cudaMemcpyHostToDevice));
  const std::size_t ws_bytes = plan.workspace_bytes(kWidth * kHeight);
  DeviceBytes ws(ws_bytes);
  LEVELHIST_TEST_CUDA(cudaMemset(ws.get(), 0, ws_bytes));
  cudaStream_t stream;
  LEVELHIST_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const Input frame = Input::image(d_image.get(), kWidth, kHeight, kPitch);

  levelhist::detail::inject_cuda_fault_after(3);
  EXPECT_TRUE(one_clear_line([&] { plan.run(frame, d_out.get(), false, ws.get(), ws_bytes, stream); },
                             ErrorKind::cuda, "too many resources requested for launch"));
  levelhist::detail::inject_cuda_fault_after(0);
  LEVELHIST_TEST_CUDA(cudaStreamSynchronize(stream));
  std::vector<unsigned char> host_ws(ws_bytes);
  LEVELHIST_TEST_CUDA(cudaMemcpy(host_ws.data(), ws.get(), ws_bytes, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::all_of(host_ws.begin(), host_ws.end(), [](unsigned char v) { return v == 0; }))
      << row_by_row->name << ": the workspace is dirty after the failed call";

  plan.run(frame, d_out.get(), false, ws.get(), ws_bytes, stream);
  std::vector<std::uint64_t> got(per_value.slots());
  LEVELHIST_TEST_CUDA(cudaMemcpyAsync(got.data(), d_out.get(), got.size() * 8, cudaMemcpyDeviceToHost, stream));
  LEVELHIST_TEST_CUDA(cudaStreamSynchronize(stream));
  LEVELHIST_TEST_CUDA(cudaStreamDestroy(stream));
  EXPECT_TRUE(slots_equal(want.slots(), got, per_value)) << row_by_row->name << ", the call after the failed one";
}

}  // namespace
}  // namespace levelhist::test

#endif  // LEVELHIST_HAVE_CUDA
