#pragma once
// What the cells of one input of the run matrix run on: the generated (or
// user's) input, its copies in permuted order, and the rows of a large norm
// that are scored (accuracy/run_matrix.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/distribution.hpp"
#include "accuracy/work_pool.hpp"
#include "formats/typed_array.hpp"
#include "kernels/index_permutation.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::matrix {

// One generated (or user-given) input and the arrays derived from it.
struct InputCase {
  Dtype dtype;
  std::string distribution;
  std::int64_t n = 0;
  std::uint64_t seed = 0;
  TypedArray own_x;
  const TypedArray* user_x = nullptr;  // a user's data, read where it is (not copied)
  const TypedArray& x() const { return user_x ? *user_x : own_x; }
  std::optional<TypedArray> y;
  TypedArray gamma, beta;
  std::string note;
};

// An input generated from its distribution, with the norms' weights (one per
// column of rows of row_cols).
InputCase make_input(Dtype dtype, const DistributionSpec& dist, std::int64_t n, std::uint64_t seed,
                     std::int64_t row_cols);

// A permuted copy of a problem's arrays on the host (ProblemPermutation,
// kernels/index_permutation.hpp, the same order the GPU backend makes on the
// device), filled in parallel.
struct PermutedArrays {
  TypedArray x;
  std::optional<TypedArray> y, gamma, beta;
  std::vector<float> x_float, y_float;  // when the original problem has them
  ReductionProblem problem;  // the original problem over these arrays
};

ProblemPermutation permutation_of(const ReductionProblem& p, std::uint64_t seed);
std::unique_ptr<PermutedArrays> permuted_on_host(const ReductionProblem& p, std::uint64_t seed, WorkPool& pool);

// The rows whose outputs are scored against the reference. The norms give
// one output per element, each with its own reference: above
// kScoredElements, an evenly spaced sample of rows is scored (the rows are
// independent problems), and reproducibility still compares every output.
constexpr std::int64_t kScoredElements = std::int64_t(1) << 22;

struct ScoredRows {
  std::vector<std::int64_t> rows;  // empty: every output is scored
  TypedArray x;                    // those rows of x
  ReductionProblem problem;        // the problem of those rows alone
};

// nullptr where every output is scored.
std::unique_ptr<ScoredRows> scored_rows(const ReductionProblem& p);
// The outputs of the scored rows (all of them when every row is scored).
ReductionResult scored_part(ReductionResult r, const ScoredRows* scored, std::int64_t cols);

}  // namespace ulpscope::matrix
