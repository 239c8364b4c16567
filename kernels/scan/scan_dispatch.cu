// The scan shapes' GPU dispatch: which (spec, axis) has a kernel, and the
// call of the input format's launcher (scan_<format>.cu).
#include "kernels/scan/scan_dispatch.hpp"

#include <stdexcept>

#include "kernels/scan/scan_model.hpp"
#include "kernels/scan/scan_formats.cuh"

namespace ulpscope::scan {

std::optional<std::string> gpu_unavailable(const KernelSpec& spec, Axis axis) {
  if (auto why = unsupported(spec, axis)) return why;  // the combinations of the CPU models
  if (spec.shape == Shape::cub) return std::string("cub is NVIDIA's scan (cub::DeviceScan), not one of these kernels");
  if (spec.shape == Shape::serial) return std::string("serial is a CPU shape (one running value in index order)");
  if (spec.out != default_out_dtype(spec.in))
    return std::string("the scan kernels write the input format's default output only");
  return std::nullopt;
}

std::size_t workspace_bytes(const KernelSpec& spec, const DeviceProblem& p, const LaunchConfig& cfg) {
  switch (spec.in) {
    case Dtype::fp32: return workspace_bytes_fp32(spec, p, cfg);
    case Dtype::fp16: return workspace_bytes_fp16(spec, p, cfg);
    case Dtype::bf16: return workspace_bytes_bf16(spec, p, cfg);
    case Dtype::fp8_e4m3: return workspace_bytes_fp8_e4m3(spec, p, cfg);
    case Dtype::fp8_e5m2: return workspace_bytes_fp8_e5m2(spec, p, cfg);
    default: throw std::invalid_argument("scan: not an input format");
  }
}

namespace {

void launch_as(const KernelSpec& spec, const DeviceProblem& p, const LaunchConfig& cfg, DeviceWorkspace ws, void* out,
               bool as_double, cudaStream_t stream) {
  if (auto why = gpu_unavailable(spec, p.axis)) throw std::invalid_argument("scan: " + *why);
  if (auto why = bad_config(cfg)) throw std::invalid_argument("scan: " + *why);
  switch (spec.in) {
    case Dtype::fp32: launch_fp32(spec, p, cfg, ws, out, as_double, stream); return;
    case Dtype::fp16: launch_fp16(spec, p, cfg, ws, out, as_double, stream); return;
    case Dtype::bf16: launch_bf16(spec, p, cfg, ws, out, as_double, stream); return;
    case Dtype::fp8_e4m3: launch_fp8_e4m3(spec, p, cfg, ws, out, as_double, stream); return;
    case Dtype::fp8_e5m2: launch_fp8_e5m2(spec, p, cfg, ws, out, as_double, stream); return;
    default: throw std::invalid_argument("scan: not an input format");
  }
}

}  // namespace

void launch(const KernelSpec& spec, const DeviceProblem& p, const LaunchConfig& cfg, DeviceWorkspace ws, void* out,
            cudaStream_t stream) {
  launch_as(spec, p, cfg, ws, out, false, stream);
}

void launch_into(const KernelSpec& spec, const DeviceProblem& p, const LaunchConfig& cfg, DeviceWorkspace ws,
                 DeviceOutput out, cudaStream_t stream) {
  if (out.count < std::size_t(p.elements())) throw std::invalid_argument("scan: fewer outputs than elements");
  launch_as(spec, p, cfg, ws, out.values, true, stream);
}

}  // namespace ulpscope::scan
