// gpu_split_bins: more bins than one shared histogram holds (u16 one bin per
// value: 65539 counters, 256 KB > 227 KB) in P parts of shared memory; blocks
// come in groups of P reading the same 16-byte words, block p counting part p:
// the input comes from DRAM once and from L2 P times (the study's
// halves_paired_L2, 1763-2523 GB/s for 65536 bins on an H200, 9-14x CUB).
// Design and the losers (thread-block clusters with distributed shared
// memory, packed 16-bit counters): docs/PERFORMANCE-general.md.
#include "cuda/shared_histogram.cuh"

namespace levelhist::strategies {
namespace {

using Impl = cuda_detail::general::SharedStrategy<cuda_detail::general::Layout::split>;

bool supports(const Problem& p, std::string* why_not) { return Impl::supports(p, why_not, "gpu_split_bins"); }

// Two parts were measured (65536 bins); more parts read the input more often
// from L2, so the selection table puts gpu_bucket_sort first for u32/i32 keys
// in more than 65536 bins. One part is gpu_shared_swizzle's job (but f64).

}  // namespace

const Strategy gpu_split_bins{
    "gpu_split_bins",
    Backend::cuda,
    "bins split into up to 8 parts of shared memory, block groups reading the same words (DRAM once, L2 per "
    "part); u16 one bin per value and other large bin counts",
    "levelhist (docs/PERFORMANCE-general.md: halves_paired_L2)",
    supports,
    Impl::workspace_bytes,
    Impl::run,
    Impl::boundaries,
    /*capabilities=*/0,
    cuda_detail::general::prepared_tables_bytes,
    cuda_detail::general::prepare_tables};

}  // namespace levelhist::strategies
