// Honest end-to-end facts of what the suite reports on the CPU backend
// (issue 11, item 6): the run matrix, with the real references, models and
// metrics, must print the textbook failures of recursive summation and of the
// one-pass variance, and nothing it measures may exceed its own a-priori
// bound.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "accuracy/run_matrix.hpp"
#include "formats/hex_float.hpp"
#include "reports/json_report.hpp"

namespace ulpscope {
namespace {

MatrixSettings one_cell(Op op, Dtype dtype, Accumulator acc, Shape shape, DistributionSpec dist, std::int64_t n) {
  MatrixSettings s;
  s.ops = {op};
  s.dtypes = {dtype};
  s.accumulators = {acc};
  s.shapes = {shape};
  s.distributions = {dist};
  s.sizes = {n};
  s.seeds = {1};
  s.permutations = 0;
  s.runs = 1;
  return s;
}

Cell run_one(const MatrixSettings& s) {
  const MatrixRun run = run_matrix(s, nullptr, {});
  EXPECT_EQ(run.cells.size(), 1u);
  if (run.cells.empty()) return {};
  EXPECT_EQ(run.cells.front().status, "ok");
  return run.cells.front();
}

double value_of(const std::string& hex) { return parse_hex_float(hex).value_or(std::nan("")); }

TEST(EndToEnd, NaiveFp32SerialSumOfOnesStagnatesAt2To24) {
  const std::int64_t n = std::int64_t(1) << 25;
  const Cell c = run_one(
      one_cell(Op::sum, Dtype::fp32, Accumulator::naive, Shape::serial, {Distribution::constant, 1.0}, n));
  EXPECT_EQ(value_of(c.result), 16777216.0);             // 2^24: 1 + 2^24 rounds back to 2^24
  EXPECT_EQ(value_of(c.reference_rounded), 33554432.0);  // 2^25
  ASSERT_TRUE(c.ulp_error.has_value());
  EXPECT_EQ(*c.ulp_error, 4194304.0);  // the error 2^24 over ulp_fp32(2^25) = 4: 2^22
  EXPECT_FALSE(c.correctly_rounded);
}

TEST(EndToEnd, KahanFp32SerialSumOfOnesIsCorrectlyRounded) {
  const std::int64_t n = std::int64_t(1) << 25;
  const Cell c = run_one(
      one_cell(Op::sum, Dtype::fp32, Accumulator::kahan, Shape::serial, {Distribution::constant, 1.0}, n));
  EXPECT_TRUE(c.correctly_rounded);
  EXPECT_EQ(value_of(c.result), 33554432.0);
  EXPECT_EQ(c.ulp_error, 0.0);
}

TEST(EndToEnd, NaiveFp16SerialSumOfUniformStopsGrowingAt2048) {
  // Once the sum is 2048, ulp_fp16 is 2 and every x < 1 is below half of it.
  const Cell c = run_one(one_cell(Op::sum, Dtype::fp16, Accumulator::naive, Shape::serial,
                                  {Distribution::uniform, std::nullopt}, 16384));
  EXPECT_EQ(value_of(c.result), 2048.0);
  EXPECT_GT(value_of(c.reference_rounded), 7000.0);  // about 16384 / 2
  ASSERT_TRUE(c.ulp_error.has_value());
  EXPECT_GT(*c.ulp_error, 1000.0);
  EXPECT_FALSE(c.correctly_rounded);
}

TEST(EndToEnd, OnePassVarianceAtLargeMeanLosesEveryDigitWelfordAndTwoPassKeepThem) {
  // fp32 values with mean 1e4 and standard deviation 1: E[x^2] ~ 1e8, whose
  // fp32 ulp (8) is larger than the variance (1) itself.
  auto variance_rel_error = [](Accumulator acc) {
    const Cell c = run_one(one_cell(Op::mean_var, Dtype::fp32, acc, Shape::serial,
                                    {Distribution::large_mean, 1e4}, 4096));
    // The worst output of the cell is the variance for every accumulator here.
    EXPECT_EQ(c.component, "variance") << to_string(acc);
    const double ref = value_of(c.reference_rounded);
    EXPECT_GT(ref, 0.5);
    EXPECT_LT(ref, 2.0);
    return std::abs(value_of(c.result) - ref) / ref;
  };
  EXPECT_GE(variance_rel_error(Accumulator::fp32), 0.5);  // not one correct digit
  EXPECT_LT(variance_rel_error(Accumulator::welford), 1e-3);
  EXPECT_LT(variance_rel_error(Accumulator::two_pass), 1e-3);
}

TEST(EndToEnd, BoundRatioOfEveryBuiltInAccumulatorStaysAtOrBelowOne) {
  MatrixSettings s = default_matrix(false);
  s.dtypes = {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2};
  s.sizes = {1023};
  s.permutations = 0;
  s.runs = 1;
  const MatrixRun run = run_matrix(s, nullptr, {});
  ASSERT_GT(run.cells.size(), 1000u);
  std::size_t with_bound = 0;
  for (const Cell& c : run.cells) {
    ASSERT_EQ(c.status, "ok") << c.op << ' ' << c.accumulator << ' ' << c.shape << ' ' << c.distribution;
    if (!c.bound_ratio) continue;
    ++with_bound;
    EXPECT_LE(*c.bound_ratio, 1.0) << c.op << ' ' << c.dtype << ' ' << c.accumulator << ' ' << c.shape << ' '
                                   << c.distribution << " result " << c.result << " reference "
                                   << c.reference_exact;
  }
  EXPECT_GT(with_bound, run.cells.size() / 3);  // most cells have a bound to be held to
}

TEST(EndToEnd, SameSettingsGiveIdenticalCellsTwice) {
  MatrixSettings s = default_matrix(false);
  s.dtypes = {Dtype::fp16};
  s.sizes = {1023};
  Report a, b;
  a.cells = run_matrix(s, nullptr, {}).cells;
  b.cells = run_matrix(s, nullptr, {}).cells;
  EXPECT_EQ(report_to_json(a).dump(), report_to_json(b).dump());
}

}  // namespace
}  // namespace ulpscope

