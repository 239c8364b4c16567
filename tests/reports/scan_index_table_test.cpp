// The terminal report's error along the index (reports/scan_index_table.hpp):
// which cell a kernel's line shows, the tenths and the growth as printed,
// what is undefined, and that the lines fit a terminal.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "reports/scan_index_table.hpp"
#include "reports/table_report.hpp"
#include "sample_report.hpp"

namespace ulpscope {
namespace {

// A profile whose tenth d has mean first * (1 + slope d).
ScanProfile profile(double first, double slope, std::int64_t length = 65536) {
  ScanProfile s;
  s.line_length = length;
  s.worst_index = length - 1;
  for (int d = 0; d < kIndexDeciles; ++d) {
    s.mean_ulp_by_decile[std::size_t(d)] = first * (1 + slope * d);
    s.max_ulp_by_decile[std::size_t(d)] = 2 * first * (1 + slope * d);
  }
  return s;
}

Cell scan_cell(const std::string& acc, const std::string& shape, const std::string& dist, ScanProfile s) {
  Cell c = test::base_cell("cumsum", "fp16", acc, shape, dist, s.line_length);
  c.scan = s;
  return c;
}

// The line of the section that starts with `prefix`, or "" when none does.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return {};
}

TEST(ScanIndexTable, NothingWithoutScanCells) {
  EXPECT_EQ(scan_index_text({test::base_cell("sum", "fp16", "fp32", "tree", "normal", 1024)}), "");
}

TEST(ScanIndexTable, ShowsTheCellWhoseLastTenthIsWorst) {
  // normal ends at 1 * (1 + 9) = 10, uniform at 2 * (1 + 0.5 * 9) = 11: uniform
  // is shown although normal starts lower and grows more.
  const std::string text = scan_index_text({scan_cell("naive", "serial", "normal", profile(1, 1)),
                                            scan_cell("naive", "serial", "uniform", profile(2, 0.5)),
                                            scan_cell("exact", "serial", "normal", profile(0.25, 0))});
  const std::string naive = line_starting(text, "naive");
  EXPECT_NE(naive.find("uniform"), std::string::npos) << naive;
  EXPECT_EQ(naive.find("normal"), std::string::npos) << naive;
  EXPECT_NE(naive.find(" 2 "), std::string::npos) << naive;    // its first tenth
  EXPECT_NE(naive.find(" 11 "), std::string::npos) << naive;   // its last
  EXPECT_NE(naive.find("x5.5"), std::string::npos) << naive;   // 11 / 2
  const std::string exact = line_starting(text, "exact");
  EXPECT_NE(exact.find("0.25"), std::string::npos) << exact;
  EXPECT_NE(exact.find("x1"), std::string::npos) << exact;
  EXPECT_NE(text.find("cumsum | fp16, lines of 2^16"), std::string::npos) << text;
}

TEST(ScanIndexTable, UndefinedTenthsAndGrowthAreNotAvailable) {
  ScanProfile overflowed = profile(3, 1);
  overflowed.mean_ulp_by_decile[kIndexDeciles - 1] = std::nullopt;  // a non-finite mismatch at the end
  ScanProfile from_zero = profile(0, 1);                              // no error in the first tenth
  from_zero.mean_ulp_by_decile[kIndexDeciles - 1] = 0.5;
  const std::string text = scan_index_text(
      {scan_cell("naive", "serial", "lognormal", overflowed), scan_cell("fp32", "serial", "uniform", from_zero)});
  // With no defined last tenth the naive kernel's one cell is still shown.
  const std::string naive = line_starting(text, "naive");
  EXPECT_NE(naive.find("lognormal"), std::string::npos) << naive;
  EXPECT_EQ(naive.substr(naive.size() - 3), "n/a") << naive;  // the growth
  EXPECT_NE(naive.find("n/a"), naive.rfind("n/a")) << naive;   // and the last tenth
  const std::string fp32 = line_starting(text, "fp32");
  EXPECT_EQ(fp32.substr(fp32.size() - 3), "n/a") << fp32;
}

TEST(ScanIndexTable, CompactNumbers) {
  EXPECT_EQ(compact_ulp(std::nullopt), "n/a");
  EXPECT_EQ(compact_ulp(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(compact_ulp(0.0), "0");
  EXPECT_EQ(compact_ulp(0.25), "0.25");
  EXPECT_EQ(compact_ulp(0.0123), "0.012");
  EXPECT_EQ(compact_ulp(0.251), "0.251");
  EXPECT_EQ(compact_ulp(12.5), "12.5");
  EXPECT_EQ(compact_ulp(999.0), "999");
  EXPECT_EQ(compact_ulp(999.6), "1.0e3");
  EXPECT_EQ(compact_ulp(1234.0), "1.2e3");
  EXPECT_EQ(compact_ulp(9960.0), "1.0e4");
  EXPECT_EQ(compact_ulp(4.2e-4), "<0.01");
  EXPECT_EQ(compact_ulp(3.0e12), "3e12");
  EXPECT_EQ(compact_ulp(9.96e9), "1e10");
  EXPECT_EQ(compact_ulp(9.6e30), "1e31");
  for (double v = 1e-9; v < 1e300; v *= 1.37) EXPECT_LE(compact_ulp(v).size(), 5u) << v;
}

TEST(ScanIndexTable, OneLengthInTheHeadingSeveralInAColumn) {
  const std::string one = scan_index_text({scan_cell("naive", "serial", "uniform", profile(1, 1, 1 << 16)),
                                           scan_cell("fp32", "serial", "uniform", profile(1, 0, 1 << 16))});
  EXPECT_NE(one.find("cumsum | fp16, lines of 2^16"), std::string::npos) << one;
  EXPECT_EQ(line_starting(one, "naive").find("2^16"), std::string::npos) << one;
  const std::string two = scan_index_text({scan_cell("naive", "serial", "uniform", profile(1, 1, 1 << 16)),
                                           scan_cell("fp32", "serial", "uniform", profile(1, 0, 1000003))});
  EXPECT_NE(line_starting(two, "naive").find("2^16"), std::string::npos) << two;
  EXPECT_NE(line_starting(two, "fp32").find("1000003"), std::string::npos) << two;
  EXPECT_EQ(two.find("lines of"), std::string::npos) << two;
}

TEST(ScanIndexTable, LinesFitATerminalWithTheLongestNames) {
  Report r;
  ScanProfile wide = profile(1234.5, 3.7, (std::int64_t(1) << 20) + 3);
  wide.mean_ulp_by_decile[4] = 4.2e-4;
  r.cells.push_back(scan_cell("kahan", "reduce_then_scan", "ill_conditioned:1e16", wide));
  r.cells.back().ulp_error = 1e4;
  r.cells.push_back(scan_cell("naive", "lookback", "llm_activations", profile(3e9, 1, std::int64_t(1) << 40)));
  r.cells.back().ulp_error = 1e12;
  std::ostringstream out;
  write_table(r, out);
  const std::string text = out.str();
  ASSERT_NE(text.find("Along the index"), std::string::npos) << text;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 120u) << line;
}

}  // namespace
}  // namespace ulpscope
