// General histograms on the GPU against the CPU reference cpu_serial:
//  * every CUDA strategy that takes a u16/i16/u32/i32/f32/f64 problem, on the
//    target binnings (4096 and 65536 bins of u16, 1024 even f32 bins, 64 uneven
//    edges, 2^20 and 2^24 bins of u32 keys, numpy's rule), every distribution
//    of test_support.hpp (edges, NaN, +-inf, contention), tails and unaligned
//    pointers, slot for slot;
//  * every CUDA strategy with kCapabilityPixels on interleaved pixels: 1-4
//    channels, every subset of active channels, packed and pitched regions of
//    interest, narrow and wide rows, unaligned images;
//  * every CUDA strategy with kCapabilityWeights against cpu_serial's sums in
//    double (to the rounding of a different summation order), and again
//    gpu_weighted_shared with its large calls' tuning on every call;
//  * the host paths (levelhist::histogram_pixels / histogram_weighted with a
//    CUDA strategy), the dispatcher's split of images above 2^31 samples by rows
//    and by whole pixels, the workspace contract (zero on return) and auto's
//    choices for those problem classes.
// Without a GPU every test skips and says why.
#include <gtest/gtest.h>

#include "core/fixed_point.hpp"

#if !LEVELHIST_HAVE_CUDA

TEST(GpuGeneral, NeedsACudaBuild) { GTEST_SKIP() << "this build has no CUDA backend (LEVELHIST_CUDA=OFF or no nvcc)"; }

#else

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/pixels.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"
#include "scoped_support.hpp"
#include "test_support.hpp"

namespace levelhist::test {
namespace {

#define LEVELHIST_GENERAL_SKIP_WITHOUT_GPU()                                                         \
  do {                                                                                               \
    if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA GPU: " << cuda::describe_device();       \
  } while (0)

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA error in test code, ") + what + ": " +
                                                      cudaGetErrorString(status));
}
#define TEST_CUDA(call) check_cuda((call), #call)

// Device memory owned by a test, grown on demand.
class Device {
 public:
  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() {
    if (p_) cudaFree(p_);
  }
  unsigned char* reserve(std::size_t bytes, bool zero = false) {
    if (bytes > size_) {
      if (p_) TEST_CUDA(cudaFree(p_));
      p_ = nullptr;
      TEST_CUDA(cudaMalloc(&p_, std::max<std::size_t>(bytes, 256)));
      size_ = std::max<std::size_t>(bytes, 256);
      if (zero) TEST_CUDA(cudaMemset(p_, 0, size_));
    }
    return static_cast<unsigned char*>(p_);
  }
  unsigned char* get() const { return static_cast<unsigned char*>(p_); }
  std::size_t size() const { return size_; }

 private:
  void* p_ = nullptr;
  std::size_t size_ = 0;
};

// One zeroed-once workspace, checked to be zero after every call. Callers pass
// the byte count they asked get() for, never size(): the order in which a
// call's arguments are evaluated is unspecified, and size() read before get()
// grew the buffer handed the strategies a stale, too-small size.
class Workspace {
 public:
  void* get(std::size_t bytes) {
    if (bytes > mem_.size()) {
      TEST_CUDA(cudaDeviceSynchronize());
      mem_.reserve(std::max(bytes, mem_.size() * 2), /*zero=*/true);
    }
    return mem_.get();
  }
  std::size_t size() const { return mem_.size(); }
  // Empty when the first `used` bytes are zero, else what is not.
  std::string dirty(std::size_t used) {
    std::vector<unsigned char> host(used);
    if (used) TEST_CUDA(cudaMemcpy(host.data(), mem_.get(), used, cudaMemcpyDeviceToHost));
    auto it = std::find_if(host.begin(), host.end(), [](unsigned char b) { return b != 0; });
    if (it == host.end()) return {};
    TEST_CUDA(cudaMemset(mem_.get(), 0, mem_.size()));  // later cases get the zero workspace they are owed
    return "workspace byte " + std::to_string(it - host.begin()) + " of " + std::to_string(used) +
           " is not zero after the call";
  }

