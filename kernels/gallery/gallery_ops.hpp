#pragma once
// What the gallery's kernels combine, for host and device: sum with the
// native accumulator (the running value rounded to the input format after
// every add, docs/spec.md's "naive") or fp32, and max. Every value travels as a
// float (the input widened exactly); an op is identity() and combine(a, b),
// plus merge/Partial so that the tree shape's block step (kernels/tree/
// block_reduce.cuh, kernels/model/tree_model.hpp) runs over it unchanged.
#include <cstdint>
#include <type_traits>
#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulator.hpp"
#include "kernels/accumulators/extremum.hpp"
#include "kernels/accumulators/rounded_sum.hpp"
#include "kernels/op.hpp"
#include "kernels/out_format.hpp"
#include "kernels/reducers.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope::gallery {

// A float sum rounded to F: on the device by the hardware conversion
// (cvt.rn.f16.f32 / cvt.rn.bf16.f32, correctly rounded with subnormals), on
// the host by formats/binary_format.hpp's encode. The float add before it is
// exact enough that the two roundings equal one correctly rounded add in F,
// i.e. what __hadd_rn computes (p = 24 >= 2p_F + 2; Figueroa 1995, "When is
// double rounding innocuous?").
template <class F>
struct HardwareRound {
  ULPSCOPE_HD static float apply(float x) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<F, Fp16Format>) return __half2float(__float2half_rn(x));
    else return __bfloat162float(__float2bfloat16_rn(x));
#else
    return RoundToFormat<F>::apply(x);
#endif
  }
};

template <class Rounding>
struct SumOp {
  using Partial = float;
  static constexpr bool is_sum = true;
  ULPSCOPE_HD static float identity() { return -0.0f; }  // -0 + x == x for every x
  ULPSCOPE_HD static float combine(float a, float b) { return Rounding::apply(rn::add(a, b)); }
  ULPSCOPE_HD static void merge(float& a, const float& b) { a = combine(a, b); }
};

// Selection: NaN wins, +0 beats -0 (accumulators/extremum.hpp), so any order
// gives the same bits.
struct MaxOp {
  using Partial = float;
  using Select = ExtremumOf<Extremum::max>;
  static constexpr bool is_sum = false;
  ULPSCOPE_HD static float identity() { return Select::empty(); }
  ULPSCOPE_HD static float combine(float a, float b) { return Select::select(a, b); }
  ULPSCOPE_HD static void merge(float& a, const float& b) { a = combine(a, b); }
};

using SumFp32 = SumOp<KeepFloat>;
template <class F>
using SumNative = SumOp<HardwareRound<F>>;

// The kernel's last value to the outputs: rounded to the output format, the
// value itself as the unrounded one; the empty sum is +0 (reducers.hpp).
template <class O>
ULPSCOPE_HD inline Finished finish(float v, std::int64_t n, Dtype out, Saturation sat) {
  if (O::is_sum && n == 0) v = 0.0f;
  Finished f{};
  f.unrounded[0] = double(v);
  f.value[0] = round_to_out(double(v), out, sat);
  return f;
}

// Which op runs an (op, accumulator) on inputs of format Fmt: the table the
// models and the CUDA dispatch share, so that both instantiate the same set.
// f gets std::type_identity<O>{}; false when the gallery has no such kernel
// (unsupported() says why).
template <class Fmt, class Fn>
bool with_op(Op op, Accumulator acc, Fn&& f) {
  if (op == Op::max) {
    if (acc != Accumulator::fp32) return false;
    f(std::type_identity<MaxOp>{});
    return true;
  }
  if (op != Op::sum) return false;
  if (acc == Accumulator::fp32 || (acc == Accumulator::naive && Fmt::bits == 32)) {
    f(std::type_identity<SumFp32>{});
    return true;
  }
  if constexpr (Fmt::bits == 16) {
    if (acc == Accumulator::naive) {
      f(std::type_identity<SumNative<Fmt>>{});
      return true;
    }
  }
  return false;
}

}  // namespace ulpscope::gallery
