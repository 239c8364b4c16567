#pragma once
// One block's share of a scan (CUDA): a tile of T threads x K elements in the
// order of scan_order.hpp, kept in registers from its one load to its
// stores, each level run with one thread per lane (the host model runs the
// same merges in loops):
// - Kogge-Stone at offset d: lane l >= d takes merge(v[l - d], v[l]) of the
//   step before (__shfl_up_sync, word by word for wider partials);
// - Brent-Kung's sweeps in shared memory, one level per __syncthreads;
// - the look-back window's tree, lane j < off taking lane j + off
//   (__shfl_down_sync).
// Every merge is the accumulator's own, with explicit rounding
// (kernels/rounded_arith.hpp), so the bits equal scan_model.cpp's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "formats/binary_format.hpp"
#include "kernels/out_format.hpp"
#include "kernels/scan/exact_double_run.hpp"
#include "kernels/scan/fixed_point_sum.hpp"
#include "kernels/scan/scan_model.hpp"
#include "kernels/scan/scan_order.hpp"
#include "kernels/scan/wide_fixed_point_sum.hpp"
#include "kernels/shape.hpp"
#include "kernels/tree/load.cuh"

namespace ulpscope::scan {

inline constexpr int kMaxThreads = kMaxScanThreads;

template <class R>
__device__ __forceinline__ typename R::Partial merged(typename R::Partial a, const typename R::Partial& b) {
  R::merge(a, b);
  return a;
}

// A partial moved across lanes one 32-bit word at a time by `shuffle`
// (__shfl_up_sync or __shfl_down_sync of a word; every lane of the warp
// calls it).
template <class P, class Shuffle>
__device__ __forceinline__ P shuffle_partial(const P& v, Shuffle shuffle) {
  static_assert(sizeof(P) % 4 == 0, "partials are whole 32-bit words");
  unsigned w[sizeof(P) / 4];
  std::memcpy(w, &v, sizeof(P));
#pragma unroll
  for (int i = 0; i < int(sizeof(P) / 4); ++i) w[i] = shuffle(w[i]);
  P r;
  std::memcpy(&r, w, sizeof(P));
  return r;
}
template <class P>
__device__ __forceinline__ P shfl_up_partial(const P& v, int d) {
  return shuffle_partial(v, [d](unsigned w) { return __shfl_up_sync(0xFFFFFFFFu, w, d); });
}
template <class P>
__device__ __forceinline__ P shfl_down_partial(const P& v, int d) {
  return shuffle_partial(v, [d](unsigned w) { return __shfl_down_sync(0xFFFFFFFFu, w, d); });
}

// The exact scan's integers (FixedPointSum, WideFixedPointSum), whose
// threads first try exact_double_run.hpp's shortcut.
template <class R>
struct IsExactScan : std::false_type {};
template <class In, class Out>
struct IsExactScan<FixedPointSum<In, Out>> : std::true_type {};
template <class In, class Out>
struct IsExactScan<WideFixedPointSum<In, Out>> : std::true_type {};
// K, the elements a thread owns, for an input format (ScanPolicy).
template <class Elem>
inline constexpr int kItems = ScanPolicy::items_per_thread(int(sizeof(Elem)));

// A thread's K elements of a tile, widened to float, in registers.
template <int K>
struct ThreadItems {
  float x[K];
  std::int64_t first;  // the index of x[0] in the line
  int items;           // how many of the K exist
};

// The staging through which a warp's loads and stores are coalesced (CUB's
// BLOCK_LOAD_WARP_TRANSPOSE and BLOCK_STORE_WARP_TRANSPOSE, cub/block/block_load.cuh):
// a thread owns K consecutive elements (TileOrder), so its 16-byte vectors
// sit K * sizeof(element) bytes apart across the lanes and each access of the
// warp uses part of every 32-byte sector it touches. Instead the warp reads
// (writes) its whole contiguous span in 16-byte chunks c = lane + 32 m, and
// the chunks change hands through shared memory. Nothing is added or
// rounded here: the order is TileOrder's either way. One buffer of
// kWarpSize * 4 chunks a warp serves K elements of up to 64 bytes a thread
// (16 fp32, 32 fp16 or bf16).
struct TileStaging {
  uint4 chunk[kMaxThreads * 4];
};

// The slot of chunk q of lane r's row, rows of `per_lane` chunks (1, 2 or 4):
// the chunk index is XORed with (r / (8 / per_lane)) % per_lane, so that the
// 8 lanes of one 128-byte shared-memory phase hit 8 different groups of 4
// banks both when each lane writes its row and when the warp reads chunks
// lane + 32 m (CUDA C++ Best Practices Guide, "Shared Memory Bank Conflicts").
__device__ __forceinline__ int staged_slot(int r, int q, int per_lane) {
  return r * per_lane + (q ^ ((r / (8 / per_lane)) % per_lane));
}

// Whether the warp takes the staged path: every lane's K elements exist and
// the warp's span starts on a 16-byte boundary (every lane of the warp calls
// it). Elements of 1 byte need no staging (a lane's K are one chunk).
template <int K, class T>
__device__ __forceinline__ bool warp_span_staged(const T* span, int items) {
  return sizeof(T) > 1 && __all_sync(0xFFFFFFFFu, items == K) &&
         reinterpret_cast<std::uintptr_t>(span) % 16 == 0;
}

// A warp's span (32 lanes x K elements) from global memory into each lane's
// row of `stage` (its chunks read lane + 32 m, coalesced).
template <int K, class T>
__device__ __forceinline__ void stage_in(const T* span, uint4* stage) {
  constexpr int per_lane = K * int(sizeof(T)) / 16;
  static_assert(per_lane >= 1 && per_lane <= 4, "a lane's row is 1 to 4 chunks of TileStaging");
  const int lane = threadIdx.x % kWarpSize;
  const uint4* src = reinterpret_cast<const uint4*>(span);
#pragma unroll
  for (int m = 0; m < per_lane; ++m) {
    const int c = lane + kWarpSize * m;
    stage[staged_slot(c / per_lane, c % per_lane, per_lane)] = __ldg(src + c);
  }
  __syncwarp();
}

// Each lane's row of `stage` out to the warp's span (chunks lane + 32 m).
template <int K, class T>
__device__ __forceinline__ void stage_out(T* span, const uint4* stage) {
  constexpr int per_lane = K * int(sizeof(T)) / 16;
  static_assert(per_lane >= 1 && per_lane <= 4, "a lane's row is 1 to 4 chunks of TileStaging");
  const int lane = threadIdx.x % kWarpSize;
  __syncwarp();
  uint4* dst = reinterpret_cast<uint4*>(span);
#pragma unroll
  for (int m = 0; m < per_lane; ++m) {
    const int c = lane + kWarpSize * m;
    dst[c] = stage[staged_slot(c / per_lane, c % per_lane, per_lane)];
  }
  __syncwarp();  // the stage is rewritten by the next tile
}

// 16-byte loads where the thread's K elements all exist and start on a
// 16-byte boundary (a row of odd length need not), else one at a time;
// with `staging` (one TileStaging a block, or null) through the warp's
// share of it where the whole warp's span qualifies.
template <int K, class Elem>
__device__ __forceinline__ ThreadItems<K> load_items(const Elem* x, const TileOrder& o, std::int64_t tile,
                                                     TileStaging* staging = nullptr) {
  ThreadItems<K> it;
  it.first = o.first(tile, threadIdx.x);
  it.items = o.items(tile, threadIdx.x);
  const Elem* p = x + it.first;
  constexpr int width = tree::Vector<Elem>::width;
  static_assert(K % width == 0, "a thread's items are whole vectors");
  const int lane = threadIdx.x % kWarpSize;
  if (staging != nullptr && warp_span_staged<K>(p - lane * K, it.items)) {
    uint4* stage = staging->chunk + (threadIdx.x / kWarpSize) * kWarpSize * 4;
    constexpr int per_lane = K / width;
    stage_in<K>(p - lane * K, stage);
#pragma unroll
    for (int v = 0; v < per_lane; ++v) {
      const uint4 raw = stage[staged_slot(lane, v, per_lane)];
      tree::Vector<Elem> vec;
      std::memcpy(&vec, &raw, sizeof raw);
      tree::widen_vector(vec, it.x + v * width);
    }
    __syncwarp();  // the stage is rewritten by the stores or the next tile
  } else if (it.items == K && reinterpret_cast<std::uintptr_t>(p) % 16 == 0) {
#pragma unroll
    for (int v = 0; v < K / width; ++v) tree::widen_vector(tree::load_vector(p, v), it.x + v * width);
  } else {
#pragma unroll
    for (int j = 0; j < K; ++j) it.x[j] = j < it.items ? tree::widen(p[j]) : 0.0f;
  }
  return it;
}

// Step 1: the thread's aggregate, its elements folded in index order (the
// exact scan in double where exact_double_run.hpp allows).
template <class R, int K>
__device__ __forceinline__ typename R::Partial fold_items(const ThreadItems<K>& it) {
  if constexpr (IsExactScan<R>::value) {
    typename R::Partial p;
    if (double_run::fold<R>(it.x, it.items, p)) return p;
  }
  auto st = R::start();
#pragma unroll
  for (int j = 0; j < K; ++j)
    if (j < it.items) R::add(st, R::term(it.x[j]));
  return R::partial(st);
}

// Step 2's result in each thread: its exclusive prefix (none in thread 0)
// and the tile's aggregate.
template <class P>
struct ThreadScan {
  P exclusive;
  bool has_exclusive;
  P aggregate;
};

template <class R>
struct WarpScanShared {
  typename R::Partial warp_totals[kMaxThreads / kWarpSize];
  typename R::Partial aggregate;
};

template <class R>
struct BrentKungShared {
  typename R::Partial s[kMaxThreads];
};

// Kogge-Stone over one warp's lanes by shuffles (every lane calls it; lanes
// at or past `lanes` compute values nobody reads).
template <class R>
__device__ __forceinline__ typename R::Partial kogge_stone_warp(typename R::Partial v, int lane) {
#pragma unroll
  for (int d = 1; d < kWarpSize; d *= 2) {
    const auto left = shfl_up_partial(v, d);
    if (lane >= d) v = merged<R>(left, v);
  }
  return v;
}

// scan_order.hpp's warp_block_scan, one thread per lane. With
// AggregateEverywhere, every thread gets the tile's aggregate and the shared
// memory is free again when it returns; without (a block that scans one
// tile), only the last thread's r.aggregate is set, sh.aggregate holds it
// after the block's next __syncthreads, and sh must not be rewritten: two
// barriers fewer.
template <class R, bool AggregateEverywhere = true>
__device__ ThreadScan<typename R::Partial> warp_block_scan_device(WarpScanShared<R>& sh, typename R::Partial v,
                                                                  int threads) {
  using P = typename R::Partial;
  const int t = threadIdx.x, w = t / kWarpSize, lane = t % kWarpSize, warps = threads / kWarpSize;
  v = kogge_stone_warp<R>(v, lane);
  if (lane == kWarpSize - 1) sh.warp_totals[w] = v;
  __syncthreads();
  if (w == 0) {
    P total = lane < warps ? sh.warp_totals[lane] : R::identity();
    total = kogge_stone_warp<R>(total, lane);
    if (lane < warps) sh.warp_totals[lane] = total;
  }
  __syncthreads();
  const P before = shfl_up_partial(v, 1);  // lane l - 1's warp-inclusive value
  ThreadScan<P> r;
  r.has_exclusive = t > 0;
  r.exclusive = R::identity();
  if (lane > 0) r.exclusive = w > 0 ? merged<R>(sh.warp_totals[w - 1], before) : before;
  else if (w > 0) r.exclusive = sh.warp_totals[w - 1];
  r.aggregate = R::identity();
  if (t == threads - 1) {
    r.aggregate = w > 0 ? merged<R>(sh.warp_totals[w - 1], v) : v;
    sh.aggregate = r.aggregate;
  }
  if constexpr (AggregateEverywhere) {
    __syncthreads();
    r.aggregate = sh.aggregate;
    __syncthreads();  // sh is rewritten by the next tile
  }
  return r;
}

// scan_order.hpp's brent_kung_block_scan, one thread per slot.
template <class R>
__device__ ThreadScan<typename R::Partial> brent_kung_block_scan_device(BrentKungShared<R>& sh,
                                                                        typename R::Partial v, int threads) {
  using P = typename R::Partial;
  const int t = threadIdx.x;
  sh.s[t] = v;
  __syncthreads();
  for (int d = 1; d < threads; d *= 2) {
    if ((t + 1) % (2 * d) == 0) sh.s[t] = merged<R>(sh.s[t - d], sh.s[t]);
    __syncthreads();
  }
  for (int d = threads / 4; d >= 1; d /= 2) {
    if ((t + 1) % (2 * d) == 0 && t + d < threads) sh.s[t + d] = merged<R>(sh.s[t], sh.s[t + d]);
    __syncthreads();
  }
  ThreadScan<P> r;
  r.has_exclusive = t > 0;
  r.exclusive = t > 0 ? sh.s[t - 1] : R::identity();
  r.aggregate = sh.s[threads - 1];
  __syncthreads();
  return r;
}

// Where the running values go: out_dtype and its saturation (fp8 outputs).
struct OutRounding {
  Dtype out;
  Saturation sat;
};

// Accumulators whose total() is already a value of the output format (the
// exact scan's fixed-point integer, rounded once): its conversion to the
// output storage rounds nothing.
template <class R, class = void>
struct TotalIsRounded : std::false_type {};
template <class R>
struct TotalIsRounded<R, std::void_t<decltype(R::kTotalRoundedToOut)>>
    : std::bool_constant<R::kTotalRoundedToOut> {};

// The storage bits of one output, rounded to nearest even as
// kernels/out_format.hpp's round_to_out does (one rounding, from a float
// where the total is a float or already a value of the output format).
template <class R, class Out>
__device__ __forceinline__ auto output_bits(typename R::value_t v) {
  constexpr bool from_float = std::is_same_v<typename R::value_t, float> || TotalIsRounded<R>::value;
  if constexpr (std::is_same_v<Out, float>) {
    if constexpr (from_float) return float(v);
    else return __double2float_rn(v);
  } else if constexpr (std::is_same_v<typename Out::format, Fp16Format>) {
    if constexpr (from_float) return std::uint16_t(__half_as_ushort(__float2half_rn(float(v))));
    else return std::uint16_t(encode<Fp16Format>(double(v)));
  } else {
    static_assert(std::is_same_v<typename Out::format, Bf16Format>, "the scans write fp32, fp16 or bf16");
    if constexpr (from_float) return std::uint16_t(__bfloat16_as_ushort(__float2bfloat16_rn(float(v))));
    else return std::uint16_t(encode<Bf16Format>(double(v)));
  }
}

// Whether the storage Out holds R's output format (the exact scan's outputs
// rounded straight from a double, exact_double_run.hpp).
template <class R, class Out, class = void>
struct StoresOutFormat : std::bool_constant<std::is_same_v<Out, float> &&
                                            std::is_same_v<typename R::out_format, Fp32Format>> {};
template <class R, class Out>
struct StoresOutFormat<R, Out, std::void_t<typename Out::format>>
    : std::is_same<typename Out::format, typename R::out_format> {};

// Step 3: from the seed (or empty), each element added again and its running
// value written, rounded to the output format; 16-byte stores where the
// thread's K outputs all exist and start on a 16-byte boundary. The exact
// scan runs in double where exact_double_run.hpp allows.
template <class R, class Out, int K>
__device__ __forceinline__ void write_items(Out* out, const ThreadItems<K>& it, const typename R::Partial& seed,
                                            bool has_seed, OutRounding r, TileStaging* staging = nullptr) {
  auto run = has_seed ? seed : R::start();
  if constexpr (std::is_same_v<Out, double>) {  // the GPU backend's outputs
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (j < it.items) {
        R::add(run, R::term(it.x[j]));
        out[it.first + j] = round_to_out(double(R::total(R::partial(run))), r.out, r.sat);
      }
  } else {
    using Bits = decltype(output_bits<R, Out>(typename R::value_t{}));
    static_assert(sizeof(Bits) == sizeof(Out));
    Bits bits[K];
    bool done = false;
    if constexpr (IsExactScan<R>::value) {
      if constexpr (StoresOutFormat<R, Out>::value) done = double_run::run<R>(it.x, it.items, seed, has_seed, bits);
    }
    if (!done) {
#pragma unroll
      for (int j = 0; j < K; ++j) {
        if (j < it.items) R::add(run, R::term(it.x[j]));
        bits[j] = output_bits<R, Out>(R::total(R::partial(run)));
      }
    }
    Out* p = out + it.first;
    constexpr int width = 16 / int(sizeof(Out));
    const int lane = threadIdx.x % kWarpSize;
    if (staging != nullptr && warp_span_staged<K>(p - lane * K, it.items)) {
      uint4* stage = staging->chunk + (threadIdx.x / kWarpSize) * kWarpSize * 4;
      constexpr int per_lane = K / width;
#pragma unroll
      for (int v = 0; v < per_lane; ++v) {
        uint4 w;
        std::memcpy(&w, bits + v * width, 16);
        stage[staged_slot(lane, v, per_lane)] = w;
      }
      stage_out<K>(p - lane * K, stage);
    } else if (it.items == K && reinterpret_cast<std::uintptr_t>(p) % 16 == 0) {
#pragma unroll
      for (int v = 0; v < K / width; ++v) {
        uint4 w;
        std::memcpy(&w, bits + v * width, 16);
        reinterpret_cast<uint4*>(p)[v] = w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < K; ++j)
        if (j < it.items) std::memcpy(p + j, bits + j, sizeof(Out));
    }
  }
}

// The seed of step 3: merge(carry, exclusive), or whichever exists.
template <class R>
__device__ __forceinline__ bool seed_of(const ThreadScan<typename R::Partial>& s, const typename R::Partial& carry,
                                        bool has_carry, typename R::Partial& seed) {
  if (s.has_exclusive) seed = has_carry ? merged<R>(carry, s.exclusive) : s.exclusive;
  else if (has_carry) seed = carry;
  return s.has_exclusive || has_carry;
}

// One tile of the chained shapes: steps 1-3 with the carry (every thread
// holds the same), then the carry moved past the tile.
template <class R, class Elem, class Out>
__device__ __forceinline__ void scan_tile_chained(WarpScanShared<R>& wsh, BrentKungShared<R>* bsh,
                                                  const TileOrder& o, std::int64_t tile, const Elem* x, Out* out,
                                                  OutRounding r, typename R::Partial& carry, bool& has_carry,
                                                  TileStaging* staging = nullptr) {
  using P = typename R::Partial;
  const auto it = load_items<kItems<Elem>>(x, o, tile, staging);
  const P v = fold_items<R>(it);
  const ThreadScan<P> s = bsh != nullptr ? brent_kung_block_scan_device<R>(*bsh, v, o.threads)
                                          : warp_block_scan_device<R>(wsh, v, o.threads);
  P seed = R::identity();
  const bool has_seed = seed_of<R>(s, carry, has_carry, seed);
  write_items<R>(out, it, seed, has_seed, r, staging);
  carry = has_carry ? merged<R>(carry, s.aggregate) : s.aggregate;
  has_carry = true;
}

}  // namespace ulpscope::scan
