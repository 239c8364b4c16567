#pragma once
// The number formats of docs/spec.md ("Number formats") as run-time values: names,
// parameters, parsing. The value types themselves are in binary_format.hpp.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ulpscope {

enum class Dtype : std::uint8_t { fp64, fp32, fp16, bf16, fp8_e4m3, fp8_e5m2 };

// What an fp8 conversion does with values beyond the largest finite one, as in
// CUDA's __nv_cvt_float_to_fp8: __NV_SATFINITE clamps, __NV_NOSAT gives NaN
// (E4M3, which has no infinity) or Inf (E5M2). encode and round_to_dtype apply
// the same choice to every format; CUDA's fp16/bf16/fp32 conversions only
// know nosat (overflow to Inf).
enum class Saturation : std::uint8_t { satfinite, nosat };

struct FormatInfo {
  std::string_view name;
  int bits;           // storage width
  int precision;      // p, significand bits including the hidden one
  int emin;           // exponent of the smallest normal number
  int emax;           // exponent of the largest finite number
  bool has_infinity;  // E4M3 (FN) has none
  double max_finite;
  double min_normal;
  double min_subnormal;
};

// docs/spec.md, "Number formats". fp64 is an output format only.
const FormatInfo& format_info(Dtype d);

std::string_view to_string(Dtype d);
std::string_view to_string(Saturation s);
std::optional<Dtype> parse_dtype(std::string_view name);

// The formats a kernel reads (every format of SPEC but fp64), in SPEC order.
inline constexpr std::array<Dtype, 5> kInputDtypes = {Dtype::fp32, Dtype::fp16, Dtype::bf16,
                                                      Dtype::fp8_e4m3, Dtype::fp8_e5m2};
inline constexpr std::array<Dtype, 6> kOutputDtypes = {Dtype::fp64,     Dtype::fp32,
                                                       Dtype::fp16,     Dtype::bf16,
                                                       Dtype::fp8_e4m3, Dtype::fp8_e5m2};

// docs/spec.md, "Ops": the output format defaults to the input format, and to fp32
// for fp8 inputs (an fp8 sum is rarely stored as fp8).
constexpr Dtype default_out_dtype(Dtype in) {
  return (in == Dtype::fp8_e4m3 || in == Dtype::fp8_e5m2) ? Dtype::fp32 : in;
}

constexpr bool is_fp8(Dtype d) { return d == Dtype::fp8_e4m3 || d == Dtype::fp8_e5m2; }

}  // namespace ulpscope
