// Dispatch of the cub shapes: which CUB call and accumulator type a KernelSpec
// means, the workspace, and the finish (our own small kernel, after CUB's).
#include "kernels/cuda/cub_shapes.hpp"

#include <cub/device/device_reduce.cuh>
#include <string>

#include "kernels/cuda/cccl_features.hpp"
#include "kernels/cuda/cub_calls.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/out_format.hpp"

namespace ulpscope {

namespace {

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }

bool is_sum_like(Op op) {
  return op == Op::sum || op == Op::mean || op == Op::dot || op == Op::sumsq || op == Op::norm2 ||
         op == Op::rms;
}

// The finish of each op, once, in the accumulator's precision: float for
// float and for the naive 16-bit accumulators (their final division in
// __half would overflow for n > 65504), double for double.
__device__ double finish(float a, Op op, std::int64_t length, double eps) {
  switch (op) {
    case Op::mean: return __fdiv_rn(a, __ll2float_rn(length));
    case Op::norm2: return __fsqrt_rn(a);
    case Op::rms: return __fsqrt_rn(__fadd_rn(__fdiv_rn(a, __ll2float_rn(length)), __double2float_rn(eps)));
    default: return a;
  }
}
__device__ double finish(double a, Op op, std::int64_t length, double eps) {
  switch (op) {
    case Op::mean: return __ddiv_rn(a, __ll2double_rn(length));
    case Op::norm2: return __dsqrt_rn(a);
    case Op::rms: return __dsqrt_rn(__dadd_rn(__ddiv_rn(a, __ll2double_rn(length)), eps));
    default: return a;
  }
}
__device__ double finish(__half a, Op op, std::int64_t length, double eps) {
  return finish(__half2float(a), op, length, eps);
}
__device__ double finish(__nv_bfloat16 a, Op op, std::int64_t length, double eps) {
  return finish(__bfloat162float(a), op, length, eps);
}

template <class Acc>
__global__ void finish_kernel(const Acc* acc, std::int64_t count, Op op, std::int64_t length, double eps,
                              Dtype out, Saturation sat, double* values, double* unrounded) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const double v = finish(acc[i], op, length, eps);
  if (unrounded != nullptr) unrounded[i] = v;
  values[i] = round_to_out(v, out, sat);
}

// One (input type, accumulator type) pair: the workspace it needs (ws ==
// nullptr) or the launch.
template <class In, class Acc>
std::size_t call_typed(const KernelSpec& s, const DeviceProblem& p, const DeviceWorkspace* ws,
                       const DeviceOutput* out, cudaStream_t stream) {
  const std::int64_t count = p.axis == Axis::all ? 1 : p.reductions();
  const std::size_t results_bytes = align_up(std::size_t(count) * sizeof(Acc));
  const bool deterministic = s.shape == Shape::cub_deterministic;
  const std::string what = std::string(to_string(s.shape)) + " " + std::string(to_string(s.op)) + " " +
                           std::string(to_string(s.in)) + " acc " + std::string(to_string(s.acc));
  std::size_t temp_bytes = 0;
  if (!deterministic) {
    cudaError_t e = p.axis == Axis::all
                        ? cub_shapes::reduce_all<In, Acc>(nullptr, temp_bytes, p, s.op, nullptr, stream)
                        : cub_shapes::reduce_segments<In, Acc>(nullptr, temp_bytes, p, s.op, nullptr, stream);
    cuda_check(e, what + " (temporary storage size)");
  }
  if (ws == nullptr) return results_bytes + temp_bytes;

  if (ws->bytes < results_bytes + temp_bytes)
    throw GpuError(what + ": workspace of " + std::to_string(ws->bytes) + " bytes, needs " +
                   std::to_string(results_bytes + temp_bytes));
  Acc* results = static_cast<Acc*>(ws->data);
  void* temp = static_cast<char*>(ws->data) + results_bytes;
  cudaError_t e = cudaSuccess;
  if (deterministic) {
    if constexpr (std::is_same_v<Acc, float> || std::is_same_v<Acc, double>) {
#if ULPSCOPE_HAVE_CUB_DETERMINISTIC
      e = cub_shapes::reduce_all_deterministic<In, Acc>(p, s.op, results, stream);
#else
      throw GpuError(std::string("cub_deterministic: ") + ULPSCOPE_CUB_DETERMINISTIC_MISSING);
#endif
    } else {
      throw GpuError(what + ": gpu_to_gpu determinism needs a float or double accumulator");
    }
  } else if (p.axis == Axis::all) {
    e = cub_shapes::reduce_all<In, Acc>(temp, temp_bytes, p, s.op, results, stream);
  } else {
    e = cub_shapes::reduce_segments<In, Acc>(temp, temp_bytes, p, s.op, results, stream);
  }
  cuda_check(e, what);
  check_launch(what);
  if (count > 0) {
    constexpr int threads = 256;
    const auto blocks = static_cast<unsigned>((count + threads - 1) / threads);
    finish_kernel<Acc><<<blocks, threads, 0, stream>>>(results, count, s.op, p.length(), p.eps, s.out, s.sat,
                                                       out->values, out->unrounded);
    check_launch(what + " (finish)");
  }
  return results_bytes + temp_bytes;
}

