// levelhist bench: the streaming-read limit. A histogram must read every input
// byte once and writes almost nothing, so the fastest possible "histogram" is
// a kernel that only reads: its GB/s on the same buffer, in the same process,
// is the ceiling every strategy is reported against.
#pragma once
#include <cstdint>

namespace levelhist::bench {

// Reads `bytes` bytes at device pointer d_bytes (16-byte aligned) once, with
// 16-byte loads in a grid-stride loop over a grid that fills the device, and
// folds them into a value that decides whether *d_sink is written, so the
// compiler must keep every load. Asynchronous on `stream` (a cudaStream_t).
void stream_read(const void* d_bytes, std::uint64_t bytes, unsigned* d_sink, void* stream, bool dependent = false);

}  // namespace levelhist::bench
