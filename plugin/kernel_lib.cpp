#include "plugin/kernel_lib.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <signal.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "plugin/kernel_host.hpp"
#include "plugin/ulpscope_plugin.h"

namespace ulpscope {

// The C enums are the C++ ones, number for number.
static_assert(ULPSCOPE_FP64 == int(Dtype::fp64) && ULPSCOPE_FP32 == int(Dtype::fp32) &&
              ULPSCOPE_FP16 == int(Dtype::fp16) && ULPSCOPE_BF16 == int(Dtype::bf16) &&
              ULPSCOPE_FP8_E4M3 == int(Dtype::fp8_e4m3) && ULPSCOPE_FP8_E5M2 == int(Dtype::fp8_e5m2));
static_assert(ULPSCOPE_SUM == int(Op::sum) && ULPSCOPE_MEAN == int(Op::mean) && ULPSCOPE_DOT == int(Op::dot) &&
              ULPSCOPE_SUMSQ == int(Op::sumsq) && ULPSCOPE_NORM2 == int(Op::norm2) && ULPSCOPE_RMS == int(Op::rms) &&
              ULPSCOPE_MEAN_VAR == int(Op::mean_var) && ULPSCOPE_MAX == int(Op::max) &&
              ULPSCOPE_MIN == int(Op::min) && ULPSCOPE_AMAX == int(Op::amax) &&
              ULPSCOPE_LOGSUMEXP == int(Op::logsumexp) && ULPSCOPE_RMSNORM == int(Op::rmsnorm) &&
              ULPSCOPE_LAYERNORM == int(Op::layernorm) && ULPSCOPE_CUMSUM == int(Op::cumsum));
static_assert(ULPSCOPE_AXIS_ALL == int(Axis::all) && ULPSCOPE_AXIS_INNER == int(Axis::inner) &&
              ULPSCOPE_AXIS_OUTER == int(Axis::outer));

namespace {

constexpr int kLastOp = ULPSCOPE_CUMSUM;
constexpr int kLastDtype = ULPSCOPE_FP8_E5M2;

ulpscope_call to_call(const KernelArgs& a) {
  ulpscope_call c{};
  c.op = int32_t(a.op);
  c.axis = int32_t(a.axis);
  c.in_dtype = int32_t(a.in_dtype);
  c.out_dtype = int32_t(a.out_dtype);
  c.rows = a.rows;
  c.cols = a.cols;
  c.x = a.x;
  c.y = a.y;
  c.gamma = a.gamma;
  c.beta = a.beta;
  c.eps = a.eps;
  c.out = a.out;
  c.config = ulpscope_launch_config{a.config.blocks, a.config.threads};
  return c;
}

// A non-zero status from the library becomes an exception (the cell's
// "failed: " reason).
void check_status(int status, std::array<char, 512>& error, const std::string& kernel, const char* what) {
  if (status == 0) return;
  error.back() = '\0';
  const std::string why = error[0] ? std::string(error.data()) : fmt::format("status {}, no reason given", status);
  throw std::runtime_error(fmt::format("{} ({}): {}", kernel, what, why));
}

std::size_t value_bytes(std::int32_t dtype) {
  switch (dtype) {
    case ULPSCOPE_FP64: return 8;
    case ULPSCOPE_FP32: return 4;
    case ULPSCOPE_FP16:
    case ULPSCOPE_BF16: return 2;
    default: return 1;
  }
}

bool all_bytes(const unsigned char* p, std::size_t n, unsigned char b) {
  return std::all_of(p, p + n, [b](unsigned char x) { return x == b; });
}

// One host call in a child process (docs/bad-inputs.md): a crash, exit, abort, hang or
// write past out ends the child, not the run, and fails the cell naming the
// kernel. out (and a guard after it) and the returned status live in a
// shared mapping; the child reports before _exit, so a kernel's own exit()
// is told from a return.
struct ChildReport {
  std::int32_t returned;
  std::int32_t status;
  char error[512];
};
constexpr std::size_t kGuardBytes = 4096;
constexpr unsigned char kGuard = 0xA5;

// Waits for the child up to timeout_s; false when it is still running. A
// pidfd wakes the wait when the child ends (Linux 5.3); without one, polling.
bool wait_for(pid_t child, double timeout_s, int& wstatus) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
#ifdef SYS_pidfd_open
  if (const int fd = int(::syscall(SYS_pidfd_open, child, 0)); fd >= 0) {
    pollfd p{fd, POLLIN, 0};
    int ready = 0;
    do {
      // In double: a timeout of 1e300 s must not overflow an integer count.
      const double left_ms = std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
      ready = ::poll(&p, 1, int(std::clamp(left_ms, 0.0, 1e9)) + 1);
    } while (ready < 0 && errno == EINTR);
    ::close(fd);
    if (ready == 0) return false;
  }
#endif
  auto pause = std::chrono::microseconds(20);
  while (true) {
    const pid_t r = ::waitpid(child, &wstatus, WNOHANG);
    if (r == child) return true;
    if (r < 0 && errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

int call_in_child(ulpscope_host_fn f, const ulpscope_call& c, std::size_t bytes, std::array<char, 512>& error,
                  double timeout_s, const std::string& kernel, const char* what) {
  const std::size_t size = sizeof(ChildReport) + bytes + kGuardBytes;
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::runtime_error(fmt::format("{} ({}): mmap: {}", kernel, what, std::strerror(errno)));
  const std::unique_ptr<void, std::function<void(void*)>> unmap(map, [size](void* m) { ::munmap(m, size); });
  auto* report = static_cast<ChildReport*>(map);
  auto* out = static_cast<unsigned char*>(map) + sizeof(ChildReport);
  std::memcpy(out, c.out, bytes);
  std::memset(out + bytes, kGuard, kGuardBytes);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(fmt::format("{} ({}): fork: {}", kernel, what, std::strerror(errno)));
  if (child == 0) {
    ulpscope_call mine = c;
    mine.out = out;
    report->status = f(&mine, report->error, sizeof report->error);
    report->returned = 1;
    ::_exit(0);
  }
  int wstatus = 0;
  if (!wait_for(child, timeout_s, wstatus)) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &wstatus, 0);
    throw std::runtime_error(fmt::format("{} ({}): did not return within {} s (killed; --kernel-timeout)", kernel,
                                         what, timeout_s));
  }
  if (WIFSIGNALED(wstatus))
    throw std::runtime_error(fmt::format("{} ({}): killed by signal {} ({})", kernel, what, WTERMSIG(wstatus),
                                         ::strsignal(WTERMSIG(wstatus))));
  if (!report->returned)
    throw std::runtime_error(
        fmt::format("{} ({}): exited with status {} instead of returning", kernel, what, WEXITSTATUS(wstatus)));
  if (!all_bytes(out + bytes, kGuardBytes, kGuard))
    throw std::runtime_error(fmt::format("{} ({}): wrote past its output ({} bytes)", kernel, what, bytes));
  std::memcpy(c.out, out, bytes);
  std::memcpy(error.data(), report->error, error.size());
  return report->status;
}

// One call with out filled with the given byte first; returns the
// function's status, its reason in error.
using FilledCall = std::function<int(unsigned char fill, std::array<char, 512>& error)>;

// A call that returns 0 must have written every value of out (docs/bad-inputs.md). A
// value still all 0xFF bytes may be a real result (a NaN: 0xFF is one in
// fp8_e4m3), so the call is made again on zeros: a value left as both fills
// was never written.
void call_and_check_output(const FilledCall& call, const ulpscope_call& c, const std::string& kernel,
                           const char* what) {
  auto* out = static_cast<unsigned char*>(c.out);
  const std::size_t width = value_bytes(c.out_dtype);
  const std::size_t count = std::size_t(ulpscope_output_count(&c));
  std::array<char, 512> error{};
  check_status(call(0xFF, error), error, kernel, what);
  std::vector<std::size_t> suspects;
  for (std::size_t i = 0; i < count; ++i)
    if (all_bytes(out + i * width, width, 0xFF)) suspects.push_back(i);
  if (suspects.empty()) return;
  error = {};
  check_status(call(0x00, error), error, kernel, what);
  const std::size_t unwritten = std::size_t(std::count_if(
      suspects.begin(), suspects.end(), [&](std::size_t i) { return all_bytes(out + i * width, width, 0x00); }));
  if (unwritten > 0)
    throw std::runtime_error(fmt::format("{} ({}): did not write its output ({} of {} values left as filled)", kernel,
                                         what, unwritten, count));
}

std::function<void(const KernelArgs&)> host_function(std::shared_ptr<void> lib, ulpscope_host_fn f,
                                                     std::string kernel, const char* what, double timeout_s) {
  if (f == nullptr) return {};
  return [lib = std::move(lib), f, kernel = std::move(kernel), what, timeout_s](const KernelArgs& a) {
    const ulpscope_call c = to_call(a);
    const std::size_t bytes = std::size_t(ulpscope_output_count(&c)) * value_bytes(c.out_dtype);
    call_and_check_output(
        [&](unsigned char fill, std::array<char, 512>& error) {
          std::memset(c.out, fill, bytes);
          return timeout_s > 0 ? call_in_child(f, c, bytes, error, timeout_s, kernel, what)
                               : f(&c, error.data(), error.size());
        },
        c, kernel, what);
  };
}

// run_device in the library's ulpscope-kernel-host process, shared by the
// library's kernels (one process per library).
UserKernel::IsolatedDevice isolated_device(std::shared_ptr<KernelHost> host, std::size_t index, std::string kernel) {
  UserKernel::IsolatedDevice d;
  d.run = [host, index, kernel](const KernelArgs& a) {
    const ulpscope_call c = to_call(a);
    call_and_check_output(
        [&](unsigned char fill, std::array<char, 512>& error) {
          return host->call(index, kernel_host::Function::run_device, c, fill, error, kernel);
        },
        c, kernel, "run_device");
  };
  d.time = [host, index, kernel](const KernelArgs& a, int warmup, int reps) {
    return host->time(index, to_call(a), takes_second_input(a.op), warmup, reps, kernel);
  };
  return d;
}

}  // namespace

std::vector<UserKernel> load_kernel_lib(const std::string& path, const PluginCalls& calls) {
  auto fail = [&](const std::string& why) { return KernelLibError(fmt::format("--kernel-lib {}: {}", path, why)); };
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw fail("no such file");
  // A name without a slash would be looked up in the library path instead.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw fail(fmt::format("cannot load it ({})", why ? why : "dlopen failed"));
  }
  const std::shared_ptr<void> lib(handle, [](void* h) { dlclose(h); });
  dlerror();
  void* symbol = dlsym(handle, ULPSCOPE_PLUGIN_ENTRY_POINT);
  if (symbol == nullptr)
    throw fail("exports no symbol " ULPSCOPE_PLUGIN_ENTRY_POINT
               " (declare it extern \"C\" with default visibility; plugin/ulpscope_plugin.h)");
  const auto get = reinterpret_cast<ulpscope_get_plugin_fn>(symbol);
  const ulpscope_plugin_v1* plugin = get();
  if (plugin == nullptr) throw fail(ULPSCOPE_PLUGIN_ENTRY_POINT "() returned NULL");
  // The version is the first member of every version's description: read it
  // before anything else.
  std::uint32_t version = 0;
  std::memcpy(&version, plugin, sizeof version);
  if (version != ULPSCOPE_PLUGIN_ABI_VERSION)
    throw fail(fmt::format("plug-in ABI version {}, this ulpscope reads version {} (rebuild it against this "
                           "ulpscope's plugin/ulpscope_plugin.h)",
                           version, ULPSCOPE_PLUGIN_ABI_VERSION));
  if (plugin->kernel_count == 0 || plugin->kernels == nullptr) throw fail("describes no kernels");

