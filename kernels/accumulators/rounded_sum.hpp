#pragma once
// naive, fp32 and fp64: recursive summation in one precision, every step
// rounded to nearest (Higham 2002, section 4.2).
#include <cstdint>
#include <type_traits>

#include "formats/binary_format.hpp"
#include "formats/dtype.hpp"
#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

namespace ulpscope {

// Rounding of an fp32 result into the format that holds the running value.
struct KeepFloat {
  ULPSCOPE_HD static float apply(float x) { return x; }
};

// naive for a narrow input format: the running value is kept in that format.
// A float add followed by rounding to F equals a correctly rounded add in F
// because float's p = 24 >= 2p_F + 2 for fp16, bf16 and both fp8 formats
// (Figueroa 1995, "When is double rounding innocuous?", SIGNUM Newsl. 30(3)).
// fp8 overflow saturates (CUDA's default __NV_SATFINITE), so a naive fp8 sum
// sticks at the largest finite value instead of becoming NaN or Inf.
// On the GPU the rounding is NVIDIA's conversion there and back (one cvt
// instruction each way on sm_90: f16, bf16, and e4m3x2/e5m2x2 with satfinite),
// which gives encode's and decode's values on every input of
// tests/formats/conversion_inputs.hpp (formats_device_tests); the generic
// pair inlined per add was several times slower and a third of each tree
// unit's code (docs/perf-h100.md, "rounded_sum.hpp").
template <class F>
struct RoundToFormat {
  static constexpr Saturation saturation = F::bits == 8 ? Saturation::satfinite : Saturation::nosat;
  ULPSCOPE_HD static float apply(float x) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<F, Fp16Format>) {
      return __half2float(__float2half_rn(x));
    } else if constexpr (std::is_same_v<F, Bf16Format>) {
      return __bfloat162float(__float2bfloat16_rn(x));
    } else {
      static_assert(std::is_same_v<F, Fp8E4M3Format> || std::is_same_v<F, Fp8E5M2Format>);
      constexpr __nv_fp8_interpretation_t k = std::is_same_v<F, Fp8E4M3Format> ? __NV_E4M3 : __NV_E5M2;
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, k), k)));
    }
#else
    return static_cast<float>(decode<F>(encode<F>(static_cast<double>(x), saturation)));
#endif
  }
};

template <class Rounding>
struct FloatSum {
  using term_t = float;
  using value_t = float;
  struct State {
    float s;
  };
  using Partial = State;
  // -0 is the additive identity of IEEE addition (-0 + x == x for every x, +0 included).
  ULPSCOPE_HD static State start() { return {-0.0f}; }
  ULPSCOPE_HD static Partial identity() { return {-0.0f}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static term_t product(float x, float y) { return Rounding::apply(rn::mul(x, y)); }
  ULPSCOPE_HD static void add(State& st, term_t t) { st.s = Rounding::apply(rn::add(st.s, t)); }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { a.s = Rounding::apply(rn::add(a.s, b.s)); }
  ULPSCOPE_HD static value_t total(const Partial& p) { return p.s; }
};

using Fp32Sum = FloatSum<KeepFloat>;
// naive on fp32 inputs is the fp32 accumulator itself.
template <class F>
using NaiveSum = std::conditional_t<F::bits == 32, Fp32Sum, FloatSum<RoundToFormat<F>>>;

struct Fp64Sum {
  using term_t = double;
  using value_t = double;
  struct State {
    double s;
  };
  using Partial = State;
  ULPSCOPE_HD static State start() { return {-0.0}; }
  ULPSCOPE_HD static Partial identity() { return {-0.0}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  // Exact: a product of two floats has at most 48 significant bits.
  ULPSCOPE_HD static term_t product(float x, float y) { return rn::mul(double(x), double(y)); }
  ULPSCOPE_HD static void add(State& st, term_t t) { st.s = rn::add(st.s, t); }
  // add(product(x, y)) in one fma, the same bits: the product is exact, so
  // the fma's one rounding is the addition's. One fp64 instruction a term
  // fewer (docs/perf-h100.md, "rounded_sum.hpp").
  ULPSCOPE_HD static void add_product(State& st, float x, float y) { st.s = rn::fma(double(x), double(y), st.s); }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { a.s = rn::add(a.s, b.s); }
  ULPSCOPE_HD static value_t total(const Partial& p) { return p.s; }
};

}  // namespace ulpscope
