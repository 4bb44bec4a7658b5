// cpu_parallel's batches and N-d points (strategy.hpp BatchArgs, AxesArgs).
//
// Batches: the histograms of a batch are independent, so workers take whole
// segments or tiles from a queue and count each straight into its own output
// histogram: no private copies, no merging, no lock. Segments large enough to
// be worth it on their own (kOwnRunBytes) are counted one by one by the 1-D
// parallel path instead, all workers on one segment. Bytes go through the
// byte counter (cpu_parallel_bytes.hpp) piece by piece, then each raw value to
// its slot; other types bin sample by sample with BinIndexer::slot.
//
// N-d points: as the 1-D per-sample path, one private table of 32-bit
// counters per worker over the chunks of a queue, flushed into the 64-bit
// output under a lock before a counter could overflow. 8- and 16-bit
// coordinates find their axis slot in a table of every raw value. Two 8-bit
// axes (the joint histogram of two images) are counted by raw pair instead,
// 65536 counters a worker (256 KiB), each pair mapped to its slot once, at the
// flush: the GPU's byte-pairs layout.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <vector>

#include "cpu/cpu_parallel_bytes.hpp"
#include "cpu/cpu_parallel_fork_join.hpp"
#include "cpu/cpu_parallel_shapes.hpp"

namespace levelhist::cpu_parallel_detail {
namespace {

// A segment of at least this many bytes is counted by all workers at once.
constexpr std::uint64_t kOwnRunBytes = std::uint64_t{8} << 20;
// Workers start only for at least this many bytes each (thread start-up and
// join cost about 20 us; docs/BENCHMARKS.md, "## CPU").
constexpr std::uint64_t kMinBytesPerWorker = std::uint64_t{256} << 10;
// N-d: chunks of points, and the flush bound of the 32-bit private counters.
constexpr std::uint64_t kAxesChunkPoints = std::uint64_t{1} << 16;
constexpr std::uint64_t kFlushPoints = std::uint64_t{1} << 26;
constexpr std::uint64_t kPrivateTableBudgetBytes = std::uint64_t{256} << 20;

unsigned workers_for(unsigned threads, std::uint64_t bytes, std::uint64_t items) {
  const std::uint64_t useful = std::max<std::uint64_t>(1, bytes / kMinBytesPerWorker);
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>({threads_or_cores(threads), useful, items})));
}

template <class T>
T load(const unsigned char* p) {
  T x;
  std::memcpy(&x, p, sizeof x);  // any alignment
  return x;
}

// Counts runs of samples into one histogram: bytes through the byte counter
// (raw counts, then one slot per raw value at flush), wider types one slot each.
template <class T>
class PieceCounter {
 public:
  explicit PieceCounter(const RunArgs& a) : indexer_(a.indexer) {
    if constexpr (sizeof(T) == 1) {
      using Raw = std::uint8_t;
      for (unsigned r = 0; r < 256; ++r)
        slot_[r] = static_cast<std::uint32_t>(indexer_.slot(static_cast<double>(std::bit_cast<T>(static_cast<Raw>(r)))));
    }
  }
  // Adds the n samples at p into `out` (byte samples: at flush()).
  void add(const unsigned char* p, std::uint64_t n, std::uint64_t* out) {
    if constexpr (sizeof(T) == 1) {
      (void)out;
      count_(p, n, raw_);
    } else {
      for (std::uint64_t i = 0; i < n; ++i) out[indexer_.slot(static_cast<double>(load<T>(p + i * sizeof(T))))] += 1;
    }
  }
  void flush(std::uint64_t* out) {
    if constexpr (sizeof(T) == 1) {
      for (unsigned r = 0; r < 256; ++r) {
        out[slot_[r]] += raw_[r];
        raw_[r] = 0;
      }
    } else {
      (void)out;
    }
  }

 private:
  BinIndexer indexer_;
  std::uint32_t slot_[256] = {};
  std::uint64_t raw_[256] = {};
  ByteCounter count_ = active_byte_counter().count;
};

