#include "reports/recommend.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
  c.working_dtype = "fp32";
  c.accumulator_ulp_error = ulps;
  if (!ulps) c.error_note = "infinite result for a finite reference";
  if (gbps > 0) c.gbps = gbps;
  return c;
}

const GroupChoice* group(const Recommendation& rec, const std::string& name) {
  for (const GroupChoice& g : rec.groups)
    if (g.group == name) return &g;
  return nullptr;
}
const Candidate& candidate(const Recommendation& rec, const std::string& name) {
  for (const Candidate& k : rec.candidates)
    if (k.name == name) return k;
  throw std::runtime_error("no candidate " + name);
}

TEST(Recommend, CheapestWithinBudgetPerGroupWinsAndNamesTheFirstFailingDistribution) {
  RecommendRequest r{Op::rmsnorm, Dtype::bf16, 64, 1.0};
  const std::vector<Cell> cells = {
      cell("fp32", "normal", 0.5),   cell("fp32", "large_mean", 0.6), cell("fp32", "near_max", std::nullopt),
      cell("kahan", "normal", 0.5),  cell("kahan", "large_mean", 3.0), cell("kahan", "near_max", 3.0),
      cell("fp64", "normal", 0.5),   cell("fp64", "large_mean", 0.5), cell("fp64", "near_max", 0.5),
      cell("exact", "normal", 0.5),  cell("exact", "large_mean", 0.5), cell("exact", "near_max", 0.5)};
  const Recommendation rec = recommend(r, cells, /*measured_costs=*/false);
  ASSERT_EQ(rec.groups.size(), 2u);
  ASSERT_NE(group(rec, "realistic"), nullptr);
  EXPECT_EQ(group(rec, "realistic")->chosen, "fp32");
  EXPECT_EQ(group(rec, "realistic")->distributions, (std::vector<std::string>{"normal", "large_mean"}));
  EXPECT_EQ(group(rec, "adversarial")->chosen, "fp64");  // cheaper than exact in the cost model
  EXPECT_TRUE(rec.unmet().empty());
  EXPECT_EQ(rec.candidates.front().name, "fp32");  // cheapest first
  const GroupVerdict* kahan = candidate(rec, "kahan").verdict("realistic");
  ASSERT_NE(kahan, nullptr);
  EXPECT_FALSE(kahan->meets);
  EXPECT_EQ(kahan->first_failing, "large_mean");
  EXPECT_EQ(kahan->why_not, "3 on large_mean, seed 1 (budget 1)");
  const GroupVerdict* fp32 = candidate(rec, "fp32").verdict("adversarial");
  EXPECT_EQ(fp32->first_failing, "near_max");
  EXPECT_NE(fp32->why_not.find("infinite result for a finite reference on near_max"), std::string::npos)
      << fp32->why_not;
  std::ostringstream out;
  write_recommendation(r, rec, out);
  EXPECT_NE(out.str().find("realistic inputs (normal, large_mean): fp32"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("Cost: estimated, not measured"), std::string::npos) << out.str();
}

TEST(Recommend, TheBudgetMetricIsTheAccumulatorsOwnErrorForNormsAndStrictForSums) {
  EXPECT_EQ(budget_metric(RecommendRequest{Op::layernorm}), BudgetMetric::accumulator);
  EXPECT_EQ(budget(RecommendRequest{Op::layernorm}), 2.0);
  EXPECT_EQ(budget_metric(RecommendRequest{Op::sum}), BudgetMetric::strict);
  EXPECT_EQ(budget(RecommendRequest{Op::sum}), 1.0);
  RecommendRequest strict{Op::layernorm};
  strict.metric = BudgetMetric::strict;
  // The same cell passes on its accumulator error and fails on its strict one.
  Cell c = cell("fp32", "normal", 3000.0);
  c.op = "layernorm";
  c.accumulator_ulp_error = 0.6;
  EXPECT_TRUE(recommend(RecommendRequest{Op::layernorm}, {c}, false).groups.front().chosen.has_value());
  EXPECT_FALSE(recommend(strict, {c}, false).groups.front().chosen.has_value());
}

TEST(Recommend, MeasuredCostsOrderByTimeAndNoneMayMeetTheBudget) {
  const RecommendRequest r{Op::sum, Dtype::fp32, 2048, 0.25};
  // exact is measured faster than fp64 here: measured costs win over the model.
  const std::vector<Cell> cells = {cell("fp64", "normal", 0.5, 1000.0), cell("exact", "normal", 0.5, 3000.0)};
  Recommendation rec = recommend(r, cells, /*measured_costs=*/true);
  EXPECT_EQ(rec.unmet(), std::vector<std::string>{"realistic"});  // 0.5 ulps > 0.25 for both
  ASSERT_EQ(rec.candidates.size(), 2u);
  EXPECT_EQ(rec.candidates.front().name, "exact");
  std::ostringstream out;
  write_recommendation(r, rec, out);
  EXPECT_NE(out.str().find("realistic inputs (normal): no candidate meets the budget"), std::string::npos)
      << out.str();
  std::ostringstream json;
  write_recommendation_json(r, rec, json);
  const auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["budget"]["metric"], "ulp_error");
  EXPECT_TRUE(j["groups"][0]["chosen"].is_null());
  EXPECT_EQ(j["candidates"][0]["groups"]["realistic"]["first_failing"], "normal");
  EXPECT_TRUE(j["cost_measured"].get<bool>());
}

