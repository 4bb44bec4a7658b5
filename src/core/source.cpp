// Sources (levelhist/source.hpp) and Plan::fill from a source.
#include "levelhist/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
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

}  // namespace

FileSource::FileSource(const std::string& path) : FdSource(open_for_reading(path), "'" + path + "'") {}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

namespace detail {

void throw_partial_item(const Request& r, const Source& source, std::uint64_t total) {
  const std::size_t item = r.layout.channels * sample_size(r.type);
  throw Error(ErrorKind::input,
              source.name() + " holds " + std::to_string(total) + " bytes, not a whole number of " +
                  std::to_string(item) + "-byte " + (r.is_pixels() ? "pixels" : "samples"),
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
