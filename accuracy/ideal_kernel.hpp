#pragma once
// docs/spec.md, "Metrics", accumulator_ulp_error: the ideal kernel of an op
// whose outputs follow from row statistics (rmsnorm, layernorm, mean_var). It
// knows each statistic exactly and rounds it once to the working format W of
// the kernel it stands beside (kernels/model.hpp, finishing_format), then
// takes the same elementwise step in W as the kernels (kernels/reducers.hpp,
// RowNorm) and rounds to the output format. What it gets wrong is forced by
// W, the output format and the row's conditioning, not by any accumulator.
#include <vector>

#include "accuracy/problem_reference.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

// The ideal kernel's outputs, laid out as the kernel's (ReductionResult::values):
// rmsnorm and layernorm [row][col]; mean_var [reduction][mean, variance].
// A norm's row whose exact statistics are not finite (a NaN or an infinity
// in it) takes the correctly rounded outputs. Empty for other ops.
std::vector<double> ideal_kernel_outputs(const ReductionProblem& p, const ProblemReference& ref, Dtype working,
                                         Dtype out, Saturation sat);

// Per output, the scale s_i >= 1 that turns its ULP error into the
// accumulator's own error (docs/spec.md, "Row statistics and the
// accumulator's own error"): s_i = max(1, D_i / ulp_out(y*_i)), where D_i is
// the output's movement under one ulp of W in each statistic and in each
// intermediate of the elementwise step (Higham 2002, sec. 2.2, first order):
//   layernorm  D_i = |g_i| r ulp_W(m) + |g_i| |x_i - m| ulp_W(r) + 2 u_W (3 |t_i g_i| + |y*_i|)
//   rmsnorm    D_i = |g_i x_i| ulp_W(r) + 2 u_W (2 |t_i g_i|)
//   mean_var   D_i = ulp_W(y*_i)
// with m, r the exact statistics, t_i = (x_i - m) r, u_W = 2^-p_W; 1 in a
// row without finite statistics. Empty for other ops.
std::vector<double> conditioning_scales(const ReductionProblem& p, const ProblemReference& ref, Dtype working,
                                        Dtype out);

// ulp_F(v) for a finite double v (accuracy/metrics.hpp, ulp_exponent).
double ulp_of(double v, Dtype f);

// The ideal kernel's statistics of a norm row in W: the exact mean (0 for
// rmsnorm) and r, each rounded once to W.
struct RoundedRowStatistics {
  double mean = 0, rstd = 0;
};
RoundedRowStatistics rounded_statistics(const RowStatistics& exact, Dtype working);

}  // namespace ulpscope
