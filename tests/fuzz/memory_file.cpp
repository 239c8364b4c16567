#include "tests/fuzz/memory_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ulpscope::fuzz {

const std::string& memory_file_holding(Bytes data) {
  static const int fd = memfd_create("ulpscope-fuzz-input", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
  if (ftruncate(fd, 0) != 0) throw std::runtime_error(std::string("ftruncate: ") + std::strerror(errno));
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = pwrite(fd, data.data() + done, data.size() - done, off_t(done));
    if (n < 0) throw std::runtime_error(std::string("pwrite: ") + std::strerror(errno));
    done += std::size_t(n);
  }
  return path;
}

}  // namespace ulpscope::fuzz
