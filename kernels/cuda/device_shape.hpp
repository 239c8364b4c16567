#pragma once
// The shape of the current CUDA device (launch_policy.hpp), for the
// dispatches' default launch (a LaunchConfig with blocks = 0).
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/launch_policy.hpp"

namespace ulpscope {

// Queried once per process: the backend runs on one device (gpu_backend.cu
// opens device 0), and a timed launch then makes no attribute call.
inline DeviceShape query_device_shape() {
  int device = 0;
  DeviceShape shape;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&shape.sm_count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(multiProcessorCount)");
  cuda_check(cudaDeviceGetAttribute(&shape.registers_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor, device),
             "cudaDeviceGetAttribute(maxRegistersPerMultiprocessor)");
  return shape;
}

inline DeviceShape current_device_shape() {
  static const DeviceShape shape = query_device_shape();
  return shape;
}

}  // namespace ulpscope
