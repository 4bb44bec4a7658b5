// The host path at link speed: host arrays from pageable, pinned and
// registered memory, sources read straight into the pinned staging buffers,
// CPU and GPU together on one call, several devices. Every count is checked
// against the CPU reference (cpu_serial) at sizes around the staging chunk
// (made small here through LEVELHIST_STAGING_CHUNK_BYTES, so a few MiB cross
// many chunks and reuse every buffer). The GPU tests skip without a GPU; the
// split's model, the option checks and the CLI's --devices run everywhere.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_support.hpp"
#include "core/hybrid.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"
#include "levelhist/source.hpp"
#include "scoped_support.hpp"
#if LEVELHIST_HAVE_CUDA
#include "gpu_test_support.hpp"
#endif

namespace levelhist::test {
namespace {

namespace fs = std::filesystem;

Options cpu_reference() {
  Options o;
  o.strategy = "cpu_serial";
  o.backend = BackendChoice::cpu;
  return o;
}

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng() >> 56);
  return v;
}

std::vector<std::uint64_t> slots_of(const Plan& plan, const Input& input) {
  std::vector<std::uint64_t> out(plan.request().output_slots(), 0);
  plan.fill_slots(out.data(), input, false);
  return out;
}

// ---- the split's model (no GPU needed) ---------------------------------------------

double model_seconds(const ::levelhist::detail::UnitSplit& s, double unit_bytes, const ::levelhist::detail::SideModel& cpu,
                     const ::levelhist::detail::SideModel& cuda) {
  return std::max(cpu.seconds(static_cast<double>(s.cpu) * unit_bytes),
                  cuda.seconds(static_cast<double>(s.cuda) * unit_bytes));
}

TEST(HybridSplit, EveryUnitGoesToOneSideAndTheSplitIsNeverWorseThanEitherAlone) {
  const double rates[] = {1e9, 5e9, 26e9, 50e9, 70e9, 300e9};
  const double fixed[] = {0.0, 50e-6, 300e-6, 5e-3};
  const std::uint64_t sizes[] = {0, 1, 7, 1000, 1 << 20, 100 << 20, std::uint64_t{3} << 30};
  for (double rc : rates)
    for (double rg : rates)
      for (double fc : fixed)
        for (double fg : fixed)
          for (std::uint64_t units : sizes)
            for (double unit_bytes : {1.0, 3.0, 4096.0}) {
              const ::levelhist::detail::SideModel cpu{fc, rc}, cuda{fg, rg};
              const ::levelhist::detail::UnitSplit s = ::levelhist::detail::choose_split(units, unit_bytes, cpu, cuda, 0.0);
              ASSERT_EQ(s.cpu + s.cuda, units);
              const double best_alone = std::min(cpu.seconds(units * unit_bytes), cuda.seconds(units * unit_bytes));
              EXPECT_LE(model_seconds(s, unit_bytes, cpu, cuda), best_alone * (1 + 1e-12))
                  << rc << " " << rg << " " << fc << " " << fg << " " << units;
            }
}

TEST(HybridSplit, EqualSidesShareABigCallEvenly) {
  const ::levelhist::detail::SideModel side{100e-6, 20e9};
  const std::uint64_t units = std::uint64_t{1} << 30;
  const ::levelhist::detail::UnitSplit s = ::levelhist::detail::choose_split(units, 1.0, side, side, 0.0);
  EXPECT_EQ(s.cpu + s.cuda, units);
  EXPECT_NEAR(static_cast<double>(s.cpu) / units, 0.5, 1e-6);
}

TEST(HybridSplit, SharesFollowTheRates) {
  // Rates 3:1, no fixed costs: three quarters to the faster side.
  const std::uint64_t units = 4000000;
  const ::levelhist::detail::UnitSplit s = ::levelhist::detail::choose_split(units, 1.0, {0, 60e9}, {0, 20e9}, 0.0);
  EXPECT_NEAR(static_cast<double>(s.cpu), 3000000.0, 1.0);
  const ::levelhist::detail::UnitSplit t = ::levelhist::detail::choose_split(units, 1.0, {0, 20e9}, {0, 60e9}, 0.0);
  EXPECT_NEAR(static_cast<double>(t.cuda), 3000000.0, 1.0);
}

TEST(HybridSplit, SidesThatSlowEachOtherDownRunAlone) {
  // An H100 host's pageable case: 59 GB/s on the CPU alone, 49 on the GPU
  // alone, about 15 each beside the other. 1 GiB: the CPU alone.
  const std::uint64_t units = std::uint64_t{1} << 30;
  const ::levelhist::detail::SideModel cpu{50e-6, 59e9}, cuda{300e-6, 49e9};
  const ::levelhist::detail::UnitSplit slowed =
      ::levelhist::detail::choose_split(units, 1.0, cpu, cuda, {50e-6, 15e9}, {300e-6, 15e9}, 0.0);
  EXPECT_EQ(slowed.cpu, units);
  EXPECT_EQ(slowed.cuda, 0u);
  // Sides that keep most of their speed together still share, cut at their shared rates.
  const ::levelhist::detail::UnitSplit shared =
      ::levelhist::detail::choose_split(units, 1.0, cpu, cuda, {0, 40e9}, {0, 40e9}, 0.0);
  EXPECT_NEAR(static_cast<double>(shared.cpu) / units, 0.5, 1e-3);
}

