#include "accuracy/ideal_kernel.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/out_format.hpp"
#include "kernels/reducers.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope {
namespace {

template <class T>
void norm_rows(const ReductionProblem& p, const ProblemReference& ref, Dtype working, Dtype out, Saturation sat,
               std::vector<double>& into) {
  const std::vector<double> x = p.x->to_doubles();
  const std::vector<double> gamma = p.gamma ? p.gamma->to_doubles() : std::vector<double>(std::size_t(p.cols), 1.0);
  const std::vector<double> beta = p.beta ? p.beta->to_doubles() : std::vector<double>(std::size_t(p.cols), 0.0);
  const bool centered = p.op == Op::layernorm;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const auto exact = ref.row_statistics(std::size_t(r));
    if (!exact) {
      // No finite statistics (a NaN or an infinity in the row): whatever any
      // kernel does, the correctly rounded result is the best it can give.
      for (std::int64_t j = 0; j < p.cols; ++j) into.push_back(ref.outputs[std::size_t(r * p.cols + j)].rounded);
      continue;
    }
    const RoundedRowStatistics s = rounded_statistics(*exact, working);
    const RowNorm<T> norm{T(s.mean), T(s.rstd), centered};
    for (std::int64_t j = 0; j < p.cols; ++j) {
      // Input values, gamma and beta are exact in float (every input format is).
      const double v = double(norm.apply(float(x[std::size_t(r * p.cols + j)]), float(gamma[std::size_t(j)]),
                                         float(beta[std::size_t(j)])));
      into.push_back(round_to_out(v, out, sat));
    }
  }
}

}  // namespace

double ulp_of(double v, Dtype f) {
  const FormatInfo& i = format_info(f);
  const int e = v == 0 ? i.emin : std::max(std::ilogb(v), i.emin);
  return std::ldexp(1.0, e - i.precision + 1);
}

std::vector<double> conditioning_scales(const ReductionProblem& p, const ProblemReference& ref, Dtype working,
                                        Dtype out) {
  std::vector<double> scales;
  const double u = std::ldexp(1.0, -format_info(working).precision);
  const auto scale = [&](double movement, std::size_t i) {
    const double y = ref.outputs[i].exact.to_double();
    return std::isfinite(movement) && std::isfinite(y) ? std::max(1.0, movement / ulp_of(y, out)) : 1.0;
  };
  if (p.op == Op::mean_var) {
    for (std::size_t i = 0; i < ref.outputs.size(); ++i) {
      const double y = ref.outputs[i].exact.to_double();
      scales.push_back(std::isfinite(y) ? scale(ulp_of(y, working), i) : 1.0);
    }
    return scales;
  }
  if (!is_elementwise_output(p.op)) return scales;
  const std::vector<double> x = p.x->to_doubles();
  const std::vector<double> gamma = p.gamma ? p.gamma->to_doubles() : std::vector<double>(std::size_t(p.cols), 1.0);
  const bool centered = p.op == Op::layernorm;
  for (std::int64_t row = 0; row < p.rows; ++row) {
    const auto exact = ref.row_statistics(std::size_t(row));
    if (!exact) {
      scales.insert(scales.end(), std::size_t(p.cols), 1.0);  // as ideal_kernel_outputs: strict ULPs
      continue;
    }
    const double m = exact->mean ? exact->mean->to_double() : 0.0, r = exact->rstd.to_double();
    for (std::int64_t j = 0; j < p.cols; ++j) {
      const std::size_t i = std::size_t(row * p.cols + j);
      const double g = std::abs(gamma[std::size_t(j)]), d = std::abs(x[i] - m), t = d * r * g;
      const double y = std::abs(ref.outputs[i].exact.to_double());
      const double movement = centered ? g * r * ulp_of(m, working) + g * d * ulp_of(r, working) + 2 * u * (3 * t + y)
                                       : g * d * ulp_of(r, working) + 2 * u * (2 * t);
      scales.push_back(scale(movement, i));
    }
  }
  return scales;
}

RoundedRowStatistics rounded_statistics(const RowStatistics& exact, Dtype working) {
  RoundedRowStatistics s;
  if (exact.mean) s.mean = round_to_format(*exact.mean, working);
  s.rstd = round_to_format(exact.rstd, working);
  return s;
}

std::vector<double> ideal_kernel_outputs(const ReductionProblem& p, const ProblemReference& ref, Dtype working,
                                         Dtype out, Saturation sat) {
  std::vector<double> into;
  if (is_elementwise_output(p.op)) {
    if (working == Dtype::fp64) norm_rows<double>(p, ref, working, out, sat, into);
    else norm_rows<float>(p, ref, working, out, sat, into);
  } else if (p.op == Op::mean_var) {
    for (const Reference& r : ref.outputs) into.push_back(round_to_out(round_to_format(r.exact, working), out, sat));
  }
  return into;
}

}  // namespace ulpscope
