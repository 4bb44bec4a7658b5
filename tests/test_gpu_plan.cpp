// Plans on a GPU: device pointers through Plan::run, host memory through the
// one staging path, for every request kind; per-device state under threads
// that switch their current device; edges and tables in the plan's memory.
#include "gpu_test_support.hpp"

#if LEVELHIST_HAVE_CUDA
#include <atomic>
#include <random>
#include <thread>

namespace levelhist::test {
namespace {

Options on_cuda(const char* strategy = "auto") {
  Options o;
  o.strategy = strategy;
  o.backend = BackendChoice::cuda;
  return o;
}
Options reference() {
  Options o;
  o.strategy = "cpu_serial";
  o.backend = BackendChoice::cpu;
  return o;
}

template <class T>
std::vector<T> noise(std::size_t n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
std::vector<std::uint64_t> run_on_device(const Plan& plan, const std::vector<T>& x, int calls) {
  DeviceBytes d_x(x.size() * sizeof(T)), d_out(plan.request().output_slots() * 8);
  const std::size_t ws_bytes = plan.workspace_bytes(x.size());
  DeviceBytes ws(std::max<std::size_t>(ws_bytes, 1));
  LEVELHIST_TEST_CUDA(cudaMemset(ws.get(), 0, ws.size()));
  LEVELHIST_TEST_CUDA(cudaMemcpy(d_x.get(), x.data(), d_x.size(), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  LEVELHIST_TEST_CUDA(cudaStreamCreate(&stream));
  for (int c = 0; c < calls; ++c)
    plan.run(Input::array(d_x.get(), x.size()), d_out.get(), c > 0, ws.get(), ws_bytes, stream);
  std::vector<std::uint64_t> out(plan.request().output_slots());
  LEVELHIST_TEST_CUDA(cudaMemcpyAsync(out.data(), d_out.get(), out.size() * 8, cudaMemcpyDeviceToHost, stream));
  LEVELHIST_TEST_CUDA(cudaStreamSynchronize(stream));
  LEVELHIST_TEST_CUDA(cudaStreamDestroy(stream));
  std::vector<unsigned char> host_ws(ws_bytes);
  if (ws_bytes) LEVELHIST_TEST_CUDA(cudaMemcpy(host_ws.data(), ws.get(), ws_bytes, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::all_of(host_ws.begin(), host_ws.end(), [](unsigned char b) { return b == 0; }))
      << plan.strategy().name << " left its workspace dirty";
  return out;
}

// Every kind of binning auto serves on a GPU: the plan's run equals the
// reference, call after call (the edges and cell tables stay in the plan).
TEST(GpuPlan, DevicePointersEveryKindOfBinning) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  std::vector<double> e = {0.0};
  for (int i = 1; i <= 64; ++i) e.push_back(e.back() + 0.001 * i);
  const Binning edges = Binning::explicit_edges(e);
  struct Case {
    Binning binning;
    std::vector<float> x;
  };
  std::vector<Case> cases = {{Binning::even(1024, 0.0, 1.0), noise<float>(3'000'001, 1, -0.1, 1.1)},
                             {edges, noise<float>(2'000'003, 2, -0.2, 2.3)},
                             {Binning::even(100000, 0.0, 1.0), noise<float>(1'000'000, 3, 0.0, 1.0)}};
  for (const Case& c : cases) {
    const Plan plan(Request::counts(SampleType::f32, c.binning), on_cuda());
    EXPECT_EQ(plan.backend(), Backend::cuda);
    const std::vector<std::uint64_t> got = run_on_device(plan, c.x, 3);
    Histogram want = histogram(SampleType::f32, c.x.data(), c.x.size(), c.binning, reference());
    for (auto& v : want.slots()) v *= 3;
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.slots().begin()))
        << plan.strategy().name << " on " << c.binning.describe();
  }
}

// The host path: plain, pixels with a pitch and weights, across staging chunks.
TEST(GpuPlan, HostMemoryEveryRequestKind) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const std::size_t n = (std::size_t{64} << 20) + 4097;  // more than one 64 MiB staging chunk
  std::vector<std::uint8_t> bytes(n);
  std::mt19937_64 rng(7);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng() >> 56);
  const Binning per_value = Binning::per_value(SampleType::u8);
  {
    const Plan plan(Request::counts(SampleType::u8, per_value), on_cuda());
    Histogram got(per_value);
    plan.fill(got, Input::array(bytes.data(), n));
    EXPECT_EQ(got, histogram(SampleType::u8, bytes.data(), n, per_value, reference()));
  }
  {
    // RGBA with a pitch: 1000 x 500 pixels in rows of 4100 bytes.
    const Plan plan(Request::pixels(SampleType::u8, 4, 0b0111, per_value), on_cuda());
    std::vector<Histogram> got(3, Histogram(per_value));
    plan.fill(got, Input::image(bytes.data(), 1000, 500, 4100));
    const std::vector<Histogram> want =
        histogram_pixels(SampleType::u8, bytes.data(), PixelLayout{4, 0b0111, 1000, 500, 4100}, per_value, reference());
    EXPECT_EQ(got, want) << plan.strategy().name;
  }
  {
    const Binning b = Binning::even(300, 0.0, 256.0);
    const std::vector<float> w = noise<float>(n / 4, 9, -1.0, 1.0);
    const Plan plan(Request::weighted(SampleType::u8, SampleType::f32, b), on_cuda());
    WeightedHistogram got(b);
    plan.fill(got, Input::array(bytes.data(), n / 4, w.data()));
    const WeightedHistogram want =
        histogram_weighted(SampleType::u8, bytes.data(), n / 4, SampleType::f32, w.data(), b, reference());
    for (std::uint64_t s = 0; s < b.slots(); ++s)
      EXPECT_NEAR(got.slots()[s], want.slots()[s], 1e-9 * (1.0 + std::abs(want.slots()[s]))) << "slot " << s;
  }
}

// State per device: a plan made in one thread is used in another that has
// switched its current device (to the last device: on a one-GPU machine the
// same one), while that thread runs its own plan; each thread's current device
// is left as it was, and every result is right.
TEST(GpuPlan, PlansAreBoundToTheirDeviceAcrossThreads) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const int devices = cuda::device_count();
  LEVELHIST_TEST_CUDA(cudaSetDevice(0));
  const Binning b = Binning::even(4096, 0, 65536);
  const std::vector<std::uint16_t> x = noise<std::uint16_t>(5'000'000, 11, 0, 65535);
  const Histogram want = histogram(SampleType::u16, x.data(), x.size(), b, reference());
  Options first = on_cuda();
  first.device = 0;
  const Plan on_first(Request::counts(SampleType::u16, b), first);
  EXPECT_EQ(on_first.device(), 0);
  std::atomic<int> failures{0};
  std::thread other([&] {
    if (cudaSetDevice(devices - 1) != cudaSuccess) return void(++failures);
    Options last = on_cuda();
    const Plan on_last(Request::counts(SampleType::u16, b), last);  // the thread's current device
    if (on_last.device() != devices - 1) ++failures;
    for (int round = 0; round < 4; ++round) {
      Histogram a(b), c(b);
      on_first.fill(a, Input::array(x.data(), x.size()));
      on_last.fill(c, Input::array(x.data(), x.size()));
      if (!(a == want) || !(c == want)) ++failures;
      int current = -1;
      if (cudaGetDevice(&current) != cudaSuccess || current != devices - 1) ++failures;
    }
  });
  for (int round = 0; round < 4; ++round) {
    Histogram a(b);
    on_first.fill(a, Input::array(x.data(), x.size()));
    EXPECT_EQ(a, want);
  }
  other.join();
  EXPECT_EQ(failures.load(), 0);
  int current = -1;
  LEVELHIST_TEST_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 0);
}

TEST(GpuPlan, ADeviceThatDoesNotExistIsAUsageError) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  Options o = on_cuda();
  o.device = cuda::device_count();
  try {
    Plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), o);
    FAIL() << "device " << o.device << " accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
    EXPECT_EQ(e.subject(), ErrorSubject::device) << e.what();
  }
  EXPECT_GE(cuda::compute_capability(), 80);
  EXPECT_EQ(cuda::current_device(), 0);
}

}  // namespace
}  // namespace levelhist::test
#endif  // LEVELHIST_HAVE_CUDA
