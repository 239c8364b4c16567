// The terminal report: the verdict first, its legend before it, within 120
// columns; with --cells every cell after it, grouped by op and format, aligned
// columns, marks and a legend for failed and non-deterministic cells, colour
// only when asked.
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

// The whole text with --cells.
std::string table(const Report& r, bool colour) {
  std::ostringstream out;
  write_table(r, out, TableStyle{colour, true});
  return out.str();
}

// The per-cell part of it, after the verdict.
std::string cells_part(const Report& r) {
  const std::string t = table(r, false);
  const auto at = t.find("\nEvery cell.");
  return at == std::string::npos ? std::string() : t.substr(at);
}

// The default text: the verdict only.
std::string verdict_text(const Report& r) {
  std::ostringstream out;
  write_table(r, out, TableStyle{false, false});
  return out.str();
}

TEST(TableReport, GroupsByOpAndDtype) {
  const std::string t = cells_part(test::sample_report());
  // sum|fp16 holds four cells, the others one each; groups in order of first appearance.
  const std::string groups[] = {"sum | fp16", "dot | bf16", "mean_var | fp32", "sum | fp8_e4m3", "norm2 | fp32"};
  for (const auto& g : groups) EXPECT_NE(verdict_text(test::sample_report()).find("\n" + g), std::string::npos) << g;
  std::size_t last = 0;
  for (const auto& g : groups) {
    const auto at = t.find("\n" + g + "\n");
    ASSERT_NE(at, std::string::npos) << g << "\n" << t;
    EXPECT_GT(at, last);
    last = at;
  }
}

TEST(TableReport, ColumnsAreAligned) {
  const auto lines = lines_of(cells_part(test::sample_report()));
  // Every heading line and row starts its "max ulp" column at the same place
  // (right-aligned: the column ends at the same place).
  std::size_t heading_end = std::string::npos;
  int rows = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // A column heading, between two others (not the legend's "max ulp:").
    if (lines[i].find(" max ulp ") == std::string::npos) continue;
    const std::size_t end = lines[i].find(" max ulp ") + 8;
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
  const std::string t = cells_part(test::sample_report());
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
  const auto lines = lines_of(cells_part(r));
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
  EXPECT_NE(verdict_text(r).find("GB/s, %cub: not measured (cpu backend)"), std::string::npos);
  EXPECT_EQ(verdict_text(test::sample_report()).find("GB/s, %cub: not measured"), std::string::npos);
  // Measured where it was, at its size; the failed kernel's throughput was not.
  EXPECT_NE(verdict_text(test::sample_report()).find("GB/s, %cub: throughput at n = "), std::string::npos);
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

TEST(TableReport, VerdictComesFirstWithItsLegendAndFits120Columns) {
  Report r = test::sample_report();
  r.cells[3].shape = "cub_deterministic";  // the longest built-in names, on one line
  r.cells[3].distribution = "llm_activations:4096";
  r.cells[2].distribution = "ill_conditioned:1e16";
  r.cells[2].ulp_error = 12345.678;
  const std::string t = verdict_text(r);
  EXPECT_EQ(t.find("Every cell."), std::string::npos);  // the cells are one flag away
  EXPECT_NE(t.find("--cells"), std::string::npos);
  const auto legend = t.find("Verdict: one line per kernel");
  const auto heading = t.find("\nsum | fp16\n");
  ASSERT_NE(legend, std::string::npos) << t;
  ASSERT_NE(heading, std::string::npos) << t;
  EXPECT_LT(legend, heading);
  for (const std::string& line : lines_of(t)) EXPECT_LE(line.size(), 120u) << line;
  for (const std::string& line : lines_of(table(r, false).substr(0, t.size()))) EXPECT_LE(line.size(), 120u) << line;
  // The exact kernel's row: its worst adversarial error and where, CR share, answers.
  const auto lines = lines_of(t);
  const auto row = std::find_if(lines.begin(), lines.end(),
                                [](const std::string& l) { return l.find("  exact  ") != std::string::npos; });
  ASSERT_NE(row, lines.end()) << t;
  EXPECT_NE(row->find("1.23e+04 ill_conditioned:1e16"), std::string::npos) << *row;
  EXPECT_NE(row->find("100%"), std::string::npos) << *row;
  EXPECT_NE(row->find("900, 95%"), std::string::npos) << *row;
  // The failed kernel is marked, and the mark explained.
  const auto failed = std::find_if(lines.begin(), lines.end(),
                                   [](const std::string& l) { return l.find(" cub ") != std::string::npos; });
  ASSERT_NE(failed, lines.end()) << t;
  EXPECT_EQ(failed->substr(0, 2), "x ");
  EXPECT_NE(failed->find("not measured"), std::string::npos) << *failed;
  EXPECT_NE(t.find("x: some of the kernel's cells failed"), std::string::npos);
}

TEST(TableReport, LongHeaderAndReasonsAreWrappedAt120Columns) {
  Report r = test::sample_report();
  r.header.device = std::string(70, 'D');
  std::string reason;
  for (int i = 0; i < 40; ++i) reason += "a reason in words ";
  r.header.unavailable = {{"cub_deterministic", reason}};
  for (const std::string& line : lines_of(verdict_text(r))) EXPECT_LE(line.size(), 120u) << line;
}

TEST(TableReport, EmptyReport) { EXPECT_NE(table(Report{}, false).find("(no cells)"), std::string::npos); }

}  // namespace
}  // namespace ulpscope
