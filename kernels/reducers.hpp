#pragma once
// An op and an accumulator composed into a reducer: what one element adds to
// a thread's state, and how the last partial becomes the op's outputs. The
// shapes (kernels/tree for the GPU, kernels/model for the CPU) are written
// once over this interface:
//   State, Partial, Params          per-thread state, exchanged partial, pass input
//   start(), identity()             empty state and partial
//   add(State&, x, y, Params)       one element (y: dot's second input)
//   partial(State), merge(P&, P)    as the accumulator's (accumulators/README.md)
//   finish(Partial, FinishArgs, Params) -> Finished
//   passes                          2 for two_pass: First runs before, and
//                                   params(First's finished) feeds the second.
#include <cstdint>
#include <type_traits>

#include "formats/dtype.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/compensated_sum.hpp"
#include "kernels/accumulators/exact_binned_squares.hpp"
#include "kernels/accumulators/exact_moments.hpp"
#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/accumulators/exact_value_window.hpp"
#include "kernels/accumulators/extremum.hpp"
#include "kernels/accumulators/pairwise_sum.hpp"
#include "kernels/accumulators/rounded_sum.hpp"
#include "kernels/accumulators/welford.hpp"
#include "kernels/elementary.hpp"
#include "kernels/op.hpp"
#include "kernels/out_format.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

struct FinishArgs {
  Op op;
  Dtype out;
  Saturation sat;
  std::int64_t n;  // elements reduced
  double eps;      // rms
};

// Outputs in the output format (widened to double) and before that rounding.
struct Finished {
  double value[2];
  double unrounded[2];
};

struct NoParams {};

template <class T>
ULPSCOPE_HD inline T as_value(std::int64_t n) {
  if constexpr (sizeof(T) == 4) return rn::to_float(n);
  else return rn::to_double(n);
}
template <class T>
ULPSCOPE_HD inline T as_value(double x) {
  if constexpr (sizeof(T) == 4) return rn::narrow(x);
  else return x;
}

ULPSCOPE_HD inline void set_output(Finished& f, int k, double v, const FinishArgs& a) {
  f.unrounded[k] = v;
  f.value[k] = round_to_out(v, a.out, a.sat);
}

// sum, mean, norm2, rms, ... after the accumulated total t (in value_t):
// the finishing operations are done in the accumulator's precision.
template <class T>
ULPSCOPE_HD inline T finish_sum_like(T t, const FinishArgs& a) {
  if (a.n == 0) t = T(0);  // the empty sum is +0
  switch (a.op) {
    case Op::mean: return rn::div(t, as_value<T>(a.n));
    case Op::norm2: return rn::sqrt(t);
    case Op::rms: return rn::sqrt(rn::add(rn::div(t, as_value<T>(a.n)), as_value<T>(a.eps)));
    default: return t;
  }
}

enum class TermKind { value, square, product };

// Digits a thread keeps outside an accumulator's or reducer's state
// (exact_sum.hpp, LimbsOutside), 0 for those without.
template <class T>
inline constexpr int limbs_outside_of = [] {
  if constexpr (requires { T::limbs_outside; }) return T::limbs_outside;
  else return 0;
}();

template <class Acc>
struct is_exact_sum {
  static constexpr bool value = false;
};
template <int L, int D, std::uint32_t F, int T, int M, bool TL, bool FP, bool S, int WB, bool LO>
struct is_exact_sum<ExactSumOf<L, D, F, T, M, TL, FP, S, WB, LO>> {
  static constexpr bool value = true;
};

// Accumulators that add W terms at once (add_group<W>) with the same result
// as W adds: pairwise (the same tree), exact sums of narrow formats (one
// check of the exact double run per group; exact_sum.hpp).
template <class Acc, int W>
struct acc_groups {
  static constexpr bool value = false;
};
template <int L, int D, std::uint32_t F, int T, int M, bool TL, bool FP, bool S, int WB, bool LO, int W>
struct acc_groups<ExactSumOf<L, D, F, T, M, TL, FP, S, WB, LO>, W> {
  static constexpr bool value = ExactSumOf<L, D, F, T, M, TL, FP, S, WB, LO>::template groups<W>;
};
template <int Levels, int W>
struct acc_groups<PairwiseSumOf<Levels>, W> {
  static constexpr bool value = W >= 2 && W <= 64;
};

