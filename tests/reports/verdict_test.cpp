// The verdict: one line per kernel from its cells: the worst error per
// distribution group and where, the share correctly rounded, the three
// reproducibility answers, the throughput at the largest size measured.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reports/verdict.hpp"
#include "sample_report.hpp"

namespace ulpscope {
namespace {

Cell cell(std::string acc, std::string dist, double ulp, std::int64_t n = 1024) {
  Cell c = test::base_cell("sum", "fp16", std::move(acc), "tree", std::move(dist), n);
  c.ulp_error = ulp;
  c.correctly_rounded = ulp <= 0.5;
  return c;
}

TEST(DistributionGroup, EveryDistributionHasOneAndUserDataIsItsOwn) {
  for (const auto& [d, name] : kDistributionNames) {
    const auto it = std::find_if(kDistributionSummaries.begin(), kDistributionSummaries.end(),
                                 [d = d](const DistributionSummary& s) { return s.d == d; });
    ASSERT_NE(it, kDistributionSummaries.end()) << name;
    EXPECT_FALSE(it->summary.empty()) << name;
  }
  const std::pair<const char*, DistributionGroup> cases[] = {
      {"normal", DistributionGroup::realistic},
      {"llm_activations:4096", DistributionGroup::realistic},
      {"lognormal", DistributionGroup::realistic},
      {"ill_conditioned:1e16", DistributionGroup::adversarial},
      {"near_max", DistributionGroup::adversarial},
      {"large_mean:10000", DistributionGroup::realistic},
      {"with_nan", DistributionGroup::special},
      {"file:x.npy", DistributionGroup::user_input},
      {"a_name_this_build_does_not_make", DistributionGroup::user_input},
  };
  for (const auto& [name, group] : cases) EXPECT_EQ(distribution_group(name), group) << name;
}

TEST(Verdict, OneLinePerKernelInOrderOfFirstAppearance) {
  std::vector<Cell> cells = {cell("fp32", "normal", 0.5), cell("naive", "normal", 3), cell("fp32", "uniform", 0.25)};
  cells.push_back(cell("fp32", "normal", 0.5));
  cells.back().out_dtype = "fp32";  // another output format: another kernel
  cells.push_back(cell("fp32", "normal", 0.5));
  cells.back().axis = "inner";
  const auto v = verdicts(cells);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].accumulator, "fp32");
  EXPECT_EQ(v[0].cells, 2u);
  EXPECT_EQ(v[1].accumulator, "naive");
  EXPECT_EQ(verdict_format_text(v[0]), "fp16");
  EXPECT_EQ(verdict_format_text(v[2]), "fp16->fp32");
  EXPECT_EQ(verdict_format_text(v[3]), "fp16 inner");
}

TEST(Verdict, WorstErrorPerGroupNamesItsDistribution) {
  const std::vector<Cell> cells = {cell("fp32", "normal", 0.5),          cell("fp32", "lognormal", 1.5, 4097),
                                   cell("fp32", "uniform", 1.5),         cell("fp32", "ill_conditioned:1e16", 3e4),
                                   cell("fp32", "alternating", 12),      cell("fp32", "exact_cancellation", 3e4)};
  const Verdict v = verdicts(cells).at(0);
  EXPECT_EQ(v.realistic.cells, 3u);
  EXPECT_EQ(v.realistic.max_ulp, 1.5);
  EXPECT_EQ(v.realistic.distribution, "lognormal");  // the first of the ties
  EXPECT_EQ(v.realistic.n, 4097);
  EXPECT_EQ(v.adversarial.cells, 3u);
  EXPECT_EQ(v.adversarial.max_ulp, 3e4);
  EXPECT_EQ(v.adversarial.distribution, "ill_conditioned:1e16");
  EXPECT_FALSE(v.adversarial.unbounded);
  EXPECT_EQ(v.user_input.cells, 0u);
  EXPECT_EQ(worst_ulp_text(v.realistic), "1.5");
  EXPECT_EQ(worst_ulp_text(v.adversarial), "3e+04");
  EXPECT_EQ(worst_ulp_text(v.user_input), "-");
}

