#pragma once
// exact: a long fixed-point accumulator (Kulisch and Miranker 1981), the value
// sum_i limb[i] * 2^(Low + 32 i) with 32-bit digits carried in 64-bit limbs,
// so that 2^30 additions fit before carries must be propagated (the
// carry-save idea of Collange, Defour, Graillat, Iakymchuk 2015, ExBLAS).
// Every term (an input value, or the product of two, exact in double) is an
// integer multiple of 2^Low, so adding is exact and the result is the same
// integer in any order and on any launch configuration, rounded once to the
// output format (exact_finish.hpp), with no double rounding through fp64.
//
// The integer is slow to update (Digits 64-bit adds per term), so a thread
// first adds in a plain double and spills into the integer only when exactness
// is not guaranteed:
// - fp16 and fp8 (FastEvery > 0): every term is a multiple of 2^Low below
//   2^Top, so FastEvery = 2^(53 + Low - Top) terms cannot round a double
//   (docs/spec.md's note); the run is spilled every FastEvery terms, checked once
//   per vector of W values (add_group). Products of two such values are exact
//   in float (FloatProducts), so each costs one conversion to double.
// - fp32 and bf16 (FastEvery = 0): each double addition is checked to be
//   exact (t - s == x and t - x == s: with |s| >= |x|, t - s is exact
//   (Dekker 1971, Fast2Sum), so equality means a zero rounding error; the
//   other test covers |x| > |s|); a term whose addition would round goes to
//   the integer instead. Products (ManBits < 0) keep the rounding errors of
//   their double run in a second, checked double (add). Either way the result
//   is the exact sum.
// - products of fp16 and fp8_e5m2 (Split): too wide for one exact double run
//   (80 and 64 bits from the least quantum to the top) but not for two. Each
//   term t is split on the grid 2^S, S half way between the quantum and the
//   top: hi = (t + C) - C, C = 1.5 * 2^(52 + S), is t rounded to a multiple
//   of 2^S (the sum t + C keeps bits down to 2^S while |t| < 2^(51 + S);
//   Sterbenz makes the subtraction exact), and lo = t - hi is exact with
//   |lo| <= 2^(S - 1). hi goes to run and lo to a second run (err), each an
//   exact double run for FastEvery terms as above: four additions a term
//   instead of TwoSum's six and the checked add of its error.
// - products of fp32 and bf16 (Window): over 500 binades from the least
//   quantum to the top, so no fixed grid serves; the grid follows the data
//   instead. A run of N = FastEvery = 2^L split terms of P significant bits
//   (48 or 16) is exact on the grid 2^S while every term's exponent e lies in
//   [S + L - 55 + P, S + 52 - L]: the hi parts, multiples of 2^S below
//   2^(S + 53 - L), sum to at most 2^(S + 53); the lo parts, at most 2^(S - 1)
//   and multiples of 2^(e - P + 1) >= 2^(S + L - 54), to at most
//   2^(S + L - 1). A term above the window spills the runs and moves the
//   window up to it (the largest terms set it); one below it, a zero, an
//   infinity or NaN goes to the integer alone. Five additions and an integer
//   compare a term, instead of TwoSum's six additions and the checked add of
//   its error (three more and two compares).
//   The tree kernels add bf16's squares in bins instead
//   (exact_binned_squares.hpp); the window serves fp32's squares, the rows
//   and the models (the alternatives measured for bf16: docs/perf-h100.md,
//   "exact_sum.hpp: Window").
//
// Where the digits live while a thread adds (LimbsOutside): in the state, as
// registers on the GPU, or in memory the caller places (place_limbs; the
// GPU's first pass gives each thread a slice of shared memory). Only the
// rare spills touch them, yet in registers they cost two each and hold the
// widest first passes to 2 blocks of 256 threads per SM (docs/perf-h100.md,
// "exact_sum.hpp: LimbsOutside"). The integer is the same either way: the
// CPU models keep it in the state.
#include <cstdint>
#include <type_traits>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/exact_finish.hpp"
#include "kernels/accumulators/rolled_loop.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/out_format.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

