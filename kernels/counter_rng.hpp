#pragma once
// A counter-based random generator: value i of a stream is a pure function of
// (seed, stream, i), so an array can be generated in any order, in parallel
// chunks or on the device, and give the same bits. No std::*_distribution,
// whose output differs between standard libraries (docs/spec.md, "Adversarial
// distributions").
//
// The bits are SplitMix64's (Steele, Lea, Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014): its n-th output is its
// finaliser applied to key + n * golden gamma, which is a counter-based
// generator already. Everything derived from the bits here uses integer
// operations and IEEE's correctly rounded +, -, *, /, sqrt only (no libm),
// so it gives the same bits on every IEEE machine built without FMA
// contraction (the project's -ffp-contract=off and nvcc --fmad=false).
#include <cmath>
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"

namespace ulpscope {

inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;

// SplitMix64's finaliser (Stafford's "Mix13" variant of MurmurHash3's fmix64).
ULPSCOPE_HD constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// SplitMix64 as its authors wrote it, a sequence: the state advances by the
// golden gamma and each output is the state's mix. Output k of state s is
// CounterRng's counter form mix64(s + (k + 1) * gamma); this form is kept for
// the shuffles and benchmark inputs that draw from a running state.
ULPSCOPE_HD constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  state += kGoldenGamma;
  return mix64(state);
}

class CounterRng {
 public:
  // A stream separates independent quantities drawn for the same element
  // (the x and y of a dot product, a sign, a shuffle).
  ULPSCOPE_HD constexpr CounterRng(std::uint64_t seed, std::uint64_t stream)
      : key_(mix64(seed ^ mix64(stream * kGoldenGamma + 0x632BE59BD9B4E019ull))) {}

  ULPSCOPE_HD constexpr std::uint64_t bits(std::uint64_t counter) const {
    return mix64(key_ + (counter + 1) * kGoldenGamma);
  }
  // Uniform on [0, 1): 53 random bits times 2^-53, exact.
  ULPSCOPE_HD constexpr double uniform(std::uint64_t counter) const {
    return double(bits(counter) >> 11) * 0x1p-53;
  }
  // Uniform integer in [0, m) by the multiply-high method (Lemire 2019); its
  // bias, below m / 2^64, is far under anything a test could see.
  ULPSCOPE_HD constexpr std::uint64_t below(std::uint64_t counter, std::uint64_t m) const {
#if defined(__CUDA_ARCH__)
    return __umul64hi(bits(counter), m);
#else
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits(counter)) * m) >> 64);
#endif
  }

 private:
  std::uint64_t key_;
};

// The natural logarithm and the exponential from +, -, *, / alone, so that the
// normal, lognormal and outlier scales below are the same bits everywhere
// (libm's log and exp differ in the last bit between libraries and between
// CPU and GPU). Both are accurate to a few units in the last place of a
// double, far finer than the 24 bits kept when values are rounded to an input
// format. After fdlibm's e_log.c and e_exp.c (argument reduction by 2^k and
// ln 2 split in two parts), with plain Taylor series for the reduced argument.
namespace portable {

inline constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000: k*kLn2Hi is exact
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;
inline constexpr double kInvLn2 = 1.44269504088896338700e+00;

// ln(x) for a positive, finite, normal double x.
ULPSCOPE_HD inline double log(double x) {
  std::uint64_t u = detail::double_bits(x);
  int k = int(u >> 52) - 1023;
  u = (u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;  // m in [1, 2)
  double m = detail::double_from_bits(u);
  if (m > 1.4142135623730951) {  // keep m in [sqrt(1/2), sqrt(2))
    m *= 0.5;
    ++k;
  }
  // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m-1)/(m+1), |s| < 0.1716.
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double series = 1.0 / 25.0;
  for (int j = 11; j >= 0; --j) series = series * s2 + 1.0 / double(2 * j + 1);
  const double dk = double(k);
  return dk * kLn2Hi + (2.0 * s * series + dk * kLn2Lo);
}

// e^x for |x| < 700.
ULPSCOPE_HD inline double exp(double x) {
  const double t = x * kInvLn2;
  const int k = int(t < 0 ? t - 0.5 : t + 0.5);  // nearest integer
  const double dk = double(k);
  const double r = (x - dk * kLn2Hi) - dk * kLn2Lo;  // |r| <= ln2/2 + tiny
  double p = 1.0;
  for (int j = 16; j >= 1; --j) p = 1.0 + p * r / double(j);
  return p * detail::exact_pow2(k);
}

}  // namespace portable

// A pair of independent standard normal values by Marsaglia's polar method
// (Marsaglia, Bray 1964): (v1, v2) uniform in the unit disc, s = v1^2 + v2^2,
// z = v * sqrt(-2 ln s / s). Draws for element i use counters
// [i * kDrawsPerElement, (i + 1) * kDrawsPerElement); the rejection loop
// (acceptance pi/4) ends within 24 tries except with probability 0.215^24 <
// 1e-16, after which the element is 0 (deterministically).
inline constexpr std::uint64_t kDrawsPerElement = 64;

struct DiscPoint {
  double v1 = 0, v2 = 0, s = 0;  // s = 0: no point found
};

ULPSCOPE_HD inline DiscPoint unit_disc_point(const CounterRng& rng, std::uint64_t i) {
  for (std::uint64_t a = 0; a < 24; ++a) {
    const double v1 = 2.0 * rng.uniform(i * kDrawsPerElement + 2 * a) - 1.0;
    const double v2 = 2.0 * rng.uniform(i * kDrawsPerElement + 2 * a + 1) - 1.0;
    const double s = v1 * v1 + v2 * v2;
    if (s > 0.0 && s < 1.0) return {v1, v2, s};
  }
  return {};
}

ULPSCOPE_HD inline double standard_normal(const CounterRng& rng, std::uint64_t i) {
  const DiscPoint p = unit_disc_point(rng, i);
  if (p.s == 0.0) return 0.0;
  return p.v1 * std::sqrt(-2.0 * portable::log(p.s) / p.s);
}

// Standard Cauchy as the ratio of two independent normals, which in the polar
// method is v1 / v2 (the common factor cancels): no tangent, no libm.
ULPSCOPE_HD inline double standard_cauchy(const CounterRng& rng, std::uint64_t i) {
  const DiscPoint p = unit_disc_point(rng, i);
  if (p.s == 0.0) return 0.0;
  return p.v1 / p.v2;  // v2 = 0 gives +-Inf, clamped by the caller
}

}  // namespace ulpscope
