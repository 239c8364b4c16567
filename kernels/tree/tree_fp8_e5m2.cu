// The tree and atomic kernels for fp8_e5m2 inputs.
#include "kernels/tree/tree_formats.hpp"
#include "kernels/tree/tree_launch.cuh"

namespace ulpscope::tree {

std::size_t workspace_bytes_fp8_e5m2(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  return workspace_bytes_in<Fp8E5M2Format>(s, p, c);
}

void launch_fp8_e5m2(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
               DeviceOutput out, void* typed, cudaStream_t stream, bool atomic) {
  launch_in<Fp8E5M2Format, Fp8E5M2>(s, p, c, ws, out, typed, stream, atomic);
}

}  // namespace ulpscope::tree
