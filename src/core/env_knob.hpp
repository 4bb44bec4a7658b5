// A tuning knob from the environment: a whole number, clamped to [lo, hi];
// `fallback` when the variable is unset, empty or not a number. The defaults
// are what the docs measured; the environment lets the benchmark and the
// tests measure others without a rebuild.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace levelhist::detail {

inline std::uint64_t env_knob(const char* name, std::uint64_t fallback, std::uint64_t lo, std::uint64_t hi) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end != '\0') return fallback;
  return std::clamp<std::uint64_t>(v, lo, hi);
}

}  // namespace levelhist::detail
