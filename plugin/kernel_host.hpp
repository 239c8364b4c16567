#pragma once
// A plug-in library served by a child process: ulpscope-kernel-host
// (plugin/kernel_host_main.cpp), started by exec, loads the library, opens
// its own CUDA context and makes each call asked of it. A crash, exit(),
// abort(), hang, write past out or CUDA error in a plug-in's function ends
// or spoils that process only: the call fails with a message naming the
// kernel, the function and the signal, and the next call starts a fresh
// child. fork() alone would not do for device calls: a CUDA context does not
// survive it (CUDA C++ Programming Guide, "Initialization").
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <mutex>
#include <string>

#include "kernels/gpu_backend.hpp"
#include "plugin/kernel_host_protocol.hpp"
#include "plugin/ulpscope_plugin.h"

namespace ulpscope {

// The helper program: $ULPSCOPE_KERNEL_HOST when set, else
// ulpscope-kernel-host in the directory of this process's executable
// (/proc/self/exe), where the build and an install put it.
std::string default_kernel_host_program();

class KernelHost {
 public:
  // library: the plug-in's path; program: the helper (default_kernel_host_program());
  // device: the child opens the GPU when it starts (for run_device).
  KernelHost(std::string library, std::string program, double timeout_seconds, bool device);
  ~KernelHost();
  KernelHost(const KernelHost&) = delete;
  KernelHost& operator=(const KernelHost&) = delete;

  // Calls function f of the library's kernel `index` on c's host arrays in
  // the child (on its device for run_device: the arrays are copied there and
  // out back), out filled with `fill` before the call; out's bytes come back
  // into c.out. Returns the function's status, its reason in error. Throws
  // std::runtime_error "<name> (<function>): <why>" when the child died, did
  // not answer within the timeout, found a write past out or a CUDA error.
  int call(std::size_t index, kernel_host::Function f, const ulpscope_call& c, unsigned char fill,
           std::array<char, kernel_host::kErrorBytes>& error, const std::string& name);
  // Times run_device of kernel `index` in the child as GpuBackend::time_launch
  // times an in-process launch (CUDA events around each launch, warm-up,
  // inputs rotated among copies above L2). Throws as call() does.
  GpuBackend::Timing time(std::size_t index, const ulpscope_call& c, bool reads_y, int warmup, int reps,
                          const std::string& name);

  // The running child's process id, or -1 (tests).
  pid_t child() const;

 private:
  kernel_host::Reply exchange(kernel_host::Request& request, const ulpscope_call& c, const std::string& who);
  void start(const std::string& who);
  void stop();
  [[noreturn]] void child_died(const std::string& who, const char* while_doing);
  kernel_host::Request place_arrays(kernel_host::Request r, const ulpscope_call& c);

  std::string library_, program_;
  double timeout_seconds_;
  bool device_;
  mutable std::mutex mutex_;  // one call at a time
  pid_t child_ = -1;
  int socket_ = -1;
  bool child_has_region_ = false;  // the child mapped the current memfd
  bool child_has_inputs_ = false;  // the child holds the arrays the shared memory holds
  int memfd_ = -1;
  unsigned char* region_ = nullptr;
  std::size_t region_bytes_ = 0;
  std::array<std::uint64_t, 4> placed_bytes_{};  // x, y, gamma, beta as the region holds them
};

}  // namespace ulpscope
