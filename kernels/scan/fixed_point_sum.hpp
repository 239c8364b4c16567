#pragma once
// exact, for the scans of fp16 and fp8 inputs (host and device): every value
// of such a format is an integer multiple of its least subnormal 2^Low, and
// below 2^16 in magnitude, so a prefix of up to 2^60 values is an integer
// that a 128-bit integer holds with no rounding at all (fp16: 40 bits a
// value; fp8_e5m2: 32; fp8_e4m3: 18). Adding is exact and associative, so
// every shape's order gives the same integer, and total() rounds it once,
// straight into the output format (no double rounding through fp64): each
// prefix is correctly rounded, the reference's bits (reference/exact_prefix.hpp).
// Special values as the reference: NaN, or +Inf with -Inf, gives NaN; an
// infinity stays; an exact zero is -0 only when every term was -0.
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"

namespace ulpscope::scan {

template <class In, class Out>
struct FixedPointSum {
  static_assert(In::bits <= 16 && In::exp_bits <= 5, "a prefix of these values must fit 128 bits");
  static constexpr int kLow = In::emin - In::man_bits;  // the least subnormal's exponent
  static constexpr double kMaxFinite = Out::max_finite();
  using term_t = float;
  using value_t = double;
  enum : std::uint32_t { kNaN = 1, kPlusInf = 2, kMinusInf = 4, kNotMinusZero = 8 };
  struct State {
    __int128 v;
    std::uint32_t flags;
  };
  using Partial = State;
  // total() is already a value of Out: storing it in Out rounds nothing.
  static constexpr bool kTotalRoundedToOut = true;

  ULPSCOPE_HD static State start() { return {0, 0}; }
  ULPSCOPE_HD static Partial identity() { return {0, 0}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static void add(State& s, float x) {
    if (x != x) {
      s.flags |= kNaN | kNotMinusZero;
    } else if (x - x != 0.0f) {  // an infinity
      s.flags |= (x > 0 ? kPlusInf : kMinusInf) | kNotMinusZero;
    } else {
      // x * 2^-Low is an integer below 2^40: exact in double and in int64.
      s.v += static_cast<std::int64_t>(static_cast<double>(x) * detail::exact_pow2(-kLow));
      if (!(x == 0.0f && detail::float_bits(x) >> 31)) s.flags |= kNotMinusZero;
    }
  }
  ULPSCOPE_HD static Partial partial(const State& s) { return s; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    a.v += b.v;
    a.flags |= b.flags;
  }
  // The prefix correctly rounded to Out, as a double (exactly that value).
  ULPSCOPE_HD static value_t total(const Partial& p) {
    if ((p.flags & kNaN) || ((p.flags & kPlusInf) && (p.flags & kMinusInf)))
      return detail::double_from_bits(0x7FF8000000000000ull);
    if (p.flags & kPlusInf) return detail::double_from_bits(0x7FF0000000000000ull);
    if (p.flags & kMinusInf) return detail::double_from_bits(0xFFF0000000000000ull);
    if (p.v == 0) return (p.flags & kNotMinusZero) ? 0.0 : -0.0;
    const bool negative = p.v < 0;
    const unsigned __int128 mag =
        negative ? static_cast<unsigned __int128>(-p.v) : static_cast<unsigned __int128>(p.v);
    const int bits = bit_length(mag);
    const int top = bits - 1 + kLow;                                  // exponent of the leading bit
    const int quantum = (top > Out::emin ? top : Out::emin) - Out::man_bits;  // the grid of RN there
    const int shift = quantum - kLow;
    unsigned __int128 m = mag;
    int e = kLow;
    if (shift > 0) {
      m = mag >> shift;
      const unsigned __int128 rest = mag - (m << shift);
      const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
      if (rest > half || (rest == half && (m & 1))) ++m;
      e = quantum;
    }
    // m has at most Out's precision + 1 bits: exact in double, as is the scaling.
    const double value = static_cast<double>(static_cast<std::uint64_t>(m)) * detail::exact_pow2(e);
    if (value > kMaxFinite)
      return detail::double_from_bits(negative ? 0xFFF0000000000000ull : 0x7FF0000000000000ull);
    return negative ? -value : value;
  }

 private:
  ULPSCOPE_HD static int bit_length(unsigned __int128 v) {
    const std::uint64_t hi = static_cast<std::uint64_t>(v >> 64), lo = static_cast<std::uint64_t>(v);
    const std::uint64_t w = hi != 0 ? hi : lo;
    if (w == 0) return 0;
#if defined(__CUDA_ARCH__)
    const int n = 64 - __clzll(static_cast<long long>(w));
#else
    const int n = 64 - __builtin_clzll(w);
#endif
    return hi != 0 ? n + 64 : n;
  }
};

}  // namespace ulpscope::scan
