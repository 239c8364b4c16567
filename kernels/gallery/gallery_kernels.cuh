#pragma once
// The seed gallery's kernels, each following gallery_order.hpp over an op of
// gallery_ops.hpp (values as floats, combined with explicit rounding). Elem is
// the input's storage (float, Fp16, Bf16) in the first pass and float for the
// partials after it. Every block writes one partial to out[blockIdx.x]; the
// atomic kernels write into one slot instead.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

#include "kernels/gallery/gallery_ops.hpp"
#include "kernels/gallery/gallery_order.hpp"
#include "kernels/tree/block_reduce.cuh"
#include "kernels/tree/load.cuh"

namespace ulpscope::gallery {

namespace cg = cooperative_groups;
using tree::widen;

template <class O, class Elem>
__device__ __forceinline__ float load_or_identity(const Elem* x, std::int64_t i, std::int64_t n) {
  return i < n ? widen(x[i]) : O::identity();
}

// NVIDIA's reduce3: the first add during the load.
template <class O, class Elem>
__device__ __forceinline__ float load_pair(const Elem* x, std::int64_t i, int T, std::int64_t n) {
  float a = load_or_identity<O>(x, i, n);
  if (i + T < n) a = O::combine(a, widen(x[i + T]));
  return a;
}

// v2/v3: sequential addressing down to (and including) s = last.
template <class O>
__device__ __forceinline__ void sequential_steps(float* sm, int t, int T, int last) {
  for (int s = T / 2; s >= last; s >>= 1) {
    if (t < s) sm[t] = O::combine(sm[t], sm[t + s]);
    __syncthreads();
  }
}

// v4/v5's last warp on volatile shared memory, as the seeds write it, every
// lane taking part. Since Volta the lanes of a warp are not guaranteed to run
// in lockstep (CUDA C++ Programming Guide, "Independent Thread Scheduling"),
// so each step's reads and writes are separated by __syncwarp(): lane l reads
// slots l and l+s before any lane writes, exactly the lockstep semantics the
// seed relies on.
template <class O>
__device__ __forceinline__ void last_warp(volatile float* sm, int t, int T) {
  if (T >= 64) {
    const float v = O::combine(sm[t], sm[t + 32]);
    __syncwarp();
    sm[t] = v;
    __syncwarp();
  }
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) {
    const float v = O::combine(sm[t], sm[t + s]);
    __syncwarp();
    sm[t] = v;
    __syncwarp();
  }
}

// Fills the slots past T of v4/v5's shared memory with the identity.
template <class O>
__device__ __forceinline__ void pad_slots(float* sm, int t, int T) {
  for (int k = T + t; k < unrolled_slots(T); k += T) sm[k] = O::identity();
}

template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) v1_interleaved(const Elem* x, std::int64_t n, float* out) {
  extern __shared__ float sm[];
  const int T = blockDim.x, t = threadIdx.x;
  sm[t] = load_or_identity<O>(x, std::int64_t(blockIdx.x) * T + t, n);
  __syncthreads();
  for (int s = 1; s < T; s *= 2) {
    if (interleaved_active(t, s)) sm[t] = O::combine(sm[t], sm[t + s]);
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = sm[0];
}

template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) v2_sequential(const Elem* x, std::int64_t n, float* out) {
  extern __shared__ float sm[];
  const int T = blockDim.x, t = threadIdx.x;
  sm[t] = load_or_identity<O>(x, std::int64_t(blockIdx.x) * T + t, n);
  __syncthreads();
  sequential_steps<O>(sm, t, T, 1);
  if (t == 0) out[blockIdx.x] = sm[0];
}

template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) v3_first_add(const Elem* x, std::int64_t n, float* out) {
  extern __shared__ float sm[];
  const int T = blockDim.x, t = threadIdx.x;
  sm[t] = load_pair<O>(x, std::int64_t(blockIdx.x) * 2 * T + t, T, n);
  __syncthreads();
  sequential_steps<O>(sm, t, T, 1);
  if (t == 0) out[blockIdx.x] = sm[0];
}

template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) v4_unroll_last_warp(const Elem* x, std::int64_t n, float* out) {
  extern __shared__ float sm[];  // unrolled_slots(T)
  const int T = blockDim.x, t = threadIdx.x;
  sm[t] = load_pair<O>(x, std::int64_t(blockIdx.x) * 2 * T + t, T, n);
  pad_slots<O>(sm, t, T);
  __syncthreads();
  sequential_steps<O>(sm, t, T, 64);
  if (t < 32) last_warp<O>(sm, t, T);
  if (t == 0) out[blockIdx.x] = sm[0];
}

