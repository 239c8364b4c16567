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
#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/accumulators/pairwise_sum.hpp"
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

// Whether a reducer gathers a normalisation's statistics (statistics_op:
// rmsnorm the sum of squares, layernorm mean_var); the shapes instantiate
// their normalising kernels for these only.
template <class R>
struct gathers_norm_statistics : std::false_type {};

}  // namespace ulpscope
