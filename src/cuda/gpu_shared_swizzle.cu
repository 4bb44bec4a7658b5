// gpu_shared_swizzle: one XOR-swizzled shared 32-bit histogram per block, for
// 16-bit, 32-bit and float samples whose bins + 3 counters fit in shared memory
// (up to ~56 K), with the exact bin maps of general_common.cuh. auto's choice
// for u16 in 4096 bins (12-bit images), f32 in even bins, u32/i32 keys in up to
// ~56 K bins. Design, arithmetic and the H200 study: docs/PERFORMANCE-general.md.
#include "cuda/shared_histogram.cuh"

namespace levelhist::strategies {
namespace {

using Impl = cuda_detail::general::SharedStrategy<cuda_detail::general::Layout::swizzled>;

bool supports(const Problem& p, std::string* why_not) { return Impl::supports(p, why_not, "gpu_shared_swizzle"); }

// Measured (H200, 1 GiB, docs/PERFORMANCE-general.md section 18): u16 / 4096
// bins 3531-3987 GB/s on uniform, constant, skewed and ramp data (0.78-0.88 of
// the read, within 1.13x of each other); f32 / 1024 even bins 3902-4290 GB/s except
// samples on edges (the exact double path there, 2175-2201). Its rows in the
// selection table (src/core/selection.cpp) cite these runs.

}  // namespace

const Strategy gpu_shared_swizzle{
    "gpu_shared_swizzle",
    Backend::cuda,
    "one shared 32-bit histogram per block, XOR-swizzled against strided bank conflicts; exact integer-shift, "
    "float-margin and cell-table bin maps; 16/32/64-bit and float samples, up to ~56 K bins",
    "levelhist (docs/PERFORMANCE-general.md); the per-block shared histogram of Kirk & Hwu, PMPP ch. 9, "
    "Fig. 9.10",
    supports,
    Impl::workspace_bytes,
    Impl::run,
    Impl::boundaries,
    /*capabilities=*/0,
    cuda_detail::general::prepared_tables_bytes,
    cuda_detail::general::prepare_tables};

}  // namespace levelhist::strategies
