// Helpers shared by the levelhist test suites (CPU and GPU): deterministic
// sample generators, unaligned sample buffers, a RunArgs builder for CPU
// strategies that mirrors src/core/api.cpp, and a slot-by-slot comparison of
// two histograms that says which slots differ and what they mean.
//
// Everything here is header-only and host-only (plain C++20 + GoogleTest), so a
// .cpp test of any backend can include it. Nothing here computes a histogram:
// expected values come either from the reference strategy (cpu_serial) or
// from the test itself.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <ostream>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/strategies.hpp"  // levelhist::strategies::cpu_serial, the reference
#include "levelhist/levelhist.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define LEVELHIST_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LEVELHIST_TEST_ASAN 1
#endif
#endif
#if defined(LEVELHIST_TEST_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace levelhist::test {

// ---------------------------------------------------------------------------
// Seeds. Every random choice in the tests derives from base_seed() and a tag
// naming the test case, so a failure can be replayed exactly: the seed is put
// into the failure message, and LEVELHIST_TEST_SEED=<number> replaces the
// default base seed (to explore other data).

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t base_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* env = std::getenv("LEVELHIST_TEST_SEED"); env && *env) return std::strtoull(env, nullptr, 0);
    return std::uint64_t{20240611};
  }();
  return seed;
}

// A seed for one named piece of a test: stable across runs and platforms.
inline std::uint64_t seed_for(std::string_view tag, std::uint64_t extra = 0) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : tag) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return splitmix64(splitmix64(h ^ base_seed()) ^ extra);
}

// ---------------------------------------------------------------------------
// Sample distributions.

enum class Dist : std::uint8_t {
  uniform_full,    // uniform over the type's full range (floats: uniformly random finite bit patterns,
                   // so every exponent, both signs, subnormals and zeros occur)
  uniform_window,  // uniform over a window (GenSpec::window), e.g. the binning's range widened by 25%
  zeros,           // all 0
  one_value,       // one random value from the window, n times
  distinct2,       // 2, 4 or 16 random values from the window (contention)
  distinct4,
  distinct16,
  ramp,            // linear from window.lo to window.hi
  geometric,       // window.lo + a geometric (integers) / exponential (floats) variate: heavy skew to the low end
  on_edges,        // values on the binning's edges and next to them, plus the type's extremes, plus uniform
  specials,        // floats only: NaN (several payloads), +-inf, +-max, subnormals, -0, edges, uniform
  // The adversarial shapes (kAdversarialDists): a separate axis, so the suites
  // that loop over kAllDists keep their run time. "Bins" are the binning's
  // (GenSpec::binning), or 256 equal parts of the window without one.
  zipf,            // bins by Zipf's law (rank r with probability ~ 1/r^1.1), the ranks scattered over the bins
  power_law,       // bins with probability ~ 1/(i+1)^2 in bin order: the low bins hot, their neighbours warm
  hot_bin,         // one random bin for all but about 1 in 1000 samples, which are uniform over the window
  sawtooth,        // ramps over the whole window, 4099 samples long, again and again
  strided,         // every 32nd value (integers) or bin (floats): one shared-memory bank, cycled
  sorted_runs,     // uniform over the window, sorted in runs of 1..8192 samples: long runs of one value
  every_edge,      // just below, on and just above every edge e_0..e_k in turn (evenly spread when n < 3(k+1))
};

inline constexpr Dist kAllDists[] = {Dist::uniform_full, Dist::uniform_window, Dist::zeros,    Dist::one_value,
                                     Dist::distinct2,    Dist::distinct4,      Dist::distinct16, Dist::ramp,
                                     Dist::geometric,    Dist::on_edges,       Dist::specials};

// The adversarial shapes: skew over the bins, one hot bin, periodic and
// strided patterns, sorted data, every edge. Tested against every strategy by
// test_adversarial.cpp with the bin counts of adversarial_binnings().
inline constexpr Dist kAdversarialDists[] = {Dist::zipf,     Dist::power_law,   Dist::hot_bin,   Dist::sawtooth,
                                             Dist::strided,  Dist::sorted_runs, Dist::every_edge};

