#include "reports/atomic_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace ulpscope {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& target, const char* what, int err) {
  throw OutputFileError(fmt::format("cannot write {}: {}: {}", target.string(), what, std::strerror(err)));
}

// "" for a regular file or nothing, else what is there instead.
std::string not_regular(fs::file_status st) {
  switch (st.type()) {
    case fs::file_type::not_found:
    case fs::file_type::regular: return {};
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// The temporary file being written, for the handler of SIGINT and SIGTERM,
// which may only make async-signal-safe calls: hence a fixed buffer. One
// write at a time (the program writes its files one after another).
char g_temp[4096];
volatile std::sig_atomic_t g_temp_armed = 0;
struct sigaction g_previous_int, g_previous_term;

extern "C" void remove_temp_and_reraise(int sig) {
  if (g_temp_armed) ::unlink(g_temp);
  ::sigaction(sig, sig == SIGINT ? &g_previous_int : &g_previous_term, nullptr);
  ::raise(sig);  // blocked until the handler returns, then the default action
}

// Only where the signal's disposition is the default: a program (or a shell
// that ignores SIGINT for background jobs) keeps its own choice.
void install_cleanup_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (auto [sig, previous] : {std::pair{SIGINT, &g_previous_int}, std::pair{SIGTERM, &g_previous_term}}) {
      if (::sigaction(sig, nullptr, previous) != 0 || previous->sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_temp_and_reraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

void arm_cleanup(const std::string& temp) {
  if (temp.size() >= sizeof g_temp) return;
  std::memcpy(g_temp, temp.c_str(), temp.size() + 1);
  g_temp_armed = 1;
}

void disarm_cleanup() { g_temp_armed = 0; }

// SIGINT and SIGTERM held back while the temporary file is created and
// armed, or removed and disarmed: no signal between the two leaves it behind.
class HoldTerminationSignals {
 public:
  HoldTerminationSignals() {
    sigset_t hold;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &hold, &previous_);
  }
  ~HoldTerminationSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  HoldTerminationSignals(const HoldTerminationSignals&) = delete;
  HoldTerminationSignals& operator=(const HoldTerminationSignals&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

void check_output_path(const fs::path& target, std::string_view flag, const std::vector<NamedPath>& others) {
  auto refuse = [&](const std::string& why) {
    throw OutputFileError(fmt::format("{} {}: {}", flag, target.string(), why));
  };
  std::error_code ec;
  const fs::file_status here = fs::symlink_status(target, ec);
  if (here.type() == fs::file_type::symlink)
    refuse("is a symbolic link: name the file itself (the report would replace the link, not its target)");
  if (const std::string what = not_regular(here); !what.empty())
    refuse(fmt::format("is {}, not a regular file", what));
  for (const auto& [other, other_flag] : others) {
    if (other.empty()) continue;
    const bool same = fs::equivalent(target, other, ec) ||
                      fs::weakly_canonical(target, ec) == fs::weakly_canonical(other, ec);
    if (same) refuse(fmt::format("is also this run's {} {}; write elsewhere", other_flag, other.string()));
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::file_status d = fs::status(dir, ec);
  if (d.type() == fs::file_type::not_found) refuse(fmt::format("directory {} does not exist", dir.string()));
  if (d.type() != fs::file_type::directory) refuse(fmt::format("{} is not a directory", dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    refuse(fmt::format("directory {} is not writable: {}", dir.string(), std::strerror(errno)));
}

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  std::error_code ec;
  if (const std::string what = not_regular(fs::symlink_status(target, ec)); !what.empty())
    throw OutputFileError(fmt::format("cannot write {}: it is {}, not a regular file", target.string(), what));
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  install_cleanup_handler();
  // mkstemp in the target's directory: rename(2) is atomic only within one
  // file system.
  std::string temp = (dir / fmt::format(".{}.tmp.XXXXXX", target.filename().string())).string();
  int fd = -1;
  {
    const HoldTerminationSignals hold;
    fd = ::mkstemp(temp.data());
    if (fd >= 0) arm_cleanup(temp);
  }
  if (fd < 0) fail(target, "creating a temporary file", errno);
  auto remove_temp = [&] {
    const HoldTerminationSignals hold;
    disarm_cleanup();
    ::unlink(temp.c_str());
  };
  auto abandon = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    remove_temp();
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
    remove_temp();
    fail(target, "closing", err);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    remove_temp();
    fail(target, "renaming the temporary file", err);
  }
  disarm_cleanup();
  // The rename itself is durable once the directory is flushed; a failure
  // here leaves a complete file, so it is not an error.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace ulpscope
