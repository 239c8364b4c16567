#include "reports/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ulpscope {
namespace {

[[noreturn]] void fail(const std::filesystem::path& target, const char* what, int err) {
  throw std::runtime_error(
      fmt::format("cannot write {}: {}: {}", target.string(), what, std::strerror(err)));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  // mkstemp in the target's directory: rename(2) is atomic only within one
  // file system.
  std::string temp = (dir / fmt::format(".{}.tmp.XXXXXX", target.filename().string())).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(target, "creating a temporary file", errno);
  auto abandon = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    fail(target, what, err);
  };
  // mkstemp creates 0600; a report is an ordinary file (0644 under the usual umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) abandon("setting permissions");
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      abandon("writing");
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0) abandon("flushing to disk");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(target, "closing", err);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(target, "renaming the temporary file", err);
  }
  // The rename itself is durable once the directory is flushed; a failure
  // here leaves a complete file, so it is not an error.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace ulpscope
