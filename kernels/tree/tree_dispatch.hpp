#pragma once
// The GPU entry points of the `tree` and `atomic` shapes, for the GPU backend
// (host declarations; the definitions are CUDA). Each call enqueues its
// kernels on the stream and returns; launch errors surface through
// cudaGetLastError. A LaunchConfig with blocks = 0 takes launch_configs()'s
// first (default) configuration, so the CPU model of that call is
// run_model(spec, problem, launch_configs(spec, length).front()).
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda/device_problem.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

std::size_t tree_workspace_bytes(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config);
void launch_tree(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config,
                 DeviceWorkspace workspace, DeviceOutput out, cudaStream_t stream);

// The outputs themselves, for callers that want the answer (ulpscope::exact)
// rather than a measurement: the layout of DeviceOutput's values, each output
// stored in spec.out (kernels/store_out.hpp) by the finishing pass, with no
// store kernel after it. Reductions only (not rmsnorm or layernorm).
struct TypedOutput {
  void* data = nullptr;  // count elements of the format spec.out, on the device
  std::size_t count = 0;
};
void launch_tree(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config,
                 DeviceWorkspace workspace, TypedOutput out, cudaStream_t stream);

// atomic: whole-array sum-like ops with fp32 or fp64 accumulators.
std::size_t atomic_workspace_bytes(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config);
void launch_atomic(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config,
                   DeviceWorkspace workspace, DeviceOutput out, cudaStream_t stream);

}  // namespace ulpscope