namespace ulpscope {
namespace {

// A norm of more than 2^22 elements is scored on an evenly spaced sample of
// its rows (the rows are independent problems), and still permuted and
// compared run against run over every output.
TEST(EndToEnd, ALargeNormIsScoredOnSampledRowsAndSaysSo) {
  const std::int64_t cols = 4096, rows = 1025;  // 2^22 + 4096 elements: 1024 rows scored
  MatrixSettings s = one_cell(Op::rmsnorm, Dtype::fp32, Accumulator::exact, Shape::tree,
                              {Distribution::normal, std::nullopt}, rows * cols);
  s.row_cols = cols;
  s.permutations = 1;
  const Cell c = run_one(s);
  EXPECT_NE(c.note.find("on 1024 of 1025 rows"), std::string::npos) << c.note;
  ASSERT_TRUE(c.ulp_error.has_value());
  EXPECT_LE(*c.ulp_error, 1.0);  // exact statistics, one fp64 step, one rounding
  EXPECT_EQ(c.distinct_across_permutations, 1);  // the exact row statistics do not depend on the order
  EXPECT_EQ(c.n, rows * cols);
  EXPECT_EQ(c.component.rfind("row ", 0), 0u) << c.component;
}

}  // namespace
}  // namespace ulpscope

namespace ulpscope {
namespace {

// Issue 41, item 2: four fp16 values of 65504 sum to 262016, which overflows
// fp16. The exact accumulator rounds it once, to +Inf: the correctly rounded
// result, scored 0 ULPs (it used to be "undefined"). So is a float accumulator
// that overflows to the same +Inf; near_max (every sum of two overflows) too.
TEST(EndToEnd, AnFp16SumWhoseExactValueOverflowsIsCorrectlyRoundedToInf) {
  for (const Accumulator acc : {Accumulator::exact, Accumulator::fp32}) {
    for (const DistributionSpec& dist :
         {DistributionSpec{Distribution::constant, 65504.0}, DistributionSpec{Distribution::near_max, std::nullopt}}) {
      const Cell c = run_one(one_cell(Op::sum, Dtype::fp16, acc, Shape::tree, dist, 4));
      EXPECT_EQ(value_of(c.reference_rounded), HUGE_VAL) << c.accumulator << ' ' << c.distribution;
      EXPECT_EQ(value_of(c.result), HUGE_VAL) << c.accumulator << ' ' << c.distribution;
      EXPECT_TRUE(c.correctly_rounded) << c.accumulator << ' ' << c.distribution;
      EXPECT_EQ(c.ulp_error, 0.0) << c.accumulator << ' ' << c.distribution << ": " << c.error_note;
      EXPECT_EQ(c.error_note, "") << c.accumulator << ' ' << c.distribution;
    }
  }
}

// Issue 41, item 5: every (op, n, axis) of the matrix either has cells or is
// listed once in `unavailable` with its reason, whatever the number of
// distributions and seeds; nothing vanishes.
TEST(EndToEnd, EveryOpSizeAndAxisEitherRunsOrIsListedOnceAsNotRun) {
  MatrixSettings s;
  s.ops = {Op::sum, Op::mean_var, Op::rmsnorm, Op::layernorm};
  s.dtypes = {Dtype::fp32};
  s.accumulators = {Accumulator::fp32};
  s.shapes = {Shape::tree};
  s.distributions = {{Distribution::normal, std::nullopt}, {Distribution::uniform, std::nullopt}};
  s.sizes = {33, 4097, 8192};
  s.seeds = {1, 2};
  s.axes = {Axis::all, Axis::inner, Axis::outer};
  s.row_cols = 4096;
  s.permutations = 0;
  s.runs = 1;
  const MatrixRun run = run_matrix(s, nullptr, {});

  std::set<std::string> ran;
  for (const Cell& c : run.cells) {
    ASSERT_EQ(c.status, "ok") << c.op << ' ' << c.n << ' ' << c.axis;
    ran.insert(fmt::format("{} n={} axis={}", c.op, c.n, c.axis));
  }
  std::map<std::string, std::string> not_run;
  for (const auto& [what, why] : run.unavailable) {
    EXPECT_TRUE(not_run.emplace(what, why).second) << "listed twice: " << what;
    EXPECT_EQ(ran.count(what), 0u) << what << " both ran and is listed as not run";
  }
  for (const Op op : s.ops) {
    // The norms normalise rows: along the inner axis only.
    const std::vector<Axis> axes = is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s.axes;
    for (const std::int64_t n : s.sizes) {
      for (const Axis axis : axes) {
        const std::string what = fmt::format("{} n={} axis={}", to_string(op), n, to_string(axis));
        const bool whole_rows = axis == Axis::all || n % std::min<std::int64_t>(n, s.row_cols) == 0;
        EXPECT_EQ(ran.count(what), whole_rows ? 1u : 0u) << what;
        if (whole_rows) continue;
        ASSERT_EQ(not_run.count(what), 1u) << what << " vanished without a not-run line";
        EXPECT_EQ(not_run.at(what), "not a whole number of rows of 4096") << what;
      }
    }
  }
  // sum and mean_var along inner and outer, and the two norms, at 4097.
  EXPECT_EQ(not_run.size(), 2u * 2 + 2);
}

// A shape that gives an op no kernel along an axis (atomic: whole-array sums
// only) is listed once per (op, dtype, axis, shape), with the reason; every
// (op, axis, shape) of the matrix either has cells or is listed.
TEST(EndToEnd, EveryOpAxisAndShapeEitherRunsOrIsListedOnceAsNotRun) {
  MatrixSettings s;
  s.ops = {Op::sum, Op::max, Op::rmsnorm};
  s.dtypes = {Dtype::fp32};
  s.accumulators = {Accumulator::fp32, Accumulator::fp64};
  s.shapes = {Shape::tree, Shape::atomic};
  s.distributions = {{Distribution::normal, std::nullopt}};
  s.sizes = {4096};
  s.seeds = {1, 2};
  s.axes = {Axis::all, Axis::inner};
  s.permutations = 0;
  s.runs = 1;
  const MatrixRun run = run_matrix(s, nullptr, {});
  std::set<std::string> ran;
  for (const Cell& c : run.cells) {
    ASSERT_EQ(c.status, "ok") << c.op << ' ' << c.axis << ' ' << c.shape;
    ran.insert(fmt::format("{} fp32 axis={} shape={}", c.op, c.axis, c.shape));
  }
  std::map<std::string, std::string> not_run;
  for (const auto& [what, why] : run.unavailable) EXPECT_TRUE(not_run.emplace(what, why).second) << "twice: " << what;
  for (const Op op : s.ops)
    for (const Axis axis : is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s.axes)
      for (const Shape shape : s.shapes) {
        const std::string what = fmt::format("{} fp32 axis={} shape={}", to_string(op), to_string(axis),
                                             to_string(shape));
        EXPECT_NE(ran.count(what) + not_run.count(what), 0u) << what << " vanished without a not-run line";
        EXPECT_FALSE(ran.count(what) && not_run.count(what)) << what << " both ran and is listed";
      }
  // atomic: max (both axes), sum along rows, rmsnorm; tree runs everything.
  for (const char* gap : {"max fp32 axis=all shape=atomic", "max fp32 axis=inner shape=atomic",
                          "sum fp32 axis=inner shape=atomic", "rmsnorm fp32 axis=inner shape=atomic"}) {
    ASSERT_EQ(not_run.count(gap), 1u) << gap;
    EXPECT_FALSE(not_run.at(gap).empty()) << gap;
  }
  EXPECT_EQ(not_run.size(), 4u);
}

}  // namespace
}  // namespace ulpscope
