#include "formats/round_trip_decimal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "formats/round_to_dtype.hpp"

namespace ulpscope {
namespace {

// Whether the decimal text (of a positive number) is read back as a, a
// positive value of d, by rounding to nearest. For formats narrower than
// fp64, a's rounding interval is bounded by the midpoints to its
// neighbours, which are doubles (p + 1 <= 25 bits); the text is accepted
// only when the double nearest to it lies strictly inside, which proves
// that the text does (rounding is monotonic and the bounds are doubles).
// A text whose double is a bound is refused, so a tie never decides.
bool reads_back(const std::string& text, double a, Dtype d) {
  const double x = std::strtod(text.c_str(), nullptr);
  if (d == Dtype::fp64) return x == a;  // strtod rounds correctly
  const FormatInfo& f = format_info(d);
  const double up = ulp_in(a, d);
  int exponent = 0;
  const bool power_of_two = std::frexp(a, &exponent) == 0.5;
  const double down = power_of_two && a > f.min_normal ? up / 2 : up;
  return x > a - down / 2 && x < a + up / 2;
}

}  // namespace

std::string round_trip_decimal(double v, Dtype d) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  const std::string sign = v < 0 ? "-" : "";
  const double a = std::fabs(v);
  for (int digits = 1; digits <= 17; ++digits) {
    const std::string sci = fmt::format("{:.{}e}", a, digits - 1);
    if (!reads_back(sci, a, d)) continue;
    const int e = std::atoi(sci.c_str() + sci.find('e') + 1);  // the leading digit's exponent
    if (e < -5 || e >= 16) return sign + sci;
    // At least as many digits as sci, rounded at the same place or later,
    // so closer to a; when e >= digits, a is a whole number, written exactly.
    return sign + fmt::format("{:.{}f}", a, std::max(0, digits - 1 - e));
  }
  return sign + fmt::format("{:.16e}", a);  // 17 digits read back every double
}

}  // namespace ulpscope
