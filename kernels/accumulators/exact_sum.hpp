#pragma once
// exact: a long fixed-point accumulator (Kulisch and Miranker 1981), the value
// sum_i limb[i] * 2^(Low + 32 i) with 32-bit digits carried in 64-bit limbs,
// so that 2^30 additions fit before carries must be propagated (the
// carry-save idea of Collange, Defour, Graillat, Iakymchuk 2015, ExBLAS).
// Every term (an input value, or the product of two, exact in double) is an
// integer multiple of 2^Low, so adding is exact and the result is the same
// integer in any order and on any launch configuration. One final rounding
// from the integer takes it to the output format (round to nearest, ties to
// even, subnormals, overflow), with no double rounding through fp64.
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
//   Not taken for bf16 (H100, one session, a build each, three runs): its
//   products cut in float a vector at a time on a grid of their own, the hi
//   and lo parts summed in float (exact while every product lies within 28
//   binades of the largest), two conversions and two double additions a
//   vector: sumsq 0.810 -> 0.626 of cub Sum fp32, dot 0.944 -> 0.869. ncu:
//   22 instructions an element (the check of the window by a maximum and a
//   minimum, the cut by two fma and three additions), 67% of issue slots busy.
//   Nor, a later build the same session, the window of squares checked on
//   the values (a float maximum and minimum a vector against bounds whose
//   squares lie in it) instead of each square's exponent field: sumsq bf16
//   0.809 -> 0.797, fp32 0.930 -> 0.933 (three runs each). The tree kernels'
//   first pass of bf16 squares now adds them in bins of double instead
//   (exact_binned_squares.hpp); the window serves fp32's squares, the rows
//   and the models.
//
// Where the digits live while a thread adds (LimbsOutside): in the state, as
// registers on the GPU, or in memory the caller places (place_limbs; the
// GPU's first pass gives each thread a slice of shared memory). Only the
// rare spills touch them, yet in registers they cost two each (42 for the
// squares of bf16), and the widest first passes took 128 (2 blocks of 256
// threads per SM; ncu on the H100: 25% occupancy, DRAM 33-69% busy while
// issue slots were 45-60% busy). The integer is the same either way: the CPU
// models keep it in the state.
#include <cstdint>
#include <type_traits>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/rolled_loop.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/out_format.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

// The grid 2^S on which a Split term is cut: half way between the least
// quantum 2^low and the top 2^top (the note at the top).
constexpr int split_grid(int top, int low) { return (top + low) >> 1; }

// RN_F(+-(w / 2^63) * 2^e), w's leading one at bit 63, sticky: nonzero bits
// below w; infinities beyond f's largest finite value (round_to_out then
// applies the format's overflow rule). Out of line on the GPU: a finish calls
// it up to four times (the exact mean_var: mean and variance, each in f and
// in fp64), and each inlined copy was about 200 sm_90 instructions more for
// the finish's one thread to fetch, cold (exact_moments.hpp).
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
struct ExactSumOf {
  using term_t = double;
  using value_t = double;
  static constexpr int low = Low;
  static constexpr int digits = Digits;
  static constexpr std::uint32_t fast_every = FastEvery;
  enum : std::uint32_t { kNan = 1, kPosInf = 2, kNegInf = 4, kNotMinusZero = 8 };
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

  ULPSCOPE_HD static Partial identity() {
    Partial p;
    for (int i = 0; i < Digits; ++i) p.limb[i] = 0;
    p.flags = 0;
    return p;
  }
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
  ULPSCOPE_HD static void carry(Outside& p) { carry_limbs(p.limb); }

