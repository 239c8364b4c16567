#pragma once
// Binary floating-point formats described by their field widths, and exact
// conversion between their bit patterns and double, for host and device.
//
// Every value of fp32, fp16, bf16 and both fp8 formats is a double, so decoding
// is exact; encoding rounds a double once, to nearest with ties to even, with
// gradual underflow (IEEE 754-2019, 4.3.1 and 7.4). Integer arithmetic on the
// bits keeps it free of the host's and the device's libm and rounding mode.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "formats/dtype.hpp"
#include "formats/host_device.hpp"

namespace ulpscope {

// How the all-ones exponent field is used.
enum class Specials : std::uint8_t {
  ieee,  // all-ones exponent: infinity (zero fraction) or NaN
  fn,    // OCP E4M3 "FN": no infinity; only S.1111.111 is NaN, the rest are finite
};

template <int ExpBits, int ManBits, Specials Sp>
struct BinaryFormat {
  static constexpr int exp_bits = ExpBits;
  static constexpr int man_bits = ManBits;
  static constexpr int bits = 1 + ExpBits + ManBits;
  static constexpr int precision = ManBits + 1;
  static constexpr int bias = (1 << (ExpBits - 1)) - 1;
  static constexpr int emin = 1 - bias;
  static constexpr bool has_infinity = Sp == Specials::ieee;
  static constexpr std::uint32_t exp_all_ones = (1u << ExpBits) - 1;
  static constexpr std::uint32_t man_mask = (1u << ManBits) - 1;
  // IEEE: the largest finite value has exponent field all-ones minus one and a
  // full fraction; FN keeps the top binade but for the NaN fraction.
  static constexpr int emax = has_infinity ? int(exp_all_ones) - 1 - bias : int(exp_all_ones) - bias;
  static constexpr std::uint32_t max_field = has_infinity ? man_mask : man_mask - 1;
  static constexpr Specials specials = Sp;
  using storage = std::conditional_t<(bits <= 8), std::uint8_t,
                                     std::conditional_t<(bits <= 16), std::uint16_t, std::uint32_t>>;
  static constexpr std::uint32_t sign_mask = 1u << (bits - 1);
  static constexpr std::uint32_t max_bits = (std::uint32_t(emax + bias) << ManBits) | max_field;
  static constexpr std::uint32_t inf_bits = exp_all_ones << ManBits;  // ieee only
  // The quiet NaN CUDA's conversions produce (0x7FFF, 0x7FFF, 0x7F, 0x7F).
  static constexpr std::uint32_t nan_bits = (exp_all_ones << ManBits) | man_mask;

  static constexpr double pow2(int e) {
    double r = 1.0;
    for (; e > 0; --e) r *= 2.0;
    for (; e < 0; ++e) r *= 0.5;
    return r;
  }
  static constexpr double max_finite() {
    return double((1u << ManBits) | max_field) * pow2(emax - ManBits);
  }
  static constexpr double min_normal() { return pow2(emin); }
  static constexpr double min_subnormal() { return pow2(emin - ManBits); }
};

using Fp32Format = BinaryFormat<8, 23, Specials::ieee>;
using Fp16Format = BinaryFormat<5, 10, Specials::ieee>;
using Bf16Format = BinaryFormat<8, 7, Specials::ieee>;
using Fp8E4M3Format = BinaryFormat<4, 3, Specials::fn>;
using Fp8E5M2Format = BinaryFormat<5, 2, Specials::ieee>;

namespace detail {

ULPSCOPE_HD inline std::uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

ULPSCOPE_HD inline double double_from_bits(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

ULPSCOPE_HD inline std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

ULPSCOPE_HD inline float float_from_bits(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// 2^e for e in the normal range of double.
ULPSCOPE_HD inline double exact_pow2(int e) {
  return double_from_bits(static_cast<std::uint64_t>(e + 1023) << 52);
}

}  // namespace detail

// The value of a bit pattern, exactly.
template <class F>
ULPSCOPE_HD inline double decode(std::uint32_t b) {
  const bool neg = (b & F::sign_mask) != 0;
  const std::uint32_t field = (b >> F::man_bits) & F::exp_all_ones;
  const std::uint32_t frac = b & F::man_mask;
  constexpr std::uint64_t dsign = std::uint64_t(1) << 63;
  if (field == F::exp_all_ones) {
    if constexpr (F::has_infinity) {
      if (frac == 0) return detail::double_from_bits((neg ? dsign : 0) | 0x7FF0000000000000ull);
      return detail::double_from_bits(0x7FF8000000000000ull);
    } else {
      if (frac == F::man_mask) return detail::double_from_bits(0x7FF8000000000000ull);
    }
  }
  double v;
  if (field == 0) {
    v = double(frac) * detail::exact_pow2(F::emin - F::man_bits);
  } else {
    const std::uint64_t e = std::uint64_t(int(field) - F::bias + 1023);
    v = detail::double_from_bits((e << 52) | (std::uint64_t(frac) << (52 - F::man_bits)));
  }
  return neg ? -v : v;
}

// Round a double to the format: to nearest, ties to even, subnormals kept.
// Beyond the largest finite value: Inf where the format has it, NaN where it
// does not (E4M3), or the largest finite value with Saturation::satfinite (the
// fp8 behaviour of CUDA's __NV_SATFINITE, which maps Inf to it as well). NaN
// becomes the format's canonical quiet NaN.
template <class F>
ULPSCOPE_HD inline std::uint32_t encode(double x, Saturation sat = Saturation::nosat) {
  const std::uint64_t u = detail::double_bits(x);
  const std::uint32_t sign = (u >> 63) ? F::sign_mask : 0u;
  const std::uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
  const std::uint32_t overflow = sat == Saturation::satfinite
                                     ? (sign | F::max_bits)
                                     : (F::has_infinity ? (sign | F::inf_bits) : F::nan_bits);
  if (a > 0x7FF0000000000000ull) return F::nan_bits;
  if (a == 0x7FF0000000000000ull) return overflow;
  const int dexp = int(a >> 52);
  // A double subnormal is below 2^-1022, far under half the smallest
  // subnormal of any format here: it rounds to zero, like zero itself.
  if (dexp == 0) return sign;
  const std::uint64_t sig = (a & 0x000FFFFFFFFFFFFFull) | 0x0010000000000000ull;  // 53 bits
  const int e = dexp - 1023;
  // Keep p bits, or fewer below the normal range (the quantum is 2^(emin-p+1)).
  const int shift = 52 - F::man_bits + (e < F::emin ? F::emin - e : 0);
  if (shift >= 54) return sign;  // below half the smallest subnormal (or exactly half: even is 0)
  std::uint64_t m = sig >> shift;
  const std::uint64_t rem = sig & ((std::uint64_t(1) << shift) - 1);
  const std::uint64_t half = std::uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (m & 1))) ++m;
  int qe = (e < F::emin ? F::emin : e) - F::man_bits;  // value = m * 2^qe
  if (m == (std::uint64_t(1) << F::precision)) {        // carried into the next binade
    m >>= 1;
    ++qe;
  }
  if (m < (std::uint64_t(1) << F::man_bits)) return sign | std::uint32_t(m);  // subnormal or zero
  const int re = qe + F::man_bits;
  const std::uint32_t frac = std::uint32_t(m) & F::man_mask;
  if (re > F::emax || (re == F::emax && frac > F::max_field)) return overflow;
  return sign | (std::uint32_t(re + F::bias) << F::man_bits) | frac;
}

}  // namespace ulpscope
