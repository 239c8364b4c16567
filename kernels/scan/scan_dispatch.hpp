#pragma once
// The GPU entry points of the scan shapes (host declarations; the
// definitions are CUDA, kernels/scan/scan_*.cu). A call enqueues its kernels
// on the stream and returns; launch errors surface through
// cudaGetLastError. Outputs are written in out_dtype (fp32, fp16, bf16
// storage), one per element, [line][index], so that the bytes written are a
// real scan's; the CPU model of a call is scan::run_model with the same spec,
// problem and configuration.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>
#include <string>

#include "kernels/cuda/device_problem.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::scan {

// nullopt when a kernel exists for spec along axis (warp, block,
// reduce_then_scan, lookback; naive, fp32, fp64, kahan; out_dtype the input's
// default); else why not.
std::optional<std::string> gpu_unavailable(const KernelSpec& spec, Axis axis);

std::size_t workspace_bytes(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config);
void launch(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config,
            DeviceWorkspace workspace, void* out, cudaStream_t stream);
// The same into the GPU backend's outputs: each element's rounded value
// widened to double in out.values (out.unrounded is left alone).
void launch_into(const KernelSpec& spec, const DeviceProblem& problem, const LaunchConfig& config,
                 DeviceWorkspace workspace, DeviceOutput out, cudaStream_t stream);

}  // namespace ulpscope::scan
