// Sources (levelhist/source.hpp) and Plan::fill from a source.
#include "levelhist/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/plan_impl.hpp"
#include "levelhist/error.hpp"

namespace levelhist {
namespace {

[[noreturn]] void read_failed(const std::string& name, int err) {
  throw Error(ErrorKind::input, "cannot read " + name + ": " + std::strerror(err),
              err == EISDIR ? "give a file, not a directory" : "check the input", ErrorSubject::data);
}

}  // namespace

std::size_t Source::read_at(void*, std::size_t, std::uint64_t) {
  throw Error(ErrorKind::internal, name() + " is not a positional source", "call read() instead");
}

FdSource::FdSource(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  struct stat st {};
  // A regular file of size 0 may be a pseudo-file with content all the same
  // (/proc, /sys): it is read in order to its end, as a stream.
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const off_t here = ::lseek(fd, 0, SEEK_CUR);
    if (here >= 0) {
      positional_ = true;
      begin_ = pos_ = static_cast<std::uint64_t>(here);
      end_ = std::max<std::uint64_t>(begin_, static_cast<std::uint64_t>(st.st_size));
    }
  }
}

FdSource::FdSource(int fd, std::string name, std::uint64_t begin, std::uint64_t end)
    : fd_(fd), name_(std::move(name)), positional_(true), begin_(begin), end_(std::max(begin, end)), pos_(begin) {}

std::optional<std::uint64_t> FdSource::remaining() const {
  if (!positional_) return std::nullopt;
  return end_ - std::min(pos_, end_);
}

std::size_t FdSource::read(void* dst, std::size_t bytes) {
  if (positional_) {
    const std::size_t got = read_at(dst, bytes, pos_ - begin_);
    pos_ += got;
    // At the end, a shared descriptor (standard input) is left consumed, as consumed() leaves it.
    if (got == 0) ::lseek(fd_, static_cast<off_t>(pos_), SEEK_SET);
    return got;
  }
  while (true) {
    const ssize_t n = ::read(fd_, dst, bytes);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) read_failed(name_, errno);
  }
}

std::size_t FdSource::read_at(void* dst, std::size_t bytes, std::uint64_t offset) {
  if (!positional_) return Source::read_at(dst, bytes, offset);
  const std::uint64_t at = begin_ + offset;
  if (at >= end_) return 0;
  bytes = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, end_ - at));
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::pread(fd_, static_cast<unsigned char*>(dst) + got, bytes - got, static_cast<off_t>(at + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_failed(name_, errno);
    if (n == 0) {
      // The file ended before the size it had when the source was made.
      struct stat st {};
      const std::uint64_t now = ::fstat(fd_, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : at + got;
      throw Error(ErrorKind::input,
                  name_ + " shrank while it was read: it had " + std::to_string(end_) + " bytes, now " +
                      std::to_string(now),
                  "count it again once nothing is writing to it", ErrorSubject::data);
    }
    got += static_cast<std::size_t>(n);
  }
  return got;
}

void FdSource::consumed(std::uint64_t bytes) {
  if (!positional_) return;
  pos_ = std::min(end_, pos_ + bytes);
  ::lseek(fd_, static_cast<off_t>(pos_), SEEK_SET);  // a shared descriptor (standard input) ends consumed
}

namespace {

int open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    throw Error(ErrorKind::input, "cannot open '" + path + "': " + std::strerror(err),
                err == ENOENT ? "check the path" : "check the file's permissions", ErrorSubject::data);
  }
  return fd;
}

// O_DIRECT for a regular file larger than physical memory (or as
// LEVELHIST_DIRECT_IO says); -1 where not wanted or not possible.
int open_direct(const std::string& path, std::uint64_t size) {
  const char* env = std::getenv("LEVELHIST_DIRECT_IO");
  const std::string choice = env ? env : "";
  if (choice == "0") return -1;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const std::uint64_t memory =
      pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  if (choice != "1" && !(memory > 0 && size > memory)) return -1;
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_DIRECT);  // EINVAL on tmpfs: -1, buffered reads
}

}  // namespace

