#pragma once
// Ziv's strategy (Ziv 1991, "Fast evaluation of elementary mathematical
// functions with correctly rounded last bit"): evaluate at a working
// precision p with a rigorous error bound, and double p until the rounding
// to the output format is certain. Never a fixed "enough" precision.
#include <functional>

#include "formats/dtype.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope {

// One evaluation at precision p.
struct Approximation {
  ExactReal value;
  // Every MPFR operation returned a zero ternary value: value is the exact
  // real, whatever its rounding.
  bool exact = false;
  // |value - exact real| <= 2^error_exponent (not used when exact).
  mpfr_exp_t error_exponent = 0;
};

struct ZivResult {
  ExactReal value;
  bool exact = false;
  mpfr_prec_t precision = 0;  // the working precision that decided it
  int evaluations = 0;
};

// A certified value is also known to this many bits (relative error below
// 2^-140, more than the 40 decimal digits printed), so that metrics computed
// from it are not limited by it.
inline constexpr int kCertifiedBits = 140;

// The first precision tried (the references keep at least 128 bits); 160
// usually certifies the rounding and the 40 decimal digits at once.
inline constexpr mpfr_prec_t kZivStartPrecision = 160;

// Calls evaluate(p) for p = start, 2 start, 4 start, ... until the result is
// exact, or its error is below 2^-kCertifiedBits relatively and both ends of
// [value - 2^e, value + 2^e] round to the same value of `out` and to the
// same 40-digit decimal (rounding to nearest is monotone, so the exact real,
// which lies in between, rounds to them as well: the rounded reference and
// its decimal string are both right). This is mpfr_can_round's test, done
// with the final rounding itself so that the format's subnormal grid, its
// overflow threshold and E4M3's saturation or NaN are all part of it.
// A real that is exactly a midpoint or a value of the format is never
// certified by an interval; evaluate() must therefore report exactness, which
// it reaches once p covers every bit of a dyadic result.
// Throws std::runtime_error past max_precision (a bug in an error bound).
//
// A rational that is not dyadic (S/n for n with a factor 5, a variance over
// n^2) can be a decimal tie: its expansion ends in a 5 at the 41st digit, and
// no interval decides that. Such callers pass decide_decimal = false, which
// certifies the binary rounding only, and write the decimal from the
// fraction itself (quotient_decimal, reference/round_to_format.hpp).
ZivResult ziv_round(const std::function<Approximation(mpfr_prec_t)>& evaluate, Dtype out, Saturation sat,
                    mpfr_prec_t start = kZivStartPrecision, mpfr_prec_t max_precision = mpfr_prec_t(1) << 22,
                    bool decide_decimal = true);

// Whether two doubles are the same value of a format (NaN equals NaN; -0 is
// not +0).
bool same_rounding(double a, double b);

}  // namespace ulpscope
