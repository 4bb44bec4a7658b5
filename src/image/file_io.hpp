// Internal: writing output files (images, sorted samples) so that a failure or
// a crash never leaves a partial file under the name the user gave.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace levelhist::detail {

// Writes `bytes` to a temporary file next to `path` (permissions 0666 under
// the umask, as a plain create), flushes it to disk and renames it over
// `path`. Throws Error(input) "<path>: <what>; <fix>" and removes the
// temporary file when any step fails.
void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes);

}  // namespace levelhist::detail