TEST(Recommend, AUsersKernelIsACandidateWithAnUnknownCostOnTheCpu) {
  const RecommendRequest r{Op::rmsnorm, Dtype::bf16, 64, 1.0};
  Cell mine = cell("fp64", "normal", 0.5);
  mine.shape = "my_rmsnorm";
  const Recommendation rec = recommend(r, {cell("fp32", "normal", 2.0), mine}, false);
  ASSERT_EQ(rec.candidates.size(), 2u);
  EXPECT_EQ(rec.candidates.back().name, "my_rmsnorm");  // unknown cost: last
  EXPECT_TRUE(rec.candidates.back().user_kernel);
  EXPECT_FALSE(rec.candidates.back().cost.has_value());
  EXPECT_EQ(rec.groups.front().chosen, "my_rmsnorm");  // the only one within budget
}

// The three answers of docs/spec.md, "Choosing an accumulator", on the CPU
// models. Realistic inputs: uniform, normal, lognormal, llm_activations,
// large_mean (accuracy/distribution.hpp, group_of).
std::vector<DistributionSpec> realistic() {
  std::vector<DistributionSpec> out;
  for (const auto& [d, name] : kDistributionNames)
    if (group_of(d) == DistributionGroup::realistic) out.push_back({d, std::nullopt});
  return out;
}

Recommendation run_request(const RecommendRequest& r) {
  const MatrixRun run = run_matrix(recommend_matrix(r), nullptr, {});
  for (const Cell& c : run.cells) EXPECT_EQ(c.status, "ok") << c.accumulator << ' ' << c.distribution;
  return recommend(r, run.cells, false);
}

TEST(RecommendOnTheCpuModels, Fp32LayerNormAt768IsTwoPassOrWelfordAndOnePassFp32FailsOnLargeMean) {
  RecommendRequest r{Op::layernorm, Dtype::fp32, 768};
  r.seeds = {1};
  r.rows = 8;
  r.distributions = realistic();
  const Recommendation rec = run_request(r);
  ASSERT_EQ(rec.groups.size(), 1u);
  ASSERT_TRUE(rec.groups.front().chosen.has_value());
  const std::string chosen = *rec.groups.front().chosen;
  EXPECT_TRUE(chosen == "two_pass" || chosen == "welford") << chosen;
  const GroupVerdict* fp32 = candidate(rec, "fp32").verdict("realistic");
  EXPECT_FALSE(fp32->meets);
  EXPECT_EQ(fp32->first_failing, "large_mean") << fp32->why_not;
  // The strict error cannot tell them apart: the chosen one is thousands of
  // ulps from the correctly rounded outputs, as every fp32 accumulator is.
  EXPECT_GT(candidate(rec, chosen).verdict("realistic")->worst_strict.value_or(0), 1000.0);
}

TEST(RecommendOnTheCpuModels, Bf16RmsNormAt4096IsTheFp32AccumulatorWithinOneUlp) {
  RecommendRequest r{Op::rmsnorm, Dtype::bf16, 4096, 1.0};
  r.seeds = {1};
  r.rows = 4;
  r.distributions = realistic();
  const Recommendation rec = run_request(r);
  ASSERT_EQ(rec.groups.size(), 1u);
  EXPECT_EQ(rec.groups.front().chosen, "fp32");
  const GroupVerdict* fp32 = candidate(rec, "fp32").verdict("realistic");
  ASSERT_TRUE(fp32->worst.has_value());
  EXPECT_LE(*fp32->worst, 1.0);
  EXPECT_FALSE(candidate(rec, "naive").verdict("realistic")->meets);  // as cheap, a bf16 running sum
}

TEST(RecommendOnTheCpuModels, AnFp16SumWhoseExactValueOverflowsIsCorrectlyRoundedByExact) {
  RecommendRequest r{Op::sum, Dtype::fp16, 4096};
  r.seeds = {1};
  r.distributions = {{Distribution::near_max, std::nullopt}};
  const MatrixRun run = run_matrix(recommend_matrix(r), nullptr, {});
  bool saw_exact = false;
  for (const Cell& c : run.cells) {
    if (c.accumulator != "exact") continue;
    saw_exact = true;
    EXPECT_EQ(c.reference_rounded, "inf");
    EXPECT_EQ(c.result, "inf");
    EXPECT_TRUE(c.correctly_rounded);
    EXPECT_EQ(c.ulp_error, 0.0) << c.error_note;
  }
  EXPECT_TRUE(saw_exact);
  const Recommendation rec = recommend(r, run.cells, false);
  EXPECT_TRUE(candidate(rec, "exact").verdict("adversarial")->meets);
  EXPECT_TRUE(rec.unmet().empty());
}

}  // namespace
}  // namespace ulpscope
