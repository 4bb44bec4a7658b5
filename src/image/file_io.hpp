// Internal: writing output files (images, sorted samples, plots) so that a
// failure, a crash or a signal never leaves a partial file under the name the
// user gave — the one writer every output of levelhist goes through.
//
// Where the bytes go depends on what the path names (resolve_output):
//   * /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N (or a link to
//     one): that open file descriptor, written at its offset and never
//     reopened, truncated or renamed (as `>&N` would);
//   * an existing character or block device, FIFO or socket: opened write-only
//     and written in place, never created, truncated or replaced (/dev/null
//     stays /dev/null);
//   * a regular file, or a name that does not exist yet: written whole to a
//     temporary file next to it (TARGET.tmp-PID-N, mode 0666 under the umask),
//     flushed to disk and renamed over it, so a reader sees the old file or the
//     new one, never part of one;
//   * a symbolic link: followed to its final target, which is then one of the
//     above. The temporary file goes next to that target and is renamed over
//     it, so the link stays a link; a dangling link's target is created, as
//     `>` would;
//   * a directory: an error.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace levelhist::detail {

struct OutputTarget {
  enum class Kind : unsigned char { replace, in_place, descriptor };
  Kind kind = Kind::replace;
  std::string path;  // replace, in_place: the file written, links resolved
  int fd = -1;       // descriptor
};
// Throws Error(input) "<path>: <what>; <fix>" for a directory, a loop of
// links, or a path that cannot be looked up.
OutputTarget resolve_output(const std::string& path);

// An output written in two steps, so that a command can put its report on
// standard output between them and give up without a trace when that fails:
// the constructor writes the bytes (a complete, flushed temporary file for a
// replaced target; the whole of them for a device, FIFO or descriptor, which
// cannot be taken back), commit() renames the temporary file over the target.
// Destroying an uncommitted one removes its temporary file. Temporary files are
// also removed when SIGINT, SIGTERM or SIGHUP kills the process (temp_files.hpp).
// Errors are Error(input) "<path>: <what>: <cause>; <fix>", the cause in words
// (no space left on device, permission denied, read-only file system, ...).
class StagedOutput {
 public:
  StagedOutput() = default;  // nothing to write
  StagedOutput(const std::string& path, std::span<const std::uint8_t> bytes);
  StagedOutput(const std::string& path, const OutputTarget& target, std::span<const std::uint8_t> bytes);
  StagedOutput(StagedOutput&& other) noexcept;
  StagedOutput& operator=(StagedOutput&& other) noexcept;
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;
  ~StagedOutput();

  // Makes a replaced target's new content visible; nothing to do otherwise.
  void commit();
  // The path as given, which error messages start with.
  const std::string& path() const { return path_; }

 private:
  void discard() noexcept;
  std::string path_;    // as given
  std::string target_;  // the file renamed over (links resolved)
  std::string temp_;    // the temporary file; empty when there is none (left)
  int ticket_ = -1;     // the temporary file's entry in temp_files.hpp's registry
};

// StagedOutput(path, bytes).commit(): the whole file or, on any failure, no change.
void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes);

}  // namespace levelhist::detail