// Adds x * y: the accumulator's own add_product where it has one (a product
// fused into its addition: compensated_sum.hpp), else its product's term.
template <class Acc>
ULPSCOPE_HD void add_product(typename Acc::State& st, float x, float y) {
  if constexpr (requires { Acc::add_product(st, x, y); }) Acc::add_product(st, x, y);
  else Acc::add(st, Acc::product(x, y));
}

// The terms of W products x[j] * y[j] (Acc::product).
template <class Acc, int W>
ULPSCOPE_HD void products_of(const float* x, const float* y, typename Acc::term_t* t) {
  ULPSCOPE_UNROLL
  for (int j = 0; j < W; ++j) t[j] = Acc::product(x[j], y[j]);
}

// W products x[j] * y[j] at once as their terms (add_group of products_of):
// the same result as W add_products.
template <class Acc, int W>
ULPSCOPE_HD void add_product_terms(typename Acc::State& st, const float* x, const float* y) {
  typename Acc::term_t t[W];
  products_of<Acc, W>(x, y, t);
  Acc::template add_group<W>(st, t);
}

// W products at once, where the accumulator adds groups: add_product_terms,
// or the accumulator's own add_float_products (exact fp8_e4m3 products: split
// in float).
template <class Acc, int W>
ULPSCOPE_HD void add_product_group(typename Acc::State& st, const float* x, const float* y) {
  if constexpr (requires { Acc::template add_float_products<W>(st, x, y); })
    Acc::template add_float_products<W>(st, x, y);
  else
    add_product_terms<Acc, W>(st, x, y);
}

// sum, mean (value); sumsq, norm2, rms (square); dot (product).
template <class Acc, TermKind K>
struct SumReducer {
  using value_t = typename Acc::value_t;
  using State = typename Acc::State;
  using Partial = typename Acc::Partial;
  using Params = NoParams;
  static constexpr int passes = 1;
  ULPSCOPE_HD static State start() { return Acc::start(); }
  ULPSCOPE_HD static Partial identity() { return Acc::identity(); }
  ULPSCOPE_HD static void add(State& st, float x, float y, const Params&) {
    if constexpr (K == TermKind::value) Acc::add(st, Acc::term(x));
    else add_product<Acc>(st, x, K == TermKind::square ? x : y);
  }
  // W values at once where the accumulator has a faster exact way (exact sums
  // of narrow formats: exact_sum.hpp, add_group); the same result as W adds.
  template <int W>
  static constexpr bool adds_groups = acc_groups<Acc, W>::value;
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x, const float* y, const Params&) {
    if constexpr (K == TermKind::value) {
      Acc::template add_group<W>(st, x);
    } else {
      add_product_group<Acc, W>(st, x, K == TermKind::square ? x : y);
    }
  }
  // W values as doubles, value_at(j) (exact sums of fp8_e5m2 in the tree
  // kernels: tree_agent.cuh, adds_values_as_doubles).
  template <int W>
  static constexpr bool takes_values_by = [] {
    if constexpr (K == TermKind::value && is_exact_sum<Acc>::value) return Acc::template double_value_groups<W>;
    else return false;
  }();
  template <int W, class Get>
  ULPSCOPE_HD static void add_values_by(State& st, Get value_at) {
    static_assert(takes_values_by<W>);
    Acc::template add_values_by<W>(st, value_at);
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return Acc::partial(st); }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { Acc::merge(a, b); }
  // Exact sums whose digits live outside the state (exact_sum.hpp).
  static constexpr int limbs_outside = limbs_outside_of<Acc>;
  ULPSCOPE_HD static void place_limbs(State& st, std::int64_t* limbs) { Acc::place_limbs(st, limbs); }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params&) {
    Finished f{};
    using T = typename Acc::value_t;
    if constexpr (is_exact_sum<Acc>::value) {
      // exact: sum, dot and sumsq round once from the exact integer.
      if (a.op == Op::sum || a.op == Op::dot || a.op == Op::sumsq) {
        double total = 0.0;
        const double r = a.n == 0 ? 0.0 : Acc::round_with_total(p, out_format(a.out), total);
        f.unrounded[0] = total;
        f.value[0] = round_to_out(r, a.out, a.sat);
        return f;
      }
      // mean rounds once from the exact quotient (the mean of nothing is NaN, below).
      if constexpr (K == TermKind::value) {
        if (a.op == Op::mean && a.n > 0) {
          double total;
          const double q = Acc::round_quotient(p, a.n, out_format(a.out), total);
          f.unrounded[0] = rn::div(total, double(a.n));
          f.value[0] = round_to_out(q, a.out, a.sat);
          return f;
        }
      }
      if constexpr (K == TermKind::square) {
        // rms rounds once from the exact sqrt(S / n + eps) where eps sits on a
        // grid the integer can widen to (round_rms), else twice as below.
        if (a.op == Op::rms && a.n > 0) {
          double v;
          if (Acc::round_rms(p, a.n, a.eps, out_format(a.out), v)) {
            f.unrounded[0] = rn::sqrt(rn::add(rn::div(Acc::total(p), double(a.n)), a.eps));
            f.value[0] = round_to_out(v, a.out, a.sat);
            return f;
          }
        }
        // norm2 rounds once from the exact square root (of nothing: +0, below).
        if (a.op == Op::norm2 && a.n > 0) {
          f.unrounded[0] = rn::sqrt(Acc::total(p));
          f.value[0] = round_to_out(Acc::round_sqrt(p, out_format(a.out)), a.out, a.sat);
          return f;
        }
      }
    }
    set_output(f, 0, double(finish_sum_like<T>(Acc::total(p), a)), a);
    return f;
  }
};

