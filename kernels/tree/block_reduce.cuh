#pragma once
// Step 3 of tree_order.hpp: warp results through shared memory, warp 0 runs
// the warp tree over 32 slots (identity past the last warp). The result is
// valid in thread 0. Call it once per __syncthreads()-separated phase.
#include "kernels/tree/warp_reduce.cuh"

namespace ulpscope::tree {

template <class R>
__device__ __forceinline__ typename R::Partial block_reduce(typename R::Partial p) {
  using Partial = typename R::Partial;
  __shared__ Partial slot[kWarpSize];
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  warp_reduce<R>(p);
  if (lane == 0) slot[warp] = p;
  __syncthreads();
  if (warp == 0) {
    p = lane < int(blockDim.x / kWarpSize) ? slot[lane] : R::identity();
    warp_reduce<R>(p);
  }
  __syncthreads();  // the slots may be reused by the caller's next phase
  return p;
}

}  // namespace ulpscope::tree
