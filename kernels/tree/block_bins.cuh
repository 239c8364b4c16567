#pragma once
// Steps 1-3 of tree_order.hpp for a first pass that adds into bins
// (BinnedSquaresReducer, kernels/accumulators/exact_binned_squares.hpp):
// each thread's chain goes in segments short enough that the block's bins
// stay exact, and after each segment the block flushes them, bin b summed
// over the threads into the integer of warp 0's lane b (its digits in shared
// memory). At the end warp 0 adds the 32 integers digit by digit. The
// integer is exact, so the block's partial is the value the model's steps
// 1-3 give, whatever the order: one spill per bin and block instead of 32
// per thread, and no integer in the threads' registers while they add
// (docs/perf-h100.md, "block_bins.cuh").
#include <cstdint>

#include "kernels/tree/load.cuh"
#include "kernels/tree/tree_order.hpp"

namespace ulpscope::tree {

// Flush the block's bins into warp 0's integers (exact_binned_squares.hpp,
// gather_warp and spill_warps); again: the bins are added to afterwards.
// at_barrier runs in every thread once all have reached the flush.
template <class Bins, class AtBarrier>
__device__ __forceinline__ void flush_bins(double* bin, typename Bins::Integer::State& acc, bool again,
                                           AtBarrier at_barrier) {
  static_assert(Bins::bins == kWarpSize, "lane b of warp 0 spills bin b");
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  __syncthreads();  // every square of the segment in its bin
  at_barrier();
  Bins::gather_warp(bin, blockDim.x, lane, warp);
  __syncthreads();
  if (warp == 0) Bins::spill_warps(bin, blockDim.x, blockDim.x / kWarpSize, lane, acc);
  if (again) __syncthreads();  // the warps' slots back to -0 before they are added to
}

// The squares' integer in a block's partial: mean_var's second sum, or the
// partial itself.
template <class P>
__device__ __forceinline__ auto& squares_of(P& p) {
  if constexpr (requires { p.p2; }) return p.p2;
  else return p;
}

// The block's partial (valid in thread 0) of the order o's chains g, g + G,
// ... (vectors through Chain, chain.add_to), bins at bin (bin-major over the
// block's threads), warp 0's digits at digits (32 * Acc::digits words), then
// (R::Values, mean_var) the integer of the values that the block's threads
// share (exact_value_window.hpp).
template <class R, class Chain, class Elem>
__device__ __forceinline__ typename R::Partial binned_block_partial(const TreeOrder& o, std::int64_t g,
                                                                    const Elem* x, Chain& chain, double* bin,
                                                                    std::int64_t* digits) {
  using Bins = typename R::Bins;
  using Integer = typename Bins::Integer;
  constexpr bool values = requires { typename R::Values; };
  auto st = R::start();
  R::place_bins(st, bin + threadIdx.x, blockDim.x);
  auto acc = Integer::start();
  if (threadIdx.x < kWarpSize) Integer::place_limbs(acc, digits + threadIdx.x * Integer::digits);
  std::int64_t* shared_values = digits + kWarpSize * Integer::digits;
  if constexpr (values) {
    R::Values::zero_integer(shared_values, threadIdx.x, blockDim.x);
    R::Values::place_integer(st.val, shared_values);
    __syncthreads();  // zeroed before any thread deposits
  }
  // At each flush: the values' runs spilled before the barrier, the integer
  // carried by thread 0 after it, before anyone deposits again (a digit then
  // takes at most a segment's deposits between carries, each below 2^32).
  auto carry_values = [&] {
    if constexpr (values) {
      if (threadIdx.x == 0) R::Values::carry_integer(shared_values);
    }
  };
  // Segments: the same count for every thread of the block, from its first
  // thread's chain, the longest.
  const std::int64_t nv = o.vectors(), span = Bins::segment_vectors(blockDim.x, o.vec) * o.threads;
  const std::int64_t first = g - threadIdx.x, longest = first < nv ? nv - first : 0;
  const std::int64_t segments = longest > span ? (longest + span - 1) / span : 1;
  for (std::int64_t k = 1; k <= segments; ++k) {
    chain.add_to(st, {}, k < segments && g + k * span < nv ? g + k * span : nv);
    if (k == segments && g < o.tail()) R::add(st, widen(x[o.tail_begin() + g]), 0.0f, {});
    if constexpr (values) R::Values::spill_run(st.val);
    flush_bins<Bins>(bin, acc, k < segments, carry_values);
  }
  // The block's partial, in thread 0: digit k of the 32 integers summed by
  // lane k, the flags OR'ed. Left uncarried, as the second pass's merges
  // carry: a digit of a lane's integer stays below (deposits + 1) 2^32, as
  // its spills carry every 2^30 deposits and it is carried here after 2^20
  // (one a segment), so the sums stay below 2^58. Faster than warp 0
  // merging the integers by the warp tree (docs/perf-h100.md, "block_bins.cuh").
  auto p = R::identity();
  auto& squares = squares_of(p);
  if constexpr (values) {
    // Complete since the last flush's first barrier; no thread adds to it since.
    if (threadIdx.x == 0) p.p1 = R::Values::partial_of(shared_values);
  }
  if (threadIdx.x < kWarpSize) {
    const int lane = threadIdx.x;
    if (segments > (std::int64_t(1) << 20)) Integer::carry(acc.acc);
    __syncwarp();
    std::int64_t sum = 0;
    if (lane < Integer::digits)
      for (int l = 0; l < kWarpSize; ++l) sum += digits[l * Integer::digits + lane];
    const std::uint32_t flags = __reduce_or_sync(0xFFFFFFFFu, acc.acc.flags);
    __syncwarp();
    if (lane < Integer::digits) digits[lane] = sum;
    __syncwarp();
    if (lane == 0) {
      for (int k = 0; k < Integer::digits; ++k) squares.limb[k] = digits[k];
      squares.flags = flags;
    }
  }
  return p;
}

}  // namespace ulpscope::tree
