#pragma once
// The shape of the current CUDA device (launch_policy.hpp), for the
// dispatches' default launch (a LaunchConfig with blocks = 0).
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/launch_policy.hpp"

namespace ulpscope {

// A timed launch makes no attribute call: current_device_shape() asks once.
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

// Queried once per device (the first 64; others each time): ulpscope::exact
// runs on whichever device is current, whose shape may differ from device 0's.
inline DeviceShape current_device_shape() {
  static std::mutex mutex;
  static std::atomic<bool> known[64] = {};
  static DeviceShape shapes[64];
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= 64) return query_device_shape();
  if (known[device].load(std::memory_order_acquire)) return shapes[device];
  const std::lock_guard<std::mutex> lock(mutex);
  if (!known[device].load(std::memory_order_relaxed)) {
    shapes[device] = query_device_shape();
    known[device].store(true, std::memory_order_release);
  }
  return shapes[device];
}

}  // namespace ulpscope
