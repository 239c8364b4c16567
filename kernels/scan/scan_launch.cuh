#pragma once
// The scan shapes' kernels and their launch (CUDA), over scan_agent.cuh's
// tiles: one instantiation per (input format, accumulator), made in
// scan_<format>.cu.
//   warp, block        one block per line walks its tiles, carrying c
//   reduce_then_scan   block sums; one thread per line scans them; rescan
//   lookback           one block per tile (tile ids drawn in order from a
//                      counter), the fixed 32-tile window of scan_order.hpp
// Workspace: reduce_then_scan keeps B block sums and B exclusive sums per
// line; lookback a counter per line and, per tile, its aggregate, inclusive
// prefix and a flag (1: aggregate published, 2: inclusive published).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "kernels/cuda/device_problem.hpp"
#include "kernels/scan/scan_agent.cuh"

namespace ulpscope::scan {

template <class P>
__device__ __forceinline__ P load_coherent(const P* p) {
  static_assert(sizeof(P) % 4 == 0, "partials are whole 32-bit words");
  P r;
  auto* w = reinterpret_cast<unsigned*>(&r);
  const auto* s = reinterpret_cast<const unsigned*>(p);
  for (int i = 0; i < int(sizeof(P) / 4); ++i) w[i] = __ldcg(s + i);
  return r;
}

template <class P>
__device__ __forceinline__ void store_coherent(P* p, const P& v) {
  auto* d = reinterpret_cast<unsigned*>(p);
  const auto* w = reinterpret_cast<const unsigned*>(&v);
  for (int i = 0; i < int(sizeof(P) / 4); ++i) __stcg(d + i, w[i]);
}

__device__ __forceinline__ void wait_for(const int* flag, int bit) {
  while ((atomicAdd(const_cast<int*>(flag), 0) & bit) == 0) {
  }
  __threadfence();
}

struct LineGeometry {
  std::int64_t lines, length;
  int threads;
  OutRounding sat;
};

// warp and block: blockIdx.x is the line.
template <class R, class Elem, class Out>
__global__ void chained_scan_kernel(const Elem* x, Out* out, LineGeometry g, Shape block_scan) {
  __shared__ TileShared<R> sh;
  const std::int64_t line = blockIdx.x;
  const TileOrder o{g.length, g.threads};
  if (threadIdx.x == 0) sh.has_carry = false;
  __syncthreads();
  for (std::int64_t k = 0; k < o.tiles(); ++k) {
    const auto a = scan_tile_device<R>(sh, block_scan, o, k, x + line * g.length, out + line * g.length, g.sat);
    chain_carry<R>(sh, a);
  }
}

// reduce_then_scan, phase 1: block b of line blockIdx.y folds its tiles'
// aggregates into sums[line * B + b].
template <class R, class Elem, class Out>
__global__ void block_sums_kernel(const Elem* x, typename R::Partial* sums, LineGeometry g) {
  __shared__ TileShared<R> sh;
  const std::int64_t line = blockIdx.y;
  const TileOrder o{g.length, g.threads};
  const std::int64_t per = tiles_per_block(o.tiles(), gridDim.x), begin = blockIdx.x * per;
  const std::int64_t end = o.tiles() < begin + per ? o.tiles() : begin + per;
  if (threadIdx.x == 0) sh.has_carry = false;
  __syncthreads();
  for (std::int64_t k = begin; k < end; ++k) {
    const auto a = scan_tile_device<R, Elem, Out>(sh, Shape::warp, o, k, x + line * g.length, nullptr, g.sat);
    chain_carry<R>(sh, a);
  }
  if (threadIdx.x == 0 && begin < end) sums[line * gridDim.x + blockIdx.x] = sh.carry;
}

// Phase 2: one thread per line, the block sums' exclusive scan, serially.
template <class R>
__global__ void block_carries_kernel(const typename R::Partial* sums, typename R::Partial* carries,
                                     std::int64_t lines, int blocks, std::int64_t used) {
  const std::int64_t line = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= lines) return;
  typename R::Partial c{};
  for (std::int64_t b = 1; b < used; ++b) {
    c = b == 1 ? sums[line * blocks] : merged<R>(c, sums[line * blocks + b - 1]);
    carries[line * blocks + b] = c;
  }
}

