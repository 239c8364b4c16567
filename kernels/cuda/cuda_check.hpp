#pragma once
// Every CUDA call's status is checked and turned into a GpuError of one line
// (METHOD: "check every CUDA call's return code and the last error after each
// launch"). CUDA code only.
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/gpu_backend.hpp"

namespace ulpscope {

// Errors after which the context is unusable: every later call fails too
// (CUDA Runtime API, "cudaError": "the process must be terminated").
inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const std::string& what) {
  std::string msg = "CUDA error ";
  msg += cudaGetErrorName(e);
  msg += " (";
  msg += cudaGetErrorString(e);
  msg += ") in ";
  msg += what;
  if (is_sticky(e)) msg += "; the CUDA context is unusable from here on";
  throw GpuError(msg);
}

inline void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw_cuda_error(e, what);
}

// After a kernel launch: the launch's own error (bad configuration, too many
// resources) without waiting for the kernel. Clears a non-sticky error.
inline void check_launch(const std::string& what) { cuda_check(cudaGetLastError(), what); }

}  // namespace ulpscope
