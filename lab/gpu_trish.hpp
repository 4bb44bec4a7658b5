// TRISH (Brown & Snoeyink, InPar 2012) for any compiled-in k, the number of
// 32-bit words each thread reads per row: for the benchmark's k study (the
// paper's Fig. 4). Plain C++: includable from .cpp and .cu files.
//
//   for (int k : levelhist::cuda_detail::trish_k_values()) {
//     const levelhist::Strategy* s = levelhist::cuda_detail::trish_strategy(k);
//     levelhist::cuda::histogram(ws, ws_bytes, d_bytes, n, SampleType::u8, binning, d_slots, false, stream, s);
//   }
//
// trish_strategy(31) is strategies::gpu_trish and trish_strategy(63) is
// strategies::gpu_trish_k63 (both registered); the other values are full
// Strategy objects (name "gpu_trish_k<k>") that are not in the registry.
#pragma once
#include <span>

#include "levelhist/strategy.hpp"

namespace levelhist::cuda_detail {

// The k values compiled in, ascending (1 <= k <= 63).
std::span<const int> trish_k_values();
// The TRISH strategy with k words per thread per row, or nullptr when k is not compiled in.
const Strategy* trish_strategy(int k);

}  // namespace levelhist::cuda_detail
