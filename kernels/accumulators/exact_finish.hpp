#pragma once
// The exact accumulator's finishing arithmetic on its long integer
// (exact_sum.hpp): carries, the leading bits, one rounding to a format (round
// to nearest, ties to even, subnormals, overflow), and the exact mean's
// division, norm2's square root and rms's sqrt(S / n + eps), each rounded
// once from the integer. It runs once per reduction, after the merges.
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/rolled_loop.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/out_format.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

// RN_F(+-(w / 2^63) * 2^e), w's leading one at bit 63, sticky: nonzero bits
// below w; infinities beyond f's largest finite value (round_to_out then
// applies the format's overflow rule). Out of line on the GPU: a finish calls
// it up to four times (the exact mean_var: mean and variance, each in f and
// in fp64), and each inlined copy is code for the finish's one thread to
// fetch, cold (exact_moments.hpp; docs/perf-h100.md, "exact_finish.hpp").
ULPSCOPE_HD ULPSCOPE_NOINLINE inline double round_scaled_bits(std::uint64_t w, int e, bool sticky, bool neg,
                                                             OutFormat f) {
  const double inf = detail::double_from_bits(0x7FF0000000000000ull);
  // Keep the bits at and above 2^q, q the quantum of f at e (docs/spec.md, "Metrics").
  const int q = (e > f.emin ? e : f.emin) - f.precision + 1;
  const int kept = e - q + 1;
  std::uint64_t m;
  bool round_bit, rest;
  if (kept >= 1) {
    m = w >> (64 - kept);
    round_bit = (w >> (63 - kept)) & 1u;
    rest = sticky || (w & ((std::uint64_t(1) << (63 - kept)) - 1)) != 0;
  } else {
    m = 0;
    round_bit = kept == 0;
    rest = kept == 0 ? (sticky || (w << 1) != 0) : true;
  }
  if (round_bit && (rest || (m & 1u))) ++m;
  // m * 2^q is exact in double (m <= 2^53, q within double's normal range).
  double v = double(m);
  int sc = q;
  for (; sc > 600; sc -= 600) v *= detail::exact_pow2(600);
  for (; sc < -600; sc += 600) v *= detail::exact_pow2(-600);
  v *= detail::exact_pow2(sc);
  if (v > f.max_finite) v = inf;
  return neg ? -v : v;
}

// A long integer: sum_k limb[k] 2^(32 k) units, and the flags of the
// non-finite terms (ExactSumOf's kNan, ...). One type per digit count, so that
// both homes of the digits (LimbsOutside) give the same partial.
template <int Digits>
struct LongInteger {
  std::int64_t limb[Digits];
  std::uint32_t flags;
};

// The long integer of Digits 32-bit digits whose least significant one is
// worth 2^Low, and its finishing: the base of every ExactSumOf of that
// integer (exact_sum.hpp).
template <int Low, int Digits>
struct ExactFinish {
  using Partial = LongInteger<Digits>;
  // The flags of the non-finite terms added, and whether any term but -0 was.
  enum : std::uint32_t { kNan = 1, kPosInf = 2, kNegInf = 4, kNotMinusZero = 8 };

  ULPSCOPE_HD static Partial identity() {
    Partial p;
    for (int i = 0; i < Digits; ++i) p.limb[i] = 0;
    p.flags = 0;
    return p;
  }

  // Propagate carries: every digit but the top one into [0, 2^32); the top
  // one keeps the sign (a two's complement number with a wide top digit).
  // limb: a Partial's array or the pointer to the digits outside.
  template <class Limbs>
  ULPSCOPE_HD static void carry_limbs(Limbs& limb) {
    std::int64_t c = 0;
    ULPSCOPE_UNROLL
    for (int i = 0; i < Digits - 1; ++i) {
      const std::int64_t v = limb[i] + c;
      limb[i] = v & 0xFFFFFFFFll;
      c = v >> 32;  // arithmetic shift: floor division
    }
    limb[Digits - 1] += c;
  }
  ULPSCOPE_HD static void carry(Partial& p) { carry_limbs(p.limb); }

  // a becomes |a| with carried digits (all but the top one in [0, 2^32));
  // returns whether a was negative.
  ULPSCOPE_HD static bool carried_magnitude(Partial& a) {
    carry(a);
    const bool neg = a.limb[Digits - 1] < 0;
    if (neg) {
      ULPSCOPE_UNROLL
      for (int k = 0; k < Digits; ++k) a.limb[k] = -a.limb[k];
      carry(a);
    }
    return neg;
  }

