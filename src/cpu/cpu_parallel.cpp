// cpu_parallel: fork/join with one private histogram per thread
// (Wilt part 2, "Privatized (Per Thread) Histograms": spawn one
// thread per core, give each its share of the samples and its own histogram,
// combine the histograms at the end). The shares are contiguous chunks taken
// from a queue (cpu_parallel_fork_join.hpp) rather than one fixed part per
// thread, so a thread whose core is busy with something else takes fewer.
// Small inputs run inline on the calling thread (min_bytes_per_worker).
//
// Each worker counts in one of four ways, chosen per problem (choose_plan):
//  * raw_bytes (u8, i8; any binning): a byte counter (cpu_parallel_bytes.hpp,
//    AVX-512 positional popcount where the CPU has it) counts the 256 raw
//    byte values; each value then goes to the slot BinIndexer::slot gives it.
//  * raw_words (u16, i16; any binning; enough samples): 65536 private 32-bit
//    counters for the raw 16-bit values, mapped to slots the same way.
//  * unit_offset (i32, u32 with one integer value per bin): slot = x - lower
//    with the range checks of BinIndexer::slot (UnitOffsetBins says why this
//    is the same slot).
//  * per_sample (everything else): BinIndexer::slot per sample.
// Counting raw values first and mapping each value once gives cpu_serial's
// counts by construction: the same function maps the same values.
//
// Batches (segments, tiles) and N-d points: cpu_parallel_shapes.cpp.
// Weighted sums of one plain array (run_weighted): one fixed part of the
// samples a worker, each into private sums, the parts added in worker order.
//
// Private counters are 32-bit for cache footprint; a worker adds them into
// the 64-bit output (under a mutex) at least every kFlushSamples samples, so
// the totals are exact at any n. Small tables are split into sub-tables that
// consecutive samples take in turn (zstd's HIST_count), so a run of one value
// is spread over several counters instead of one store-to-load chain.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/bin_maps.hpp"
#include "core/fixed_point.hpp"
#include "core/strategies.hpp"
#include "cpu/cpu_parallel_bytes.hpp"
#include "cpu/cpu_parallel_fork_join.hpp"
#include "cpu/cpu_parallel_shapes.hpp"

namespace levelhist::strategies {
namespace {

using cpu_parallel_detail::fork_join;
using cpu_parallel_detail::ChunkQueue;

// Workers take the input in chunks of at least this many bytes.
constexpr std::uint64_t kMinChunkBytes = std::uint64_t{1} << 20;
// A worker adds its 32-bit private counters into the output at least every
// this many samples, so no private counter can overflow.
constexpr std::uint64_t kFlushSamples = std::uint64_t{1} << 26;
static_assert(kFlushSamples < (std::uint64_t{1} << 32));
// The private tables of all workers together stay within this; fewer workers
// run when more would exceed it.
constexpr std::uint64_t kPrivateTableBudgetBytes = std::uint64_t{256} << 20;
// Fewer 16-bit samples than this are cheaper to bin one by one than to count
// into 65536 raw-value counters.
constexpr std::uint64_t kRawWordsMinSamples = std::uint64_t{1} << 16;
constexpr std::uint64_t kRawWordValues = std::uint64_t{1} << 16;
// Sub-tables per private table, by table size: several while they fit in L1.
constexpr std::uint64_t kSubTableMaxSlots = 2048;
constexpr unsigned kSubTables = 4;

enum class Method { raw_bytes, raw_words, unit_offset, per_sample };

// Even bins of width one on integer bounds (Binning::unit_integer_bins) for
// integer samples: the slot of x is x - lower. It agrees with
// BinIndexer::slot(double(x)) because x, lower and upper are integers of
// magnitude at most 2^53, so every comparison and x - lower are exact; the
// scale bins / (upper - lower) is exactly 1, so the first guess is x - lower;
// and the edges lower + b and lower + b + 1 around it are exact, so neither
// correction loop moves it.
struct UnitOffsetBins {
  std::int64_t lower;
  std::int64_t upper;
  std::uint64_t bins;
  bool last_bin_inclusive;

