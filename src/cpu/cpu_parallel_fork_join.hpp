// The fork/join of cpu_parallel (Wilt part 2: one thread per
// core, each with its own histogram, then wait for all) and the queue that
// hands the workers their chunks of the input. The CPU benchmark runs its
// reference counters through the same two, so they pay the same thread
// start-up, scheduling and join costs.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace levelhist::cpu_parallel_detail {

// The machine's cores, asked once per process: hardware_concurrency() reads
// the system's CPU list on every call (65 us a call on a loaded 2-core
// machine, 200 times the counting of a small call).
inline unsigned hardware_cores() {
  static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return cores;
}
// The threads an Options::threads of `threads` asks for (0: every core).
inline unsigned threads_or_cores(unsigned threads) { return threads ? threads : hardware_cores(); }

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

// Hands out [0, n) in chunks, in order, to whichever worker asks next. With
// one fixed part per worker, a worker whose core is also running something
// else holds up the join; taking chunks from a queue, it just takes fewer.
// The chunks shrink as the input runs out (guided self-scheduling: a chunk is
// a 1 / (2 * workers) share of what is left, within [min_chunk, max_chunk]),
// so the workers also finish within a small chunk of each other.
class ChunkQueue {
 public:
  ChunkQueue(std::uint64_t n, unsigned workers, std::uint64_t min_chunk, std::uint64_t max_chunk)
      : n_(n), shares_(2 * std::uint64_t{workers}), min_chunk_(std::max<std::uint64_t>(1, min_chunk)),
        max_chunk_(std::max(min_chunk_, max_chunk)) {}

  // The next chunk [begin, end), or false when none is left.
  bool next(std::uint64_t& begin, std::uint64_t& end) {
    std::uint64_t at = taken_.load(std::memory_order_relaxed);
    while (at < n_) {
      const std::uint64_t left = n_ - at;
      const std::uint64_t take = std::min(left, std::clamp(left / shares_, min_chunk_, max_chunk_));
      if (taken_.compare_exchange_weak(at, at + take, std::memory_order_relaxed)) {
        begin = at;
        end = at + take;
        return true;
      }
    }
    return false;
  }

 private:
  const std::uint64_t n_, shares_, min_chunk_, max_chunk_;
  std::atomic<std::uint64_t> taken_{0};
};

}  // namespace levelhist::cpu_parallel_detail