FileSource::FileSource(const std::string& path) : FdSource(open_for_reading(path), "'" + path + "'") {
  if (positional_) direct_fd_ = open_direct(path, end_);
}

FileSource::~FileSource() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
  if (fd_ >= 0) ::close(fd_);
}

std::size_t FileSource::read_at(void* dst, std::size_t bytes, std::uint64_t offset) {
  constexpr std::uint64_t kAlign = 4096;
  const std::uint64_t at = begin_ + offset;
  if (!direct_io() || at >= end_) return FdSource::read_at(dst, bytes, offset);
  bytes = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, end_ - at));
  if ((reinterpret_cast<std::uintptr_t>(dst) | at | bytes) % kAlign != 0) return FdSource::read_at(dst, bytes, offset);
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n =
        ::pread(direct_fd_, static_cast<unsigned char*>(dst) + got, bytes - got, static_cast<off_t>(at + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL) {  // refused after all: the page cache from now on
      direct_ok_.store(false, std::memory_order_relaxed);
      break;
    }
    if (n < 0) read_failed(name_, errno);
    got += static_cast<std::size_t>(n);
    // An early end (the buffered read below says what happened) or an odd length: the rest buffered.
    if (n == 0 || n % kAlign != 0) break;
  }
  if (got < bytes) got += FdSource::read_at(static_cast<unsigned char*>(dst) + got, bytes - got, offset + got);
  return got;
}

namespace detail {

void throw_partial_item(const Request& request, const Source& source, std::uint64_t total) {
  const std::size_t item = request.layout.channels * sample_size(request.type);
  throw Error(ErrorKind::input,
              source.name() + " holds " + std::to_string(total) + " bytes, not a whole number of " +
                  std::to_string(item) + "-byte " + (request.is_pixels() ? "pixels" : "samples"),
              "check the sample type (and the channels), or the data's length", ErrorSubject::data);
}

// The plain way, every backend: whole items read into a buffer, counted by
// the plan's host path a buffer at a time. The backends read sources their
// own way where that is faster (cpu_fill_source, cuda_fill_source).
std::uint64_t fill_source_in_chunks(const Plan::Impl& plan, Source& source, void* out, const CountItems& count) {
  const Request& r = plan.request;
  const std::size_t item = r.layout.channels * sample_size(r.type);
  constexpr std::size_t kChunk = std::size_t{16} << 20;
  std::vector<unsigned char> buf(kChunk / item * item);
  std::size_t have = 0;
  std::uint64_t total = 0;
  bool first = true;
  while (true) {
    const std::size_t got = source.read(buf.data() + have, buf.size() - have);
    have += got;
    total += got;
    const bool end = got == 0;
    if (have == buf.size() || (end && have >= item)) {
      const std::size_t items = have / item;
      const Input input = r.is_pixels() ? Input::image(buf.data(), items, 1) : Input::array(buf.data(), items);
      count(geometry_of(r, input), input, !first);
      first = false;
      std::memmove(buf.data(), buf.data() + items * item, have - items * item);
      have -= items * item;
    }
    if (end) break;
  }
  if (have != 0) throw_partial_item(r, source, total);
  if (first) std::memset(out, 0, r.output_slots() * 8);
  return total;
}

}  // namespace detail

std::uint64_t Plan::fill_slots(void* slots, Source& source, bool accumulate) const {
  const Request& r = impl_->request;
  if (r.is_weighted() || r.is_batch() || r.is_nd())
    throw Error(ErrorKind::usage, "a source carries plain samples or pixels; weights, batches and N-d points do not "
                "come from one", "read the data into memory and pass an Input", ErrorSubject::data);
  std::vector<std::uint64_t> counts(r.output_slots(), 0);
  const std::uint64_t bytes = impl_->backend == Backend::cpu ? detail::cpu_fill_source(*impl_, source, counts.data())
                                                             : detail::cuda_fill_source(*impl_, source, counts.data());
  auto* out = static_cast<std::uint64_t*>(slots);
  for (std::size_t i = 0; i < counts.size(); ++i) out[i] = (accumulate ? out[i] : 0) + counts[i];
  return bytes;
}

}  // namespace levelhist
