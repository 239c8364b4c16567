#pragma once
// The mean_var reducers (reducer_interface.hpp): the textbook formula over
// any summing accumulator, exact, welford and two_pass.
#include <cstdint>
#include <type_traits>

#include "kernels/accumulators/exact_binned_squares.hpp"
#include "kernels/accumulators/exact_moments.hpp"
#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/accumulators/exact_value_window.hpp"
#include "kernels/accumulators/rounded_sum.hpp"
#include "kernels/accumulators/welford.hpp"
#include "kernels/reducers/reducer_interface.hpp"
#include "kernels/reducers/sum_reducer.hpp"

namespace ulpscope {

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
      // tree kernels take add_values_by), which ran slower here
      // (docs/perf-h100.md, "moments_reducers.hpp").
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
  // with a division each: in groups of four vectors it took more registers
  // and ran slower (docs/perf-h100.md, "moments_reducers.hpp").
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

template <class Acc>
struct gathers_norm_statistics<MomentsReducer<Acc>> : std::true_type {};
template <class F>
struct gathers_norm_statistics<ExactMomentsReducer<F>> : std::true_type {};
template <>
struct gathers_norm_statistics<WelfordReducer> : std::true_type {};
template <>
struct gathers_norm_statistics<TwoPassReducer> : std::true_type {};

}  // namespace ulpscope