// v5: every level unrolled for a block size known at compile time (the
// dispatch switches on it). The seed 004 template puts __syncthreads() inside
// `if (tid < s)`, a barrier not every thread reaches; here it follows the if.
template <class O, int T, class Elem>
__global__ void __launch_bounds__(T) v5_complete_unroll(const Elem* x, std::int64_t n, float* out) {
  __shared__ float sm[unrolled_slots(T)];
  const int t = threadIdx.x;
  sm[t] = load_pair<O>(x, std::int64_t(blockIdx.x) * 2 * T + t, T, n);
  pad_slots<O>(sm, t, T);
  __syncthreads();
  if constexpr (T >= 512) {
    if (t < 256) sm[t] = O::combine(sm[t], sm[t + 256]);
    __syncthreads();
  }
  if constexpr (T >= 256) {
    if (t < 128) sm[t] = O::combine(sm[t], sm[t + 128]);
    __syncthreads();
  }
  if constexpr (T >= 128) {
    if (t < 64) sm[t] = O::combine(sm[t], sm[t + 64]);
    __syncthreads();
  }
  if (t < 32) last_warp<O>(sm, t, T);
  if (t == 0) out[blockIdx.x] = sm[0];
}

template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) v5_shuffle(const Elem* x, std::int64_t n, float* out) {
  const int T = blockDim.x, t = threadIdx.x;
  float v = load_pair<O>(x, std::int64_t(blockIdx.x) * 2 * T + t, T, n);
  v = tree::block_reduce<O>(v);
  if (t == 0) out[blockIdx.x] = v;
}

// NVIDIA's reduce6: many adds per thread over a grid-stride loop, then v4's
// block steps.
template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) v6_multi_add(const Elem* x, std::int64_t n, float* out) {
  extern __shared__ float sm[];  // unrolled_slots(T)
  const int T = blockDim.x, t = threadIdx.x;
  const std::int64_t step = 2 * std::int64_t(T) * gridDim.x;
  float v = O::identity();
  for (std::int64_t i = 2 * std::int64_t(T) * blockIdx.x + t; i < n; i += step) {
    v = O::combine(v, widen(x[i]));
    if (i + T < n) v = O::combine(v, widen(x[i + T]));
  }
  sm[t] = v;
  pad_slots<O>(sm, t, T);
  __syncthreads();
  sequential_steps<O>(sm, t, T, 64);
  if (t < 32) last_warp<O>(sm, t, T);
  if (t == 0) out[blockIdx.x] = sm[0];
}

// Seed 000, 7.7.2: cg::reduce over each warp, warp results through shared
// memory, warp 0 again.
template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) cg_reduce(const Elem* x, std::int64_t n, float* out) {
  __shared__ float slot[32];
  const auto block = cg::this_thread_block();
  const auto warp = cg::tiled_partition<32>(block);
  // A lambda, not a one-parameter template functor: cg::reduce would take
  // Fn<O> for an operator over O and refuse float.
  const auto combine = [](float a, float b) { return O::combine(a, b); };
  float v = load_or_identity<O>(x, std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x, n);
  v = cg::reduce(warp, v, combine);
  if (warp.thread_rank() == 0) slot[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    float w = warp.thread_rank() < warp.meta_group_size() ? slot[warp.thread_rank()] : O::identity();
    w = cg::reduce(warp, w, combine);
    if (warp.thread_rank() == 0) out[blockIdx.x] = w;
  }
}

// Seed 000, 7.8.1: each block reduces its grid-stride share, block rank 0 of
// the cluster reads the others' totals from their shared memory. The second
// cluster.sync() keeps every block (and its shared memory) alive until rank 0
// has read it, which the seed leaves out.
template <class O, class Elem>
__global__ void __cluster_dims__(kClusterSize, 1, 1) __launch_bounds__(kMaxThreads)
    cluster_reduce(const Elem* x, std::int64_t n, float* out) {
  __shared__ float block_total;
  const auto cluster = cg::this_cluster();
  const int T = blockDim.x;
  const std::int64_t step = std::int64_t(T) * gridDim.x;
  float v = O::identity();
  for (std::int64_t i = std::int64_t(blockIdx.x) * T + threadIdx.x; i < n; i += step) v = O::combine(v, widen(x[i]));
  v = tree::block_reduce<O>(v);
  if (threadIdx.x == 0) block_total = v;
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    float total = O::identity();
    for (int r = 0; r < kClusterSize; ++r) total = O::combine(total, *cluster.map_shared_rank(&block_total, r));
    out[blockIdx.x / kClusterSize] = total;
  }
  cluster.sync();
}

// Seed 001's sum_kernel_two_stage_1/2 in CUDA: a chunk per block in a blocked
// layout, per-thread adds, then the tree shape's block step.
template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) two_stage(const Elem* x, std::int64_t n, std::int64_t chunk,
                                                          float* out) {
  const int T = blockDim.x, t = threadIdx.x;
  const std::int64_t base = std::int64_t(blockIdx.x) * chunk;
  float v = O::identity();
  for (std::int64_t k = 0;; ++k) {
    const std::int64_t e = two_stage_element(k, t, T, chunk);
    if (e < 0) break;
    if (base + e < n) v = O::combine(v, widen(x[base + e]));
  }
  v = tree::block_reduce<O>(v);
  if (t == 0) out[blockIdx.x] = v;
}

