#pragma once
// The references of one problem (an op on one input, reduced along an axis),
// laid out like the kernel's outputs (kernels/reduction.hpp,
// ReductionResult::values), with what the metrics need beside them: the
// condition number of each reduction and the sums that a-priori error bounds
// are written in. Computed once per (input, op, out_dtype) and shared by
// every kernel that runs on it.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kernels/reduction.hpp"
#include "reference/op_reference.hpp"

namespace ulpscope {

// The exact statistics of one row of a normalisation (docs/spec.md, "Row
// statistics"): layernorm's mean S/n and r = 1/sqrt(var + eps), var = (nQ -
// S^2)/n^2; rmsnorm's r = 1/sqrt(Q/n + eps) (no mean). Evaluated at
// kRowStatisticsBits from the exact sums and the exact eps: fine enough to
// round to any working format and to measure ULPs of it.
struct RowStatistics {
  std::optional<ExactReal> mean;
  ExactReal rstd;
};
inline constexpr mpfr_prec_t kRowStatisticsBits = 256;

class ProblemReference {
 public:
  std::vector<Reference> outputs;

  // "mean" / "variance" for mean_var, "row 3, col 17" for rmsnorm and
  // layernorm, "row 3" / "col 3" for other row-wise ops, "" otherwise.
  std::string component_name(std::size_t output) const;
  // docs/spec.md, "Metrics": the condition number of the reduction the output
  // belongs to (sum|x|/|sum x|, the dot and variance analogues); nullopt
  // where the op has none (max, min, amax, logsumexp, the norms' rows).
  std::optional<double> condition(std::size_t output) const;
  // Measured error of `value` over the a-priori bound of the kernel's
  // algorithm and order (accuracy/error_bound.hpp); nullopt where no bound is
  // defined or the value or reference is not finite.
  // The exact statistics of row `line` of rmsnorm or layernorm; nullopt for
  // other ops, for n = 0 and for non-finite sums.
  std::optional<RowStatistics> row_statistics(std::size_t line) const;
  std::optional<double> bound_ratio(const KernelSpec& spec, const ReductionProblem& p, std::int64_t depth,
                                    double value, std::size_t output) const;

 private:
  friend ProblemReference compute_problem_reference(const ReductionProblem&, Dtype, Saturation);
  Op op_ = Op::sum;
  Axis axis_ = Axis::all;
  std::int64_t cols_ = 0, length_ = 0;
  int per_reduction_ = 1;
  double eps_ = 0;
  // Per reduction: sum of |terms| (x, x*y or x^2) and the exact sum, as the
  // ingredients of the condition number and of the bounds.
  std::vector<ExactReal> abs_sums_, sums_, sumsq_;
};

ProblemReference compute_problem_reference(const ReductionProblem& p, Dtype out, Saturation sat);

}  // namespace ulpscope
