// docs/spec.md, "Row statistics and the accumulator's own error": the exact
// statistics of a row, the ideal kernel, the conditioning scales, and the
// mean-1e4 fp32 LayerNorm where the strict error cannot tell the
// accumulators apart and the accumulator's own error can.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "accuracy/ideal_kernel.hpp"
#include "accuracy/metrics.hpp"
#include "accuracy/problem_reference.hpp"
#include "accuracy/run_matrix.hpp"

namespace ulpscope {
namespace {

TEST(RowStatistics, ExactMeanAndRstdOfHandMadeRows) {
  // Row 0: 3, 4 (rmsnorm: Q/n = 12.5); row 1: 2, 2 (layernorm: variance 0).
  const TypedArray x(std::vector<float>{3.0f, 4.0f, 2.0f, 2.0f});
  const TypedArray ones(std::vector<float>{1.0f, 1.0f}), zeros(std::vector<float>{0.0f, 0.0f});
  ReductionProblem p;
  p.axis = Axis::inner;
  p.rows = 2;
  p.cols = 2;
  p.x = &x;
  p.gamma = &ones;
  p.beta = &zeros;
  p.eps = 0.25;
  p.op = Op::rmsnorm;
  const ProblemReference rms = compute_problem_reference(p, Dtype::fp32, Saturation::nosat);
  const auto s0 = rms.row_statistics(0);
  ASSERT_TRUE(s0.has_value());
  EXPECT_FALSE(s0->mean.has_value());
  EXPECT_DOUBLE_EQ(s0->rstd.to_double(), 1 / std::sqrt(12.75));
  p.op = Op::layernorm;
  const ProblemReference ln = compute_problem_reference(p, Dtype::fp32, Saturation::nosat);
  const auto s1 = ln.row_statistics(1);
  ASSERT_TRUE(s1.has_value() && s1->mean.has_value());
  EXPECT_EQ(s1->mean->to_double(), 2.0);
  EXPECT_EQ(s1->rstd.to_double(), 2.0);  // 1 / sqrt(0 + 0.25): the variance is exactly 0
  EXPECT_FALSE(ln.row_statistics(2).has_value());
  ReductionProblem sum = p;
  sum.op = Op::sum;
  EXPECT_FALSE(compute_problem_reference(sum, Dtype::fp32, Saturation::nosat).row_statistics(0).has_value());

  // The ideal kernel of row 1 in fp32: (2 - 2) * 2 * 1 + 0 = 0 for both.
  const std::vector<double> ideal = ideal_kernel_outputs(p, ln, Dtype::fp32, Dtype::fp32, Saturation::nosat);
  ASSERT_EQ(ideal.size(), 4u);
  EXPECT_EQ(ideal[2], 0.0);
  EXPECT_EQ(ideal[3], 0.0);
  // Row 0: mean 3.5, variance 0.25, r = 1/sqrt(0.5): y = -+0.5 * 1.41421... rounded in fp32.
  EXPECT_FLOAT_EQ(float(ideal[0]), -0.5f * float(std::sqrt(2.0)));
  const std::vector<double> scales = conditioning_scales(p, ln, Dtype::fp32, Dtype::fp32);
  ASSERT_EQ(scales.size(), 4u);
  for (double s : scales) EXPECT_GE(s, 1.0);
}

TEST(AccumulatorUlpError, TheWorstErrorOverItsScale) {
  struct Case {
    std::vector<std::optional<double>> errors;
    std::vector<double> scales;
    std::optional<double> expected;
  };
  const Case cases[] = {
      {{0.5, 3000.0}, {1.0, 6000.0}, 0.5},          // the conditioned element counts as half an ulp
      {{0.5, 3000.0}, {1.0, 1.0}, 3000.0},          // no conditioning: the strict error
      {{0.5, std::nullopt}, {1.0, 1.0}, std::nullopt},  // a non-finite mismatch has none
      {{}, {}, std::nullopt},
      {{0.5}, {1.0, 1.0}, std::nullopt},  // mismatched lengths
  };
  for (const Case& c : cases) EXPECT_EQ(accumulator_ulp_error(c.errors, c.scales), c.expected);
}

TEST(WorstOutputError, AMissingErrorIsWorstAndSaysWhere) {
  WorstOutputError w;
  w.add(1.5, "", "row 0");
  w.add(0.5, "", "row 1");
  EXPECT_EQ(w.value, 1.5);
  w.add(std::nullopt, "NaN result for a finite reference", "row 2");
  w.add(9.0, "", "row 3");
  EXPECT_FALSE(w.value.has_value());
  EXPECT_EQ(w.note, "row 2: NaN result for a finite reference");
}

// fp32 LayerNorm over rows of 768 with mean 1e4 and sd 1 (large_mean's
// default for fp32): rounding the mean to fp32 alone moves the outputs by
// thousands of ULPs, so every fp32 accumulator, the ideal kernel included,
// is far from correctly rounded. The accumulator's own error separates them:
// the two-pass and Welford forms stay near the ideal kernel, the one-pass
// textbook variance (fp32) loses the variance and has no defined error.
TEST(RowStatistics, MeanTenThousandLayerNormSeparatesTheAccumulators) {
  MatrixSettings s;
  s.ops = {Op::layernorm};
  s.dtypes = {Dtype::fp32};
  s.accumulators = {Accumulator::fp32, Accumulator::two_pass, Accumulator::welford, Accumulator::exact};
  s.shapes = {Shape::tree};
  s.distributions = {{Distribution::large_mean, std::nullopt}};
  s.sizes = {8 * 768};
  s.row_cols = 768;
  s.seeds = {1};
  s.permutations = 0;
  s.runs = 1;
  const MatrixRun run = run_matrix(s, nullptr, {});
  std::map<std::string, Cell> by;
  for (const Cell& c : run.cells) by[c.accumulator] = c;
  ASSERT_EQ(by.size(), 4u);
  for (const auto& [acc, c] : by) {
    ASSERT_EQ(c.status, "ok") << acc;
    EXPECT_EQ(c.working_dtype, acc == "exact" ? "fp64" : "fp32") << acc;
    if (acc == "exact") continue;
    // What fp32 forces on any kernel: the ideal fp32 kernel is thousands of ulps off, and within half an
    // accumulator ulp (as a correctly rounded result is within half an ulp).
    ASSERT_TRUE(c.ideal_ulp_error.has_value()) << acc;
    EXPECT_GT(*c.ideal_ulp_error, 1000.0) << acc;
  }
  for (const char* acc : {"two_pass", "welford"}) {
    const Cell& c = by[acc];
    EXPECT_GT(c.ulp_error.value_or(0), 1000.0) << acc;  // strict: looks as catastrophic as the ideal kernel
    ASSERT_TRUE(c.accumulator_ulp_error.has_value()) << acc;
    EXPECT_LT(*c.accumulator_ulp_error, 2.0) << acc;
    ASSERT_TRUE(c.mean_ulp_error.has_value()) << acc;
    EXPECT_LT(*c.mean_ulp_error, 4.0) << acc;
    EXPECT_TRUE(c.rstd_ulp_error.has_value()) << acc;
  }
  // two_pass computes the variance from deviations: r within a few ulps.
  EXPECT_LT(by["two_pass"].rstd_ulp_error.value_or(1e9), 4.0);
  // The one-pass form: Q/n - mean^2 cancels to nothing or below zero: r is NaN or far off.
  const Cell& one_pass = by["fp32"];
  EXPECT_FALSE(one_pass.accumulator_ulp_error.has_value() && *one_pass.accumulator_ulp_error < 100)
      << *one_pass.accumulator_ulp_error;
  EXPECT_FALSE(one_pass.rstd_ulp_error.has_value() && *one_pass.rstd_ulp_error < 1e4);
  if (!one_pass.rstd_ulp_error) {
    EXPECT_NE(one_pass.statistics_note.find("row "), std::string::npos) << one_pass.statistics_note;
  }
  // exact: fp64 statistics and elementwise step, about half an ulp everywhere.
  EXPECT_LE(by["exact"].accumulator_ulp_error.value_or(9), 0.6);
  EXPECT_LE(by["exact"].ulp_error.value_or(9), 0.6);
}

TEST(RowStatistics, MeanVarReportsBothOutputsInTheirOwnUlps) {
  MatrixSettings s;
  s.ops = {Op::mean_var, Op::sum};
  s.dtypes = {Dtype::fp16};
  s.accumulators = {Accumulator::fp32, Accumulator::exact};
  s.shapes = {Shape::tree};
  s.distributions = {{Distribution::normal, std::nullopt}};
  s.sizes = {1000};
  s.seeds = {1};
  s.permutations = 0;
  const MatrixRun run = run_matrix(s, nullptr, {});
  ASSERT_EQ(run.cells.size(), 4u);  // two ops, two accumulators
  for (const Cell& c : run.cells) {
    ASSERT_EQ(c.status, "ok");
    if (c.op == "sum") {
      EXPECT_EQ(c.working_dtype, "") << "a sum has no statistics";
      EXPECT_FALSE(c.accumulator_ulp_error.has_value());
      continue;
    }
    ASSERT_TRUE(c.mean_ulp_error && c.variance_ulp_error) << c.accumulator;
    EXPECT_EQ(std::max(*c.mean_ulp_error, *c.variance_ulp_error), c.ulp_error.value_or(-1)) << c.accumulator;
    EXPECT_FALSE(c.rstd_ulp_error.has_value());
    // The ideal kernel rounds each exact statistic to fp32, then to fp16: half an ulp, or a double rounding.
    EXPECT_LE(c.ideal_ulp_error.value_or(9), 0.5 + 1.0 / 4096) << c.accumulator;
    ASSERT_TRUE(c.accumulator_ulp_error.has_value());
    EXPECT_LE(*c.accumulator_ulp_error, *c.ulp_error);
  }
}

}  // namespace
}  // namespace ulpscope
