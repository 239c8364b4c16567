// The plug-in child process (plugin/kernel_host.hpp) without a GPU: it serves
// a library's host functions through the same socket, shared memory, guard,
// restart and timeout as its device calls, so all of that is tested here;
// gpu_isolation_test.cpp tests the device side.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "plugin/kernel_host.hpp"
#include "plugin/kernel_host_protocol.hpp"

namespace ulpscope {
namespace {

using kernel_host::Function;

// crash_plugin.c's kernels, by index.
enum CrashKernel : std::size_t { fine = 0, segv = 1, exits = 2, aborts = 3, hangs = 4, overruns = 5 };

struct Called {
  std::string outcome;  // "returned S" or the exception's message
  float out = -1;
};

ulpscope_call sum_of(const std::vector<float>& x, float* out) {
  ulpscope_call c{};
  c.op = ULPSCOPE_SUM;
  c.axis = ULPSCOPE_AXIS_ALL;
  c.in_dtype = c.out_dtype = ULPSCOPE_FP32;
  c.rows = 1;
  c.cols = std::int64_t(x.size());
  c.x = x.data();
  c.out = out;
  return c;
}

Called call(KernelHost& host, std::size_t kernel, const std::vector<float>& x, const char* name,
            unsigned char fill = 0xFF) {
  Called r;
  std::array<char, kernel_host::kErrorBytes> error{};
  try {
    r.outcome = "returned " + std::to_string(host.call(kernel, Function::run_host, sum_of(x, &r.out), fill, error,
                                                       name));
  } catch (const std::runtime_error& e) {
    r.outcome = e.what();
  }
  return r;
}

TEST(KernelHost, ServesCallsFromOneChildKeptAlive) {
  KernelHost host(BYO_CRASH_PLUGIN, ULPSCOPE_KERNEL_HOST_PROGRAM, 10, false);
  EXPECT_EQ(host.child(), -1);  // started at the first call
  const std::vector<float> x{1, 2, 3, 4};
  Called r = call(host, fine, x, "fine_sum");
  EXPECT_EQ(r.outcome, "returned 0");
  EXPECT_EQ(r.out, 10.0f);
  const pid_t child = host.child();
  EXPECT_GT(child, 0);
  EXPECT_NE(child, ::getpid());
  r = call(host, fine, {0.5f, 0.25f}, "fine_sum");
  EXPECT_EQ(r.out, 0.75f);
  EXPECT_EQ(host.child(), child);
}

// Each way of dying is one failed call naming the kernel and the function;
// the next call gets a fresh child and works.
TEST(KernelHost, ACallThatKillsTheChildFailsAndTheNextCallRestartsIt) {
  KernelHost host(BYO_CRASH_PLUGIN, ULPSCOPE_KERNEL_HOST_PROGRAM, 1, false);
  const std::vector<float> x{1, 2, 3, 4};
  struct Case {
    CrashKernel kernel;
    const char* name;
    std::string message;
  };
  const Case cases[] = {
      {segv, "segv_sum", "segv_sum (run_host): killed by signal 11 (" + std::string(::strsignal(SIGSEGV)) + ")"},
      {exits, "exit_sum", "exit_sum (run_host): exited with status 3 instead of returning"},
      {aborts, "abort_sum", "abort_sum (run_host): killed by signal 6 (" + std::string(::strsignal(SIGABRT)) + ")"},
      {hangs, "hang_sum", "hang_sum (run_host): did not return within 1 s (killed; --kernel-timeout)"},
      {overruns, "overrun_sum", "overrun_sum (run_host): wrote past its output (4 bytes)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const pid_t before = call(host, fine, x, "fine_sum").outcome == "returned 0" ? host.child() : -2;
    ASSERT_GT(before, 0);
    EXPECT_EQ(call(host, c.kernel, x, c.name).outcome, c.message);
    const Called after = call(host, fine, x, "fine_sum");
    EXPECT_EQ(after.outcome, "returned 0");
    EXPECT_EQ(after.out, 10.0f);
    // A write past out is found by the child, which lives on; the others end it.
    if (c.kernel == overruns) EXPECT_EQ(host.child(), before);
    else EXPECT_NE(host.child(), before);
  }
}

// The child outlives the thread that started it (a pool's, say), and ends
// with the process that started it, even in a call that never returns.
TEST(KernelHost, TheChildOutlivesItsStartingThreadButNotItsParent) {
  KernelHost host(BYO_CRASH_PLUGIN, ULPSCOPE_KERNEL_HOST_PROGRAM, 10, false);
  std::thread([&] { EXPECT_EQ(call(host, fine, {1, 2}, "fine_sum").out, 3.0f); }).join();
  const pid_t child = host.child();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_EQ(call(host, fine, {1, 2}, "fine_sum").outcome, "returned 0");
  EXPECT_EQ(host.child(), child);

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {  // a parent that starts a child, leaves it in a hang, and is killed
    KernelHost hung(BYO_CRASH_PLUGIN, ULPSCOPE_KERNEL_HOST_PROGRAM, 1e6, false);
    call(hung, fine, {1}, "fine_sum");
    const pid_t c = hung.child();
    (void)!::write(pipe_fds[1], &c, sizeof c);
    call(hung, hangs, {1}, "hang_sum");
    ::_exit(0);
  }
  pid_t orphan = -1;
  ASSERT_EQ(::read(pipe_fds[0], &orphan, sizeof orphan), ssize_t(sizeof orphan));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  // Gone, or a zombie waiting for whoever adopted it, within a few seconds.
  auto alive = [orphan] {
    std::ifstream stat("/proc/" + std::to_string(orphan) + "/stat");
    std::string pid, name, state;
    return stat >> pid >> name >> state && state != "Z";
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(alive()) << "ulpscope-kernel-host " << orphan << " outlived its parent";
}

// Large inputs travel through the shared memory, not the socket; a changed
// input of the same size is copied again, an unchanged one is not needed to be.
TEST(KernelHost, InputsTravelThroughSharedMemoryAndChangesReachTheChild) {
  KernelHost host(BYO_CRASH_PLUGIN, ULPSCOPE_KERNEL_HOST_PROGRAM, 30, false);
  std::vector<float> x(std::size_t(1) << 22, 1.0f);  // 16 MiB; 2^22 ones sum exactly in fp32
  EXPECT_EQ(call(host, fine, x, "fine_sum").out, float(x.size()));
  x[12345] = 2.0f;
  EXPECT_EQ(call(host, fine, x, "fine_sum").out, float(x.size()) + 1.0f);
  EXPECT_EQ(call(host, fine, x, "fine_sum").out, float(x.size()) + 1.0f);
  const std::vector<float> small{3, 4};
  EXPECT_EQ(call(host, fine, small, "fine_sum").out, 7.0f);
}

// out is filled with the requested byte before the call: a function that
// writes nothing leaves exactly that (kernel_lib's "did not write its output"
// check asks for two fills).
TEST(KernelHost, OutIsFilledAsAskedBeforeTheCall) {
  KernelHost host(BYO_LAZY_PLUGIN, ULPSCOPE_KERNEL_HOST_PROGRAM, 10, false);
  for (unsigned char fill : {0xFF, 0x00, 0x5A}) {
    Called r = call(host, 0, {1, 2}, "lazy_sum", fill);
    EXPECT_EQ(r.outcome, "returned 0");
    std::uint32_t bits = 0;
    std::memcpy(&bits, &r.out, sizeof bits);
    EXPECT_EQ(bits, 0x01010101u * fill);
  }
}

TEST(KernelHost, AMissingProgramOrLibraryIsOneLine) {
  KernelHost missing(BYO_CRASH_PLUGIN, "/nonexistent/ulpscope-kernel-host", 10, false);
  const std::string no_program = call(missing, fine, {1}, "fine_sum").outcome;
  EXPECT_EQ(no_program.rfind("fine_sum (run_host): cannot start /nonexistent/ulpscope-kernel-host (", 0), 0u)
      << no_program;
  KernelHost not_a_library("/etc/hostname", ULPSCOPE_KERNEL_HOST_PROGRAM, 10, false);
  const std::string refused = call(not_a_library, fine, {1}, "fine_sum").outcome;
  EXPECT_NE(refused.find("cannot serve the library"), std::string::npos) << refused;
  EXPECT_EQ(not_a_library.child(), -1);
}

// Without a GPU the child still starts for device calls and says why it
// cannot make them; with one, gpu_isolation_test.cpp makes them.
TEST(KernelHost, ADeviceCallWithoutAGpuSaysWhy) {
  std::string why;
  if (GpuBackend::open(&why)) GTEST_SKIP() << "a GPU is present: gpu_isolation_test.cpp covers device calls";
  KernelHost host(BYO_DEVICE_STUB_PLUGIN, ULPSCOPE_KERNEL_HOST_PROGRAM, 10, true);
  float out = 0;
  const std::vector<float> x{1};
  std::array<char, kernel_host::kErrorBytes> error{};
  try {
    host.call(0, Function::run_device, sum_of(x, &out), 0xFF, error, "device_stub_sum");
    ADD_FAILURE() << "a device call without a GPU returned";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("device_stub_sum (run_device): no GPU in ulpscope-kernel-host: ", 0), 0u)
        << e.what();
  }
}

// The helper is looked for beside the running program, as accuracy_report's
// build and install put it, unless $ULPSCOPE_KERNEL_HOST names another.
TEST(KernelHost, TheProgramIsFoundBesideTheExecutable) {
  const char* set = std::getenv("ULPSCOPE_KERNEL_HOST");
  const std::string saved = set ? set : "";
  ::unsetenv("ULPSCOPE_KERNEL_HOST");
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  EXPECT_EQ(default_kernel_host_program(), self.substr(0, self.rfind('/')) + "/ulpscope-kernel-host");
  ::setenv("ULPSCOPE_KERNEL_HOST", "/opt/elsewhere/ulpscope-kernel-host", 1);
  EXPECT_EQ(default_kernel_host_program(), "/opt/elsewhere/ulpscope-kernel-host");
  if (set) ::setenv("ULPSCOPE_KERNEL_HOST", saved.c_str(), 1);
  else ::unsetenv("ULPSCOPE_KERNEL_HOST");
}

// The messages are this build's: a record of another size or without the
// magic number is refused, and a descriptor sent with a message arrives.
TEST(KernelHostProtocol, RefusesForeignMessagesAndPassesADescriptor) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
  kernel_host::Request request;
  request.rows = 7;
  ASSERT_TRUE(kernel_host::send_message(pair[0], &request, sizeof request, STDIN_FILENO));
  kernel_host::Request got;
  int fd = -1;
  ASSERT_TRUE(kernel_host::receive_message(pair[1], &got, sizeof got, &fd));
  EXPECT_EQ(got.rows, 7);
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
  const char junk[sizeof(kernel_host::Request)] = "not a request";
  ASSERT_TRUE(kernel_host::send_message(pair[0], junk, sizeof junk));
  EXPECT_FALSE(kernel_host::receive_message(pair[1], &got, sizeof got));
  ASSERT_TRUE(kernel_host::send_message(pair[0], &request, sizeof request - 8));
  EXPECT_FALSE(kernel_host::receive_message(pair[1], &got, sizeof got));
  ::close(pair[0]);
  EXPECT_FALSE(kernel_host::receive_message(pair[1], &got, sizeof got));  // the peer is gone
  EXPECT_FALSE(kernel_host::send_message(pair[1], &request, sizeof request));  // no SIGPIPE either
  ::close(pair[1]);
}

}  // namespace
}  // namespace ulpscope
