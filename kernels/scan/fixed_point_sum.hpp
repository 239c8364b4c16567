#pragma once
// exact, for the scans of fp16 and fp8 inputs (host and device): every value
// of such a format is an integer multiple of its least subnormal 2^Low, and
// below 2^16 in magnitude, so a prefix of up to 2^60 values is an integer
// that a 128-bit integer holds with no rounding at all (fp16: 40 bits a
// value; fp8_e5m2: 32; fp8_e4m3: 18). Adding is exact and associative, so
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
  static_assert(In::bits <= 16 && In::exp_bits <= 5, "a prefix of these values must fit 128 bits");
  static constexpr int kLow = In::emin - In::man_bits;  // the least subnormal's exponent
  using term_t = float;
  using value_t = double;
  struct State {
    __int128 v;
    std::uint32_t flags;  // fixed_point::kNaN ...
  };
  using Partial = State;
  // total() is already a value of Out: storing it in Out rounds nothing.
  static constexpr bool kTotalRoundedToOut = true;

  ULPSCOPE_HD static State start() { return {0, 0}; }
  ULPSCOPE_HD static Partial identity() { return {0, 0}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static void add(State& s, float x) {
    if (fixed_point::note_term(s.flags, x)) return;
    // x * 2^-Low is an integer below 2^40: exact in double and in int64.
    s.v += static_cast<std::int64_t>(static_cast<double>(x) * detail::exact_pow2(-kLow));
  }
  ULPSCOPE_HD static Partial partial(const State& s) { return s; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    a.v += b.v;
    a.flags |= b.flags;
  }
  // The prefix correctly rounded to Out, as a double (exactly that value).
  ULPSCOPE_HD static value_t total(const Partial& p) {
    double special;
    if (fixed_point::special_total(p.flags, special)) return special;
    if (p.v == 0) return fixed_point::zero_total(p.flags);
    const bool negative = p.v < 0;
    const unsigned __int128 mag =
        negative ? static_cast<unsigned __int128>(-p.v) : static_cast<unsigned __int128>(p.v);
    return fixed_point::rounded_to_out<Out>(mag, bit_length(mag), kLow, negative);
  }

 private:
  ULPSCOPE_HD static int bit_length(unsigned __int128 v) {
    const std::uint64_t hi = static_cast<std::uint64_t>(v >> 64), lo = static_cast<std::uint64_t>(v);
    return hi != 0 ? fixed_point::bit_length64(hi) + 64 : fixed_point::bit_length64(lo);
  }
};

}  // namespace ulpscope::scan