inline std::string_view to_string(Dist d) {
  switch (d) {
    case Dist::uniform_full: return "uniform_full";
    case Dist::uniform_window: return "uniform_window";
    case Dist::zeros: return "zeros";
    case Dist::one_value: return "one_value";
    case Dist::distinct2: return "distinct2";
    case Dist::distinct4: return "distinct4";
    case Dist::distinct16: return "distinct16";
    case Dist::ramp: return "ramp";
    case Dist::geometric: return "geometric";
    case Dist::on_edges: return "on_edges";
    case Dist::specials: return "specials";
    case Dist::zipf: return "zipf";
    case Dist::power_law: return "power_law";
    case Dist::hot_bin: return "hot_bin";
    case Dist::sawtooth: return "sawtooth";
    case Dist::strided: return "strided";
    case Dist::sorted_runs: return "sorted_runs";
    case Dist::every_edge: return "every_edge";
  }
  return "?";
}

inline bool dist_applies(Dist d, SampleType type) { return d != Dist::specials || !is_integer(type); }

// The distributions that make sense for `type`.
inline std::vector<Dist> dists_for(SampleType type) {
  std::vector<Dist> out;
  for (Dist d : kAllDists)
    if (dist_applies(d, type)) out.push_back(d);
  return out;
}

// A closed interval of sample values, as doubles.
struct Window {
  double lo;
  double hi;
};

// The type's own range ([-1000, 1000] for floats, whose full range is covered by Dist::uniform_full).
inline Window full_window(SampleType type) {
  return visit_sample_type(type, [](auto tag) -> Window {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>)
      return {static_cast<double>(std::numeric_limits<T>::min()), static_cast<double>(std::numeric_limits<T>::max())};
    else
      return {-1000.0, 1000.0};
  });
}

// The binning's range widened by a quarter of its width on each side (so
// underflow and overflow get samples), clamped to what `type` can hold.
inline Window window_around(const Binning& b, SampleType type) {
  const double w = b.upper() - b.lower();
  double lo = b.lower() - w / 4, hi = b.upper() + w / 4;
  return visit_sample_type(type, [&](auto tag) -> Window {
    using T = typename decltype(tag)::type;
    const double tmin = static_cast<double>(std::numeric_limits<T>::lowest());
    const double tmax = static_cast<double>(std::numeric_limits<T>::max());
    double l = std::clamp(lo, tmin, tmax), h = std::clamp(hi, tmin, tmax);
    if constexpr (std::is_integral_v<T>) {
      l = std::ceil(l);
      h = std::floor(h);
      if (l > h) l = h = std::clamp(std::round(b.lower()), tmin, tmax);
    }
    return {l, h};
  });
}

// What to generate. `binning` (optional) supplies the edges for on_edges and specials.
struct GenSpec {
  SampleType type;
  Dist dist;
  std::uint64_t n;
  std::uint64_t seed;
  Window window;
  const Binning* binning = nullptr;
};

inline std::string describe(const GenSpec& g) {
  std::ostringstream s;
  s.precision(17);
  s << to_string(g.type) << " samples, dist " << to_string(g.dist) << ", n " << g.n << ", seed " << g.seed
    << " (base seed " << base_seed() << ", set LEVELHIST_TEST_SEED to change it), window [" << g.window.lo << ", "
    << g.window.hi << "]";
  return s.str();
}

namespace detail {

template <class T>
T clamp_to(double v) {
  if constexpr (std::is_integral_v<T>) {
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (!(v >= lo)) return std::numeric_limits<T>::min();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(std::floor(v));
  } else {
    // Out-of-range double -> float conversions are undefined: saturate finite values.
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<T>::max()))
      return v > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
    return static_cast<T>(v);
  }
}

template <class T>
T uniform_in(std::mt19937_64& rng, Window w) {
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<long long> d(static_cast<long long>(w.lo), static_cast<long long>(w.hi));
    return static_cast<T>(d(rng));
  } else {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    double v = std::isfinite(w.hi - w.lo) ? w.lo + u * (w.hi - w.lo) : w.lo * (1 - u) + w.hi * u;
    return clamp_to<T>(v);
  }
}

template <class T>
T random_full(std::mt19937_64& rng) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(rng());
  } else {
    using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    for (;;) {
      T x = std::bit_cast<T>(static_cast<U>(rng()));
      if (std::isfinite(x)) return x;
    }
  }
}

