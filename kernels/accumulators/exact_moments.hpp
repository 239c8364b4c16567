#pragma once
// The exact population variance from two exact sums (exact_sum.hpp): S1 = sum
// x on the grid 2^q and S2 = sum x^2 on 2^(2q), so that
//   var = (n S2 - S1^2) / n^2
// is a quotient of integers on 2^(2q). The numerator is formed exactly in
// 32-bit digits (schoolbook products, each split into its two halves so that
// digit sums stay far below 2^63; S1^2's cross products once, doubled), and
// only its top seven digits V (and whether any digit under them is nonzero)
// are divided by n twice: floor(floor(V / n) / n) = floor(V / n^2) is the
// numerator's quotient down to the window's last digit (long division's top
// digits depend on the dividend's top digits alone), at least 2^66 since
// V >= 2^192 and n^2 < 2^126, and the rest of the quotient is zero exactly
// when both remainders and the digits under V are. That is jammed into the
// last bit and rounded once: correctly rounded, as the exact sum and mean
// are, with no cancellation (Chan, Golub, LeVeque 1983 warn about
// n S2 - S1^2 in floating point; in integers it is exact). The window keeps
// short the code that the finish's one thread runs: two divisions of seven
// digits instead of the whole numerator's 35 (27 digits scaled by 2^256) for
// fp32 (docs/perf-h100.md, "exact_moments.hpp").
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/out_format.hpp"

namespace ulpscope {

template <class A1, class A2>
struct ExactVariance {
  static_assert(A2::low == 2 * A1::low, "S2's grid is the square of S1's");
  // Digits of n S2 - S1^2 (S1^2: 2 D1 digits; n S2: D2 + 2) and one for the
  // carries, on S2's grid.
  static constexpr int kNumerator = (2 * A1::digits > A2::digits + 2 ? 2 * A1::digits : A2::digits + 2) + 1;
  using Numerator = ExactSumOf<A2::low, kNumerator, 0>;
  static constexpr int kWindow = 7;  // 2^(32 * 6) / n^2 >= 2^66 for any n < 2^63
  using Window = ExactSumOf<0, kWindow, 0>;

  // Adds v * 2^(32 k), v below 2^64, as two digits, times `times` (1, 2 or -1, -2).
  ULPSCOPE_HD static void add_at(typename Numerator::Partial& x, int k, std::uint64_t v, int times) {
    x.limb[k] += times * std::int64_t(v & 0xFFFFFFFFull);
    x.limb[k + 1] += times * std::int64_t(v >> 32);
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
    typename Numerator::Partial x = Numerator::identity();
    const auto un = std::uint64_t(n);
    ULPSCOPE_UNROLL
    for (int k = 0; k < A2::digits; ++k) {
      const auto d = std::uint64_t(m2.limb[k]);
      add_at(x, k, d * (un & 0xFFFFFFFFull), 1);
      add_at(x, k + 1, d * (un >> 32), 1);
    }
    ULPSCOPE_UNROLL
    for (int i = 0; i < A1::digits; ++i) {
      const auto di = std::uint64_t(m1.limb[i]);
      add_at(x, 2 * i, di * di, -1);
      ULPSCOPE_UNROLL
      for (int j = i + 1; j < A1::digits; ++j) add_at(x, i + j, di * std::uint64_t(m1.limb[j]), -2);
    }
    Numerator::carry(x);
    if (x.limb[kNumerator - 1] < 0) return nan;
    std::uint64_t t[kWindow];
    bool under;
    const int top = Numerator::top_digits(x, t, under);
    if (top < 0) return in_fp64 = 0.0;
    typename Window::Partial q = Window::identity();
    ULPSCOPE_UNROLL
    for (int j = 0; j < kWindow; ++j) q.limb[kWindow - 1 - j] = std::int64_t(t[j]);
    const bool r1 = Window::divide(q, un);
    const bool r2 = Window::divide(q, un);
    if (r1 || r2 || under) q.limb[0] |= 1;  // 66 or more bits under the leading one: below any rounding position
    std::uint64_t w = 0;
    int e = 0;
    bool sticky = false;
    Window::leading_bits(q, w, e, sticky);  // q is not 0
    e += A2::low + 32 * (top - kWindow + 1);  // the window's last digit is the numerator's digit top - 6
    in_fp64 = Window::round_bits(w, e, sticky, false, out_format(Dtype::fp64));
    return Window::round_bits(w, e, sticky, false, f);
  }
};

}  // namespace ulpscope