template <class In>
std::size_t call_accumulating(const KernelSpec& s, const DeviceProblem& p, const DeviceWorkspace* ws,
                              const DeviceOutput* out, cudaStream_t stream) {
  switch (s.acc) {
    case Accumulator::naive:
      if constexpr (std::is_same_v<In, float> || std::is_same_v<In, __half> ||
                    std::is_same_v<In, __nv_bfloat16>)
        return call_typed<In, In>(s, p, ws, out, stream);
      break;
    case Accumulator::fp32: return call_typed<In, float>(s, p, ws, out, stream);
    case Accumulator::fp64: return call_typed<In, double>(s, p, ws, out, stream);
    default: break;
  }
  throw GpuError("cub shape: no such accumulation (see cub_unavailable)");
}

std::size_t call(const KernelSpec& s, const DeviceProblem& p, const DeviceWorkspace* ws, const DeviceOutput* out,
                 cudaStream_t stream) {
  if (auto why = cub_unavailable(s, p.axis)) throw GpuError(*why);
  if (s.in != p.in)
    throw GpuError("cub shape: the spec reads " + std::string(to_string(s.in)) + " but the problem holds " +
                   std::string(to_string(p.in)));
  switch (s.in) {
    case Dtype::fp32: return call_accumulating<float>(s, p, ws, out, stream);
    case Dtype::fp16: return call_accumulating<__half>(s, p, ws, out, stream);
    case Dtype::bf16: return call_accumulating<__nv_bfloat16>(s, p, ws, out, stream);
    case Dtype::fp8_e4m3: return call_accumulating<__nv_fp8_e4m3>(s, p, ws, out, stream);
    case Dtype::fp8_e5m2: return call_accumulating<__nv_fp8_e5m2>(s, p, ws, out, stream);
    case Dtype::fp64: break;
  }
  throw GpuError("fp64 is an output format, not an input format");
}

}  // namespace

std::optional<std::string> cub_unavailable(const KernelSpec& s, Axis axis) {
  const bool deterministic = s.shape == Shape::cub_deterministic;
  if (s.shape != Shape::cub && !deterministic) return std::string(to_string(s.shape)) + " is not a cub shape";
  if (deterministic && !ULPSCOPE_HAVE_CUB_DETERMINISTIC)
    return std::string(ULPSCOPE_CUB_DETERMINISTIC_MISSING);
  if (s.in == Dtype::fp64) return std::string("fp64 is an output format, not an input format");
  const bool selection = is_selection(s.op);
  if (!is_sum_like(s.op) && !selection)
    return std::string(to_string(s.op)) +
           " has no cub counterpart here (the cub shapes cover sum, mean, dot, sumsq, norm2, rms, max, min, amax)";
  if (deterministic) {
    if (selection)
      return std::string("gpu_to_gpu determinism concerns sums; ") + std::string(to_string(s.op)) +
             " is order-independent (see the cub shape)";
    if (axis != Axis::all)
      return std::string("cub::DeviceSegmentedReduce has no gpu_to_gpu determinism (rows/columns)");
    if (s.acc != Accumulator::fp32 && s.acc != Accumulator::fp64)
      return std::string("cub's gpu_to_gpu sum (RFA) accumulates float or double: accumulator fp32 or fp64, not ") +
             std::string(to_string(s.acc));
    return std::nullopt;
  }
  if (selection) {
    if (s.acc != Accumulator::fp32)
      return std::string(to_string(s.op)) +
             " rounds nothing, so its accumulator does not matter: the cub shape runs it once, as accumulator fp32";
    return std::nullopt;
  }
  if (s.acc == Accumulator::naive && is_fp8(s.in))
    return std::string("CUDA's fp8 types have no arithmetic: CUB cannot accumulate in fp8 (naive)");
  if (s.acc != Accumulator::naive && s.acc != Accumulator::fp32 && s.acc != Accumulator::fp64)
    return std::string("CUB adds with plus in its accumulator type (naive, fp32 or fp64); ") +
           std::string(to_string(s.acc)) + " is not a CUB accumulation";
  return std::nullopt;
}

std::size_t cub_workspace_bytes(const KernelSpec& s, const DeviceProblem& p) {
  return call(s, p, nullptr, nullptr, nullptr);
}

void launch_cub(const KernelSpec& s, const DeviceProblem& p, DeviceWorkspace ws, DeviceOutput out,
                cudaStream_t stream) {
  call(s, p, &ws, &out, stream);
}

std::size_t cub_sum_fp32_workspace_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  cuda_check(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                                    static_cast<float*>(nullptr), n),
             "cub::DeviceReduce::Sum (temporary storage size)");
  return bytes;
}

void launch_cub_sum_fp32(const float* x, std::int64_t n, float* out, DeviceWorkspace ws, cudaStream_t stream) {
  std::size_t bytes = ws.bytes;
  cuda_check(cub::DeviceReduce::Sum(ws.data, bytes, x, out, n, stream), "cub::DeviceReduce::Sum fp32");
}

}  // namespace ulpscope
