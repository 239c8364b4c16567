#pragma once
// Which problems and kernels of the matrix run, and what is listed as not run
// and why (docs/spec.md, "Which accumulators each op takes"; no silent gaps).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "accuracy/run_matrix.hpp"
#include "kernels/op.hpp"

namespace ulpscope::matrix {

using NotRun = std::vector<std::pair<std::string, std::string>>;

// The (op, axis) problems an input of n elements gives: the norms normalise
// rows; the reductions run along the matrix's axes, the row-wise ones only
// where n is a whole number of rows. Those that cannot run go to not_run
// ("rmsnorm n=4097 axis=inner", why), each once (no silent gaps).
std::vector<std::pair<Op, Axis>> problems_of(const MatrixSettings& s, std::int64_t n, bool has_y,
                                             NotRun* not_run = nullptr);

// The shapes of the matrix that give an op no kernel at all along an axis
// (atomic and the norms, cub_deterministic and the rows, ...): listed once
// each, with the reason of the first accumulator (docs/spec.md, "Which
// accumulators each op takes" and "Kernel shapes"), so that no (op, axis,
// shape) of the matrix vanishes. Shapes this backend cannot run at all are
// listed as such by run_matrix.
void list_shape_gaps(const MatrixSettings& s, bool gpu, NotRun& not_run);

}  // namespace ulpscope::matrix