// A value on or right next to a randomly chosen edge of `b` (or of the window).
template <class T>
T near_edge(std::mt19937_64& rng, const Binning* b, Window w) {
  double e;
  if (b) {
    const std::uint64_t i = std::uniform_int_distribution<std::uint64_t>(0, b->bins())(rng);
    e = b->edge(i);
  } else {
    e = (rng() & 1) ? w.lo : w.hi;
  }
  const int pick = static_cast<int>(rng() % 4);
  if constexpr (std::is_integral_v<T>) {
    const double candidates[4] = {std::floor(e) - 1, std::floor(e), std::ceil(e), std::ceil(e) + 1};
    return clamp_to<T>(candidates[pick]);
  } else {
    const T t = clamp_to<T>(e);
    const T inf = std::numeric_limits<T>::infinity();
    switch (pick) {
      case 0: return std::nextafter(t, -inf);
      case 1: return std::nextafter(t, inf);
      default: return t;  // exactly the edge (as exactly as T can hold it)
    }
  }
}

template <class T>
T extreme(std::mt19937_64& rng) {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_integral_v<T>) {
    const T v[] = {L::min(), static_cast<T>(L::min() + 1), L::max(), static_cast<T>(L::max() - 1), T(0), T(1)};
    return v[rng() % std::size(v)];
  } else {
    const T v[] = {L::max(), L::lowest(), L::min(), -L::min(), L::denorm_min(), -L::denorm_min(), T(0), -T(0), T(1), T(-1)};
    return v[rng() % std::size(v)];
  }
}

template <class T>
T nan_variant(std::mt19937_64& rng) {
  using L = std::numeric_limits<T>;
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  switch (rng() % 4) {
    case 0: return L::quiet_NaN();
    case 1: return -L::quiet_NaN();
    case 2: return L::signaling_NaN();
    default: {  // a quiet NaN with a random payload and sign
      constexpr int mant = L::digits - 1;
      const U exp_all = ((U{1} << (sizeof(T) * 8 - 1 - mant)) - 1) << mant;
      const U payload = static_cast<U>(rng()) & ((U{1} << mant) - 1);
      const U sign = static_cast<U>(rng() & 1) << (sizeof(T) * 8 - 1);
      return std::bit_cast<T>(static_cast<U>(sign | exp_all | (U{1} << (mant - 1)) | payload));
    }
  }
}

// ---- the adversarial shapes' bins ----

// Bins the adversarial shapes spread over: the binning's, or 256 equal parts of the window.
inline std::uint64_t shape_bins(const Binning* b) { return b ? b->bins() : 256; }

// Edge i (0..shape_bins) of those bins.
inline double shape_edge(const Binning* b, Window w, std::uint64_t i) {
  if (b) return b->edge(i);
  return i >= 256 ? w.hi : w.lo + (w.hi - w.lo) * static_cast<double>(i) / 256.0;
}

// A value of T in bin i: the bin's middle for floats, its lower edge rounded up
// for integers. A bin narrower than T's resolution gets the nearest value T has
// (which may lie in a neighbouring bin: still the same skew).
template <class T>
T value_in_bin(const Binning* b, Window w, std::uint64_t i) {
  const double lo = shape_edge(b, w, i), hi = shape_edge(b, w, i + 1);
  if constexpr (std::is_integral_v<T>) {
    return clamp_to<T>(std::ceil(lo));
  } else {
    const double mid = std::isfinite(hi - lo) ? lo + (hi - lo) / 2 : lo / 2 + hi / 2;
    return clamp_to<T>(mid);
  }
}

// A rank in [1, k] with probability ~ 1/r^s (s > 1): the inverse of the
// continuous power law on [1, k + 1), rounded down.
inline std::uint64_t power_law_rank(std::mt19937_64& rng, std::uint64_t k, double s) {
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  const double top = std::pow(static_cast<double>(k) + 1.0, 1.0 - s);
  const double x = std::pow(1.0 - u * (1.0 - top), 1.0 / (1.0 - s));
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(x), 1, k);
}