// The exact sum of squares of bf16 in bins of double (exact_binned_squares.hpp):
// the tree kernels' first pass for SumReducer<Acc, TermKind::square> of F,
// with its partials, which the second pass merges and finishes as Acc's. Its
// bins live where place_bins puts them (shared memory), and a block's
// threads flush them together into the integers of warp 0's lanes, whose
// digits take block_words more words of shared memory (tree/block_bins.cuh);
// two vectors loaded at a time, as in the other reducers (group_loads).
template <class F, class Acc>
struct BinnedSquaresReducer {
  using Bins = ExactBinnedSquares<F, Acc>;
  using value_t = double;
  using State = typename Bins::State;
  using Partial = typename Bins::Partial;
  using Params = NoParams;
  static constexpr int passes = 1;
  static constexpr int shared_bins = Bins::bins;
  static constexpr int block_words = Bins::bins * Acc::digits;
  static constexpr int vector_loads = 2;
  ULPSCOPE_HD static State start() { return Bins::start(); }
  ULPSCOPE_HD static Partial identity() { return Bins::identity(); }
  ULPSCOPE_HD static void place_bins(State& st, double* bin, unsigned stride) { Bins::place_bins(st, bin, stride); }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params&) { Bins::add(st, x); }
  template <int W>
  static constexpr bool adds_groups = std::uint32_t(W) <= Bins::run_terms;
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x, const float*, const Params&) {
    Bins::template add_group<W>(st, x);
  }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { Acc::merge(a, b); }
};

// Whether reducer R adds a whole vector of W values at once (SumReducer's
// adds_groups); the tree kernels and their models then call R::add_group.
template <class R, int W>
struct reducer_groups {
  static constexpr bool value = false;
};
template <class R, int W>
  requires requires { R::template adds_groups<W>; }
struct reducer_groups<R, W> {
  static constexpr bool value = R::template adds_groups<W>;
};
template <class R, int W>
inline constexpr bool reducer_adds_groups = reducer_groups<R, W>::value;

// Whether a reducer reads a second input (dot).
template <class R>
struct takes_y : std::false_type {};
template <class Acc>
struct takes_y<SumReducer<Acc, TermKind::product>> : std::true_type {};

