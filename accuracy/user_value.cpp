#include "accuracy/user_value.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <string>

#include "accuracy/metrics.hpp"
#include "formats/hex_float.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope {
namespace {

// Wide enough that rounding to odd here, then to nearest in any output
// format (p <= 53), is one correct rounding: Boldo and Melquiond, "Emulation
// of FMA and correctly rounded sums: proved algorithms using rounding to
// odd", IEEE Trans. Computers 57(4), 2008, Theorem 1 (needs 2 more bits).
constexpr mpfr_prec_t kReadBits = 128;

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UserValueError(fmt::format("bad --check value '{}': {}", text, why));
}

}  // namespace

double read_user_value(std::string_view text, Dtype out, bool* exact) {
  const std::string s(text);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front())))
    bad(text, "expected a decimal (4444, 4.448e3), a hex-float (0x1.16p+12), inf or nan");
  ExactReal x(kReadBits);
  char* end = nullptr;
  // Base 0: decimal, or hexadecimal after "0x" with a binary exponent 'p'.
  const int ternary = mpfr_strtofr(x.get(), s.c_str(), &end, 0, MPFR_RNDZ);
  if (end != s.c_str() + s.size())
    bad(text, "expected a decimal (4444, 4.448e3), a hex-float (0x1.16p+12), inf or nan");
  // Truncated and inexact: make the last bit 1 (rounding to odd), so that the
  // rounding below sees which side of any midpoint the text's value lies.
  if (ternary != 0 && mpfr_regular_p(x.get()) && mpfr_min_prec(x.get()) < kReadBits) {
    if (mpfr_signbit(x.get())) mpfr_nextbelow(x.get());
    else mpfr_nextabove(x.get());
  }
  const double v = round_to_format(x, out, Saturation::nosat);
  const bool finite_text = mpfr_number_p(x.get()) != 0;
  if (finite_text && !std::isfinite(v))
    bad(text, fmt::format("beyond {}'s largest finite value ({:g})", to_string(out), format_info(out).max_finite));
  if (x.is_inf() && !std::isinf(v)) bad(text, fmt::format("{} has no infinity", to_string(out)));
  if (exact) *exact = ternary == 0 && (x.is_nan() || mpfr_cmp_d(x.get(), v) == 0);
  return v;
}

UserValueCheck check_user_value(std::string label, std::string given, Op op, Dtype out, Saturation sat,
                                const Reference& reference) {
  UserValueCheck c;
  c.label = std::move(label);
  const double value = read_user_value(given, out, &c.given_exactly);
  c.given = std::move(given);
  c.value = hex_float(value);
  c.op = std::string(to_string(op));
  c.out_dtype = std::string(to_string(out));
  c.reference_rounded = hex_float(reference.rounded);
  c.reference_exact = decimal_of(reference);
  c.ulp_error = ulp_error(value, reference.exact, out, &c.error_note, sat);
  c.correctly_rounded = correctly_rounded(value, reference.rounded);
  return c;
}

}  // namespace ulpscope