// The grid 2^S of a Split term's cut, half way from 2^low to 2^top (the note at the top).
constexpr int split_grid(int top, int low) { return (top + low) >> 1; }


// Low: exponent of the least significant digit; Digits: how many 32-bit
// digits; FastEvery: terms per exact double run before spilling (0: checked
// additions); Top: every term is below 2^Top; ManBits: the input format's
// stored mantissa bits (-1 for products); TwoLevel: products keep the double
// run's rounding errors in a second double (add); FloatProducts: the product
// of two input values is exact in float; Split: terms are split in two
// exact runs (the note at the top); WindowBits: the split's grid follows a
// window for terms of that many significant bits (0: a fixed grid).
template <int Low, int Digits, std::uint32_t FastEvery, int Top = 0, int ManBits = -1, bool TwoLevel = false,
          bool FloatProducts = false, bool Split = false, int WindowBits = 0, bool LimbsOutside = false>
struct ExactSumOf : ExactFinish<Low, Digits> {
  using Finish = ExactFinish<Low, Digits>;
  using Finish::carry;
  using Finish::carry_limbs;
  using Finish::identity;
  using Finish::kNan;
  using Finish::kNegInf;
  using Finish::kNotMinusZero;
  using Finish::kPosInf;
  using term_t = double;
  using value_t = double;
  static constexpr int low = Low;
  static constexpr int digits = Digits;
  static constexpr std::uint32_t fast_every = FastEvery;
  static constexpr std::uint32_t kCarryEvery = 1u << 30;
  static_assert(!Split || (FastEvery > 0 && !TwoLevel), "a split term goes to two exact runs");
  static constexpr int split_at = split_grid(Top, Low);
  static constexpr bool window = WindowBits > 0;
  static_assert(!Split || window || Top <= 51 + split_at, "t + C keeps t's bits down to 2^split_at");
  // The window (the note at the top), in biased exponent fields: a term is in
  // it when field - win_lo is in [0, kWindowWidth], win_lo = S + L - 55 + P +
  // 1023; a term above it moves it so that its top is kHeadroom binades above.
  static constexpr int kRunLog2 = ceil_log2(FastEvery);
  static constexpr int kWindowWidth = 107 - 2 * kRunLog2 - WindowBits;
  static constexpr int kHeadroom = kWindowWidth / 4;
  static_assert(!window || (Split && FastEvery == (1u << kRunLog2) && kWindowWidth >= 16),
                "a window of at least 16 binades for power-of-two runs");
  // Zeros (field 0) and infinities or NaN (0x7FF) are never in a window that
  // a term of the format moved: its fields stay within (0, 0x7FF).
  static_assert(!window || (Low + 1023 - kWindowWidth > 0 && Top + kHeadroom + 1023 < 0x7FF));

  using Partial = LongInteger<Digits>;
  // LimbsOutside: the digits at limb[0 .. Digits - 1] (place_limbs), the flags here.
  struct Outside {
    std::int64_t* limb;
    std::uint32_t flags;
  };
  using WithLimbsOutside =
      ExactSumOf<Low, Digits, FastEvery, Top, ManBits, TwoLevel, FloatProducts, Split, WindowBits, true>;
  static constexpr int limbs_outside = LimbsOutside ? Digits : 0;
  struct State {
    std::conditional_t<LimbsOutside, Outside, Partial> acc;
    double run;
    std::uint32_t run_terms;
    std::uint32_t since_carry;
    double err;  // products: the rounding errors of run (TwoSum), checked
    double c;    // Window: 1.5 * 2^(52 + S), the split's constant
    int win_lo;  // Window: the lowest exponent field in the window
  };

