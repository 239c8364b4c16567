// Markdown for a pull-request comment: the summary first, the verdict, the
// worst cells by ULP error, those without one, the rest folded, and never over
// GitHub's comment limit.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "reports/cell_facts.hpp"
#include "reports/markdown_report.hpp"
#include "sample_report.hpp"

namespace ulpscope {
namespace {

std::string markdown(const Report& r, const MarkdownOptions& o = {}) {
  std::ostringstream out;
  write_markdown(r, out, o);
  return out.str();
}

TEST(MarkdownReport, SummaryThenVerdictThenWorstCellsByUlpThenThoseWithout) {
  const Report r = test::sample_report();
  const std::string md = markdown(r, {3, 60000});
  const auto summary = md.find("failed: **1** · non-deterministic: **1** · GPU differs from model: **1**");
  const auto verdict = md.find("#### Verdict");
  const auto worst = md.find("#### The 3 worst cells by ULP error");
  const auto without = md.find("#### The 2 cells without a ULP error");
  const auto details = md.find("<details><summary>The other 3 cells</summary>");
  ASSERT_NE(summary, std::string::npos) << md;
  ASSERT_NE(verdict, std::string::npos) << md;
  ASSERT_NE(worst, std::string::npos) << md;
  ASSERT_NE(without, std::string::npos) << md;
  ASSERT_NE(details, std::string::npos) << md;
  EXPECT_LT(summary, verdict);
  EXPECT_LT(verdict, worst);
  EXPECT_LT(worst, without);
  EXPECT_LT(without, details);
  EXPECT_NE(md.find("</details>"), std::string::npos);
  // The worst by ULP error: 2048, 1.5, 0.5, and no cell without a ULP error among them.
  const std::string worst_table = md.substr(worst, without - worst);
  const auto first = worst_table.find(markdown_text(cell_label(r.cells[1])));
  const auto second = worst_table.find(markdown_text(cell_label(r.cells[3])));
  const auto third = worst_table.find(markdown_text(cell_label(r.cells[0])));
  ASSERT_NE(first, std::string::npos) << worst_table;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_EQ(worst_table.find("n/a |"), std::string::npos) << worst_table;
  // Then the failed cell, then the undefined error.
  const auto failed = md.find(markdown_text(cell_label(r.cells[7])), without);
  const auto undefined = md.find(markdown_text(cell_label(r.cells[6])), without);
  EXPECT_LT(failed, undefined);
  EXPECT_LT(undefined, details);
  EXPECT_NE(md.find("largest max ulp error: **2.05e+03**"), std::string::npos) << md;
  EXPECT_NE(md.find("cells without a ULP error (failed, or non-finite"), std::string::npos) << md;
  EXPECT_NE(md.find("- not run: cub_deterministic (needs CCCL >= 3.1)"), std::string::npos) << md;
}

TEST(MarkdownReport, VerdictRowsSayTheWorstAndWhere) {
  Report r = test::sample_report();
  r.cells[2].distribution = "ill_conditioned:1e16";
  r.cells[2].ulp_error = 12345.678;
  const std::string md = markdown(r);
  EXPECT_NE(md.find("| sum | fp16 | exact | tree | - | 1.23e+04 (ill_conditioned:1e16) | 100% | yes | yes | n/a | "
                    "900 GB/s, 95% of cub | 0 |"),
            std::string::npos)
      << md;
  // The fp8 kernel's error is unbounded; the failed one was not measured.
  EXPECT_NE(md.find("| sum | fp8_e4m3 nosat | naive | tree | - | inf (near_max) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| norm2 | fp32 | fp32 | cub | - | - | 0% | n/a | n/a | n/a | not measured | 1 |"),
            std::string::npos)
      << md;
}

TEST(MarkdownReport, TheVerdictFitsAComment) {
  Report r = test::sample_report();
  const Cell model = r.cells[0];
  r.cells.clear();
  for (int k = 0; k < 3000; ++k) {
    r.cells.push_back(model);
    r.cells.back().accumulator = "acc" + std::to_string(k);
  }
  const std::string md = markdown(r);
  EXPECT_LE(md.size(), MarkdownOptions{}.max_chars);
  EXPECT_NE(md.find("more kernels left out to fit a comment"), std::string::npos);
  EXPECT_NE(md.find("#### The 20 worst cells by ULP error"), std::string::npos);
}

TEST(MarkdownReport, AllCellsShownWhenFew) {
  const std::string md = markdown(test::sample_report());
  EXPECT_NE(md.find("#### Cells by ULP error, worst first"), std::string::npos) << md;
  EXPECT_NE(md.find("#### The 2 cells without a ULP error"), std::string::npos) << md;
  EXPECT_EQ(md.find("<details>"), std::string::npos);
}

TEST(MarkdownReport, TextIsEscaped) {
  EXPECT_EQ(markdown_text("a|b<c>&`d\\"), "a\\|b&lt;c>&amp;\\`d\\\\");
  Report r = test::sample_report();
  r.cells[0].status = "failed: x|y";
  const std::string md = markdown(r);
  EXPECT_NE(md.find("failed: x\\|y"), std::string::npos);
}

TEST(MarkdownReport, FitsACommentAndSaysWhatItLeftOut) {
  Report r = test::sample_report();
  const Cell model = r.cells[0];
  r.cells.clear();
  for (std::uint64_t s = 0; s < 5000; ++s) {
    r.cells.push_back(model);
    r.cells.back().seed = s;
  }
  const std::string md = markdown(r);
  EXPECT_LE(md.size(), MarkdownOptions{}.max_chars);
  EXPECT_NE(md.find("more cells left out to fit a comment"), std::string::npos);
  EXPECT_NE(md.find("</details>"), std::string::npos);
}

TEST(MarkdownReport, EmptyReport) {
  const std::string md = markdown(Report{});
  EXPECT_NE(md.find("**0 cells**"), std::string::npos);
  EXPECT_EQ(md.find("worst"), std::string::npos);
}

}  // namespace
}  // namespace ulpscope
