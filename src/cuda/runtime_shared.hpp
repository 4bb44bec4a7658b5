// Pieces of the CUDA dispatch layer (runtime.cu) that the pixel and weighted
// entry points (runtime_general.cu) share with it, so both split, stage and
// pick strategies the same way.
#pragma once
#include <cstddef>
#include <cstdint>

#include "levelhist/binning.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist::cuda::dispatch {

// A strategy sees at most this many samples per run() call (ARCHITECTURE.md).
inline constexpr std::uint64_t kMaxSamplesPerCall = std::uint64_t{1} << 31;
// Bytes at the head of the workspace that hold the explicit edges (0 for even bins).
std::size_t edges_bytes(const Binning& binning);
// `strategy`, checked to be a CUDA strategy that accepts the problem, or auto's choice.
const Strategy& pick(const Problem& problem, const Strategy* strategy);
// memcpy into a pinned staging buffer with several threads (fast from freshly mapped files).
void copy_to_staging(unsigned char* dst, const unsigned char* src, std::size_t bytes);
// Stages explicit edges at the head of the workspace and fills the RunArgs
// fields every call shares (type, binning, indexer, workspace, stream).
RunArgs prepare(void* d_workspace, std::size_t ws_bytes, SampleType type, const Binning& binning, void* stream);
// Clears the staged edges after the call (checked), or after a strategy threw
// (unchecked: the strategy's error is the one to report).
void clear_edges(const RunArgs& args, void* d_workspace, const Binning& binning, void* stream);
void clear_edges_quietly(const RunArgs& args, void* d_workspace, const Binning& binning, void* stream);

}  // namespace levelhist::cuda::dispatch