  // Window: win_lo far below any field, so that the first term moves it.
  ULPSCOPE_HD static State start() {
    if constexpr (LimbsOutside) return {{nullptr, 0u}, -0.0, 0u, 0u, -0.0, 0.0, -(1 << 20)};
    else return {identity(), -0.0, 0u, 0u, -0.0, 0.0, -(1 << 20)};
  }
  // LimbsOutside: the state's digits at limbs[0 .. Digits - 1], zeroed here.
  ULPSCOPE_HD static void place_limbs(State& st, std::int64_t* limbs) {
    static_assert(LimbsOutside);
    for (int k = 0; k < Digits; ++k) limbs[k] = 0;
    st.acc.limb = limbs;
  }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static term_t product(float x, float y) {
    if constexpr (FloatProducts) return double(rn::mul(x, y));  // exact: ExactLayout
    else return rn::mul(double(x), double(y));
  }

  ULPSCOPE_HD static void carry(Outside& p) { carry_limbs(p.limb); }

  // Add one exact double; non-finite values are remembered as flags. p is
  // a Partial (the digits in registers on the GPU) or Outside (in memory).
  // One function for both: the decomposition in a helper of its own took the
  // register path's first pass past 64 registers (docs/perf-h100.md,
  // "exact_sum.hpp: deposit").
  template <class P>
  ULPSCOPE_HD static void deposit(P& p, double t) {
    const std::uint64_t u = detail::double_bits(t);
    const std::uint32_t field = std::uint32_t(u >> 52) & 0x7FFu;
    const bool neg = (u >> 63) != 0;
    if (field == 0x7FFu) {
      p.flags |= (u & 0x000FFFFFFFFFFFFFull) ? kNan : (neg ? kNegInf : kPosInf);
      return;
    }
    if (u == 0x8000000000000000ull) return;  // -0 changes nothing
    p.flags |= kNotMinusZero;
    const std::uint64_t m = (u & 0x000FFFFFFFFFFFFFull) | (field ? 0x0010000000000000ull : 0);
    if (m == 0) return;
    const int off = (field ? int(field) : 1) - 1075 - Low;  // t = m * 2^(Low + off)
    const int i = off >> 5, s = off & 31;
    const std::int64_t lo = std::int64_t((m << s) & 0xFFFFFFFFull);
    const std::int64_t mid = std::int64_t((m >> (32 - s)) & 0xFFFFFFFFull);
    const std::int64_t hi = s ? std::int64_t(m >> (64 - s)) : 0;
    if constexpr (!std::is_same_v<P, Partial>) {
      // In memory (Outside, or digits a block shares: exact_value_window.hpp,
      // SharedDigits): up to three indexed additions, inside the slice. What is
      // deposited stays below 2^(Top + 64) (terms below 2^Top, runs of at
      // most 2^30 of them, a window's run below 2^(Top + kHeadroom + 10)),
      // where i + 2 < Digits. Below, off >= -52 (a nonzero multiple of
      // 2^Low), so i >= -2, and a digit at a negative index is zero (bits
      // below 2^Low): it goes to digit 0 instead, as the memory below is
      // another thread's (adding its zero there raced with that thread's own
      // deposits: compute-sanitizer racecheck on the H100). Clamped indices
      // rather than branches, which ran slower (docs/perf-h100.md,
      // "exact_sum.hpp: deposit").
      static_assert(32 * (Digits - 2) > Top + 63 - Low, "a value below 2^(Top + 64) has i + 2 < Digits");
      p.limb[i < 0 ? 0 : i] += neg ? -lo : lo;
      p.limb[i < -1 ? 0 : i + 1] += neg ? -mid : mid;
      p.limb[i + 2] += neg ? -hi : hi;
    } else {
      // Predicated over all digits rather than indexed, so the limbs stay in
      // registers on the GPU.
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int k = 0; k < Digits; ++k) {
        const std::int64_t d = k == i ? lo : (k == i + 1 ? mid : (k == i + 2 ? hi : 0));
        p.limb[k] = neg ? p.limb[k] - d : p.limb[k] + d;
      }
    }
  }

  ULPSCOPE_HD static void spill(State& st, double t) {
    deposit(st.acc, t);
    if (++st.since_carry == kCarryEvery) {
      carry(st.acc);
      st.since_carry = 0;
    }
  }

  // Whether s = fl(a + b) is a + b exactly (Fast2Sum: the note at the top).
  // False for NaN, and for an s that overflowed.
  template <class T>
  ULPSCOPE_HD static bool sum_is_exact(T a, T b, T s) {
    return rn::sub(s, a) == b && rn::sub(s, b) == a;
  }

  ULPSCOPE_HD static void spill_run(State& st) {
    if constexpr (Split) {
      // An infinite or NaN term leaves run infinite or NaN and err NaN (lo =
      // inf - inf): run alone says which. A zero run is left out, so that the
      // sum of -0 terms stays -0 (their hi is +0, their lo -0: err keeps the
      // sign, as run does unsplit).
      if (!(rn::sub(st.run, st.run) == 0.0)) {
        spill(st, st.run);
      } else {
        if (st.run != 0.0) spill(st, st.run);
        spill(st, st.err);
      }
      st.err = -0.0;
    } else {
      spill(st, st.run);
    }
    st.run = -0.0;
    st.run_terms = 0;
  }

  // Split: t = hi + lo, hi to run and lo to err (the note at the top).
  // C of the fixed grid 2^split_at: (t + C) - C is t rounded to it.
  ULPSCOPE_HD static double split_constant() { return 1.5 * detail::exact_pow2(52 + split_at); }
  ULPSCOPE_HD static void add_split(State& st, double t) {
    double c;
    if constexpr (window) c = st.c;
    else c = split_constant();
    const double hi = rn::sub(rn::add(t, c), c);
    st.run = rn::add(st.run, hi);
    st.err = rn::add(st.err, rn::sub(t, hi));
  }

  // Window: t's biased exponent field, and whether it lies in the window.
  ULPSCOPE_HD static int exponent_field(double t) { return int(detail::double_bits(t) >> 52) & 0x7FF; }
  ULPSCOPE_HD static bool in_window(const State& st, int field) {
    return unsigned(field - st.win_lo) <= unsigned(kWindowWidth);
  }

  // Window: t into the runs when its exponent is in the window, else into the
  // integer, or the runs spilled and the window moved up to t.
  ULPSCOPE_HD static void add_windowed(State& st, double t) {
    const int field = exponent_field(t);
    if (!in_window(st, field)) {
      if (field == 0 || field == 0x7FF || field < st.win_lo) return spill(st, t);  // zeros, inf, NaN, small
      if (st.run_terms > 0) spill_run(st);
      st.win_lo = field + kHeadroom - kWindowWidth;
      const int s = st.win_lo - 1023 - (kRunLog2 - 55 + WindowBits);  // the grid 2^S
      st.c = detail::double_from_bits(std::uint64_t(52 + s + 1023) << 52 | 0x0008000000000000ull);
    }
    if (st.run_terms >= FastEvery) spill_run(st);
    add_split(st, t);
    ++st.run_terms;
  }

  ULPSCOPE_HD static void add(State& st, term_t t) {
    if constexpr (window) {
      add_windowed(st, t);
    } else if constexpr (Split) {
      if (st.run_terms >= FastEvery) spill_run(st);
      add_split(st, t);
      ++st.run_terms;
    } else if constexpr (FastEvery > 0) {
      if (st.run_terms >= FastEvery) spill_run(st);
      st.run = rn::add(st.run, t);  // exact: see the note at the top
      ++st.run_terms;
    } else if constexpr (!TwoLevel) {
      const double s = rn::add(st.run, t);
      if (sum_is_exact(st.run, t, s)) st.run = s;
      else spill(st, t);  // would round; also infinities and NaN
    } else {
      // Products have up to 2p significant bits and nearly always round in
      // run: keep run + t = s + e exactly by Knuth's TwoSum (Knuth 1969;
      // Ogita, Rump, Oishi 2005, Algorithm 3.1) and add e, which is small,
      // into err with the exactness check.
      if (!(rn::sub(t, t) == 0.0)) return spill(st, t);  // infinities and NaN
      const double s = rn::add(st.run, t);
      const double bp = rn::sub(s, st.run);
      const double e = rn::add(rn::sub(st.run, rn::sub(s, bp)), rn::sub(t, bp));
      st.run = s;
      if (e != 0.0) {  // a zero e leaves err (and its sign of zero) alone
        const double c = rn::add(st.err, e);
        if (sum_is_exact(st.err, e, c)) st.err = c;
        else spill(st, e);
      }
    }
  }

  // bf16 (FastEvery = 0, few mantissa bits): W values are first added in
  // float with the same exactness check as add(); a group whose float sum
  // rounded is added term by term instead.
  template <int W>
  static constexpr bool checked_float_groups = FastEvery == 0 && ManBits >= 0 && ManBits + ceil_log2(W) <= 12;
  // One 16-byte vector of values at most (larger groups' arrays crowd out
  // registers); products where their runs are exact (fp16, fp8). Window: up
  // to 8 terms, its rare paths one rolled loop per group rather than inlined
  // at every term, twice as fast (docs/perf-h100.md, "exact_sum.hpp: groups").
  template <int W>
  static constexpr bool groups =
      window ? W <= 8 : (W <= 16 && (FastEvery >= W || checked_float_groups<W>));
  // fp8_e4m3: any W values (multiples of 2^Low below 2^Top) add exactly in
  // float, as 24 bits span Top - Low + log2(W), and the group costs one
  // conversion to double.
  template <int W>
  static constexpr bool float_groups = FastEvery >= W && ManBits >= 0 && Top - Low + ceil_log2(W) <= 24;

  // C of a cut in float on the grid 2^S: (t + C) - C is t rounded to a
  // multiple of 2^S while |t| <= 2^(22 + S).
  template <int S>
  ULPSCOPE_HD static constexpr float float_cut() {
    static_assert(23 + S >= 0 && 23 + S < 64, "C is a float power of two times 1.5");
    return 1.5f * float(std::uint64_t(1) << (23 + S));
  }

  // Products exact in float (FloatProducts) without a split, W at once: each
  // product t cut in float on the grid 2^S, S = float_split_at<W>, into hi =
  // (t + C) - C (C = 1.5 * 2^(23 + S); t is within 2^(22 + S)) and lo = t - hi
  // (exact, |lo| <= 2^(S - 1)); the W hi add exactly in float (multiples of
  // 2^S below W 2^Top <= 2^(24 + S)) and so do the W lo (multiples of 2^Low
  // below W 2^(S - 1) <= 2^(24 + Low)). Two conversions and two double
  // additions a group instead of one of each a product: fp8_e4m3
  // (docs/perf-h100.md, "exact_sum.hpp: float_split_groups").
  template <int W>
  static constexpr int float_split_at = 25 + Low - ceil_log2(W);
  template <int W>
  static constexpr bool float_split_groups = FloatProducts && !Split && !window && FastEvery >= 2 * W &&
                                             Top <= 22 + float_split_at<W> &&
                                             Top + ceil_log2(W) <= 24 + float_split_at<W>;
  template <int W>
    requires float_split_groups<W>
  ULPSCOPE_HD static void add_float_products(State& st, const float* x, const float* y) {
    constexpr int S = float_split_at<W>;
    constexpr float c = float_cut<S>();
    if (st.run_terms > FastEvery - 2 * W) spill_run(st);
    float hs = 0.0f, ls = -0.0f;  // ls keeps the sign of a zero sum, as the run does: hi is never -0
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) {
      const float t = rn::mul(x[j], y[j]);
      const float hi = rn::sub(rn::add(t, c), c);
      hs = rn::add(hs, hi);
      ls = rn::add(ls, rn::sub(t, hi));
    }
    // Two sums of at most W terms each below 2^Top: the run counts 2 W.
    st.run = rn::add(st.run, double(ls));
    if (hs != 0.0f) st.run = rn::add(st.run, double(hs));
    st.run_terms += 2 * W;
  }

  // Split products exact in float (fp8_e5m2), W at once: each product t cut
  // in float on the grid 2^S, S = float_hi_at<W>, into hi = (t + C) - C (C =
  // 1.5 * 2^(23 + S); |t| < 2^Top <= 2^(22 + S)) and lo = t - hi (exact, |lo|
  // <= 2^(S - 1)). The W hi add exactly in float (multiples of 2^S, at most W
  // 2^Top <= 2^(24 + S)) and go to run as one term; each lo goes to err as
  // add_split's lo does, only up to 2^(S - split_at) times larger, so it
  // counts that many terms of the runs' length. A product costs one
  // conversion and one double addition instead of add_split's one and five.
  // Not for fp16, whose lo parts would not fit the runs (docs/perf-h100.md,
  // "exact_sum.hpp: float_hi_groups").
  template <int W>
  static constexpr int float_hi_at = Top + ceil_log2(W) - 24;
  template <int W>
  static constexpr unsigned float_hi_weight = float_hi_at<W> >= split_at && float_hi_at<W> - split_at < 31
                                                  ? 1u << (float_hi_at<W> - split_at)
                                                  : 0u;
  template <int W>
  static constexpr bool float_hi_groups = FloatProducts && Split && !window && Top <= 22 + float_hi_at<W> &&
                                          float_hi_weight<W> > 0 && W * float_hi_weight<W> <= FastEvery;
  template <int W>
    requires float_hi_groups<W>
  ULPSCOPE_HD static void add_float_products(State& st, const float* x, const float* y) {
    constexpr int S = float_hi_at<W>;
    constexpr float c = float_cut<S>();
    constexpr unsigned terms = W * float_hi_weight<W>;
    if (st.run_terms > FastEvery - terms) spill_run(st);
    float hs = 0.0f;
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) {
      // t = x y is exact in float, so fma(x, y, c) = RN(t + c) and fma(x,
      // y, -hi) = t - hi: no instruction for the product itself.
      const float hi = rn::sub(rn::fma(x[j], y[j], c), c);
      hs = rn::add(hs, hi);
      st.err = rn::add(st.err, double(rn::fma(x[j], y[j], -hi)));
    }
    // An infinite t leaves hs infinite (or NaN) and its lo NaN: run says
    // which, as add_split's hi does (spill_run).
    st.run = rn::add(st.run, double(hs));
    st.run_terms += terms;
  }

  // Split products of fp16 (its lo parts do not fit float_hi_groups' cut),
  // W at once, with the product inside add_split's two additions: fma(x, y,
  // C) = RN(t + C) and fma(x, y, -hi) = t - hi on the values widened to
  // double (x y is exact in double), the same hi and lo as add_split's of
  // the float product converted. Beside mean_var's run of values a square
  // then costs no product and no conversion of its own (the value's is
  // shared). Not for SumReducer's squares, which hold fewer registers and
  // spilled (docs/perf-h100.md, "exact_sum.hpp: double_split_groups").
  template <int W>
  static constexpr bool double_split_groups = Split && !window && FastEvery >= W;
  template <int W>
  static constexpr bool split_product_groups = double_split_groups<W> && !float_hi_groups<W>;
  template <int W>
    requires split_product_groups<W>
  ULPSCOPE_HD static void add_split_products(State& st, const float* x, const float* y) {
    if (st.run_terms > FastEvery - W) spill_run(st);
    const double c = split_constant();
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) add_split_product(st, x[j], y[j], c);
    st.run_terms += W;
  }
  // One product x y (exact in double) split inside the two fma, c =
  // split_constant(); the caller counts it in the runs.
  ULPSCOPE_HD static void add_split_product(State& st, double x, double y, double c) {
    const double hi = rn::sub(rn::fma(x, y, c), c);
    st.run = rn::add(st.run, hi);
    st.err = rn::add(st.err, rn::fma(x, y, -hi));
  }

  // One product x y of values as doubles (exact in double) into the runs;
  // the caller counts it. Split products are cut inside two fma
  // (add_split_product); the others go into the exact run by one fma,
  // fma(x, y, run) = run + x y (fp8_e4m3's squares beside mean_var's values).
  template <int W>
  static constexpr bool double_product_groups = FastEvery >= W && !window && ManBits < 0;
  ULPSCOPE_HD static void add_double_product(State& st, double x, double y) {
    if constexpr (Split) add_split_product(st, x, y, split_constant());
    else st.run = rn::fma(x, y, st.run);
  }
  // W values as doubles, value_at(j), into the exact double run (the tree
  // kernels convert an fp8 value's half to double once, and add it as it is
  // converted): the same run as add_group's. double_value_groups: where that
  // is a sum's way, not e4m3's, whose values add in float first.
  template <int W>
  static constexpr bool double_value_runs = FastEvery >= W && !Split && !window && ManBits >= 0;
  template <int W>
  static constexpr bool double_value_groups = double_value_runs<W> && !float_groups<W>;
  template <int W, class Get>
    requires double_value_runs<W>
  ULPSCOPE_HD static void add_values_by(State& st, Get value_at) {
    if (st.run_terms > FastEvery - W) spill_run(st);
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) st.run = rn::add(st.run, value_at(j));
    st.run_terms += W;
  }

  // W input values at once (only where groups<W>): the same exact sum as W
  // calls of add(). fp16 and fp8: the exact double run, its length checked
  // once per group; e4m3 adds the group in float first (the alternatives
  // measured: docs/perf-h100.md, "exact_sum.hpp: add_group").
  template <int W, class T>
  ULPSCOPE_HD static void add_group(State& st, const T* x) {
    if constexpr (window) {
      // Every term in the window and room in the run: the split alone.
      bool inside = st.run_terms <= FastEvery - W;
      ULPSCOPE_UNROLL
      for (int j = 0; j < W; ++j) inside = inside && in_window(st, exponent_field(x[j]));
      if (inside) {
        ULPSCOPE_UNROLL
        for (int j = 0; j < W; ++j) add_split(st, x[j]);
        st.run_terms += W;
      } else {
        double t[W];
        ULPSCOPE_UNROLL
        for (int j = 0; j < W; ++j) t[j] = x[j];
        each_in_one_copy<W>(t, [&](double v) { add_windowed(st, v); });
      }
    } else if constexpr (checked_float_groups<W>) {
      float s = x[0];
      bool exact = true;
      ULPSCOPE_UNROLL
      for (int j = 1; j < W; ++j) {
        const float t = rn::add(s, x[j]);
        exact = exact && sum_is_exact(s, x[j], t);
        s = t;
      }
      if (exact) {
        add(st, double(s));
      } else {
        ULPSCOPE_UNROLL
        for (int j = 0; j < W; ++j) add(st, double(x[j]));
      }
    } else {
      if (st.run_terms > FastEvery - W) spill_run(st);
      if constexpr (Split) {
        ULPSCOPE_UNROLL
        for (int j = 0; j < W; ++j) add_split(st, double(x[j]));
      } else if constexpr (float_groups<W>) {
        float g = x[0];
        ULPSCOPE_UNROLL
        for (int j = 1; j < W; ++j) g = rn::add(g, x[j]);  // exact: float_groups
        st.run = rn::add(st.run, double(g));
      } else {
        ULPSCOPE_UNROLL
        for (int j = 0; j < W; ++j) st.run = rn::add(st.run, double(x[j]));  // exact: the note at the top
      }
      st.run_terms += W;
    }
  }

  ULPSCOPE_HD static Partial partial(const State& st) {
    State s = st;
    if constexpr (FastEvery > 0) {
      if (s.run_terms > 0) spill_run(s);
    } else {
      deposit(s.acc, s.run);  // -0 (nothing added) is a no-op
      deposit(s.acc, s.err);
    }
    Partial p;
    if constexpr (LimbsOutside) {
      for (int k = 0; k < Digits; ++k) p.limb[k] = s.acc.limb[k];
      p.flags = s.acc.flags;
    } else {
      p = s.acc;
    }
    carry(p);
    return p;
  }

  // Carried after every merge: a lazy carry cost the first pass registers and
  // gained nothing measurable (docs/perf-h100.md, "exact_sum.hpp: merge").
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    ULPSCOPE_UNROLL
    for (int k = 0; k < Digits; ++k) a.limb[k] += b.limb[k];
    a.flags |= b.flags;
    carry(a);
  }

};

