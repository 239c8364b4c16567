#pragma once
// A value of a format written in decimal for people: as few significant
// digits as read it back as the same value of that format (rounding to
// nearest, ties to even), so that "0.1" is shown for fp32 0.1 rather than
// its hex-float or 17 digits of the double that holds it. A whole number
// below 10^16 is written in full ("65504", not "65500").
#include <string>

#include "formats/dtype.hpp"

namespace ulpscope {

// v must be a value of d. Written without an exponent where the leading
// digit's decimal exponent is in [-5, 16) ("4448", "0.1", "-2.5"), else in
// scientific form ("1.5e-07"); "-0", "inf", "-inf", "nan" as such.
std::string round_trip_decimal(double v, Dtype d);

}  // namespace ulpscope
