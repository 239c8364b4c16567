#pragma once
// What the exact scan's fixed-point accumulators share (host and device):
// the special values' flags and the one rounding of the integer prefix into
// the output format. FixedPointSum (96 bits: fp16 and fp8 inputs) and
// WideFixedPointSum (320 bits: bf16 and fp32 inputs) differ only in how
// they hold the integer.
// Special values as the reference (reference/exact_prefix.hpp): NaN, or +Inf
// with -Inf, gives NaN; an infinity stays; an exact zero is -0 only when
// every term was -0 (IEEE 754-2019, 6.3).
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"

namespace ulpscope::scan::fixed_point {

enum : std::uint32_t { kNaN = 1, kPlusInf = 2, kMinusInf = 4, kNotMinusZero = 8 };

// Records what x means beyond its value; true when x is NaN or an infinity
// (then nothing is added to the integer).
ULPSCOPE_HD inline bool note_term(std::uint32_t& flags, float x) {
  if (x != x) {
    flags |= kNaN | kNotMinusZero;
    return true;
  }
  if (x - x != 0.0f) {  // an infinity
    flags |= (x > 0 ? kPlusInf : kMinusInf) | kNotMinusZero;
    return true;
  }
  if (!(x == 0.0f && detail::float_bits(x) >> 31)) flags |= kNotMinusZero;
  return false;
}

// Whether a NaN or an infinity was added.
ULPSCOPE_HD inline bool has_special(std::uint32_t flags) { return (flags & (kNaN | kPlusInf | kMinusInf)) != 0; }

// The flags of an exact sum a of finite terms (exact_double_run.hpp's runs in
// double, whose -0 + x = x keeps a zero's sign as the integer's flags do):
// a is -0 only when every term was -0.
ULPSCOPE_HD inline std::uint32_t flags_of_exact(double a) {
  return detail::double_bits(a) == 0x8000000000000000ull ? 0u : std::uint32_t(kNotMinusZero);
}

// The total where a NaN or an infinity was added (then true).
ULPSCOPE_HD inline bool special_total(std::uint32_t flags, double& total) {
  if ((flags & kNaN) || ((flags & kPlusInf) && (flags & kMinusInf))) {
    total = detail::double_from_bits(0x7FF8000000000000ull);
    return true;
  }
  if (flags & kPlusInf) {
    total = detail::double_from_bits(0x7FF0000000000000ull);
    return true;
  }
  if (flags & kMinusInf) {
    total = detail::double_from_bits(0xFFF0000000000000ull);
    return true;
  }
  return false;
}

// An exact zero's sign.
ULPSCOPE_HD inline double zero_total(std::uint32_t flags) { return (flags & kNotMinusZero) ? 0.0 : -0.0; }

template <class Out>
struct OutLimits {
  static constexpr double kMaxFinite = Out::max_finite();
};

// RN_Out(+-mag * 2^lsb) as a double (exactly that value of Out), mag > 0 of
// bit length `bits`, an unsigned integer type U. Where bits below mag were
// cut off, their OR may sit in mag's lowest bit (a sticky bit) as long as
// that bit is two or more places below Out's quantum there: it then only
// breaks ties, as the cut bits would. Beyond Out's largest finite value the
// rounded value is the infinity of its sign (IEEE 754-2019, 7.4: overflow
// after rounding with an unbounded exponent).
template <class Out, class U>
ULPSCOPE_HD double rounded_to_out(U mag, int bits, int lsb, bool negative) {
  const int top = bits - 1 + lsb;                                            // exponent of the leading bit
  const int quantum = (top > Out::emin ? top : Out::emin) - Out::man_bits;  // the grid of RN there
  const int shift = quantum - lsb;
  U m = mag;
  int e = lsb;
  if (shift > 0) {
    m = mag >> shift;
    const U rest = mag - (m << shift);
    const U half = static_cast<U>(1) << (shift - 1);
    if (rest > half || (rest == half && (m & 1))) ++m;
    e = quantum;
  }
  // m has at most Out's precision + 1 bits: exact in double, as is the scaling.
  const double value = static_cast<double>(static_cast<std::uint64_t>(m)) * detail::exact_pow2(e);
  if (value > OutLimits<Out>::kMaxFinite)
    return detail::double_from_bits(negative ? 0xFFF0000000000000ull : 0x7FF0000000000000ull);
  return negative ? -value : value;
}

ULPSCOPE_HD inline int bit_length64(std::uint64_t w) {
  if (w == 0) return 0;
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(w));
#else
  return 64 - __builtin_clzll(w);
#endif
}

}  // namespace ulpscope::scan::fixed_point
