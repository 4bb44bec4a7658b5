// levelhist: writing a whole file so that a reader never sees part of it (file_io.hpp).
#include "image/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "image/temp_files.hpp"
#include "levelhist/error.hpp"

namespace levelhist::detail {
namespace {

// Error(input, "<path>: <what>", fix), the shape of every file error: what()
// reads "<path>: <what>; <fix>".
[[noreturn]] void input_error(const std::string& path, const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::input, path + ": " + what, fix);
}

// The system's words for an error, as the middle of a sentence ("no space left on device").
std::string cause(int err) {
  std::string text = std::strerror(err);
  if (text.size() > 1 && std::isupper(static_cast<unsigned char>(text[0])) &&
      !std::isupper(static_cast<unsigned char>(text[1])))
    text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// What the user can do about an error while writing an output.
std::string fix_for(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT: return "free some space there, or write the output to another file system";
    case EFBIG: return "write the output to a file system that takes larger files";
    case EACCES:
    case EPERM: return "check the permissions of the file and of its directory, or write the output elsewhere";
    case EROFS: return "the file system is read-only: write the output elsewhere";
    case ENOENT:
    case ENOTDIR: return "check that the directory exists";
    case EISDIR: return "name a file, not a directory";
    case ELOOP: return "the symbolic links form a loop: fix them or name another file";
    case ENAMETOOLONG: return "use a shorter name";
    case ENXIO:
      return "a socket, or a FIFO nobody reads, cannot be written as a file: name a file, a device or a FIFO with a reader";
    case EPIPE: return "keep the reader of the FIFO or pipe open until the output is written";
    default: return "check the path, the device and the file system";
  }
}

// "<path>: cannot <doing>: <cause>; <fix>". `doing` says "it" for the path
// itself and "the file it links to" when a link was followed.
[[noreturn]] void write_error(const std::string& path, const std::string& doing, int err) {
  input_error(path, "cannot " + doing + ": " + cause(err), fix_for(err));
}

// A temporary name next to `path` that no other writer in this process or
// another one picks (pid + counter; O_EXCL catches the rest).
std::string temp_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// The descriptor a path of the /dev/fd family names: /dev/stdin, /dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/<our pid>/fd/N; -1 for others.
// Opening one of these reopens the file behind the descriptor (at offset 0,
// or not at all for a socket), so levelhist writes to the descriptor instead.
int descriptor_of(const std::string& path) {
  const std::string p = std::filesystem::path(path).lexically_normal().string();
  if (p == "/dev/stdin") return 0;
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
    if (p.rfind(prefix, 0) != 0) continue;
    int fd = -1;
    const char* first = p.data() + prefix.size();
    const char* last = p.data() + p.size();
    auto [end, ec] = std::from_chars(first, last, fd);
    if (ec == std::errc() && end == last && first != last && fd >= 0) return fd;
  }
  return -1;
}

// The directory part of a path, with its slash ("dir/"), or "" for a bare name.
std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Writes all of `bytes` to fd; returns 0 or the errno of the failure.
int write_all(int fd, std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::size_t piece = std::min<std::size_t>(bytes.size() - done, std::size_t{1} << 30);
    const ssize_t n = ::write(fd, bytes.data() + done, piece);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  constexpr int kMaxLinks = 40;  // Linux's own limit (MAXSYMLINKS)
  std::string current = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    if (const int fd = descriptor_of(current); fd >= 0) return {OutputTarget::Kind::descriptor, "", fd};
    const std::string it = links == 0 ? "it" : "the file it links to";
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT) return {OutputTarget::Kind::replace, current, -1};  // a new file (a missing directory fails later)
      write_error(path, "look up " + it, err);
    }
    if (S_ISLNK(st.st_mode)) {
      std::vector<char> target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
      const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
      if (n < 0) write_error(path, "read the symbolic link", errno);
      if (static_cast<std::size_t>(n) >= target.size()) write_error(path, "read the symbolic link", ENAMETOOLONG);
      const std::string next(target.data(), static_cast<std::size_t>(n));
      current = next.rfind('/', 0) == 0 ? next : directory_of(current) + next;
      continue;
    }
    if (S_ISDIR(st.st_mode)) input_error(path, links == 0 ? "is a directory" : "links to a directory", fix_for(EISDIR));
    if (S_ISREG(st.st_mode)) return {OutputTarget::Kind::replace, current, -1};
    return {OutputTarget::Kind::in_place, current, -1};  // a character or block device, a FIFO, a socket
  }
  write_error(path, "follow its links", ELOOP);
}

StagedOutput::StagedOutput(const std::string& path, std::span<const std::uint8_t> bytes)
    : StagedOutput(path, resolve_output(path), bytes) {}

StagedOutput::StagedOutput(const std::string& path, const OutputTarget& target, std::span<const std::uint8_t> bytes)
    : path_(path), target_(target.path) {
  const bool followed = target.kind != OutputTarget::Kind::descriptor && target.path != path;
  const std::string it = followed ? "the file it links to" : "it";
  if (target.kind == OutputTarget::Kind::descriptor) {
    if (const int err = write_all(target.fd, bytes)) write_error(path, "write " + it, err);
    return;
  }
  if (target.kind == OutputTarget::Kind::in_place) {
    // What `>` does to a device or FIFO, less the truncation: open and write.
    const int fd = ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) write_error(path, "open " + it + " for writing", errno);
    const int err = write_all(fd, bytes);
    if (err) {
      ::close(fd);
      write_error(path, "write " + it, err);
    }
    if (::close(fd) != 0) write_error(path, "write " + it, errno);
    return;
  }
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp_ = temp_name(target.path);
    // Registered before it exists: a signal now removes at most a name not yet there.
    ticket_ = register_temp_file(temp_.c_str());
    // 0666 under the umask: the permissions a plain create would give.
    fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) break;
    const int err = errno;
    unregister_temp_file(ticket_);
    ticket_ = -1;
    if (err != EEXIST) {
      temp_.clear();
      write_error(path, "create a file next to " + it, err);
    }
  }
  if (fd < 0) {
    temp_.clear();
    write_error(path, "create a file next to " + it, EEXIST);
  }
  int err = write_all(fd, bytes);
  // The data must be on disk before the name points at it, or a crash could leave an empty file.
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (err) {
    discard();
    write_error(path, "write " + it, err);
  }
}

StagedOutput::StagedOutput(StagedOutput&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      temp_(std::exchange(other.temp_, std::string())),
      ticket_(std::exchange(other.ticket_, -1)) {}

StagedOutput& StagedOutput::operator=(StagedOutput&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, std::string());
    ticket_ = std::exchange(other.ticket_, -1);
  }
  return *this;
}

StagedOutput::~StagedOutput() { discard(); }

void StagedOutput::discard() noexcept {
  if (!temp_.empty()) ::unlink(temp_.c_str());
  unregister_temp_file(ticket_);
  temp_.clear();
  ticket_ = -1;
}

void StagedOutput::commit() {
  if (temp_.empty()) return;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    discard();
    write_error(path_, target_ == path_ ? "replace it" : "replace the file it links to", err);
  }
  // Forgotten only now: a signal between the rename and here unlinks a name that is gone.
  unregister_temp_file(ticket_);
  temp_.clear();
  ticket_ = -1;
}

void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes) {
  StagedOutput(path, bytes).commit();
}

}  // namespace levelhist::detail