// Whether a reducer gathers a normalisation's statistics (statistics_op:
// rmsnorm the sum of squares, layernorm mean_var); the shapes instantiate
// their normalising kernels for these only.
template <class R>
struct gathers_norm_statistics : std::false_type {};
template <class Acc>
struct gathers_norm_statistics<SumReducer<Acc, TermKind::square>> : std::true_type {};

// Vectors of W elements that a tree thread loads before adding them: U
// consecutive vectors of its chain, v, v + G, ... (tree_order.hpp, step 1),
// added as one group of U*W terms where the reducer takes such a group, else
// one vector after the other (pairwise and exact: the same result either way;
// logsumexp: not, and the model groups as the kernel does). Pairwise takes up
// to 8 vectors and 64 terms per group (32 for dot's two inputs), so that its
// carry chain runs once per 32 or 64 terms. Measured on the H100 (fraction of
// cub Sum fp32, docs/perf-h100.md): with the chain in registers
// (pairwise_sum.hpp) sum fp32 0.83 -> 0.99, fp16 0.79 -> 0.96, fp8 0.65 ->
// 0.88, dot fp32 0.87 -> 1.00; 16 vectors per group ran fp32 sum at 0.91.
// logsumexp takes up to 16 terms (four fp32 vectors). The other reducers load
// two vectors at a time: four made them slower (max fp16 0.94 -> 0.77, dot
// fp16 kahan 0.96 -> 0.87), and exact groups of four vectors too.
// A reducer may name its count (R::vector_loads: welford).
template <class R, int W>
ULPSCOPE_HD constexpr int group_loads() {
  constexpr int terms = takes_y<R>::value ? 32 : 64;
  if constexpr (requires { R::vector_loads; }) return R::vector_loads;
  else if constexpr (8 * W <= terms && reducer_adds_groups<R, 8 * W>) return 8;
  else if constexpr (4 * W <= terms && reducer_adds_groups<R, 4 * W>) return 4;
  else return 2;
}

// max, min, amax.
template <Extremum K>
struct ExtremumReducer {
  using Acc = ExtremumOf<K>;
  using value_t = float;
  using State = typename Acc::State;
  using Partial = typename Acc::Partial;
  using Params = NoParams;
  static constexpr int passes = 1;
  ULPSCOPE_HD static State start() { return Acc::start(); }
  ULPSCOPE_HD static Partial identity() { return Acc::identity(); }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params&) { Acc::add(st, Acc::term(x)); }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { Acc::merge(a, b); }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params&) {
    Finished f{};
    set_output(f, 0, double(p.v), a);
    return f;
  }
};

// mean_var by the textbook formula var = E[x^2] - E[x]^2 over two sums kept
// by any summing accumulator: the cancellation Chan, Golub, LeVeque (1983)
// warn about, measured rather than avoided.
template <class Acc>
struct MomentsReducer {
  using value_t = typename Acc::value_t;
  struct State {
    typename Acc::State s1, s2;
  };
  struct Partial {
    typename Acc::Partial p1, p2;
  };
  using Params = NoParams;
  static constexpr int passes = 1;
  ULPSCOPE_HD static State start() { return {Acc::start(), Acc::start()}; }
  ULPSCOPE_HD static Partial identity() { return {Acc::identity(), Acc::identity()}; }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params&) {
    Acc::add(st.s1, Acc::term(x));
    add_product<Acc>(st.s2, x, x);
  }
  // The two sums are independent: grouping each keeps its order.
  template <int W>
  static constexpr bool adds_groups = acc_groups<Acc, W>::value && sizeof(typename Acc::term_t) == sizeof(float);
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x, const float*, const Params&) {
    if constexpr (requires { Acc::template add_group_pair<W>(st.s1, x, st.s2, x); }) {
      // pairwise: both sums have the same count (pairwise_sum.hpp).
      typename Acc::term_t sq[W];
      products_of<Acc, W>(x, x, sq);
      Acc::template add_group_pair<W>(st.s1, x, st.s2, sq);
    } else {
      Acc::template add_group<W>(st.s1, x);
      add_product_group<Acc, W>(st.s2, x, x);
    }
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return {Acc::partial(st.s1), Acc::partial(st.s2)}; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    Acc::merge(a.p1, b.p1);
    Acc::merge(a.p2, b.p2);
  }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params&) {
    using T = typename Acc::value_t;
    const T n = as_value<T>(a.n);
    const T mean = rn::div(Acc::total(p.p1), n);
    const T var = rn::sub(rn::div(Acc::total(p.p2), n), rn::mul(mean, mean));
    Finished f{};
    set_output(f, 0, double(mean), a);
    set_output(f, 1, double(var), a);
    return f;
  }
};