TEST(HybridSplit, SmallCallsGoToTheCpuAlone) {
  const ::levelhist::detail::SideModel cpu{50e-6, 70e9}, cuda{300e-6, 50e9};
  // Below the smallest shared call: the CPU, whatever the rates say.
  EXPECT_EQ(::levelhist::detail::choose_split(1000, 1.0, {0, 1e6}, {0, 1e12}, 4096.0).cuda, 0u);
  // A GPU whose fixed cost is 0.3 ms loses 1 MiB to a CPU that counts it in 15 us.
  EXPECT_EQ(::levelhist::detail::choose_split(1 << 20, 1.0, cpu, cuda, 0.0).cuda, 0u);
  // 1 GiB: both take part.
  const ::levelhist::detail::UnitSplit big = ::levelhist::detail::choose_split(std::uint64_t{1} << 30, 1.0, cpu, cuda, 0.0);
  EXPECT_GT(big.cpu, 0u);
  EXPECT_GT(big.cuda, 0u);
}

TEST(HybridSplit, TheRateEstimateMovesTowardsCompletedCallsAndIgnoresSmallOnes) {
  ::levelhist::detail::RateEstimate r(10e9);
  r.add(1000, 1.0, 0.0);  // far below kMinBytes: says nothing about the rate
  EXPECT_EQ(r.rate(), 10e9);
  const double bytes = 1e9;
  for (int k = 0; k < 60; ++k) r.add(bytes, bytes / 30e9, 0.0);
  EXPECT_NEAR(r.rate(), 30e9, 30e9 * 1e-6);
  r.add(bytes, 0.0, 0.0);  // no time: ignored
  EXPECT_NEAR(r.rate(), 30e9, 30e9 * 1e-6);
  // A call the fixed cost all but explains claims at most ten times its plain rate.
  ::levelhist::detail::RateEstimate s(1e9);
  s.add(bytes, 1.0, 1.0);
  EXPECT_NEAR(s.rate(), 0.7 * 1e9 + 0.3 * 10e9, 1.0);
}

TEST(HybridSplit, APlanKeptToOneSideSharesAgainNowAndThenAndBacksOffWhileSharingLoses) {
  using ::levelhist::detail::ShareRetry;
  ShareRetry retry;
  auto calls_until_due = [&] {
    for (std::uint64_t k = 1; k <= 10 * ShareRetry::kMaxInterval; ++k)
      if (retry.due()) return k;
    return std::uint64_t{0};
  };
  EXPECT_EQ(calls_until_due(), ShareRetry::kFirstInterval);
  // Sharing lost: the interval doubles, up to its maximum.
  std::uint64_t interval = ShareRetry::kFirstInterval;
  for (int k = 0; k < 12; ++k) {
    retry.shared(false);
    interval = std::min(interval * 2, ShareRetry::kMaxInterval);
    EXPECT_EQ(retry.interval(), interval);
    EXPECT_EQ(calls_until_due(), interval);
  }
  EXPECT_EQ(interval, ShareRetry::kMaxInterval);
  // A shared call that won starts over; so does reset().
  retry.shared(true);
  EXPECT_EQ(calls_until_due(), ShareRetry::kFirstInterval);
  retry.shared(false);
  retry.reset();
  EXPECT_EQ(calls_until_due(), ShareRetry::kFirstInterval);
  // A shared call between the calls alone starts the count over.
  for (std::uint64_t k = 1; k < ShareRetry::kFirstInterval; ++k) EXPECT_FALSE(retry.due());
  retry.shared(true);
  EXPECT_EQ(calls_until_due(), ShareRetry::kFirstInterval);
}

TEST(HybridSplit, OnlyAutomaticPlansOfPlainOrPixelCountsShare) {
  const Request plain = Request::counts(SampleType::u8, Binning::per_value(SampleType::u8));
  EXPECT_TRUE(::levelhist::detail::shares_host_calls(plain, Options{}));
  Options cpu;
  cpu.backend = BackendChoice::cpu;
  EXPECT_FALSE(::levelhist::detail::shares_host_calls(plain, cpu));
  Options cuda;
  cuda.backend = BackendChoice::cuda;
  EXPECT_FALSE(::levelhist::detail::shares_host_calls(plain, cuda));
  Options named;
  named.strategy = "cpu_serial";
  EXPECT_FALSE(::levelhist::detail::shares_host_calls(plain, named));
  EXPECT_TRUE(::levelhist::detail::shares_host_calls(Request::pixels(SampleType::u8, 3, 0b111, Binning::per_value(SampleType::u8)),
                                        Options{}));
  EXPECT_FALSE(::levelhist::detail::shares_host_calls(Request::weighted(SampleType::u8, SampleType::f32, Binning::even(4, 0, 256)),
                                         Options{}));
  EXPECT_FALSE(::levelhist::detail::shares_host_calls(Request::segments(SampleType::u8, Binning::per_value(SampleType::u8), 4),
                                         Options{}));
  ScopedEnv off("LEVELHIST_HYBRID", "0");
  EXPECT_FALSE(::levelhist::detail::shares_host_calls(plain, Options{}));
}

