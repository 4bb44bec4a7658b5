// cpu_serial: one loop, one counter per bin. Listing 1 of
// 002_f653b0f55bd9c251.txt (Wilt, "Histograms in CUDA", part 1), generalized
// to every sample type through the shared BinIndexer. It is the reference
// every other strategy is tested against, so it stays as plain as possible.
#include <cstring>

#include "core/strategies.hpp"

namespace levelhist::strategies {
namespace {

bool supports(const Problem&, std::string*) { return true; }
std::size_t no_workspace(const Problem&) { return 0; }

void run(const RunArgs& a) {
  if (!a.accumulate) std::memset(a.slots, 0, a.binning->slots() * sizeof(std::uint64_t));
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const unsigned char* bytes = static_cast<const unsigned char*>(a.samples);
    for (std::uint64_t i = 0; i < a.n; ++i) {
      T x;
      std::memcpy(&x, bytes + i * sizeof(T), sizeof(T));  // any alignment
      a.slots[a.indexer.slot(static_cast<double>(x))] += 1;
    }
  });
}

int rank(const Problem&) { return 1; }  // the last resort of `auto`

}  // namespace

const Strategy cpu_serial{"cpu_serial",
                          Backend::cpu,
                          "one loop, one 64-bit counter per bin (the reference)",
                          "002_f653b0f55bd9c251.txt Listing 1",
                          supports,
                          no_workspace,
                          run,
                          rank};

}  // namespace levelhist::strategies
