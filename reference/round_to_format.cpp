#include "reference/round_to_format.hpp"

#include <gmp.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

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

// "-d.ddde+XX" from the digits and the exponent of the leading one.
std::string scientific(bool negative, const std::string& mantissa, long exponent10) {
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

// x (finite) as an exact fraction m * 2^e.
void set_fraction(mpq_t out, const ExactReal& x) {
  mpz_t m;
  mpz_init(m);
  const mpfr_exp_t e = mpfr_get_z_2exp(m, x.get());
  mpq_set_z(out, m);
  if (e >= 0) {
    mpq_mul_2exp(out, out, static_cast<mp_bitcnt_t>(e));
  } else {
    mpq_div_2exp(out, out, static_cast<mp_bitcnt_t>(-e));
  }
  mpz_clear(m);
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
  return scientific(negative, mantissa, exponent10);
}

std::string quotient_decimal(const ExactReal& a, const ExactReal& b) {
  if (!mpfr_number_p(a.get()) || !mpfr_number_p(b.get()) || b.is_zero())
    throw std::invalid_argument("quotient_decimal: a and b must be finite and b nonzero");
  if (a.is_zero()) return exact_decimal(a);
  // v = |a / b| as a fraction of integers.
  mpq_t v, scaled;
  mpz_t ten_power, q, twice_remainder;
  mpq_inits(v, scaled, nullptr);
  mpz_inits(ten_power, q, twice_remainder, nullptr);
  set_fraction(v, a);
  {
    mpq_t d;
    mpq_init(d);
    set_fraction(d, b);
    mpq_div(v, v, d);
    mpq_clear(d);
  }
  const bool negative = mpq_sgn(v) < 0;
  mpq_abs(v, v);
  // The leading digit's exponent: estimated from the digit counts, then
  // corrected so that 10^39 <= v * 10^(39 - e10) < 10^40.
  long e10 = long(mpz_sizeinbase(mpq_numref(v), 10)) - long(mpz_sizeinbase(mpq_denref(v), 10));
  const auto scale = [&](long e) {
    const long shift = kDecimalDigits - 1 - e;
    mpz_ui_pow_ui(ten_power, 10, static_cast<unsigned long>(shift < 0 ? -shift : shift));
    mpq_set(scaled, v);
    if (shift >= 0) {
      mpz_mul(mpq_numref(scaled), mpq_numref(scaled), ten_power);
    } else {
      mpz_mul(mpq_denref(scaled), mpq_denref(scaled), ten_power);
    }
    mpq_canonicalize(scaled);
    mpz_fdiv_q(q, mpq_numref(scaled), mpq_denref(scaled));  // floor
  };
  for (;;) {
    scale(e10);
    mpz_ui_pow_ui(ten_power, 10, kDecimalDigits);
    if (mpz_cmp(q, ten_power) >= 0) {
      ++e10;
      continue;
    }
    mpz_ui_pow_ui(ten_power, 10, kDecimalDigits - 1);
    if (mpz_cmp(q, ten_power) < 0) {
      --e10;
      continue;
    }
    break;
  }
  // Round the remainder r = scaled - q to nearest, ties to even: compare 2r with 1.
  mpz_mul(twice_remainder, q, mpq_denref(scaled));
  mpz_sub(twice_remainder, mpq_numref(scaled), twice_remainder);
  mpz_mul_2exp(twice_remainder, twice_remainder, 1);
  const int half = mpz_cmp(twice_remainder, mpq_denref(scaled));
  if (half > 0 || (half == 0 && mpz_odd_p(q))) mpz_add_ui(q, q, 1);
  mpz_ui_pow_ui(ten_power, 10, kDecimalDigits);
  if (mpz_cmp(q, ten_power) == 0) {  // 9.99...95 rounded up to 10.00...0
    mpz_ui_pow_ui(q, 10, kDecimalDigits - 1);
    ++e10;
  }
  std::string mantissa(mpz_sizeinbase(q, 10) + 2, '\0');
  mpz_get_str(mantissa.data(), 10, q);
  mantissa.resize(std::char_traits<char>::length(mantissa.c_str()));
  mpq_clears(v, scaled, nullptr);
  mpz_clears(ten_power, q, twice_remainder, nullptr);
  return scientific(negative, mantissa, e10);
}

}  // namespace ulpscope