// S1's and S2's partials, one type for both homes of their digits.
template <class P1, class P2>
struct ExactMomentsPartial {
  P1 p1;
  P2 p2;
};

// mean_var, exact: S1 = sum x and S2 = sum x^2 as exact integers (S2 on the
// grid of the squares); the mean rounds once from S1 / n, the variance once
// from (n S2 - S1^2) / n^2 (exact_moments.hpp). Each sum is exact, so any
// grouping of the terms gives the same bits.
// LimbsOutside: both sums' digits in memory the caller places (exact_sum.hpp).
template <class F, bool LimbsOutside = false>
struct ExactMomentsReducer {
  using In = ExactSum<F, false>;
  using Sq = ExactSum<F, true, true, !std::is_same_v<F, Bf16Format>>;  // bf16: no window (ExactLayout)
  using A1 = std::conditional_t<LimbsOutside, typename In::WithLimbsOutside, In>;
  using A2 = std::conditional_t<LimbsOutside, typename Sq::WithLimbsOutside, Sq>;
  using value_t = double;
  struct State {
    typename A1::State s1;
    typename A2::State s2;
  };
  using Partial = ExactMomentsPartial<typename A1::Partial, typename A2::Partial>;
  using Params = NoParams;
  static constexpr int passes = 1;
  static constexpr int limbs_outside = A1::limbs_outside + A2::limbs_outside;
  ULPSCOPE_HD static State start() { return {A1::start(), A2::start()}; }
  ULPSCOPE_HD static void place_limbs(State& st, std::int64_t* limbs) {
    A1::place_limbs(st.s1, limbs);
    A2::place_limbs(st.s2, limbs + A1::limbs_outside);
  }
  ULPSCOPE_HD static Partial identity() { return {A1::identity(), A2::identity()}; }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params&) {
    A1::add(st.s1, A1::term(x));
    A2::add(st.s2, A2::product(x, x));
  }
  // Groups where either sum takes them (fp32: only the squares' window).
  template <int W>
  static constexpr bool adds_groups = A1::template groups<W> || A2::template groups<W>;
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x, const float*, const Params&) {
    if constexpr (A1::template groups<W>) {
      A1::template add_group<W>(st.s1, x);
    } else {
      ULPSCOPE_UNROLL
      for (int j = 0; j < W; ++j) A1::add(st.s1, A1::term(x[j]));
    }
    if constexpr (A2::template groups<W>) {
      // The squares' double terms, without add_float_products (e4m3, whose
      // tree kernels take add_values_by since): with it this first pass ran
      // 0.750 -> 0.673 of cub Sum fp32 (H100, the whole table at 67dc3fa
      // against b2c8df7's), no spill either way.
      // fp16: the squares inside the split's fma, the values' conversions
      // shared (exact_sum.hpp, add_split_products).
      if constexpr (A2::template split_product_groups<W>) A2::template add_split_products<W>(st.s2, x, x);
      else add_product_terms<A2, W>(st.s2, x, x);
    } else {
      ULPSCOPE_UNROLL
      for (int j = 0; j < W; ++j) A2::add(st.s2, A2::product(x[j], x[j]));
    }
  }
  // W values as doubles, value_at(j) (fp8 in the tree kernels:
  // tree_agent.cuh, adds_values_as_doubles): the values' run, and each
  // square from the value by fma (exact_sum.hpp, add_double_product: split
  // for e5m2, fused into the run for e4m3), added as it is taken.
  template <int W>
  static constexpr bool takes_values_by = A1::template double_value_runs<W> && A2::template double_product_groups<W>;
  template <int W, class Get>
  ULPSCOPE_HD static void add_values_by(State& st, Get value_at) {
    static_assert(takes_values_by<W>);
    if (st.s1.run_terms > A1::fast_every - W) A1::spill_run(st.s1);
    if (st.s2.run_terms > A2::fast_every - W) A2::spill_run(st.s2);
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) {
      const double xd = value_at(j);
      st.s1.run = rn::add(st.s1.run, xd);
      A2::add_double_product(st.s2, xd, xd);
    }
    st.s1.run_terms += W;
    st.s2.run_terms += W;
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return {A1::partial(st.s1), A2::partial(st.s2)}; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    A1::merge(a.p1, b.p1);
    A2::merge(a.p2, b.p2);
  }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params&) {
    Finished f{};
    if (a.n == 0) {  // as the other accumulators: 0 / 0
      const double nan = detail::double_from_bits(0x7FF8000000000000ull);
      set_output(f, 0, nan, a);
      set_output(f, 1, nan, a);
      return f;
    }
    double total, var;
    const double mean = A1::round_quotient(p.p1, a.n, out_format(a.out), total);
    f.unrounded[0] = rn::div(total, double(a.n));
    f.value[0] = round_to_out(mean, a.out, a.sat);
    const double v = ExactVariance<A1, A2>::round(p.p1, p.p2, a.n, out_format(a.out), var);
    f.unrounded[1] = var;
    f.value[1] = round_to_out(v, a.out, a.sat);
    return f;
  }
};

