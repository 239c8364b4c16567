#pragma once
// What rmsnorm and layernorm do with a row's statistics, gathered by the
// reducers of statistics_op.
#include <cstdint>

#include "kernels/op.hpp"
#include "kernels/reducers/reducer_interface.hpp"

namespace ulpscope {

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

// The op whose reducer gathers a normalisation's statistics.
constexpr Op statistics_op(Op op) {
  return op == Op::rmsnorm ? Op::sumsq : (op == Op::layernorm ? Op::mean_var : op);
}

}  // namespace ulpscope