  std::vector<UserKernel> kernels;
  std::shared_ptr<KernelHost> host;  // started at the first device call
  for (std::size_t i = 0; i < plugin->kernel_count; ++i) {
    const ulpscope_kernel_v1& k = plugin->kernels[i];
    const std::string label = k.name ? fmt::format("kernel '{}'", k.name) : fmt::format("kernel {}", i);
    if (k.name == nullptr || k.name[0] == '\0') throw fail(label + " has no name");
    if (k.op < 0 || k.op > kLastOp) throw fail(fmt::format("{}: op {} is not an enum ulpscope_op", label, k.op));
    if (k.in_dtype < 0 || k.in_dtype > kLastDtype || k.out_dtype < 0 || k.out_dtype > kLastDtype)
      throw fail(label + ": in_dtype or out_dtype is not an enum ulpscope_dtype");
    if (k.axes & ~std::uint32_t(7)) throw fail(label + ": axes has bits beyond ULPSCOPE_AXIS_BIT(0..2)");
    if (k.config_count > 0 && k.configs == nullptr) throw fail(label + ": config_count without configs");
    UserKernel u;
    u.name = k.name;
    u.accumulator = k.accumulator ? k.accumulator : "custom";
    u.op = Op(k.op);
    u.in = Dtype(k.in_dtype);
    u.out = Dtype(k.out_dtype);
    for (int a = 0; a < 3; ++a)
      if (k.axes & ULPSCOPE_AXIS_BIT(a)) u.axes.push_back(Axis(a));
    u.run_host = host_function(lib, k.run_host, u.name, "run_host", calls.timeout_seconds);
    u.model = host_function(lib, k.model, u.name, "model", calls.timeout_seconds);
    if (k.run_device != nullptr && calls.timeout_seconds > 0) {
      if (!host)
        host = std::make_shared<KernelHost>(file, calls.kernel_host.empty() ? default_kernel_host_program()
                                                                             : calls.kernel_host,
                                            calls.timeout_seconds, true);
      u.isolated_device = isolated_device(host, i, u.name);
    } else if (k.run_device != nullptr) {
      u.run_device = [lib, f = k.run_device, kernel = u.name](const KernelArgs& a, void* stream) {
        const ulpscope_call c = to_call(a);
        std::array<char, 512> error{};
        check_status(f(&c, stream, error.data(), error.size()), error, kernel, "run_device");
      };
    }
    for (std::size_t j = 0; j < k.config_count; ++j)
      u.configs.push_back(LaunchConfig{k.configs[j].blocks, k.configs[j].threads});
    u.deterministic = (k.flags & ULPSCOPE_NONDETERMINISTIC) == 0;
    u.reentrant = (k.flags & ULPSCOPE_NOT_REENTRANT) == 0;
    u.library = path;
    if (const std::string why = describe_problem(u); !why.empty()) throw fail(label + ": " + why);
    kernels.push_back(std::move(u));
  }
  return kernels;
}

}  // namespace ulpscope