// The layout for terms of format F (Squared: products of two values of F):
// digits from the least quantum up to the largest term times 2^64 (room for
// any count of terms), plus two digits for a term's spill and the sign.
// SplitProducts: products that TwoSum would take (8 or more significant
// bits, below) take two split runs instead (not dot: its two inputs halve
// the terms per byte, and the split cost it registers). Products of fewer
// bits always may: e5m2's, in dot too, where the checked run spilled the
// products that would round.
// WindowProducts: products of fp32 and bf16 may take the window (not
// mean_var's bf16 sum of squares, slower beside its first sum)
// (docs/perf-h100.md, "exact_sum.hpp: ExactLayout").
template <class F, bool Squared, bool SplitProducts = Squared, bool WindowProducts = true>
struct ExactLayout {
  static constexpr int quantum = (Squared ? 2 : 1) * (F::emin - F::man_bits);
  static constexpr int top = (Squared ? 2 : 1) * (F::emax + 1);
  static constexpr int digits = (top + 64 - quantum) / 32 + 3;
  static constexpr int fast_log2 = 53 + quantum - top;
  // Split products (the note at the top): hi, a multiple of 2^S up to 2^top,
  // and lo, a multiple of the quantum up to 2^(S - 1), each an exact run of
  // 2^split_log2 terms; where at least 2^10 (fp16: S = -8, 2^13 terms; e5m2:
  // S = 0, 2^21) and one run cannot hold the products.
  static constexpr int split_at = split_grid(top, quantum);
  static constexpr int split_log2 =
      53 - top + split_at < 54 - split_at + quantum ? 53 - top + split_at : 54 - split_at + quantum;
  static constexpr bool two_sum_products = Squared && F::man_bits >= 7;  // the measurements below
  static constexpr bool split = Squared && (SplitProducts || !two_sum_products) && fast_log2 <= 0 &&
                                split_log2 >= 10 && top <= 51 + split_at;
  // Products of formats with float's exponent range (fp32, bf16) span over
  // 500 binades: split on a grid that follows a window (the note at the top),
  // runs of 2^10 terms of 2p significant bits.
  static constexpr bool window = WindowProducts && Squared && !split && top - quantum > 256;
  static constexpr int window_bits = window ? 2 * (F::man_bits + 1) : 0;
  static constexpr int run_log2 = window ? 10 : (split ? split_log2 : fast_log2);
  static constexpr std::uint32_t fast_every = run_log2 <= 0 ? 0u : (run_log2 >= 30 ? (1u << 30) : (1u << run_log2));
  // TwoSum for products of 8 or more significant bits, several times faster
  // than the checked run alone; for e5m2 products (3 bits) the checked run
  // was faster, and the split faster still (SplitProducts; docs/perf-h100.md,
  // "exact_sum.hpp: ExactLayout").
  // Products of two values with at most 12 significant bits (fp16, fp8) are
  // exact in float when their range fits float's: one conversion per term.
  static constexpr bool float_products = Squared && 2 * (F::man_bits + 1) <= 24 && quantum >= -149 && top <= 128;
  using type = ExactSumOf<quantum, digits, fast_every, top, Squared ? -1 : F::man_bits,
                          two_sum_products && !split && !window, float_products, split || window,
                          window_bits>;
};

template <class F, bool Squared, bool SplitProducts = Squared, bool WindowProducts = true>
using ExactSum = typename ExactLayout<F, Squared, SplitProducts, WindowProducts>::type;

}  // namespace ulpscope
