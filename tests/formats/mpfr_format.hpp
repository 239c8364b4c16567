#pragma once
// A second, independent model of a binary format, computed with MPFR: values
// built from the fields, correct rounding with the format's precision,
// exponent range and subnormals, and IEEE nextUp/nextDown. The tests compare
// formats/ against it.
#include <cstdint>

#include "formats/dtype.hpp"
#include "spec_formats.hpp"

namespace ulpscope::test {

struct MpfrFormat {
  int precision;      // p
  int bias;
  double max_finite;  // SPEC's largest finite value
  bool has_infinity;

  template <class F>
  static MpfrFormat of() {
    using S = Spec<F>;
    return MpfrFormat{S::precision, S::bias, S::max_finite, S::has_infinity};
  }

  int emin() const { return 1 - bias; }
  double min_normal() const;
  double min_subnormal() const;

  // (-1)^s (2^(p-1) + fraction) 2^(field - bias - p + 1) for a normal field,
  // (-1)^s fraction 2^(emin - p + 1) for field 0. Finite patterns only.
  double from_fields(bool negative, std::uint32_t field, std::uint32_t fraction) const;

  // RN_F(x): p bits, ties to even, with the subnormals of MPFR's manual recipe
  // (mpfr_set_emin + mpfr_subnormalize). A result beyond max_finite overflows
  // (IEEE 754-2019, 7.4: judged after rounding with unbounded exponent): to
  // +-Inf, or NaN where the format has no infinity, or to +-max_finite with
  // satfinite (which also takes +-Inf there).
  double round(double x, Saturation sat) const;

  // IEEE 754-2019, 5.3.1, over the format's values: nextUp(-min subnormal) is
  // -0; past the largest finite value is +Inf, or NaN where there is no
  // infinity. x must be a value of the format.
  double next_up(double x) const;
  double next_down(double x) const { return -next_up(-x); }

  // floor(log2 |x|) for finite non-zero x.
  static int exponent(double x);
};

}  // namespace ulpscope::test
