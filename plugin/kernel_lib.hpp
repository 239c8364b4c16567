#pragma once
// Loading a plug-in library (plugin/ulpscope_plugin.h) as user kernels
// (accuracy/user_kernel.hpp): accuracy_report --kernel-lib FILE.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "accuracy/user_kernel.hpp"

namespace ulpscope {

// Why a library cannot be used, as one line naming the file: it is missing,
// is not a shared library, lacks ulpscope_get_plugin, was built against
// another ABI version, or describes a kernel that cannot be measured.
struct KernelLibError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How the library's functions are called. With a timeout (the default), a
// crash, exit(), abort(), hang (past timeout_seconds) or write past out fails
// that call's cell, naming the kernel, and the run goes on: each host call
// (run_host, model) runs in a child process made by fork(); device calls
// (run_device) run in one ulpscope-kernel-host process per library
// (plugin/kernel_host.hpp), which has its own CUDA context and is started
// again after it dies. 0: every call in this process, as a plain call.
struct PluginCalls {
  explicit PluginCalls(double timeout = 60, std::string host = {})
      : timeout_seconds(timeout), kernel_host(std::move(host)) {}
  double timeout_seconds;   // accuracy_report --kernel-timeout
  std::string kernel_host;  // the helper program; empty: default_kernel_host_program()
};

// dlopen()s the library and turns each kernel it describes into a
// UserKernel whose functions call the library's (and keep it loaded while
// any of them lives); UserKernel::library is `path`. Throws KernelLibError.
std::vector<UserKernel> load_kernel_lib(const std::string& path, const PluginCalls& calls = PluginCalls());

}  // namespace ulpscope
