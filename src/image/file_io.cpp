// levelhist: writing a whole file so that a reader never sees part of it (file_io.hpp).
#include "image/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "levelhist/error.hpp"

namespace levelhist::detail {
namespace {

// Error(input) "<path>: <what>; <fix>", the shape of every file error.
[[noreturn]] void input_error(const std::string& path, const std::string& what, const std::string& fix) {
  throw Error(ErrorKind::input, path + ": " + what + "; " + fix);
}

std::string system_reason() { return std::strerror(errno); }

// A temporary name next to `path` that no other writer in this process or
// another one picks (pid + counter; O_EXCL catches the rest).
std::string temp_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = temp_name(path);
    // 0666 under the umask: the permissions a plain create would give.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    input_error(path, "cannot create a file next to it (" + system_reason() + ")",
                "check that the directory exists and is writable");
  auto fail = [&](const std::string& doing) {
    std::string reason = system_reason();
    ::close(fd);
    ::unlink(tmp.c_str());
    input_error(path, "cannot " + doing + " (" + reason + ")", "check the free space and permissions of the directory");
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write it");
    done += static_cast<std::size_t>(n);
  }
  // The data must be on disk before the name points at it, or a crash could leave an empty file.
  if (::fsync(fd) != 0) fail("write it");
  if (::close(fd) != 0) {
    std::string reason = system_reason();
    ::unlink(tmp.c_str());
    input_error(path, "cannot write it (" + reason + ")", "check the free space and permissions of the directory");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = system_reason();
    ::unlink(tmp.c_str());
    input_error(path, "cannot replace it (" + reason + ")", "check that it is not a directory and that it is writable");
  }
}

}  // namespace levelhist::detail
