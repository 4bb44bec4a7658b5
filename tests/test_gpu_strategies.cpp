// Every CUDA strategy in the registry (all_strategies() filtered to
// Backend::cuda, so strategies added later are tested too) against the CPU
// reference cpu_serial, slot for slot, through the public device API
// levelhist::cuda::histogram with one workspace zeroed once and checked to be
// zero again after every call; plus the host path (levelhist::fill) and a
// count of more than 2^32 samples.
//
// Each test walks its problems in an outer loop and the strategies that
// support each problem in an inner one, so the data is generated, uploaded and
// counted by the reference once per problem. A failure names the strategy, the
// problem and the data's seed; LEVELHIST_TEST_STRATEGIES=name1,name2 narrows
// the strategies, LEVELHIST_TEST_SEED varies the data.
//
// Without a GPU (CI) every test skips and says why; in a build without CUDA
// one test skips saying so.
#include <gtest/gtest.h>

#if !LEVELHIST_HAVE_CUDA

TEST(GpuStrategies, NeedACudaBuild) {
  GTEST_SKIP() << "this build has no CUDA backend (LEVELHIST_CUDA=OFF or no nvcc)";
}

#else

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"
#include "test_support.hpp"

namespace levelhist::test {
namespace {


// The standard binnings plus the cases the benchmark measures, and one bin
// count too large for any shared-memory histogram.
std::vector<NamedBinning> gpu_binnings(SampleType type) {
  std::vector<NamedBinning> out = standard_binnings(type);
  if (!is_integer(type)) {
    out.push_back({"even1024_unit_interval", Binning::even(1024, 0.0, 1.0)});
    std::vector<double> edges;
    for (int i = 0; i <= 64; ++i) edges.push_back(-1.0 + 2.0 * (i * i) / (64.0 * 64.0));  // 64 uneven bins
    out.push_back({"explicit64", Binning::explicit_edges(edges)});
  }
  if (type == SampleType::u16) out.push_back({"even4096_full", Binning::even(4096, 0.0, 65536.0)});
  if (type == SampleType::i32) out.push_back({"even131072", Binning::even(131072, -70000.5, 70000.5)});
  return out;
}

// The binning a type is most often counted with: per value for 8/16-bit
// samples, else 256 even bins.
NamedBinning primary_binning(SampleType type) {
  for (const NamedBinning& nb : standard_binnings(type))
    if (nb.name == (sample_size(type) <= 2 ? "per_value" : is_integer(type) ? "even256_full" : "even256_unit"))
      return nb;
  return standard_binnings(type).front();
}

NamedBinning binning_named(SampleType type, const std::string& name) {
  for (const NamedBinning& nb : gpu_binnings(type))
    if (nb.name == name) return nb;
  throw std::invalid_argument("no binning " + name + " for " + std::string(to_string(type)));
}

// The strategies of `all` that take this problem.
std::vector<const Strategy*> supporting(const std::vector<const Strategy*>& all, SampleType type,
                                        const Binning& binning, std::uint64_t n) {
  std::vector<const Strategy*> out;
  const Problem problem{type, &binning, n};
  for (const Strategy* s : all)
    if (strategy_accepts(*s, problem)) out.push_back(s);
  return out;
}

// Samples that exercise the binning: uniform over (and beyond) its range for
// integers; for floats also NaN, infinities and values on the edges.
GenSpec spec_for(SampleType type, const Binning& binning, Dist dist, std::uint64_t n, std::string_view tag) {
  return GenSpec{type, dist, n, seed_for(tag, n), window_around(binning, type), &binning};
}
Dist mixed_dist(SampleType type) { return is_integer(type) ? Dist::uniform_window : Dist::specials; }

std::string case_name(const NamedBinning& nb, const GenSpec& g) { return nb.name + ", " + describe(g); }

// ---- every type, every binning, the sizes where tails go wrong ------------------

TEST(GpuStrategies, AgreeWithCpuSerialAtEverySize) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies();
  GpuHarness harness;
  std::vector<std::uint64_t> sizes = {0, 1, 2, 3, 15, 16, 17, 4095, std::uint64_t{1} << 20};
  std::mt19937_64 rng(seed_for("gpu sizes"));
  for (int i = 0; i < 3; ++i) sizes.push_back(std::uniform_int_distribution<std::uint64_t>(18, 300000)(rng));
  for (SampleType type : kAllSampleTypes) {
    for (const NamedBinning& nb : gpu_binnings(type)) {
      for (std::uint64_t n : sizes) {
        const auto runners = supporting(strategies, type, nb.binning, n);
        if (runners.empty()) continue;
        const GenSpec g = spec_for(type, nb.binning, mixed_dist(type), n, "gpu sizes " + nb.name);
        const auto data = generate(g);
        const auto reference = reference_slots(type, data.data(), n, nb.binning);
        const void* d = harness.upload(data, 0);
        for (const Strategy* s : runners) harness.check_fresh(*s, type, d, n, nb.binning, reference, case_name(nb, g));
      }
    }
  }
}

// ---- every distribution (contention, skew, edges, NaN) ----------------------------

TEST(GpuStrategies, AgreeWithCpuSerialOnEveryDistribution) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies();
  GpuHarness harness;
  const std::uint64_t n = 50021;
  for (SampleType type : kAllSampleTypes) {
    for (const NamedBinning& nb : gpu_binnings(type)) {
      const auto runners = supporting(strategies, type, nb.binning, n);
      for (Dist dist : dists_for(type)) {
        const GenSpec g = spec_for(type, nb.binning, dist, n, "gpu dists " + nb.name);
        const auto data = generate(g);
        const auto reference = reference_slots(type, data.data(), n, nb.binning);
        const void* d = harness.upload(data, 0);
        for (const Strategy* s : runners) harness.check_fresh(*s, type, d, n, nb.binning, reference, case_name(nb, g));
      }
    }
  }
}

