#pragma once
// Step 2 of tree_order.hpp: the shuffle tree of one warp, over any reducer's
// partial (moved word by word, so any trivially copyable partial travels).
#include <cstring>
#include <type_traits>

#include "kernels/tree/tree_order.hpp"

namespace ulpscope::tree {

template <class P>
__device__ __forceinline__ P shuffle_down(const P& p, int offset) {
  static_assert(std::is_trivially_copyable_v<P> && sizeof(P) % 4 == 0);
  constexpr int kWords = sizeof(P) / 4;
  unsigned w[kWords];
  std::memcpy(w, &p, sizeof(P));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __shfl_down_sync(0xFFFFFFFFu, w[i], offset);
  P r;
  std::memcpy(&r, w, sizeof(P));
  return r;
}

// Lane l merges lane l+offset's partial for offset 16, 8, 4, 2, 1; lane 0
// ends with the warp's result.
template <class R>
__device__ __forceinline__ void warp_reduce(typename R::Partial& p) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const typename R::Partial other = shuffle_down(p, offset);
    R::merge(p, other);
  }
}

}  // namespace ulpscope::tree