  // Add one exact double; non-finite values are remembered as flags. p is
  // a Partial (the digits in registers on the GPU) or Outside (in memory).
  // One function for both, so that the register path compiles as before: the
  // decomposition moved into a helper took the fp32 sum's first pass from 64
  // to 94 registers (ptxas, sm_90).
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
      // rather than branches: measured when exact dot e5m2 still took a
      // checked run that spilled each product that would round (it splits
      // them now, ExactLayout), with the two additions skipped by branches it
      // ran at 0.668 of cub Sum fp32, clamped 0.726 (H100, two runs of the
      // whole table); the checked runs of bf16 sums still deposit often.
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
  // One 16-byte vector of input values at most: groups of the 2-4 vectors in
  // flight measured slower on the H100 (bf16 0.75 against 0.84 of cub Sum
  // fp32; e4m3 0.82 against 0.85), the arrays crowding out registers.
  // Products (ManBits < 0) in groups where their runs are exact (fp16,
  // fp8); their float groups would not be.
  // Window: groups of up to 8 terms, so that the rare paths (the integer, a
  // moved window) are one rolled loop per group rather than inlined at every
  // term: inlined, exact sumsq bf16 measured 0.392 -> 0.189 of cub Sum fp32.
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
  // additions a group instead of one of each a product: fp8_e4m3. H100, one
  // session, a build each (2-3 runs): sumsq e4m3 0.865 -> 0.877, norm2 0.847
  // -> 0.858, rms 0.833 -> 0.844 of cub Sum fp32; dot e4m3 0.960 either way.
  // Not taken: the cut and lo by fma as e5m2's below (sumsq 0.882 -> 0.865,
  // norm2 0.856 -> 0.846, rms 0.847 -> 0.835, dot 0.958 -> 0.961).
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
  // H100, one session, a build each (three runs, fraction of cub Sum fp32):
  // add_split / this with a product and t + C / this with fma: sumsq e5m2
  // 0.649 / 0.711 / 0.747, norm2 0.637 / 0.700 / 0.730, rms 0.629 / 0.690 /
  // 0.720, dot 0.928 / 0.941 / 0.943.
  // Not taken for fp16, whose lo parts would not fit the runs: a second cut
  // of t - hi on the split's grid, its parts summed in float too (seven float
  // instructions, a conversion and a double addition a square): sumsq fp16
  // 0.943 -> 0.930 of cub Sum fp32 (H100, four runs each; 8 bytes of spills
  // at 40 registers).
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
  // shared). H100, one session, a build each (four runs, fraction of cub Sum
  // fp32): mean_var fp16 0.848 -> 0.855. Not for SumReducer's squares, which
  // hold fewer registers: sumsq fp16 0.944 -> 0.933 (ptxas: 8 bytes of spills
  // at 40 registers, none before), norm2 0.933 -> 0.924, rms 0.926 -> 0.917.
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
  // once per group; e4m3 adds the group in float first. Measured on the H100
  // (fraction of cub Sum fp32), against float bins whose W-term sums were exact
  // by construction (the bins' classification cost more than the conversions):
  // fp16 0.87 -> 0.93, fp8_e5m2 0.61 -> 0.80; e4m3 with one bin, which is the
  // float group, 0.86, and without it 0.81.
  // Not taken (H100, a later session, three runs each): the values of fp16
  // and e5m2 cut in float as float_split_groups cuts products (two
  // conversions and two double additions a vector), sum e5m2 0.868 -> 0.858,
  // mean_var fp16 0.853 -> 0.823; the run as two chains of additions (even
  // and odd values), within 0.004 either way. Nor (a later session) the
  // doubles built from the values' bits, which leaves the XU pipe that
  // conversions issue on idle, unscaled inside the run's fma: sum e5m2 0.871
  // -> 0.836 (docs/perf-h100.md).
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

  // Carried after every merge: a lazy carry (only once a limb reaches 2^61)
  // took the fp32 first pass from 64 to 98 registers on sm_90 (2 blocks of
  // 256 per SM instead of 4: 0.93 -> 0.76 of cub Sum fp32) and gained
  // nothing measurable in the second pass (exact fp16 0.939 -> 0.940).
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    ULPSCOPE_UNROLL
    for (int k = 0; k < Digits; ++k) a.limb[k] += b.limb[k];
    a.flags |= b.flags;
    carry(a);
  }

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
  // memory loads (ncu on the H100: 43% of the exact second pass's stalls on
  // L1TEX; in registers the exact mean gained 0.004-0.015 of cub Sum fp32,
  // the exact sum nothing measurable).
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
  // Montgomery 1994). The GPU has no 64-bit divide instruction: its software
  // division cost the exact mean about 5 us on the H100 (bf16 mean 0.820 ->
  // 0.842 of cub Sum fp32, the same runs' sum unchanged).
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
    using Window = ExactSumOf<0, W, 0>;
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
    using Wide = ExactSumOf<Low - 256, Digits + 9, 0>;
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

  ULPSCOPE_HD static value_t total(const Partial& p) { return round(p, out_format(Dtype::fp64)); }
};

// The layout for terms of format F (Squared: products of two values of F):
// digits from the least quantum up to the largest term times 2^64 (room for
// any count of terms), plus two digits for a term's spill and the sign.
// SplitProducts: products that TwoSum would take (8 or more significant
// bits, below) take two split runs instead (dot does not: its two inputs
// halve the terms per byte, and the split took the dot fp16 first pass from
// 63 to 71 registers, 3 blocks per SM). Products of fewer bits always may:
// e5m2's, in dot too, where the checked run spilled the products that would
// round (H100, 2^28, fraction of cub Sum fp32, three runs each in one
// session, the digits in shared memory either way: dot e5m2 0.724 -> 0.929).
// WindowProducts: products of fp32 and bf16 may take the window (mean_var's
// bf16 sum of squares does not: beside its first sum it measured 0.290 ->
// 0.151 of cub Sum fp32 on the H100 with it).
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
  // TwoSum for products of 8 or more significant bits: measured on the H100
  // (2^28, uniform inputs) dot fp32 0.14 -> 0.85 of cub Sum fp32, sumsq fp32
  // 0.07 -> 0.43, fp16 0.09 -> 0.57, bf16 0.04 -> 0.34 (dot fp16 and bf16 lose
  // 0.14); for e5m2 products (3 bits) the checked run alone was faster, and
  // the split runs faster still (SplitProducts).
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
