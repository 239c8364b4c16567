#include "reference/round_to_format.hpp"

#include <gmp.h>

#include <cmath>
#include <limits>

namespace ulpscope {
namespace {

// MPFR's exponent range, set for the duration of one rounding and restored
// (MPFR keeps it per thread).
class ExponentRange {
 public:
  ExponentRange(mpfr_exp_t emin, mpfr_exp_t emax) : emin_(mpfr_get_emin()), emax_(mpfr_get_emax()) {
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
  }
  ~ExponentRange() {
    mpfr_set_emin(emin_);
    mpfr_set_emax(emax_);
  }
  ExponentRange(const ExponentRange&) = delete;
  ExponentRange& operator=(const ExponentRange&) = delete;

 private:
  mpfr_exp_t emin_, emax_;
};

double overflow_value(bool negative, Dtype out, Saturation sat) {
  const FormatInfo& f = format_info(out);
  const bool saturates = is_fp8(out) && sat == Saturation::satfinite;
  if (saturates) return negative ? -f.max_finite : f.max_finite;
  if (!f.has_infinity) return std::numeric_limits<double>::quiet_NaN();
  return negative ? -HUGE_VAL : HUGE_VAL;
}

}  // namespace

double round_to_format(const ExactReal& x, Dtype out, Saturation sat) {
  if (x.is_nan()) return std::numeric_limits<double>::quiet_NaN();
  if (x.is_inf()) return overflow_value(x.signbit(), out, sat);
  if (x.is_zero()) return x.signbit() ? -0.0 : 0.0;
  const FormatInfo& f = format_info(out);
  mpfr_t y;
  mpfr_init2(y, f.precision);
  // Round to p bits in MPFR's unbounded range, then bring the result into the
  // format's range: MPFR writes x = 0.1b... * 2^E, so the IEEE exponent e is
  // E - 1, the largest E is emax + 1 and the smallest subnormal 2^(emin-p+1)
  // has E = emin - p + 2. mpfr_check_range and mpfr_subnormalize take the
  // first rounding's ternary value, so nothing is rounded twice (MPFR manual,
  // 5.2, the binary64 emulation example).
  int ternary = mpfr_set(y, x.get(), MPFR_RNDN);
  {
    const ExponentRange range(f.emin - f.precision + 2, f.emax + 1);
    ternary = mpfr_check_range(y, ternary, MPFR_RNDN);
    mpfr_subnormalize(y, ternary, MPFR_RNDN);
  }
  double r = mpfr_get_d(y, MPFR_RNDN);  // exact: y has at most 53 bits and double's range
  mpfr_clear(y);
  // E4M3's top binade stops at 448 (1.11 * 2^8): 480 exists in MPFR's view
  // but is the NaN pattern; anything that rounds above the largest finite
  // value overflows.
  if (std::isinf(r) || std::fabs(r) > f.max_finite) return overflow_value(std::signbit(r), out, sat);
  return r;
}

std::string exact_decimal(const ExactReal& x, bool is_exact) {
  if (x.is_nan()) return "nan";
  if (x.is_inf()) return x.signbit() ? "-inf" : "inf";
  if (x.is_zero()) return x.signbit() ? "-0" : "0";
  constexpr int kDigits = kDecimalDigits;
  // x = m * 2^e exactly; for e < 0 its decimal expansion is m * 5^-e * 10^e.
  mpz_t m, digits;
  mpz_inits(m, digits, nullptr);
  const mpfr_exp_t e = mpfr_get_z_2exp(m, x.get());
  const bool negative = mpz_sgn(m) < 0;
  mpz_abs(m, m);
  long point_shift = 0;  // value = digits * 10^point_shift
  if (e >= 0) {
    mpz_mul_2exp(digits, m, static_cast<mp_bitcnt_t>(e));
  } else {
    mpz_ui_pow_ui(digits, 5, static_cast<unsigned long>(-e));
    mpz_mul(digits, digits, m);
    point_shift = e;
  }
  std::string s(mpz_sizeinbase(digits, 10) + 2, '\0');
  mpz_get_str(s.data(), 10, digits);
  s.resize(std::char_traits<char>::length(s.c_str()));
  mpz_clears(m, digits, nullptr);
  while (s.size() > 1 && s.back() == '0') {  // trailing zeros belong to the exponent
    s.pop_back();
    ++point_shift;
  }
  std::string mantissa = s;
  long exponent10 = point_shift + static_cast<long>(s.size()) - 1;  // of the leading digit
  if (!is_exact || s.size() > static_cast<std::size_t>(kDigits)) {
    // Too long to print exactly: 40 significant digits, rounded to nearest.
    mpfr_exp_t e10 = 0;
    char* str = mpfr_get_str(nullptr, &e10, 10, kDigits, x.get(), MPFR_RNDN);
    mantissa = str + (str[0] == '-' ? 1 : 0);
    mpfr_free_str(str);
    exponent10 = static_cast<long>(e10) - 1;
  }
  std::string out = negative ? "-" : "";
  out += mantissa[0];
  if (mantissa.size() > 1) {
    out += '.';
    out.append(mantissa, 1);
  }
  out += 'e';
  out += exponent10 < 0 ? "-" : "+";
  const long a = exponent10 < 0 ? -exponent10 : exponent10;
  if (a < 10) out += "0";
  out += std::to_string(a);
  return out;
}

}  // namespace ulpscope
