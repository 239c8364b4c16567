// Agreement with NVIDIA's own conversions, compiled for the host from
// cuda_fp16.h, cuda_bf16.h and cuda_fp8.h: every bit pattern decodes to the
// same value, and every value, every midpoint between neighbours (including
// the overflow threshold), the doubles and floats next to each midpoint, and
// random doubles encode to the same pattern, in both fp8 saturation modes.
//
// NaN is compared as "both NaN": the fp8 patterns differ. CUDA 13's
// __nv_cvt_double_to_fp8 keeps the input's sign on NaN (E4M3: 0x7F | sign)
// and builds the E5M2 NaN as 0x7E | the top two fraction bits of the double
// (0x7E for the default quiet NaN 0x7FF8..., 0x7F through
// __nv_cvt_float_to_fp8, which first makes every float NaN 0x7FFFFFFF);
// encode<F> always returns F::nan_bits (0x7F for both fp8 formats). For fp16
// and bf16 both sides give 0x7FFF whatever the sign (checked below).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "formats/binary_format.hpp"
#include "mismatches.hpp"
#include "pattern_kind.hpp"
#include "conversion_inputs.hpp"
#include "spec_formats.hpp"

namespace ulpscope::test {
namespace {

// NVIDIA's conversion of one input, as a pattern of F.
using CudaEncode = std::uint32_t (*)(double x, Saturation sat);

struct Conversion {
  const char* name;
  CudaEncode cuda;
  bool takes_float;    // the input is first rounded to float (as the caller would)
  bool has_saturation; // fp8 only; the IEEE ones only overflow to Inf
};

template <class F>
void expect_agreement(const Conversion& c) {
  Mismatches bad;
  std::size_t compared = 0;
  for (double x : inputs_for<F>()) {
    const double in = c.takes_float ? double(static_cast<float>(x)) : x;
    for (Saturation sat : {Saturation::nosat, Saturation::satfinite}) {
      if (sat == Saturation::satfinite && !c.has_saturation) continue;
      const std::uint32_t theirs = c.cuda(in, sat);
      const std::uint32_t ours = encode<F>(in, sat);
      const bool agree = kind_of<F>(ours) == Kind::nan ? kind_of<F>(theirs) == Kind::nan : theirs == ours;
      if (!agree)
        bad.add(fmt::format("{}({}, {}) = {}, encode {}", c.name, show(in), to_string(sat), show_bits(theirs),
                            show_bits(ours)));
      ++compared;
    }
  }
  EXPECT_GT(compared, std::size_t(1) << F::bits);
  EXPECT_NO_MISMATCHES(bad);
}

__nv_fp8_storage_t cuda_fp8(double x, Saturation sat, __nv_fp8_interpretation_t kind, bool via_float) {
  const __nv_saturation_t s = sat == Saturation::satfinite ? __NV_SATFINITE : __NV_NOSAT;
  return via_float ? __nv_cvt_float_to_fp8(static_cast<float>(x), s, kind) : __nv_cvt_double_to_fp8(x, s, kind);
}

std::uint16_t half_bits(__half h) { return static_cast<__half_raw>(h).x; }
std::uint16_t bf16_bits(__nv_bfloat16 h) { return static_cast<__nv_bfloat16_raw>(h).x; }

const Conversion kFp16[] = {
    {"__float2half_rn", [](double x, Saturation) -> std::uint32_t { return half_bits(__float2half_rn(float(x))); }, true, false},
    {"__double2half", [](double x, Saturation) -> std::uint32_t { return half_bits(__double2half(x)); }, false, false},
};
const Conversion kBf16[] = {
    {"__float2bfloat16_rn", [](double x, Saturation) -> std::uint32_t { return bf16_bits(__float2bfloat16_rn(float(x))); }, true, false},
    {"__double2bfloat16", [](double x, Saturation) -> std::uint32_t { return bf16_bits(__double2bfloat16(x)); }, false, false},
};
const Conversion kE4M3[] = {
    {"__nv_cvt_float_to_fp8", [](double x, Saturation s) -> std::uint32_t { return cuda_fp8(x, s, __NV_E4M3, true); }, true, true},
    {"__nv_cvt_double_to_fp8", [](double x, Saturation s) -> std::uint32_t { return cuda_fp8(x, s, __NV_E4M3, false); }, false, true},
};
const Conversion kE5M2[] = {
    {"__nv_cvt_float_to_fp8", [](double x, Saturation s) -> std::uint32_t { return cuda_fp8(x, s, __NV_E5M2, true); }, true, true},
    {"__nv_cvt_double_to_fp8", [](double x, Saturation s) -> std::uint32_t { return cuda_fp8(x, s, __NV_E5M2, false); }, false, true},
};

TEST(CudaHostConversions, Fp16Encode) { for (const auto& c : kFp16) expect_agreement<Fp16Format>(c); }
TEST(CudaHostConversions, Bf16Encode) { for (const auto& c : kBf16) expect_agreement<Bf16Format>(c); }
TEST(CudaHostConversions, Fp8E4M3Encode) { for (const auto& c : kE4M3) expect_agreement<Fp8E4M3Format>(c); }
TEST(CudaHostConversions, Fp8E5M2Encode) { for (const auto& c : kE5M2) expect_agreement<Fp8E5M2Format>(c); }

// Decoding: every pattern, NVIDIA's widening against decode<F>.
template <class F, class Widen>
void expect_same_decoding(const char* name, Widen widen) {
  Mismatches bad;
  for (std::uint32_t b = 0; b < (1u << F::bits); ++b) {
    const double theirs = widen(b);
    if (!same_value(theirs, decode<F>(b)))
      bad.add(fmt::format("{}({}) = {}, decode {}", name, show_bits(b), show(theirs), show(decode<F>(b))));
  }
  EXPECT_NO_MISMATCHES(bad);
}

TEST(CudaHostConversions, EveryPatternDecodesTheSame) {
  expect_same_decoding<Fp16Format>("__half2float", [](std::uint32_t b) {
    __half_raw r;
    r.x = static_cast<unsigned short>(b);
    return double(__half2float(__half(r)));
  });
  expect_same_decoding<Bf16Format>("__bfloat162float", [](std::uint32_t b) {
    __nv_bfloat16_raw r;
    r.x = static_cast<unsigned short>(b);
    return double(__bfloat162float(__nv_bfloat16(r)));
  });
  // Every fp8 value is an fp16 value: widen through fp16 and decode that.
  expect_same_decoding<Fp8E4M3Format>("__nv_cvt_fp8_to_halfraw(E4M3)", [](std::uint32_t b) {
    return decode<Fp16Format>(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E4M3).x);
  });
  expect_same_decoding<Fp8E5M2Format>("__nv_cvt_fp8_to_halfraw(E5M2)", [](std::uint32_t b) {
    return decode<Fp16Format>(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E5M2).x);
  });
}

