#pragma once
// RN(d / n) for a count n without a division: y = RN(1/n) from a table,
// q0 = RN(d * y), the residual r = q0 * n - d (exact in one fma), and
// q = RN(q0 - r * y): Markstein's correction (P. Markstein, IBM J. Res. Dev.
// 34(1), 1990; Muller et al., Handbook of Floating-Point Arithmetic,
// "Markstein's theorem"), which rounds correctly when y is within half an ulp
// of 1/n and q0 is a faithful quotient. Rather than prove q0 faithful, the
// identity is checked exhaustively on this finite domain: every significand
// of d at exponents -113, -112, -60, 0 and 127, for every n up to
// kCountReciprocals (the GPU test QuotientByCount.EqualsDivision runs it on
// the device). From 2^-113 up no step underflows: d/n >= 2^-125, and the
// residual, a multiple of ulp(q0) >= 2^-148 of at most 1.5 n of them, is
// exact at every exponent, so the result scales with d's exponent.
// Below, where d/n nears the subnormals, q0 loses relative accuracy and the
// identity fails (checked: for some d in [2^-117, 2^-116)), so callers divide
// there, and for inf and NaN (the residual inf - inf is NaN). The residual is
// q0 * n - d rather than d - q0 * n so that d = -0 gives -0.
#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

inline constexpr int kCountReciprocals = 4096;
inline constexpr float kQuotientMin = 0x1p-113f;

// d / n given y = RN(1/n) and n as a float (exact: n <= 2^24).
ULPSCOPE_HD inline float quotient_by_count(float d, float n, float y) {
  const float q0 = rn::mul(d, y);
  const float r = rn::fma(q0, n, -d);
  return rn::fma(-r, y, q0);
}

// reciprocal[i] = RN(1/(i + 1)), computed by the compiler (IEEE division).
struct alignas(16) CountReciprocals {
  float reciprocal[kCountReciprocals];
};
constexpr CountReciprocals make_count_reciprocals() {
  CountReciprocals t{};
  for (int i = 0; i < kCountReciprocals; ++i) t.reciprocal[i] = 1.0f / float(i + 1);
  return t;
}

#if defined(__CUDACC__)
// One copy per translation unit (the kernels are built without relocatable
// device code), 16 KiB in global memory, read through the read-only cache.
static __device__ const CountReciprocals kDeviceCountReciprocals = make_count_reciprocals();
#endif

}  // namespace ulpscope