 private:
  Device mem_;
};

std::vector<const Strategy*> cuda_strategies_with(unsigned capability) {
  std::vector<const Strategy*> out;
  for (const Strategy* s : all_strategies())
    if (s->backend == Backend::cuda && (capability == 0 || (s->capabilities & capability))) out.push_back(s);
  return out;
}

template <class T>
std::vector<T> download(const void* d, std::size_t count) {
  std::vector<T> host(count);
  if (count) TEST_CUDA(cudaMemcpy(host.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// At most this many failures are reported per strategy and test.
class FailureBudget {
 public:
  bool report(const Strategy& s, const std::string& message) {
    int& n = count_[s.name];
    if (++n <= 4) ADD_FAILURE() << message;
    if (n == 5) ADD_FAILURE() << s.name << " failed 5 times; its remaining failures here are not shown";
    return false;
  }

 private:
  std::map<std::string, int> count_;
};

// ---- plain problems of the wider types ---------------------------------------------

std::vector<NamedBinning> issue_binnings(SampleType type) {
  std::vector<NamedBinning> out;
  switch (type) {
    case SampleType::u16:
      out.push_back({"u16_4096_of_12bit", Binning::even(4096, 0, 4096)});
      out.push_back({"u16_per_value", Binning::per_value(SampleType::u16)});
      out.push_back({"u16_4096_full", Binning::even(4096, 0, 65536)});
      out.push_back({"u16_1000_uneven_width", Binning::even(1000, 0.5, 60000.3)});
      out.push_back({"u16_edges", Binning::explicit_edges({-3, 0, 10, 10.5, 300, 4096, 60000, 65535})});
      out.push_back({"u16_inclusive", Binning::even(64, 1000, 1064, true)});
      break;
    case SampleType::i16:
      out.push_back({"i16_per_value", Binning::per_value(SampleType::i16)});
      out.push_back({"i16_even", Binning::even(300, -1000, 2000)});
      break;
    case SampleType::f32: {
      out.push_back({"f32_1024_unit", Binning::even(1024, 0.0, 1.0)});
      out.push_back({"f32_1000_offset", Binning::even(1000, -0.3, 0.7)});
      std::vector<double> e(65);
      for (int i = 0; i <= 64; ++i) e[i] = 0.1 + 0.9 * (i / 64.0) * (i / 64.0);
      out.push_back({"f32_64_uneven_edges", Binning::explicit_edges(e)});
      out.push_back({"f32_64_uneven_edges_inclusive", Binning::explicit_edges(e, true)});
      out.push_back({"f32_10_inclusive", Binning::even(10, 0.0, 1.0, true)});
      out.push_back({"f32_65536", Binning::even(65536, -1.0, 1.0)});
      // numpy's float32 edges (EdgeRounding): the Python package's problems.
      out.push_back({"f32_1024_float32_edges", Binning::even(1024, 0.0, 1.0, true, EdgeRounding::f32)});
      out.push_back({"f32_1000_float32_edges_offset", Binning::even(1000, -0.3, 0.7, true, EdgeRounding::f32)});
      out.push_back({"f32_1024_edges_in_float32", Binning::even(1024, 0.0012345, 0.987, true, EdgeRounding::f32_arithmetic)});
      std::vector<double> many;
      for (int i = 0; i <= 5000; ++i) many.push_back(i * 0.001 - 2.0);
      out.push_back({"f32_5000_edges", Binning::explicit_edges(many)});
      break;
    }
    case SampleType::u32:
      out.push_back({"u32_2e20", Binning::even(std::uint64_t{1} << 20, 0, 4294967296.0)});
      out.push_back({"u32_2e24", Binning::even(std::uint64_t{1} << 24, 0, 4294967296.0)});
      out.push_back({"u32_4096", Binning::even(4096, 0, 4294967296.0)});
      out.push_back({"u32_1000_arbitrary", Binning::even(1000, 12.5, 1e9)});
      out.push_back({"u32_edges", Binning::explicit_edges({0, 10, 1000, 1e6, 4e9})});
      out.push_back({"u32_2e18_offset_inclusive", Binning::even(std::uint64_t{1} << 18, 1000, 1000 + 1024.0 * (1 << 18), true)});
      break;
    case SampleType::i32:
      out.push_back({"i32_2e20_signed", Binning::even(std::uint64_t{1} << 20, -2147483648.0, 2147483648.0)});
      out.push_back({"i32_4096", Binning::even(4096, -2048, 2048)});
      break;
    case SampleType::f64:
      out.push_back({"f64_1024_unit", Binning::even(1024, 0.0, 1.0)});
      out.push_back({"f64_edges", Binning::explicit_edges({-1e300, -1, 0, 1e-300, 0.5, 1e300})});
      break;
    default:
      break;
  }
  return out;
}

// Samples: a window around the binning for integers (the keys' whole range for
// huge bin counts), edges and specials for floats.
GenSpec spec(SampleType type, const Binning& b, Dist dist, std::uint64_t n, const std::string& tag) {
  Window w = window_around(b, type);
  if (is_integer(type) && b.bins() > 65536) w = full_window(type);
  return GenSpec{type, dist, n, seed_for(tag, n), w, &b};
}

struct PlainRunner {
  Workspace workspace;
  Device samples, slots;
  FailureBudget failures;

  // Checks s on the first n samples at host `data` uploaded `offset` bytes past an aligned address.
  void check(const Strategy& s, SampleType type, const std::vector<unsigned char>& data, std::uint64_t n,
             const Binning& b, std::size_t offset, const std::vector<std::uint64_t>& expected, bool accumulate,
             const std::string& context) {
    const Problem problem{type, &b, n};
    const std::string where = std::string(s.name) + " on " + std::to_string(n) + " " + std::string(to_string(type)) +
                              " samples, " + b.describe() + ", offset " + std::to_string(offset) + "; " + context;
    unsigned char* d = samples.reserve(offset + data.size() + 64) + offset;
    if (!data.empty()) TEST_CUDA(cudaMemcpy(d, data.data(), n * sample_size(type), cudaMemcpyHostToDevice));
    std::vector<std::uint64_t> initial(b.slots());
    for (std::size_t i = 0; i < initial.size(); ++i) initial[i] = accumulate ? (std::uint64_t{1} << 33) + i : ~i;
    auto* d_slots = reinterpret_cast<std::uint64_t*>(slots.reserve(b.slots() * 8));
    TEST_CUDA(cudaMemcpy(d_slots, initial.data(), b.slots() * 8, cudaMemcpyHostToDevice));
    try {
      const std::size_t bytes = cuda::workspace_bytes(problem, &s);
      cuda::histogram(workspace.get(bytes), bytes, d, n, type, b, d_slots, accumulate, nullptr, &s);
      TEST_CUDA(cudaDeviceSynchronize());
      std::vector<std::uint64_t> got = download<std::uint64_t>(d_slots, b.slots());
      std::vector<std::uint64_t> want = expected;
      if (accumulate)
        for (std::size_t i = 0; i < want.size(); ++i) want[i] += initial[i];
      if (auto same = slots_equal(want, got, b); !same) failures.report(s, where + ": " + same.message());
      if (std::string dirt = workspace.dirty(bytes); !dirt.empty()) failures.report(s, where + ": " + dirt);
    } catch (const Error& e) {
      if (cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess)
        throw std::runtime_error(where + ": " + e.what() + " (the CUDA context is lost: " + cudaGetErrorString(sticky) + ")");
      failures.report(s, where + ": threw " + e.what());
    }
  }
};

TEST(GpuGeneral, WiderTypesAgreeWithCpuSerial) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  PlainRunner runner;
  const auto strategies = cuda_strategies_with(0);
  for (SampleType type : {SampleType::u16, SampleType::i16, SampleType::f32, SampleType::u32, SampleType::i32,
                          SampleType::f64}) {
    for (const NamedBinning& nb : issue_binnings(type)) {
      for (Dist dist : dists_for(type)) {
        const std::uint64_t n = dist == Dist::uniform_window || dist == Dist::specials ? 300007 : 40003;
        const GenSpec g = spec(type, nb.binning, dist, n, "general " + nb.name);
        const auto data = generate(g);
        const auto reference = reference_slots(type, data.data(), n, nb.binning);
        for (const Strategy* s : strategies) {
          if (!strategy_accepts(*s, Problem{type, &nb.binning, n})) continue;
          runner.check(*s, type, data, n, nb.binning, 0, reference, false, nb.name + ", " + describe(g));
        }
      }
    }
  }
}

TEST(GpuGeneral, TailsBoundariesUnalignedAndAccumulate) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  PlainRunner runner;
  const auto strategies = cuda_strategies_with(0);
  for (SampleType type : {SampleType::u16, SampleType::i16, SampleType::f32, SampleType::u32, SampleType::i32,
                          SampleType::f64}) {
    for (const NamedBinning& nb : issue_binnings(type)) {
      std::vector<const Strategy*> runners;
      for (const Strategy* s : strategies)
        if (strategy_accepts(*s, Problem{type, &nb.binning, std::uint64_t{1} << 22})) runners.push_back(s);
      if (runners.empty()) continue;
      // Sizes where tails go wrong, and every boundary a strategy names (capped).
      std::vector<std::uint64_t> sizes = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 4095, 4097, 65537};
      for (const Strategy* s : runners)
        if (s->boundary_sizes)
          for (std::uint64_t b : s->boundary_sizes(Problem{type, &nb.binning, std::uint64_t{1} << 22}))
            for (std::uint64_t d : {b - 1, b, b + 1})
              if (b > 0 && d <= (std::uint64_t{1} << 22) + 1) sizes.push_back(d);
      std::sort(sizes.begin(), sizes.end());
      sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
      const GenSpec g = spec(type, nb.binning, is_integer(type) ? Dist::uniform_window : Dist::specials, sizes.back(),
                             "general tails " + nb.name);
      const auto data = generate(g);
      for (std::uint64_t n : sizes) {
        const auto reference = reference_slots(type, data.data(), n, nb.binning);
        for (const Strategy* s : runners) {
          if (!strategy_accepts(*s, Problem{type, &nb.binning, n})) continue;
          runner.check(*s, type, data, n, nb.binning, 0, reference, false, nb.name + ", prefix of " + describe(g));
          if (n == 4097 || n == 65537) {
            runner.check(*s, type, data, n, nb.binning, 0, reference, true, nb.name + ", accumulate");
            for (std::size_t offset : {1, 2, 3, 6, 9, 15})
              runner.check(*s, type, data, n, nb.binning, offset, reference, false, nb.name + ", unaligned");
          }
        }
      }
    }
  }
}

// gpu_raw_values (the lab's) counts 16-bit samples by raw value in 16-bit shared
// counters, moved to the output when a half reaches 2^14 (at the barrier after
// each chunk of 3 x 2^14 samples), then each block's halves summed as floats
// and mapped to their slots by a second kernel: inputs whose halves pass the
// limit in every chunk (a constant: one run a thread; two values of one word
// in turn; a value every 16th sample beside noise; one rare value), inputs
// whose warps crowd onto few words (ten labels in random order, 8 values every
// lane sees alike, an opaque RGBA image, crowded chunks between noisy ones),
// with the drain list and the full scan (list of 1), with the float end and
// each block's 64-bit atomics; 16 MiB + 5 samples, so every block takes
// several chunks; at 16-byte boundaries, after a lead of 7, 5 or 1 samples,
// and at an odd address (read bytewise); accumulating; u16 one bin a value,
// u16 in 4096 even bins over part of the range (flows on both sides), and i16.
TEST(GpuGeneral, RawValuesDrainExactlyAtAnyAlignment) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  const Strategy* s = find_strategy("gpu_raw_values");
  ASSERT_NE(s, nullptr);
  PlainRunner runner;
  const std::uint64_t n = (std::uint64_t{16} << 20) + 5;
  const Binning per_value = Binning::per_value(SampleType::u16), narrow = Binning::even(4096, 30000, 50000);
  std::mt19937_64 rng(57);
  struct Input {
    std::string name;
    std::vector<unsigned char> bytes;
    std::vector<std::uint64_t> reference;
  };
  std::vector<Input> inputs;
  auto add_input = [&](const std::string& name, auto value_of) {
    std::vector<unsigned char> bytes(n * 2);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint16_t v = value_of(i);
      std::memcpy(&bytes[i * 2], &v, 2);
    }
    std::vector<std::uint64_t> reference = reference_slots(SampleType::u16, bytes.data(), n, per_value);
    inputs.push_back({name, std::move(bytes), std::move(reference)});
  };
  add_input("constant", [](std::uint64_t) { return std::uint16_t{40000}; });
  add_input("two values of one word in turn",
            [](std::uint64_t i) { return static_cast<std::uint16_t>(40000 + (i * 7 / 3) % 2); });
  add_input("a value every 16th sample, noise between",
            [&](std::uint64_t i) { return i % 16 == 0 ? std::uint16_t{200} : static_cast<std::uint16_t>(rng()); });
  add_input("a rare value beside noise", [&](std::uint64_t i) {
    return i % 100003 == 0 ? std::uint16_t{65535} : static_cast<std::uint16_t>(rng() % 65535);
  });
  add_input("ten labels in random order", [&](std::uint64_t i) { return static_cast<std::uint16_t>(rng() % 10 + (i % 3 == 0)); });
  add_input("8 values every lane sees alike", [](std::uint64_t i) { return static_cast<std::uint16_t>(1000 + (i % 8) * 4099); });
  add_input("an opaque RGBA image", [&](std::uint64_t i) {
    return i % 4 == 3 ? std::uint16_t{65535} : static_cast<std::uint16_t>(rng());
  });
  add_input("crowded chunks between noisy ones", [&](std::uint64_t i) {
    return (i / 40000) % 3 == 1 ? static_cast<std::uint16_t>(rng()) : static_cast<std::uint16_t>(rng() % 3 + 7);
  });
  for (const char* end : {"1", "0"}) {
    ScopedEnv float_end("LEVELHIST_RAW_VALUES_FLOAT_END", end);
    for (const char* list : {"", "1"}) {
      ScopedEnv drain("LEVELHIST_RAW_VALUES_DRAIN_LIST", list);
      const std::string how = std::string(", float end ") + end + ", drain list " + (*list ? list : "default");
      for (const Input& input : inputs)
        runner.check(*s, SampleType::u16, input.bytes, n, per_value, 0, input.reference, false, input.name + how);
    }
  }
  // Leads and the bytewise path, accumulating, other binnings and i16 (the defaults).
  for (const Input* input : {&inputs[2], &inputs[4]}) {
    for (std::size_t offset : {2, 6, 14, 1})
      runner.check(*s, SampleType::u16, input->bytes, n, per_value, offset, input->reference, false,
                   input->name + ", lead or bytewise");
    runner.check(*s, SampleType::u16, input->bytes, n, per_value, 0, input->reference, true, input->name + ", accumulate");
    runner.check(*s, SampleType::u16, input->bytes, n, narrow, 0,
                 reference_slots(SampleType::u16, input->bytes.data(), n, narrow), false,
                 input->name + ", 4096 even bins over [30000, 50000)");
  }
  const Binning i16 = Binning::per_value(SampleType::i16);
  for (const Input& input : inputs)
    runner.check(*s, SampleType::i16, input.bytes, n, i16, 6, reference_slots(SampleType::i16, input.bytes.data(), n, i16),
                 false, input.name + ", i16");
}

