#include "reports/recommend.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace ulpscope {
namespace {

Cell cell(const std::string& acc, const std::string& dist, std::optional<double> ulps, double gbps = 0) {
  Cell c;
  c.op = "rmsnorm";
  c.dtype = "bf16";
  c.accumulator = acc;
  c.shape = "tree";
  c.distribution = dist;
  c.n = 32 * 64;
  c.seed = 1;
  c.ulp_error = ulps;
  if (!ulps) c.error_note = "infinite result for a finite reference";
  if (gbps > 0) c.gbps = gbps;
  return c;
}

TEST(Recommend, CheapestWithinBudgetOnEveryDistributionWins) {
  const RecommendRequest r{Op::rmsnorm, Dtype::bf16, 64, 1.0};
  const std::vector<Cell> cells = {
      cell("fp32", "normal", 0.5),  cell("fp32", "near_max", std::nullopt),  // fp32 overflows
      cell("kahan", "normal", 0.5), cell("kahan", "near_max", 3.0),         // over budget
      cell("fp64", "normal", 0.5),  cell("fp64", "near_max", 0.5),
      cell("exact", "normal", 0.5), cell("exact", "near_max", 0.5)};
  const Recommendation rec = recommend(r, cells, /*measured_costs=*/false);
  ASSERT_TRUE(rec.chosen.has_value());
  EXPECT_EQ(*rec.chosen, "fp64");  // cheaper than exact in the cost model; fp32 and kahan fail
  ASSERT_EQ(rec.candidates.size(), 4u);
  EXPECT_EQ(rec.candidates.front().accumulator, "fp32");  // cheapest first
  for (const Candidate& k : rec.candidates) {
    if (k.accumulator == "fp32") {
      EXPECT_FALSE(k.meets);
      EXPECT_NE(k.why_not.find("near_max"), std::string::npos) << k.why_not;
    }
    if (k.accumulator == "kahan") {
      EXPECT_FALSE(k.meets);
      EXPECT_NE(k.why_not.find("3 ulps on near_max"), std::string::npos) << k.why_not;
    }
  }
  std::ostringstream out;
  write_recommendation(r, rec, out);
  EXPECT_NE(out.str().find("Recommended accumulator for rmsnorm over bf16 at hidden size 64: fp64"),
            std::string::npos)
      << out.str();
}

TEST(Recommend, MeasuredCostsOrderByTimeAndNoneMayMeetTheBudget) {
  const RecommendRequest r{Op::sum, Dtype::fp32, 2048, 0.25};
  // exact is measured faster than fp64 here: measured costs win over the model.
  const std::vector<Cell> cells = {cell("fp64", "normal", 0.5, 1000.0), cell("exact", "normal", 0.5, 3000.0)};
  Recommendation rec = recommend(r, cells, /*measured_costs=*/true);
  EXPECT_FALSE(rec.chosen.has_value());  // 0.5 ulps > 0.25 for both
  ASSERT_EQ(rec.candidates.size(), 2u);
  EXPECT_EQ(rec.candidates.front().accumulator, "exact");
  std::ostringstream out;
  write_recommendation(r, rec, out);
  EXPECT_NE(out.str().find("No accumulator keeps sum"), std::string::npos) << out.str();
}

TEST(Recommend, RealRunOnTheCpuModelsPicksAnAccumulatorThatMeetsTheBudget) {
  RecommendRequest r{Op::rmsnorm, Dtype::bf16, 256, 1.0};
  r.seeds = {1};
  const MatrixRun run = run_matrix(recommend_matrix(r), nullptr, {});
  ASSERT_FALSE(run.cells.empty());
  const Recommendation rec = recommend(r, run.cells, false);
  ASSERT_TRUE(rec.chosen.has_value());
  for (const Candidate& k : rec.candidates) {
    if (k.accumulator != *rec.chosen) continue;
    ASSERT_TRUE(k.worst_ulps.has_value());
    EXPECT_LE(*k.worst_ulps, 1.0);
  }
  // Every cheaper candidate says why it was turned down.
  for (const Candidate& k : rec.candidates) {
    if (k.accumulator == *rec.chosen) break;
    EXPECT_FALSE(k.why_not.empty()) << k.accumulator;
  }
}

}  // namespace
}  // namespace ulpscope