// ---- n - 1, n, n + 1 around every size where some strategy changes shape ----------

TEST(GpuStrategies, AgreeWithCpuSerialAroundBoundarySizes) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies();
  GpuHarness harness;
  constexpr std::uint64_t kSmallLimit = std::uint64_t{1} << 21;  // every type and binning up to here
  constexpr std::uint64_t kLargeLimit = std::uint64_t{1} << 25;  // u8 and f32 primary binnings up to here
  std::set<std::string> skipped;
  for (SampleType type : kAllSampleTypes) {
    std::vector<NamedBinning> binnings = {primary_binning(type), binning_named(type, "explicit_uneven")};
    binnings.push_back(binning_named(type, is_integer(type) ? "even4096_narrow" : "even4096_wide"));
    for (const NamedBinning& nb : binnings) {
      const bool large = nb.name == primary_binning(type).name && (type == SampleType::u8 || type == SampleType::f32);
      const std::uint64_t limit = large ? kLargeLimit : kSmallLimit;
      const auto runners = supporting(strategies, type, nb.binning, limit);
      // Every strategy is tried at every boundary any of them names.
      std::set<std::uint64_t> sizes;
      for (const Strategy* s : runners) {
        if (!s->boundary_sizes) continue;
        for (std::uint64_t b : s->boundary_sizes(Problem{type, &nb.binning, limit})) {
          if (b + 1 > limit) {
            skipped.insert(std::string(s->name) + " boundary " + std::to_string(b));
            continue;
          }
          for (std::uint64_t n : {b - 1, b, b + 1})
            if (b > 0) sizes.insert(n);
        }
      }
      if (sizes.empty()) continue;
      const std::uint64_t max_n = *sizes.rbegin();
      const GenSpec g = spec_for(type, nb.binning, mixed_dist(type), max_n, "gpu boundaries " + nb.name);
      const auto data = generate(g);
      const void* d = harness.upload(data, 0);
      // The reference for each prefix, extended from the previous one.
      std::vector<std::uint64_t> reference(nb.binning.slots(), 0);
      std::uint64_t counted = 0;
      const std::size_t size = sample_size(type);
      for (std::uint64_t n : sizes) {
        run_cpu_strategy(reference_strategy(), type, data.data() + counted * size, n - counted, nb.binning, reference,
                         /*accumulate=*/true, 1);
        counted = n;
        for (const Strategy* s : runners)
          harness.check_fresh(*s, type, d, n, nb.binning, reference,
                              case_name(nb, g) + ", prefix of " + std::to_string(n));
      }
    }
  }
  for (const std::string& s : skipped)
    std::printf("[ note     ] not probed (above the test's size limit): %s\n", s.c_str());
}

