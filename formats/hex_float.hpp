#pragma once
// docs/spec.md, "The report": hex-floats in C's %a form ("0x1.8p+3",
// "-0x0p+0"); infinities and NaN as "inf", "-inf", "nan".
#include <optional>
#include <string>
#include <string_view>

namespace ulpscope {

std::string hex_float(double x);

// The inverse, for reading reports back (the CI gate): accepts what hex_float
// writes; nullopt for anything else.
std::optional<double> parse_hex_float(std::string_view s);

}  // namespace ulpscope
