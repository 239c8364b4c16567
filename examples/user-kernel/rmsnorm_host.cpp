#include <algorithm>
#include <cmath>
#include <cstring>

#include "rmsnorm.hpp"

namespace rmsnorm {
namespace {

double from_bf16(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t(b) << 16;  // bf16 is the top half of an fp32
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// RN_bf16(v), rounded once from the double (going through fp32 first would
// round twice): 8 significant bits, fp32's exponent range, subnormals below
// 2^-126.
std::uint16_t to_bf16(double v) {
  if (std::isnan(v)) return 0x7FC0;
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  const int quantum = std::max(std::ilogb(a), -126) - 7;
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);  // ties to even
  if (rounded > 0x1.FEp127) return std::uint16_t(sign | 0x7F80);  // beyond the largest finite bf16
  const float f = float(rounded);  // exact: at most 8 significant bits
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return std::uint16_t(sign | (bits >> 16));
}

}  // namespace

void rmsnorm_bf16_host(const std::uint16_t* x, const std::uint16_t* gamma, std::uint16_t* y, std::int64_t rows,
                       std::int64_t cols, double eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint16_t* row = x + r * cols;
#if RMSNORM_SUMSQ_IN_BF16
    // x*x rounded to bf16, then the sum rounded to bf16: __hmul, __hadd.
    std::uint16_t sumsq = 0;
    for (std::int64_t i = 0; i < cols; ++i) {
      const double v = from_bf16(row[i]);
      sumsq = to_bf16(from_bf16(sumsq) + from_bf16(to_bf16(v * v)));
    }
    const double ss = from_bf16(sumsq);
#else
    // Squares of bf16 values are exact in fp64 (16 significant bits), and
    // fp64 has the range for bf16's largest squares (2^256).
    double ss = 0;
    for (std::int64_t i = 0; i < cols; ++i) {
      const double v = from_bf16(row[i]);
      ss += v * v;
    }
#endif
    const double inv_rms = 1.0 / std::sqrt(ss / double(cols) + eps);
    for (std::int64_t i = 0; i < cols; ++i) y[r * cols + i] = to_bf16(from_bf16(row[i]) * inv_rms * from_bf16(gamma[i]));
  }
}

}  // namespace rmsnorm
