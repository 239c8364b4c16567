// The tree and atomic shapes' entry points: dispatch on the input format.
#include "kernels/tree/tree_dispatch.hpp"

#include <stdexcept>

#include "kernels/model.hpp"
#include "kernels/tree/tree_formats.hpp"

namespace ulpscope {
namespace {

std::size_t workspace(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  switch (s.in) {
    case Dtype::fp32: return tree::workspace_bytes_fp32(s, p, c);
    case Dtype::fp16: return tree::workspace_bytes_fp16(s, p, c);
    case Dtype::bf16: return tree::workspace_bytes_bf16(s, p, c);
    case Dtype::fp8_e4m3: return tree::workspace_bytes_fp8_e4m3(s, p, c);
    case Dtype::fp8_e5m2: return tree::workspace_bytes_fp8_e5m2(s, p, c);
    default: throw std::invalid_argument("tree: fp64 is an output format only");
  }
}

void launch(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws, DeviceOutput out,
            void* typed, cudaStream_t stream, bool atomic) {
  if (s.in != p.in) throw std::invalid_argument("tree: the spec's input format differs from the problem's");
  if (s.op != p.op) throw std::invalid_argument("tree: the spec's op differs from the problem's");
  switch (s.in) {
    case Dtype::fp32: return tree::launch_fp32(s, p, c, ws, out, typed, stream, atomic);
    case Dtype::fp16: return tree::launch_fp16(s, p, c, ws, out, typed, stream, atomic);
    case Dtype::bf16: return tree::launch_bf16(s, p, c, ws, out, typed, stream, atomic);
    case Dtype::fp8_e4m3: return tree::launch_fp8_e4m3(s, p, c, ws, out, typed, stream, atomic);
    case Dtype::fp8_e5m2: return tree::launch_fp8_e5m2(s, p, c, ws, out, typed, stream, atomic);
    default: throw std::invalid_argument("tree: fp64 is an output format only");
  }
}

KernelSpec as_shape(KernelSpec s, Shape shape) {
  s.shape = shape;
  return s;
}

}  // namespace

std::size_t tree_workspace_bytes(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  return workspace(as_shape(s, Shape::tree), p, c);
}
void launch_tree(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
                 DeviceOutput out, cudaStream_t stream) {
  launch(as_shape(s, Shape::tree), p, c, ws, out, nullptr, stream, false);
}
void launch_tree(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
                 TypedOutput out, cudaStream_t stream) {
  if (out.data == nullptr) throw std::invalid_argument("tree: the typed output is null");
  launch(as_shape(s, Shape::tree), p, c, ws, DeviceOutput{nullptr, nullptr, out.count}, out.data, stream, false);
}
std::size_t atomic_workspace_bytes(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  return workspace(as_shape(s, Shape::atomic), p, c);
}
void launch_atomic(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
                   DeviceOutput out, cudaStream_t stream) {
  launch(as_shape(s, Shape::atomic), p, c, ws, out, nullptr, stream, true);
}

}  // namespace ulpscope