  static std::optional<UnitOffsetBins> of(const Binning& b) {
    constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
    if (!b.unit_integer_bins() || std::fabs(b.lower()) > kExactIntegers || std::fabs(b.upper()) > kExactIntegers)
      return std::nullopt;
    UnitOffsetBins u{static_cast<std::int64_t>(b.lower()), static_cast<std::int64_t>(b.upper()), b.bins(),
                     b.last_bin_inclusive()};
    if (u.upper - u.lower != static_cast<std::int64_t>(u.bins)) return std::nullopt;
    return u;
  }

  // For |x| < 2^53.
  std::uint64_t slot(std::int64_t x) const {
    if (x < lower) return bins;  // underflow
    if (x < upper) return static_cast<std::uint64_t>(x - lower);
    return (last_bin_inclusive && x == upper) ? bins - 1 : bins + 1;  // last bin or overflow
  }
};

struct Plan {
  Method method;
  unsigned workers;
  unsigned sub_tables;  // per private table (unit_offset, per_sample)
  std::optional<UnitOffsetBins> unit;
};


// The least input a worker gets, by method: enough for about 50 us of
// counting at the method's speed on one core, well above what starting and
// joining a thread costs (about 20 us; docs/BENCHMARKS.md, "## CPU"), so a
// small input runs inline on the calling thread.
std::uint64_t min_bytes_per_worker(Method method) {
  switch (method) {
    case Method::raw_bytes: return std::uint64_t{512} << 10;  // about 10 GB/s
    case Method::raw_words:
    case Method::unit_offset: return std::uint64_t{128} << 10;  // 2 to 4 GB/s
    case Method::per_sample: break;                            // 0.1 to 1 GB/s
  }
  return std::uint64_t{32} << 10;
}

// Workers for the call's n samples of `sample_bytes` each (a weighted
// sample's bytes with its weight's) counted by `method`: one per core (or
// the caller's threads), fewer where their shares would be below the
// method's least.
unsigned useful_workers(const RunArgs& a, std::uint64_t sample_bytes, Method method) {
  const std::uint64_t useful = std::max<std::uint64_t>(1, a.n * sample_bytes / min_bytes_per_worker(method));
  return static_cast<unsigned>(std::min<std::uint64_t>(cpu_parallel_detail::threads_or_cores(a.threads), useful));
}

// At most `workers`, and no more than the memory budget allows for a private
// table of `table_bytes` each or than there are samples to fill their slots()
// slots (else clearing and merging the tables costs more than counting).
unsigned within_table_budget(unsigned workers, const RunArgs& a, std::uint64_t table_bytes) {
  const std::uint64_t slots = a.binning->slots();
  while (workers > 1 && (workers * table_bytes > kPrivateTableBudgetBytes || slots > a.n / workers)) --workers;
  return workers;
}

Plan choose_plan(const RunArgs& a) {
  const std::size_t size = sample_size(a.type);
  const std::optional<UnitOffsetBins> unit = is_integer(a.type) ? UnitOffsetBins::of(*a.binning) : std::nullopt;
  const Method method = size == 1                                   ? Method::raw_bytes
                        : size == 2 && a.n >= kRawWordsMinSamples ? Method::raw_words
                        : unit                                      ? Method::unit_offset
                                                                    : Method::per_sample;
  const unsigned workers = useful_workers(a, size, method);
  if (method == Method::raw_bytes || method == Method::raw_words) return {method, workers, 1, unit};
  // Private tables of slots() counters, split into sub-tables while small.
  const std::uint64_t slots = a.binning->slots();
  const unsigned sub_tables = slots <= kSubTableMaxSlots ? kSubTables : 1;
  return {method, within_table_budget(workers, a, slots * sub_tables * sizeof(std::uint32_t)), sub_tables, unit};
}

template <class T>
T load(const unsigned char* p) {
  T x;
  std::memcpy(&x, p, sizeof x);  // any alignment
  return x;
}

// ++table[k * stride + slot_of(x)] for the samples x of p[0, n), sample i
// going to sub-table k = i % Tables.
template <class T, unsigned Tables, class Counter, class SlotOf>
void count_samples(const unsigned char* p, std::uint64_t n, const SlotOf& slot_of, Counter* table,
                   std::uint64_t stride) {
  std::uint64_t i = 0;
  for (; i + Tables <= n; i += Tables)
    for (unsigned k = 0; k < Tables; ++k) ++table[k * stride + slot_of(load<T>(p + (i + k) * sizeof(T)))];
  for (; i < n; ++i) ++table[slot_of(load<T>(p + i * sizeof(T)))];
}

// Shared by the workers of one run: the output and the lock that guards it.
struct Output {
  std::uint64_t* slots;
  std::mutex mutex;
};

// The workers' queue of chunks of the n samples: chunks of at least
// kMinChunkBytes and at most kFlushSamples samples (so that one chunk cannot
// overflow a private counter).
ChunkQueue chunks_of(const RunArgs& a, const Plan& plan) {
  return ChunkQueue(a.n, plan.workers, kMinChunkBytes / sample_size(a.type), kFlushSamples);
}

// The workers take chunks from the queue and count each with
// count(begin, end, counters) into their private 32-bit counters
// (`counters` of them), which merge(counters) adds into the output, under the
// output's lock, before more than kFlushSamples samples could have gone into
// them, and at the end.
template <class Count, class Merge>
void count_privately(const Plan& plan, ChunkQueue& queue, std::uint64_t counters, Output& out, const Count& count,
                     const Merge& merge) {
  fork_join(plan.workers, [&](unsigned) {
    std::vector<std::uint32_t> table(counters, 0);
    std::uint64_t unmerged = 0;
    auto merge_and_clear = [&] {
      {
        std::lock_guard<std::mutex> lock(out.mutex);
        merge(table.data());
      }
      std::fill(table.begin(), table.end(), 0);
      unmerged = 0;
    };
    for (std::uint64_t begin, end; queue.next(begin, end);) {
      if (unmerged + (end - begin) > kFlushSamples) merge_and_clear();
      count(begin, end, table.data());
      unmerged += end - begin;
    }
    if (unmerged != 0) merge_and_clear();
  });
}

// The slot of every raw value of the 8- or 16-bit type T, computed once.
template <class T>
std::vector<std::uint32_t> slots_of_raw_values(const RunArgs& a, const std::optional<UnitOffsetBins>& unit) {
  using Raw = std::conditional_t<sizeof(T) == 1, std::uint8_t, std::uint16_t>;
  constexpr std::uint64_t values = std::uint64_t{1} << (8 * sizeof(T));
  std::vector<std::uint32_t> slot(values);
  for (std::uint64_t r = 0; r < values; ++r) {
    const T x = std::bit_cast<T>(static_cast<Raw>(r));
    // slots() <= 2^28 + 3, so a slot fits 32 bits.
    slot[r] = static_cast<std::uint32_t>(unit ? unit->slot(x) : a.indexer.slot(static_cast<double>(x)));
  }
  return slot;
}

template <class T>
void run_raw_bytes(const RunArgs& a, const Plan& plan, Output& out) {
  const std::vector<std::uint32_t> slot = slots_of_raw_values<T>(a, plan.unit);
  const auto count = cpu_parallel_detail::active_byte_counter().count;
  const auto* bytes = static_cast<const unsigned char*>(a.samples);
  ChunkQueue queue = chunks_of(a, plan);
  fork_join(plan.workers, [&](unsigned) {
    std::uint64_t raw[256] = {};  // the byte counters count into 64-bit counters
    for (std::uint64_t begin, end; queue.next(begin, end);) count(bytes + begin, end - begin, raw);
    std::lock_guard<std::mutex> lock(out.mutex);
    for (std::size_t r = 0; r < 256; ++r) out.slots[slot[r]] += raw[r];
  });
}

template <class T>
void run_raw_words(const RunArgs& a, const Plan& plan, Output& out) {
  const std::vector<std::uint32_t> slot = slots_of_raw_values<T>(a, plan.unit);
  const auto* samples = static_cast<const unsigned char*>(a.samples);
  ChunkQueue queue = chunks_of(a, plan);
  // Raw 16-bit values index one table of 65536 counters directly; the slot
  // map is applied when it is merged. One table, not sub-tables: two measured
  // within noise of one and four slower (256 KiB each; docs/BENCHMARKS.md).
  const auto raw_value = [](std::uint16_t x) { return x; };
  count_privately(
      plan, queue, kRawWordValues, out,
      [&](std::uint64_t begin, std::uint64_t end, std::uint32_t* raw) {
        count_samples<std::uint16_t, 1>(samples + begin * sizeof(T), end - begin, raw_value, raw, 0);
      },
      [&](const std::uint32_t* raw) {
        for (std::uint64_t r = 0; r < kRawWordValues; ++r) out.slots[slot[r]] += raw[r];
      });
}

// unit_offset and per_sample: one slot function per sample, `Tables`
// sub-tables per private table.
template <class T, unsigned Tables, class SlotOf>
void run_slot_per_sample_in(const RunArgs& a, const Plan& plan, const SlotOf& slot_of, Output& out) {
  const auto* samples = static_cast<const unsigned char*>(a.samples);
  if (plan.workers == 1) {
    // Inline: straight into the 64-bit output, no private table to merge.
    count_samples<T, 1>(samples, a.n, slot_of, out.slots, 0);
    return;
  }
  const std::uint64_t slots = a.binning->slots();
  ChunkQueue queue = chunks_of(a, plan);
  count_privately(
      plan, queue, slots * Tables, out,
      [&](std::uint64_t begin, std::uint64_t end, std::uint32_t* tables) {
        count_samples<T, Tables>(samples + begin * sizeof(T), end - begin, slot_of, tables, slots);
      },
      [&](const std::uint32_t* tables) {
        for (unsigned k = 0; k < Tables; ++k)
          for (std::uint64_t s = 0; s < slots; ++s) out.slots[s] += tables[k * slots + s];
      });
}

template <class T, class SlotOf>
void run_slot_per_sample(const RunArgs& a, const Plan& plan, const SlotOf& slot_of, Output& out) {
  if (plan.sub_tables == kSubTables)
    run_slot_per_sample_in<T, kSubTables>(a, plan, slot_of, out);
  else
    run_slot_per_sample_in<T, 1>(a, plan, slot_of, out);
}

// Calls f with the fastest exact slot map of the call's binning for samples
// of type T: unit offsets (`unit`, integer samples), the even map, else
// slot(). The counts and the weighted sums both take it.
template <class T, class F>
void with_slot_map(const RunArgs& a, const std::optional<UnitOffsetBins>& unit, const F& f) {
  if constexpr (std::is_integral_v<T>) {
    if (unit) {
      const UnitOffsetBins u = *unit;
      return f([u](T x) { return u.slot(x); });
    }
  }
  if (a.binning->kind() == BinKind::even) {
    // The GPU kernels' exact even map (core/bin_maps.hpp, tested against
    // slot()): a float guess with a proven margin, the double path near an
    // edge. Several times faster than slot()'s correction loops.
    const binmap::EvenParams even = binmap::make_even_params(*a.binning);
    return f([even](T x) { return binmap::even_slot(x, even); });
  }
  const BinIndexer indexer = a.indexer;
  f([indexer](T x) { return indexer.slot(static_cast<double>(x)); });
}

void run_plain(const RunArgs& a) {
  if (!a.accumulate) std::memset(a.slots, 0, a.binning->slots() * sizeof(std::uint64_t));
  if (a.n == 0) return;
  const Plan plan = choose_plan(a);
  Output out{a.slots, {}};
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) == 1) {
      run_raw_bytes<T>(a, plan, out);
    } else {
      if constexpr (sizeof(T) == 2) {
        if (plan.method == Method::raw_words) return run_raw_words<T>(a, plan, out);
      }
      with_slot_map<T>(a, plan.method == Method::unit_offset ? plan.unit : std::nullopt,
                       [&](const auto& slot_of) { run_slot_per_sample<T>(a, plan, slot_of, out); });
    }
  });
}

