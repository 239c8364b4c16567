#pragma once
// docs/spec.md, "What ulpscope measures", 3: which accumulator should a norm (or a sum)
// use? Every candidate accumulator runs in the production `tree` shape on
// every adversarial distribution at the given width; the answer is the
// cheapest one that stays within the error budget on all of them, with the
// evidence and the reason each cheaper one was turned down.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/run_matrix.hpp"

namespace ulpscope {

struct RecommendRequest {
  Op op = Op::rmsnorm;  // rmsnorm, layernorm, norm2 or sum
  Dtype dtype = Dtype::bf16;
  std::int64_t hidden = 4096;  // the row width (norm2/sum: the length)
  double ulp_tolerance = 1.0;  // the budget, in ulps of the output format
  std::vector<std::uint64_t> seeds = {1, 2};
};

// The matrix that answers the request: one op, one format, every accumulator
// that applies, the tree shape, every default distribution.
MatrixSettings recommend_matrix(const RecommendRequest& r);

struct Candidate {
  std::string accumulator;
  double cost = 0;               // GPU: median measured ms per call; CPU: the stated cost model's units
  std::optional<double> worst_ulps;  // nullopt when some cell's error is undefined (non-finite mismatch)
  std::string worst_where;       // "ill_conditioned:1e16, seed 2, row 3, col 17"
  std::size_t cells = 0, failed_cells = 0;
  bool meets = false;
  std::string why_not;  // empty when it meets the budget
};

struct Recommendation {
  std::vector<Candidate> candidates;  // cheapest first
  std::optional<std::string> chosen;  // nullopt: no candidate meets the budget
  std::string cost_basis;             // how cost was measured or modelled
};

// cells: the run of recommend_matrix(r); measured_costs says whether the cells
// carry GPU timings (gbps) or the CPU cost model is to be used.
Recommendation recommend(const RecommendRequest& r, const std::vector<Cell>& cells, bool measured_costs);

void write_recommendation(const RecommendRequest& r, const Recommendation& rec, std::ostream& out);

// The CPU backend's cost model: relative work per element of each
// accumulator (documented beside its table).
double modelled_cost(Accumulator acc);

}  // namespace ulpscope
