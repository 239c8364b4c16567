// The terminal table: groups by op and dtype, aligned columns, marks and a
// legend for failed and non-deterministic cells, colour only when asked.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "reports/table_report.hpp"
#include "sample_report.hpp"

namespace ulpscope {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string table(const Report& r, bool colour) {
  std::ostringstream out;
  write_table(r, out, TableStyle{colour});
  return out.str();
}

TEST(TableReport, GroupsByOpAndDtype) {
  const std::string t = table(test::sample_report(), false);
  // sum|fp16 holds four cells, the others one each; groups in order of first appearance.
  const std::string groups[] = {"sum | fp16", "dot | bf16", "mean_var | fp32", "sum | fp8_e4m3", "norm2 | fp32"};
  std::size_t last = 0;
  for (const auto& g : groups) {
    const auto at = t.find("\n" + g + "\n");
    ASSERT_NE(at, std::string::npos) << g << "\n" << t;
    EXPECT_GT(at, last);
    last = at;
  }
}

TEST(TableReport, ColumnsAreAligned) {
  const auto lines = lines_of(table(test::sample_report(), false));
  // Every heading line and row starts its "max ulp" column at the same place
  // (right-aligned: the column ends at the same place).
  std::size_t heading_end = std::string::npos;
  int rows = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("max ulp") == std::string::npos) continue;
    const std::size_t end = lines[i].find("max ulp") + 7;
    if (heading_end == std::string::npos) heading_end = end;
    EXPECT_EQ(end, heading_end);
    // The row under the heading ends its max ulp field at the same column.
    const std::string& row = lines[i + 1];
    ASSERT_GT(row.size(), heading_end);
    EXPECT_NE(row[heading_end - 1], ' ') << row;
    EXPECT_EQ(row[heading_end], ' ') << row;
    ++rows;
  }
  EXPECT_EQ(rows, 5);
}

TEST(TableReport, MarksFailedAndNonDeterministicCellsWithALegend) {
  const std::string t = table(test::sample_report(), false);
  const auto lines = lines_of(t);
  auto row_with = [&](const std::string& needle) {
    for (const auto& l : lines)
      if (l.find(needle) != std::string::npos) return l;
    return std::string();
  };
  EXPECT_EQ(row_with("failed: cub, needs a GPU").substr(0, 1), "x");
  EXPECT_EQ(row_with("atomic").substr(0, 4), "~p! ");
  EXPECT_EQ(row_with("near_max").substr(0, 1), "?");
  EXPECT_EQ(row_with("constant").substr(0, 1), " ");
  EXPECT_NE(t.find("marks:\n  x  failed\n  ~  non-deterministic: different bits over repeated runs\n"
                   "  p  different bits over permutations of the input\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("  c  "), std::string::npos);  // only the marks that occur
  EXPECT_NE(row_with("atomic").find("5/3"), std::string::npos);
  EXPECT_NE(row_with("constant").find("2.05e+03"), std::string::npos);
  EXPECT_EQ(t.find('\x1b'), std::string::npos);  // no colour unless asked
}

TEST(TableReport, MarksConfigDependentCells) {
  Report r = test::sample_report();
  r.cells[0].distinct_across_configs = 2;
  const auto lines = lines_of(table(r, false));
  const auto row = std::find_if(lines.begin(), lines.end(),
                                [](const std::string& l) { return l.find("normal") != std::string::npos; });
  ASSERT_NE(row, lines.end());
  EXPECT_EQ(row->substr(0, 2), "c ");
  EXPECT_NE(row->find("4/2"), std::string::npos);
  EXPECT_NE(table(r, false).find("  c  different bits over launch configurations\n"), std::string::npos);
}

TEST(TableReport, ColourOnlyWhenAsked) {
  const std::string t = table(test::sample_report(), true);
  EXPECT_NE(t.find("\x1b["), std::string::npos);
  EXPECT_NE(t.find("\x1b[31m"), std::string::npos);  // a failed status in red
}

TEST(TableReport, CpuBackendSaysThroughputWasNotMeasured) {
  Report r = test::sample_report();
  r.header.backend = "cpu";
  for (Cell& c : r.cells) c.gbps.reset();
  EXPECT_NE(table(r, false).find("GB/s, %cub: not measured (cpu backend)"), std::string::npos);
  EXPECT_EQ(table(test::sample_report(), false).find("not measured"), std::string::npos);
}

TEST(TableReport, StyleFollowsTheTerminalAndNoColor) {
  // A pipe is not a terminal.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_FALSE(table_style_for_fd(fds[1]).colour);
  ::close(fds[0]);
  ::close(fds[1]);
  if (::isatty(STDOUT_FILENO) == 1) {
    ::setenv("NO_COLOR", "1", 1);
    EXPECT_FALSE(table_style_for_fd(STDOUT_FILENO).colour);
    ::unsetenv("NO_COLOR");
    EXPECT_TRUE(table_style_for_fd(STDOUT_FILENO).colour);
  }
}

TEST(TableReport, ListsShapesNotRun) {
  EXPECT_NE(table(test::sample_report(), false).find("not run: cub_deterministic (needs CCCL >= 3.1)\n"),
            std::string::npos);
}

TEST(TableReport, EmptyReport) { EXPECT_NE(table(Report{}, false).find("(no cells)"), std::string::npos); }

}  // namespace
}  // namespace ulpscope
