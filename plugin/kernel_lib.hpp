#pragma once
// Loading a plug-in library (plugin/ulpscope_plugin.h) as user kernels
// (accuracy/user_kernel.hpp): accuracy_report --kernel-lib FILE.
#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy/user_kernel.hpp"

namespace ulpscope {

// Why a library cannot be used, as one line naming the file: it is missing,
// is not a shared library, lacks ulpscope_get_plugin, was built against
// another ABI version, or describes a kernel that cannot be measured.
struct KernelLibError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How the library's host functions (run_host, model) are called. With a
// timeout (the default), each call runs in a child process (fork) that is
// killed after timeout_seconds: a crash, exit(), abort(), hang or write past
// out fails that cell, naming the kernel, and the run goes on. 0: in this
// process, as a plain call. Device calls (run_device) run in this process.
struct PluginCalls {
  double timeout_seconds = 60;  // accuracy_report --kernel-timeout
};

// dlopen()s the library and turns each kernel it describes into a
// UserKernel whose functions call the library's (and keep it loaded while
// any of them lives); UserKernel::library is `path`. Throws KernelLibError.
std::vector<UserKernel> load_kernel_lib(const std::string& path, const PluginCalls& calls = {});

}  // namespace ulpscope