// ---- the plan's device list (no GPU needed) ----------------------------------------

TEST(DeviceList, BadListsAreUsageErrors) {
  const Request r = Request::counts(SampleType::u8, Binning::per_value(SampleType::u8));
  for (const std::vector<int>& devices : {std::vector<int>{-1}, std::vector<int>{0, 0}, std::vector<int>{1, 0, 1}}) {
    Options o;
    o.devices = devices;
    try {
      Plan p(r, o);
      ADD_FAILURE() << "a plan was made";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
      EXPECT_EQ(e.subject(), ErrorSubject::device) << e.what();
    }
  }
  Options mismatch;
  mismatch.device = 1;
  mismatch.devices = {0};
  EXPECT_THROW(Plan(r, mismatch), Error);
}

TEST(DeviceList, ACpuPlanIgnoresIt) {
  Options o;
  o.backend = BackendChoice::cpu;
  o.devices = {0, 1, 2};
  const Plan plan(Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), o);
  const auto bytes = random_bytes(1000, 3);
  const Plan reference(plan.request(), cpu_reference());
  EXPECT_EQ(slots_of(plan, Input::array(bytes.data(), bytes.size())),
            slots_of(reference, Input::array(bytes.data(), bytes.size())));
  EXPECT_EQ(plan.last_host_split().cpu_items, bytes.size());
  EXPECT_EQ(plan.last_host_split().cuda_items, 0u);
}

// ---- the CLI's --devices (no GPU needed) -------------------------------------------

class CliDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("levelhist-devices-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    file_ = (dir_ / "data.u8").string();
    const auto bytes = random_bytes(100000, 11);
    FILE* f = std::fopen(file_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string file_;
};

TEST_F(CliDevices, BadValuesAreInputErrorsAndAMissingValueIsUsage) {
  using cli_test::fails;
  for (const char* bad : {"x", "", ",", "0,", ",0", "-1", "0,0", "1024", "5000", "0x1", "all,0", "1 "})
    fails(1, {"count", "--type", "u8", "--devices", bad, file_});
  fails(2, {"count", "--type", "u8", file_, "--devices"});
  fails(2, {"text", "--devices", "all", file_});  // count's option only
}

TEST_F(CliDevices, AllCountsWhatTheDefaultCounts) {
  using cli_test::ok;
  const auto plain = ok({"count", "--type", "u8", "--format", "csv", file_});
  const auto all = ok({"count", "--type", "u8", "--format", "csv", "--devices", "all", file_});
  EXPECT_EQ(all.out, plain.out);
  if (cuda::device_count() == 0) {
    cli_test::fails(1, {"count", "--type", "u8", "--devices", "0", file_});
  } else {
    EXPECT_EQ(ok({"count", "--type", "u8", "--format", "csv", "--devices", "0", file_}).out, plain.out);
  }
}

#if LEVELHIST_HAVE_CUDA

// ---- on a GPU ------------------------------------------------------------------------

Options on_cuda() {
  Options o;
  o.backend = BackendChoice::cuda;
  return o;
}

constexpr std::size_t kChunk = std::size_t{1} << 20;  // the staging chunk these tests set

// Small staging chunks, and calls split across the devices however small
// they are: the device-list tests' setting.
struct SmallChunksOnEveryDevice {
  ScopedEnv chunk{"LEVELHIST_STAGING_CHUNK_BYTES", std::to_string(kChunk)};
  ScopedEnv share{"LEVELHIST_DEVICE_SHARE_BYTES", "1"};
};

// Sizes in items around the chunk: none, one, a chunk's worth less, equal
// and more, and enough chunks to reuse every pinned and device buffer.
std::vector<std::size_t> sizes_around(std::size_t item) {
  const std::size_t c = kChunk / item;
  return {0, 1, c - 1, c, c + 1, 3 * c + 7, 20 * c + 3};
}

// Host memory of each kind the host path tells apart.
enum class Memory { pageable, pinned, registered };
const char* name_of(Memory m) {
  return m == Memory::pageable ? "pageable" : m == Memory::pinned ? "pinned" : "registered";
}

class HostBuffer {
 public:
  HostBuffer(Memory kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
    const std::size_t size = std::max<std::size_t>(bytes, 1) + 64;
    if (kind == Memory::pinned) {
      LEVELHIST_TEST_CUDA(cudaMallocHost(&p_, size));
    } else {
      p_ = std::malloc(size);
      if (!p_) throw std::bad_alloc();
      if (kind == Memory::registered) LEVELHIST_TEST_CUDA(cudaHostRegister(p_, size, cudaHostRegisterDefault));
    }
  }
  ~HostBuffer() {
    if (kind_ == Memory::pinned) cudaFreeHost(p_);
    else {
      if (kind_ == Memory::registered) cudaHostUnregister(p_);
      std::free(p_);
    }
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  unsigned char* data() const { return static_cast<unsigned char*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  Memory kind_;
  std::size_t bytes_;
  void* p_ = nullptr;
};

TEST(GpuLink, PageablePinnedAndRegisteredArraysEqualTheCpu) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  ScopedEnv chunk("LEVELHIST_STAGING_CHUNK_BYTES", std::to_string(kChunk));
  struct Case {
    Request request;
    std::size_t item;
  };
  const Case cases[] = {
      {Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)), 1},
      {Request::counts(SampleType::u16, Binning::even(1000, 0, 65536)), 2},
      {Request::counts(SampleType::f32, Binning::even(77, 0.0, 1.0)), 4},
      {Request::pixels(SampleType::u8, 3, 0b101, Binning::per_value(SampleType::u8)), 3},
  };
  for (const Case& c : cases) {
    const Plan plan(c.request, on_cuda());
    const Plan reference(c.request, cpu_reference());
    for (Memory kind : {Memory::pageable, Memory::pinned, Memory::registered})
      for (std::size_t items : sizes_around(c.item))
        for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
          HostBuffer buffer(kind, items * c.item + offset);
          const auto bytes = random_bytes(items * c.item, items + offset);
          if (c.request.type == SampleType::f32)  // finite values, some outside the range
            for (std::size_t k = 0; k + 4 <= bytes.size(); k += 4) {
              const float v = static_cast<float>(bytes[k] * 256 + bytes[k + 1]) / 60000.0f;
              std::memcpy(buffer.data() + offset + k, &v, 4);
            }
          else if (!bytes.empty())
            std::memcpy(buffer.data() + offset, bytes.data(), bytes.size());
          const Input in = c.request.is_pixels() ? Input::image(buffer.data() + offset, items, items ? 1 : 0)
                                                 : Input::array(buffer.data() + offset, items);
          EXPECT_EQ(slots_of(plan, in), slots_of(reference, in))
              << name_of(kind) << ", " << items << " items of " << c.item << " bytes, offset " << offset;
        }
  }
}

