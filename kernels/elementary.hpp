#pragma once
// exp and log for logsumexp, written with the correctly rounded operations of
// rounded_arith.hpp only, so that a kernel and its CPU model compute the same
// bits (libm's and CUDA's exp and log differ from each other and are not
// correctly rounded; SPEC.md, "Kernel shapes"). Cody-Waite reduction by ln 2
// and a Taylor polynomial on |r| <= ln(2)/2 for exp; log(m) = 2 atanh(u),
// u = (m-1)/(m+1), on m in [sqrt(1/2), sqrt(2)) for log (Muller, "Elementary
// Functions", 3rd ed., ch. 11). Error: below 4 ulps, checked against MPFR
// in tests/kernels/elementary_test.cpp (the worst seen there is under 3).
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
  static constexpr float exp_max = 88.7228394f, exp_min = -103.972084f;
  static constexpr int exp_terms = 8, log_terms = 5;
  ULPSCOPE_HD static constexpr float inv_odd(int i) {  // 1/(2i+1)
    constexpr float c[5] = {1.0f, 0.3333333432674408f, 0.20000000298023224f, 0.1428571492433548f, 0.1111111119389534f};
    return c[i];
  }
  ULPSCOPE_HD static constexpr float inv_factorial(int i) {
    constexpr float c[8] = {1.0f, 1.0f, 0.5f, 0.1666666716337204f, 0.0416666679084301f, 0.008333333767950535f, 0.0013888889225199819f, 0.00019841270113829523f};
    return c[i];
  }
};
template <>
struct Consts<double> {
  static constexpr double log2e = 1.4426950408889634, ln2_hi = 0.6931471803691238, ln2_lo = 1.9082149292705877e-10;
  static constexpr double round_magic = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr double exp_max = 709.782712893384, exp_min = -745.1332191019412;
  static constexpr int exp_terms = 14, log_terms = 12;
  ULPSCOPE_HD static constexpr double inv_odd(int i) {  // 1/(2i+1)
    constexpr double c[12] = {0x1.0000000000000p+0, 0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3, 0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4, 0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5, 0x1.8618618618618p-5, 0x1.642c8590b2164p-5};
    return c[i];
  }
  ULPSCOPE_HD static constexpr double inv_factorial(int i) {
    constexpr double c[14] = {0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x1.0000000000000p-1, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33};
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

// The integer k of t = round_magic + k (|k| < 2^22: t's ulp is 1), read from
// t's bits rather than converted from k (F2I is quarter rate too).
template <class T>
ULPSCOPE_HD inline int magic_integer(T t) {
  if constexpr (sizeof(T) == 4) return int(detail::float_bits(t) - detail::float_bits(Consts<T>::round_magic));
  else return int(std::int64_t(detail::double_bits(t) - detail::double_bits(Consts<T>::round_magic)));
}

template <class T>
ULPSCOPE_HD inline T exp(T x) {
  using C = Consts<T>;
  if (x != x) return x;
  if (x > C::exp_max) return T(detail::double_from_bits(0x7FF0000000000000ull));
  if (x < C::exp_min) return T(0);
  const T t = rn::add(rn::mul(x, C::log2e), C::round_magic);
  const T k = rn::sub(t, C::round_magic);
  T r = rn::fma(-k, C::ln2_hi, x);
  r = rn::fma(-k, C::ln2_lo, r);
  // sum_{i<terms} r^i / i!, Horner from the highest term.
  T p = C::inv_factorial(C::exp_terms - 1);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = C::exp_terms - 2; i >= 0; --i) p = rn::fma(p, r, C::inv_factorial(i));
  const int ki = magic_integer(t), k1 = ki / 2, k2 = ki - k1;
  return rn::mul(rn::mul(p, pow2<T>(k1)), pow2<T>(k2));
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
