// CSV: one row per cell, every row as wide as the header, RFC 4180 quoting
// that reads back, empty fields where JSON has null.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "reports/csv_report.hpp"
#include "sample_report.hpp"

namespace ulpscope {
namespace {

// An independent RFC 4180 reader for the test (quoted fields, doubled quotes,
// CRLF records).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, field_started = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"' && !field_started) {
      quoted = field_started = true;
    } else if (ch == ',') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
    } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
      rows.emplace_back();
      ++i;
    } else {
      field += ch;
      field_started = true;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(CsvReport, RowsColumnsAndQuoting) {
  const Report r = test::sample_report();
  std::ostringstream out;
  write_csv(r, out);
  const auto rows = parse_csv(out.str());
  ASSERT_EQ(rows.size(), r.cells.size() + 1);
  const auto& head = rows[0];
  for (const auto& row : rows) EXPECT_EQ(row.size(), head.size());
  auto col = [&](const std::string& name) {
    const auto it = std::find(head.begin(), head.end(), name);
    EXPECT_NE(it, head.end()) << name;
    return static_cast<std::size_t>(it - head.begin());
  };
  for (std::size_t i = 0; i < r.cells.size(); ++i) {
    const Cell& c = r.cells[i];
    const auto& row = rows[i + 1];
    EXPECT_EQ(row[col("op")], c.op);
    EXPECT_EQ(row[col("n")], std::to_string(c.n));
    EXPECT_EQ(row[col("seed")], std::to_string(c.seed));
    EXPECT_EQ(row[col("note")], c.note);  // quotes, commas and markup survive
    EXPECT_EQ(row[col("status")], c.status);
    EXPECT_EQ(row[col("reference_rounded")], c.reference_rounded);
    if (c.ulp_error) {
      EXPECT_EQ(std::stod(row[col("ulp_error")]), *c.ulp_error);
    } else {
      EXPECT_EQ(row[col("ulp_error")], "");
    }
    EXPECT_EQ(row[col("matches_model")], c.matches_model ? (*c.matches_model ? "true" : "false") : "");
    EXPECT_EQ(row[col("rows")], c.rows ? std::to_string(*c.rows) : "");
  }
  // The non-finite rel_error of cell 6 is empty, with the reason in error_note.
  EXPECT_EQ(rows[7][col("rel_error")], "");
  EXPECT_NE(rows[7][col("error_note")].find("rel_error was inf"), std::string::npos);
}

TEST(CsvReport, EmptyReportIsTheHeaderOnly) {
  std::ostringstream out;
  write_csv(Report{}, out);
  EXPECT_EQ(parse_csv(out.str()).size(), 1u);
}

}  // namespace
}  // namespace ulpscope