template <class T>
std::vector<T> generate_typed(const GenSpec& g) {
  std::mt19937_64 rng(g.seed);
  std::vector<T> out(g.n);
  const Window w = g.window;
  auto u01 = [&] { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); };
  switch (g.dist) {
    case Dist::uniform_full:
      for (auto& x : out) x = random_full<T>(rng);
      break;
    case Dist::uniform_window:
      for (auto& x : out) x = uniform_in<T>(rng, w);
      break;
    case Dist::zeros:
      std::fill(out.begin(), out.end(), T(0));
      break;
    case Dist::one_value:
      std::fill(out.begin(), out.end(), uniform_in<T>(rng, w));
      break;
    case Dist::distinct2:
    case Dist::distinct4:
    case Dist::distinct16: {
      const std::size_t k = g.dist == Dist::distinct2 ? 2 : g.dist == Dist::distinct4 ? 4 : 16;
      std::vector<T> values;
      for (int attempt = 0; values.size() < k && attempt < 1000; ++attempt) {
        T v = uniform_in<T>(rng, w);
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      }
      while (values.size() < k) values.push_back(values.empty() ? T(0) : values.front());  // tiny window
      for (auto& x : out) x = values[rng() % k];
      break;
    }
    case Dist::ramp:
      for (std::uint64_t i = 0; i < g.n; ++i) {
        if constexpr (std::is_integral_v<T>) {
          const auto lo = static_cast<long long>(w.lo);
          const auto span = static_cast<unsigned long long>(static_cast<long long>(w.hi) - lo);
          const unsigned __int128 step = g.n > 1 ? static_cast<unsigned __int128>(span) * i / (g.n - 1) : 0;
          out[i] = static_cast<T>(lo + static_cast<long long>(step));
        } else {
          const double f = g.n > 1 ? static_cast<double>(i) / static_cast<double>(g.n - 1) : 0.0;
          out[i] = clamp_to<T>(w.lo + (w.hi - w.lo) * f);
        }
      }
      break;
    case Dist::geometric: {
      const double width = w.hi - w.lo + (std::is_integral_v<T> ? 1.0 : 0.0);
      if constexpr (std::is_integral_v<T>) {
        std::geometric_distribution<long long> d(std::clamp(16.0 / width, 1e-9, 0.5));
        for (auto& x : out) x = clamp_to<T>(w.lo + static_cast<double>(d(rng)));
      } else {
        std::exponential_distribution<double> d(std::isfinite(width) && width > 0 ? 16.0 / width : 1.0);
        for (auto& x : out) x = clamp_to<T>(w.lo + d(rng));
      }
      break;
    }
    case Dist::on_edges:
      for (auto& x : out) {
        const double r = u01();
        x = r < 0.7 ? near_edge<T>(rng, g.binning, w) : r < 0.85 ? extreme<T>(rng) : uniform_in<T>(rng, w);
      }
      break;
    case Dist::specials:
      if constexpr (std::is_integral_v<T>) {
        throw std::invalid_argument("Dist::specials is for float samples only");
      } else {
        for (auto& x : out) {
          const double r = u01();
          if (r < 0.15) x = nan_variant<T>(rng);
          else if (r < 0.22) x = std::numeric_limits<T>::infinity();
          else if (r < 0.29) x = -std::numeric_limits<T>::infinity();
          else if (r < 0.37) x = extreme<T>(rng);
          else if (r < 0.75) x = near_edge<T>(rng, g.binning, w);
          else x = uniform_in<T>(rng, w);
        }
      }
      break;
    case Dist::zipf: {
      // Rank r goes to bin (first + (r - 1) * 1000003) mod k: a bijection (the
      // multiplier is a prime that divides no bin count used), so the hot bins
      // are scattered, not neighbours.
      const std::uint64_t k = shape_bins(g.binning), first = rng() % k;
      for (auto& x : out) {
        const std::uint64_t r = power_law_rank(rng, k, 1.1);
        x = value_in_bin<T>(g.binning, w, (first + (r - 1) % k * (1000003 % k)) % k);
      }
      break;
    }
    case Dist::power_law: {
      const std::uint64_t k = shape_bins(g.binning);
      for (auto& x : out) x = value_in_bin<T>(g.binning, w, power_law_rank(rng, k, 2.0) - 1);
      break;
    }
    case Dist::hot_bin: {
      const T hot = value_in_bin<T>(g.binning, w, rng() % shape_bins(g.binning));
      for (auto& x : out) x = rng() % 1000 == 0 ? uniform_in<T>(rng, w) : hot;
      break;
    }
    case Dist::sawtooth: {
      constexpr std::uint64_t kTooth = 4099;  // prime: no tooth lines up with a warp, block or vector
      for (std::uint64_t i = 0; i < g.n; ++i) {
        const double f = static_cast<double>(i % kTooth) / static_cast<double>(kTooth - 1);
        out[i] = clamp_to<T>(std::isfinite(w.hi - w.lo) ? w.lo + (w.hi - w.lo) * f : w.lo * (1 - f) + w.hi * f);
      }
      break;
    }
    case Dist::strided: {
      // Every 32nd value: 32 counters apart is the same bank of 32 four-byte
      // banks, the pattern a shared-memory histogram serializes on.
      constexpr std::uint64_t kStride = 32;
      if constexpr (std::is_integral_v<T>) {
        const auto values = static_cast<unsigned __int128>(static_cast<long long>(w.hi) - static_cast<long long>(w.lo)) + 1;
        for (std::uint64_t i = 0; i < g.n; ++i)
          out[i] = static_cast<T>(static_cast<long long>(w.lo) +
                                  static_cast<long long>(static_cast<unsigned __int128>(i) * kStride % values));
      } else {
        const std::uint64_t k = shape_bins(g.binning);
        for (std::uint64_t i = 0; i < g.n; ++i) out[i] = value_in_bin<T>(g.binning, w, i * kStride % k);
      }
      break;
    }
    case Dist::sorted_runs:
      for (std::uint64_t at = 0; at < g.n;) {
        const std::uint64_t run = std::min<std::uint64_t>(g.n - at, 1 + rng() % 8192);
        for (std::uint64_t i = at; i < at + run; ++i) out[i] = uniform_in<T>(rng, w);
        std::sort(out.begin() + static_cast<std::ptrdiff_t>(at), out.begin() + static_cast<std::ptrdiff_t>(at + run));
        at += run;
      }
      break;
    case Dist::every_edge: {
      // Sample i: neighbour i % 3 of edge j, the edges visited in order (and
      // spread evenly over 0..k when there are more edges than n / 3).
      const std::uint64_t edges = shape_bins(g.binning) + 1, visits = std::max<std::uint64_t>(1, (g.n + 2) / 3);
      for (std::uint64_t i = 0; i < g.n; ++i) {
        const std::uint64_t v = i / 3;
        const std::uint64_t j = edges <= visits ? v % edges
                                                : static_cast<std::uint64_t>(static_cast<unsigned __int128>(v) * edges / visits);
        const double e = shape_edge(g.binning, w, j);
        if constexpr (std::is_integral_v<T>) {
          out[i] = clamp_to<T>(std::ceil(e) + static_cast<double>(i % 3) - 1.0);
        } else {
          const T t = clamp_to<T>(e);
          const T inf = std::numeric_limits<T>::infinity();
          out[i] = i % 3 == 0 ? std::nextafter(t, -inf) : i % 3 == 1 ? t : std::nextafter(t, inf);
        }
      }
      break;
    }
  }
  return out;
}

}  // namespace detail

