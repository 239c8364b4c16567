// The `cub` shape over fp16 input: CUB accumulating in __half (naive, what
// cub::DeviceReduce::Sum does for __half), float and double.
#include "kernels/cuda/cub_shapes_impl.cuh"

namespace ulpscope::cub_shapes {
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__half, __half)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__half, float)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__half, double)
}  // namespace ulpscope::cub_shapes
