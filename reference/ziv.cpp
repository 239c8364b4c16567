#include "reference/ziv.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "reference/round_to_format.hpp"

namespace ulpscope {

bool same_rounding(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

ZivResult ziv_round(const std::function<Approximation(mpfr_prec_t)>& evaluate, Dtype out, Saturation sat,
                    mpfr_prec_t start, mpfr_prec_t max_precision, bool decide_decimal) {
  ZivResult result;
  for (mpfr_prec_t p = start; p <= max_precision; p *= 2) {
    Approximation a = evaluate(p);
    ++result.evaluations;
    result.precision = p;
    bool decided = a.exact || !mpfr_number_p(a.value.get());
    if (!decided && mpfr_zero_p(a.value.get()) == 0 &&
        a.error_exponent <= mpfr_get_exp(a.value.get()) - kCertifiedBits) {
      ExactReal radius(2);
      mpfr_set_ui_2exp(radius.get(), 1, a.error_exponent, MPFR_RNDN);
      const ExactReal lo = exact_sub(a.value, radius);
      const ExactReal hi = exact_add(a.value, radius);
      decided = same_rounding(round_to_format(lo, out, sat), round_to_format(hi, out, sat)) &&
                (!decide_decimal || exact_decimal(lo, false) == exact_decimal(hi, false));
    }
    if (decided) {
      result.value = std::move(a.value);
      result.exact = a.exact;
      return result;
    }
  }
  throw std::runtime_error("Ziv's loop passed " + std::to_string(max_precision) +
                           " bits without deciding the rounding");
}

}  // namespace ulpscope