// n samples of g.type as raw bytes (n * sample_size(type) of them, host byte order).
inline std::vector<unsigned char> generate(const GenSpec& g) {
  return visit_sample_type(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> v = detail::generate_typed<T>(g);
    std::vector<unsigned char> bytes(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
  });
}

// Typed convenience.
template <class T>
std::vector<T> generate_as(Dist dist, std::uint64_t n, std::uint64_t seed, Window window,
                           const Binning* binning = nullptr) {
  return detail::generate_typed<T>(GenSpec{sample_type_of<T>(), dist, n, seed, window, binning});
}

// ---------------------------------------------------------------------------
// A standard set of binnings per sample type: even bins 1, 7, 256, 4096 and
// 65536 over ranges that make sense for the type (some narrower than the
// type's range, so underflow and overflow are non-zero; some with bounds or
// edges that are not integers or not exactly representable), per-value bins
// for 8/16-bit types, unit-width integer bins over part of the range (the
// x - lower fast path), uneven explicit edges, and numpy's last-bin-inclusive
// rule for both kinds.

struct NamedBinning {
  std::string name;  // [a-z0-9_], usable in test names
  Binning binning;
};

inline std::vector<NamedBinning> standard_binnings(SampleType type) {
  std::vector<NamedBinning> out;
  if (is_integer(type)) {
    const Window f = full_window(type);
    const double mn = f.lo, mx = f.hi, w = mx - mn + 1;  // w: number of values
    out.push_back({"one_bin_full", Binning::even(1, mn, mx + 1)});
    out.push_back({"even7_narrow", Binning::even(7, mn + 0.1 * w + 0.25, mx - 0.1 * w)});
    out.push_back({"even256_full", Binning::even(256, mn, mx + 1)});
    out.push_back({"even4096_narrow", Binning::even(4096, mn + 0.3 * w, mn + 0.7 * w)});
    out.push_back({"even65536_full", Binning::even(65536, mn, mx + 1)});
    if (sample_size(type) <= 2) out.push_back({"per_value", Binning::per_value(type)});
    {
      const double k = std::min(w / 2, 1000.0), a = mn + std::floor(w / 4);
      out.push_back({"unit_narrow", Binning::even(static_cast<std::uint64_t>(k), a, a + k)});
    }
    {
      const double fr[] = {0.0, 0.01, 0.0105, 0.2, 0.5, 0.77, 0.999};
      std::vector<double> e;
      for (std::size_t i = 0; i < std::size(fr); ++i) {
        double v = mn + fr[i] * w;
        v = (i % 2 == 1) ? std::round(v) : (i == 0 ? v : v + 0.5);
        if (e.empty() || v > e.back()) e.push_back(v);
      }
      out.push_back({"explicit_uneven", Binning::explicit_edges(e)});
    }
    out.push_back({"even5_full_inclusive", Binning::even(5, mn, mx, true)});
    out.push_back({"explicit_inclusive", Binning::explicit_edges({mn, std::round(mn + w / 3), mx}, true)});
  } else {
    out.push_back({"one_bin", Binning::even(1, -1.0, 1.0)});
    out.push_back({"even7", Binning::even(7, -1000.0, 1000.0)});
    out.push_back({"even256_unit", Binning::even(256, 0.0, 256.0)});
    out.push_back({"even4096_wide", Binning::even(4096, -1e9, 1e9)});
    out.push_back({"even65536", Binning::even(65536, -3.5, 1000.25)});
    out.push_back({"ten_bins_unit_range", Binning::even(10, 0.0, 1.0)});
    out.push_back({"three_bins", Binning::even(3, 0.1, 0.7)});
    out.push_back({"explicit_uneven",
                   Binning::explicit_edges({-1e30, -1000, -1, -0.1, 0, 1e-300, 0.1, 0.7, 1, 3, 1e30})});
    out.push_back({"even10_inclusive", Binning::even(10, 0.0, 1.0, true)});
    out.push_back({"explicit_inclusive", Binning::explicit_edges({-2, -0.5, 0, 0.25, 1}, true)});
    // numpy's edges for float32 samples (EdgeRounding).
    out.push_back({"ten_bins_float32_edges", Binning::even(10, 0.0, 1.0, true, EdgeRounding::f32)});
    out.push_back({"even1000_edges_in_float32", Binning::even(1000, -0.3, 0.7, false, EdgeRounding::f32_arithmetic)});
  }
  return out;
}

