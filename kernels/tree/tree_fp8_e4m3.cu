// The tree and atomic kernels for fp8_e4m3 inputs.
#include "kernels/tree/tree_formats.hpp"
#include "kernels/tree/tree_launch.cuh"

namespace ulpscope::tree {

std::size_t workspace_bytes_fp8_e4m3(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  return workspace_bytes_in<Fp8E4M3Format>(s, p, c);
}

void launch_fp8_e4m3(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
               DeviceOutput out, void* typed, cudaStream_t stream, bool atomic) {
  launch_in<Fp8E4M3Format, Fp8E4M3>(s, p, c, ws, out, typed, stream, atomic);
}

}  // namespace ulpscope::tree