TEST(Verdict, AnUndefinedErrorIsUnboundedAndFailedCellsAreCountedApart) {
  std::vector<Cell> cells = {cell("fp32", "cauchy", 7), cell("fp32", "near_max", 0), cell("fp32", "with_inf", 9)};
  cells[1].ulp_error.reset();  // a finite result where +inf is correctly rounded
  cells[1].correctly_rounded = false;
  cells[2].status = "failed: out of memory";
  cells[2].ulp_error.reset();
  const Verdict v = verdicts(cells).at(0);
  EXPECT_EQ(v.cells, 3u);
  EXPECT_EQ(v.failed, 1u);
  EXPECT_EQ(v.adversarial.cells, 2u);  // the failed cell is not in the group
  EXPECT_TRUE(v.adversarial.unbounded);
  EXPECT_EQ(v.adversarial.max_ulp, 7.0);
  EXPECT_EQ(v.adversarial.distribution, "near_max");
  EXPECT_EQ(worst_ulp_text(v.adversarial), "inf");
}

TEST(Verdict, ShareCorrectlyRoundedIsRoundedDown) {
  auto share_of = [](int rounded, int total) {
    std::vector<Cell> cells;
    for (int i = 0; i < total; ++i) cells.push_back(cell("fp32", "normal", i < rounded ? 0.25 : 2));
    return correctly_rounded_text(verdicts(cells).at(0));
  };
  EXPECT_EQ(share_of(3, 3), "100%");
  EXPECT_EQ(share_of(199, 200), "99%");
  EXPECT_EQ(share_of(1, 3), "33%");
  EXPECT_EQ(share_of(1, 200), "<1%");
  EXPECT_EQ(share_of(0, 4), "0%");
}

TEST(Verdict, ReproducibilityIsNoOnceAnyCellDiffersAndNotMeasuredWithoutAChance) {
  std::vector<Cell> cells = {cell("fp32", "normal", 0.5), cell("fp32", "uniform", 0.5)};
  cells[1].permutations = 2;
  cells[1].distinct_across_permutations = 2;
  Verdict v = verdicts(cells).at(0);
  EXPECT_EQ(v.run_to_run, SameBits::yes);  // 5 runs, 1 result, in both
  EXPECT_EQ(v.across_configs, SameBits::yes);
  EXPECT_EQ(v.across_orders, SameBits::no);
  cells[0].distinct_results = 2;
  for (Cell& c : cells) c.configs = c.distinct_across_configs = 1;  // one configuration cannot differ
  v = verdicts(cells).at(0);
  EXPECT_EQ(v.run_to_run, SameBits::no);
  EXPECT_EQ(v.across_configs, SameBits::not_measured);
  EXPECT_EQ(to_string(v.across_configs), "n/a");
  cells.resize(1);
  EXPECT_EQ(verdicts(cells).at(0).across_orders, SameBits::not_measured);  // no permutation
}

TEST(Verdict, ThroughputIsTheMeasurementAtTheLargestSize) {
  std::vector<Cell> cells = {cell("fp32", "normal", 0.5, 1024), cell("fp32", "normal", 0.5, 1 << 27)};
  cells[0].throughput_n = std::int64_t(1) << 26;
  cells[1].throughput_n = std::int64_t(1) << 27;
  cells[1].gbps = 2950.4;
  cells[1].fraction_of_cub = 0.981;
  Verdict v = verdicts(cells).at(0);
  EXPECT_EQ(v.throughput_n, std::int64_t(1) << 27);
  EXPECT_EQ(throughput_text(v), "2950 GB/s, 98% of cub");
  for (Cell& c : cells) c.gbps.reset();
  v = verdicts(cells).at(0);
  EXPECT_FALSE(v.gbps);
  EXPECT_EQ(throughput_text(v), "not measured");
}

TEST(Verdict, SampleReportHasAVerdictPerKernel) {
  const Report r = test::sample_report();
  const auto v = verdicts(r.cells);
  std::size_t cells = 0;
  for (const Verdict& k : v) cells += k.cells;
  EXPECT_EQ(cells, r.cells.size());
  EXPECT_EQ(v.size(), r.cells.size());  // every sample cell is its own kernel
}

}  // namespace
}  // namespace ulpscope
