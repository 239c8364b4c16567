#pragma once
// The `cub` shape's calls into CUB, as templates over the input's device type
// and CUB's accumulator type. Each cub_shapes_<format>.cu instantiates them
// for one format, so that the CUB instantiations are spread over several
// translation units (STYLE.md: compile time matters).
//
// CUB's own accumulation: cub::DeviceReduce accumulates in
// decay(op(init, input)) (cuda::std::__accumulator_t), so Sum over __half
// into a __half output adds in __half (checked with nvcc 13.0 / CCCL 3.0.1 by
// static_assert); we call that accumulator `naive`. `fp32` and `fp64` ask
// CUB for float / double accumulation by a transform that widens each input
// exactly before CUB adds (TransformReduce, the input still read through its
// raw pointer so that CUB keeps its vectorised loads).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "kernels/cuda/cub_calls.hpp"
#include "kernels/cuda/device_problem.hpp"
#include "kernels/index_divider.hpp"

namespace ulpscope::cub_shapes {

// What each element becomes before CUB combines it.
enum class Map : std::uint8_t { identity, square, abs };

// Exact widening of an input value to the accumulator type.
template <class Acc>
__host__ __device__ inline Acc widen(float v) { return static_cast<Acc>(v); }
template <class Acc>
__host__ __device__ inline Acc widen(__half v) {
  if constexpr (std::is_same_v<Acc, __half>) return v;
  else return static_cast<Acc>(__half2float(v));
}
template <class Acc>
__host__ __device__ inline Acc widen(__nv_bfloat16 v) {
  if constexpr (std::is_same_v<Acc, __nv_bfloat16>) return v;
  else return static_cast<Acc>(__bfloat162float(v));
}
template <class Acc>
__host__ __device__ inline Acc widen(__nv_fp8_e4m3 v) { return static_cast<Acc>(static_cast<float>(v)); }
template <class Acc>
__host__ __device__ inline Acc widen(__nv_fp8_e5m2 v) { return static_cast<Acc>(static_cast<float>(v)); }

// Products rounded once in the accumulator type: explicit rounding
// intrinsics, so that no FMA contraction merges them with CUB's adds
// (docs/spec.md, "Kernel shapes").
__device__ inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline __half mul_rn(__half a, __half b) { return __hmul_rn(a, b); }
__device__ inline __nv_bfloat16 mul_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul_rn(a, b); }

template <class Acc>
__host__ __device__ inline Acc acc_zero() {
  if constexpr (std::is_same_v<Acc, __half>) return __float2half_rn(0.0f);
  else if constexpr (std::is_same_v<Acc, __nv_bfloat16>) return __float2bfloat16_rn(0.0f);
  else return Acc(0);
}

template <class In, class Acc>
struct element_map {
  Map map;
  __device__ Acc operator()(In v) const {
    const Acc a = widen<Acc>(v);
    if (map == Map::square) return mul_rn(a, a);
    if constexpr (std::is_floating_point_v<Acc>) {
      if (map == Map::abs) return a < Acc(0) ? -a : a;
    }
    return a;
  }
};

// dot: element i is x[i] * y[i], read through a counting iterator (CUB has
// no two-input reduce; a zip would do the same loads).
template <class In, class Acc>
struct pair_product {
  const In* x;
  const In* y;
  __device__ Acc operator()(std::int64_t i) const { return mul_rn(widen<Acc>(x[i]), widen<Acc>(y[i])); }
};

// Row-wise ops: element k of the segmented sequence, reduction r = k / length,
// position j = k % length, read from row r (inner: k itself) or column r
// (outer), divided through length's reciprocal (index_divider.hpp).
template <class In, class Acc>
struct segment_element {
  const In* x;
  const In* y;  // dot only
  std::int64_t cols;
  IndexDivider length;
  bool outer;
  Map map;
  __host__ __device__ Acc operator()(std::int64_t k) const {
    std::int64_t at = k;
    if (outer) {
      std::int64_t j;
      const std::int64_t r = length.quotient(k, j);
      at = j * cols + r;
    }
    if (y != nullptr) return mul_rn(widen<Acc>(x[at]), widen<Acc>(y[at]));
    return element_map<In, Acc>{map}(x[at]);
  }
};

struct segment_begin {
  std::int64_t length;
  __host__ __device__ std::int64_t operator()(std::int64_t r) const { return r * length; }
};