TEST(GpuLink, RowsWithAPitchAndWeightsEqualTheCpu) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  ScopedEnv chunk("LEVELHIST_STAGING_CHUNK_BYTES", std::to_string(kChunk));
  // Rows with a pitch: gathered by the staging threads, whatever the memory.
  const Request rgba = Request::pixels(SampleType::u8, 4, 0b0111, Binning::per_value(SampleType::u8));
  const Plan plan(rgba, on_cuda()), reference(rgba, cpu_reference());
  for (Memory kind : {Memory::pageable, Memory::pinned}) {
    const std::size_t width = 1000, height = 1500, pitch = 4 * width + 52;  // ~6 MiB: several chunks
    HostBuffer image(kind, pitch * height);
    const auto bytes = random_bytes(pitch * height, 5);
    std::memcpy(image.data(), bytes.data(), bytes.size());
    const Input in = Input::image(image.data(), width, height, pitch);
    EXPECT_EQ(slots_of(plan, in), slots_of(reference, in)) << name_of(kind);
  }
  // Weights (small integers: every order of adding them gives the same double).
  const Request weighted = Request::weighted(SampleType::u8, SampleType::f32, Binning::even(16, 0, 256));
  const Plan wplan(weighted, on_cuda()), wref(weighted, cpu_reference());
  for (Memory kind : {Memory::pageable, Memory::pinned})
    for (std::size_t n : {std::size_t{1}, kChunk / 4 + 1, 5 * kChunk + 3}) {
      HostBuffer samples(kind, n), weights(kind, 4 * n);
      const auto bytes = random_bytes(n, n);
      std::memcpy(samples.data(), bytes.data(), n);
      for (std::size_t k = 0; k < n; ++k) {
        const float w = static_cast<float>(bytes[k] % 5);
        std::memcpy(weights.data() + 4 * k, &w, 4);
      }
      std::vector<double> got(weighted.output_slots()), want(weighted.output_slots());
      wplan.fill_slots(got.data(), Input::array(samples.data(), n, weights.data()), false);
      wref.fill_slots(want.data(), Input::array(samples.data(), n, weights.data()), false);
      EXPECT_EQ(got, want) << name_of(kind) << ", " << n;
    }
}