// Phase 3: block b rescans its tiles with carries[b] (none for block 0).
template <class R, class Elem, class Out>
__global__ void rescan_kernel(const Elem* x, Out* out, const typename R::Partial* carries, LineGeometry g) {
  __shared__ TileShared<R> sh;
  const std::int64_t line = blockIdx.y;
  const TileOrder o{g.length, g.threads};
  const std::int64_t per = tiles_per_block(o.tiles(), gridDim.x), begin = blockIdx.x * per;
  const std::int64_t end = o.tiles() < begin + per ? o.tiles() : begin + per;
  if (threadIdx.x == 0) {
    sh.has_carry = blockIdx.x > 0 && begin < end;
    if (sh.has_carry) sh.carry = carries[line * gridDim.x + blockIdx.x];
  }
  __syncthreads();
  for (std::int64_t k = begin; k < end; ++k) {
    const auto a = scan_tile_device<R>(sh, Shape::warp, o, k, x + line * g.length, out + line * g.length, g.sat);
    chain_carry<R>(sh, a);
  }
}

template <class P>
struct TileStatus {
  P* aggregate;
  P* inclusive;
  int* flag;
  unsigned long long* counter;  // one per line
};

// lookback: each block draws the next tile of line blockIdx.y.
template <class R, class Elem, class Out>
__global__ void lookback_kernel(const Elem* x, Out* out, TileStatus<typename R::Partial> s, LineGeometry g) {
  using P = typename R::Partial;
  __shared__ TileShared<R> sh;
  __shared__ std::int64_t tile_shared;
  const std::int64_t line = blockIdx.y;
  const TileOrder o{g.length, g.threads};
  const std::int64_t tiles = o.tiles();
  if (threadIdx.x == 0) tile_shared = std::int64_t(atomicAdd(s.counter + line, 1ull));
  __syncthreads();
  const std::int64_t k = tile_shared;
  const std::int64_t at = line * tiles + k;
  // The aggregate first (no carry needed), published at once.
  if (threadIdx.x == 0) sh.has_carry = false;
  __syncthreads();
  const P a = scan_tile_device<R, Elem, Out>(sh, Shape::warp, o, k, x + line * g.length, nullptr, g.sat);
  if (threadIdx.x == 0) {
    store_coherent(s.aggregate + at, a);
    __threadfence();
    atomicOr(s.flag + at, 1);
  }
  // The window, by warp 0: lane 0 the inclusive prefix 32 back (or the
  // aggregate of tile 0), lanes 1..31 the aggregates after it.
  const int lane = threadIdx.x;
  if (k > 0 && threadIdx.x < kWarpSize) {
    P v = R::identity();
    if (k < kLookbackWindow) {
      if (lane < k) {
        wait_for(s.flag + line * tiles + lane, 1);
        v = load_coherent(s.aggregate + line * tiles + lane);
      }
    } else {
      const std::int64_t j = k - kLookbackWindow + lane;
      wait_for(s.flag + line * tiles + j, lane == 0 ? 2 : 1);
      v = load_coherent((lane == 0 ? s.inclusive : s.aggregate) + line * tiles + j);
    }
    sh.window[lane] = v;
    __syncwarp();
    for (int off = kWarpSize / 2; off >= 1; off /= 2) {
      P right{};
      if (lane < off) right = sh.window[lane + off];
      __syncwarp();
      if (lane < off) sh.window[lane] = merged<R>(sh.window[lane], right);
      __syncwarp();
    }
    if (lane == 0) {
      sh.carry = sh.window[0];
      sh.has_carry = true;
      store_coherent(s.inclusive + at, merged<R>(sh.carry, a));
      __threadfence();
      atomicOr(s.flag + at, 2);
    }
  } else if (k == 0 && threadIdx.x == 0) {
    store_coherent(s.inclusive + at, a);
    __threadfence();
    atomicOr(s.flag + at, 2);
  }
  __syncthreads();
  scan_tile_device<R>(sh, Shape::warp, o, k, x + line * g.length, out + line * g.length, g.sat);
}

