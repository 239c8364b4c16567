#pragma once
// An MPFR number that owns its precision: the exact value of a sum (as many
// bits as it needs) or a nonlinear reference carried at a working precision.
// A thin RAII wrapper rather than boost::multiprecision::mpfr_float, whose
// expressions round to a thread-wide default precision behind one's back.
#include <mpfr.h>

#include <algorithm>
#include <string>
#include <utility>

namespace ulpscope {

class ExactReal {
 public:
  explicit ExactReal(mpfr_prec_t precision = 64) { mpfr_init2(x_, precision); mpfr_set_zero(x_, 1); }
  static ExactReal from_double(double d) {
    ExactReal r(53);
    mpfr_set_d(r.x_, d, MPFR_RNDN);  // exact: 53 bits
    return r;
  }
  ExactReal(const ExactReal& o) {
    mpfr_init2(x_, mpfr_get_prec(o.x_));
    mpfr_set(x_, o.x_, MPFR_RNDN);
  }
  // A move takes the other's number, limbs and all, and leaves it without
  // one (no limbs: only destroyed or assigned to), so that moving the
  // references of a long scan allocates nothing (as Boost.Multiprecision's
  // mpfr_float_backend does).
  ExactReal(ExactReal&& o) noexcept : x_{o.x_[0]} { o.x_->_mpfr_d = nullptr; }
  ExactReal& operator=(ExactReal o) noexcept {
    std::swap(x_[0], o.x_[0]);
    return *this;
  }
  ~ExactReal() {
    if (x_->_mpfr_d != nullptr) mpfr_clear(x_);
  }

  mpfr_ptr get() { return x_; }
  mpfr_srcptr get() const { return x_; }
  mpfr_prec_t precision() const { return mpfr_get_prec(x_); }

  bool is_nan() const { return mpfr_nan_p(x_) != 0; }
  bool is_inf() const { return mpfr_inf_p(x_) != 0; }
  bool is_zero() const { return mpfr_zero_p(x_) != 0; }
  bool signbit() const { return mpfr_signbit(x_) != 0; }
  // Round to nearest double (for display and coarse arithmetic only).
  double to_double() const { return mpfr_get_d(x_, MPFR_RNDN); }

 private:
  mpfr_t x_;
};

}  // namespace ulpscope

namespace ulpscope {

// Exact arithmetic on ExactReals: the result gets as many bits as it needs.
// (MPFR rounds every operation to its destination's precision; these pick a
// precision at which nothing is rounded.) NaN and Inf follow IEEE.
inline ExactReal exact_add(const ExactReal& a, const ExactReal& b, int b_sign = 1) {
  auto low_exponent = [](const ExactReal& v) { return mpfr_get_exp(v.get()) - v.precision(); };
  mpfr_prec_t p = 2;
  if (mpfr_regular_p(a.get()) && mpfr_regular_p(b.get())) {
    const mpfr_exp_t top = std::max(mpfr_get_exp(a.get()), mpfr_get_exp(b.get()));
    const mpfr_exp_t bottom = std::min(low_exponent(a), low_exponent(b));
    p = static_cast<mpfr_prec_t>(top - bottom + 1);
  } else {
    p = std::max(a.precision(), b.precision());
  }
  ExactReal r(p);
  if (b_sign >= 0) mpfr_add(r.get(), a.get(), b.get(), MPFR_RNDN);
  else mpfr_sub(r.get(), a.get(), b.get(), MPFR_RNDN);
  return r;
}
inline ExactReal exact_sub(const ExactReal& a, const ExactReal& b) { return exact_add(a, b, -1); }

inline ExactReal exact_mul(const ExactReal& a, const ExactReal& b) {
  ExactReal r(a.precision() + b.precision());
  mpfr_mul(r.get(), a.get(), b.get(), MPFR_RNDN);
  return r;
}

inline ExactReal exact_from_uint(unsigned long n) {
  ExactReal r(64);
  mpfr_set_ui(r.get(), n, MPFR_RNDN);
  return r;
}

}  // namespace ulpscope