// The atomics' slot: the accumulator's own format. fp32 sums use atomicAdd on
// a float; native fp16/bf16 sums add into the low half of a 4-byte slot
// through the paired atomicAdd (__half2/__nv_bfloat162, adding +0 to the
// unused high half): one correctly rounded add in the format, like combine,
// as the scalar atomicAdd, but the paired form is a single L2 atomic where
// the scalar 16-bit one is lowered to a compare-and-swap loop that collapses
// under every thread of the grid aiming at one address (PTX ISA, "atom":
// .f16x2 and .bf16x2 are the vector forms). max is a compare-and-swap loop
// around the selection (NaN wins, +0 beats -0), leaving early when the slot
// already holds the larger value.
template <class O>
struct AtomicSlot;
template <>
struct AtomicSlot<SumFp32> {
  __device__ static void put(void* slot, float v) { atomicAdd(static_cast<float*>(slot), v); }
  __device__ static void reset(void* slot) { *static_cast<float*>(slot) = SumFp32::identity(); }
  __device__ static float get(const void* slot) { return *static_cast<const float*>(slot); }
};
template <>
struct AtomicSlot<SumNative<Fp16Format>> {
  __device__ static void put(void* slot, float v) {
    atomicAdd(static_cast<__half2*>(slot), __halves2half2(__float2half_rn(v), __float2half_rn(0.0f)));
  }
  __device__ static void reset(void* slot) {
    *static_cast<__half2*>(slot) = __halves2half2(__float2half_rn(-0.0f), __float2half_rn(0.0f));
  }
  __device__ static float get(const void* slot) { return __half2float(*static_cast<const __half*>(slot)); }
};
template <>
struct AtomicSlot<SumNative<Bf16Format>> {
  __device__ static void put(void* slot, float v) {
    atomicAdd(static_cast<__nv_bfloat162*>(slot), __halves2bfloat162(__float2bfloat16_rn(v), __float2bfloat16_rn(0.0f)));
  }
  __device__ static void reset(void* slot) {
    *static_cast<__nv_bfloat162*>(slot) = __halves2bfloat162(__float2bfloat16_rn(-0.0f), __float2bfloat16_rn(0.0f));
  }
  __device__ static float get(const void* slot) { return __bfloat162float(*static_cast<const __nv_bfloat16*>(slot)); }
};
template <>
struct AtomicSlot<MaxOp> {
  __device__ static void put(void* slot, float v) {
    unsigned* p = static_cast<unsigned*>(slot);
    unsigned seen = *reinterpret_cast<volatile unsigned*>(p);
    for (;;) {
      const unsigned want = __float_as_uint(MaxOp::combine(__uint_as_float(seen), v));
      if (want == seen) return;
      const unsigned was = atomicCAS(p, seen, want);
      if (was == seen) return;
      seen = was;
    }
  }
  __device__ static void reset(void* slot) { *static_cast<float*>(slot) = MaxOp::identity(); }
  __device__ static float get(const void* slot) { return *static_cast<const float*>(slot); }
};

// The seeds' trap "forgetting to reset the result between runs" (seed 002,
// 9.3): every launch resets the slot first.
template <class O>
__global__ void reset_slot(void* slot) {
  AtomicSlot<O>::reset(slot);
}

template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) atomic_element(const Elem* x, std::int64_t n, void* slot) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) AtomicSlot<O>::put(slot, widen(x[i]));
}

template <class O, class Elem>
__global__ void __launch_bounds__(kMaxThreads) atomic_shared(const Elem* x, std::int64_t n, void* slot) {
  __shared__ float block_slot;  // 4 bytes, room for every slot format
  if (threadIdx.x == 0) AtomicSlot<O>::reset(&block_slot);
  __syncthreads();
  const std::int64_t step = std::int64_t(blockDim.x) * gridDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    AtomicSlot<O>::put(&block_slot, widen(x[i]));
  __syncthreads();
  if (threadIdx.x == 0) AtomicSlot<O>::put(slot, AtomicSlot<O>::get(&block_slot));
}

// The last value (a partial, or the atomics' slot; the identity when n == 0)
// to the outputs.
template <class O>
__global__ void finish_value(const float* value, std::int64_t n, Dtype out_dtype, Saturation sat, double* values,
                             double* unrounded) {
  const Finished f = finish<O>(value ? *value : O::identity(), n, out_dtype, sat);
  values[0] = f.value[0];
  if (unrounded) unrounded[0] = f.unrounded[0];
}
template <class O>
__global__ void finish_slot(const void* slot, std::int64_t n, Dtype out_dtype, Saturation sat, double* values,
                            double* unrounded) {
  const Finished f = finish<O>(AtomicSlot<O>::get(slot), n, out_dtype, sat);
  values[0] = f.value[0];
  if (unrounded) unrounded[0] = f.unrounded[0];
}

}  // namespace ulpscope::gallery
