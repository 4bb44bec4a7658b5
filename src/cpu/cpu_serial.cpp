// cpu_serial: one loop, one counter per bin. Listing 1 of Wilt, "Histograms
// in CUDA: Privatized for Fast, Level Performance" (part 1), generalized
// to every sample type through the shared BinIndexer. It is the reference
// every other strategy is tested against, so it stays as plain as possible.
//
// It also takes every problem a strategy can be asked (kCapabilityPixels,
// kCapabilityWeights): interleaved pixels in rows, one histogram per active
// channel, and weighted sums in double, added in sample order.
#include <cstring>
#include <type_traits>

#include "core/pixels.hpp"
#include "core/strategies.hpp"

namespace levelhist::strategies {
namespace {

bool supports(const Problem&, std::string*) { return true; }
std::size_t no_workspace(const Problem&) { return 0; }

template <class T>
T load(const unsigned char* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));  // any alignment
  return x;
}

// Plain counts: the original loop.
template <class T>
void count_plain(const RunArgs& a) {
  const unsigned char* bytes = static_cast<const unsigned char*>(a.samples);
  for (std::uint64_t i = 0; i < a.n; ++i) a.slots[a.indexer.slot(static_cast<double>(load<T>(bytes + i * sizeof(T))))] += 1;
}

// Everything else: rows of pixels of interleaved channels (a plain array is one
// row of one-channel pixels), counts or weighted sums (one weight per pixel).
template <class T, class W>
void count_general(const RunArgs& a) {
  const detail::PixelGeometry g = detail::geometry_of(a.layout, a.n, sizeof(T));
  const std::uint64_t slots = a.binning->slots();
  const unsigned char* image = static_cast<const unsigned char*>(a.samples);
  const unsigned char* weights = static_cast<const unsigned char*>(a.weights);
  std::uint64_t pixel = 0;  // index of the pixel in the region, row by row: its weight's index
  for (std::uint64_t r = 0; r < g.height; ++r) {
    const unsigned char* row = image + r * g.pitch;
    for (std::uint64_t x = 0; x < g.width; ++x, ++pixel) {
      for (unsigned c = 0; c < g.channels; ++c) {
        if (!(g.active >> c & 1u)) continue;
        const T v = load<T>(row + (x * g.channels + c) * sizeof(T));
        const std::uint64_t at = detail::active_rank(a.layout, c) * slots + a.indexer.slot(static_cast<double>(v));
        if constexpr (std::is_void_v<W>) a.slots[at] += 1;
        else a.weight_sums[at] += static_cast<double>(load<W>(weights + pixel * sizeof(W)));
      }
    }
  }
}

void run(const RunArgs& a) {
  const bool weighted = a.weight_sums != nullptr;
  const std::uint64_t values = a.binning->slots() * detail::active_count(a.layout);
  if (!a.accumulate) {
    if (weighted) std::memset(a.weight_sums, 0, values * sizeof(double));
    else std::memset(a.slots, 0, values * sizeof(std::uint64_t));
  }
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (!weighted && a.layout.is_plain()) count_plain<T>(a);
    else if (!weighted) count_general<T, void>(a);
    else if (a.weight_type == SampleType::f64) count_general<T, double>(a);
    else count_general<T, float>(a);
  });
}


}  // namespace

const Strategy cpu_serial{"cpu_serial",
                          Backend::cpu,
                          "one loop, one 64-bit counter per bin (the reference)",
                          "Wilt part 1, Listing 1",
                          supports,
                          no_workspace,
                          run,
                          nullptr,
                          kCapabilityPixels | kCapabilityWeights};

}  // namespace levelhist::strategies
