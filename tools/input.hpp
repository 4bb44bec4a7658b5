// levelhist CLI: reading inputs in bounded pieces.
//
// Counting plain samples and pixels reads each input as a levelhist::Source
// (read_through): the library reads a regular file with pread() from several
// threads and a stream with read(), counting each buffer as it arrives. The
// other passes (the --range auto scan, weights, N-d columns; text and sort)
// take blocks of samples from scan():
//
// Regular files (and a standard input redirected from a regular file) are
// mapped read-only in windows of up to 1 GiB: each window starts at the page
// that holds the first unread sample and ends at most window-bytes later, so a
// sample that straddles the end of one window is read whole from the next one
// (the windows overlap by less than a page). The callback gets every whole
// sample of a window in one call, so levelhist::fill() can spread one big call
// over all cores. Pipes, terminals, devices and files that cannot be mapped are
// read() in chunks of 16 MiB, a partial sample carried over to the next chunk.
//
// Testing knobs (environment): LEVELHIST_WINDOW_BYTES (the mapping window,
// default 1 GiB; any positive size, e.g. 4100 makes small files span several
// windows with samples straddling their ends) and LEVELHIST_CHUNK_BYTES (the
// read() chunk, default 16 MiB). LEVELHIST_PROGRESS_BYTES sets the input size
// above which a progress bar is shown (default 256 MiB; only on a terminal).
//
// A mapped file that shrinks while it is read (or whose storage fails) raises
// SIGBUS in whichever thread reads the lost page; input.cpp's handler maps
// zeros there so the reader goes on, and the scan then throws an input error
// ("... shrank while it was read"): never a crash, never a partial result.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "levelhist/source.hpp"

namespace levelhist::cli {

// A progress bar on stderr: only when stderr is a terminal, only once the
// input is larger than the threshold, redrawn at most 5 times a second, erased
// by finish() or the destructor (so an error message starts on a clean line).
// Never when not `wanted` (--no-progress).
class Progress {
 public:
  Progress(std::uint64_t total_bytes, bool total_known, bool wanted = true);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool active() const { return enabled_; }  // stderr is a terminal
  void add(std::uint64_t bytes);
  void finish();

 private:
  void draw();
  bool enabled_;
  bool shown_ = false;
  std::uint64_t total_;
  bool total_known_;
  std::uint64_t done_ = 0;
  std::uint64_t threshold_;
  double last_draw_ = -1.0;
  double start_;
};

// One input as given on the command line.
struct Input {
  std::string arg;    // the path, or "-" for standard input
  std::string label;  // for messages: the quoted path, or "standard input"
  bool is_stdin = false;
  // Set by InputSet::validate(): a regular file whose size is known up front.
  bool sized = false;
  std::uint64_t bytes = 0;  // when sized
  // Where the samples start in a sized input: for a standard input redirected
  // from a regular file, the offset it had when levelhist started (every pass
  // of --range auto starts there); plus a header skipped (skip_header).
  std::uint64_t start = 0;
  int spill_fd = -1;        // standard input copied to an unlinked temporary file
  // A stream (pipe, device, FIFO) peek() looked into: the bytes it read, which
  // scan() delivers first, and the descriptor of a named one, kept open.
  std::vector<unsigned char> pending;
  int held_fd = -1;
};

// Blocks of whole samples: data holds n samples (n >= 1), any alignment.
using BlockFn = std::function<void(const unsigned char* data, std::uint64_t n)>;
// Reads a whole Source (Plan::fill) and returns the bytes it read.
using SourceFn = std::function<std::uint64_t(Source& source)>;

class InputSet {
 public:
  // `type_name` and `sample_size` describe the samples ("f32", 4) for messages.
  InputSet(const std::vector<std::string>& args, std::size_t sample_size, std::string type_name);
  ~InputSet();
  InputSet(const InputSet&) = delete;
  InputSet& operator=(const InputSet&) = delete;

  // Checks every input before anything is read: it exists, is readable, is not
  // a directory, and (when its size is known) holds a whole number of samples.
  // Throws an input error naming the first bad one.
  void validate();
  // For a second pass (--range auto): copies a standard input that is a pipe
  // or terminal into an unlinked file under $TMPDIR (default /tmp).
  void make_rescannable(Progress* progress);

  // The samples' size and name, once known (the type of a .npy file comes
  // from its header): a sized input that is not a whole number of them is an
  // input error, as in validate().
  void set_sample(std::size_t sample_size, std::string type_name);
  // The first min(n, what there is) bytes of input i, from where its samples
  // start, without counting them: read in place from a sized input; read
  // from a stream and kept for scan(). For headers (a .npy file's).
  std::vector<unsigned char> peek(std::size_t i, std::size_t n);
  // The first `bytes` of input i are a header, not samples (at most what
  // peek() returned). Call before scan().
  void skip_header(std::size_t i, std::uint64_t bytes);

  std::size_t size() const { return inputs_.size(); }
  const Input& operator[](std::size_t i) const { return inputs_[i]; }
  // Bytes of the inputs whose size is known, and whether that is all of them.
  std::uint64_t known_bytes() const;
  bool all_known() const;

  // Calls fn for consecutive blocks of whole samples of input i, in order; a
  // window (or chunk) at a time, or pieces of at most 64 MiB while a progress
  // bar may be shown. Throws an input error on a read error or a trailing
  // partial sample.
  void scan(std::size_t i, const BlockFn& fn, Progress* progress);
  // Hands input i to `fill` as a Source, from where its samples start to its
  // end: pread() for a regular file (several threads at once), read() for a
  // stream, the bytes peek() read coming first. Its reads count towards
  // `progress`; its errors name the input by its label, and a stream that
  // ends inside a sample is the same input error as in validate(). Returns
  // what `fill` returns.
  std::uint64_t read_through(std::size_t i, const SourceFn& fill, Progress* progress);

 private:
  friend class InputSource;
  void scan_mapped(Input& in, int fd, std::uint64_t begin, std::uint64_t end, const BlockFn& fn, Progress* progress);
  void scan_stream(Input& in, int fd, const BlockFn& fn, Progress* progress);
  [[noreturn]] void ragged(const Input& in, std::uint64_t bytes) const;
  // A mapped window lost pages (SIGBUS: the file shrank, or its storage failed).
  [[noreturn]] void lost_mapped_data(const Input& in, int fd, std::uint64_t expected_end) const;
  void deliver(const unsigned char* data, std::uint64_t n, const BlockFn& fn, Progress* progress) const;

  std::vector<Input> inputs_;
  std::size_t sample_size_;
  std::string type_name_;
  std::uint64_t window_bytes_;
  std::uint64_t chunk_bytes_;
};

}  // namespace levelhist::cli