// fp16 and bf16 to fp8, for every fp16 and every bf16 pattern, both modes.
template <class From, class To>
void expect_narrowing(const char* name, __nv_fp8_interpretation_t kind,
                      __nv_fp8_storage_t (*cuda)(std::uint16_t, __nv_saturation_t, __nv_fp8_interpretation_t)) {
  Mismatches bad;
  for (std::uint32_t b = 0; b < (1u << From::bits); ++b)
    for (Saturation sat : {Saturation::nosat, Saturation::satfinite}) {
      const std::uint32_t theirs =
          cuda(static_cast<std::uint16_t>(b), sat == Saturation::satfinite ? __NV_SATFINITE : __NV_NOSAT, kind);
      const std::uint32_t ours = encode<To>(decode<From>(b), sat);
      const bool agree = kind_of<To>(ours) == Kind::nan ? kind_of<To>(theirs) == Kind::nan : theirs == ours;
      if (!agree)
        bad.add(fmt::format("{}({}, {}) = {}, encode {}", name, show_bits(b), to_string(sat), show_bits(theirs),
                            show_bits(ours)));
    }
  EXPECT_NO_MISMATCHES(bad);
}

__nv_fp8_storage_t from_half(std::uint16_t b, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  __half_raw r;
  r.x = b;
  return __nv_cvt_halfraw_to_fp8(r, s, k);
}
__nv_fp8_storage_t from_bf16(std::uint16_t b, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  __nv_bfloat16_raw r;
  r.x = b;
  return __nv_cvt_bfloat16raw_to_fp8(r, s, k);
}

TEST(CudaHostConversions, EveryFp16AndBf16PatternNarrowsToFp8TheSame) {
  expect_narrowing<Fp16Format, Fp8E4M3Format>("__nv_cvt_halfraw_to_fp8(E4M3)", __NV_E4M3, from_half);
  expect_narrowing<Fp16Format, Fp8E5M2Format>("__nv_cvt_halfraw_to_fp8(E5M2)", __NV_E5M2, from_half);
  expect_narrowing<Bf16Format, Fp8E4M3Format>("__nv_cvt_bfloat16raw_to_fp8(E4M3)", __NV_E4M3, from_bf16);
  expect_narrowing<Bf16Format, Fp8E5M2Format>("__nv_cvt_bfloat16raw_to_fp8(E5M2)", __NV_E5M2, from_bf16);
}

// The canonical NaN of each format, where CUDA and encode agree exactly.
TEST(CudaHostConversions, CanonicalNaNOfFp16AndBf16) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(half_bits(__float2half_rn(nan)), Fp16Format::nan_bits);
  EXPECT_EQ(bf16_bits(__float2bfloat16_rn(nan)), Bf16Format::nan_bits);
  EXPECT_EQ(half_bits(__float2half_rn(-nan)), Fp16Format::nan_bits);
  EXPECT_EQ(bf16_bits(__float2bfloat16_rn(-nan)), Bf16Format::nan_bits);
  EXPECT_EQ(__nv_cvt_float_to_fp8(nan, __NV_NOSAT, __NV_E4M3), Fp8E4M3Format::nan_bits);
}

}  // namespace
}  // namespace ulpscope::test
