// The backend Options ask for, for the methods that are not registry
// strategies (counting sort, sparse histograms): the same rules and the same
// errors as resolve_strategy (api.cpp), which uses these too.
#pragma once
#include "levelhist/levelhist.hpp"

namespace levelhist::detail {

// Throws Error(unsupported, "--backend cuda: <why>") unless CUDA can run here.
void require_cuda_backend();
// automatic: CUDA when a GPU is present (and the build has the backend), else
// the CPU; cpu; cuda (checked by require_cuda_backend). `method` names the
// caller in the Error(usage) thrown when options.strategy is not "auto":
// these methods have no strategies to choose from.
Backend resolve_backend(const Options& options, const char* method);

}  // namespace levelhist::detail
