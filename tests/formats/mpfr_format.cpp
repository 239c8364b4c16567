#include "mpfr_format.hpp"

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ulpscope::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// MPFR's exponent range is per thread: set it for one computation, restore it.
class MpfrEminGuard {
 public:
  explicit MpfrEminGuard(mpfr_exp_t emin) : saved_(mpfr_get_emin()) {
    if (mpfr_set_emin(emin) != 0) throw std::logic_error("mpfr_set_emin refused");
  }
  ~MpfrEminGuard() { mpfr_set_emin(saved_); }
  MpfrEminGuard(const MpfrEminGuard&) = delete;
  MpfrEminGuard& operator=(const MpfrEminGuard&) = delete;

 private:
  mpfr_exp_t saved_;
};

class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  ~Mpfr() { mpfr_clear(v_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return v_; }
  // Every value handled here has at most 25 significant bits and an exponent
  // inside double's range, so this is exact.
  double to_double() { return mpfr_get_d(v_, MPFR_RNDN); }

 private:
  mpfr_t v_;
};

double exact_two_to(int e) {
  Mpfr v(8);
  mpfr_set_ui_2exp(v.get(), 1, e, MPFR_RNDN);
  return v.to_double();
}

}  // namespace

double MpfrFormat::min_normal() const { return exact_two_to(emin()); }
double MpfrFormat::min_subnormal() const { return exact_two_to(emin() - precision + 1); }

double MpfrFormat::from_fields(bool negative, std::uint32_t field, std::uint32_t fraction) const {
  Mpfr v(64);
  int inexact;
  if (field == 0) {
    inexact = mpfr_set_ui_2exp(v.get(), fraction, emin() - precision + 1, MPFR_RNDN);
  } else {
    const unsigned long significand = (1ul << (precision - 1)) + fraction;
    inexact = mpfr_set_ui_2exp(v.get(), significand, int(field) - bias - precision + 1, MPFR_RNDN);
  }
  if (inexact != 0) throw std::logic_error("from_fields: not exact");
  if (negative) mpfr_neg(v.get(), v.get(), MPFR_RNDN);
  return v.to_double();
}

double MpfrFormat::round(double x, Saturation sat) const {
  if (std::isnan(x)) return kNaN;
  const double overflow = sat == Saturation::satfinite ? std::copysign(max_finite, x)
                          : has_infinity               ? std::copysign(kInf, x)
                                                       : kNaN;
  if (std::isinf(x)) return overflow;
  double r;
  {
    // MPFR's exponent of the smallest subnormal 2^(emin-p+1) is emin-p+2
    // (MPFR significands lie in [1/2, 1)); the MPFR manual's example for
    // mpfr_subnormalize emulates IEEE binary64 this way.
    MpfrEminGuard guard(emin() - precision + 2);
    Mpfr v(precision);
    int t = mpfr_set_d(v.get(), x, MPFR_RNDN);
    t = mpfr_subnormalize(v.get(), t, MPFR_RNDN);
    r = v.to_double();
  }
  return std::fabs(r) > max_finite ? overflow : r;
}

double MpfrFormat::next_up(double x) const {
  if (std::isnan(x)) return kNaN;
  if (x == kInf) return kInf;
  if (x == -kInf) return -max_finite;
  if (x == max_finite) return has_infinity ? kInf : kNaN;
  // Below the normal range the spacing is the smallest subnormal; MPFR's
  // nextabove knows no subnormals, so add it there.
  if (std::fabs(x) < min_normal() || x == -min_normal()) {
    Mpfr v(64);
    mpfr_set_d(v.get(), x, MPFR_RNDN);
    mpfr_add_d(v.get(), v.get(), min_subnormal(), MPFR_RNDN);
    const double r = v.to_double();
    return (r == 0 && x < 0) ? -0.0 : r;
  }
  Mpfr v(precision);
  if (mpfr_set_d(v.get(), x, MPFR_RNDN) != 0) throw std::logic_error("next_up: not a value of the format");
  mpfr_nextabove(v.get());
  return v.to_double();
}

int MpfrFormat::exponent(double x) {
  Mpfr v(64);
  mpfr_set_d(v.get(), x, MPFR_RNDN);
  return int(mpfr_get_exp(v.get())) - 1;
}

}  // namespace ulpscope::test
