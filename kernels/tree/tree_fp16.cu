// The tree and atomic kernels for fp16 inputs.
#include "kernels/tree/tree_formats.hpp"
#include "kernels/tree/tree_launch.cuh"

namespace ulpscope::tree {

std::size_t workspace_bytes_fp16(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  return workspace_bytes_in<Fp16Format>(s, p, c);
}

void launch_fp16(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
               DeviceOutput out, void* typed, cudaStream_t stream, bool atomic) {
  launch_in<Fp16Format, Fp16>(s, p, c, ws, out, typed, stream, atomic);
}

}  // namespace ulpscope::tree