// The exact mean_var of bf16 (ExactMomentsReducer's A1 and A2) as the tree
// kernels' first pass adds it: the squares in bins (BinnedSquaresReducer's),
// the values in a run on a window that follows the data, its spills into an
// integer the block's threads share (exact_value_window.hpp), whose words
// follow the bins' integers in shared memory (tree/block_bins.cuh). The same
// two integers as ExactMomentsReducer's, so its second pass and models
// serve. The value's conversion to double is the square's too.
template <class F, class A1, class A2>
struct BinnedMomentsReducer {
  using Bins = ExactBinnedSquares<F, A2>;
  using Values = ExactValueWindow<F, A1>;
  using value_t = double;
  struct State {
    typename Bins::State sq;
    typename Values::State val;
  };
  using Partial = ExactMomentsPartial<typename A1::Partial, typename A2::Partial>;
  using Params = NoParams;
  static constexpr int passes = 1;
  static constexpr int shared_bins = Bins::bins;
  static constexpr int block_words = Bins::bins * A2::digits + Values::words;
  static constexpr int vector_loads = 2;
  ULPSCOPE_HD static State start() { return {Bins::start(), Values::start()}; }
  ULPSCOPE_HD static Partial identity() { return {A1::identity(), A2::identity()}; }
  ULPSCOPE_HD static void place_bins(State& st, double* bin, unsigned stride) { Bins::place_bins(st.sq, bin, stride); }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params&) {
    Values::add(st.val, x);
    Bins::add(st.sq, x);
  }
  template <int W>
  static constexpr bool adds_groups = std::uint32_t(W) <= Bins::run_terms && std::uint32_t(W) <= Values::run_terms;
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x, const float*, const Params&) {
    Values::template add_group<W>(st.val, x);
    Bins::template add_group<W>(st.sq, x);
  }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    A1::merge(a.p1, b.p1);
    A2::merge(a.p2, b.p2);
  }
};

struct WelfordReducer {
  using Acc = WelfordMoments;
  using value_t = float;
  using State = Acc::State;
  using Partial = Acc::Partial;
  using Params = NoParams;
  static constexpr int passes = 1;
  ULPSCOPE_HD static State start() { return Acc::start(); }
  ULPSCOPE_HD static Partial identity() { return Acc::identity(); }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params&) { Acc::add(st, x); }
  // Two vectors at a time, in groups of 16 values (welford.hpp, add_group):
  // two fp16 or bf16 vectors, one fp8 vector. fp32 adds its values one by one
  // with a division each (H100: 0.974 of cub Sum fp32, against 0.877 in
  // groups of four vectors, which took 56 registers instead of 32).
  static constexpr int vector_loads = 2;
  template <int W>
  static constexpr bool adds_groups = W == 16;
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x, const float*, const Params&) {
    Acc::template add_group<W>(st, x);
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { Acc::merge(a, b); }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params&) {
    Finished f{};
    const float mean = p.n == 0 ? rn::div(0.0f, 0.0f) : p.mean;
    set_output(f, 0, double(mean), a);
    set_output(f, 1, double(rn::div(p.m2, as_value<float>(a.n))), a);
    return f;
  }
};