// gpu_partition_count counts an input a chunk at a time and groups every tile's
// keys by partition: chunks of one tile and of three (so that a chunk ends in
// the middle of a partition's runs, and the last chunk is short), partitions
// of 2^12 to 2^15 bins, bounds whose lower end is a key of the type and one
// that is not, on keys spread over every bin, piled on one, on a few, on a ramp
// (every tile one or two partitions) and on the range's edges; unaligned and
// accumulating calls too.
TEST(GpuGeneral, PartitionCountChunksPartitionsAndRanks) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  const Strategy* s = find_strategy("gpu_partition_count");
  ASSERT_NE(s, nullptr);
  PlainRunner runner;
  const std::uint64_t n = 5 * 8192 + 77;
  struct Case {
    SampleType type;
    NamedBinning nb;
  };
  const std::vector<Case> cases = {
      {SampleType::u32, {"u32_2e20", Binning::even(std::uint64_t{1} << 20, 0, 4294967296.0)}},
      {SampleType::u32, {"u32_2e24", Binning::even(std::uint64_t{1} << 24, 0, 4294967296.0)}},
      {SampleType::u32, {"u32_2e18_offset_inclusive", Binning::even(std::uint64_t{1} << 18, 1000, 1000 + 1024.0 * (1 << 18), true)}},
      {SampleType::i32, {"i32_2e20_signed", Binning::even(std::uint64_t{1} << 20, -2147483648.0, 2147483648.0)}},
      {SampleType::i32, {"i32_70000_narrow", Binning::even(70000, -35000, 35000)}},
      // a lower bound below every u32 key: the 64-bit map (the others take the 32-bit one)
      {SampleType::u32, {"u32_2e20_from_minus_2e31", Binning::even(std::uint64_t{1} << 20, -2147483648.0, 2147483648.0)}}};
  // Records written by groups of 8 tiles (6 tiles a call: every group partly
  // filled; chunks of 3 then 2 tiles: the second chunk's zeros over the
  // first's records) and of 3 (the word-by-word writer); "": the policy (a
  // tile at a time at these sizes).
  for (const char* group : {"8", "3", ""})
  for (const char* chunk : {"8192", "24576", ""}) {
    for (const char* low : {"12", "15", ""}) {
      ScopedEnv chunk_knob("LEVELHIST_PARTITION_CHUNK_KEYS", chunk), low_knob("LEVELHIST_PARTITION_LOW_BITS", low),
          group_knob("LEVELHIST_PARTITION_RECORD_GROUP", group);
      const std::string knobs = std::string("chunk ") + chunk + ", low bits " + low + ", record group " + group;
      for (const Case& c : cases) {
        if (!strategy_accepts(*s, Problem{c.type, &c.nb.binning, n})) {
          ADD_FAILURE() << "gpu_partition_count declines " << c.nb.name << ", " << knobs;
          continue;
        }
        for (Dist dist : {Dist::uniform_window, Dist::one_value, Dist::distinct4, Dist::ramp, Dist::on_edges}) {
          GenSpec g = spec(c.type, c.nb.binning, dist, n, "partition " + c.nb.name);
          if (c.nb.binning.bins() < 65536 * 4) g.window = window_around(c.nb.binning, c.type);  // most keys in range
          const auto data = generate(g);
          const auto reference = reference_slots(c.type, data.data(), n, c.nb.binning);
          const std::string where = c.nb.name + ", " + describe(g) + ", " + knobs;
          runner.check(*s, c.type, data, n, c.nb.binning, 0, reference, false, where);
          if (dist == Dist::uniform_window) {
            runner.check(*s, c.type, data, n, c.nb.binning, 0, reference, true, where + ", accumulate");
            runner.check(*s, c.type, data, n, c.nb.binning, 3, reference, false, where + ", unaligned");
          }
        }
      }
    }
  }
}

