#pragma once
// The inputs that conversions into a format are checked on: every value,
// every midpoint between positive neighbours (the overflow midpoint
// included), the doubles and floats next to each midpoint, both signs,
// specials and extremes, and random doubles over the format's range.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "formats/binary_format.hpp"
#include "mpfr_format.hpp"
#include "pattern_kind.hpp"

namespace ulpscope::test {

// The doubles every conversion is fed for format F.
template <class F>
inline std::vector<double> inputs_for() {
  std::vector<double> out;
  const std::uint32_t sign = 1u << (F::bits - 1);
  for (std::uint32_t b = 0; b < (1u << F::bits); ++b) {
    if (kind_of<F>(b) == Kind::nan) continue;
    const double v = decode<F>(b);
    out.push_back(v);
    if ((b & sign) != 0 || kind_of<F>(b) != Kind::finite) continue;
    // The next value up; above the largest finite one, the value the next
    // pattern would have with an unbounded exponent (2^(emax+1), or 480 for
    // E4M3), so that the overflow midpoint is visited too.
    const double up = b == F::max_bits ? MpfrFormat::of<F>().from_fields(false, (b + 1) >> F::man_bits,
                                                                          (b + 1) & F::man_mask)
                                       : decode<F>(b + 1);
    const double mid = v + (up - v) / 2;
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 2 * up),
                     double(std::nextafter(float(mid), 0.0f)), double(std::nextafter(float(mid), float(2 * up)))}) {
      out.push_back(x);
      out.push_back(-x);
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double x : {inf, -inf, std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(),
                   -std::numeric_limits<double>::denorm_min(), double(std::numeric_limits<float>::max()),
                   double(std::numeric_limits<float>::denorm_min()), 1e300, -1e300, 1e-300})
    out.push_back(x);
  std::mt19937_64 rng(0x5eed0005);
  std::uniform_int_distribution<int> exp_of(F::emin - F::precision - 3, F::emax + 2);
  for (int i = 0; i < 50000; ++i) {
    std::uint64_t significand = rng() & ((std::uint64_t(1) << 52) - 1);
    if (i % 4 == 0) significand &= ~((std::uint64_t(1) << (52 - F::precision)) - 1);
    out.push_back(detail::double_from_bits((std::uint64_t(exp_of(rng) + 1023) << 52) | significand |
                                           (rng() & (std::uint64_t(1) << 63))));
  }
  return out;
}

}  // namespace ulpscope::test
