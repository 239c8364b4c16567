// cumsum through the whole measurement (accuracy/run_matrix.hpp on the CPU
// backend): the error's growth along the index of pytorch#180150's kind (a
// long row of positive fp16 values: the fp16 running value stagnates, fp32
// and exact do not), the per-index metrics (accuracy/scan_metrics.hpp), and
// the scan shapes of a run that scans (accuracy/scan_shapes.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "accuracy/run_matrix.hpp"
#include "accuracy/scan_metrics.hpp"
#include "accuracy/scan_shapes.hpp"

namespace ulpscope {
namespace {

MatrixSettings cumsum_settings() {
  MatrixSettings s;
  s.ops = {Op::cumsum};
  s.dtypes = {Dtype::fp16};
  s.accumulators = {Accumulator::naive, Accumulator::fp32, Accumulator::fp64, Accumulator::kahan,
                    Accumulator::exact};
  s.shapes = {Shape::serial, Shape::warp, Shape::block, Shape::reduce_then_scan, Shape::lookback};
  s.distributions = {{Distribution::uniform, std::nullopt}};
  s.sizes = {std::int64_t(1) << 16};
  s.seeds = {1};
  s.axes = {Axis::all};
  s.permutations = 2;
  s.runs = 1;
  return s;
}

double worst_of(const std::array<std::optional<double>, kIndexDeciles>& v) {
  double w = 0;
  for (const auto& e : v) w = std::max(w, e.value_or(HUGE_VAL));
  return w;
}

// 2^16 values of U[0, 1) in fp16: the exact prefixes reach about 32768.
// fp16's ulp is 2 from 2048 on, so the serial naive running value stops
// growing near 2048 (every term below 1 rounds away) while the exact prefix
// goes on: its error grows along the index (in ULPs of the exact prefix it
// drops at each binade, then grows again). The tiled shapes' naive scans
// restart every thread's run from a seed made of tile and block partials,
// so their outputs stay within a few ULPs: the serial order, not the
// format alone, makes the error grow. fp32, fp64, kahan and exact keep
// every decile at the final rounding's 0.5.
TEST(ScanAccuracy, SerialNaiveFp16ErrorGrowsAlongTheIndexAndFp32AndExactDoNot) {
  const MatrixRun run = run_matrix(cumsum_settings(), nullptr, {});
  ASSERT_EQ(run.cells.size(), 25u);
  double serial_naive = 0;
  for (const Cell& c : run.cells)
    if (c.accumulator == "naive" && c.shape == "serial") serial_naive = c.ulp_error.value_or(0);
  for (const Cell& c : run.cells) {
    SCOPED_TRACE(c.accumulator + " " + c.shape);
    ASSERT_EQ(c.status, "ok");
    ASSERT_TRUE(c.scan.has_value());
    const ScanProfile& s = *c.scan;
    EXPECT_EQ(s.line_length, std::int64_t(1) << 16);
    EXPECT_FALSE(c.permutations.has_value());  // a permuted scan is another problem
    ASSERT_TRUE(c.ulp_error.has_value());
    EXPECT_EQ(*c.ulp_error, worst_of(s.max_ulp_by_decile));
    if (c.accumulator == "naive" && c.shape == "serial") {
      const double first = *s.max_ulp_by_decile[0], last = *s.max_ulp_by_decile[9];
      EXPECT_GT(last, 1000.0);
      EXPECT_GT(last, 2 * first);
      EXPECT_GT(*s.mean_ulp_by_decile[9], 2 * *s.mean_ulp_by_decile[0]);
      EXPECT_EQ(*s.worst_index, (std::int64_t(1) << 16) - 1);  // the last prefix
      EXPECT_LT(s.share_correctly_rounded, 0.01);
    } else if (c.accumulator == "naive") {
      EXPECT_LT(*c.ulp_error, serial_naive / 100);
      EXPECT_GT(*c.ulp_error, 1.0);
      // How many prefixes land on the correct rounding depends on the tile
      // geometry (how many elements each thread's fp16 run stagnates over,
      // how many roundings its seed carries); on these 2^16 values a quarter
      // or more are off in every tiled shape, far from the 0.99 the wider
      // accumulators reach.
      EXPECT_LT(s.share_correctly_rounded, 0.75);
    } else if (c.accumulator == "exact") {
      EXPECT_EQ(s.share_correctly_rounded, 1.0);
      EXPECT_TRUE(c.correctly_rounded);
      EXPECT_LE(worst_of(s.max_ulp_by_decile), 0.5);
    } else {
      // fp32, fp64, kahan: the rounding to fp16 (0.5) and the running value's
      // own error, at most (n - 1) u_fp32 sum|x| = 2^16 2^-24 2^15 = 2^7
      // (Higham 2002, eq. 4.4), 4 ulps of fp16 at 2^15: reaching 1 needs most
      // roundings to go one way.
      EXPECT_LE(worst_of(s.max_ulp_by_decile), 1.0);
      EXPECT_GT(s.share_correctly_rounded, 0.99);
    }
  }
}

// Rows: each row is its own scan, the deciles are over the index in the row.
TEST(ScanAccuracy, RowsAreScoredPerRowIndex) {
  MatrixSettings s = cumsum_settings();
  s.accumulators = {Accumulator::fp32, Accumulator::exact};
  s.axes = {Axis::inner};
  s.row_cols = 4096;
  const MatrixRun run = run_matrix(s, nullptr, {});
  ASSERT_EQ(run.cells.size(), 10u);
  for (const Cell& c : run.cells) {
    ASSERT_EQ(c.status, "ok") << c.accumulator << " " << c.shape;
    ASSERT_TRUE(c.scan.has_value());
    EXPECT_EQ(c.scan->line_length, 4096);
    EXPECT_EQ(c.rows.value_or(0), 16);
    EXPECT_NE(c.component.find("row "), std::string::npos);
    if (c.accumulator == "exact") {
      EXPECT_EQ(c.distinct_across_configs, 1);  // one bit pattern on every launch
    }
  }
}

TEST(ScanAccuracy, AScanningRunTakesTheScanShapesAndListsCub) {
  MatrixSettings s = default_matrix(false);
  s.ops = {Op::cumsum};
  add_scan_shapes(s);
  EXPECT_EQ(s.shapes, (std::vector<Shape>{Shape::serial, Shape::warp, Shape::block, Shape::reduce_then_scan,
                                          Shape::lookback, Shape::cub}));
  s.dtypes = {Dtype::fp16};
  s.distributions = {{Distribution::normal, std::nullopt}};
  s.sizes = {1000};
  const MatrixRun run = run_matrix(s, nullptr, {});
  std::map<std::string, int> per_shape;
  for (const Cell& c : run.cells) ++per_shape[c.shape];
  for (const char* shape : {"serial", "warp", "block", "reduce_then_scan", "lookback"})
    EXPECT_EQ(per_shape[shape], 5) << shape;  // naive, fp32, fp64, kahan, exact
  EXPECT_EQ(per_shape.count("cub"), 0u);
  const bool cub_listed = std::any_of(run.unavailable.begin(), run.unavailable.end(),
                                      [](const auto& e) { return e.first == "cub"; });
  EXPECT_TRUE(cub_listed);
  // With a reduction beside it, the reduction shapes stay.
  MatrixSettings both = default_matrix(false);
  both.ops = {Op::sum, Op::cumsum};
  add_scan_shapes(both);
  EXPECT_NE(std::find(both.shapes.begin(), both.shapes.end(), Shape::tree), both.shapes.end());
  EXPECT_NE(std::find(both.shapes.begin(), both.shapes.end(), Shape::lookback), both.shapes.end());
}

TEST(ScanMetrics, DecilesAreOverTheIndexInEachLine) {
  // Two lines of 20: index i of each line has error i / 10 (line 1 doubled).
  std::vector<std::optional<double>> errors;
  std::vector<bool> correct;
  for (int line = 0; line < 2; ++line)
    for (int i = 0; i < 20; ++i) {
      errors.push_back((line + 1) * i / 10.0);
      correct.push_back(i == 0);
    }
  errors[25] = std::nullopt;  // line 1, index 5: decile 2 undefined
  const ScanProfile s = scan_profile(errors, correct, 20, 39);
  EXPECT_EQ(s.worst_index, 19);
  EXPECT_EQ(s.share_correctly_rounded, 2.0 / 40.0);
  EXPECT_EQ(s.max_ulp_by_decile[0], 0.2);  // line 1, index 1
  EXPECT_FALSE(s.max_ulp_by_decile[2].has_value());
  EXPECT_EQ(s.max_ulp_by_decile[9], 3.8);
  EXPECT_DOUBLE_EQ(*s.mean_ulp_by_decile[9], (1.8 + 1.9 + 3.6 + 3.8) / 4);
  // Fewer than ten elements: the empty deciles are null.
  const ScanProfile small = scan_profile({0.5, 1.0}, {true, false}, 2, 1);
  EXPECT_TRUE(small.max_ulp_by_decile[0].has_value() && small.max_ulp_by_decile[5].has_value());
  EXPECT_FALSE(small.max_ulp_by_decile[1].has_value());
  EXPECT_THROW(scan_profile({0.5, 1.0, 2.0}, {true, true, true}, 2, 0), std::invalid_argument);
}

}  // namespace
}  // namespace ulpscope