// ---- sample pointers 1..15 bytes past an aligned address --------------------------

TEST(GpuStrategies, AgreeWithCpuSerialOnUnalignedPointers) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies();
  GpuHarness harness;
  for (SampleType type : kAllSampleTypes) {
    for (const NamedBinning& nb : {primary_binning(type), binning_named(type, "explicit_uneven")}) {
      for (std::uint64_t n : {1, 2, 3, 5, 7, 17, 4095, 65539}) {
        const auto runners = supporting(strategies, type, nb.binning, n);
        const GenSpec g = spec_for(type, nb.binning, mixed_dist(type), n, "gpu unaligned " + nb.name);
        const auto data = generate(g);
        const auto reference = reference_slots(type, data.data(), n, nb.binning);
        for (std::size_t offset = 1; offset < 16; ++offset) {
          const void* d = harness.upload(data, offset);
          for (const Strategy* s : runners)
            harness.check_fresh(*s, type, d, n, nb.binning, reference,
                                case_name(nb, g) + ", pointer offset " + std::to_string(offset));
        }
      }
    }
  }
}

// ---- accumulate: adds to the counts that are there; otherwise clears them ---------

TEST(GpuStrategies, AccumulateAddsAndOtherwiseClears) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies();
  GpuHarness harness;
  for (SampleType type : kAllSampleTypes) {
    for (const NamedBinning& nb : {primary_binning(type), binning_named(type, "explicit_uneven")}) {
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4097}, (std::uint64_t{1} << 20) + 1}) {
        const auto runners = supporting(strategies, type, nb.binning, n);
        const GenSpec g = spec_for(type, nb.binning, mixed_dist(type), n, "gpu accumulate " + nb.name);
        const auto data = generate(g);
        const auto reference = reference_slots(type, data.data(), n, nb.binning);
        const void* d = harness.upload(data, 0);
        // Known, large, non-zero starting counts: a strategy that clears or
        // overwrites instead of adding cannot match.
        std::vector<std::uint64_t> initial(nb.binning.slots()), expected(nb.binning.slots());
        for (std::size_t i = 0; i < initial.size(); ++i) {
          initial[i] = (std::uint64_t{1} << 33) + i * 1000003;
          expected[i] = initial[i] + reference[i];
        }
        for (const Strategy* s : runners) {
          harness.check(*s, type, d, n, nb.binning, true, initial, expected, case_name(nb, g));
          harness.check_fresh(*s, type, d, n, nb.binning, reference, case_name(nb, g));
        }
      }
    }
  }
}

// ---- the host path: levelhist::fill with host samples, chunked and staged --------

TEST(GpuStrategies, HostPathAddsIntoTheHistogram) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const auto strategies = cuda_strategies();
  struct HostCase {
    SampleType type;
    std::uint64_t n;
  };
  // 70 MB of bytes crosses the host path's 64 MiB staging chunk (src/cuda/runtime.cu).
  const HostCase cases[] = {{SampleType::u8, 0},     {SampleType::u8, 4095},    {SampleType::u8, 70000005},
                            {SampleType::i16, 1},    {SampleType::i16, 300007}, {SampleType::f32, (1u << 20) + 3},
                            {SampleType::f64, 4097}, {SampleType::u32, 70001}};
  for (const HostCase& c : cases) {
    const NamedBinning nb = primary_binning(c.type);
    const auto runners = supporting(strategies, c.type, nb.binning, c.n);
    const GenSpec g = spec_for(c.type, nb.binning, mixed_dist(c.type), c.n, "gpu host path");
    const auto data = generate(g);
    const SampleBuffer unaligned(data, 3);  // host samples need no alignment either
    const auto reference = reference_slots(c.type, unaligned.data(), c.n, nb.binning);
    for (const Strategy* s : runners) {
      Histogram h(nb.binning);
      for (std::size_t i = 0; i < h.slots().size(); ++i) h.slots()[i] = 7 + i;  // fill adds to what is there
      std::vector<std::uint64_t> expected(reference.size());
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = 7 + i + reference[i];
      Options options;
      options.strategy = s->name;
      options.backend = BackendChoice::cuda;
      try {
        const Strategy& ran = fill(h, c.type, unaligned.data(), c.n, options);
        EXPECT_STREQ(ran.name, s->name);
        EXPECT_TRUE(slots_equal(expected, h.slots(), nb.binning))
            << s->name << " through levelhist::fill, " << case_name(nb, g);
      } catch (const Error& e) {
        ADD_FAILURE() << s->name << " through levelhist::fill threw " << e.what() << "; " << case_name(nb, g);
      }
    }
  }
}

