#pragma once
// f(x[0]), ..., f(x[W - 1]) in order from one copy of f's code: a loop left
// rolled on the GPU, for the rare paths of unrolled group additions (the
// exact windows: exact_sum.hpp, exact_value_window.hpp), whose W copies
// would crowd the instruction cache. The values are shifted down at each
// step, so that they stay in registers (indexed, they were local memory).
#include "formats/host_device.hpp"

namespace ulpscope {

template <int W, class T, class F>
ULPSCOPE_HD void each_in_one_copy(const T* x, F f) {
  T q[W];
  ULPSCOPE_UNROLL
  for (int j = 0; j < W; ++j) q[j] = x[j];
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int j = 0; j < W; ++j) {
    f(q[0]);
    ULPSCOPE_UNROLL
    for (int k = 0; k + 1 < W; ++k) q[k] = q[k + 1];
  }
}

}  // namespace ulpscope
