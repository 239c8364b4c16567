#include "plugin/kernel_host_protocol.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ulpscope::kernel_host {

bool send_message(int socket, const void* data, std::size_t size, int fd) {
  iovec io{const_cast<void*>(data), size};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  ssize_t sent = 0;
  do {
    sent = ::sendmsg(socket, &m, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent == ssize_t(size);
}

bool receive_message(int socket, void* data, std::size_t size, int* fd) {
  if (fd != nullptr) *fd = -1;
  iovec io{data, size};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t got = 0;
  do {
    got = ::recvmsg(socket, &m, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); got >= 0 && c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int received = -1;
    std::memcpy(&received, CMSG_DATA(c), sizeof(int));
    if (fd != nullptr && *fd < 0) *fd = received;
    else ::close(received);
  }
  std::uint32_t magic = 0;
  if (got == ssize_t(size) && size >= sizeof magic) std::memcpy(&magic, data, sizeof magic);
  if (got == ssize_t(size) && magic == kMagic && (m.msg_flags & MSG_TRUNC) == 0) return true;
  if (fd != nullptr && *fd >= 0) {
    ::close(*fd);
    *fd = -1;
  }
  return false;
}

}  // namespace ulpscope::kernel_host