// The bin counts of the adversarial axis: 1, 33, 2048, 16384 and 2,000,003
// even bins over most of the type's range (so some samples fall below and
// above; for 8-bit types many bins are narrower than one value), and 33, 2048
// and 16384 uneven explicit edges (quadratic spacing: narrow bins low, wide
// ones high) over all of it.
inline std::vector<NamedBinning> adversarial_binnings(SampleType type) {
  const Window f = is_integer(type) ? full_window(type) : Window{-1000.0, 1000.0};
  const double width = f.hi - f.lo + (is_integer(type) ? 1.0 : 0.0);
  const double lower = is_integer(type) ? f.lo + std::floor(width / 16) : -3.5;
  const double upper = is_integer(type) ? f.hi + 1 - std::floor(width / 16) : 1000.25;
  std::vector<NamedBinning> out;
  for (std::uint64_t k : {std::uint64_t{1}, std::uint64_t{33}, std::uint64_t{2048}, std::uint64_t{16384},
                          std::uint64_t{2000003}})
    out.push_back({"even" + std::to_string(k), Binning::even(k, lower, upper)});
  for (std::uint64_t k : {std::uint64_t{33}, std::uint64_t{2048}, std::uint64_t{16384}}) {
    std::vector<double> edges(k + 1);
    for (std::uint64_t i = 0; i <= k; ++i) {
      const double t = static_cast<double>(i) / static_cast<double>(k);
      edges[i] = f.lo + width * t * t;
    }
    out.push_back({"edges" + std::to_string(k), Binning::explicit_edges(edges)});
  }
  return out;
}