  // The leading bits of a carried magnitude a: w, the top 64 bits from the
  // leading one down (at bit 63), e = floor(log2 a), and sticky, whether any
  // bit below w is set; false for a zero a. The digits are read at constant
  // indices (the loop unrolled, the top digit's window kept by selects), so
  // that a stays in registers on the GPU: found at run time, they were local
  // memory loads, the second pass's main stall (docs/perf-h100.md,
  // "exact_finish.hpp").
  ULPSCOPE_HD static bool leading_bits(const Partial& a, std::uint64_t& w, int& e, bool& sticky) {
    std::uint64_t d0 = 0, d1 = 0, d2 = 0;  // digits k, k - 1 and k - 2
    bool under = false;                    // a nonzero digit below k - 2
    std::uint64_t t0 = 0, t1 = 0, t2 = 0;  // the window at the top nonzero digit
    bool t_under = false;
    int top = -1;
    ULPSCOPE_UNROLL
    for (int k = 0; k < Digits; ++k) {
      under = under || d2 != 0;
      d2 = d1;
      d1 = d0;
      d0 = std::uint64_t(a.limb[k]);
      const bool here = d0 != 0;
      top = here ? k : top;
      t0 = here ? d0 : t0;
      t1 = here ? d1 : t1;
      t2 = here ? d2 : t2;
      t_under = here ? under : t_under;
    }
    if (top < 0) return false;
    // The value's top is t0 2^64 + m (m = t1 2^32 + t2 below 2^64, as digits
    // under the top one are carried into [0, 2^32)); t0 has nb bits.
    const int nb = bit_width(t0);
    const std::uint64_t m = t1 << 32 | t2;
    if (nb == 64) {
      w = t0;
      sticky = t_under || m != 0;
    } else {
      w = t0 << (64 - nb) | m >> nb;
      sticky = t_under || (m << (64 - nb)) != 0;
    }
    e = Low + 32 * top + nb - 1;
    return true;
  }

