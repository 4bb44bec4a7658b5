// Counting sort on the CPU (Wilt part 1: "sweeping across the histogram bins
// [0..k-1] and using the count in the histogram bin to emit that number of
// elements"). The counting is levelhist::fill's; this
// file holds the sweep, split over cores by OUTPUT range: a part finds the
// value at its first position by binary search in the run starts, so the parts
// never depend on one another and every byte of the output is written once.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "cpu/cpu_parallel_fork_join.hpp"
#include "cpu/sort_methods.hpp"
#include "levelhist/levelhist.hpp"

namespace levelhist::cpu_sort {
namespace {

// Below this many output samples per thread a part is not worth a thread.
constexpr std::uint64_t kMinSamplesPerPart = std::uint64_t{1} << 20;

// count copies of `value` from sample `at` of out (any alignment).
template <class T>
void write_run(unsigned char* out, std::uint64_t at, std::uint64_t count, T value) {
  unsigned char* p = out + at * sizeof(T);
  if (sizeof(T) == 1 || reinterpret_cast<std::uintptr_t>(p) % sizeof(T) == 0) {
    std::fill_n(reinterpret_cast<T*>(p), count, value);
    return;
  }
  // A misaligned u16/i16 output: a pattern block copied bytewise.
  constexpr std::size_t kBlock = 2048;
  T block[kBlock];
  std::fill_n(block, std::min<std::uint64_t>(count, kBlock), value);
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t k = std::min<std::uint64_t>(count - done, kBlock);
    std::memcpy(p + done * sizeof(T), block, k * sizeof(T));
    done += k;
  }
}

template <class T>
void expand_typed(const std::vector<std::uint64_t>& starts, double lower, unsigned char* out, std::uint64_t begin,
                  std::uint64_t end) {
  // starts[v] = first output position of slot v; starts.back() = n.
  std::size_t v = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), begin) - starts.begin()) - 1;
  const auto low = static_cast<long>(lower);
  for (std::uint64_t at = begin; at < end; ++v) {
    const std::uint64_t run_end = std::min(end, starts[v + 1]);
    if (run_end > at) write_run<T>(out, at, run_end - at, static_cast<T>(low + static_cast<long>(v)));
    at = std::max(at, run_end);
  }
}

}  // namespace

void expand_runs(SampleType type, std::span<const std::uint64_t> counts, void* out, std::uint64_t n,
                 unsigned threads) {
  if (n == 0) return;
  std::vector<std::uint64_t> starts(counts.size() + 1);
  std::exclusive_scan(counts.begin(), counts.end(), starts.begin(), std::uint64_t{0});
  starts.back() = n;
  const double lower = Binning::per_value(type).lower();
  threads = cpu_parallel_detail::threads_or_cores(threads);
  const unsigned parts = static_cast<unsigned>(std::min<std::uint64_t>(threads, n / kMinSamplesPerPart + 1));
  auto* bytes = static_cast<unsigned char*>(out);
  cpu_parallel_detail::fork_join(parts, [&](unsigned part) {
    const std::uint64_t begin = n / parts * part, end = part + 1 == parts ? n : n / parts * (part + 1);
    visit_sample_type(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (sizeof(T) <= 2 && std::is_integral_v<T>) expand_typed<T>(starts, lower, bytes, begin, end);
    });
  });
}

void counting_sort(SampleType type, const void* in, void* out, std::uint64_t n, unsigned threads) {
  Histogram hist(Binning::per_value(type));
  fill(hist, type, in, n, Options{"auto", BackendChoice::cpu, threads});
  expand_runs(type, hist.counts(), out, n, threads);
}

}  // namespace levelhist::cpu_sort