TEST(GpuLink, ChunkSizesAndThreadCountsAllCountTheSame) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Request r = Request::counts(SampleType::u16, Binning::even(4096, 0, 65536));
  const Plan plan(r, on_cuda()), reference(r, cpu_reference());
  const std::size_t n = (std::size_t{24} << 20) / 2 + 5;
  const auto bytes = random_bytes(2 * n, 99);
  const auto want = slots_of(reference, Input::array(bytes.data(), n));
  for (const char* chunk : {"65536", "1000000", "16777216", "268435456"})
    for (const char* threads : {"1", "3", "8"}) {
      ScopedEnv c("LEVELHIST_STAGING_CHUNK_BYTES", chunk), t("LEVELHIST_STAGING_THREADS", threads);
      EXPECT_EQ(slots_of(plan, Input::array(bytes.data(), n)), want) << chunk << " bytes, " << threads << " threads";
    }
}

TEST(GpuLink, CpuAndGpuTogetherEqualTheCpu) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Request r = Request::counts(SampleType::u8, Binning::per_value(SampleType::u8));
  const Plan plan(r, Options{});
  ASSERT_EQ(plan.backend(), Backend::cuda);
  ASSERT_TRUE(plan.shares_host_calls());
  const Plan reference(r, cpu_reference());
  // Equal estimates: a big call is shared, whatever this machine measured so far.
  ::levelhist::detail::HybridModel& model = ::levelhist::detail::hybrid_model();
  const double cpu_rate = model.cpu.rate(), cuda_rate = model.cuda_pageable.rate();
  const double pinned_rate = model.cuda_pinned.rate();
  model.reset(20e9, 20e9, 20e9);
  const std::size_t n = (std::size_t{64} << 20) + 3;
  const auto bytes = random_bytes(n, 1);
  EXPECT_EQ(slots_of(plan, Input::array(bytes.data(), n)), slots_of(reference, Input::array(bytes.data(), n)));
  const HostSplit split = plan.last_host_split();
  EXPECT_EQ(split.cpu_items + split.cuda_items, n);
  EXPECT_GT(split.cpu_items, 0u);
  EXPECT_GT(split.cuda_items, 0u);
  // A small call: the CPU alone.
  EXPECT_EQ(slots_of(plan, Input::array(bytes.data(), 1000)), slots_of(reference, Input::array(bytes.data(), 1000)));
  EXPECT_EQ(plan.last_host_split().cpu_items, 1000u);
  EXPECT_EQ(plan.last_host_split().cuda_items, 0u);
  // Pixel rows with a pitch are shared by rows.
  const Request px = Request::pixels(SampleType::u8, 3, 0b111, Binning::per_value(SampleType::u8));
  const Plan pplan(px, Options{}), pref(px, cpu_reference());
  const std::size_t width = 3000, height = 3000, pitch = 3 * width + 8;
  const auto image = random_bytes(pitch * height, 2);
  const Input in = Input::image(image.data(), width, height, pitch);
  EXPECT_EQ(slots_of(pplan, in), slots_of(pref, in));
  EXPECT_EQ(pplan.last_host_split().cpu_items + pplan.last_host_split().cuda_items, width * height);
  // Device memory still goes through Plan::run on an automatic plan.
  DeviceBytes d_x(n), d_out(r.output_slots() * 8), ws(std::max<std::size_t>(plan.workspace_bytes(n), 1));
  LEVELHIST_TEST_CUDA(cudaMemset(ws.get(), 0, ws.size()));
  LEVELHIST_TEST_CUDA(cudaMemcpy(d_x.get(), bytes.data(), n, cudaMemcpyHostToDevice));
  plan.run(Input::array(d_x.get(), n), d_out.get(), false, ws.get(), ws.size());
  std::vector<std::uint64_t> got(r.output_slots());
  LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), d_out.get(), got.size() * 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, slots_of(reference, Input::array(bytes.data(), n)));
  model.reset(cpu_rate, cuda_rate, pinned_rate);
}

TEST(GpuLink, ADeviceListOfOneEqualsTheDeviceAloneAndAllDevicesEqualTheCpu) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const SmallChunksOnEveryDevice setting;
  const Request r = Request::counts(SampleType::u16, Binning::even(333, 0, 65536));
  Options one = on_cuda();
  one.devices = {0};
  Options all = on_cuda();
  for (int d = 0; d < cuda::device_count(); ++d) all.devices.push_back(d);
  const Plan single(r, on_cuda()), listed(r, one), every(r, all), reference(r, cpu_reference());
  EXPECT_EQ(listed.device(), 0);
  for (std::size_t n : sizes_around(2)) {
    const auto bytes = random_bytes(2 * n, n);
    const Input in = Input::array(bytes.data(), n);
    const auto want = slots_of(reference, in);
    EXPECT_EQ(slots_of(single, in), want) << n;
    EXPECT_EQ(slots_of(listed, in), want) << n;
    EXPECT_EQ(slots_of(every, in), want) << n << " items on " << all.devices.size() << " devices";
  }
}

