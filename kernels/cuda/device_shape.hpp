#pragma once
// The shape of the current CUDA device (launch_policy.hpp), for the
// dispatches' default launch (a LaunchConfig with blocks = 0).
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/per_device.hpp"
#include "kernels/launch_policy.hpp"

namespace ulpscope {

// The shape of `device`, by two attribute calls.
inline DeviceShape query_device_shape(int device) {
  DeviceShape shape;
  cuda_check(cudaDeviceGetAttribute(&shape.sm_count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(multiProcessorCount)");
  cuda_check(cudaDeviceGetAttribute(&shape.registers_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor, device),
             "cudaDeviceGetAttribute(maxRegistersPerMultiprocessor)");
  return shape;
}

// The current device's shape, queried once per device (per_device.hpp), so
// that a timed launch makes no attribute call: ulpscope::exact runs on
// whichever device is current, whose shape may differ from device 0's.
inline DeviceShape current_device_shape() {
  static PerDevice<DeviceShape> shapes;
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  return shapes.get(device, query_device_shape);
}

}  // namespace ulpscope