  // The top W digits of a carried magnitude a from its leading nonzero one
  // down (t[0] the leading one; digits under digit 0 read as zeros), whether
  // a digit under them is nonzero, and the leading digit's index (-1 for a
  // zero a). The scan of leading_bits: unrolled, the window kept by selects,
  // so that a stays in registers on the GPU.
  template <int W>
  ULPSCOPE_HD static int top_digits(const Partial& a, std::uint64_t (&t)[W], bool& under) {
    std::uint64_t d[W];  // digits k, k - 1, ..., k - W + 1
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) d[j] = t[j] = 0;
    bool below = false;  // a nonzero digit under k - W + 1
    under = false;
    int top = -1;
    ULPSCOPE_UNROLL
    for (int k = 0; k < Digits; ++k) {
      below = below || d[W - 1] != 0;
      ULPSCOPE_UNROLL
      for (int j = W - 1; j > 0; --j) d[j] = d[j - 1];
      d[0] = std::uint64_t(a.limb[k]);
      const bool here = d[0] != 0;
      top = here ? k : top;
      ULPSCOPE_UNROLL
      for (int j = 0; j < W; ++j) t[j] = here ? d[j] : t[j];
      under = here ? below : under;
    }
    return top;
  }

  // leading_bits to 128 bits: w, the top 128 bits from the leading one down
  // (at bit 127), e = floor(log2 a), sticky: any bit below w; false for a
  // zero a. From the top five digits.
  ULPSCOPE_HD static bool leading_bits128(const Partial& a, unsigned __int128& w, int& e, bool& sticky) {
    using u128 = unsigned __int128;
    std::uint64_t t[5];
    bool t_under;
    const int top = top_digits(a, t, t_under);
    if (top < 0) return false;
    // The value's top is t0 2^128 + m, m = t1 2^96 + ... + t4 below 2^128 (the
    // digits under the top one are carried into [0, 2^32)); t0 has nb bits.
    const int nb = bit_width(t[0]);
    const u128 m = u128(t[1] << 32 | t[2]) << 64 | (t[3] << 32 | t[4]);
    w = u128(t[0]) << (128 - nb) | m >> nb;
    sticky = t_under || (m << (128 - nb)) != 0;
    e = Low + 32 * top + nb - 1;
    return true;
  }

  // What round_bits takes from a partial, or the value itself where it is
  // special: NaN, an infinity, a signed zero; a is left with the carried
  // magnitude (for a finite value).
  struct Leading {
    std::uint64_t w;
    int e;
    bool sticky, neg, special;
    double value;
    // RN_F of the value (round_bits), or the special value itself.
    ULPSCOPE_HD double in(OutFormat f) const { return special ? value : round_bits(w, e, sticky, neg, f); }
  };
  // The sum's zero from its flags: -0 only where no term (or only -0) was added.
  ULPSCOPE_HD static double signed_zero(std::uint32_t flags) { return (flags & kNotMinusZero) ? 0.0 : -0.0; }
  ULPSCOPE_HD static Leading leading(const Partial& p, Partial& a) {
    const double inf = detail::double_from_bits(0x7FF0000000000000ull);
    const bool pinf = p.flags & kPosInf, ninf = p.flags & kNegInf;
    Leading l{0, 0, false, false, true, 0.0};
    if ((p.flags & kNan) || (pinf && ninf)) l.value = detail::double_from_bits(0x7FF8000000000000ull);
    else if (pinf) l.value = inf;
    else if (ninf) l.value = -inf;
    if ((p.flags & kNan) || pinf || ninf) return l;
    a = p;
    l.neg = carried_magnitude(a);
    if (!leading_bits(a, l.w, l.e, l.sticky)) {
      l.value = signed_zero(p.flags);
      return l;
    }
    l.special = false;
    return l;
  }

  // RN_F(value) for the format f, as a double; infinities for values that
  // round beyond f's largest finite value (round_to_out then applies the
  // format's overflow rule).
  ULPSCOPE_HD static double round(const Partial& p, OutFormat f) {
    Partial a;
    return leading(p, a).in(f);
  }

  // round(p, f), and round(p, fp64) (the unrounded total) in `total`, from one
  // carried magnitude.
  ULPSCOPE_HD static double round_with_total(const Partial& p, OutFormat f, double& total) {
    Partial a;
    const Leading l = leading(p, a);
    total = l.in(out_format(Dtype::fp64));
    return l.in(f);
  }

  // RN_F(+-(w / 2^63) * 2^e), w's leading one at bit 63, sticky: nonzero bits
  // below w; infinities beyond f's largest finite value (round_scaled_bits).
  ULPSCOPE_HD static double round_bits(std::uint64_t w, int e, bool sticky, bool neg, OutFormat f) {
    return round_scaled_bits(w, e, sticky, neg, f);
  }

  // The root of a sum holding an infinity or NaN (flags has one of them):
  // +inf for +inf alone, else NaN (NaN, -inf, inf - inf).
  ULPSCOPE_HD static double root_of_nonfinite(std::uint32_t flags) {
    return detail::double_from_bits((flags & (kNan | kNegInf)) ? 0x7FF8000000000000ull : 0x7FF0000000000000ull);
  }

  // RN_F(sqrt(value)) (the exact norm2): the integer's top 128 bits
  // (leading_bits128) shifted right by 2 or 3, T, so that the exponent left
  // over is even, and r = floor(sqrt(T)) is floor(sqrt) of the whole integer
  // at half that exponent, since T 2^s <= M < (T + 1) 2^s <= (r + 1)^2 2^s. r
  // has 62-63 bits, nine or more below any rounding position: an inexact root
  // (r^2 != T, or bits below T) is jammed into its last bit, and round_bits
  // rounds once. below: bits below the integer (round_rms's remainder).
  ULPSCOPE_HD static double round_sqrt(const Partial& p, OutFormat f, bool below = false) {
    using u128 = unsigned __int128;
    const double nan = detail::double_from_bits(0x7FF8000000000000ull);
    if (p.flags & (kNan | kPosInf | kNegInf)) return root_of_nonfinite(p.flags);
    Partial a = p;
    const bool neg = carried_magnitude(a);
    u128 w;
    int e;
    bool sticky;
    if (!leading_bits128(a, w, e, sticky)) return signed_zero(p.flags);  // +-0, its own root (below is false)
    if (neg) return nan;                                                 // the root of a negative value
    const int k = ((e - 125) & 1) ? 3 : 2;  // T's last bit at 2^(e - 127 + k), an even power
    sticky = sticky || below || (w & ((u128(1) << k) - 1)) != 0;
    const u128 t = w >> k;
    const std::uint64_t r = integer_sqrt(t);
    const bool exact = u128(r) * r == t && !sticky;
    const std::uint64_t jammed = exact ? r : r | 1;
    const int rb = bit_width(jammed);
    return round_bits(jammed << (64 - rb), (e - 127 + k) / 2 + rb - 1, false, false, f);
  }

  // floor(sqrt(t)) for 2^124 <= t < 2^126, without a 128-bit division (a
  // software loop on the GPU): a double's root of t's top 64 bits is within
  // 2^11 of sqrt(t); one Newton step r + (t - r^2) / (2r) in double, the
  // difference exact in 128 bits (below 2^76) and the step below 2^12 with
  // a relative error near 2^-50, leaves it within one, which the squares
  // correct.
  ULPSCOPE_HD static std::uint64_t integer_sqrt(unsigned __int128 t) {
    using u128 = unsigned __int128;
    std::uint64_t r = std::uint64_t(rn::sqrt(double(std::uint64_t(t >> 62))) * 2147483648.0);  // 2^31 = sqrt(2^62)
    const u128 sq = u128(r) * r;
    const bool up = sq <= t;
    const u128 d = up ? t - sq : sq - t;
    const double dd = rn::add(rn::mul(double(std::uint64_t(d >> 64)), 18446744073709551616.0),  // 2^64
                              double(std::uint64_t(d)));
    const auto step = std::uint64_t(rn::div(dd, rn::mul(2.0, double(r))));
    r = up ? r + step : r - step;
    while (u128(r) * r > t) --r;
    while (u128(r + 1) * (r + 1) <= t) ++r;
    return r;
  }

  // floor(cur / n) for n < 2^32 and cur < n 2^32, its remainder in rem. The
  // estimate cur * (1/n) in double carries three roundings of relative size
  // 2^-53 at a quotient below 2^32, so it is within 2^-19 of cur / n and its
  // floor is off by at most one, which the remainder's sign and size correct
  // (division by an invariant integer through its reciprocal: Granlund and
  // Montgomery 1994). The GPU has no 64-bit divide instruction, and its
  // software division slowed the exact mean (docs/perf-h100.md,
  // "exact_finish.hpp").
  ULPSCOPE_HD static std::uint64_t divide_step(std::uint64_t cur, std::uint64_t n, double inv, std::uint64_t& rem) {
    std::uint64_t q = std::uint64_t(rn::mul(double(cur), inv));
    auto r = std::int64_t(cur - q * n);  // in (-n, 2n): wraps to the signed value
    if (r < 0) {
      --q;
      r += std::int64_t(n);
    } else if (r >= std::int64_t(n)) {
      ++q;
      r -= std::int64_t(n);
    }
    rem = std::uint64_t(r);
    return q;
  }

  // a = floor(a / n) for a carried magnitude a and 1 <= n < 2^63, by long
  // division in 32-bit digits (a remainder below n and one digit fit 128
  // bits; 64 when n < 2^32, the usual case, divided through n's reciprocal
  // by divide_step); returns whether the division left a remainder.
  ULPSCOPE_HD static bool divide(Partial& a, std::uint64_t n) {
    const std::uint64_t top = std::uint64_t(a.limb[Digits - 1]);  // may be wider than 32 bits
    std::uint64_t rem;
    if (n >> 32 == 0 && top >> 32 == 0) {
      const double inv = rn::div(1.0, double(n));
      a.limb[Digits - 1] = std::int64_t(divide_step(top, n, inv, rem));
      ULPSCOPE_UNROLL
      for (int j = Digits - 2; j >= 0; --j)
        a.limb[j] = std::int64_t(divide_step(rem << 32 | std::uint64_t(a.limb[j]), n, inv, rem));
    } else {
      rem = divide_wide(a, n);
    }
    return rem != 0;
  }

  // divide's path for n or the top digit at or above 2^32 (at least 2^32
  // elements, or a sum whose top digit is wide): 128-bit digit steps, left
  // rolled up and out of line, as its unrolled copies were most of the exact
  // mean_var finish's code; returns the remainder.
  ULPSCOPE_HD static ULPSCOPE_NOINLINE std::uint64_t divide_wide(Partial& a, std::uint64_t n) {
    const std::uint64_t top = std::uint64_t(a.limb[Digits - 1]);
    a.limb[Digits - 1] = std::int64_t(top / n);
    std::uint64_t rem = top % n;
    for (int j = Digits - 2; j >= 0; --j) {
      const unsigned __int128 cur = (static_cast<unsigned __int128>(rem) << 32) | std::uint64_t(a.limb[j]);
      const auto q = std::uint64_t(cur / n);
      rem = std::uint64_t(cur - static_cast<unsigned __int128>(q) * n);
      a.limb[j] = std::int64_t(q);
    }
    return rem;
  }

  // RN_F(value / n), n >= 1 (the exact mean): the top five digits V of
  // |value| (top_digits) divided by n. floor(V / n) is the quotient down to
  // V's last digit (long division's top digits depend on the dividend's top
  // digits alone), at least 2^128 / n > 2^65, and the rest is zero exactly
  // when the remainder and the digits under V are: that is jammed into the
  // quotient's last bit, 65 or more bits under its leading one, then
  // round_bits: one rounding, as for the sum. `total` gets round(p, fp64)
  // from the same carried magnitude.
  ULPSCOPE_HD static double round_quotient(const Partial& p, std::int64_t n, OutFormat f, double& total) {
    Partial a;
    const Leading l = leading(p, a);
    total = l.in(out_format(Dtype::fp64));
    if (l.special) return l.value;  // NaN and infinities divided by n; 0 / n
    constexpr int W = 5;
    using Window = ExactFinish<0, W>;
    std::uint64_t t[W];
    bool under;
    const int top = top_digits(a, t, under);  // a is not 0 (not special)
    typename Window::Partial q = Window::identity();
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) q.limb[W - 1 - j] = std::int64_t(t[j]);
    if (Window::divide(q, std::uint64_t(n)) || under) q.limb[0] |= 1;
    std::uint64_t w = 0;
    int e = 0;
    bool sticky = false;
    Window::leading_bits(q, w, e, sticky);
    return round_bits(w, e + Low + 32 * (top - W + 1), sticky, l.neg, f);
  }

  // RN_F(sqrt(value / n + eps)), n >= 1 (the exact rms): value * 2^256 plus
  // n * eps (eps = E 2^e, n E < 2^116) on the grid 2^(Low - 256), divided by
  // n, then round_sqrt with the division's remainder as sticky: one rounding.
  // The quotient is at least 1 (n * eps >= n units) or 2^193 units, never 0
  // with a remainder. Returns false for an eps below that grid, negative or
  // not finite (the caller rounds twice instead).
  ULPSCOPE_HD static bool round_rms(const Partial& p, std::int64_t n, double eps, OutFormat f, double& out) {
    const std::uint64_t u = detail::double_bits(eps);
    const int field = int((u >> 52) & 0x7FF);
    if ((u >> 63) || field == 0x7FF) return false;
    const std::uint64_t e_man = (u & 0x000FFFFFFFFFFFFFull) | (field ? 0x0010000000000000ull : 0);
    const int e_exp = (field ? field : 1) - 1075;  // eps = e_man * 2^e_exp
    using Wide = ExactFinish<Low - 256, Digits + 9>;
    const int at = e_exp - (Low - 256);  // n * e_man's bit offset on Wide's grid
    if (e_man != 0 && (at < 0 || at + 116 > 32 * (Digits + 8))) return false;
    if (p.flags & (kNan | kPosInf | kNegInf)) {
      out = root_of_nonfinite(p.flags);
      return true;
    }
    Partial a = p;
    if (carried_magnitude(a)) return false;  // a negative sum of squares cannot happen: let the caller see it
    typename Wide::Partial x = Wide::identity();
    x.flags = p.flags | (e_man != 0 ? std::uint32_t(kNotMinusZero) : 0u);
    for (int k = 0; k < Digits; ++k) x.limb[k + 8] = a.limb[k];
    if (e_man != 0) {
      unsigned __int128 t = static_cast<unsigned __int128>(std::uint64_t(n)) * e_man;
      int j = at / 32;
      const int sh = at % 32;
      x.limb[j] += std::int64_t((std::uint64_t(t) << sh) & 0xFFFFFFFFull);  // t's low 32 - sh bits
      for (t >>= 32 - sh, ++j; t != 0; t >>= 32, ++j) x.limb[j] += std::int64_t(std::uint64_t(t) & 0xFFFFFFFFull);
      Wide::carry(x);
    }
    const bool inexact = Wide::divide(x, std::uint64_t(n));
    out = Wide::round_sqrt(x, f, inexact);
    return true;
  }

  ULPSCOPE_HD static double total(const Partial& p) { return round(p, out_format(Dtype::fp64)); }
};

}  // namespace ulpscope
