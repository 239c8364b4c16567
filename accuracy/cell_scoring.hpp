#pragma once
// A cell's accuracy from its kernel's first run against the problem's exact
// reference: the worst output's ULP error and the metrics beside it, and for
// the ops with row statistics their errors and the ideal kernel's
// (docs/spec.md, "Metrics").
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/kernel_under_test.hpp"
#include "accuracy/matrix_input.hpp"
#include "accuracy/problem_reference.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::matrix {

// The ideal kernel of a problem (accuracy/ideal_kernel.hpp) is the same for
// every cell of one working and output format: its errors and the
// conditioning scales are computed once and shared.
struct IdealScores {
  std::vector<std::optional<double>> errors;
  std::vector<double> scales;
};
class IdealCache {
 public:
  const IdealScores& get(const ReductionProblem& p, const ProblemReference& ref, Dtype working, Dtype out,
                         Saturation sat);

 private:
  std::mutex mutex_;
  std::map<std::pair<Dtype, Dtype>, IdealScores> scores_;
};

// The cell's accuracy, from its first run (only the scored rows of a large
// norm: p is then their problem).
void score(Cell& c, const KernelUnderTest& kut, Dtype out_dtype, const ReductionResult& res, const ReductionProblem& p,
           const ProblemReference& ref, const ScoredRows* scored, IdealCache& ideal, Saturation sat);

}  // namespace ulpscope::matrix