// ---- weighted sums ----------------------------------------------------------------

// Worker k sums part k of the samples, [n k / W, n (k + 1) / W), in sample
// order into private sums (doubles; or integer quanta, fixed_point.hpp, for
// deterministic sums), and the parts are added into the output in worker
// order once every worker is done. Double sums therefore depend only on the
// data and the number of workers (one worker: cpu_serial's sums, bit for bit),
// not on which thread ran first; deterministic sums only on the data, as on
// every backend. Fixed parts, not the counting paths' queue of chunks: a
// worker slowed by another process then holds the others up, which is the
// price of sums that repeat.
struct WeightedSums {
  std::vector<double> sums, squares;                  // double sums
  std::vector<fixed::Wide> wide, wide_squares;        // deterministic sums
  std::vector<unsigned> flags, square_flags;          // their non-finite weights
};

template <class T, class W, class SlotOf>
void sum_part(const RunArgs& a, const SlotOf& slot_of, std::uint64_t begin, std::uint64_t end, double* sums,
              double* squares, WeightedSums* exact, const fixed::Quantizer& quantize,
              const fixed::Quantizer& quantize_square) {
  const auto* samples = static_cast<const unsigned char*>(a.samples);
  const auto* weights = static_cast<const unsigned char*>(a.weights);
  for (std::uint64_t i = begin; i < end; ++i) {
    const std::uint64_t s = slot_of(load<T>(samples + i * sizeof(T)));
    const double w = static_cast<double>(load<W>(weights + i * sizeof(W)));
    const double w2 = w * w;  // as cpu_serial squares it
    if (!exact) {
      sums[s] += w;
      if (squares) squares[s] += w2;
      continue;
    }
    if (unsigned f = fixed::special_of(w)) exact->flags[s] |= f;
    else exact->wide[s].add(quantize(w));
    if (!a.weight_squares) continue;
    if (unsigned f = fixed::special_of(w2)) exact->square_flags[s] |= f;
    else exact->wide_squares[s].add(quantize_square(w2));
  }
}

