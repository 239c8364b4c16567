#include "formats/round_to_dtype.hpp"

#include <cmath>

#include "formats/binary_format.hpp"

namespace ulpscope {
namespace {

template <class F>
double round_via(double x, Saturation sat) {
  return decode<F>(encode<F>(x, sat));
}

}  // namespace

double round_to_dtype(double x, Dtype d, Saturation sat) {
  switch (d) {
    case Dtype::fp64: return x;
    // Through the same rule as the narrow formats, so that satfinite clamps
    // here too (the host cast only knows overflow to Inf).
    case Dtype::fp32: return round_via<Fp32Format>(x, sat);
    case Dtype::fp16: return round_via<Fp16Format>(x, sat);
    case Dtype::bf16: return round_via<Bf16Format>(x, sat);
    case Dtype::fp8_e4m3: return round_via<Fp8E4M3Format>(x, sat);
    case Dtype::fp8_e5m2: return round_via<Fp8E5M2Format>(x, sat);
  }
  return std::nan("");
}

bool is_representable(double x, Dtype d) {
  if (std::isnan(x)) return true;  // every format has a NaN
  if (std::isinf(x)) return format_info(d).has_infinity;
  return round_to_dtype(x, d, Saturation::nosat) == x;
}

double ulp_in(double x, Dtype d) {
  if (!std::isfinite(x)) return std::nan("");
  const FormatInfo& f = format_info(d);
  if (x == 0) return f.min_subnormal;
  const int e = std::ilogb(x);
  return std::ldexp(1.0, (e > f.emin ? e : f.emin) - f.precision + 1);
}

}  // namespace ulpscope
