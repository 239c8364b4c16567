// The `cub` shape over both fp8 formats: CUB accumulating in float and
// double (CUDA's fp8 types have no arithmetic, so there is no naive one).
#include "kernels/cuda/cub_shapes_impl.cuh"

namespace ulpscope::cub_shapes {
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__nv_fp8_e4m3, float)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__nv_fp8_e4m3, double)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__nv_fp8_e5m2, float)
ULPSCOPE_INSTANTIATE_CUB_SHAPES(__nv_fp8_e5m2, double)
}  // namespace ulpscope::cub_shapes
