// The CPU backend's reading of a Source (Plan::fill from a file or a pipe):
// reading overlapped with counting.
//
// Each worker thread owns one buffer and its own counters. It takes a turn at
// reading (fills its buffer), then counts the whole buffer on its own (the
// plan's strategy with one thread, into its private counters) while the other
// workers read and count theirs; the private counters are added together
// once the whole source is counted. The buffer is small enough to stay in the
// core's cache between the read that fills it and the counting that reads it.
//  * A positional source (a regular file): the workers take the next
//    buffer-sized range from a shared counter and pread it, so several reads
//    run at once and no reader waits for another.
//  * Any other source (a pipe): reads must follow each other, so a worker
//    reads under a lock, leaves the partial item at the end of its buffer for
//    the next reader, and counts after releasing the lock; the next worker is
//    already reading. One worker per buffer rather than one reader thread
//    feeding a ring of buffers to counting threads: the same overlap with one
//    hand-off (the read turn) instead of two queues, and no thread that only
//    reads to compete with the counters for one of few cores. (A ring was not
//    built to compare.)
// A worker that fails (a read error, a file that shrank) stops the others at
// their next buffer; the error is rethrown once all have finished, and the
// call's output is left alone (Plan::fill_slots then adds nothing).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "core/plan_impl.hpp"
#include "cpu/cpu_parallel_fork_join.hpp"
#include "levelhist/error.hpp"
#include "levelhist/source.hpp"

namespace levelhist::detail {
namespace {

using cpu_parallel_detail::fork_join;

// A worker's buffer: large enough that a read and a strategy call per buffer
// cost little beside the copying and counting of its bytes, small enough that
// what the read wrote is still in the core's L2 cache when it is counted.
// Measured from 128 KiB to 8 MiB (docs/BENCHMARKS.md, "Files and pipes on
// the CPU path"): 512 KiB the fastest, 256 KiB to 2 MiB within 6%, 8 MiB 20%
// slower.
constexpr std::size_t kBufferBytes = std::size_t{512} << 10;
// 16-bit samples: cpu_parallel counts a call's samples into 65536 raw-value
// counters that it clears, fills and maps to slots on every call, which costs
// as much as counting about a million samples; buffers of 16M samples keep it
// to a few percent (with 512 KiB buffers, 2.8x the old whole-file count's time).
constexpr std::size_t kBufferBytes16 = std::size_t{32} << 20;
// The workers' private counters together stay within this; fewer workers run
// when more would exceed it (one worker counts into the output directly).
constexpr std::uint64_t kPrivateCountersBudgetBytes = std::uint64_t{256} << 20;

std::unique_ptr<unsigned char[]> buffer_of(std::size_t bytes) {
  try {
    return std::unique_ptr<unsigned char[]>(new unsigned char[bytes]);  // not zeroed: read into at once
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::resource, "out of memory for a " + std::to_string(bytes) + "-byte read buffer",
                "free memory, or count with fewer threads", ErrorSubject::memory);
  }
}

// What the workers share.
struct Reading {
  const Plan::Impl& plan;
  Source& source;
  std::size_t item;         // bytes of one sample or pixel
  std::size_t buffer;       // bytes per buffer, a whole number of items
  std::uint64_t slots;      // output_slots()
  std::atomic<bool> failed{false};

