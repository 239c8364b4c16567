#pragma once
// Inputs and independent references for the model tests.
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "formats/dtype.hpp"
#include "formats/round_to_dtype.hpp"
#include "formats/typed_array.hpp"
#include "kernels/model.hpp"

namespace ulpscope::test {

inline std::uint64_t mix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline double uniform01(std::uint64_t& s) { return double(mix(s) >> 11) * 0x1p-53; }

// n values of format d, each RN_d(f(i)).
template <class Gen>
TypedArray make_array(Dtype d, std::int64_t n, Gen&& f) {
  TypedArray a(d, std::size_t(n));
  visit_typed(a, [&](const auto& v0) {
    using T = typename std::decay_t<decltype(v0)>::value_type;
    auto& v = a.as<T>();
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = f(i);
      if constexpr (std::is_same_v<T, float>) v[i] = float(x);
      else v[i] = T(x, Saturation::satfinite);
    }
  });
  return a;
}

// RN_d of an MPFR value (divided by divisor, or its square root: one
// correctly rounded operation), with d's precision, exponent range and
// subnormals (MPFR's exponents are one more than IEEE's: 0.5 <= m < 1).
inline double round_mpfr_to(const mpfr_t exact, Dtype d, long divisor = 1, bool root = false) {
  const FormatInfo& f = format_info(d);
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_set_emin(f.emin - f.precision + 2);
  mpfr_set_emax(f.emax + 1);
  mpfr_t r;
  mpfr_init2(r, f.precision);
  int t = root ? mpfr_sqrt(r, exact, MPFR_RNDN)
                : (divisor == 1 ? mpfr_set(r, exact, MPFR_RNDN) : mpfr_div_si(r, exact, divisor, MPFR_RNDN));
  t = mpfr_check_range(r, t, MPFR_RNDN);
  mpfr_subnormalize(r, t, MPFR_RNDN);
  double v = mpfr_get_d(r, MPFR_RNDN);
  mpfr_clear(r);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  // E4M3 has no infinity: beyond its largest finite value is overflow (NaN or
  // saturation, the caller's choice); say so with an infinity.
  if (!f.has_infinity && std::isfinite(v) && std::fabs(v) > f.max_finite) v = std::copysign(INFINITY, v);
  return v;
}

// The exact sum of x_i (square: x_i^2; y: x_i*y_i), in an MPFR number wide
// enough to hold any such sum of these formats without rounding.
inline void exact_sum(mpfr_t out, const TypedArray& x, const TypedArray* y, bool square) {
  mpfr_init2(out, 4096);
  mpfr_set_zero(out, 1);
  mpfr_t t;
  mpfr_init2(t, 128);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double a = x.at(i);
    const double b = y ? y->at(i) : (square ? a : 1.0);
    mpfr_set_d(t, a, MPFR_RNDN);
    mpfr_mul_d(t, t, b, MPFR_RNDN);  // exact: 128 bits hold any product of two doubles' 53-bit significands
    mpfr_add(out, out, t, MPFR_RNDN);
  }
  mpfr_clear(t);
}

// Test inputs as the models take them.
inline KernelSpec spec_of(Op op, Dtype in, Accumulator acc, Shape shape, Dtype out) {
  KernelSpec s;
  s.op = op;
  s.in = in;
  s.out = out;
  s.acc = acc;
  s.shape = shape;
  return s;
}

inline ReductionProblem whole(Op op, const TypedArray& x, const TypedArray* y = nullptr) {
  ReductionProblem p;
  p.op = op;
  p.axis = Axis::all;
  p.rows = 1;
  p.cols = std::int64_t(x.size());
  p.x = &x;
  p.y = y;
  return p;
}

inline double run1(const KernelSpec& s, const ReductionProblem& p, LaunchConfig c = {1, 1}, int k = 0) {
  return run_model(s, p, c).values.at(k);
}


}  // namespace ulpscope::test
