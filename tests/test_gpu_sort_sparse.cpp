// Counting sort and sparse histograms through the CUDA backend: the
// device-pointer APIs (cuda_sort.hpp, cuda_sparse.hpp) with one temporary
// storage zeroed once and reused by every call of every type and size (and
// checked to be zero after each, as cuda_sort.hpp promises), outputs at aligned
// and misaligned addresses, and the host paths (sort.hpp, sparse.hpp with
// BackendChoice::cuda). References: std::sort and std::map (sort_test_support.hpp).
//
// Without a GPU every test skips and says why; in a build without CUDA one
// test skips saying so.
#include <gtest/gtest.h>
#if !LEVELHIST_HAVE_CUDA
TEST(GpuSortSparse, NeedsACudaBuild) {
  GTEST_SKIP() << "this build has no CUDA backend (LEVELHIST_CUDA=OFF or no nvcc)";
}
#else
#include "gpu_test_support.hpp"
#include "levelhist/cuda_sort.hpp"
#include "levelhist/cuda_sparse.hpp"
#include "sort_test_support.hpp"

namespace levelhist::test {
namespace {

const Options kCuda{"auto", BackendChoice::cuda, 0};

// Device buffers and one temporary storage for a run of calls.
class DeviceSorter {
 public:
  // Sorts c on the device with the output `out_offset` bytes past a 256-byte
  // boundary; checks against std::sort and that the input is unchanged.
  void check(const SortCase& c, std::size_t out_offset) {
    std::size_t need = 0;
    cuda::counting_sort(nullptr, need, c.type, nullptr, nullptr, c.n());
    if (need > temp_.size()) {
      temp_.resize(need);
      LEVELHIST_TEST_CUDA(cudaMemset(temp_.get(), 0, need));  // zeroed once (cuda_sort.hpp)
    }
    in_.resize(c.bytes.size() + 256);
    out_.resize(c.bytes.size() + 256);
    if (!c.bytes.empty())
      LEVELHIST_TEST_CUDA(cudaMemcpy(in_.get(), c.bytes.data(), c.bytes.size(), cudaMemcpyHostToDevice));
    LEVELHIST_TEST_CUDA(cudaMemset(out_.get(), 0xA5, out_.size()));
    std::size_t have = temp_.size();
    cuda::counting_sort(temp_.get(), have, c.type, in_.get(), out_.get() + out_offset, c.n());
    std::vector<unsigned char> got(c.bytes.size() + 256), in_after(c.bytes.size());
    LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), out_.get(), got.size(), cudaMemcpyDeviceToHost));
    if (!c.bytes.empty())
      LEVELHIST_TEST_CUDA(cudaMemcpy(in_after.data(), in_.get(), in_after.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(sorted_diff(c.type, std_sorted(c.type, c.bytes), got.data() + out_offset), "")
        << c.name << ", output offset " << out_offset;
    EXPECT_EQ(in_after, c.bytes) << c.name << ": the input changed";
    // The storage must be zero again: the next call (another type or size) relies on it.
    std::vector<unsigned char> temp(temp_.size());
    LEVELHIST_TEST_CUDA(cudaMemcpy(temp.data(), temp_.get(), temp.size(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE(std::all_of(temp.begin(), temp.end(), [](unsigned char b) { return b == 0; }))
        << c.name << ": the temporary storage was left dirty";
    const std::size_t after = out_offset + c.bytes.size();
    EXPECT_TRUE(std::all_of(got.begin(), got.begin() + out_offset, [](unsigned char b) { return b == 0xA5; }) &&
                std::all_of(got.begin() + after, got.end(), [](unsigned char b) { return b == 0xA5; }))
        << c.name << ": wrote outside the output";
  }

 private:
  DeviceBytes temp_, in_, out_;
};

TEST(GpuCountingSort, DeviceApiEqualsStdSort) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  DeviceSorter sorter;
  for (SampleType type : kSortTypes)
    for (std::uint64_t n : sort_sizes())
      for (const SortCase& c : sort_cases(type, n))
        for (std::size_t out_offset : {0, 1, 2, 6}) sorter.check(c, out_offset);
}

// Many blocks, chunks that start inside runs, runs that span chunks, every value present.
TEST(GpuCountingSort, DeviceApiLargeInputs) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  DeviceSorter sorter;
  for (SampleType type : kSortTypes)
    for (std::uint64_t n : {std::uint64_t{1} << 20, (std::uint64_t{24} << 20) + 7})
      for (Dist d : {Dist::uniform_full, Dist::distinct2, Dist::one_value, Dist::ramp}) {
        const GenSpec g{type, d, n, seed_for("gpu-sort/large", n), full_window(type)};
        sorter.check(SortCase{describe(g), generate(g), type}, 16);
      }
}

TEST(GpuCountingSort, HostPath) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  for (SampleType type : kSortTypes)
    for (const SortCase& c : sort_cases(type, 100003)) {
      SampleBuffer in(c.bytes, 1);
      std::vector<unsigned char> zeros(c.bytes.size(), 0);
      SampleBuffer out(zeros, 3);
      EXPECT_EQ(counting_sort(c.type, in.data(), out.data(), c.n(), kCuda), Backend::cuda);
      EXPECT_EQ(sorted_diff(c.type, std_sorted(c.type, c.bytes), out.data()), "") << c.name;
    }
  std::uint8_t b = 1;
  EXPECT_EQ(counting_sort(SampleType::u8, &b, &b + 1, 0, Options{}), Backend::cuda);  // auto takes the GPU
}

TEST(GpuCountingSort, Errors) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  std::size_t need = 0;
  cuda::counting_sort(nullptr, need, SampleType::u16, nullptr, nullptr, 1000);
  DeviceBytes temp(need), data(4096);
  std::size_t small = need - 1;
  EXPECT_TRUE(throws_error([&] { cuda::counting_sort(temp.get(), small, SampleType::u16, data.get(), data.get() + 2048, 1000); },
                           ErrorKind::usage, "too small"));
  EXPECT_TRUE(throws_error([&] { cuda::counting_sort(nullptr, need, SampleType::f32, nullptr, nullptr, 1); },
                           ErrorKind::usage, "f32"));
}

