#pragma once
// One block's share of a scan (CUDA): a tile of T threads x K elements in the
// order of scan_order.hpp, each level run with one thread per lane on values
// staged in shared memory (the host model runs the same merges in loops):
// - Kogge-Stone at offset d: lane l >= d takes merge(v[l - d], v[l]) of the
//   step before (read, __syncwarp, write);
// - Brent-Kung's sweeps, one level per __syncthreads;
// - the look-back window's tree, lane j < off taking lane j + off.
// Every merge is the accumulator's own, with explicit rounding
// (kernels/rounded_arith.hpp), so the bits equal scan_model.cpp's.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "formats/binary_format.hpp"
#include "kernels/out_format.hpp"
#include "kernels/scan/scan_model.hpp"
#include "kernels/scan/scan_order.hpp"
#include "kernels/shape.hpp"
#include "kernels/tree/load.cuh"

namespace ulpscope::scan {

inline constexpr int kMaxThreads = kMaxScanThreads;

template <class R>
struct TileShared {
  using P = typename R::Partial;
  P v[kMaxThreads];
  P exclusive[kMaxThreads];
  P warp_totals[kWarpSize];
  P window[kWarpSize];
  P carry;
  bool has_carry;
};

template <class R>
__device__ __forceinline__ typename R::Partial merged(typename R::Partial a, const typename R::Partial& b) {
  R::merge(a, b);
  return a;
}

// Kogge-Stone over lanes [0, lanes) of one warp's slice v (every lane of the
// warp calls it).
template <class R>
__device__ __forceinline__ void kogge_stone_warp(typename R::Partial* v, int lane, int lanes) {
  for (int d = 1; d < kWarpSize; d *= 2) {
    typename R::Partial left{};
    const bool takes = lane >= d && lane < lanes;
    if (takes) left = v[lane - d];
    __syncwarp();
    if (takes) v[lane] = merged<R>(left, v[lane]);
    __syncwarp();
  }
}

// scan_order.hpp's warp_block_scan, one thread per lane.
template <class R>
__device__ void warp_block_scan_device(TileShared<R>& sh, int threads) {
  const int t = threadIdx.x, w = t / kWarpSize, lane = t % kWarpSize, warps = threads / kWarpSize;
  kogge_stone_warp<R>(sh.v + w * kWarpSize, lane, kWarpSize);
  __syncthreads();
  if (t < warps) sh.warp_totals[t] = sh.v[t * kWarpSize + kWarpSize - 1];
  __syncthreads();
  if (w == 0) kogge_stone_warp<R>(sh.warp_totals, lane, warps);
  __syncthreads();
  if (lane > 0) sh.exclusive[t] = w > 0 ? merged<R>(sh.warp_totals[w - 1], sh.v[t - 1]) : sh.v[t - 1];
  else if (w > 0) sh.exclusive[t] = sh.warp_totals[w - 1];
  __syncthreads();
  if (w > 0) sh.v[t] = merged<R>(sh.warp_totals[w - 1], sh.v[t]);
  __syncthreads();
}

// scan_order.hpp's brent_kung_block_scan, one thread per slot.
template <class R>
__device__ void brent_kung_block_scan_device(TileShared<R>& sh, int threads) {
  const int t = threadIdx.x;
  for (int d = 1; d < threads; d *= 2) {
    if ((t + 1) % (2 * d) == 0) sh.v[t] = merged<R>(sh.v[t - d], sh.v[t]);
    __syncthreads();
  }
  for (int d = threads / 4; d >= 1; d /= 2) {
    if ((t + 1) % (2 * d) == 0 && t + d < threads) sh.v[t + d] = merged<R>(sh.v[t], sh.v[t + d]);
    __syncthreads();
  }
  if (t > 0) sh.exclusive[t] = sh.v[t - 1];
  __syncthreads();
}

// Where the running values go: out_dtype and its saturation (fp8 outputs).
struct OutRounding {
  Dtype out;
  Saturation sat;
};

// The output element: the running value rounded to the output format as
// kernels/out_format.hpp's round_to_out does: stored in out_dtype (fp32,
// fp16, bf16), or widened to double (the GPU backend's outputs).
template <class Out>
__device__ __forceinline__ void store_output(Out* out, std::int64_t i, double v, OutRounding r) {
  if constexpr (std::is_same_v<Out, double>) out[i] = round_to_out(v, r.out, r.sat);
  else if constexpr (std::is_same_v<Out, float>) out[i] = __double2float_rn(v);
  else out[i] = Out::from_bits(encode<typename Out::format>(v));
}

// One tile: step 1 (each thread folds its K elements), step 2 (the block
// scan), step 3 (the rescan from merge(carry, exclusive), written to out
// when out is not null). The carry is sh.carry / sh.has_carry. Returns
// (in every thread) the tile's aggregate, the last thread's inclusive value.
template <class R, class Elem, class Out>
__device__ typename R::Partial scan_tile_device(TileShared<R>& sh, Shape block_scan, const TileOrder& o,
                                                std::int64_t tile, const Elem* x, Out* out, OutRounding sat) {
  using P = typename R::Partial;
  const int t = threadIdx.x;
  const std::int64_t first = o.first(tile, t);
  const int items = o.items(tile, t);
  float xs[kItemsPerThread];
#pragma unroll
  for (int j = 0; j < kItemsPerThread; ++j) xs[j] = j < items ? tree::widen(x[first + j]) : 0.0f;
  auto st = R::start();
#pragma unroll
  for (int j = 0; j < kItemsPerThread; ++j)
    if (j < items) R::add(st, R::term(xs[j]));
  sh.v[t] = R::partial(st);
  __syncthreads();
  if (block_scan == Shape::block) brent_kung_block_scan_device<R>(sh, o.threads);
  else warp_block_scan_device<R>(sh, o.threads);
  if (out != nullptr) {
    const bool has_seed = sh.has_carry || t > 0;
    P seed = R::identity();
    if (t > 0) seed = sh.has_carry ? merged<R>(sh.carry, sh.exclusive[t]) : sh.exclusive[t];
    else if (sh.has_carry) seed = sh.carry;
    auto run = has_seed ? seed : R::start();
#pragma unroll
    for (int j = 0; j < kItemsPerThread; ++j) {
      if (j < items) {
        R::add(run, R::term(xs[j]));
        store_output(out, first + j, double(R::total(R::partial(run))), sat);
      }
    }
  }
  const P aggregate = sh.v[o.threads - 1];
  __syncthreads();  // sh.v and sh.carry are rewritten by the next tile
  return aggregate;
}

// The next carry: merge(carry, aggregate), by thread 0, seen by all.
template <class R>
__device__ __forceinline__ void chain_carry(TileShared<R>& sh, const typename R::Partial& aggregate) {
  if (threadIdx.x == 0) {
    sh.carry = sh.has_carry ? merged<R>(sh.carry, aggregate) : aggregate;
    sh.has_carry = true;
  }
  __syncthreads();
}

}  // namespace ulpscope::scan