inline std::size_t aligned(std::size_t b) { return (b + 255) / 256 * 256; }

template <class P>
std::size_t workspace_bytes_for(Shape shape, std::int64_t lines, std::int64_t length, const LaunchConfig& cfg) {
  const TileOrder o{length, cfg.threads};
  if (shape == Shape::reduce_then_scan) return 2 * aligned(std::size_t(lines) * std::size_t(cfg.blocks) * sizeof(P));
  if (shape == Shape::lookback) {
    const std::size_t tiles = std::size_t(lines) * std::size_t(std::max<std::int64_t>(o.tiles(), 1));
    return 2 * aligned(tiles * sizeof(P)) + aligned(tiles * sizeof(int)) + aligned(std::size_t(lines) * 8);
  }
  return 0;
}

template <class R, class Elem, class Out>
void launch_scan_with(Shape shape, const Elem* x, Out* out, std::int64_t lines, std::int64_t length,
                      const LaunchConfig& cfg, OutRounding sat, DeviceWorkspace ws, cudaStream_t stream) {
  using P = typename R::Partial;
  if (lines <= 0 || length <= 0) return;
  const LineGeometry g{lines, length, cfg.threads, sat};
  const TileOrder o{length, cfg.threads};
  if (ws.bytes < workspace_bytes_for<P>(shape, lines, length, cfg))
    throw std::invalid_argument("scan: the workspace is too small for this launch");
  // The grid shapes put the lines on gridDim.y (at most 65535).
  if ((shape == Shape::reduce_then_scan || shape == Shape::lookback) && lines > 65535)
    throw std::invalid_argument("scan: reduce_then_scan and lookback take at most 65535 rows");
  auto* base = static_cast<unsigned char*>(ws.data);
  switch (shape) {
    case Shape::warp:
    case Shape::block:
      chained_scan_kernel<R><<<unsigned(lines), cfg.threads, 0, stream>>>(x, out, g, shape);
      return;
    case Shape::reduce_then_scan: {
      const int blocks = cfg.blocks;
      const std::int64_t used = (o.tiles() + tiles_per_block(o.tiles(), blocks) - 1) / tiles_per_block(o.tiles(), blocks);
      auto* sums = reinterpret_cast<P*>(base);
      auto* carries = reinterpret_cast<P*>(base + aligned(std::size_t(lines) * blocks * sizeof(P)));
      const dim3 grid{unsigned(blocks), unsigned(lines)};
      block_sums_kernel<R, Elem, Out><<<grid, cfg.threads, 0, stream>>>(x, sums, g);
      block_carries_kernel<R><<<unsigned((lines + 127) / 128), 128, 0, stream>>>(sums, carries, lines, blocks, used);
      rescan_kernel<R><<<grid, cfg.threads, 0, stream>>>(x, out, carries, g);
      return;
    }
    case Shape::lookback: {
      const std::size_t tiles = std::size_t(lines) * std::size_t(o.tiles());
      TileStatus<P> s;
      s.aggregate = reinterpret_cast<P*>(base);
      s.inclusive = reinterpret_cast<P*>(base + aligned(tiles * sizeof(P)));
      s.flag = reinterpret_cast<int*>(base + 2 * aligned(tiles * sizeof(P)));
      s.counter = reinterpret_cast<unsigned long long*>(base + 2 * aligned(tiles * sizeof(P)) +
                                                        aligned(tiles * sizeof(int)));
      cudaMemsetAsync(s.flag, 0, aligned(tiles * sizeof(int)) + aligned(std::size_t(lines) * 8), stream);
      const dim3 grid{unsigned(o.tiles()), unsigned(lines)};
      lookback_kernel<R><<<grid, cfg.threads, 0, stream>>>(x, out, s, g);
      return;
    }
    default: throw std::invalid_argument("scan: not a scan shape with a kernel");
  }
}

}  // namespace ulpscope::scan
