// The `cub` shape over fp16 input: CUB accumulating in __half (naive, what
// cub::DeviceReduce::Sum does for __half), float and double.
#include "kernels/cuda/cub_shapes_impl.cuh"

namespace ulpscope::cub_shapes {

// What `naive` means for CUB: cub::DeviceReduce accumulates in
// decay(op(init, input)), and Sum's init has the output's type, so Sum over
// __half into __half adds in __half.
static_assert(std::is_same_v<::cuda::std::__accumulator_t<::cuda::std::plus<>, __half, __half>, __half>);

ULPSCOPE_INSTANTIATE_CUB_SHAPES(__half, __half)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__half, float)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__half, double)
}  // namespace ulpscope::cub_shapes
