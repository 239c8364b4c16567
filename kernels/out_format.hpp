#pragma once
// The final rounding of a kernel's result into its output format, chosen at
// run time, for host and device alike (formats/round_to_dtype.cpp is the
// host-only twin). A float or double result is rounded once, to nearest, ties
// to even, with subnormals; fp8 outputs overflow as the spec's Saturation says.
#include "formats/binary_format.hpp"
#include "formats/dtype.hpp"
#include "formats/host_device.hpp"

namespace ulpscope {

// RN_F(x) as a double. NaN stays NaN; fp64 is x itself.
ULPSCOPE_HD inline double round_to_out(double x, Dtype out, Saturation sat) {
  switch (out) {
    case Dtype::fp64: return x;
    case Dtype::fp32: return decode<Fp32Format>(encode<Fp32Format>(x));
    case Dtype::fp16: return decode<Fp16Format>(encode<Fp16Format>(x));
    case Dtype::bf16: return decode<Bf16Format>(encode<Bf16Format>(x));
    case Dtype::fp8_e4m3: return decode<Fp8E4M3Format>(encode<Fp8E4M3Format>(x, sat));
    case Dtype::fp8_e5m2: return decode<Fp8E5M2Format>(encode<Fp8E5M2Format>(x, sat));
  }
  return x;
}

// The parameters the exact accumulator needs to round its integer state
// straight into a format (no intermediate double, so no double rounding).
struct OutFormat {
  int precision;        // p
  int emin;             // smallest normal exponent
  double max_finite;
  bool has_infinity;
};

ULPSCOPE_HD inline OutFormat out_format(Dtype d) {
  switch (d) {
    case Dtype::fp64: return {53, -1022, 1.7976931348623157e308, true};
    case Dtype::fp32: return {24, -126, 3.4028234663852886e38, true};
    case Dtype::fp16: return {11, -14, 65504.0, true};
    case Dtype::bf16: return {8, -126, 3.3895313892515355e38, true};
    case Dtype::fp8_e4m3: return {4, -6, 448.0, false};
    case Dtype::fp8_e5m2: return {3, -14, 57344.0, true};
  }
  return {53, -1022, 1.7976931348623157e308, true};
}

}  // namespace ulpscope
