// cpu_parallel: fork/join with one private histogram per thread
// (000_c3bc3bf1a09915a1.txt, "Privatized (Per Thread) Histograms").
// PLACEHOLDER: the generic path only; the sub-table and SIMD paths follow.
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/strategies.hpp"

namespace levelhist::strategies {
namespace {

bool supports(const Problem&, std::string*) { return true; }
std::size_t no_workspace(const Problem&) { return 0; }

void run(const RunArgs& a) {
  unsigned threads = a.threads ? a.threads : std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t slots = a.binning->slots();
  std::vector<std::vector<std::uint64_t>> priv(threads, std::vector<std::uint64_t>(slots, 0));
  std::vector<std::thread> pool;
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto work = [&](unsigned t) {
      const unsigned char* bytes = static_cast<const unsigned char*>(a.samples);
      std::uint64_t begin = a.n * t / threads, end = a.n * (t + 1) / threads;
      for (std::uint64_t i = begin; i < end; ++i) {
        T x;
        std::memcpy(&x, bytes + i * sizeof(T), sizeof(T));
        priv[t][a.indexer.slot(static_cast<double>(x))] += 1;
      }
    };
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
  });
  for (auto& th : pool) th.join();
  if (!a.accumulate) std::memset(a.slots, 0, slots * sizeof(std::uint64_t));
  for (auto& p : priv)
    for (std::uint64_t s = 0; s < slots; ++s) a.slots[s] += p[s];
}

int rank(const Problem&) { return 10; }

}  // namespace

const Strategy cpu_parallel{"cpu_parallel", Backend::cpu,
                            "fork/join, one private histogram per thread",
                            "000_c3bc3bf1a09915a1.txt (privatized per-thread histograms)",
                            supports, no_workspace, run, rank};

}  // namespace levelhist::strategies
