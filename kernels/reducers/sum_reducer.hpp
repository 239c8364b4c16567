#pragma once
// The summing reducers: sum, mean, sumsq, norm2, rms and dot over any
// summing accumulator (reducer_interface.hpp), and the exact squares of bf16
// in bins, the tree kernels' first pass of their sum.
#include <cstdint>

#include "kernels/accumulators/exact_binned_squares.hpp"
#include "kernels/reducers/reducer_interface.hpp"

namespace ulpscope {

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

template <class Acc>
struct takes_y<SumReducer<Acc, TermKind::product>> : std::true_type {};
template <class Acc>
struct gathers_norm_statistics<SumReducer<Acc, TermKind::square>> : std::true_type {};

}  // namespace ulpscope