template <class T, class W, class SlotOf>
void run_weighted_with(const RunArgs& a, const SlotOf& slot_of) {
  const std::uint64_t slots = a.binning->slots();
  const bool exact = a.deterministic, squares = a.weight_squares != nullptr;
  const int e = exact ? fixed::exponent_of(*a.weight_bound) : 0;
  const fixed::Quantizer quantize(e), quantize_square(2 * e);
  const std::uint64_t per_value = exact ? sizeof(fixed::Wide) + sizeof(unsigned) : sizeof(double);
  const std::uint64_t slot_bytes = per_value * (squares ? 2 : 1);
  const unsigned workers =
      within_table_budget(useful_workers(a, sizeof(T) + sizeof(W), Method::per_sample), a, slots * slot_bytes);
  if (workers == 1 && !exact) {  // inline, straight into the output: cpu_serial's loop
    sum_part<T, W>(a, slot_of, 0, a.n, a.weight_sums, a.weight_squares, nullptr, quantize, quantize_square);
    return;
  }
  std::vector<WeightedSums> parts(workers);
  fork_join(workers, [&](unsigned k) {
    WeightedSums& part = parts[k];
    if (exact) {
      part.wide.assign(slots, {});
      part.flags.assign(slots, 0);
      if (squares) part.wide_squares.assign(slots, {}), part.square_flags.assign(slots, 0);
    } else {
      part.sums.assign(slots, 0.0);
      if (squares) part.squares.assign(slots, 0.0);
    }
    const std::uint64_t begin = a.n / workers * k + std::min<std::uint64_t>(k, a.n % workers);
    const std::uint64_t end = begin + a.n / workers + (k < a.n % workers ? 1 : 0);
    sum_part<T, W>(a, slot_of, begin, end, part.sums.data(), squares ? part.squares.data() : nullptr,
                   exact ? &part : nullptr, quantize, quantize_square);
  });
  if (!exact) {
    for (const WeightedSums& part : parts)
      for (std::uint64_t s = 0; s < slots; ++s) {
        a.weight_sums[s] += part.sums[s];
        if (squares) a.weight_squares[s] += part.squares[s];
      }
    return;
  }
  WeightedSums& total = parts[0];
  for (unsigned k = 1; k < workers; ++k)
    for (std::uint64_t s = 0; s < slots; ++s) {
      total.wide[s].add(parts[k].wide[s]);
      total.flags[s] |= parts[k].flags[s];
      if (!squares) continue;
      total.wide_squares[s].add(parts[k].wide_squares[s]);
      total.square_flags[s] |= parts[k].square_flags[s];
    }
  for (std::uint64_t s = 0; s < slots; ++s) {
    a.weight_sums[s] += fixed::to_double(total.wide[s], total.flags[s], e);
    if (squares) a.weight_squares[s] += fixed::to_double(total.wide_squares[s], total.square_flags[s], 2 * e);
  }
}

