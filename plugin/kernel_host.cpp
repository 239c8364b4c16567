#include "plugin/kernel_host.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "accuracy/user_kernel.hpp"

extern char** environ;

namespace ulpscope {

using kernel_host::Function;
using kernel_host::Outcome;
using kernel_host::Reply;
using kernel_host::Request;
using kernel_host::Task;

namespace {

const char* function_name(Function f) {
  switch (f) {
    case Function::run_device: return "run_device";
    case Function::run_host: return "run_host";
    case Function::model: return "model";
  }
  return "?";
}

std::size_t align_up(std::size_t n) {
  return (n + kernel_host::kAlign - 1) / kernel_host::kAlign * kernel_host::kAlign;
}

// Starting the child loads the library and, for device calls, creates a CUDA
// context (on the order of a second): it gets at least this long, whatever
// --kernel-timeout says.
constexpr double kStartSeconds = 60;

// Waits until the socket has a message or the peer hung up; false when
// timeout_s passed first.
bool readable_within(int socket, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd p{socket, POLLIN, 0};
  while (true) {
    // In double: a timeout of 1e300 s must not overflow an integer count.
    const double left_ms =
        std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
    const int ready = ::poll(&p, 1, int(std::clamp(left_ms, 0.0, 1e9)) + 1);
    if (ready > 0) return true;
    if (ready == 0 && std::chrono::steady_clock::now() >= deadline) return false;
    if (ready < 0 && errno != EINTR) throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
  }
}

}  // namespace

std::string default_kernel_host_program() {
  if (const char* set = std::getenv("ULPSCOPE_KERNEL_HOST"); set != nullptr && set[0] != '\0') return set;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "ulpscope-kernel-host";
  return (self.parent_path() / "ulpscope-kernel-host").string();
}

KernelHost::KernelHost(std::string library, std::string program, double timeout_seconds, bool device)
    : library_(std::move(library)), program_(std::move(program)), timeout_seconds_(timeout_seconds), device_(device) {}

KernelHost::~KernelHost() {
  stop();
  if (region_ != nullptr) ::munmap(region_, region_bytes_);
  if (memfd_ >= 0) ::close(memfd_);
}

pid_t KernelHost::child() const {
  const std::lock_guard lock(mutex_);
  return child_;
}

void KernelHost::stop() {
  if (socket_ >= 0) ::close(socket_);  // the child reads the end of its requests and exits
  socket_ = -1;
  if (child_ > 0) {
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (::waitpid(child_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(child_, SIGKILL);
        ::waitpid(child_, &status, 0);
        break;
      }
      ::usleep(1000);
    }
  }
  child_ = -1;
  child_has_region_ = child_has_inputs_ = false;
}

void KernelHost::child_died(const std::string& who, const char* while_doing) {
  int status = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(child_, &status, 0);
  } while (r < 0 && errno == EINTR);
  ::close(socket_);
  socket_ = -1;
  child_ = -1;
  child_has_region_ = child_has_inputs_ = false;
  if (r > 0 && WIFSIGNALED(status))
    throw std::runtime_error(fmt::format("{}: killed by signal {} ({}){}", who, WTERMSIG(status),
                                         ::strsignal(WTERMSIG(status)), while_doing));
  if (r > 0 && WIFEXITED(status))
    throw std::runtime_error(
        fmt::format("{}: exited with status {} instead of returning{}", who, WEXITSTATUS(status), while_doing));
  throw std::runtime_error(fmt::format("{}: {} ended{}", who, program_, while_doing));
}

