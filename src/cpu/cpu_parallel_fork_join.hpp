// The fork/join of cpu_parallel (000_c3bc3bf1a09915a1.txt: one thread per
// part, the calling thread taking part 0, then wait for all). The CPU
// benchmark runs its reference counters through the same function, so they
// pay the same thread start-up and join costs.
#pragma once
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace levelhist::cpu_parallel_detail {

// Runs part(0) .. part(parts - 1): part 0 on the calling thread, the others on
// new threads (or on the calling thread after part 0 if a thread cannot be
// started). Rethrows the first exception once every part has finished.
template <class Part>
void fork_join(unsigned parts, const Part& part) {
  std::exception_ptr error;
  std::mutex error_mutex;
  auto guarded = [&](unsigned index) {
    try {
      part(index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  unsigned started = 1;
  try {
    pool.reserve(parts - 1);
    for (; started < parts; ++started) pool.emplace_back(guarded, started);
  } catch (const std::exception&) {
    // Out of threads or memory: the parts not started run below.
  }
  guarded(0);
  for (unsigned index = started; index < parts; ++index) guarded(index);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// The first sample of part `index` (0 <= index <= parts) when n samples are
// split into `parts` contiguous parts of nearly equal size: floor(n * index /
// parts), computed without overflow.
inline std::uint64_t part_begin(std::uint64_t n, unsigned parts, unsigned index) {
  return n / parts * index + n % parts * index / parts;
}

}  // namespace levelhist::cpu_parallel_detail