void run_weighted(const RunArgs& a) {
  const std::uint64_t slots = a.binning->slots();
  if (!a.accumulate) {
    std::memset(a.weight_sums, 0, slots * sizeof(double));
    if (a.weight_squares) std::memset(a.weight_squares, 0, slots * sizeof(double));
  }
  if (a.n == 0) return;
  visit_sample_type(a.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_slot_map<T>(a, is_integer(a.type) ? UnitOffsetBins::of(*a.binning) : std::nullopt,
                     [&](const auto& slot_of) {
                       if (a.weight_type == SampleType::f64) run_weighted_with<T, double>(a, slot_of);
                       else run_weighted_with<T, float>(a, slot_of);
                     });
  });
}

// Batches and N-d points: cpu_parallel_shapes.cpp; weighted sums above.
void run(const RunArgs& a) {
  if (a.weight_sums) return run_weighted(a);
  if (a.axes.count > 1) return cpu_parallel_detail::run_axes(a);
  if (a.batch.kind != BatchKind::none) return cpu_parallel_detail::run_batch(a, run_plain);
  run_plain(a);
}

bool supports(const Problem& p, std::string* why_not) {
  if (p.weighted && (!p.layout.is_plain() || !p.batch.is_none() || p.axis_count > 1)) {
    if (why_not) *why_not = "cpu_parallel: sums the weights of a plain array only, not of pixels with channels";
    return false;
  }
  return true;
}
std::size_t no_workspace(const Problem&) { return 0; }

