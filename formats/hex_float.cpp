#include "formats/hex_float.hpp"

#include <fmt/printf.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace ulpscope {

std::string hex_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::sprintf("%a", x);
}

std::optional<double> parse_hex_float(std::string_view s) {
  if (s == "nan") return std::nan("");
  if (s == "inf") return HUGE_VAL;
  if (s == "-inf") return -HUGE_VAL;
  const bool neg = !s.empty() && s.front() == '-';
  const std::string_view body = neg ? s.substr(1) : s;
  if (body.size() < 3 || body.substr(0, 2) != "0x") return std::nullopt;
  const std::string text(s);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

}  // namespace ulpscope
