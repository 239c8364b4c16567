#pragma once
// exact, for the scans of fp16 and fp8 inputs (host and device): every value
// of such a format is an integer multiple of its least subnormal 2^Low, and
// below 2^16 in magnitude, so a prefix of up to 2^55 values is an integer
// that 96 bits hold with no rounding at all (fp16: 40 bits a value;
// fp8_e5m2: 32; fp8_e4m3: 18). The state is those 96 bits and the flags,
// four 32-bit words with no padding, since the kernels move partials across
// lanes a word at a time; the arithmetic is done in 128 bits and stored
// back. Adding is exact and associative, so
// every shape's order gives the same integer, and total() rounds it once,
// straight into the output format (no double rounding through fp64): each
// prefix is correctly rounded, the reference's bits (reference/exact_prefix.hpp).
// The specials and the rounding are fixed_point_rounding.hpp's, shared with
// the wider integer of bf16 and fp32 inputs (wide_fixed_point_sum.hpp).
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/scan/fixed_point_rounding.hpp"

namespace ulpscope::scan {

template <class In, class Out>
struct FixedPointSum {
  static_assert(In::bits <= 16 && In::exp_bits <= 5, "a prefix of these values must fit 96 bits");
  static constexpr int kLow = In::emin - In::man_bits;  // the least subnormal's exponent
  using in_format = In;
  using out_format = Out;
  using term_t = float;
  using value_t = double;
  struct State {
    std::uint64_t lo;     // the integer's low 64 bits
    std::int32_t hi;      // its bits 64 .. 95, with the sign
    std::uint32_t flags;  // fixed_point::kNaN ...
  };
  using Partial = State;
  static_assert(sizeof(State) == 16, "four words, no padding");
  // total() is already a value of Out: storing it in Out rounds nothing.
  static constexpr bool kTotalRoundedToOut = true;

  ULPSCOPE_HD static State start() { return {0, 0, 0}; }
  ULPSCOPE_HD static Partial identity() { return {0, 0, 0}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static __int128 integer(const State& s) {
    return static_cast<__int128>(s.hi) * (static_cast<__int128>(1) << 64) + static_cast<__int128>(s.lo);
  }
  ULPSCOPE_HD static void set(State& s, __int128 v) {
    s.lo = static_cast<std::uint64_t>(v);
    s.hi = static_cast<std::int32_t>(static_cast<std::uint64_t>(v >> 64));
  }
  ULPSCOPE_HD static void add(State& s, float x) {
    if (fixed_point::note_term(s.flags, x)) return;
    set(s, integer(s) + units_of(x));
  }
  ULPSCOPE_HD static Partial partial(const State& s) { return s; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    set(a, integer(a) + integer(b));
    a.flags |= b.flags;
  }
  // The prefix correctly rounded to Out, as a double (exactly that value).
  ULPSCOPE_HD static value_t total(const Partial& p) {
    double special;
    if (fixed_point::special_total(p.flags, special)) return special;
    // A prefix that fits 64 bits (every one that Out can hold without
    // overflowing, fp16: below 2^41 units) is rounded in 64-bit words: the
    // same rounding, a third of the instructions.
    if (fits_64(p)) {
      const std::int64_t low = static_cast<std::int64_t>(p.lo);
      if (low == 0) return fixed_point::zero_total(p.flags);
      const std::uint64_t mag = magnitude(low);
      return fixed_point::rounded_to_out<Out>(mag, fixed_point::bit_length64(mag), kLow, low < 0);
    }
    const __int128 v = integer(p);
    const bool negative = v < 0;
    const unsigned __int128 mag = negative ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
    return fixed_point::rounded_to_out<Out>(mag, bit_length(mag), kLow, negative);
  }

  // For exact_double_run.hpp. The state of an exact double a (a multiple of
  // 2^kLow below 2^(kLow + 63)): its units, and a zero's sign as the flags
  // (-0 only when every term was -0).
  ULPSCOPE_HD static State from_exact_double(double a) {
    const auto units = static_cast<std::int64_t>(a * detail::exact_pow2(-kLow));
    return {static_cast<std::uint64_t>(units), units < 0 ? -1 : 0, fixed_point::flags_of_exact(a)};
  }
  static constexpr bool kCutsSeed = false;
  // The seed as a double, the run's items below 2^s.top: the prefix itself
  // (q = kLow, no cut) where it and every sum with the items stay below
  // 2^(kLow + 53); false otherwise, or after a special.
  template <class Span>
  ULPSCOPE_HD static bool seed_in_double(const State& p, const Span& s, double& d, int& q, bool& sticky) {
    if (fixed_point::has_special(p.flags) || !fits_64(p)) return false;
    const std::int64_t low = static_cast<std::int64_t>(p.lo);
    const std::uint64_t mag = magnitude(low);
    const int top_seed = kLow + fixed_point::bit_length64(mag);
    const int top = (top_seed > s.top ? top_seed : s.top) + 1;  // |S + P_j| < 2^top
    if (top > kLow + 53 || s.lsb < kLow) return false;
    q = kLow;
    sticky = false;
    d = mag == 0 ? fixed_point::zero_total(p.flags) : double(low) * detail::exact_pow2(kLow);
    return true;
  }

 private:
  // Whether the integer is its low 64 bits (bits 64 .. 95 their sign).
  ULPSCOPE_HD static bool fits_64(const State& s) { return s.hi == (static_cast<std::int64_t>(s.lo) < 0 ? -1 : 0); }
  ULPSCOPE_HD static std::uint64_t magnitude(std::int64_t v) {
    return v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  }
  // A finite value of In (widened to float: a normal float, since In's least
  // subnormal is one) in units of 2^Low, by integer operations on its bits:
  // its significand (1 << 23) | mantissa times 2^(exponent - 150), shifted to
  // units of 2^Low; the bits shifted out are zeros, as x is a multiple of
  // 2^Low. Cheaper on the GPU than the exact conversion through a double
  // (two 64-bit conversions a term).
  ULPSCOPE_HD static std::int64_t units_of(float x) {
    const std::uint32_t b = detail::float_bits(x);
    const int biased = int((b >> 23) & 0xFFu);
    if (biased == 0) return 0;  // +-0 (In has no value that is subnormal as a float)
    const std::int64_t m = std::int64_t((b & 0x7FFFFFu) | 0x800000u);
    const int shift = biased - 150 - kLow;
    const std::int64_t q = shift >= 0 ? (m << shift) : (m >> -shift);
    return (b >> 31) ? -q : q;
  }
  ULPSCOPE_HD static int bit_length(unsigned __int128 v) {
    const std::uint64_t hi = static_cast<std::uint64_t>(v >> 64), lo = static_cast<std::uint64_t>(v);
    return hi != 0 ? fixed_point::bit_length64(hi) + 64 : fixed_point::bit_length64(lo);
  }
};

}  // namespace ulpscope::scan
