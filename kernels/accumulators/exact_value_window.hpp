#pragma once
// The exact sum of values of a format with float's exponent field (bf16) in
// one double run whose grid follows the data, checked a group at a time:
// the values' half of the tree kernels' first pass of exact mean_var of bf16
// (reducers.hpp, BinnedMomentsReducer; its squares go to bins,
// exact_binned_squares.hpp). Whatever the run cannot take goes to an integer
// of Acc's (ExactSumOf) whose digits a block's threads share; the same
// integer as Acc's checked additions give the same values, so the second
// pass and the models are Acc's.
//
// A run of at most 2^L values, each a multiple of 2^S below 2^(S + 53 - L),
// is exact: every partial sum is a multiple of 2^S below 2^(S + 53). Values
// of P significant bits qualify when their exponent e lies in
// [S + P - 1, S + 52 - L], a window of 54 - L - P binades (36 for bf16 at
// L = 10); bf16's subnormals, multiples of 2^-133, qualify for S <= -133. A
// group is checked at once on its magnitudes' float bits: the least nonzero
// one at or above 2^(S + P - 1) (an unsigned minimum of bits - 1, which
// puts zeros, exact anywhere, on top) and the greatest below 2^(S + 53 - L)
// (NaN's bits lie above every bound). A value above the window spills the
// run into the integer and moves the window so that its top lies kHeadroom
// binades above the value, as ExactSumOf's window of products does; a value
// below it, an infinity or NaN goes to the integer alone. One double
// addition a value where Acc's checked addition takes three and two
// compares (exact_sum.hpp, "fp32 and bf16").
#include <cstdint>
#include <cstring>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/rolled_loop.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

// Digits (and flags) in memory that several threads add to: ExactSumOf's
// deposit takes them as it takes its own digits in memory (Outside), each
// addition atomic on the GPU. Integer additions commute, so the sum does
// not depend on the order in which the threads' additions land.
struct SharedDigits {
  struct Digit {
    std::int64_t* at;
    ULPSCOPE_HD void operator+=(std::int64_t v) const {
#if defined(__CUDA_ARCH__)
      atomicAdd(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(v));
#else
      *at += v;
#endif
    }
  };
  struct Digits {
    std::int64_t* base;
    ULPSCOPE_HD Digit operator[](int k) const { return {base + k}; }
  };
  struct Flags {
    std::uint32_t* at;
    ULPSCOPE_HD void operator|=(std::uint32_t f) const {
#if defined(__CUDA_ARCH__)
      atomicOr(at, f);
#else
      std::uint32_t v;  // the word is an int64's (place_integer): copied, not aliased
      std::memcpy(&v, at, sizeof v);
      v |= f;
      std::memcpy(at, &v, sizeof v);
#endif
    }
  };
  Digits limb;
  Flags flags;
};

template <class F, class Acc>
struct ExactValueWindow {
  static_assert(F::exp_bits == 8 && F::man_bits <= 23, "the bounds are float bits");
  static_assert(Acc::low == F::emin - F::man_bits, "every value a multiple of the integer's unit");
  static constexpr int kRunLog2 = 10;  // L
  static constexpr std::uint32_t run_terms = 1u << kRunLog2;
  static constexpr int kWidth = 54 - kRunLog2 - (F::man_bits + 1);  // binades: 36 for bf16
  static constexpr int kHeadroom = kWidth / 4;
  // The integer's words: its digits, then its flags.
  static constexpr int words = Acc::digits + 1;

  struct State {
    double run;
    std::uint32_t terms;
    std::uint32_t least;  // the float bits of the window's least magnitude, minus 1
    std::uint32_t above;  // the float bits of the least magnitude above the window
    SharedDigits integer;
  };

  // No window yet (every nonzero value lies above it); the integer placed
  // by place_integer.
  ULPSCOPE_HD static State start() { return {-0.0, 0u, 0xFFFFFFFFu, 0u, {{nullptr}, {nullptr}}}; }
  // The integer at words[0 .. words - 1], which the caller zeroes once for
  // all the threads that share it (zero_integer).
  ULPSCOPE_HD static void place_integer(State& st, std::int64_t* w) {
    st.integer.limb.base = w;
    st.integer.flags.at = reinterpret_cast<std::uint32_t*>(w + Acc::digits);
  }
  ULPSCOPE_HD static void zero_integer(std::int64_t* w, int first, int step) {
    for (int k = first; k < words; k += step) w[k] = 0;
  }

  // The float bits of 2^k: 0 below float's least subnormal, +inf's above
  // its greatest binade.
  ULPSCOPE_HD static std::uint32_t pow2_bits(int k) {
    if (k > 127) return 0x7F800000u;
    if (k >= -126) return std::uint32_t(k + 127) << 23;
    if (k >= -149) return 1u << (k + 149);
    return 0u;
  }

  ULPSCOPE_HD static void spill_run(State& st) {
    Acc::deposit(st.integer, st.run);  // -0 (only -0 added) changes nothing
    st.run = -0.0;
    st.terms = 0;
  }

  ULPSCOPE_HD static void add(State& st, float x) {
    const std::uint32_t a = detail::float_bits(x) & 0x7FFFFFFFu;
    if (a == 0 || (a - 1 >= st.least && a < st.above)) {
      if (st.terms == run_terms) spill_run(st);
    } else if (a >= st.above && a < 0x7F800000u) {
      // Above the window: its top, T = e + kHeadroom, is S + 52 - L.
      if (st.terms > 0) spill_run(st);
      const int e = int(detail::double_bits(double(x)) >> 52 & 0x7FF) - 1023;
      const int top = e + kHeadroom;
      const std::uint32_t low = pow2_bits(top - kWidth + 1);
      st.least = low ? low - 1 : 0u;
      st.above = pow2_bits(top + 1);
    } else {
      Acc::deposit(st.integer, double(x));  // below the window, infinite or NaN
      return;
    }
    st.run = rn::add(st.run, double(x));  // exact: the note at the top
    ++st.terms;
  }

  // W values: one check, then the run alone (spilled first where it is
  // full, which measured the same as sending a full run's group one value at
  // a time: docs/perf-h100.md, "exact_value_window.hpp"); else one value at a
  // time.
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x) {
    static_assert(std::uint32_t(W) <= run_terms);
    std::uint32_t least = 0xFFFFFFFFu, most = 0u;
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) {
      const std::uint32_t a = detail::float_bits(x[j]) & 0x7FFFFFFFu;
      least = a - 1 < least ? a - 1 : least;  // not std::min: host-only in device code
      most = a > most ? a : most;
    }
    if (least >= st.least && most < st.above) {
      if (st.terms > run_terms - W) spill_run(st);
      ULPSCOPE_UNROLL
      for (int j = 0; j < W; ++j) st.run = rn::add(st.run, double(x[j]));
      st.terms += W;
    } else {
      each_in_one_copy<W>(x, [&](float v) { add(st, v); });
    }
  }

  // The integer's digits and flags as Acc's partial (uncarried: below 2^63
  // as long as the caller carries it every 2^30 deposits, carry_integer).
  ULPSCOPE_HD static typename Acc::Partial partial_of(const std::int64_t* w) {
    typename Acc::Partial p;
    for (int k = 0; k < Acc::digits; ++k) p.limb[k] = w[k];
    std::memcpy(&p.flags, w + Acc::digits, sizeof p.flags);
    return p;
  }
  ULPSCOPE_HD static void carry_integer(std::int64_t* w) { Acc::carry_limbs(w); }
};

}  // namespace ulpscope