void KernelHost::start(const std::string& who) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    throw std::runtime_error(fmt::format("{}: socketpair: {}", who, std::strerror(errno)));
  // dup2 onto itself would keep close-on-exec: the child's end must not be
  // the descriptor it is moved to.
  if (pair[1] == kernel_host::kSocketFd) {
    const int moved = ::fcntl(pair[1], F_DUPFD_CLOEXEC, kernel_host::kSocketFd + 1);
    ::close(pair[1]);
    pair[1] = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pair[1], kernel_host::kSocketFd);
  std::vector<std::string> args{program_, library_};
  if (device_) args.push_back("--device");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, program_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pair[1]);
  if (spawned != 0) {
    ::close(pair[0]);
    throw std::runtime_error(fmt::format("{}: cannot start {} ({}; it belongs beside accuracy_report, or set "
                                         "ULPSCOPE_KERNEL_HOST; --kernel-timeout 0 calls in this process)",
                                         who, program_, std::strerror(spawned)));
  }
  child_ = pid;
  socket_ = pair[0];
  kernel_host::Hello hello;
  const double limit = std::max(timeout_seconds_, kStartSeconds);
  if (!readable_within(socket_, limit)) {
    ::kill(child_, SIGKILL);
    ::waitpid(child_, nullptr, 0);
    ::close(socket_);
    socket_ = -1;
    child_ = -1;
    throw std::runtime_error(fmt::format("{}: {} did not load the library within {} s (killed)", who, program_, limit));
  }
  if (!kernel_host::receive_message(socket_, &hello, sizeof hello)) child_died(who, " while loading the library");
  if (!hello.ok) {
    hello.error[sizeof hello.error - 1] = '\0';
    const std::string why = hello.error;
    stop();
    throw std::runtime_error(fmt::format("{}: {} cannot serve the library: {}", who, program_, why));
  }
}

Request KernelHost::place_arrays(Request r, const ulpscope_call& c) {
  const std::size_t in_width = element_bytes(Dtype(c.in_dtype));
  const std::size_t out_width = element_bytes(Dtype(c.out_dtype));
  const std::size_t elements = std::size_t(c.rows * c.cols);
  const std::array<const void*, 4> src{c.x, c.y, c.gamma, c.beta};
  const std::array<std::uint64_t, 4> bytes{c.x ? elements * in_width : 0, c.y ? elements * in_width : 0,
                                           c.gamma ? std::size_t(c.cols) * in_width : 0,
                                           c.beta ? std::size_t(c.cols) * in_width : 0};
  std::array<std::uint64_t, 4> offset{};
  std::size_t at = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    offset[i] = at;
    at += align_up(bytes[i]);
  }
  const std::size_t out_bytes = std::size_t(ulpscope_output_count(&c)) * out_width;
  const std::size_t needed = at + align_up(out_bytes + kernel_host::kGuardBytes);
  bool fresh = false;
  if (needed > region_bytes_) {
    if (region_ != nullptr) ::munmap(region_, region_bytes_);
    if (memfd_ >= 0) ::close(memfd_);
    region_ = nullptr;
    region_bytes_ = 0;
    memfd_ = ::memfd_create("ulpscope-kernel-host", MFD_CLOEXEC);
    if (memfd_ < 0) throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
    if (::ftruncate(memfd_, off_t(needed)) != 0)
      throw std::runtime_error(fmt::format("shared memory of {} bytes: {}", needed, std::strerror(errno)));
    void* map = ::mmap(nullptr, needed, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
    if (map == MAP_FAILED) throw std::runtime_error(fmt::format("mmap of {} bytes: {}", needed, std::strerror(errno)));
    region_ = static_cast<unsigned char*>(map);
    region_bytes_ = needed;
    child_has_region_ = false;
    fresh = true;
  }
  // The arrays are copied in only when they differ from those the region
  // holds: a kernel's runs and configurations on one problem read one copy,
  // and the child keeps its upload.
  bool changed = fresh || bytes != placed_bytes_;
  for (std::size_t i = 0; i < 4; ++i) {
    if (bytes[i] == 0) continue;
    if (!changed && std::memcmp(region_ + offset[i], src[i], bytes[i]) == 0) continue;
    std::memcpy(region_ + offset[i], src[i], bytes[i]);
    changed = true;
  }
  placed_bytes_ = bytes;
  r.x_offset = offset[0];
  r.y_offset = offset[1];
  r.gamma_offset = offset[2];
  r.beta_offset = offset[3];
  r.x_bytes = bytes[0];
  r.y_bytes = bytes[1];
  r.gamma_bytes = bytes[2];
  r.beta_bytes = bytes[3];
  r.out_offset = at;
  r.out_bytes = out_bytes;
  r.region_bytes = region_bytes_;
  r.inputs_changed = changed || !child_has_inputs_;
  r.op = c.op;
  r.axis = c.axis;
  r.in_dtype = c.in_dtype;
  r.out_dtype = c.out_dtype;
  r.rows = c.rows;
  r.cols = c.cols;
  r.eps = c.eps;
  r.blocks = c.config.blocks;
  r.threads = c.config.threads;
  return r;
}

