#pragma once
// The GPU entry points of the seed gallery's shapes, for the GPU backend
// (host declarations; the definitions are CUDA). Each call enqueues its
// kernels on the stream and returns; launch errors surface through
// cudaGetLastError. A LaunchConfig with blocks = 0 takes launch_configs()'s
// first (default) configuration, so the CPU model of that call is
// run_model(spec, problem, launch_configs(spec, n).front()).
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda/device_problem.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

std::size_t gallery_workspace_bytes(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config);
void launch_gallery(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config,
                    DeviceWorkspace workspace, DeviceOutput out, cudaStream_t stream);

}  // namespace ulpscope
