#pragma once
// Every arithmetic operation a kernel and its CPU model perform, spelled once
// with its rounding: round to nearest, ties to even, no contraction. On the
// device these are CUDA's _rn intrinsics, which nvcc never fuses into an FMA;
// on the host the plain operators, built with -ffp-contract=off (docs/spec.md,
// "Kernel shapes": the model matches the kernel only for correctly rounded
// operations).
#include <cmath>
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"

namespace ulpscope::rn {

#if defined(__CUDA_ARCH__)
ULPSCOPE_HD inline float add(float a, float b) { return __fadd_rn(a, b); }
ULPSCOPE_HD inline float sub(float a, float b) { return __fsub_rn(a, b); }
ULPSCOPE_HD inline float mul(float a, float b) { return __fmul_rn(a, b); }
ULPSCOPE_HD inline float div(float a, float b) { return __fdiv_rn(a, b); }
ULPSCOPE_HD inline float sqrt(float a) { return __fsqrt_rn(a); }
ULPSCOPE_HD inline float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
ULPSCOPE_HD inline double add(double a, double b) { return __dadd_rn(a, b); }
ULPSCOPE_HD inline double sub(double a, double b) { return __dsub_rn(a, b); }
ULPSCOPE_HD inline double mul(double a, double b) { return __dmul_rn(a, b); }
ULPSCOPE_HD inline double div(double a, double b) { return __ddiv_rn(a, b); }
ULPSCOPE_HD inline double sqrt(double a) { return __dsqrt_rn(a); }
ULPSCOPE_HD inline double fma(double a, double b, double c) { return __fma_rn(a, b, c); }
// Integer counts to the accumulator's precision, rounded to nearest.
ULPSCOPE_HD inline float to_float(std::int64_t n) { return __ll2float_rn(n); }
ULPSCOPE_HD inline double to_double(std::int64_t n) { return __ll2double_rn(n); }
ULPSCOPE_HD inline float narrow(double x) { return __double2float_rn(x); }
#else
inline float add(float a, float b) { return a + b; }
inline float sub(float a, float b) { return a - b; }
inline float mul(float a, float b) { return a * b; }
inline float div(float a, float b) { return a / b; }
inline float sqrt(float a) { return std::sqrt(a); }
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
inline double add(double a, double b) { return a + b; }
inline double sub(double a, double b) { return a - b; }
inline double mul(double a, double b) { return a * b; }
inline double div(double a, double b) { return a / b; }
inline double sqrt(double a) { return std::sqrt(a); }
inline double fma(double a, double b, double c) { return std::fma(a, b, c); }
inline float to_float(std::int64_t n) { return static_cast<float>(n); }
inline double to_double(std::int64_t n) { return static_cast<double>(n); }
inline float narrow(double x) { return static_cast<float>(x); }
#endif

// |x|: the sign bit cleared (abs.f32, an operand modifier on the GPU; fabs).
#if defined(__CUDA_ARCH__)
ULPSCOPE_HD inline float abs(float x) { return fabsf(x); }
ULPSCOPE_HD inline double abs(double x) { return fabs(x); }
#else
inline float abs(float x) { return std::fabs(x); }
inline double abs(double x) { return std::fabs(x); }
#endif

// IEEE 754-2019 maximum and minimum: NaN if either is NaN, +0 > -0. On sm_80
// and later one instruction, max.NaN.f32 / min.NaN.f32 (PTX ISA, "Floating
// Point Instructions: max", whose semantics order +0.0 above -0.0), which
// returns the canonical NaN 0x7FFFFFFF; the host and older GPUs spell it out.
ULPSCOPE_HD inline float canonical_nan() { return detail::float_from_bits(0x7FFFFFFFu); }
ULPSCOPE_HD inline float maximum(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  if (a != a || b != b) return canonical_nan();
  if (a == b) return (detail::float_bits(a) >> 31) ? b : a;
  return a > b ? a : b;
#endif
}
ULPSCOPE_HD inline float minimum(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float d;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  if (a != a || b != b) return canonical_nan();
  if (a == b) return (detail::float_bits(a) >> 31) ? a : b;
  return a < b ? a : b;
#endif
}

}  // namespace ulpscope::rn
