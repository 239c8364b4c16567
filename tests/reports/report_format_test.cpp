// The format names, the extension guess, and one entry point that writes any
// format to a stream or, atomically, to a file.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "reports/json_report.hpp"
#include "reports/report_format.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

TEST(ReportFormat, NamesRoundTrip) {
  for (const auto& [format, name] : kReportFormatNames) {
    EXPECT_EQ(to_string(format), name);
    EXPECT_EQ(parse_in(kReportFormatNames, name), format);
  }
  EXPECT_FALSE(parse_in(kReportFormatNames, "xml").has_value());
  EXPECT_EQ(names_of(kReportFormatNames), "table, json, csv, md, html");
}

TEST(ReportFormat, FromExtension) {
  EXPECT_EQ(format_for_extension("a/b.json"), ReportFormat::json);
  EXPECT_EQ(format_for_extension("r.csv"), ReportFormat::csv);
  EXPECT_EQ(format_for_extension("r.md"), ReportFormat::md);
  EXPECT_EQ(format_for_extension("r.html"), ReportFormat::html);
  EXPECT_EQ(format_for_extension("r.htm"), ReportFormat::html);
  EXPECT_EQ(format_for_extension("r.txt"), ReportFormat::table);
  EXPECT_FALSE(format_for_extension("r").has_value());
  EXPECT_FALSE(format_for_extension("r.xml").has_value());
}

// Each format, written to a file, is what the stream writer gives (tables in
// files have no colour), and the JSON file reads back.
TEST(ReportFormat, FileEqualsStream) {
  test::ScratchDir dir;
  const Report r = test::sample_report();
  for (const auto& [format, name] : kReportFormatNames) {
    SCOPED_TRACE(name);
    const auto path = dir / ("report." + std::string(name));
    write_report_file(r, format, path);
    std::ostringstream out;
    write_report(r, format, out, TableStyle{false});
    EXPECT_EQ(test::read_text(path), out.str());
    EXPECT_FALSE(out.str().empty());
    EXPECT_EQ(out.str().find('\x1b'), std::string::npos);
  }
  EXPECT_EQ(read_report_file(dir / "report.json").cells.size(), r.cells.size());
}

}  // namespace
}  // namespace ulpscope
