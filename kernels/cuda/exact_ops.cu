// ulpscope::exact::reduce (kernels/exact.hpp): the tree kernels' `exact`
// accumulator on the caller's arrays, then the outputs, which the dispatch
// writes widened to double (kernels/cuda/device_problem.hpp, DeviceOutput),
// stored in the output format. They are already rounded to that format, so
// the store converts exactly.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/exact.hpp"
#include "kernels/model.hpp"
#include "kernels/tree/tree_dispatch.hpp"

namespace ulpscope::exact {
namespace {

Op to_op(Reduction r) {
  switch (r) {
    case Reduction::sum: return Op::sum;
    case Reduction::mean: return Op::mean;
    case Reduction::dot: return Op::dot;
    case Reduction::sumsq: return Op::sumsq;
    case Reduction::norm2: return Op::norm2;
    case Reduction::mean_var: return Op::mean_var;
  }
  throw std::invalid_argument("exact::reduce: unknown reduction");
}

template <class T>
__device__ T narrow(double v);
template <>
__device__ double narrow<double>(double v) { return v; }
template <>
__device__ float narrow<float>(double v) { return float(v); }
template <>
__device__ __half narrow<__half>(double v) { return __double2half(v); }
template <>
__device__ __nv_bfloat16 narrow<__nv_bfloat16>(double v) { return __double2bfloat16(v); }
template <>
__device__ __nv_fp8_e4m3 narrow<__nv_fp8_e4m3>(double v) { return __nv_fp8_e4m3(v); }
template <>
__device__ __nv_fp8_e5m2 narrow<__nv_fp8_e5m2>(double v) { return __nv_fp8_e5m2(v); }

template <class T>
__global__ void store(const double* values, T* out, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = narrow<T>(values[i]);
}

void launch_store(Dtype out_dtype, const double* values, void* out, std::int64_t count, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = int(std::min<std::int64_t>((count + threads - 1) / threads, 4096));
  switch (out_dtype) {
    case Dtype::fp64: store<<<blocks, threads, 0, stream>>>(values, static_cast<double*>(out), count); break;
    case Dtype::fp32: store<<<blocks, threads, 0, stream>>>(values, static_cast<float*>(out), count); break;
    case Dtype::fp16: store<<<blocks, threads, 0, stream>>>(values, static_cast<__half*>(out), count); break;
    case Dtype::bf16: store<<<blocks, threads, 0, stream>>>(values, static_cast<__nv_bfloat16*>(out), count); break;
    case Dtype::fp8_e4m3: store<<<blocks, threads, 0, stream>>>(values, static_cast<__nv_fp8_e4m3*>(out), count); break;
    case Dtype::fp8_e5m2: store<<<blocks, threads, 0, stream>>>(values, static_cast<__nv_fp8_e5m2*>(out), count); break;
  }
  check_launch("exact::reduce (storing the outputs)");
}

}  // namespace

void reduce(const Arguments& a, cudaStream_t stream) {
  const std::string what = "exact::reduce";
  if (a.rows < 0 || a.cols < 0) throw std::invalid_argument(what + ": rows and cols must not be negative");
  if (a.rows == 0) return;
  if (a.in == Dtype::fp64) throw std::invalid_argument(what + ": fp64 is an output format only");
  if (a.cols > 0 && a.x == nullptr) throw std::invalid_argument(what + ": x is null");
  if (a.op == Reduction::dot && a.cols > 0 && a.y == nullptr) throw std::invalid_argument(what + ": dot needs y");
  if (a.out == nullptr) throw std::invalid_argument(what + ": out is null");
  const KernelSpec spec{to_op(a.op), a.in, a.out_dtype, Accumulator::exact, Shape::tree, Saturation::satfinite};
  const Axis axis = a.rows == 1 ? Axis::all : Axis::inner;
  if (auto why = unsupported(spec, axis)) throw std::invalid_argument(what + ": " + *why);

  DeviceProblem p;
  p.op = spec.op;
  p.axis = axis;
  p.in = a.in;
  p.rows = a.rows;
  p.cols = a.cols;
  p.x = a.x;
  p.y = a.op == Reduction::dot ? a.y : nullptr;
  const std::int64_t count = a.rows * outputs_per_row(a.op);
  const LaunchConfig config{};  // blocks = 0: the dispatch's default grid
  const std::size_t values_bytes = (std::size_t(count) * sizeof(double) + 255) / 256 * 256;
  const std::size_t workspace_bytes = tree_workspace_bytes(spec, p, config);

  void* scratch = nullptr;
  cuda_check(cudaMallocAsync(&scratch, values_bytes + workspace_bytes, stream), what + " (scratch memory)");
  auto* values = static_cast<double*>(scratch);
  try {
    launch_tree(spec, p, config, DeviceWorkspace{static_cast<char*>(scratch) + values_bytes, workspace_bytes},
                DeviceOutput{values, nullptr, std::size_t(count)}, stream);
    check_launch(what);
    launch_store(a.out_dtype, values, a.out, count, stream);
  } catch (...) {
    cudaFreeAsync(scratch, stream);
    throw;
  }
  cuda_check(cudaFreeAsync(scratch, stream), what + " (scratch memory)");
}

}  // namespace ulpscope::exact