// ---- more than 2^32 samples in one call: the dispatcher's 2^31 split, 64-bit slots --

TEST(GpuStrategies, CountMoreThan4GiBOfBytes) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const std::uint64_t n = (std::uint64_t{1} << 32) + 4097;
  std::size_t free_bytes = 0, total_bytes = 0;
  LEVELHIST_TEST_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < n + (std::size_t{512} << 20))
    GTEST_SKIP() << "needs " << (n >> 20) << " MiB of free device memory, the GPU has " << (free_bytes >> 20);
  const Binning bins = Binning::per_value(SampleType::u8);
  const auto runners = supporting(cuda_strategies(), SampleType::u8, bins, n);
  DeviceBytes samples(n);
  GpuHarness harness;
  // The samples: one 64 MiB block of random bytes, repeated 64 times, then its first 4097 bytes again.
  constexpr std::uint64_t kBlock = std::uint64_t{64} << 20;
  const GenSpec g{SampleType::u8, Dist::uniform_full, kBlock, seed_for("gpu 4 GiB"), full_window(SampleType::u8)};
  const auto block = generate(g);
  LEVELHIST_TEST_CUDA(cudaMemcpy(samples.get(), block.data(), kBlock, cudaMemcpyHostToDevice));
  for (std::uint64_t at = kBlock; at < n; at += kBlock)
    LEVELHIST_TEST_CUDA(
        cudaMemcpy(samples.get() + at, samples.get(), std::min(kBlock, n - at), cudaMemcpyDeviceToDevice));
  auto random_expected = reference_slots(SampleType::u8, block.data(), kBlock, bins);
  const auto head = reference_slots(SampleType::u8, block.data(), n % kBlock, bins);
  for (std::size_t i = 0; i < random_expected.size(); ++i)
    random_expected[i] = random_expected[i] * (n / kBlock) + head[i];

  // Then every byte the same: all 2^32 + 4097 samples in one bin (the 32-bit
  // per-block and per-thread counters are most at risk here).
  std::vector<std::uint64_t> constant_expected(bins.slots(), 0);
  constexpr unsigned char kConstant = 0xA7;
  constant_expected[kConstant] = n;

  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) LEVELHIST_TEST_CUDA(cudaMemset(samples.get(), kConstant, n));
    const auto& expected = pass == 0 ? random_expected : constant_expected;
    const char* what = pass == 0 ? "random bytes" : "one repeated byte";
    std::vector<std::uint64_t> block_reference(bins.slots(), 0);
    if (pass == 0)
      block_reference = reference_slots(SampleType::u8, block.data(), kBlock, bins);
    else
      block_reference[kConstant] = kBlock;
    for (const Strategy* s : runners) {
      // Time one block first; strategies that would take long on the whole
      // input (one global atomic per sample on contended data) are left out.
      const auto start = std::chrono::steady_clock::now();
      harness.check_fresh(*s, SampleType::u8, samples.get(), kBlock, bins, block_reference,
                          std::string(what) + ", the first 64 MiB");
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double projected = seconds * static_cast<double>(n / kBlock);
      if (projected > 8.0) {
        std::printf(
            "[ note     ] %s: skipped on %llu samples of %s: 64 MiB took %.3f s, the whole would take ~%.0f s\n",
            s->name, static_cast<unsigned long long>(n), what, seconds, projected);
        continue;
      }
      harness.check_fresh(*s, SampleType::u8, samples.get(), n, bins, expected,
                          std::string(what) + ", 2^32 + 4097 samples");
    }
  }
}

