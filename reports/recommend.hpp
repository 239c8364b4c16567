#pragma once
// docs/spec.md, "What ulpscope measures", 3: which accumulator should a norm (or a sum)
// use? Every candidate (each accumulator in the production `tree` shape, and
// the user's kernels of the op) runs on every distribution at the given
// width; per group of distributions (realistic, adversarial, special) the
// answer is the cheapest candidate within the error budget on all of the
// group's distributions, with each candidate's first failing distribution.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/run_matrix.hpp"
#include "reports/budget_metric.hpp"

namespace ulpscope {

struct RecommendRequest {
  Op op = Op::rmsnorm;  // rmsnorm, layernorm, norm2 or sum
  Dtype dtype = Dtype::bf16;
  std::int64_t hidden = 4096;  // the row width (norm2/sum: the length)
  std::optional<double> budget;          // nullopt: default_budget(metric)
  std::optional<BudgetMetric> metric;    // nullopt: accumulator where the op has it, else strict
  std::vector<std::uint64_t> seeds = {1, 2};
  std::vector<DistributionSpec> distributions;  // empty: every default distribution
  std::int64_t rows = 32;                       // rows of hidden for the norms
  double eps = MatrixSettings{}.eps;
};

// The metric and the budget in effect (docs/spec.md: 2 accumulator ulps, 1 strict ulp).
BudgetMetric budget_metric(const RecommendRequest& r);
double budget(const RecommendRequest& r);

// The matrix that answers the request: one op, one format, every accumulator
// that applies, the tree shape, the distributions.
MatrixSettings recommend_matrix(const RecommendRequest& r);

// A candidate's verdict on one group of distributions.
struct GroupVerdict {
  std::string group;
  bool meets = false;
  std::string first_failing;  // the first distribution (in matrix order) that fails it
  std::string why_not;        // "2.6 on large_mean, seed 1, row 3, col 17 (budget 2)", "NaN result ... on ..."
  std::optional<double> worst, worst_strict;  // in the budget's metric, and the strict ulp_error
  std::string worst_where;
};

struct Candidate {
  std::string name;         // the accumulator, or a user kernel's name
  std::string accumulator;  // the cells' accumulator field
  bool user_kernel = false;
  std::optional<double> cost;  // GPU: milliseconds per call summed over cells; CPU: the cost model; nullopt: unknown
  std::vector<GroupVerdict> groups;  // in group order
  const GroupVerdict* verdict(const std::string& group) const;
};

struct GroupChoice {
  std::string group;
  std::vector<std::string> distributions;
  std::optional<std::string> chosen;  // nullopt: no candidate meets the budget on this group
};

struct Recommendation {
  std::vector<Candidate> candidates;  // cheapest first, unknown costs last
  std::vector<GroupChoice> groups;
  std::string cost_basis;  // how cost was measured or estimated
  bool measured = false;
  // The groups where no candidate meets the budget (exit status 1).
  std::vector<std::string> unmet() const;
};

// cells: the run of recommend_matrix(r) (and of the user's kernels);
// measured_costs says whether the cells carry GPU timings (gbps) or the CPU
// cost model is to be used.
Recommendation recommend(const RecommendRequest& r, const std::vector<Cell>& cells, bool measured_costs);

void write_recommendation(const RecommendRequest& r, const Recommendation& rec, std::ostream& out);
void write_recommendation_json(const RecommendRequest& r, const Recommendation& rec, std::ostream& out);

// The CPU backend's cost model: relative work per element of each
// accumulator (documented beside its table).
double modelled_cost(Accumulator acc);

// The group of a cell's distribution: its DistributionGroup, or "input" for
// a user's data (--input).
std::string group_name(const std::string& distribution);

}  // namespace ulpscope
