#pragma once
// The `cub` and `cub_deterministic` shapes (docs/spec.md, "Kernel shapes"):
// NVIDIA's reductions, GPU only, no CPU model. Ops: sum, mean, dot, sumsq,
// norm2, rms (CUB adds; the finish, a division or square root, is ours and is
// done once in the accumulator type), and max, min, amax. Whole arrays go
// through cub::DeviceReduce, rows and columns through
// cub::DeviceSegmentedReduce. The LaunchConfig does not apply: CUB picks its
// own grid. CUDA code only.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/cuda/device_problem.hpp"

namespace ulpscope {

// Why a cub shape cannot run this kernel, or nullopt.
std::optional<std::string> cub_unavailable(const KernelSpec&, Axis);

// The workspace a launch needs (CUB's temporary storage and the
// accumulator-typed results before the finish).
std::size_t cub_workspace_bytes(const KernelSpec&, const DeviceProblem&);

// Enqueues the reduction and its finish on `stream`; writes out.values (and
// out.unrounded: the finished value in the accumulator type, before the
// rounding to spec.out). Throws GpuError.
void launch_cub(const KernelSpec&, const DeviceProblem&, DeviceWorkspace, DeviceOutput, cudaStream_t);

// The yardstick of docs/spec.md ("Metrics"): cub::DeviceReduce::Sum over n floats.
std::size_t cub_sum_fp32_workspace_bytes(std::int64_t n);
void launch_cub_sum_fp32(const float* x, std::int64_t n, float* out, DeviceWorkspace, cudaStream_t);

}  // namespace ulpscope