// Counts u32 keys with gpu_partition_count under each value of a study knob,
// against the CPU: every binning, size and distribution, the data and its
// reference made once for all the knob's values.
void check_partition_count_under_knob(const char* knob, std::initializer_list<const char*> values,
                                      const std::vector<NamedBinning>& cases, std::initializer_list<std::uint64_t> sizes,
                                      std::initializer_list<Dist> dists) {
  const Strategy* s = find_strategy("gpu_partition_count");
  ASSERT_NE(s, nullptr);
  PlainRunner runner;
  for (const NamedBinning& c : cases) {
    for (const std::uint64_t n : sizes) {
      for (Dist dist : dists) {
        const GenSpec g = spec(SampleType::u32, c.binning, dist, n, std::string(knob) + " " + c.name);
        const auto data = generate(g);
        const auto reference = reference_slots(SampleType::u32, data.data(), n, c.binning);
        for (const char* value : values) {
          ScopedEnv knob_value(knob, value);
          runner.check(*s, SampleType::u32, data, n, c.binning, 0, reference, false,
                       c.name + ", " + describe(g) + ", " + knob + "=" + value);
        }
      }
    }
  }
}

// Record groups whose size does not divide 8: 8 tiles in groups of 3, 5 or
// 7 make 9, 10 or 14 record rows, more than whole groups of 8 would (the
// workspace is sized for any group up to 8).
TEST(GpuGeneral, PartitionCountRecordGroupsOfAnySize) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  check_partition_count_under_knob("LEVELHIST_PARTITION_RECORD_GROUP", {"3", "5", "7"},
                                   {{"u32_2e20", Binning::even(std::uint64_t{1} << 20, 0, 4294967296.0)}},
                                   {std::uint64_t{8} * 8192, std::uint64_t{15} * 8192 + 1},
                                   {Dist::uniform_window, Dist::one_value});
}

// Pass 3's payload loads in flight (LEVELHIST_PARTITION_AHEAD 1, 2, 4; the
// policy takes 1 for few partitions, 4 for many), for the walk (2^20 bins)
// and the lookup (2^24), batches whose windows end inside a group of Ahead.
TEST(GpuGeneral, PartitionCountWindowsAhead) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  check_partition_count_under_knob("LEVELHIST_PARTITION_AHEAD", {"1", "2", "4"},
                                   {{"u32_2e20", Binning::even(std::uint64_t{1} << 20, 0, 4294967296.0)},
                                    {"u32_2e24", Binning::even(std::uint64_t{1} << 24, 0, 4294967296.0)}},
                                   {std::uint64_t{5} * 8192 + 77, std::uint64_t{1} << 20},
                                   {Dist::uniform_window, Dist::one_value, Dist::distinct4, Dist::on_edges});
}

// Runs of equal samples: in the shared strategies, even bins remember the
// last sample a thread found next to an edge and do not map it again. Runs of
// 1 to 40 of values on an edge, one ulp either side, -0 and +0 (one bin: they
// compare equal), NaN (never equal to itself), the range's ends and outside
// it, so that a thread meets a value equal to its last one, a neighbour of it,
// and zeros of both signs in turn.
template <class T>
std::vector<unsigned char> runs_of(const std::vector<T>& values, std::uint64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> x;
  while (x.size() < n) {
    const T v = values[rng() % values.size()];
    for (std::uint32_t k = 1 + rng() % 40; k > 0 && x.size() < n; --k) x.push_back(v);
  }
  std::vector<unsigned char> bytes(n * sizeof(T));
  std::memcpy(bytes.data(), x.data(), bytes.size());
  return bytes;
}

TEST(GpuGeneral, RunsOfEqualSamplesOnEdges) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  PlainRunner runner;
  const auto strategies = cuda_strategies_with(0);
  const std::uint64_t n = 1000003;
  auto check_all = [&](SampleType type, const Binning& b, const std::vector<unsigned char>& data, const std::string& what) {
    const auto reference = reference_slots(type, data.data(), n, b);
    for (const Strategy* s : strategies)
      if (strategy_accepts(*s, Problem{type, &b, n})) runner.check(*s, type, data, n, b, 0, reference, false, what);
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Binning& b : {Binning::even(1024, 0.0, 1.0), Binning::even(1000, -0.3, 0.7),
                           Binning::even(1000, -0.3, 0.7, true, EdgeRounding::f32)}) {
    const float edge = static_cast<float>(b.edge(300)), lo = static_cast<float>(b.lower()), hi = static_cast<float>(b.upper());
    const std::vector<float> f = {0.5f, edge, std::nextafter(edge, 0.f), std::nextafter(edge, 2.f), 0.0f, -0.0f, nan,
                                  lo, hi, std::nextafter(hi, 0.f), -5.0f};
    check_all(SampleType::f32, b, runs_of(f, n, 31), "f32 runs, " + b.describe());
    std::vector<double> d(f.begin(), f.end());
    d.push_back(b.edge(700));
    check_all(SampleType::f64, b, runs_of(d, n, 32), "f64 runs, " + b.describe());
  }
  const Binning ints = Binning::even(1000, -500, 2500);  // even bins 3 wide: the even map for integers
  check_all(SampleType::i32, ints, runs_of(std::vector<std::int32_t>{-500, -499, 0, 1, 2, 3, 2499, 2500, -501, 7}, n, 33),
            "i32 runs");
  check_all(SampleType::u16, ints, runs_of(std::vector<std::uint16_t>{0, 1, 2, 3, 2499, 2500, 7, 65535}, n, 34), "u16 runs");
}