Reply KernelHost::exchange(Request& request, const ulpscope_call& c, const std::string& who) {
  if (child_ < 0) start(who);
  request = place_arrays(request, c);
  request.new_region = !child_has_region_;
  if (!kernel_host::send_message(socket_, &request, sizeof request, request.new_region ? memfd_ : -1))
    child_died(who, "");
  child_has_region_ = true;
  child_has_inputs_ = true;
  if (!readable_within(socket_, timeout_seconds_)) {
    ::kill(child_, SIGKILL);
    int status = 0;
    ::waitpid(child_, &status, 0);
    ::close(socket_);
    socket_ = -1;
    child_ = -1;
    child_has_region_ = child_has_inputs_ = false;
    throw std::runtime_error(
        fmt::format("{}: did not return within {} s (killed; --kernel-timeout)", who, timeout_seconds_));
  }
  Reply reply;
  if (!kernel_host::receive_message(socket_, &reply, sizeof reply)) child_died(who, "");
  reply.error[sizeof reply.error - 1] = '\0';
  if (reply.ends) stop();
  if (reply.outcome == Outcome::failed) throw std::runtime_error(fmt::format("{}: {}", who, reply.error));
  return reply;
}

int KernelHost::call(std::size_t index, Function f, const ulpscope_call& c, unsigned char fill,
                     std::array<char, kernel_host::kErrorBytes>& error, const std::string& name) {
  const std::lock_guard lock(mutex_);
  Request r;
  r.task = Task::run;
  r.function = f;
  r.kernel = std::uint32_t(index);
  r.fill = fill;
  const Reply reply = exchange(r, c, fmt::format("{} ({})", name, function_name(f)));
  if (r.out_bytes > 0) std::memcpy(c.out, region_ + r.out_offset, r.out_bytes);
  std::memcpy(error.data(), reply.error, error.size());
  return reply.status;
}

GpuBackend::Timing KernelHost::time(std::size_t index, const ulpscope_call& c, bool reads_y, int warmup, int reps,
                                    const std::string& name) {
  const std::lock_guard lock(mutex_);
  Request r;
  r.task = Task::time;
  r.function = Function::run_device;
  r.kernel = std::uint32_t(index);
  r.warmup = warmup;
  r.reps = reps;
  r.reads_y = reads_y;
  const std::string who = fmt::format("{} (run_device)", name);
  const Reply reply = exchange(r, c, who);
  if (reply.status != 0)
    throw std::runtime_error(fmt::format("{}: returned status {} while timed: {}", who, reply.status, reply.error));
  GpuBackend::Timing t;
  t.median_ms = reply.median_ms;
  t.min_ms = reply.min_ms;
  t.max_ms = reply.max_ms;
  t.gbps = reply.gbps;
  t.timed_runs = reply.timed_runs;
  t.bytes_per_run = reply.bytes_per_run;
  t.copies = reply.copies;
  t.exceeds_l2 = reply.exceeds_l2 != 0;
  return t;
}

}  // namespace ulpscope
