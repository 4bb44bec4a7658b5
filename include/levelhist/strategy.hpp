// levelhist: the strategy registry. Every method (CPU or CUDA) is one Strategy
// in one explicit list (src/core/registry.cpp); the CLI, the tests and the
// benchmark all iterate over that list, and `auto` chooses from it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "levelhist/bin_index.hpp"
#include "levelhist/binning.hpp"
#include "levelhist/sample_type.hpp"

namespace levelhist {

enum class Backend : std::uint8_t { cpu, cuda };
std::string_view to_string(Backend backend);

// What a strategy is asked to count: enough to decide support and workspace.
struct Problem {
  SampleType type;
  const Binning* binning;
  std::uint64_t n;  // samples
};

// One call of a strategy's run function.
//  * samples: n samples of `type`, any alignment; host memory for CPU
//    strategies, device memory for CUDA ones.
//  * slots: binning.slots() 64-bit counters in the same memory space; cleared
//    first unless `accumulate`.
//  * indexer: the binning as a kernel-ready view; for CUDA strategies its
//    edge array is already in device memory.
//  * workspace: workspace_bytes(problem) bytes in the same memory space, 256-byte
//    aligned, contents undefined on entry.
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
};

struct Strategy {
  const char* name;
  Backend backend;
  const char* summary;  // one line: what the method is
  const char* source;   // which seed document, listing or figure it comes from
  // True when this strategy can count `problem`; otherwise sets *why_not.
  bool (*supports)(const Problem& problem, std::string* why_not);
  // Bytes of workspace run() needs (0 for none).
  std::size_t (*workspace_bytes)(const Problem& problem);
  // Counts; throws levelhist::Error on failure.
  void (*run)(const RunArgs& args);
  // How strongly `auto` prefers this strategy for a supported problem: the
  // highest rank among supported, runnable strategies wins; 0 = never chosen.
  int (*auto_rank)(const Problem& problem);
  // Sample counts at which this strategy changes behaviour (chunk, tile,
  // overflow-flush and grid boundaries) for the tests to probe at n-1, n, n+1;
  // nullptr when there are none worth naming.
  std::vector<std::uint64_t> (*boundary_sizes)(const Problem& problem) = nullptr;
};

// Every strategy compiled into this build, in registry order.
std::span<const Strategy* const> all_strategies();
// The strategy named `name`, or nullptr.
const Strategy* find_strategy(std::string_view name);
// Whether `backend` can run on this machine now; if not, *why_not says why.
bool backend_available(Backend backend, std::string* why_not = nullptr);
// Whether this build contains the CUDA backend at all.
bool built_with_cuda();

// The strategy `auto` picks for a problem on a backend; throws Error(unsupported)
// if none can take it.
const Strategy& choose_strategy(const Problem& problem, Backend backend);

}  // namespace levelhist