// ---- interleaved pixels -----------------------------------------------------------

struct ImageCase {
  std::uint64_t width, height;
  std::uint64_t pad;     // extra bytes per row of the parent image (0: packed)
  std::uint64_t x0, y0;  // the region's first pixel in the parent
  std::size_t offset;    // the parent image's misalignment in bytes
};

TEST(GpuGeneral, PixelsEveryChannelSubsetAndLayout) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies_with(kCapabilityPixels);
  ASSERT_FALSE(strategies.empty()) << "no CUDA strategy has kCapabilityPixels";
  FailureBudget failures;
  Workspace workspace;
  Device image, slots;
  const std::vector<ImageCase> cases = {
      {1, 1, 0, 0, 0, 0},     {3, 5, 0, 0, 0, 1},      {17, 33, 7, 2, 3, 3},   {1000, 3, 0, 0, 0, 0},
      {640, 48, 13, 5, 1, 5}, {16384, 3, 16, 1, 1, 2}, {70000, 2, 0, 3, 0, 7}, {257, 260, 64, 0, 2, 0}};
  for (SampleType type : {SampleType::u8, SampleType::i8}) {
    const std::vector<NamedBinning> binnings = {
        {"per_value", Binning::per_value(type)},
        {"even7", type == SampleType::u8 ? Binning::even(7, 10.5, 200) : Binning::even(7, -100.5, 90)},
        {"edges_inclusive", Binning::explicit_edges({-50, 0, 3, 100, 250}, true)}};
    for (unsigned channels = 1; channels <= 4; ++channels) {
      for (unsigned active = 1; active < (1u << channels); ++active) {
        for (const ImageCase& c : cases) {
          if (c.width * c.height > 200000 && active != (1u << channels) - 1 && active != 1) continue;  // keep it short
          const NamedBinning& nb = binnings[(channels + active + c.width) % binnings.size()];
          const std::uint64_t pixel = channels;
          const bool packed = c.pad == 0 && c.x0 == 0;  // the region is whole rows of the parent
          const std::uint64_t parent_width = packed ? c.width : c.width + c.x0 + 1;
          const std::uint64_t pitch = parent_width * pixel + c.pad;
          const std::uint64_t parent_rows = c.height + c.y0;
          const std::uint64_t bytes = pitch * parent_rows;
          const GenSpec g{type, (c.width + active) % 3 == 0 ? Dist::distinct4 : Dist::uniform_full, bytes,
                          seed_for("pixels", channels * 100 + active + c.width), full_window(type), &nb.binning};
          const auto parent = generate(g);
          const unsigned char* roi_host = parent.data() + c.y0 * pitch + c.x0 * pixel;
          const PixelLayout layout{channels, active, c.width, c.height, packed ? 0 : pitch};
          const std::vector<Histogram> expected = histogram_pixels(type, roi_host, layout, nb.binning,
                                                                   Options{"cpu_serial", BackendChoice::cpu, 1});
          unsigned char* d_parent = image.reserve(bytes + c.offset + 64) + c.offset;
          TEST_CUDA(cudaMemcpy(d_parent, parent.data(), bytes, cudaMemcpyHostToDevice));
          const unsigned char* d_roi = d_parent + c.y0 * pitch + c.x0 * pixel;
          const std::uint64_t S = nb.binning.slots(), k = levelhist::detail::active_count(layout);
          auto* d_slots = reinterpret_cast<std::uint64_t*>(slots.reserve(S * k * 8));
          for (const Strategy* s : strategies) {
            const std::string where = std::string(s->name) + ": " + std::to_string(channels) + " channels, active mask " +
                                      std::to_string(active) + ", " + std::to_string(c.width) + " x " +
                                      std::to_string(c.height) + " region at (" + std::to_string(c.x0) + ", " +
                                      std::to_string(c.y0) + "), pitch " + std::to_string(layout.row_pitch) +
                                      ", image offset " + std::to_string(c.offset) + ", " + nb.binning.describe() +
                                      ", " + describe(g);
            if (!strategy_accepts(*s, Problem{type, &nb.binning, c.width * c.height * channels, layout})) continue;
            try {
              const std::size_t ws = cuda::workspace_bytes_pixels(type, layout, nb.binning, s);
              for (bool accumulate : {false, true}) {
                std::vector<std::uint64_t> initial(S * k);
                for (std::size_t i = 0; i < initial.size(); ++i) initial[i] = accumulate ? 1000 + i : ~i;
                TEST_CUDA(cudaMemcpy(d_slots, initial.data(), initial.size() * 8, cudaMemcpyHostToDevice));
                cuda::histogram_pixels(workspace.get(ws), ws, d_roi, type, layout, nb.binning, d_slots,
                                       accumulate, nullptr, s);
                TEST_CUDA(cudaDeviceSynchronize());
                const auto got = download<std::uint64_t>(d_slots, S * k);
                for (std::uint64_t h = 0; h < k; ++h) {
                  std::vector<std::uint64_t> want(expected[h].slots().begin(), expected[h].slots().end());
                  if (accumulate)
                    for (std::size_t i = 0; i < S; ++i) want[i] += initial[h * S + i];
                  const std::vector<std::uint64_t> mine(got.begin() + h * S, got.begin() + (h + 1) * S);
                  if (auto same = slots_equal(want, mine, nb.binning); !same)
                    failures.report(*s, where + ", histogram " + std::to_string(h) + (accumulate ? ", accumulate" : "") +
                                            ": " + same.message());
                }
                if (std::string dirt = workspace.dirty(ws); !dirt.empty()) failures.report(*s, where + ": " + dirt);
              }
            } catch (const Error& e) {
              if (cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess)
                throw std::runtime_error(where + ": " + e.what() + " (context lost: " + cudaGetErrorString(sticky) + ")");
              failures.report(*s, where + ": threw " + e.what());
            }
          }
        }
      }
    }
  }
}

// ---- weighted --------------------------------------------------------------------------

// Sums equal up to the rounding of another summation order: |got - want| <=
// 2 n 2^-53 sum|w| per slot (n: samples), plus `rounding`, the rounding of
// the weights themselves (fixed-point sums), NaN where NaN.
::testing::AssertionResult sums_close(const std::vector<double>& want, const std::vector<double>& got,
                                      const std::vector<double>& abs_sums, std::uint64_t n, const Binning& b,
                                      double rounding = 0.0) {
  std::uint64_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const bool ok = std::isnan(want[i]) ? std::isnan(got[i])
                                        : std::fabs(got[i] - want[i]) <=
                                              2.0 * static_cast<double>(n + 1) * 0x1p-53 * abs_sums[i] + rounding;
    if (!ok && bad++ == 0)
      first = slot_name(b, i) + ": expected " + format_double(want[i]) + ", got " + format_double(got[i]);
  }
  if (!bad) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << want.size() << " sums differ, first " << first;
}

