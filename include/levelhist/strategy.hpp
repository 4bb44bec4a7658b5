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
  kCapabilityPixels = 1u << 0,   // PixelLayout other than plain (channels, active subset, rows, pitch)
  kCapabilityWeights = 1u << 1,  // weighted sums instead of counts
};

// What a strategy is asked to count: enough to decide support and workspace.
struct Problem {
  SampleType type;
  const Binning* binning;
  std::uint64_t n;  // samples (for pixels: width * height * channels)
  PixelLayout layout = {};
  bool weighted = false;                     // one weight per sample (per pixel for pixels)
  SampleType weight_type = SampleType::f32;  // f32 or f64
  unsigned needs() const {
    return (layout.is_plain() ? 0u : unsigned{kCapabilityPixels}) | (weighted ? unsigned{kCapabilityWeights} : 0u);
  }
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
