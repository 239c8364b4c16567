// The tree and atomic kernels for bf16 inputs.
#include "kernels/tree/tree_formats.hpp"
#include "kernels/tree/tree_launch.cuh"

namespace ulpscope::tree {

std::size_t workspace_bytes_bf16(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  return workspace_bytes_in<Bf16Format>(s, p, c);
}

void launch_bf16(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
               DeviceOutput out, void* typed, cudaStream_t stream, bool atomic) {
  launch_in<Bf16Format, Bf16>(s, p, c, ws, out, typed, stream, atomic);
}

}  // namespace ulpscope::tree