// Sizes where a run changes behaviour, for the tests to probe at n-1, n, n+1:
// the byte counter's vector, carry-save block and round; the raw-word
// threshold; the first size that starts a second worker.
std::vector<std::uint64_t> boundary_sizes(const Problem& problem) {
  const std::uint64_t size = sample_size(problem.type);
  std::vector<std::uint64_t> sizes;
  Method method = Method::per_sample;
  if (size == 1) {
    method = Method::raw_bytes;
    sizes = {cpu_parallel_detail::kAvx512VectorBytes, cpu_parallel_detail::kAvx512BlockBytes,
             cpu_parallel_detail::kAvx512RoundBytes};
  } else if (size == 2) {
    method = Method::raw_words;
    sizes = {kRawWordsMinSamples};
  }
  sizes.push_back(2 * min_bytes_per_worker(method) / size);
  // Weighted sums: the first size that starts a second worker.
  if (problem.weighted)
    sizes.push_back(2 * min_bytes_per_worker(Method::per_sample) / (size + sample_size(problem.weight_type)));
  return sizes;
}

}  // namespace

const Strategy cpu_parallel{"cpu_parallel",
                            Backend::cpu,
                            "fork/join, one private histogram per thread (AVX-512 byte counter where available); "
                            "weighted sums of a plain array in fixed parts, added in order",
                            "Wilt part 2 (privatized per-thread histograms, CPU fork/join)",
                            supports,
                            no_workspace,
                            run,
                            boundary_sizes,
                            kCapabilitySegments | kCapabilityTiles | kCapabilityAxes | kCapabilityWeights |
                                kCapabilityDeterministic | kCapabilitySquares};

}  // namespace levelhist::strategies
