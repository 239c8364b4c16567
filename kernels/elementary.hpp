#pragma once
// exp and log for logsumexp, written with the correctly rounded operations of
// rounded_arith.hpp only, so that a kernel and its CPU model compute the same
// bits (libm's and CUDA's exp and log differ from each other and are not
// correctly rounded; docs/spec.md, "Kernel shapes"). Cody-Waite reduction by ln 2
// and a polynomial on |r| <= ln(2)/2 for exp; log(m) = 2 atanh(u),
// u = (m-1)/(m+1), on m in [sqrt(1/2), sqrt(2)) for log (Muller, "Elementary
// Functions", 3rd ed., ch. 11). Error: exp below 1.5 ulps, log below 4,
// checked against MPFR in tests/kernels/elementary_test.cpp.
#include <bit>
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope::elementary {

template <class T>
struct Consts;
template <>
struct Consts<float> {
  static constexpr float log2e = 1.44269502f, ln2_hi = 0.693145752f, ln2_lo = 1.42860677e-06f;
  static constexpr float round_magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  static constexpr float clamp_below = -87.0f;  // e^-87 > 2^-126
  static constexpr int expm1_terms = 6, log_terms = 5;
  ULPSCOPE_HD static constexpr float inv_odd(int i) {  // 1/(2i+1)
    constexpr float c[5] = {1.0f, 0.3333333432674408f, 0.20000000298023224f, 0.1428571492433548f, 0.1111111119389534f};
    return c[i];
  }
  // (e^r - 1)/r = sum c_i r^i on |r| <= 0.3467 (Chebyshev nodes, mpmath; e^r to 2^-26.5 after rounding).
  ULPSCOPE_HD static constexpr float expm1_over_r(int i) {
    constexpr float c[6] = {0x1p+0f, 0x1p-1f, 0x1.55547cp-3f, 0x1.5554e8p-5f, 0x1.123dbap-7f, 0x1.6d434ep-10f};
    return c[i];
  }
};
template <>
struct Consts<double> {
  static constexpr double log2e = 1.4426950408889634, ln2_hi = 0.6931471803691238, ln2_lo = 1.9082149292705877e-10;
  static constexpr double round_magic = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr double clamp_below = -708.0;  // e^-708 > 2^-1022
  static constexpr int expm1_terms = 11, log_terms = 12;
  ULPSCOPE_HD static constexpr double inv_odd(int i) {  // 1/(2i+1)
    constexpr double c[12] = {0x1p+0, 0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3, 0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4, 0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5, 0x1.8618618618618p-5, 0x1.642c8590b2164p-5};
    return c[i];
  }
  // (e^r - 1)/r on |r| <= 0.3467, as for float (e^r to 2^-56.5).
  ULPSCOPE_HD static constexpr double expm1_over_r(int i) {
    constexpr double c[11] = {0x1p+0, 0x1.0000000000005p-1, 0x1.5555555555557p-3, 0x1.5555555552088p-5, 0x1.11111111100d3p-7, 0x1.6c16c17f4e67cp-10, 0x1.a01a01abeccc3p-13, 0x1.a019a6485972bp-16, 0x1.71de02225a2f3p-19, 0x1.28a2e423b0e62p-22, 0x1.af4e092e1705bp-26};
    return c[i];
  }
};

// 2^e for e within the normal range, from its bits (no conversion: float
// from double is a quarter-rate instruction on the GPU).
template <class T>
ULPSCOPE_HD inline T pow2(int e) {
  if constexpr (sizeof(T) == 4) return detail::float_from_bits(std::uint32_t(e + 127) << 23);
  else return detail::exact_pow2(e);
}

// exp_nonpositive shifts round_magic + k's bits into the exponent field:
// round_magic's low bits must be zero for that to leave k alone.
static_assert((std::bit_cast<std::uint32_t>(Consts<float>::round_magic) << 23) == 0);
static_assert((std::bit_cast<std::uint64_t>(Consts<double>::round_magic) << 52) == 0);

// e^x for x <= 0 (not NaN), the only exponentials logsumexp takes (of x minus
// a maximum). Cody-Waite reduction x = k ln2 + r, |r| <= ln(2)/2, k from one
// fma; e^r = 1 + r q(r) with q a Chebyshev interpolant of (e^r - 1)/r on
// |r| <= 0.3467, so that e^0 is exactly 1 (the maximum's own term). x is first
// raised to clamp_below, where e^x is still normal (fp32 e^-87 > 2^-126), so
// that 2^k is added to the exponent field without leaving the normal range;
// a term clamped there (< 2^-125) cannot change a sum that holds the maximum's
// 1 (it is below 2^-24 of its ulp), and the model computes the same bits.
template <class T>
ULPSCOPE_HD inline T exp_nonpositive(T x) {
  using C = Consts<T>;
  if constexpr (sizeof(T) == 4) x = rn::maximum(x, C::clamp_below);
  else x = x < C::clamp_below ? C::clamp_below : x;
  const T t = rn::fma(x, C::log2e, C::round_magic);
  const T k = rn::sub(t, C::round_magic);
  T r = rn::fma(-k, C::ln2_hi, x);
  r = rn::fma(-k, C::ln2_lo, r);
  T q = C::expm1_over_r(C::expm1_terms - 1);
  ULPSCOPE_UNROLL
  for (int i = C::expm1_terms - 2; i >= 0; --i) q = rn::fma(q, r, C::expm1_over_r(i));
  const T p = rn::fma(r, q, T(1));
  // p * 2^k: t's bits are round_magic's plus k, and round_magic's low bits
  // are zero, so t's bits shifted into the exponent field are k's.
  if constexpr (sizeof(T) == 4) return detail::float_from_bits(detail::float_bits(p) + (detail::float_bits(t) << 23));
  else return detail::double_from_bits(detail::double_bits(p) + (detail::double_bits(t) << 52));
}

// log of a positive normal or subnormal number; log(0) = -inf, log(+inf) = +inf, NaN for x < 0.
template <class T>
ULPSCOPE_HD inline T log(T x) {
  using C = Consts<T>;
  const T inf = T(detail::double_from_bits(0x7FF0000000000000ull));
  if (x != x || x < T(0)) return T(detail::double_from_bits(0x7FF8000000000000ull));
  if (x == T(0)) return -inf;
  if (x == inf) return x;
  int e = 0;
  T m = x;
  const T two_p = pow2<T>(sizeof(T) == 4 ? 24 : 53);
  if (m < pow2<T>(sizeof(T) == 4 ? -126 : -1022)) {  // subnormal: scale up exactly
    m = rn::mul(m, two_p);
    e -= sizeof(T) == 4 ? 24 : 53;
  }
  // m = f * 2^k with f in [1, 2), then into [sqrt(1/2), sqrt(2)).
  const std::uint64_t bits = detail::double_bits(double(m));
  const int k = int((bits >> 52) & 0x7FF) - 1023;
  e += k;
  m = rn::mul(rn::mul(m, pow2<T>(-(k / 2))), pow2<T>(-(k - k / 2)));  // exact, in two halves
  if (m > T(1.4142135623730951)) {
    m = rn::mul(m, T(0.5));
    e += 1;
  }
  const T u = rn::div(rn::sub(m, T(1)), rn::add(m, T(1)));
  const T u2 = rn::mul(u, u);
  // 2 (u + u^3/3 + u^5/5 + ...), Horner in u^2.
  T p = C::inv_odd(C::log_terms - 1);
  for (int i = C::log_terms - 2; i >= 0; --i) p = rn::fma(p, u2, C::inv_odd(i));
  const T logm = rn::mul(T(2), rn::mul(u, p));
  const T fe = T(e);
  return rn::fma(fe, C::ln2_hi, rn::fma(fe, C::ln2_lo, logm));
}

}  // namespace ulpscope::elementary
