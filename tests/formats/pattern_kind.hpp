#pragma once
// What a bit pattern means according to docs/spec.md's table alone: its kind and
// its value, built with MPFR from the fields.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "formats/hex_float.hpp"
#include "mpfr_format.hpp"
#include "spec_formats.hpp"

namespace ulpscope::test {

enum class Kind { finite, infinity, nan };

struct Fields {
  bool negative;
  std::uint32_t exponent;  // biased field
  std::uint32_t fraction;
};

template <class F>
Fields fields_of(std::uint32_t b) {
  constexpr int man_bits = Spec<F>::precision - 1;
  constexpr int exp_bits = Spec<F>::exp_bits;
  return Fields{((b >> (man_bits + exp_bits)) & 1u) != 0, (b >> man_bits) & ((1u << exp_bits) - 1),
                b & ((1u << man_bits) - 1)};
}

// IEEE: an all-ones exponent is Inf (fraction 0) or NaN. OCP E4M3 (FN): only
// S.1111.111 is NaN and the rest of that binade is finite.
template <class F>
Kind kind_of(std::uint32_t b) {
  constexpr std::uint32_t all_ones = (1u << Spec<F>::exp_bits) - 1;
  constexpr std::uint32_t full_fraction = (1u << (Spec<F>::precision - 1)) - 1;
  const Fields f = fields_of<F>(b);
  if (f.exponent != all_ones) return Kind::finite;
  if constexpr (Spec<F>::has_infinity) return f.fraction == 0 ? Kind::infinity : Kind::nan;
  else return f.fraction == full_fraction ? Kind::nan : Kind::finite;
}

template <class F>
double spec_value(std::uint32_t b) {
  const Fields f = fields_of<F>(b);
  switch (kind_of<F>(b)) {
    case Kind::nan: return std::numeric_limits<double>::quiet_NaN();
    case Kind::infinity:
      return f.negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    case Kind::finite: break;
  }
  return MpfrFormat::of<F>().from_fields(f.negative, f.exponent, f.fraction);
}

// Equal as values and in the sign of zero, or both NaN.
inline bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

inline std::string show(double x) { return hex_float(x); }
inline std::string show_bits(std::uint32_t b) { return fmt::format("{:#x}", b); }

}  // namespace ulpscope::test