// ---- sparse -----------------------------------------------------------------------

// Counts c on the device with one reused temporary storage; returns the pairs.
std::vector<ValueCount> device_pairs(const KeyCase& c, DeviceBytes& temp) {
  const std::size_t size = key_size(c.type);
  std::size_t need = 0;
  cuda::sparse_histogram(nullptr, need, c.type, nullptr, c.n(), nullptr, nullptr, nullptr);
  if (need > temp.size()) temp.resize(need);
  DeviceBytes keys(c.bytes.size() + 8), values(c.bytes.size() + 8), counts(c.n() * 8 + 8), pairs(8);
  if (!c.bytes.empty())
    LEVELHIST_TEST_CUDA(cudaMemcpy(keys.get(), c.bytes.data(), c.bytes.size(), cudaMemcpyHostToDevice));
  std::size_t have = temp.size();
  cuda::sparse_histogram(temp.get(), have, c.type, keys.get(), c.n(), values.get(),
                         reinterpret_cast<std::uint64_t*>(counts.get()), reinterpret_cast<std::uint64_t*>(pairs.get()));
  std::uint64_t p = ~std::uint64_t{0};
  LEVELHIST_TEST_CUDA(cudaMemcpy(&p, pairs.get(), 8, cudaMemcpyDeviceToHost));
  if (p > c.n()) {
    ADD_FAILURE() << c.name << ": " << p << " pairs for " << c.n() << " keys";
    return {};
  }
  std::vector<unsigned char> v(p * size);
  std::vector<std::uint64_t> n(p);
  if (p) {
    LEVELHIST_TEST_CUDA(cudaMemcpy(v.data(), values.get(), v.size(), cudaMemcpyDeviceToHost));
    LEVELHIST_TEST_CUDA(cudaMemcpy(n.data(), counts.get(), p * 8, cudaMemcpyDeviceToHost));
  }
  // The values as map_counts widens them: the pairs of the keys v, each n[i] times.
  std::vector<ValueCount> out = map_counts(c.type, v);
  for (std::size_t i = 0; i < out.size() && i < n.size(); ++i) out[i].count = n[i];
  if (out.size() != p) ADD_FAILURE() << c.name << ": the device's values are not distinct and ascending";
  return out;
}

TEST(GpuSparseHistogram, DeviceApiEqualsMapCounts) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  DeviceBytes temp;
  for (KeyType type : kAllKeyTypes)
    for (std::uint64_t n : {0, 1, 2, 17, 1000, 70001, (1 << 20) + 3})
      for (const KeyCase& c : key_cases(type, n))
        EXPECT_EQ(pairs_diff(map_counts(c.type, c.bytes), device_pairs(c, temp)), "") << c.name;
}

TEST(GpuSparseHistogram, HostPath) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  for (KeyType type : kAllKeyTypes)
    for (const KeyCase& c : key_cases(type, 200003)) {
      SampleBuffer keys(c.bytes, 5);
      Backend ran = Backend::cpu;
      EXPECT_EQ(pairs_diff(map_counts(c.type, c.bytes), sparse_histogram(c.type, keys.data(), c.n(), kCuda, &ran)), "")
          << c.name;
      EXPECT_EQ(ran, Backend::cuda);
    }
}

TEST(GpuSparseHistogram, Errors) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  std::size_t need = 0;
  cuda::sparse_histogram(nullptr, need, KeyType::u64, nullptr, 1000, nullptr, nullptr, nullptr);
  DeviceBytes temp(need), data(16384);
  auto* counts = reinterpret_cast<std::uint64_t*>(data.get() + 8192);
  std::size_t small = need - 1;
  EXPECT_TRUE(throws_error([&] { cuda::sparse_histogram(temp.get(), small, KeyType::u64, data.get(), 1000, data.get() + 4096, counts, counts); },
                           ErrorKind::usage, "too small"));
  EXPECT_TRUE(throws_error([&] { cuda::sparse_histogram(temp.get(), need, KeyType::u64, data.get() + 4, 1000, data.get() + 4096, counts, counts); },
                           ErrorKind::usage, "aligned"));
}

}  // namespace
}  // namespace levelhist::test
#endif  // LEVELHIST_HAVE_CUDA