// two_pass: the mean by an fp32 sum over the same order, then fp32 sums of
// the deviations d = x - mean and of d^2, with the correction term that
// cancels the first pass's error in the mean to first order:
// var = (sum d^2 - (sum d)^2 / n) / n (Chan, Golub, LeVeque 1983, eq. 1.7;
// Bjorck's corrected two-pass algorithm).
struct TwoPassReducer {
  using value_t = float;
  using First = SumReducer<Fp32Sum, TermKind::value>;
  struct State {
    Fp32Sum::State d, d2;
  };
  struct Partial {
    Fp32Sum::Partial d, d2;
  };
  struct Params {
    float mean;
  };
  static constexpr int passes = 2;
  static constexpr Op first_op = Op::mean;
  ULPSCOPE_HD static Params params(const Finished& first) { return {float(first.unrounded[0])}; }
  ULPSCOPE_HD static State start() { return {Fp32Sum::start(), Fp32Sum::start()}; }
  ULPSCOPE_HD static Partial identity() { return {Fp32Sum::identity(), Fp32Sum::identity()}; }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params& pr) {
    const float d = rn::sub(x, pr.mean);
    Fp32Sum::add(st.d, d);
    Fp32Sum::add(st.d2, rn::mul(d, d));
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return {st.d, st.d2}; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    Fp32Sum::merge(a.d, b.d);
    Fp32Sum::merge(a.d2, b.d2);
  }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params& pr) {
    Finished f{};
    const float n = as_value<float>(a.n);
    const float correction = rn::div(rn::mul(p.d.s, p.d.s), n);
    set_output(f, 0, double(pr.mean), a);
    set_output(f, 1, double(rn::div(rn::sub(p.d2.s, correction), n)), a);
    return f;
  }
};

