#pragma once
// A-priori error bounds of the built-in accumulators (docs/spec.md, "Metrics":
// bound ratio), each written next to its code with its source. A bound covers
// the whole path from the exact value to the kernel's output: the
// accumulation in its order, products where the op forms them, the division
// of a mean, and the final rounding to the output format. Bounds assume no
// overflow; a result that overflowed has no bound ratio.
//
// u = 2^-p is the unit roundoff of the arithmetic, gamma_k = k u / (1 - k u)
// (Higham 2002, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
// sec. 3.1, Lemma 3.1), eta = half the smallest subnormal (gradual underflow
// in a product; sums of values of the format are exact in underflow).
#include <cstdint>
#include <optional>

#include "formats/dtype.hpp"
#include "kernels/accumulator.hpp"
#include "kernels/op.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope {

struct BoundInputs {
  Op op = Op::sum;
  Accumulator acc = Accumulator::fp32;
  Dtype in = Dtype::fp32;   // the input format (the naive accumulator works in it)
  Dtype out = Dtype::fp32;  // the output format, rounded to last
  std::int64_t n = 0;       // terms in the reduction
  // The most roundings on any term's path to the result: n - 1 in serial
  // order, ceil(log2 n) for a balanced tree, and for the tree shape its
  // per-thread chain + log2(warp) + log2(warps per block) + the passes over
  // partials. The caller knows its shape's order; the bound takes the number.
  std::int64_t depth = 0;
  double sum_abs = 0;  // sum |t_i| over the terms added (x_i; x_i y_i for dot; x_i^2 for sumsq and norm2)
  double sum = 0;      // sum t_i, exactly, rounded to double
  // mean_var, component 1 (the variance): S = sum (x_i - mean)^2 exactly
  // (metrics.hpp, sum_squared_deviations) and the exact mean.
  double sum_sq_dev = 0, mean = 0;
  int component = 0;  // mean_var: 0 the mean, 1 the variance
};

// The bound on |result - exact| for what the inputs describe; nullopt where no
// bound is derived here (logsumexp, rms, rmsnorm, layernorm; mean_var with an
// accumulator that is neither welford, two_pass nor exact) or where it is
// vacuous (k u >= 1 in a gamma_k).
std::optional<double> error_bound(const BoundInputs& b);

// |result - exact| / error_bound: above 1 means the kernel is not the
// algorithm it claims. 0 for an exact result under a zero bound, +Inf for an
// inexact one. nullopt where there is no bound or the result or the exact
// value is not finite.
std::optional<double> bound_ratio(double result, const ExactReal& exact, const BoundInputs& b);

}  // namespace ulpscope
