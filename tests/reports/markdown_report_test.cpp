// Markdown for a pull-request comment: the summary first, the worst cells in
// order, the rest folded, and never over GitHub's comment limit.
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

TEST(MarkdownReport, SummaryFirstThenWorstCellsInOrder) {
  const Report r = test::sample_report();
  const std::string md = markdown(r, {3, 60000});
  const auto summary = md.find("failed: **1** · non-deterministic: **1** · GPU differs from model: **1**");
  const auto worst = md.find("#### The 3 worst cells");
  const auto details = md.find("<details><summary>The other 5 cells</summary>");
  ASSERT_NE(summary, std::string::npos) << md;
  ASSERT_NE(worst, std::string::npos) << md;
  ASSERT_NE(details, std::string::npos) << md;
  EXPECT_LT(summary, worst);
  EXPECT_LT(worst, details);
  EXPECT_NE(md.find("</details>"), std::string::npos);
  // Failed first, then the undefined error, then the largest ulp error (2048).
  // (The summary names the largest error's cell too: look in the table.)
  const auto failed = md.find(markdown_text(cell_label(r.cells[7])), worst);
  const auto undefined = md.find(markdown_text(cell_label(r.cells[6])), worst);
  const auto largest = md.find(markdown_text(cell_label(r.cells[1])), worst);
  EXPECT_LT(failed, undefined);
  EXPECT_LT(undefined, largest);
  EXPECT_LT(largest, details);
  EXPECT_NE(md.find("largest max ulp error: **2.05e+03**"), std::string::npos) << md;
  EXPECT_NE(md.find("- not run: cub_deterministic (needs CCCL >= 3.1)"), std::string::npos) << md;
}

TEST(MarkdownReport, AllCellsShownWhenFew) {
  const std::string md = markdown(test::sample_report());
  EXPECT_NE(md.find("#### Cells, worst first"), std::string::npos) << md;
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