template <class T>
void run_segments(const RunArgs& a, void (*run_one)(const RunArgs&)) {
  const BatchArgs& b = a.batch;
  const std::uint64_t slots = a.binning->slots();
  const auto* bytes = static_cast<const unsigned char*>(a.samples);
  auto bounds = [&](std::uint64_t s, std::uint64_t& begin, std::uint64_t& end) {
    if (b.offsets) {
      begin = std::min(b.offsets[s], a.n);
      end = std::max(begin, std::min(b.offsets[s + 1], a.n));
    } else {
      begin = s * b.segment_length;
      end = begin + b.segment_length;
    }
  };
  // The large segments, each by every worker (the 1-D path, accumulating).
  std::vector<std::uint64_t> small;
  std::uint64_t small_bytes = 0;
  for (std::uint64_t s = 0; s < b.segments; ++s) {
    std::uint64_t begin, end;
    bounds(s, begin, end);
    if ((end - begin) * sizeof(T) < kOwnRunBytes) {
      small.push_back(s);
      small_bytes += (end - begin) * sizeof(T);
      continue;
    }
    RunArgs one = a;
    one.batch = BatchArgs{};
    one.samples = bytes + begin * sizeof(T);
    one.n = end - begin;
    one.slots = a.slots + s * slots;
    one.accumulate = true;
    run_one(one);
  }
  // The others: whole segments from a queue, each straight into its histogram.
  std::atomic<std::uint64_t> next{0};
  fork_join(workers_for(a.threads, small_bytes, small.size()), [&](unsigned) {
    PieceCounter<T> counter(a);
    for (std::uint64_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < small.size();) {
      std::uint64_t begin, end;
      bounds(small[k], begin, end);
      std::uint64_t* out = a.slots + small[k] * slots;
      counter.add(bytes + begin * sizeof(T), end - begin, out);
      counter.flush(out);
    }
  });
}

template <class T>
void run_tiles(const RunArgs& a) {
  const BatchArgs& b = a.batch;
  const std::uint64_t slots = a.binning->slots();
  const std::uint64_t width = a.layout.width, height = a.layout.height;
  const std::uint64_t pitch = a.layout.row_pitch ? a.layout.row_pitch : width * sizeof(T);
  const auto* image = static_cast<const unsigned char*>(a.samples);
  const std::uint64_t tiles = std::uint64_t{b.tile_rows} * b.tile_cols;
  std::atomic<std::uint64_t> next{0};
  fork_join(workers_for(a.threads, width * height * sizeof(T), tiles), [&](unsigned) {
    PieceCounter<T> counter(a);
    for (std::uint64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < tiles;) {
      const std::uint64_t r0 = (t / b.tile_cols) * b.tile_height, c0 = (t % b.tile_cols) * b.tile_width;
      const std::uint64_t r1 = std::min(height, r0 + b.tile_height), c1 = std::min(width, c0 + b.tile_width);
      std::uint64_t* out = a.slots + t * slots;
      for (std::uint64_t r = r0; r < r1 && c0 < c1; ++r) counter.add(image + r * pitch + c0 * sizeof(T), c1 - c0, out);
      counter.flush(out);
    }
  });
}

// The slot of a coordinate on one axis, times the axis's stride in the flat
// histogram: a table of every raw value for 8/16-bit samples, slot() otherwise.
template <class T>
struct AxisMap {
  BinIndexer indexer;
  std::uint64_t stride = 1;
  std::vector<std::uint32_t> table;  // raw value -> slot * stride (8/16-bit samples)

  AxisMap(const BinIndexer& ix, std::uint64_t axis_stride, std::uint64_t total_slots) : indexer(ix), stride(axis_stride) {
    if constexpr (sizeof(T) <= 2) {
      using Raw = std::conditional_t<sizeof(T) == 1, std::uint8_t, std::uint16_t>;
      if (total_slots <= 0xFFFFFFFFu) {
        table.resize(std::size_t{1} << (8 * sizeof(T)));
        for (std::size_t r = 0; r < table.size(); ++r)
          table[r] = static_cast<std::uint32_t>(
              indexer.slot(static_cast<double>(std::bit_cast<T>(static_cast<Raw>(r)))) * stride);
      }
    }
  }
  std::uint64_t operator()(T x) const {
    if constexpr (sizeof(T) <= 2) {
      using Raw = std::conditional_t<sizeof(T) == 1, std::uint8_t, std::uint16_t>;
      if (!table.empty()) return table[std::bit_cast<Raw>(x)];
    }
    return indexer.slot(static_cast<double>(x)) * stride;
  }
};

// Workers over the chunks of a queue, each counting into a private table of
// `entries` 32-bit counters (count(table, begin, end) for points [begin,
// end)) that merge(table) adds into the output under a lock, before a counter
// could overflow and at the end.
template <class Count, class Merge>
void count_in_private_tables(unsigned workers, std::uint64_t n, std::uint64_t entries, const Count& count,
                             const Merge& merge) {
  ChunkQueue queue(n, workers, kAxesChunkPoints, kFlushPoints);
  std::mutex mutex;
  fork_join(workers, [&](unsigned) {
    std::vector<std::uint32_t> table(entries, 0);
    std::uint64_t unmerged = 0;
    auto flush = [&] {
      std::lock_guard<std::mutex> lock(mutex);
      merge(table.data());
      std::fill(table.begin(), table.end(), 0);
      unmerged = 0;
    };
    for (std::uint64_t begin, end; queue.next(begin, end);) {
      if (unmerged + (end - begin) > kFlushPoints) flush();
      count(table.data(), begin, end);
      unmerged += end - begin;
    }
    if (unmerged) flush();
  });
}

