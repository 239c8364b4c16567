// The `cub` shape over bf16 input: CUB accumulating in __nv_bfloat16 (naive,
// what cub::DeviceReduce::Sum does for bf16), float and double.
#include "kernels/cuda/cub_shapes_impl.cuh"

namespace ulpscope::cub_shapes {
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__nv_bfloat16, __nv_bfloat16)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__nv_bfloat16, float)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__nv_bfloat16, double)
}  // namespace ulpscope::cub_shapes
