#pragma once
// logsumexp's reducer (reducer_interface.hpp).
#include "kernels/elementary.hpp"
#include "kernels/reducers/reducer_interface.hpp"

namespace ulpscope {

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
  // registers of the 32 the first pass has (docs/perf-h100.md,
  // "logsumexp_reducer.hpp").
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

}  // namespace ulpscope