// Two 8-bit axes by raw pair: pair (x, y) is counter x << 8 | y, mapped to its
// slot when the counters are merged. The per-point path (run_axes) takes each
// point through the vector of axis maps, 4-7x slower on two images
// (docs/PERFORMANCE-shapes.md, "CPU (measured here)").
template <class T>
void run_byte_pairs(const RunArgs& a, const AxisMap<T>& map0, const AxisMap<T>& map1, std::uint64_t total) {
  static_assert(sizeof(T) == 1);
  constexpr std::uint64_t kPairs = 65536;
  const AxesArgs& ax = a.axes;
  const auto* c0 = static_cast<const unsigned char*>(ax.columns[0]);
  const auto* c1 = static_cast<const unsigned char*>(ax.columns[1]);
  const std::uint64_t n = a.n, stride = ax.stride;
  const std::uint32_t* slot_a = map0.table.data();  // raw value -> slot * stride
  const std::uint32_t* slot_b = map1.table.data();
  unsigned workers = workers_for(a.threads, n * 2, (n + kAxesChunkPoints - 1) / kAxesChunkPoints);
  while (workers > 1 && std::max(total, kPairs) > n / workers) --workers;
  count_in_private_tables(
      workers, n, kPairs,
      [&](std::uint32_t* counts, std::uint64_t begin, std::uint64_t end) {
        const unsigned char* p0 = c0 + begin * stride;
        const unsigned char* p1 = c1 + begin * stride;
        for (std::uint64_t i = 0, m = end - begin; i < m; ++i) ++counts[unsigned{p0[i * stride]} << 8 | p1[i * stride]];
      },
      [&](const std::uint32_t* counts) {
        for (std::uint64_t r = 0; r < kPairs; ++r)
          if (counts[r]) a.slots[slot_a[r >> 8] + slot_b[r & 0xFF]] += counts[r];
      });
}

template <class T>
void run_axes(const RunArgs& a) {
  const AxesArgs& ax = a.axes;
  std::uint64_t total = 1;
  for (unsigned k = 0; k < ax.count; ++k) total *= ax.binnings[k]->slots();
  std::vector<AxisMap<T>> maps;
  std::uint64_t stride = total;
  for (unsigned k = 0; k < ax.count; ++k) {
    stride /= ax.binnings[k]->slots();
    maps.emplace_back(ax.indexers[k], stride, total);
  }
  // (Fewer points than raw pairs: the pairs' merge would cost more than the points.)
  if constexpr (sizeof(T) == 1)
    if (ax.count == 2 && a.n >= 65536 && !maps[0].table.empty() && !maps[1].table.empty())
      return run_byte_pairs<T>(a, maps[0], maps[1], total);
  const std::uint64_t n = a.n;
  auto slot_of = [&](std::uint64_t i) {
    std::uint64_t at = 0;
    for (unsigned k = 0; k < ax.count; ++k)
      at += maps[k](load<T>(static_cast<const unsigned char*>(ax.columns[k]) + i * ax.stride));
    return at;
  };
  unsigned workers = workers_for(a.threads, n * ax.count * sizeof(T), (n + kAxesChunkPoints - 1) / kAxesChunkPoints);
  // Private tables must fit the budget and be worth clearing and merging.
  while (workers > 1 && (workers * total * 4 > kPrivateTableBudgetBytes || total > n / workers)) --workers;
  if (workers <= 1) {
    for (std::uint64_t i = 0; i < n; ++i) a.slots[slot_of(i)] += 1;
    return;
  }
  count_in_private_tables(
      workers, n, total,
      [&](std::uint32_t* table, std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i) ++table[slot_of(i)];
      },
      [&](const std::uint32_t* table) {
        for (std::uint64_t s = 0; s < total; ++s) a.slots[s] += table[s];
      });
}

}  // namespace

void run_batch(const RunArgs& a, void (*run_one)(const RunArgs&)) {
  const std::uint64_t values = a.binning->slots() * a.batch.segments;
  if (!a.accumulate) std::memset(a.slots, 0, values * sizeof(std::uint64_t));
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (a.batch.kind == BatchKind::tiles) run_tiles<T>(a);
    else run_segments<T>(a, run_one);
  });
}

void run_axes(const RunArgs& a) {
  std::uint64_t values = 1;
  for (unsigned k = 0; k < a.axes.count; ++k) values *= a.axes.binnings[k]->slots();
  if (!a.accumulate) std::memset(a.slots, 0, values * sizeof(std::uint64_t));
  visit_sample_type(a.type, [&](auto tag) { run_axes<typename decltype(tag)::type>(a); });
}

}  // namespace levelhist::cpu_parallel_detail
