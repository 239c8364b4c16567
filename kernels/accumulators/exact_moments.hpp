#pragma once
// The exact population variance from two exact sums (exact_sum.hpp): S1 = sum
// x on the grid 2^q and S2 = sum x^2 on 2^(2q), so that
//   var = (n S2 - S1^2) / n^2
// is a quotient of integers on 2^(2q). The numerator is formed exactly in
// 32-bit digits (schoolbook products, each split into its two halves so that
// digit sums stay far below 2^63), scaled by 2^256, divided by n twice
// (floor(floor(N / n) / n) = floor(N / n^2), and the division is exact only
// if both are), the remainders jammed into the last bit, and rounded once:
// correctly rounded, as the exact sum and mean are, with no cancellation
// (Chan, Golub, LeVeque 1983 warn about n S2 - S1^2 in floating point; in
// integers it is exact).
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/out_format.hpp"

namespace ulpscope {

template <class A1, class A2>
struct ExactVariance {
  static_assert(A2::low == 2 * A1::low, "S2's grid is the square of S1's");
  // Digits of n S2 - S1^2 (S1^2: 2 D1 digits; n S2: D2 + 2), one for the
  // carries, and 8 below for the scaling by 2^256.
  static constexpr int kScale = 8;
  static constexpr int kNumerator = (2 * A1::digits > A2::digits + 2 ? 2 * A1::digits : A2::digits + 2) + 1;
  using Wide = ExactSumOf<A2::low - 32 * kScale, kNumerator + kScale, 0>;

  // Adds v * 2^(32 k) on Wide's scaled grid, v below 2^64, as two digits.
  ULPSCOPE_HD static void add_at(typename Wide::Partial& x, int k, std::uint64_t v, bool negate) {
    const auto lo = std::int64_t(v & 0xFFFFFFFFull), hi = std::int64_t(v >> 32);
    x.limb[kScale + k] += negate ? -lo : lo;
    x.limb[kScale + k + 1] += negate ? -hi : hi;
  }

  // RN_F(var) for n >= 1, and RN_fp64(var) in `in_fp64`; NaN where either
  // sum holds NaN or an infinity (inf - inf), or where n S2 < S1^2, which
  // cannot happen for sums of x and x^2 (Cauchy-Schwarz) and would mean a bug.
  ULPSCOPE_HD static double round(const typename A1::Partial& p1, const typename A2::Partial& p2, std::int64_t n,
                                  OutFormat f, double& in_fp64) {
    const double nan = detail::double_from_bits(0x7FF8000000000000ull);
    constexpr std::uint32_t nonfinite = A1::kNan | A1::kPosInf | A1::kNegInf;
    in_fp64 = nan;
    if ((p1.flags | p2.flags) & nonfinite) return nan;
    typename A1::Partial m1 = p1;
    typename A2::Partial m2 = p2;
    A1::carried_magnitude(m1);  // |S1|: S1^2 does not need the sign
    if (A2::carried_magnitude(m2)) return nan;
    // Every digit is below 2^32, the top ones too: the layouts leave two
    // spare digits above any sum of 2^64 terms (ExactLayout).
    typename Wide::Partial x = Wide::identity();
    const auto un = std::uint64_t(n);
    ULPSCOPE_UNROLL
    for (int k = 0; k < A2::digits; ++k) {
      const auto d = std::uint64_t(m2.limb[k]);
      add_at(x, k, d * (un & 0xFFFFFFFFull), false);
      add_at(x, k + 1, d * (un >> 32), false);
    }
    ULPSCOPE_UNROLL
    for (int i = 0; i < A1::digits; ++i) {
      ULPSCOPE_UNROLL
      for (int j = 0; j < A1::digits; ++j)
        add_at(x, i + j, std::uint64_t(m1.limb[i]) * std::uint64_t(m1.limb[j]), true);
    }
    Wide::carry(x);
    if (x.limb[kNumerator + kScale - 1] < 0) return nan;
    const bool r1 = Wide::divide(x, un);
    const bool r2 = Wide::divide(x, un);
    // The quotient is 0 or at least 2^256 / n^2 > 2^130 units: its last bit
    // lies far below any rounding position.
    if (r1 || r2) x.limb[0] |= 1;
    std::uint64_t w;
    int e;
    bool sticky;
    if (!Wide::leading_bits(x, w, e, sticky)) return in_fp64 = 0.0;
    in_fp64 = Wide::round_bits(w, e, sticky, false, out_format(Dtype::fp64));
    return Wide::round_bits(w, e, sticky, false, f);
  }
};

}  // namespace ulpscope
