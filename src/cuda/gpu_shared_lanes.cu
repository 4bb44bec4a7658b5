// gpu_shared_lanes: 32 lane-column copies of a small shared histogram per
// block (h[slot][lane]): a warp's atomics always fall in 32 different banks,
// whatever the data. For few bins, explicit edges above all (the cell table
// plus lane columns measured 2469-3694 GB/s for 64 uneven f32 bins on an H200,
// 6.5-9.7x CUB). Design: docs/PERFORMANCE-general.md.
#include "cuda/shared_histogram.cuh"

namespace levelhist::strategies {
namespace {

using Impl = cuda_detail::general::SharedStrategy<cuda_detail::general::Layout::lanes>;

bool supports(const Problem& p, std::string* why_not) { return Impl::supports(p, why_not, "gpu_shared_lanes"); }

// Explicit edges with at most 512 slots (64 KB of columns, two blocks per SM)
// are where lane columns were measured best (cells8_lanes); elsewhere the one
// swizzled copy wins or nothing was measured: the selection table's row.

}  // namespace

const Strategy gpu_shared_lanes{
    "gpu_shared_lanes",
    Backend::cuda,
    "32 lane-column copies of a small shared histogram per block, conflict-free for any data; exact bin maps "
    "(cell table for explicit edges); 16/32/64-bit and float samples, up to ~1700 bins",
    "levelhist (docs/PERFORMANCE-general.md); gpu_lane_columns' layout for any sample type",
    supports,
    Impl::workspace_bytes,
    Impl::run,
    Impl::boundaries,
    /*capabilities=*/0,
    cuda_detail::general::prepared_tables_bytes,
    cuda_detail::general::prepare_tables};

}  // namespace levelhist::strategies