  // Counts `items` items at p into `counters` (added to), single-threaded.
  void count(const unsigned char* p, std::size_t items, std::uint64_t* counters) const {
    const Input input = plan.request.is_pixels() ? Input::image(p, items, 1) : Input::array(p, items);
    cpu_fill(plan, geometry_of(plan.request, input), input, counters, true, 1);
  }
};

// Runs `work(buffer, counters)` on `workers` threads, each with its own
// buffer and counters (the output itself when there is one worker), then adds
// the counters into `out` (overwritten). The first failure stops the others
// at their next buffer.
template <class Work>
void run_workers(Reading& reading, unsigned workers, std::uint64_t* out, const Work& work) {
  std::fill(out, out + reading.slots, std::uint64_t{0});
  std::vector<std::vector<std::uint64_t>> counters(workers > 1 ? workers : 0);
  fork_join(workers, [&](unsigned w) {
    try {
      std::uint64_t* mine = out;
      if (workers > 1) {
        try {
          counters[w].assign(reading.slots, 0);
        } catch (const std::bad_alloc&) {
          throw Error(ErrorKind::resource, "out of memory for a thread's " + std::to_string(reading.slots) +
                      " counters", "count fewer bins, or with fewer threads", ErrorSubject::memory);
        }
        mine = counters[w].data();
      }
      const std::unique_ptr<unsigned char[]> buffer = buffer_of(reading.buffer);
      work(buffer.get(), mine);
    } catch (...) {
      reading.failed.store(true);
      throw;
    }
  });
  for (const auto& c : counters)
    for (std::uint64_t s = 0; s < reading.slots; ++s) out[s] += c[s];
}

// A positional source of `total` bytes: the workers pread buffer-sized ranges
// in the order they take them.
void read_positionally(Reading& reading, unsigned workers, std::uint64_t total, std::uint64_t* out) {
  // A small file needs no more buffer than it has bytes (a whole number of items).
  reading.buffer = static_cast<std::size_t>(
      std::clamp<std::uint64_t>(total, reading.item, reading.buffer));
  const std::uint64_t ranges = (total + reading.buffer - 1) / reading.buffer;
  workers = static_cast<unsigned>(std::clamp<std::uint64_t>(ranges, 1, workers));
  std::atomic<std::uint64_t> next{0};
  run_workers(reading, workers, out, [&](unsigned char* buffer, std::uint64_t* counters) {
    for (std::uint64_t r = next.fetch_add(1); r < ranges && !reading.failed.load(); r = next.fetch_add(1)) {
      const std::uint64_t at = r * reading.buffer;
      const std::size_t bytes = static_cast<std::size_t>(std::min<std::uint64_t>(reading.buffer, total - at));
      const std::size_t got = reading.source.read_at(buffer, bytes, at);
      if (got != bytes)  // FdSource says why itself (the file shrank); another source may just end
        throw Error(ErrorKind::input,
                    reading.source.name() + " ended after " + std::to_string(at + got) + " bytes; it had " +
                        std::to_string(total) + " when the count began",
                    "count it again once nothing is writing to it", ErrorSubject::data);
      reading.count(buffer, bytes / reading.item, counters);
    }
  });
}

// A source read in order: one worker at a time reads into its buffer; the
// partial item a read ends in goes to the front of the next reader's buffer.
// Returns the bytes read.
std::uint64_t read_in_turn(Reading& reading, unsigned workers, std::uint64_t* out) {
  std::mutex turn;  // guards everything below
  unsigned char partial[4 * sizeof(double)];  // < one item: at most 4 channels of 8 bytes
  std::size_t partial_bytes = 0;
  std::uint64_t total = 0;
  bool ended = false;
  if (reading.item > sizeof partial)
    throw Error(ErrorKind::internal, "an item of " + std::to_string(reading.item) + " bytes is larger than expected",
                "please report this bug");
  run_workers(reading, workers, out, [&](unsigned char* buffer, std::uint64_t* counters) {
    while (true) {
      std::size_t whole = 0;
      {
        std::lock_guard<std::mutex> lock(turn);
        if (ended || reading.failed.load()) return;
        std::memcpy(buffer, partial, partial_bytes);
        std::size_t have = partial_bytes;
        while (have < reading.buffer) {
          const std::size_t got = reading.source.read(buffer + have, reading.buffer - have);
          if (got == 0) {
            ended = true;
            break;
          }
          have += got;
          total += got;
        }
        whole = have / reading.item * reading.item;
        partial_bytes = have - whole;
        std::memcpy(partial, buffer + whole, partial_bytes);
      }
      if (whole != 0) reading.count(buffer, whole / reading.item, counters);
    }
  });
  if (partial_bytes != 0) throw_partial_item(reading.plan.request, reading.source, total);
  return total;
}

}  // namespace

std::size_t cpu_source_buffer_bytes(const Request& request) {
  const std::size_t item = request.layout.channels * sample_size(request.type);
  const std::size_t target = sample_size(request.type) == 2 ? kBufferBytes16 : kBufferBytes;
  return std::max<std::size_t>(1, target / item) * item;
}

std::uint64_t cpu_fill_source(const Plan::Impl& plan, Source& source, void* out) {
  const Request& r = plan.request;
  Reading reading{plan, source, r.layout.channels * sample_size(r.type), cpu_source_buffer_bytes(r), r.output_slots()};
  const std::uint64_t counters_bytes = reading.slots * sizeof(std::uint64_t);
  const unsigned workers = static_cast<unsigned>(std::clamp<std::uint64_t>(
      kPrivateCountersBudgetBytes / std::max<std::uint64_t>(1, counters_bytes), 1, cpu_parallel_detail::threads_or_cores(plan.base.threads)));
  auto* slots = static_cast<std::uint64_t*>(out);
  const std::optional<std::uint64_t> remaining = source.positional() ? source.remaining() : std::nullopt;
  if (!remaining) return read_in_turn(reading, workers, slots);
  if (*remaining % reading.item != 0) throw_partial_item(r, source, *remaining);
  read_positionally(reading, workers, *remaining, slots);
  source.consumed(*remaining);
  return *remaining;
}

}  // namespace levelhist::detail
