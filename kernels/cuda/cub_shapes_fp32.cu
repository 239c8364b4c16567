// The `cub` shape over fp32 input: CUB accumulating in float (naive and fp32
// are the same here) and in double.
#include "kernels/cuda/cub_shapes_impl.cuh"

namespace ulpscope::cub_shapes {
ULPSCOPE_INSTANTIATE_CUB_SHAPES(float, float)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(float, double)
}  // namespace ulpscope::cub_shapes