// ---- the workspace contract ------------------------------------------------------------

// Explicit edges and the tables built from them (a cell table) live in the
// plan's own device memory, never in the caller's workspace: the contract
// (cuda.hpp, docs/ARCHITECTURE.md) is that the workspace is zero again after
// every call, so the next call's strategy finds the zeros it expects.
TEST(WorkspaceContract, ExplicitEdgesLeaveWorkspaceZero) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning edges = Binning::explicit_edges({0.0, 10.0, 20.5, 100.0});
  const std::vector<float> samples = {1.0f, 15.0f, 50.0f, -3.0f, 200.0f};
  for (const Strategy* s : supporting(cuda_strategies(), SampleType::f32, edges, samples.size())) {
    const Problem problem{SampleType::f32, &edges, samples.size()};
    const std::size_t bytes = cuda::workspace_bytes(problem, s);
    DeviceBytes workspace(bytes), d_samples(samples.size() * sizeof(float)), d_slots(edges.slots() * 8);
    LEVELHIST_TEST_CUDA(cudaMemset(workspace.get(), 0, bytes));
    LEVELHIST_TEST_CUDA(cudaMemcpy(d_samples.get(), samples.data(), d_samples.size(), cudaMemcpyHostToDevice));
    cuda::histogram(workspace.get(), bytes, d_samples.get(), samples.size(), SampleType::f32, edges,
                    reinterpret_cast<std::uint64_t*>(d_slots.get()), false, nullptr, s);
    std::vector<unsigned char> host(bytes);
    LEVELHIST_TEST_CUDA(cudaMemcpy(host.data(), workspace.get(), bytes, cudaMemcpyDeviceToHost));
    const auto dirty = std::find_if(host.begin(), host.end(), [](unsigned char b) { return b != 0; });
    EXPECT_EQ(dirty, host.end()) << "after " << s->name << " on explicit edges, workspace byte "
                                 << (dirty - host.begin()) << " of " << bytes << " is not zero";
  }
}

// The host path sizes its workspace for one chunk and reuses it for smaller
// ones, so a strategy's workspace must not shrink as n grows.
TEST(WorkspaceContract, WorkspaceNeverShrinksAsNGrows) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  std::uint64_t checked = 0;
  for (SampleType type : kAllSampleTypes) {
    for (const NamedBinning& nb : gpu_binnings(type)) {
      for (const Strategy* s : cuda_strategies()) {
        std::size_t previous = 0;
        for (std::uint64_t n = 1; n <= (std::uint64_t{1} << 31); n *= 3) {
          const Problem problem{type, &nb.binning, n};
          if (!strategy_accepts(*s, problem)) continue;
          const std::size_t bytes = cuda::workspace_bytes(problem, s);
          EXPECT_GE(bytes, previous) << s->name << ", " << nb.binning.describe() << ", " << to_string(type) << ", n "
                                     << n;
          previous = bytes;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0u);
  std::printf("[ note     ] %llu workspace sizes compared\n", static_cast<unsigned long long>(checked));
}

// ---- the registry's CUDA entries are complete ----------------------------------------

TEST(GpuStrategies, EveryCudaStrategyIsDescribed) {
  for (const Strategy* s : all_strategies()) {
    if (s->backend != Backend::cuda) continue;
    EXPECT_TRUE(s->name && *s->name);
    EXPECT_TRUE(s->summary && *s->summary) << s->name;
    EXPECT_TRUE(s->source && *s->source) << s->name;
    EXPECT_TRUE(s->supports && s->run) << s->name;
  }
}

TEST(GpuStrategies, AutoPicksACudaStrategyForBytes) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning bins = Binning::per_value(SampleType::u8);
  const Strategy& chosen = choose_strategy(Problem{SampleType::u8, &bins, 1 << 20}, Backend::cuda);
  EXPECT_EQ(chosen.backend, Backend::cuda);
  EXPECT_STRNE(chosen.name, "cub") << "cub is the baseline, never auto's choice";
}

}  // namespace
}  // namespace levelhist::test

#endif  // LEVELHIST_HAVE_CUDA