Options on_devices(int count) {
  Options o = on_cuda();
  for (int d = 0; d < count; ++d) o.devices.push_back(d);
  return o;
}

// The device-list sizes the tests run: 1, 2 and all devices (as many as there are).
std::vector<int> list_sizes() {
  std::vector<int> counts{1};
  if (cuda::device_count() >= 2) counts.push_back(2);
  if (cuda::device_count() > 2) counts.push_back(cuda::device_count());
  return counts;
}

// The suite's distributions, the ordinary and the adversarial ones.
std::vector<Dist> every_dist() {
  std::vector<Dist> dists(std::begin(kAllDists), std::end(kAllDists));
  dists.insert(dists.end(), std::begin(kAdversarialDists), std::end(kAdversarialDists));
  return dists;
}

std::vector<double> sums_of(const Plan& plan, const Input& input) {
  std::vector<double> out(plan.request().output_slots(), 0.0);
  plan.fill_slots(out.data(), input, false);
  return out;
}

// Every request kind the host path shares among devices, on lists of 1, 2 and
// all devices: pixels with a pitch, wide bins, weights, deterministic sums.
TEST(GpuLink, DeviceListsCountPixelsWideBinsAndWeightsLikeTheCpu) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const SmallChunksOnEveryDevice setting;
  const std::vector<int> counts = list_sizes();
  // 8-bit RGBA rows with a pitch, three channels counted.
  const Request rgba = Request::pixels(SampleType::u8, 4, 0b0111, Binning::per_value(SampleType::u8));
  const std::size_t width = 1001, height = 1503, pitch = 4 * width + 20;
  const auto image = random_bytes(pitch * height, 31);
  const Input pixels = Input::image(image.data(), width, height, pitch);
  const auto want_pixels = slots_of(Plan(rgba, cpu_reference()), pixels);
  // u32 keys into 2^20 even bins (the bucket-sort strategy's range).
  const Request wide = Request::counts(SampleType::u32, Binning::even(1u << 20, 0, 4294967296.0));
  const auto key_bytes = random_bytes(4 * (5 * kChunk / 4 + 13), 32);
  const Input keys = Input::array(key_bytes.data(), key_bytes.size() / 4);
  const auto want_keys = slots_of(Plan(wide, cpu_reference()), keys);
  // f32 samples with small integer weights (every order of addition gives the
  // same doubles) and with any weights, deterministic (bit-identical everywhere).
  const std::size_t n = 3 * kChunk / 8 + 5;
  std::mt19937_64 rng(33);
  std::vector<float> x(n), small(n), any(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(rng() % 1100) / 1000.0f - 0.05f;
    small[i] = static_cast<float>(static_cast<int>(rng() % 9) - 4);
    any[i] = std::ldexp(static_cast<float>(rng() % 100000) - 50000.0f, -static_cast<int>(rng() % 30));
  }
  const Request weighted = Request::weighted(SampleType::f32, SampleType::f32, Binning::even(1024, 0.0, 1.0));
  Request exact = weighted;
  exact.deterministic = true;
  const auto want_small = sums_of(Plan(weighted, cpu_reference()), Input::array(x.data(), n, small.data()));
  const auto want_exact = sums_of(Plan(exact, cpu_reference()), Input::array(x.data(), n, any.data()));
  for (int count : counts) {
    const Options o = on_devices(count);
    EXPECT_EQ(slots_of(Plan(rgba, o), pixels), want_pixels) << count << " devices, pixels";
    EXPECT_EQ(slots_of(Plan(wide, o), keys), want_keys) << count << " devices, 2^20 bins";
    EXPECT_EQ(sums_of(Plan(weighted, o), Input::array(x.data(), n, small.data())), want_small) << count << " devices";
    const auto got = sums_of(Plan(exact, o), Input::array(x.data(), n, any.data()));
    EXPECT_EQ(std::memcmp(got.data(), want_exact.data(), got.size() * 8), 0) << count << " devices, deterministic";
  }
}


// Plain bytes and wide bins on every distribution, the ordinary and the
// adversarial ones: a list of 1, 2 and all devices counts what one device
// counts, and what the CPU counts. Each call spans several staging chunks, so
// every device of the list gets a share.
TEST(GpuLink, DeviceListsEqualOneDeviceOnEveryDistribution) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const SmallChunksOnEveryDevice setting;
  const std::vector<int> counts = list_sizes();
  const Request bytes = Request::counts(SampleType::u8, Binning::per_value(SampleType::u8));
  const Request wide = Request::counts(SampleType::u16, Binning::even(4096, 0, 65536));
  for (const Request* r : {&bytes, &wide}) {
    const SampleType type = r->type;
    const Plan single(*r, on_cuda()), reference(*r, cpu_reference());
    std::vector<Plan> lists;
    for (int count : counts) lists.emplace_back(*r, on_devices(count));
    const std::uint64_t n = 5 * kChunk / (2 * sample_size(type)) + 7;
    for (Dist d : every_dist()) {
      if (!dist_applies(d, type)) continue;
      const auto data = generate(GenSpec{type, d, n, seed_for("device lists", static_cast<std::uint64_t>(d)),
                                         full_window(type), &r->binning});
      const Input in = Input::array(data.data(), n);
      const auto want = slots_of(reference, in);
      EXPECT_EQ(slots_of(single, in), want) << to_string(d) << ", one device";
      for (std::size_t k = 0; k < lists.size(); ++k)
        EXPECT_EQ(slots_of(lists[k], in), want) << to_string(d) << ", " << counts[k] << " devices, " << n << " samples of "
                                                << (type == SampleType::u8 ? "u8" : "u16");
    }
  }
}

