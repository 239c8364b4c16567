#pragma once
// Correct rounding of an exact (or certified) value to an output format of
// docs/spec.md ("Number formats"): to nearest, ties to even, in the format's
// precision and exponent range, with subnormals; beyond the largest finite
// value per the format and the saturation mode (as formats/binary_format.hpp's
// encode does for doubles).
#include <string>

#include "formats/dtype.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope {

// RN_out(x) as a double (every value of every output format is one).
// Overflow: IEEE formats (fp64, fp32, fp16, bf16) give +-Inf whatever `sat`
// says; fp8_e5m2 gives +-Inf (nosat) or +-57344, its largest finite value
// (satfinite); fp8_e4m3, which has no infinity, gives NaN (nosat) or +-448
// (satfinite). An infinite x is treated like an overflow. The sign of a zero
// result is x's sign (a tiny negative value rounds to -0).
double round_to_format(const ExactReal& x, Dtype out, Saturation sat = Saturation::nosat);

// docs/spec.md, "The report": a decimal string of x with at least 40
// significant digits, or x exactly when its exact decimal expansion is
// shorter; "nan", "inf", "-inf" and "-0" as such. For an approximation
// (is_exact false) always 40 digits, rounded to nearest: a short expansion of
// an approximation says nothing about the real it approximates.
inline constexpr int kDecimalDigits = 40;
std::string exact_decimal(const ExactReal& x, bool is_exact = true);
// a / b (both finite, b nonzero; else std::invalid_argument) as exact_decimal writes an inexact value:
// 40 significant digits rounded to nearest, ties to even, decided on the
// fraction itself, so a decimal tie (a non-dyadic rational whose expansion
// ends in 5 at the 41st digit) comes out as exactly as any other value.
std::string quotient_decimal(const ExactReal& a, const ExactReal& b);

}  // namespace ulpscope
