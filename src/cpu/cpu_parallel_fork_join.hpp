// The fork/join of cpu_parallel (000_c3bc3bf1a09915a1.txt: one thread per
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
class ChunkQueue {
 public:
  // n items in chunks of `chunk` items (chunk >= 1).
  ChunkQueue(std::uint64_t n, std::uint64_t chunk) : n_(n), chunk_(chunk), chunks_(n / chunk + (n % chunk != 0)) {}

  // The next chunk [begin, end), or false when none is left.
  bool next(std::uint64_t& begin, std::uint64_t& end) {
    const std::uint64_t i = taken_.fetch_add(1, std::memory_order_relaxed);
    if (i >= chunks_) return false;
    begin = i * chunk_;
    end = std::min(n_, begin + chunk_);
    return true;
  }

 private:
  const std::uint64_t n_, chunk_, chunks_;
  std::atomic<std::uint64_t> taken_{0};
};

// Chunks per worker: enough that the workers finish close together even when
// one shares its core, few enough that taking a chunk costs nothing.
inline constexpr std::uint64_t kChunksPerWorker = 16;

// The chunk size for n items over `workers` workers: about n / (workers *
// kChunksPerWorker), within [min_chunk, max_chunk].
inline std::uint64_t chunk_size(std::uint64_t n, unsigned workers, std::uint64_t min_chunk,
                                std::uint64_t max_chunk) {
  const std::uint64_t parts = std::uint64_t{workers} * kChunksPerWorker;
  return std::clamp(n / parts + (n % parts != 0), min_chunk, max_chunk);
}

}  // namespace levelhist::cpu_parallel_detail