// Pixels, u32 keys into 2^20 bins and f32 weights on every distribution the
// suite generates: lists of 1, 2 and all devices equal the CPU, the
// deterministic sums bit for bit.
TEST(GpuLink, DeviceListsCountPixelsKeysAndWeightsOnEveryDistribution) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const SmallChunksOnEveryDevice setting;
  const std::vector<int> counts = list_sizes();
  const Request rgba = Request::pixels(SampleType::u8, 4, 0b1011, Binning::per_value(SampleType::u8));
  const Request keys = Request::counts(SampleType::u32, Binning::even(1u << 20, 0, 4294967296.0));
  const Binning unit = Binning::even(1024, 0.0, 1.0);
  const Request weighted = Request::weighted(SampleType::f32, SampleType::f32, unit);
  Request exact = weighted;
  exact.deterministic = true;
  const std::size_t width = 777, height = 1201, pitch = 4 * width + 12;  // rows with a gap: ~3.6 MiB
  const std::uint64_t key_count = 5 * kChunk / 16 + 3, n = 3 * kChunk / 8 + 5;
  std::vector<Plan> pixel_plans, key_plans, weighted_plans, exact_plans;
  for (int count : counts) {
    pixel_plans.emplace_back(rgba, on_devices(count));
    key_plans.emplace_back(keys, on_devices(count));
    weighted_plans.emplace_back(weighted, on_devices(count));
    exact_plans.emplace_back(exact, on_devices(count));
  }
  for (Dist d : every_dist()) {
    const std::uint64_t seed = seed_for("device lists, shapes", static_cast<std::uint64_t>(d));
    const std::string what = std::string(to_string(d));
    if (dist_applies(d, SampleType::u8)) {
      const auto image = generate(GenSpec{SampleType::u8, d, pitch * height, seed, full_window(SampleType::u8), nullptr});
      const Input pixels = Input::image(image.data(), width, height, pitch);
      const auto want = slots_of(Plan(rgba, cpu_reference()), pixels);
      for (std::size_t k = 0; k < counts.size(); ++k)
        EXPECT_EQ(slots_of(pixel_plans[k], pixels), want) << what << ", pixels, " << counts[k] << " devices";
    }
    if (dist_applies(d, SampleType::u32)) {
      const auto data = generate(GenSpec{SampleType::u32, d, key_count, seed, full_window(SampleType::u32), &keys.binning});
      const Input in = Input::array(data.data(), key_count);
      const auto want = slots_of(Plan(keys, cpu_reference()), in);
      for (std::size_t k = 0; k < counts.size(); ++k)
        EXPECT_EQ(slots_of(key_plans[k], in), want) << what << ", 2^20 bins, " << counts[k] << " devices";
    }
    // f32 samples of this distribution around [0, 1); small integer weights
    // (every order of addition gives the same doubles) and any weights.
    const auto xs = generate_as<float>(d, n, seed, window_around(unit, SampleType::f32), &unit);
    std::mt19937_64 rng(seed);
    std::vector<float> small(n), any(n);
    for (std::size_t i = 0; i < n; ++i) {
      small[i] = static_cast<float>(static_cast<int>(rng() % 9) - 4);
      any[i] = std::ldexp(static_cast<float>(rng() % 100000) - 50000.0f, -static_cast<int>(rng() % 30));
    }
    const auto want_small = sums_of(Plan(weighted, cpu_reference()), Input::array(xs.data(), n, small.data()));
    const auto want_exact = sums_of(Plan(exact, cpu_reference()), Input::array(xs.data(), n, any.data()));
    for (std::size_t k = 0; k < counts.size(); ++k) {
      EXPECT_EQ(sums_of(weighted_plans[k], Input::array(xs.data(), n, small.data())), want_small)
          << what << ", weights, " << counts[k] << " devices";
      const auto got = sums_of(exact_plans[k], Input::array(xs.data(), n, any.data()));
      EXPECT_EQ(std::memcmp(got.data(), want_exact.data(), got.size() * 8), 0)
          << what << ", deterministic sums, " << counts[k] << " devices";
    }
  }
}