template <class W>
std::vector<unsigned char> weights_for(std::uint64_t n, std::uint64_t seed, bool with_nan) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 4.0);
  std::vector<W> w(n);
  for (std::uint64_t i = 0; i < n; ++i) w[i] = static_cast<W>(u(rng));
  if (with_nan && n > 10) w[n / 2] = std::numeric_limits<W>::quiet_NaN();
  std::vector<unsigned char> bytes(n * sizeof(W));
  if (n) std::memcpy(bytes.data(), w.data(), bytes.size());
  return bytes;
}

// |w| of each weight of type wt (f32 or f64), as bytes: the tolerance's sums.
std::vector<unsigned char> abs_weights(const std::vector<unsigned char>& ws, SampleType wt) {
  std::vector<unsigned char> abs_ws(ws.size());
  auto each = [&](auto v) {
    for (std::size_t at = 0; at + sizeof(v) <= ws.size(); at += sizeof(v)) {
      std::memcpy(&v, ws.data() + at, sizeof(v));
      v = std::fabs(v);
      std::memcpy(abs_ws.data() + at, &v, sizeof(v));
    }
  };
  if (wt == SampleType::f32) each(0.0f);
  else each(0.0);
  return abs_ws;
}

// Every strategy of `strategies` on the weighted cases, against cpu_serial's
// sums (to the rounding of another order of addition).
void check_weighted_against_cpu_serial(const std::vector<const Strategy*>& strategies) {
  FailureBudget failures;
  Workspace workspace;
  Device samples, weights, sums;
  std::vector<double> edges(65);
  for (int i = 0; i <= 64; ++i) edges[i] = 0.1 + 0.9 * (i / 64.0) * (i / 64.0);
  struct Case {
    SampleType type;
    Binning binning;
  };
  const std::vector<Case> cases = {{SampleType::f32, Binning::even(1024, 0.0, 1.0)},
                                   {SampleType::f32, Binning::explicit_edges(edges, true)},
                                   {SampleType::f32, Binning::even(10, 0.25, 0.75, true)},
                                   {SampleType::f64, Binning::even(1000, -0.3, 0.7)},
                                   {SampleType::u16, Binning::even(4096, 0, 65536)},
                                   {SampleType::i32, Binning::even(2048, -1024, 1024)},
                                   {SampleType::u8, Binning::per_value(SampleType::u8)},
                                   {SampleType::u32, Binning::explicit_edges({0, 7, 100, 1e9})}};
  for (const Case& c : cases) {
    for (SampleType wt : {SampleType::f32, SampleType::f64}) {
      for (Dist dist : {is_integer(c.type) ? Dist::uniform_window : Dist::specials, Dist::zeros, Dist::one_value,
                        Dist::on_edges}) {
        for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{31}, std::uint64_t{33}, std::uint64_t{4097},
                                (std::uint64_t{1} << 20) + 5}) {
          const GenSpec g = spec(c.type, c.binning, dist, n, "weighted");
          const auto xs = generate(g);
          const bool with_nan = dist == Dist::on_edges;
          const auto ws = wt == SampleType::f32 ? weights_for<float>(n, g.seed + 1, with_nan)
                                                : weights_for<double>(n, g.seed + 1, with_nan);
          const WeightedHistogram want = histogram_weighted(c.type, xs.data(), n, wt, ws.data(), c.binning,
                                                            Options{"cpu_serial", BackendChoice::cpu, 1});
          const std::vector<unsigned char> abs_ws = abs_weights(ws, wt);  // |w| per slot, for the tolerance
          const WeightedHistogram abs_sums = histogram_weighted(c.type, xs.data(), n, wt, abs_ws.data(), c.binning,
                                                                Options{"cpu_serial", BackendChoice::cpu, 1});
          const std::vector<double> abs_v(abs_sums.slots().begin(), abs_sums.slots().end());
          double largest = 0.0;  // the call's largest finite |weight|, for the fixed-point quantum
          for (std::uint64_t i = 0; i < n; ++i) {
            double v;
            if (wt == SampleType::f32) {
              float f;
              std::memcpy(&f, abs_ws.data() + 4 * i, 4);
              v = f;
            } else {
              std::memcpy(&v, abs_ws.data() + 8 * i, 8);
            }
            if (std::isfinite(v)) largest = std::max(largest, v);
          }
          const double fixed_half_quantum = std::ldexp(1.0, fixed::exponent_of(largest) - fixed::kWeightBits - 1);
          const std::uint64_t S = c.binning.slots();
          auto* d_sums = reinterpret_cast<double*>(sums.reserve(S * 8));
          for (std::size_t xoff : {std::size_t{0}, std::size_t{1}}) {
            for (std::size_t woff : {std::size_t{0}, std::size_t{3}}) {
              if ((xoff || woff) && n != 4097) continue;
              unsigned char* dx = samples.reserve(xs.size() + 64) + xoff;
              unsigned char* dw = weights.reserve(ws.size() + 64) + woff;
              TEST_CUDA(cudaMemcpy(dx, xs.data(), xs.size(), cudaMemcpyHostToDevice));
              TEST_CUDA(cudaMemcpy(dw, ws.data(), ws.size(), cudaMemcpyHostToDevice));
              for (const Strategy* s : strategies) {
                Problem p{c.type, &c.binning, n};
                p.weighted = true;
                p.weight_type = wt;
                if (!strategy_accepts(*s, p)) continue;
                const std::string where = std::string(s->name) + ": " + std::to_string(n) + " " +
                                          std::string(to_string(c.type)) + " samples, " +
                                          std::string(to_string(wt)) + " weights, " + c.binning.describe() +
                                          ", offsets " + std::to_string(xoff) + "/" + std::to_string(woff) + ", " +
                                          describe(g);
                try {
                  const std::size_t wsb = cuda::workspace_bytes_weighted(c.type, n, wt, c.binning, s);
                  for (bool accumulate : {false, true}) {
                    std::vector<double> initial(S, accumulate ? 0.5 : -12345.0);
                    TEST_CUDA(cudaMemcpy(d_sums, initial.data(), S * 8, cudaMemcpyHostToDevice));
                    cuda::histogram_weighted(workspace.get(wsb), wsb, dx, n, c.type, dw, wt, c.binning,
                                             d_sums, accumulate, nullptr, s);
                    TEST_CUDA(cudaDeviceSynchronize());
                    const auto got = download<double>(d_sums, S);
                    std::vector<double> expected(want.slots().begin(), want.slots().end());
                    std::vector<double> tol = abs_v;
                    // Fixed-point sums (src/core/fixed_point.hpp) round each weight once to a
                    // quantum 2^(E - kWeightBits): at most half a quantum per sample, n samples.
                    const double rounding =
                        (s->capabilities & kCapabilityDeterministic) ? static_cast<double>(n) * fixed_half_quantum : 0.0;
                    if (accumulate)
                      for (std::size_t i = 0; i < S; ++i) expected[i] += 0.5, tol[i] += 0.5;
                    if (auto close = sums_close(expected, got, tol, n, c.binning, rounding); !close)
                      failures.report(*s, where + (accumulate ? ", accumulate" : "") + ": " + close.message());
                    if (std::string dirt = workspace.dirty(wsb); !dirt.empty()) failures.report(*s, where + ": " + dirt);
                  }
                } catch (const Error& e) {
                  if (cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess)
                    throw std::runtime_error(where + ": " + e.what() + " (context lost: " + cudaGetErrorString(sticky) + ")");
                  failures.report(*s, where + ": threw " + e.what());
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(GpuGeneral, WeightedAgreesWithCpuSerial) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies_with(kCapabilityWeights);
  ASSERT_FALSE(strategies.empty()) << "no CUDA strategy has kCapabilityWeights";
  check_weighted_against_cpu_serial(strategies);
}

// gpu_weighted_shared's other tunings (weighted_shared.cuh): 4-byte samples with
// f32 weights take the 16 lane copies wherever they fit (the default, in the
// test above, staged from 64 MiB up); here staged on every call, then unstaged
// on every call; with LEVELHIST_WEIGHTED_COLUMNS=0 they take one copy, the
// small calls' tuning, then the large calls' on every call: the same cases.
TEST(GpuGeneral, WeightedOtherTuningsAgreeWithCpuSerial) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  std::vector<const Strategy*> shared;
  for (const Strategy* s : cuda_strategies_with(kCapabilityWeights))
    if (std::string(s->name).rfind("gpu_weighted_shared", 0) == 0) shared.push_back(s);
  ASSERT_FALSE(shared.empty()) << "gpu_weighted_shared is not registered";
  {
    // The 16 lane copies with their loads staged in shared memory on every
    // call (by default from 64 MiB up): unaligned weights and short calls too.
    ScopedEnv every_call("LEVELHIST_WEIGHTED_LARGE_CALL_BYTES", "0");
    SCOPED_TRACE("LEVELHIST_WEIGHTED_LARGE_CALL_BYTES=0 (staged column calls)");
    check_weighted_against_cpu_serial(shared);
  }
  {
    // The 16 lane copies with their loads in registers on every call.
    ScopedEnv staged("LEVELHIST_WEIGHTED_STAGED", "0"), large("LEVELHIST_WEIGHTED_LARGE_CALL_BYTES", "0");
    SCOPED_TRACE("LEVELHIST_WEIGHTED_STAGED=0");
    check_weighted_against_cpu_serial(shared);
  }
  ScopedEnv columns("LEVELHIST_WEIGHTED_COLUMNS", "0");
  for (const char* large : {"", "0"}) {
    ScopedEnv tuning("LEVELHIST_WEIGHTED_LARGE_CALL_BYTES", large);
    SCOPED_TRACE(std::string("LEVELHIST_WEIGHTED_COLUMNS=0, LEVELHIST_WEIGHTED_LARGE_CALL_BYTES=") + large);
    check_weighted_against_cpu_serial(shared);
  }
}

// The staged column calls (weighted_shared.cuh) cycle their two stages only
// when a warp makes several trips: 2^24 + 3 samples (about 31 trips a warp on
// 132 multiprocessors), uniform, constant and on the bin edges, staged and not.
TEST(GpuGeneral, WeightedStagedLongRunsAgreeWithCpuSerial) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  const Strategy* shared = find_strategy("gpu_weighted_shared");
  ASSERT_NE(shared, nullptr);
  const std::uint64_t n = (std::uint64_t{1} << 24) + 3;
  const Binning b = Binning::even(1024, 0.0, 1.0);
  Workspace workspace;
  Device samples, weights, sums;
  for (Dist dist : {Dist::specials, Dist::one_value, Dist::on_edges}) {
    const GenSpec g = spec(SampleType::f32, b, dist, n, "weighted staged");
    const auto xs = generate(g);
    const auto ws = weights_for<float>(n, g.seed + 1, false);
    const WeightedHistogram want =
        histogram_weighted(SampleType::f32, xs.data(), n, SampleType::f32, ws.data(), b, Options{"cpu_serial", BackendChoice::cpu, 1});
    const WeightedHistogram abs_sums = histogram_weighted(SampleType::f32, xs.data(), n, SampleType::f32,
                                                          abs_weights(ws, SampleType::f32).data(), b,
                                                          Options{"cpu_serial", BackendChoice::cpu, 1});
    unsigned char* dx = samples.reserve(xs.size());
    unsigned char* dw = weights.reserve(ws.size());
    TEST_CUDA(cudaMemcpy(dx, xs.data(), xs.size(), cudaMemcpyHostToDevice));
    TEST_CUDA(cudaMemcpy(dw, ws.data(), ws.size(), cudaMemcpyHostToDevice));
    auto* d_sums = reinterpret_cast<double*>(sums.reserve(b.slots() * 8));
    for (const char* staged : {"", "0"}) {
      ScopedEnv knob("LEVELHIST_WEIGHTED_STAGED", staged);
      const std::size_t wsb = cuda::workspace_bytes_weighted(SampleType::f32, n, SampleType::f32, b, shared);
      cuda::histogram_weighted(workspace.get(wsb), wsb, dx, n, SampleType::f32, dw, SampleType::f32, b, d_sums, false,
                               nullptr, shared);
      TEST_CUDA(cudaDeviceSynchronize());
      EXPECT_TRUE(sums_close({want.slots().begin(), want.slots().end()}, download<double>(d_sums, b.slots()),
                             {abs_sums.slots().begin(), abs_sums.slots().end()}, n, b))
          << describe(g) << ", LEVELHIST_WEIGHTED_STAGED=" << staged;
    }
  }
}

// ---- the host paths ---------------------------------------------------------------------

TEST(GpuGeneral, HostPathsForPixelsAndWeights) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  // 3000 x 3000 RGBA (36 MB: more than one 32 MiB staging chunk), a region with a pitch.
  const std::uint64_t w = 3000, h = 3000, pitch = 3001 * 4;
  const GenSpec g{SampleType::u8, Dist::uniform_full, pitch * h, seed_for("host pixels"), full_window(SampleType::u8)};
  const auto img = generate(g);
  const Binning b = Binning::per_value(SampleType::u8);
  for (unsigned active : {0xFu, 0x7u, 0x4u}) {
    const PixelLayout layout{4, active, w, h, pitch};
    const auto want = histogram_pixels(SampleType::u8, img.data(), layout, b, Options{"cpu_serial", BackendChoice::cpu, 1});
    for (const Strategy* s : cuda_strategies_with(kCapabilityPixels)) {
      const auto got = histogram_pixels(SampleType::u8, img.data(), layout, b, Options{s->name, BackendChoice::cuda, 0});
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(histograms_equal(want[i], got[i])) << s->name << ", active " << active << ", histogram " << i;
    }
    // auto picks a CUDA strategy when there is a GPU
    std::vector<Histogram> hists(want.size(), Histogram(b));
    EXPECT_EQ(fill_pixels(hists, SampleType::u8, img.data(), layout).backend, Backend::cuda);
    EXPECT_EQ(hists, want);
  }
  // Weighted: 5 M f32 samples and weights (40 MB, two chunks), unaligned host pointers.
  const std::uint64_t n = 5000011;
  const Binning wb = Binning::even(1024, 0.0, 1.0);
  const GenSpec xs_spec{SampleType::f32, Dist::specials, n, seed_for("host weighted"), Window{-0.1, 1.1}, &wb};
  const auto xs = generate(xs_spec);
  const auto ws = weights_for<float>(n, 77, false);
  const SampleBuffer x_buf(xs, 3), w_buf(ws, 5);
  const WeightedHistogram want = histogram_weighted(SampleType::f32, x_buf.data(), n, SampleType::f32, w_buf.data(), wb,
                                                    Options{"cpu_serial", BackendChoice::cpu, 1});
  std::vector<double> abs_sums(wb.slots(), 0.0);
  {
    std::vector<float> a(n);
    std::memcpy(a.data(), ws.data(), n * 4);
    for (float& v : a) v = std::fabs(v);
    const WeightedHistogram t = histogram_weighted(SampleType::f32, xs.data(), n, SampleType::f32, a.data(), wb,
                                                   Options{"cpu_serial", BackendChoice::cpu, 1});
    abs_sums.assign(t.slots().begin(), t.slots().end());
  }
  for (const Strategy* s : cuda_strategies_with(kCapabilityWeights)) {
    const WeightedHistogram got = histogram_weighted(SampleType::f32, x_buf.data(), n, SampleType::f32, w_buf.data(), wb,
                                                     Options{s->name, BackendChoice::cuda, 0});
    EXPECT_TRUE(sums_close({want.slots().begin(), want.slots().end()}, {got.slots().begin(), got.slots().end()},
                           abs_sums, n, wb))
        << s->name << " through levelhist::histogram_weighted";
  }
}

// ---- the dispatcher: more than 2^31 samples, split by rows or whole pixels ------------

TEST(GpuGeneral, DispatcherSplitsImagesByRowsAndWholePixels) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  // RGB pixels (0, 1, 2) everywhere: a split inside a pixel would shift the channels.
  const std::uint64_t bytes = std::uint64_t{3} * 65536 * 10923;  // > 2^31 samples, 10923 rows of 65536 RGB pixels
  std::size_t free_bytes = 0, total = 0;
  TEST_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < bytes + (std::size_t{1} << 30)) GTEST_SKIP() << "needs " << (bytes >> 20) << " MiB of free device memory";
  Device image;
  unsigned char* d = image.reserve(bytes);
  constexpr std::uint64_t kBlock = 3 << 20;
  std::vector<unsigned char> block(kBlock);
  for (std::uint64_t i = 0; i < kBlock; ++i) block[i] = static_cast<unsigned char>(i % 3);
  TEST_CUDA(cudaMemcpy(d, block.data(), kBlock, cudaMemcpyHostToDevice));
  for (std::uint64_t at = kBlock; at < bytes;) {
    const std::uint64_t chunk = std::min(at, bytes - at);
    TEST_CUDA(cudaMemcpy(d + at, d, chunk, cudaMemcpyDeviceToDevice));
    at += chunk;
  }
  const Binning b = Binning::per_value(SampleType::u8);
  const std::uint64_t pixels = bytes / 3;
  // 1) one row of every pixel (split by whole pixels); 2) a region of 65535 of
  // the 65536 pixels of every row (a pitch: split by rows).
  const std::vector<PixelLayout> layouts = {PixelLayout{3, 0x7, pixels, 1, 0},
                                            PixelLayout{3, 0x5, 65535, pixels / 65536, 65536 * 3}};
  Workspace workspace;
  Device slots;
  for (const PixelLayout& layout : layouts) {
    for (const Strategy* s : cuda_strategies_with(kCapabilityPixels)) {
      const std::uint64_t k = levelhist::detail::active_count(layout), S = b.slots();
      auto* d_slots = reinterpret_cast<std::uint64_t*>(slots.reserve(k * S * 8));
      const std::size_t ws = cuda::workspace_bytes_pixels(SampleType::u8, layout, b, s);
      cuda::histogram_pixels(workspace.get(ws), ws, d, SampleType::u8, layout, b, d_slots, false, nullptr, s);
      const auto got = download<std::uint64_t>(d_slots, k * S);
      std::uint64_t h = 0;
      for (unsigned c = 0; c < 3; ++c) {
        if (!(layout.active >> c & 1)) continue;
        std::vector<std::uint64_t> want(S, 0);
        want[c] = layout.width * layout.height;
        EXPECT_TRUE(slots_equal(want, std::vector<std::uint64_t>(got.begin() + h * S, got.begin() + (h + 1) * S), b))
            << s->name << ", channel " << c << ", " << layout.width << " x " << layout.height;
        ++h;
      }
      EXPECT_EQ(workspace.dirty(ws), "") << s->name;
    }
  }
}

// ---- auto's choices ------------------------------------------------------------------------

TEST(GpuGeneral, AutoPicksTheMeasuredWinners) {
  LEVELHIST_GENERAL_SKIP_WITHOUT_GPU();
  auto chosen = [](Problem p) { return std::string(choose_strategy(p, Backend::cuda).name); };
  const Binning u16_4096 = Binning::even(4096, 0, 4096), u16_all = Binning::per_value(SampleType::u16);
  const Binning f32_1024 = Binning::even(1024, 0.0, 1.0), bytes = Binning::per_value(SampleType::u8);
  std::vector<double> e(65);
  for (int i = 0; i <= 64; ++i) e[i] = 0.1 + 0.9 * (i / 64.0) * (i / 64.0);
  const Binning edges = Binning::explicit_edges(e);
  const Binning k20 = Binning::even(std::uint64_t{1} << 20, 0, 4294967296.0);
  const Binning k24 = Binning::even(std::uint64_t{1} << 24, 0, 4294967296.0);
  const std::uint64_t n = std::uint64_t{1} << 28;
  EXPECT_EQ(chosen({SampleType::u16, &u16_4096, n}), "gpu_shared_swizzle");
  EXPECT_EQ(chosen({SampleType::u16, &u16_all, n}), "gpu_split_bins");
  EXPECT_EQ(chosen({SampleType::f32, &f32_1024, n}), "gpu_shared_swizzle");
  EXPECT_EQ(chosen({SampleType::f32, &edges, n}), "gpu_shared_lanes");
  EXPECT_EQ(chosen({SampleType::u32, &k20, n}), "gpu_partition_count");
  EXPECT_EQ(chosen({SampleType::u32, &k24, n}), "gpu_partition_count");
  EXPECT_EQ(chosen({SampleType::u8, &bytes, n, PixelLayout{4, 0xF, 8192, 8192, 0}}), "gpu_pixel_lane_columns");
  EXPECT_EQ(chosen({SampleType::u8, &bytes, n, PixelLayout{4, 0x7, 8192, 8192, 0}}), "gpu_pixel_lane_columns");
  Problem weighted{SampleType::f32, &f32_1024, n};
  weighted.weighted = true;
  EXPECT_EQ(chosen(weighted), "gpu_weighted_shared");
  EXPECT_EQ(chosen({SampleType::u8, &bytes, n}), "gpu_lane_columns");  // plain bytes stay with the headline byte kernel
}

}  // namespace
}  // namespace levelhist::test

#endif  // LEVELHIST_HAVE_CUDA
