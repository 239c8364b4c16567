#pragma once
// The exact scan's shortcut for one thread's run of K items (host and
// device). The fixed-point accumulators (fixed_point_sum.hpp,
// wide_fixed_point_sum.hpp) add every term into a 128- or 320-bit integer
// and round that integer at every output: dozens of instructions an
// element. Most threads need none of it: a sum is exact in binary64 when
// its terms are multiples of 2^q and it stays below 2^(q + 53) in magnitude
// (53-bit significand), and an exact double rounded to Out by one IEEE
// conversion (cvt.rn.f16.f64, cvt.rn.bf16.f64, cvt.rn.f32.f64 on the device)
// is the correctly rounded prefix, the very bits total() gives. So a thread
// whose items and seed allow it runs in double; any other thread (specials,
// exponent spans too wide for 53 bits) takes the integer path, and either
// way the bits are the reference's.
//
// The seed, the exact prefix S before the thread, may hold more bits than a
// double (the lowest bit of every term before it, the highest of their sum).
// It is cut at 2^q, a multiple of every item's last bit: S = H + L with H a
// multiple of 2^q and 0 <= L < 2^q, and the run starts from
// D = H + (L != 0 ? 2^(q-1) : 0), exact in double. Then D + P_j, P_j the
// sum of the thread's first j items, lies strictly between H + P_j and
// H + P_j + 2^q exactly where S + P_j does, and both round alike unless a
// rounding boundary of Out (a midpoint between two neighbours) falls
// strictly inside that interval. Midpoints at a value of magnitude at least
// 2^(q + p + 1) (p: Out's significand bits, p - 1 of them stored) are
// multiples of 2^q, where H + P_j is, so none does: where L != 0 each output
// must be that large, else the thread runs again on the integer path
// (directed-rounding arguments of this kind: Boldo and Melquiond, "Emulation
// of FMA and correctly rounded sums: proved algorithms using rounding to
// odd", IEEE TC 57(4), 2008).
#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/integer_log2.hpp"

