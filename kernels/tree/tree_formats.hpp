#pragma once
// One launcher per input format (tree_<format>.cu), so that the CUDA build
// compiles the formats' kernels in parallel, smaller units. typed: where the
// outputs go in their own format (tree_dispatch.hpp, TypedOutput), or null.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda/device_problem.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::tree {

#define ULPSCOPE_TREE_FORMAT(name)                                                                           \
  std::size_t workspace_bytes_##name(const KernelSpec&, const DeviceProblem&, const LaunchConfig&);         \
  void launch_##name(const KernelSpec&, const DeviceProblem&, const LaunchConfig&, DeviceWorkspace, DeviceOutput, \
                     void* typed, cudaStream_t, bool atomic);
ULPSCOPE_TREE_FORMAT(fp32)
ULPSCOPE_TREE_FORMAT(fp16)
ULPSCOPE_TREE_FORMAT(bf16)
ULPSCOPE_TREE_FORMAT(fp8_e4m3)
ULPSCOPE_TREE_FORMAT(fp8_e5m2)
#undef ULPSCOPE_TREE_FORMAT

}  // namespace ulpscope::tree
