// The `cub_deterministic` shape: cub::DeviceReduce with
// cuda::execution::require(cuda::execution::determinism::gpu_to_gpu), NVIDIA's
// reproducible sum (an RFA: Demmel, Ahrens, Nguyen, "Efficient reproducible
// floating point summation and BLAS", TOMS 2020). Compiled only when CMake
// found it in the CCCL headers (CCCL >= 3.1; ULPSCOPE_HAVE_CUB_DETERMINISTIC).
#include <cuda/execution>
#include <cuda/stream_ref>

#include "kernels/cuda/cub_shapes_impl.cuh"

namespace ulpscope::cub_shapes {

template <class In, class Acc>
cudaError_t reduce_all_deterministic(const DeviceProblem& p, Op op, Acc* out, cudaStream_t stream) {
  // RFA covers float and double with cuda::std::plus (CCCL, cub/device/device_reduce.cuh,
  // "Determinism"); the transform widens (and squares) first, as in the cub shape.
  const auto env = ::cuda::std::execution::env{
      ::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu), ::cuda::stream_ref{stream}};
  const Plan plan = plan_of(op);
  const In* x = static_cast<const In*>(p.x);
  const std::int64_t n = p.elements();
  if (plan.product)
    return cub::DeviceReduce::TransformReduce(thrust::counting_iterator<std::int64_t>(0), out, n,
                                              ::cuda::std::plus<Acc>{},
                                              pair_product<In, Acc>{x, static_cast<const In*>(p.y)},
                                              acc_zero<Acc>(), env);
  return cub::DeviceReduce::TransformReduce(x, out, n, ::cuda::std::plus<Acc>{}, element_map<In, Acc>{plan.map},
                                            acc_zero<Acc>(), env);
}

#define ULPSCOPE_INSTANTIATE_DETERMINISTIC(In)                                                           \
  template cudaError_t reduce_all_deterministic<In, float>(const DeviceProblem&, Op, float*, cudaStream_t); \
  template cudaError_t reduce_all_deterministic<In, double>(const DeviceProblem&, Op, double*, cudaStream_t);

ULPSCOPE_INSTANTIATE_DETERMINISTIC(float)
ULPSCOPE_INSTANTIATE_DETERMINISTIC(__half)
ULPSCOPE_INSTANTIATE_DETERMINISTIC(__nv_bfloat16)
ULPSCOPE_INSTANTIATE_DETERMINISTIC(__nv_fp8_e4m3)
ULPSCOPE_INSTANTIATE_DETERMINISTIC(__nv_fp8_e5m2)

}  // namespace ulpscope::cub_shapes