// How an op reduces: what each element becomes, and how two are combined.
enum class Combine : std::uint8_t { plus, max, min };
struct Plan {
  Combine combine;
  Map map;
  bool product;  // dot
};
inline Plan plan_of(Op op) {
  switch (op) {
    case Op::sumsq:
    case Op::norm2:
    case Op::rms:
      return {Combine::plus, Map::square, false};
    case Op::dot:
      return {Combine::plus, Map::identity, true};
    case Op::max:
      return {Combine::max, Map::identity, false};
    case Op::min:
      return {Combine::min, Map::identity, false};
    case Op::amax:
      return {Combine::max, Map::abs, false};
    default:  // sum, mean
      return {Combine::plus, Map::identity, false};
  }
}

// The identity of max is -inf and of min +inf (CUB's Max/Min start from
// lowest()/max(), which would turn an all -inf input into -FLT_MAX).
template <class Acc>
__host__ __device__ inline Acc combine_init(Combine c) {
  if constexpr (std::is_floating_point_v<Acc>) {
    if (c == Combine::max) return -::cuda::std::numeric_limits<Acc>::infinity();
    if (c == Combine::min) return ::cuda::std::numeric_limits<Acc>::infinity();
  }
  return acc_zero<Acc>();
}

// The whole array (axis all) into out[0]; first call with temp == nullptr
// for the size, as CUB does. Selections (max, min, amax) only for Acc=float.
template <class In, class Acc>
cudaError_t reduce_all(void* temp, std::size_t& temp_bytes, const DeviceProblem& p, Op op, Acc* out,
                       cudaStream_t stream) {
  const Plan plan = plan_of(op);
  const In* x = static_cast<const In*>(p.x);
  const std::int64_t n = p.elements();
  if (plan.product) {
    const auto index = thrust::counting_iterator<std::int64_t>(0);
    return cub::DeviceReduce::TransformReduce(temp, temp_bytes, index, out, n, ::cuda::std::plus<Acc>{},
                                              pair_product<In, Acc>{x, static_cast<const In*>(p.y)},
                                              acc_zero<Acc>(), stream);
  }
  const element_map<In, Acc> map{plan.map};
  if constexpr (std::is_same_v<Acc, float>) {
    if (plan.combine == Combine::max)
      return cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, out, n, ::cuda::maximum<Acc>{}, map,
                                                combine_init<Acc>(Combine::max), stream);
    if (plan.combine == Combine::min)
      return cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, out, n, ::cuda::minimum<Acc>{}, map,
                                                combine_init<Acc>(Combine::min), stream);
  }
  return cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, out, n, ::cuda::std::plus<Acc>{}, map,
                                            acc_zero<Acc>(), stream);
}

// Row-wise (axis inner or outer) into out[0 .. reductions), one segment per
// reduction, by cub::DeviceSegmentedReduce.
template <class In, class Acc>
cudaError_t reduce_segments(void* temp, std::size_t& temp_bytes, const DeviceProblem& p, Op op, Acc* out,
                            cudaStream_t stream) {
  const Plan plan = plan_of(op);
  const std::int64_t length = p.length();
  if (p.elements() >= (std::int64_t(1) << 52)) return cudaErrorInvalidValue;  // IndexDivider's domain
  const segment_element<In, Acc> element{static_cast<const In*>(p.x),
                                         plan.product ? static_cast<const In*>(p.y) : nullptr,
                                         p.cols, IndexDivider::of(length), p.axis == Axis::outer, plan.map};
  const auto values = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), element);
  const auto begins =
      thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), segment_begin{length});
  const std::int64_t segments = p.reductions();
  if constexpr (std::is_same_v<Acc, float>) {
    if (plan.combine == Combine::max)
      return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, values, out, segments, begins, begins + 1,
                                                ::cuda::maximum<Acc>{}, combine_init<Acc>(Combine::max), stream);
    if (plan.combine == Combine::min)
      return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, values, out, segments, begins, begins + 1,
                                                ::cuda::minimum<Acc>{}, combine_init<Acc>(Combine::min), stream);
  }
  return cub::DeviceSegmentedReduce::Reduce(temp, temp_bytes, values, out, segments, begins, begins + 1,
                                            ::cuda::std::plus<Acc>{}, acc_zero<Acc>(), stream);
}

#define ULPSCOPE_INSTANTIATE_CUB_SHAPES(In, Acc)                                                        \
  template cudaError_t reduce_all<In, Acc>(void*, std::size_t&, const DeviceProblem&, Op, Acc*,       \
                                           cudaStream_t);                                               \
  template cudaError_t reduce_segments<In, Acc>(void*, std::size_t&, const DeviceProblem&, Op, Acc*, \
                                                cudaStream_t);

}  // namespace ulpscope::cub_shapes