// ---------------------------------------------------------------------------
// Buffers.

// Host bytes starting `offset` bytes after a 64-byte aligned address, in an
// allocation that ends exactly at the last byte, so AddressSanitizer sees any
// read past the end; under ASan the whole 8-byte granules before the start
// are poisoned as well.
class SampleBuffer {
 public:
  SampleBuffer(const void* src, std::size_t bytes, std::size_t offset) : bytes_(bytes), offset_(offset) {
    if (offset >= 64) throw std::invalid_argument("SampleBuffer: offset must be < 64");
    base_ = static_cast<unsigned char*>(::operator new(offset + std::max<std::size_t>(bytes, 1), std::align_val_t{64}));
    std::memset(base_, 0xCD, offset);
    if (bytes) std::memcpy(base_ + offset, src, bytes);
#if defined(LEVELHIST_TEST_ASAN)
    ASAN_POISON_MEMORY_REGION(base_, offset & ~std::size_t{7});
#endif
  }
  SampleBuffer(const std::vector<unsigned char>& v, std::size_t offset) : SampleBuffer(v.data(), v.size(), offset) {}
  SampleBuffer(const SampleBuffer&) = delete;
  SampleBuffer& operator=(const SampleBuffer&) = delete;
  ~SampleBuffer() {
#if defined(LEVELHIST_TEST_ASAN)
    ASAN_UNPOISON_MEMORY_REGION(base_, offset_);
#endif
    ::operator delete(base_, std::align_val_t{64});
  }
  const void* data() const { return base_ + offset_; }
  void* data() { return base_ + offset_; }
  std::size_t size() const { return bytes_; }
  std::size_t offset() const { return offset_; }

 private:
  unsigned char* base_;
  std::size_t bytes_;
  std::size_t offset_;
};

// ---------------------------------------------------------------------------
// Strategies.

// Every CPU strategy in the registry, in registry order (cpu_serial included).
inline std::vector<const Strategy*> cpu_strategies() {
  std::vector<const Strategy*> out;
  for (const Strategy* s : all_strategies())
    if (s->backend == Backend::cpu) out.push_back(s);
  return out;
}

inline const Strategy& reference_strategy() { return strategies::cpu_serial; }

// Runs a CPU strategy the way levelhist::fill (src/core/api.cpp) does, but with
// the caller's accumulate flag and thread count, a workspace of exactly
// workspace_bytes(problem) bytes (256-byte aligned, filled with garbage since
// its contents are undefined on entry), and the caller's slots.
// Returns false (and sets *why_not) if the strategy does not support the problem.
inline bool run_cpu_strategy(const Strategy& s, SampleType type, const void* samples, std::uint64_t n,
                             const Binning& binning, std::span<std::uint64_t> slots, bool accumulate,
                             unsigned threads, std::string* why_not = nullptr) {
  if (s.backend != Backend::cpu) throw std::invalid_argument(std::string("not a CPU strategy: ") + s.name);
  if (slots.size() != binning.slots()) throw std::invalid_argument("run_cpu_strategy: slots.size() != binning.slots()");
  const Problem problem{type, &binning, n};
  std::string why;
  if (!strategy_accepts(s, problem, &why)) {  // the library's own support test (capabilities + supports)
    if (why_not) *why_not = why;
    return false;
  }
  const std::size_t bytes = s.workspace_bytes ? s.workspace_bytes(problem) : 0;
  struct Free {
    void operator()(void* p) const { ::operator delete(p, std::align_val_t{256}); }
  };
  std::unique_ptr<void, Free> workspace;
  if (bytes) {
    workspace.reset(::operator new(bytes, std::align_val_t{256}));
    std::memset(workspace.get(), 0xA5, bytes);
  }
  RunArgs args{};
  args.samples = samples;
  args.n = n;
  args.type = type;
  args.binning = &binning;
  args.indexer = make_indexer(binning);
  args.slots = slots.data();
  args.accumulate = accumulate;
  args.workspace = workspace.get();
  args.workspace_bytes = bytes;
  args.threads = threads;
  args.stream = nullptr;
  s.run(args);
  return true;
}