// logsumexp: a running maximum m and s = sum exp(x_i - m), rescaled when m
// grows (the online softmax normaliser of Milakov and Gimelshein 2018);
// threads merge by rescaling the smaller maximum's sum. T is float for the
// fp32 accumulator, double for fp64; exp and log are elementary.hpp's.
template <class T>
struct LogSumExpReducer {
  using value_t = T;
  struct State {
    T m, s;
  };
  using Partial = State;
  using Params = NoParams;
  static constexpr int passes = 1;
  ULPSCOPE_HD static State start() { return {-T(detail::double_from_bits(0x7FF0000000000000ull)), T(0)}; }
  ULPSCOPE_HD static Partial identity() { return start(); }
  // e^(a-b) for a <= b (e^-87 for -inf: exp_nonpositive's clamp); for a == b,
  // 1, or 0 when both are -inf (e^-inf).
  ULPSCOPE_HD static T scale(T a, T b) {
    if (a == b) return a < T(0) && rn::sub(a, a) != T(0) ? T(0) : T(1);
    return elementary::exp_nonpositive(rn::sub(a, b));
  }
  // One exp per element, whichever way: a branch on x > m would run both
  // sides (two exps) in a warp whose lanes disagree. NaN makes s NaN and
  // leaves m (exp_nonpositive's clamp takes NaN to e^-87), by a select: an
  // early return, inlined 16 times in the fp32 group's slow path, spilled
  // registers of the 32 the first pass has (12 bytes; 0.95 -> 0.88 of cub
  // Sum fp32 on the H100).
  ULPSCOPE_HD static void add(State& st, float xf, float, const Params&) {
    const T x = T(xf);
    const bool grows = x > st.m;
    const T e = scale(grows ? st.m : x, grows ? x : st.m);
    st.s = x != x ? x : (grows ? rn::add(rn::mul(st.s, e), T(1)) : rn::add(st.s, e));
    st.m = grows ? x : st.m;
  }
  // A vector's (or a few vectors') W elements at once: m grows to the
  // group's maximum first and s is rescaled once, then every term is
  // e^(x_j - m) <= 1, in index order, without add's compare and selects.
  // Groups whose maximum is not finite (an infinity, NaN) go element by
  // element. The tree kernels and their models group alike (tree_agent.cuh,
  // tree_model.hpp), so the grouping is part of the order.
  template <int W>
  static constexpr bool adds_groups = W >= 2 && W <= 16;
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x, const float*, const Params& pr) {
    float mx = x[0];
    ULPSCOPE_UNROLL
    for (int j = 1; j < W; ++j) mx = rn::maximum(mx, x[j]);
    const T m = T(mx) > st.m ? T(mx) : st.m;
    if (rn::sub(mx, mx) != 0.0f || rn::sub(m, m) != T(0)) {  // an infinity or NaN in the group or in m
      ULPSCOPE_UNROLL
      for (int j = 0; j < W; ++j) add(st, x[j], 0.0f, pr);
      return;
    }
    T s = rn::mul(st.s, elementary::exp_nonpositive(rn::sub(st.m, m)));  // e^0 = 1; s is 0 while m is -inf
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) s = rn::add(s, elementary::exp_nonpositive(rn::sub(T(x[j]), m)));
    st = {m, s};
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    if (b.s == T(0)) return;  // empty (or only -inf inputs): adds nothing
    if (a.s == T(0)) {
      a = b;
      return;
    }
    if (b.m > a.m) {
      a.s = rn::add(rn::mul(a.s, scale(a.m, b.m)), b.s);
      a.m = b.m;
    } else {
      a.s = rn::add(a.s, rn::mul(b.s, scale(b.m, a.m)));
    }
  }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params&) {
    Finished f{};
    // s == 0: no finite term; m is -inf (the empty sum's log) unless NaN came in.
    const T v = p.s == T(0) ? (p.m != p.m ? p.m : -T(detail::double_from_bits(0x7FF0000000000000ull)))
                            : rn::add(p.m, elementary::log(p.s));
    set_output(f, 0, double(v), a);
    return f;
  }
};

// rmsnorm and layernorm: every element of a row from the row's statistics
// (sumsq, or mean and variance, as the reducer left them before rounding),
// in the reducer's precision T:
//   rmsnorm    y = (x * r) * gamma,                 r = 1 / sqrt(sumsq / n + eps)
//   layernorm  y = ((x - mean) * r) * gamma + beta, r = 1 / sqrt(var + eps)
// 1/sqrt is a correctly rounded division of a correctly rounded sqrt, not
// rsqrt, so the model reproduces it.
template <class T>
struct RowNorm {
  T mean, scale;
  bool centered;
  ULPSCOPE_HD static RowNorm from(Op op, const Finished& stats, std::int64_t n, double eps) {
    const T e = as_value<T>(eps);
    if (op == Op::layernorm) {
      const T var = T(stats.unrounded[1]);
      return {T(stats.unrounded[0]), rn::div(T(1), rn::sqrt(rn::add(var, e))), true};
    }
    const T ms = rn::div(T(stats.unrounded[0]), as_value<T>(n));
    return {T(0), rn::div(T(1), rn::sqrt(rn::add(ms, e))), false};
  }
  ULPSCOPE_HD T apply(float x, float gamma, float beta) const {
    if (centered) return rn::add(rn::mul(rn::mul(rn::sub(T(x), mean), scale), T(gamma)), T(beta));
    return rn::mul(rn::mul(T(x), scale), T(gamma));
  }
};

template <class Acc>
struct gathers_norm_statistics<MomentsReducer<Acc>> : std::true_type {};
template <class F>
struct gathers_norm_statistics<ExactMomentsReducer<F>> : std::true_type {};
template <>
struct gathers_norm_statistics<WelfordReducer> : std::true_type {};
template <>
struct gathers_norm_statistics<TwoPassReducer> : std::true_type {};

// The op whose reducer gathers a normalisation's statistics.
constexpr Op statistics_op(Op op) {
  return op == Op::rmsnorm ? Op::sumsq : (op == Op::layernorm ? Op::mean_var : op);
}

}  // namespace ulpscope
