#pragma once
// The CUB calls behind the `cub` and `cub_deterministic` shapes, declared
// here and instantiated per input format in cub_shapes_<format>.cu and
// cub_deterministic.cu (cub_shapes_impl.cuh has the definitions). In and Acc
// are CUDA's device types: float, double, __half, __nv_bfloat16,
// __nv_fp8_e4m3, __nv_fp8_e5m2.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda/device_problem.hpp"

namespace ulpscope::cub_shapes {

// cub::DeviceReduce over the whole array into out[0]. temp == nullptr asks
// for the temporary storage size, as in CUB.
template <class In, class Acc>
cudaError_t reduce_all(void* temp, std::size_t& temp_bytes, const DeviceProblem&, Op, Acc* out,
                       cudaStream_t);

// cub::DeviceSegmentedReduce, one segment per row (inner) or column (outer),
// into out[0 .. reductions).
template <class In, class Acc>
cudaError_t reduce_segments(void* temp, std::size_t& temp_bytes, const DeviceProblem&, Op, Acc* out,
                            cudaStream_t);

// cub::DeviceReduce with cuda::execution::determinism::gpu_to_gpu (CCCL >=
// 3.1, its RFA sum); CUB allocates its temporary storage itself, stream
// ordered (cudaMallocAsync). Sum-like ops only; Acc is float or double.
template <class In, class Acc>
cudaError_t reduce_all_deterministic(const DeviceProblem&, Op, Acc* out, cudaStream_t);

}  // namespace ulpscope::cub_shapes