// The reference counts (cpu_serial into zeroed slots).
inline std::vector<std::uint64_t> reference_slots(SampleType type, const void* samples, std::uint64_t n,
                                                  const Binning& binning) {
  std::vector<std::uint64_t> slots(binning.slots(), 0);
  run_cpu_strategy(reference_strategy(), type, samples, n, binning, slots, /*accumulate=*/false, 1);
  return slots;
}

// A test-parameter name made of [A-Za-z0-9_] only.
inline std::string param_name(std::string_view s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out.empty() ? std::string("_") : out;
}

// ---------------------------------------------------------------------------
// Comparing.

inline std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// "bin 3 [0.29999999999999999, 0.40000000000000002)", "underflow", ...
inline std::string slot_name(const Binning& b, std::uint64_t slot) {
  if (slot < b.bins()) {
    const bool last = slot + 1 == b.bins();
    return "bin " + std::to_string(slot) + " [" + format_double(b.edge(slot)) + ", " + format_double(b.edge(slot + 1)) +
           (last && b.last_bin_inclusive() ? "]" : ")");
  }
  if (slot == b.underflow_slot()) return "underflow";
  if (slot == b.overflow_slot()) return "overflow";
  if (slot == b.nan_slot()) return "nan";
  return "slot " + std::to_string(slot) + " (out of range)";
}

// Slot for slot equality, with a message naming the first differing slots,
// what they are, and the totals.
inline ::testing::AssertionResult slots_equal(std::span<const std::uint64_t> expected,
                                              std::span<const std::uint64_t> actual, const Binning& binning) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << "slot counts differ: expected " << expected.size() << " slots, got "
                                         << actual.size() << " (" << binning.describe() << ")";
  std::uint64_t differing = 0, shown = 0, total_expected = 0, total_actual = 0;
  std::ostringstream msg;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    total_expected += expected[i];
    total_actual += actual[i];
    if (expected[i] == actual[i]) continue;
    ++differing;
    if (shown < 8) {
      ++shown;
      msg << "\n  slot " << i << " = " << slot_name(binning, i) << ": expected " << expected[i] << ", got "
          << actual[i];
    }
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differing << " of " << expected.size() << " slots differ ("
                                       << binning.describe() << "), first " << shown << ":" << msg.str()
                                       << "\n  sum of all slots: expected " << total_expected << ", got "
                                       << total_actual;
}

inline ::testing::AssertionResult histograms_equal(const Histogram& expected, const Histogram& actual) {
  if (!(expected.binning() == actual.binning()))
    return ::testing::AssertionFailure() << "binnings differ: expected " << expected.binning().describe() << ", got "
                                         << actual.binning().describe();
  return slots_equal(expected.slots(), actual.slots(), expected.binning());
}

// Expects fn() to throw levelhist::Error of `kind` with a non-empty message
// that contains `needle` (when given). Shared by the API, binning and general tests.
inline ::testing::AssertionResult throws_error(const std::function<void()>& fn, ErrorKind kind,
                                               const std::string& needle = "") {
  try {
    fn();
  } catch (const Error& e) {
    const std::string what = e.what();
    if (e.kind() != kind)
      return ::testing::AssertionFailure() << "threw Error of kind " << static_cast<int>(e.kind()) << " (expected "
                                           << static_cast<int>(kind) << "): " << what;
    if (what.empty()) return ::testing::AssertionFailure() << "threw Error with an empty message";
    if (!needle.empty() && what.find(needle) == std::string::npos)
      return ::testing::AssertionFailure() << "message '" << what << "' does not mention '" << needle << "'";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something other than levelhist::Error: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace levelhist::test

namespace levelhist {
// Test parameters that are strategies print as their names (GoogleTest finds this by ADL).
inline void PrintTo(const Strategy* s, std::ostream* os) { *os << (s ? s->name : "(null strategy)"); }
}  // namespace levelhist
