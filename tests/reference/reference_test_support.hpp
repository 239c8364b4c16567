#pragma once
// Independent paths for the reference tests: Boost.Multiprecision's
// cpp_bin_float (no MPFR inside) and MPFR's own mpfr_sum, plus generators of
// input arrays. None of this shares code with reference/.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "formats/dtype.hpp"
#include "formats/small_float.hpp"
#include "formats/typed_array.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope::testing {

// 1100 bits hold every exact sum of squares of fp32 values (2^-298 to 2^276,
// plus the bits of n) without rounding.
using Big = boost::multiprecision::number<
    boost::multiprecision::cpp_bin_float<1100, boost::multiprecision::digit_base_2>>;

// An ExactReal's value as a Big, exactly (through its integer significand).
inline Big to_big(const ExactReal& x) {
  if (x.is_nan()) return std::numeric_limits<Big>::quiet_NaN();
  if (x.is_inf()) return x.signbit() ? -std::numeric_limits<Big>::infinity() : std::numeric_limits<Big>::infinity();
  if (x.is_zero()) return x.signbit() ? -Big(0) : Big(0);
  mpz_t m;
  mpz_init(m);
  const mpfr_exp_t e = mpfr_get_z_2exp(m, x.get());
  char* s = mpz_get_str(nullptr, 16, m);
  std::string text(s);
  void (*freefunc)(void*, size_t);
  mp_get_memory_functions(nullptr, nullptr, &freefunc);
  freefunc(s, std::strlen(s) + 1);
  mpz_clear(m);
  const bool negative = text[0] == '-';
  boost::multiprecision::cpp_int i("0x" + text.substr(negative ? 1 : 0));
  Big b(i);
  b = ldexp(b, static_cast<int>(e));
  return negative ? -b : b;
}

// RN_F(v) written from the definition, on Big: the quantum of v's binade
// (or of the subnormal range), the nearest multiple, ties to even, then the
// overflow rule of the format.
inline double big_round(const Big& v, Dtype d, Saturation sat) {
  const FormatInfo& f = format_info(d);
  if (boost::multiprecision::isnan(v)) return std::nan("");
  auto overflow = [&](bool negative) {
    if (is_fp8(d) && sat == Saturation::satfinite) return negative ? -f.max_finite : f.max_finite;
    if (!f.has_infinity) return std::nan("");
    return negative ? -HUGE_VAL : HUGE_VAL;
  };
  if (boost::multiprecision::isinf(v)) return overflow(v < 0);
  if (v == 0) return boost::multiprecision::signbit(v) ? -0.0 : 0.0;
  const bool negative = v < 0;
  const Big a = negative ? Big(-v) : v;
  int e2 = 0;
  frexp(a, &e2);  // a = m 2^e2, m in [1/2, 1)
  const int e = std::max(e2 - 1, f.emin);
  const Big k = ldexp(a, f.precision - 1 - e);  // a in quanta
  Big n = floor(k);
  const Big rest = k - n;
  if (rest > Big(0.5) || (rest == Big(0.5) && fmod(n, Big(2)) != 0)) n += 1;
  const Big r = ldexp(n, e - f.precision + 1);
  if (r > Big(f.max_finite)) return overflow(negative);
  const double out = r.convert_to<double>();  // exact: r has at most p bits
  return negative ? -out : out;
}

// The exact sum of doubles by mpfr_sum (Demmel-Hida-like exact algorithm
// inside MPFR), at a precision that holds every bit.
inline ExactReal mpfr_sum_of(const std::vector<double>& terms) {
  std::vector<mpfr_t> t(terms.size());
  std::vector<mpfr_ptr> p(terms.size());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    mpfr_init2(t[i], 53);
    mpfr_set_d(t[i], terms[i], MPFR_RNDN);
    p[i] = t[i];
  }
  ExactReal r(2200);  // 2^-1074 .. 2^1024 and the bits of n
  mpfr_sum(r.get(), p.data(), static_cast<unsigned long>(p.size()), MPFR_RNDN);
  for (auto& x : t) mpfr_clear(x);
  return r;
}

inline bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

inline std::uint32_t raw_bits(float v) { return std::bit_cast<std::uint32_t>(v); }
template <class F>
inline std::uint32_t raw_bits(SmallFloat<F> v) { return v.bits; }
template <class T>
inline T from_raw(std::uint32_t b) {
  if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(b);
  else return T::from_bits(b);
}
template <class T>
constexpr int bits_of_type() {
  if constexpr (std::is_same_v<T, float>) return 32;
  else return T::format::bits;
}

enum class Spread {
  narrow,  // normal-like values around 1: what activations look like
  wide,    // random bit patterns: every exponent of the format, random signs
};

// n finite values of T.
template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed, Spread spread) {
  std::mt19937_64 g(seed);
  std::vector<T> v;
  v.reserve(n);
  while (v.size() < n) {
    T x;
    if (spread == Spread::wide) {
      x = from_raw<T>(static_cast<std::uint32_t>(g()) &
                      static_cast<std::uint32_t>((std::uint64_t(1) << bits_of_type<T>()) - 1));
    } else {
      const double d = std::normal_distribution<double>(0.0, 1.0)(g);
      if constexpr (std::is_same_v<T, float>) x = static_cast<float>(d);
      else x = T(d);
    }
    if (std::isfinite(to_double(x))) v.push_back(x);
  }
  return v;
}

template <class T>
std::vector<double> widened(const std::vector<T>& v) {
  std::vector<double> d;
  d.reserve(v.size());
  for (const T& x : v) d.push_back(to_double(x));
  return d;
}

template <class T>
T value_of(double d) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(d);
  else return T(d, Saturation::nosat);
}

using InputTypes = ::testing::Types<float, Fp16, Bf16, Fp8E4M3, Fp8E5M2>;

}  // namespace ulpscope::testing