// The bytes of `bytes` through a pipe: a source read in order.
std::uint64_t fill_from_pipe(const Plan& plan, std::vector<std::uint64_t>& out, const std::vector<unsigned char>& bytes) {
  std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not kill the test
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t w = ::write(fds[1], bytes.data() + at, std::min<std::size_t>(bytes.size() - at, 100000));
      if (w <= 0) break;
      at += static_cast<std::size_t>(w);
    }
    ::close(fds[1]);
  });
  std::uint64_t got = 0;
  try {
    FdSource source(fds[0], "a pipe");
    got = plan.fill_slots(out.data(), source, true);
  } catch (...) {
    ::close(fds[0]);
    writer.join();
    throw;
  }
  ::close(fds[0]);
  writer.join();
  return got;
}

TEST(GpuLink, SourcesOnACudaPlanEqualMemory) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  ScopedEnv chunk("LEVELHIST_STAGING_CHUNK_BYTES", std::to_string(kChunk));
  // 8-bit RGBA, three channels counted: what the CUDA pixel strategy takes.
  const Request r = Request::pixels(SampleType::u8, 4, 0b0111, Binning::per_value(SampleType::u8));
  Options all = on_cuda();
  for (int d = 0; d < cuda::device_count(); ++d) all.devices.push_back(d);
  const Plan plan(r, on_cuda()), every(r, all), reference(r, cpu_reference());
  for (std::size_t items : sizes_around(4)) {
    const auto bytes = random_bytes(items * 4, items);
    const auto want = slots_of(reference, Input::image(bytes.data(), items, items ? 1 : 0));
    TempFile file(bytes);
    for (const Plan* p : {&plan, &every}) {
      FileSource source(file.path.string());
      std::vector<std::uint64_t> got(r.output_slots(), 0);
      EXPECT_EQ(p->fill_slots(got.data(), source, true), bytes.size());
      EXPECT_EQ(got, want) << "a file of " << items << " pixels";
    }
    std::vector<std::uint64_t> piped(r.output_slots(), 0);
    EXPECT_EQ(fill_from_pipe(plan, piped, bytes), bytes.size());
    EXPECT_EQ(piped, want) << "a pipe of " << items << " pixels";
  }
}

// A positional source that fails at one offset: a reader's error.
class FailingAt : public Source {
 public:
  FailingAt(std::uint64_t bytes, std::uint64_t fail_at) : bytes_(bytes), fail_at_(fail_at) {}
  std::string name() const override { return "the failing source"; }
  std::size_t read(void* dst, std::size_t bytes) override {
    const std::size_t got = read_at(dst, bytes, pos_);
    pos_ += got;
    return got;
  }
  std::optional<std::uint64_t> remaining() const override { return bytes_ - pos_; }
  bool positional() const override { return positional_; }
  std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset) override {
    if (offset + bytes > fail_at_ && offset <= fail_at_)
      throw Error(ErrorKind::input, "cannot read the failing source", "check the input", ErrorSubject::data);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, bytes_ - std::min(offset, bytes_)));
    std::memset(dst, 7, n);
    return n;
  }
  bool positional_ = true;

 private:
  std::uint64_t bytes_, fail_at_, pos_ = 0;
};

TEST(GpuLink, SourceErrorsAddNothingAndLeaveThePlanUsable) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  ScopedEnv chunk("LEVELHIST_STAGING_CHUNK_BYTES", std::to_string(kChunk));
  const Request r = Request::counts(SampleType::u32, Binning::even(10, 0, 1e10));
  const Plan plan(r, on_cuda()), reference(r, cpu_reference());
  std::vector<std::uint64_t> before(r.output_slots());
  for (std::size_t k = 0; k < before.size(); ++k) before[k] = 1000 + k;
  for (bool positional : {true, false}) {
    FailingAt source(40 * kChunk, 17 * kChunk + 5);
    source.positional_ = positional;
    auto got = before;
    EXPECT_THROW(plan.fill_slots(got.data(), source, true), Error) << positional;
    EXPECT_EQ(got, before) << positional;
  }
  // Data that ends inside a sample: the same message as every backend's.
  const auto bytes = random_bytes(3 * kChunk + 6, 3);
  TempFile file(bytes);
  FileSource cut(file.path.string());
  auto got = before;
  try {
    plan.fill_slots(got.data(), cut, true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("holds " + std::to_string(bytes.size()) + " bytes, not a whole number of 4-byte samples"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(got, before);
  std::vector<std::uint64_t> piped(r.output_slots(), 0);
  EXPECT_THROW(fill_from_pipe(plan, piped, bytes), Error);
  EXPECT_EQ(piped, std::vector<std::uint64_t>(r.output_slots(), 0));
  // The plan still counts.
  const std::size_t n = 3 * kChunk / 4 + 1;
  EXPECT_EQ(slots_of(plan, Input::array(bytes.data(), n)), slots_of(reference, Input::array(bytes.data(), n)));
}

#endif  // LEVELHIST_HAVE_CUDA

}  // namespace
}  // namespace levelhist::test