namespace ulpscope::scan::double_run {

// Every value in question is a multiple of 2^lsb and below 2^top in
// magnitude. kNoBits: no nonzero value (an empty span).
struct Span {
  int lsb;
  int top;
};
inline constexpr int kNoBits = 1 << 20;

// Whether a value that is a multiple of 2^lsb and below 2^top in magnitude is
// exact in double (53 significant bits at most).
ULPSCOPE_HD constexpr bool exact_in_double(int lsb, int top) { return top <= lsb + 53; }

// The span of the thread's items (floats holding values of In), by their
// bit patterns: the largest magnitude's exponent field gives top; the
// smallest nonzero magnitude's, through |bits| - 1 (which wraps a zero to
// the largest pattern and can only lower the field), gives lsb: a float of
// field f is a multiple of 2^(f - 127 - 23), and of 2^(f - 127 - m) when
// its significand is In's (m bits stored); field 0 (subnormal) is a
// multiple of 2^(1 - 127 - m), so f - 127 - m bounds every field from
// below. False where an item is NaN or infinite.
template <class In, int K>
ULPSCOPE_HD bool item_span(const float (&x)[K], Span& s) {
  std::uint32_t largest = 0, smallest_less_one = 0xFFFFFFFFu;
  ULPSCOPE_UNROLL
  for (int j = 0; j < K; ++j) {
    const std::uint32_t a = detail::float_bits(x[j]) & 0x7FFFFFFFu;
    largest = a > largest ? a : largest;
    smallest_less_one = a - 1u < smallest_less_one ? a - 1u : smallest_less_one;
  }
  if (largest >= 0x7F800000u) return false;
  s.top = int(largest >> 23) - 126;
  s.lsb = smallest_less_one == 0xFFFFFFFFu ? kNoBits : int(smallest_less_one >> 23) - 127 - In::man_bits;
  return true;
}

// d + x, exactly where the sum is exact. On the device the float's bits are
// moved into a double's high word (exponent field and significand shifted
// down three places, which is the double 2^-896 x for every float, zero and
// subnormals included) and scaled back by the FMA: three integer and
// floating-point instructions instead of a conversion on the 64-bit
// conversion pipe (CUDA C++ Programming Guide, "Arithmetic Instructions":
// conversions to and from 64-bit types run at a quarter of the rate or less).
template <bool LowBitsZero>
ULPSCOPE_HD inline double plus(double d, float x) {
#if defined(__CUDA_ARCH__)
  const std::uint32_t b = __float_as_uint(x);
  const std::uint32_t hi = ((b & 0x7FFFFFFFu) >> 3) | (b & 0x80000000u);
  const std::uint32_t lo = LowBitsZero ? 0u : b << 29;
  return fma(__hiloint2double(int(hi), int(lo)), 0x1p896, d);
#else
  return d + double(x);
#endif
}

// An exact double rounded once to OutFmt, as the output's storage bits
// (Bits: float for fp32 outputs, the 16-bit pattern for fp16 and bf16).
template <class OutFmt, class Bits>
ULPSCOPE_HD inline Bits rounded_bits(double d) {
  if constexpr (std::is_same_v<OutFmt, Fp32Format>) {
    static_assert(std::is_same_v<Bits, float>);
#if defined(__CUDA_ARCH__)
    return __double2float_rn(d);
#else
    return static_cast<float>(d);
#endif
  } else {
    static_assert(OutFmt::bits == 16 && std::is_same_v<Bits, std::uint16_t>);
#if defined(__CUDA_ARCH__)
    if constexpr (OutFmt::exp_bits == 5) return __half_as_ushort(__double2half(d));
    else return __bfloat16_as_ushort(__double2bfloat16(d));
#else
    return static_cast<std::uint16_t>(encode<OutFmt>(d));
#endif
  }
}

// R's input format, output format and K's growth: where every sum of K
// values of In is exact in double by the format alone (fp16, fp8: every
// value a multiple of 2^kLow below 2^16), the items' span is not looked at.
template <class R, int K>
struct Traits {
  using In = typename R::in_format;
  using OutFmt = typename R::out_format;
  static constexpr int kGrowth = ceil_log2(K);
  static constexpr Span kFormatSpan{R::kLow, In::emax + 1};
  static constexpr bool kFormatSpanFits = exact_in_double(R::kLow, In::emax + 1 + kGrowth + 1);
};

// Step 1 of the scan, the thread's aggregate, in double: false where the
// integer path must run instead (a special item, a span over 53 bits).
template <class R, int K>
ULPSCOPE_HD bool fold(const float (&x)[K], int items, typename R::Partial& p) {
  using T = Traits<R, K>;
  Span s = T::kFormatSpan;
  if constexpr (!T::kFormatSpanFits) {
    if (!item_span<typename T::In>(x, s) || !exact_in_double(s.lsb, s.top + T::kGrowth)) return false;
  }
  double a = -0.0;  // -0 + x = x, signed zeros included (an empty sum is R::start()'s -0)
  ULPSCOPE_UNROLL
  for (int j = 0; j < K; ++j)
    if (j < items) a = plus<(T::In::man_bits <= 20)>(a, x[j]);
  if (a - a != 0.0) return false;  // NaN or infinite: a special item
  p = R::from_exact_double(a);
  return true;
}

// Step 3: the running prefixes from the seed (or from none), each rounded
// into `bits`: false where the integer path must run instead (and then
// `bits` is to be rewritten).
template <class R, int K, class Bits>
ULPSCOPE_HD bool run(const float (&x)[K], int items, const typename R::Partial& seed, bool has_seed,
                     Bits (&bits)[K]) {
  using T = Traits<R, K>;
  Span s = T::kFormatSpan;
  if constexpr (!T::kFormatSpanFits) {
    if (!item_span<typename T::In>(x, s)) return false;
  }
  s.top += T::kGrowth;  // every partial sum of the items is below 2^top
  double d = -0.0;
  int q = s.lsb;
  bool sticky = false;
  if (has_seed && !R::seed_in_double(seed, s, d, q, sticky)) return false;
  if (!has_seed && !exact_in_double(s.lsb, s.top)) return false;
  // Where L != 0: every output at least 2^(q + p + 1) in magnitude (never
  // for an accumulator that does not cut its seed).
  const double least = sticky ? detail::exact_pow2(q + T::OutFmt::man_bits + 2) : 0.0;
  bool clear = true;
  ULPSCOPE_UNROLL
  for (int j = 0; j < K; ++j) {
    if (j < items) d = plus<(T::In::man_bits <= 20)>(d, x[j]);
    bits[j] = rounded_bits<typename T::OutFmt, Bits>(d);
    if constexpr (R::kCutsSeed) clear = clear && fabs(d) >= least;
  }
  return clear && d - d == 0.0;
}

}  // namespace ulpscope::scan::double_run
