// levelhist: strategies and how `auto` chooses one.
//
// A Strategy is one counting method (CPU or CUDA) as plain data: what it can
// count, the workspace it needs, and its run function. The library holds the
// strategies `auto` can choose (and cpu_serial, the reference) in one explicit
// list (src/core/registry.cpp); `auto` picks from them by one selection table
// keyed by problem class and compute capability (src/core/selection.cpp).
// The methods of the literature are strategies too, in a separate lab library
// that the tests and the benchmark link (docs/ARCHITECTURE.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "levelhist/bin_index.hpp"
#include "levelhist/binning.hpp"
#include "levelhist/request.hpp"
#include "levelhist/sample_type.hpp"

namespace levelhist {

enum class Backend : std::uint8_t { cpu, cuda };
std::string_view to_string(Backend backend);

// What a problem needs beyond counting a plain 1-D array; a strategy lists in
// Strategy::capabilities what it can do, and only those that can are offered it.
enum Capability : unsigned {
  kCapabilityPixels = 1u << 0,         // PixelLayout other than plain (channels, active subset, rows, pitch)
  kCapabilityWeights = 1u << 1,        // weighted sums instead of counts
  kCapabilitySegments = 1u << 2,       // a batch of 1-D segments (equal, or by offsets)
  kCapabilityTiles = 1u << 3,          // a batch of tiles of an image
  kCapabilityAxes = 1u << 4,           // N-d: 2 to 4 axes
  kCapabilityDeterministic = 1u << 5,  // deterministic weighted sums (Request::deterministic)
  kCapabilitySquares = 1u << 6,        // sums of squared weights beside the sums
};

// What a strategy is asked to count: enough to decide support and workspace.
struct Problem {
  SampleType type;
  const Binning* binning;
  std::uint64_t n;  // samples (for pixels: width * height * channels)
  PixelLayout layout = {};
  bool weighted = false;                     // one weight per sample (per pixel for pixels)
  SampleType weight_type = SampleType::f32;  // f32 or f64
  bool deterministic = false;                // weighted: Request::deterministic
  bool weight_squares = false;               // weighted: Request::weight_squares
  Batch batch = {};                          // batches: the kind and the number of histograms
  // N-d: the axes (binning is axes[0]); axis_count 1 for every other request.
  unsigned axis_count = 1;
  const Binning* axes[kMaxAxes] = {};
  unsigned needs() const {
    unsigned n = (layout.is_plain() ? 0u : unsigned{kCapabilityPixels}) | (weighted ? unsigned{kCapabilityWeights} : 0u);
    if (batch.kind == BatchKind::equal || batch.kind == BatchKind::offsets) n |= kCapabilitySegments;
    if (batch.kind == BatchKind::tiles) n |= kCapabilityTiles;
    if (axis_count > 1) n |= kCapabilityAxes;
    if (weighted && deterministic) n |= kCapabilityDeterministic;
    if (weighted && weight_squares) n |= kCapabilitySquares;
    return n;
  }
  // Counter slots of one histogram (the product over the axes for N-d).
  std::uint64_t histogram_slots() const {
    if (axis_count <= 1) return binning->slots();
    std::uint64_t s = 1;
    for (unsigned a = 0; a < axis_count; ++a) s *= axes[a]->slots();
    return s;
  }
};

// A call's batch as a strategy sees it. Segments: segment s is samples
// [begin(s), end(s)) of the call, from `offsets` (segments + 1 of them, where
// the strategy runs; a pair whose end is below its begin is empty, offsets
// beyond n count as n) or, without offsets, segment_length samples each.
// Tiles: the call's rows (RunArgs::layout: width items per row, height rows,
// row_pitch bytes apart) cut into tile_rows x tile_cols tiles of tile_width x
// tile_height items, the last column and row of tiles cut at the frame's edge;
// tile (r, c) is histogram r * tile_cols + c.
struct BatchArgs {
  BatchKind kind = BatchKind::none;
  std::uint64_t segments = 1;  // histograms of the call: its output is segments x slots counters
  const std::uint64_t* offsets = nullptr;
  std::uint64_t segment_length = 0;
  std::uint32_t tile_rows = 1, tile_cols = 1;
  std::uint64_t tile_width = 0, tile_height = 0;
};

// An N-d call as a strategy sees it: point i's coordinate on axis a is the
// sample at columns[a] + i * stride bytes (stride = axis_count x sample size
// for interleaved coordinates, the sample size for separate arrays). The slot
// of a point is sum over a of slot_a x stride_a, axis 0 slowest, stride_a the
// product of the later axes' slots; indexers[a] is axis a's binning (its edges
// where the strategy runs).
struct AxesArgs {
  unsigned count = 1;
  const void* columns[kMaxAxes] = {};
  std::uint64_t stride = 0;
  BinIndexer indexers[kMaxAxes] = {};
  const Binning* binnings[kMaxAxes] = {};
};

// One call of a strategy's run function.
//  * samples: n samples of `type`, any alignment; host memory for CPU
//    strategies, device memory for CUDA ones.
//  * slots: binning.slots() 64-bit counters per histogram in the same memory
//    space; cleared first unless `accumulate`.
//  * indexer: the binning as a kernel-ready view; for CUDA strategies its
//    edge array is already in device memory (the plan's).
//  * prepared: what the strategy's prepare() wrote for this problem, where the
//    strategy runs (the plan's device memory for CUDA), and prepared_host, the
//    same bytes in host memory (for launch parameters); nullptr when none.
//  * workspace: workspace_bytes(problem) bytes in the same memory space, 256-byte
//    aligned. CPU: contents undefined on entry. CUDA: zero on entry, and the
//    strategy must leave it zero on return, so one workspace serves every call
//    and no call needs a clearing launch (docs/ARCHITECTURE.md).
//  * n: CUDA strategies see at most 2^31 samples per call (the plan splits).
struct RunArgs {
  const void* samples;
  std::uint64_t n;
  SampleType type;
  const Binning* binning;
  BinIndexer indexer;
  std::uint64_t* slots;
  bool accumulate;
  void* workspace;
  std::size_t workspace_bytes;
  unsigned threads;  // CPU: worker threads (0 = hardware concurrency)
  void* stream;      // CUDA: the cudaStream_t to run on
  // Pixels (kCapabilityPixels): slots then holds one histogram per active
  // channel, each binning->slots() long, in ascending channel order.
  PixelLayout layout = {};
  // Weights (kCapabilityWeights): `weights` has one weight of `weight_type` per
  // sample; the sums go to `weight_sums` (binning->slots() doubles per histogram,
  // same memory space, cleared unless accumulate); `slots` is then unused.
  const void* weights = nullptr;
  SampleType weight_type = SampleType::f32;
  double* weight_sums = nullptr;
  const void* prepared = nullptr;
  const void* prepared_host = nullptr;
  // Deterministic weights (kCapabilityDeterministic): `weight_bound` points to
  // one double, where the strategy runs, the largest finite |weight| of the
  // whole call (the plan computes it before the call's pieces run, so every
  // piece and every strategy rounds each weight alike; fixed_point.hpp).
  // CUDA calls of one piece may instead pass `bound_guess`: the plan's device
  // word with the bound of its last call (a double's bits; 0 for none). The
  // strategy then finds the call's bound itself into *weight_bound (zero on
  // entry) while it counts with the guess's exponent, and counts again with
  // the found one where the two exponents differ, so the sums are the same
  // as with the bound given; it updates the guess and leaves *weight_bound zero.
  bool deterministic = false;
  double* weight_bound = nullptr;
  unsigned long long* bound_guess = nullptr;
  // Squares (kCapabilitySquares): the sums of squared weights, laid out as
  // weight_sums, cleared unless accumulate.
  double* weight_squares = nullptr;
  // Batches (kCapabilitySegments, kCapabilityTiles): slots then holds
  // batch.segments histograms, each binning->slots() long.
  BatchArgs batch = {};
  // N-d (kCapabilityAxes): n is the number of points; `samples` is unused.
  AxesArgs axes = {};
};

struct Strategy {
  const char* name;
  Backend backend;
  const char* summary;  // one line: what the method is
  const char* source;   // which work, listing or figure it comes from (docs/REFERENCES.md)
  // True when this strategy can count `problem`; otherwise sets *why_not.
  bool (*supports)(const Problem& problem, std::string* why_not);
  // Bytes of workspace run() needs (0 for none).
  std::size_t (*workspace_bytes)(const Problem& problem);
  // Counts; throws levelhist::Error on failure.
  void (*run)(const RunArgs& args);
  // Sample counts at which this strategy changes behaviour (chunk, tile,
  // overflow-flush and grid boundaries) for the tests to probe at n-1, n, n+1;
  // nullptr when there are none worth naming.
  std::vector<std::uint64_t> (*boundary_sizes)(const Problem& problem) = nullptr;
  // Capability bits this strategy handles beyond plain 1-D counting.
  unsigned capabilities = 0;
  // Data the strategy derives from the problem once per plan (lookup tables):
  // prepare() writes prepared_bytes(problem) bytes into host memory; the plan
  // keeps them (in device memory for CUDA) and passes them as RunArgs::prepared.
  // nullptr: nothing to prepare.
  std::size_t (*prepared_bytes)(const Problem& problem) = nullptr;
  void (*prepare)(const Problem& problem, void* host) = nullptr;
};

// The one test of whether a strategy can take a problem: its capabilities cover
// what the problem needs, and its own `supports` agrees. Sets *why_not if not.
bool strategy_accepts(const Strategy& strategy, const Problem& problem, std::string* why_not = nullptr);

// Every strategy of this build, in registry order (the lab's too, once the
// program linked it and installed them).
std::span<const Strategy* const> all_strategies();
// The strategy named `name`, or nullptr.
const Strategy* find_strategy(std::string_view name);
// Whether `backend` can run on this machine now; if not, *why_not says why.
bool backend_available(Backend backend, std::string* why_not = nullptr);
// Whether this build contains the CUDA backend at all.
bool built_with_cuda();

// ---- auto's choice: the selection table ---------------------------------------

// The strategy `auto` picks for a problem on a backend: the first row of the
// selection table whose class matches the problem (and, for CUDA, the current
// device's compute capability) and whose strategy accepts it. Throws
// Error(unsupported) if none can take it.
const Strategy& choose_strategy(const Problem& problem, Backend backend);

// The same choice, row by row, for `levelhist list --why` and the docs.
struct SelectionStep {
  std::string row;        // the row's problem class, e.g. "u8/i8, plain, counts"
  std::string strategy;   // the strategy it names
  std::string evidence;   // the measurement that put it there (docs/BENCHMARKS.md)
  bool matched = false;   // the problem is of the row's class
  bool chosen = false;    // ... and the strategy accepted it: auto's choice
  std::string why;        // why not, when not chosen
};
std::vector<SelectionStep> explain_choice(const Problem& problem, Backend backend);

}  // namespace levelhist
