// levelhist: data that arrives in pieces (a file, a pipe, a socket), counted
// as it is read.
//
//   levelhist::Plan plan(levelhist::Request::counts(SampleType::u8, Binning::per_value(SampleType::u8)));
//   levelhist::Histogram h(plan.request().binning);
//   levelhist::FileSource file("data.bin");
//   plan.fill(h, file);
//
// The plan reads the source into buffers of its own (pinned host memory on a
// CUDA plan, so the copy to the GPU starts from them without another copy)
// and counts each buffer while the next ones are read. A positional source (a
// regular file) can be read by several threads at once, each at its own
// offset; any other source is read in order by one thread. Plain arrays and
// pixels (packed, `channels` samples each) can come from a source; weights,
// batches and N-d points come from memory (Plan::fill with an Input).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace levelhist {

class Source {
 public:
  virtual ~Source() = default;
  // For messages: "standard input", the quoted path, ...
  virtual std::string name() const = 0;
  // Reads up to `bytes` bytes into `dst`, in order, and returns how many; 0
  // only at the end. Called by one thread at a time. Throws Error(input) when
  // the data cannot be read.
  virtual std::size_t read(void* dst, std::size_t bytes) = 0;
  // The bytes still to come when known up front (a regular file), so that a
  // consumer can share them out among readers and devices.
  virtual std::optional<std::uint64_t> remaining() const { return std::nullopt; }
  // Positional sources: read_at may be called from several threads at once,
  // with `offset` counted from where the source stood when the fill began;
  // it reads exactly `bytes` bytes unless the data ends first. A consumer that
  // reads positionally calls consumed() with the bytes it took, once, at the end.
  virtual bool positional() const { return false; }
  virtual std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset);
  virtual void consumed(std::uint64_t /*bytes*/) {}
};

// A file descriptor: pread() for a regular file (positional, from its offset
// when the source is made, or from `begin`, to its end or `end`), read() for
// anything else (pipes, terminals, devices, and regular files of size 0, which
// may be pseudo-files with content). The descriptor is not closed.
class FdSource : public Source {
 public:
  explicit FdSource(int fd, std::string name);
  FdSource(int fd, std::string name, std::uint64_t begin, std::uint64_t end);  // a regular file's byte range
  std::string name() const override { return name_; }
  std::size_t read(void* dst, std::size_t bytes) override;
  std::optional<std::uint64_t> remaining() const override;
  bool positional() const override { return positional_; }
  std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset) override;
  void consumed(std::uint64_t bytes) override;

 protected:
  int fd_;
  std::string name_;
  bool positional_ = false;
  std::uint64_t begin_ = 0, end_ = 0, pos_ = 0;  // positional: [begin_, end_), pos_ the next read()'s offset
};

// A file by path, opened read-only and closed with the source. A file larger
// than the machine's memory is also opened with O_DIRECT: reads whose
// buffer, offset and length are multiples of 4096 bytes (the CUDA path's
// pinned chunks) then bypass the page cache, which such a file would only
// churn; other reads, and file systems without O_DIRECT, go through the
// page cache. LEVELHIST_DIRECT_IO=1 asks for O_DIRECT at any size, =0 never.
class FileSource : public FdSource {
 public:
  explicit FileSource(const std::string& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  std::size_t read_at(void* dst, std::size_t bytes, std::uint64_t offset) override;
  // Whether aligned reads bypass the page cache (O_DIRECT open and not refused).
  bool direct_io() const { return direct_fd_ >= 0 && direct_ok_.load(std::memory_order_relaxed); }

 private:
  int direct_fd_ = -1;
  std::atomic<bool> direct_ok_{true};
};

}  // namespace levelhist
