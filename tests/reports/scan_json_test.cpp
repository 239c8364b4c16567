// The `scan` object of a cumsum cell (reports/scan_json.hpp): written and read
// back unchanged, refused with a reason when broken, valid under
// reports/report.schema.json (python3-jsonschema, as json_schema_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/csv_report.hpp"
#include "reports/json_report.hpp"
#include "reports/scan_json.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

ScanProfile sample_profile() {
  ScanProfile s;
  s.share_correctly_rounded = 0.25;
  s.worst_index = 65000;
  s.line_length = 65536;
  for (int d = 0; d < kIndexDeciles; ++d) {
    s.max_ulp_by_decile[std::size_t(d)] = 10.0 * d;
    s.mean_ulp_by_decile[std::size_t(d)] = 4.5 * d;
  }
  s.max_ulp_by_decile[3] = std::nullopt;
  return s;
}

Report scan_report() {
  Report r;
  Cell c = test::base_cell("cumsum", "fp16", "naive", "lookback", "uniform", 65536);
  c.component = "index 65000";
  c.scan = sample_profile();
  r.cells.push_back(c);
  r.cells.push_back(test::base_cell("sum", "fp16", "fp32", "tree", "uniform", 65536));
  return r;
}

std::string json_of(const Report& r) {
  std::ostringstream out;
  write_json(r, out);
  return out.str();
}

TEST(ScanJson, ReadsBackWhatItWrote) {
  const std::string text = json_of(scan_report());
  std::istringstream in(text);
  const Report back = read_report(in, "scan.json");
  ASSERT_EQ(back.cells.size(), 2u);
  ASSERT_TRUE(back.cells[0].scan.has_value());
  const ScanProfile& s = *back.cells[0].scan;
  const ScanProfile want = sample_profile();
  EXPECT_EQ(s.share_correctly_rounded, want.share_correctly_rounded);
  EXPECT_EQ(s.worst_index, want.worst_index);
  EXPECT_EQ(s.line_length, want.line_length);
  EXPECT_EQ(s.max_ulp_by_decile, want.max_ulp_by_decile);
  EXPECT_EQ(s.mean_ulp_by_decile, want.mean_ulp_by_decile);
  EXPECT_FALSE(back.cells[1].scan.has_value());
  EXPECT_FALSE(nlohmann::json::parse(text)["cells"][1].contains("scan"));  // reductions' cells unchanged
}

TEST(ScanJson, BrokenScanObjectsAreRefusedWithWhere) {
  const nlohmann::json good = nlohmann::json::parse(json_of(scan_report()));
  const std::pair<const char*, void (*)(nlohmann::json&)> breakages[] = {
      {"nine deciles", [](nlohmann::json& s) { s["max_ulp_by_decile"].erase(0); }},
      {"negative error", [](nlohmann::json& s) { s["mean_ulp_by_decile"][2] = -1; }},
      {"share above 1", [](nlohmann::json& s) { s["share_correctly_rounded"] = 1.5; }},
      {"worst past the line", [](nlohmann::json& s) { s["worst_index"] = 65536; }},
      {"not an object", [](nlohmann::json& s) { s = 3; }},
  };
  for (const auto& [name, apply] : breakages) {
    nlohmann::json doc = good;
    apply(doc["cells"][0]["scan"]);
    std::istringstream in(doc.dump());
    try {
      read_report(in, "bad.json");
      ADD_FAILURE() << name << " was read";
    } catch (const ReportInputError& e) {
      EXPECT_NE(std::string(e.what()).find("cells[0].scan"), std::string::npos) << name << ": " << e.what();
    }
  }
}

// The CSV is one value per column: the scan object has none, and a cumsum
// cell's row has as many fields as the header.
TEST(ScanJson, CsvHasNoScanColumn) {
  std::ostringstream out;
  write_csv(scan_report(), out);
  std::istringstream lines(out.str());
  std::string header, cumsum_row, sum_row;
  ASSERT_TRUE(std::getline(lines, header) && std::getline(lines, cumsum_row) && std::getline(lines, sum_row));
  EXPECT_EQ(header.find("scan"), std::string::npos) << header;
  const auto commas = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  EXPECT_EQ(commas(cumsum_row), commas(header)) << cumsum_row;
  EXPECT_EQ(commas(sum_row), commas(header)) << sum_row;
}

TEST(ScanJson, ReportsWithScansAreValidUnderTheSchema) {
  constexpr const char* kPython = "/usr/bin/python3";
  if (!std::filesystem::exists(kPython)) GTEST_SKIP() << kPython << " is missing (Debian: python3)";
  if (test::run_command(std::string(kPython) + " -c 'import jsonschema'").status != 0)
    GTEST_SKIP() << "python3-jsonschema is missing: install Debian's python3-jsonschema";
  test::ScratchDir dir;
  const auto good = dir.path() / "good.json";
  test::write_text(good, json_of(scan_report()));
  nlohmann::json broken = nlohmann::json::parse(json_of(scan_report()));
  broken["cells"][0]["scan"]["colour"] = "red";
  const auto bad = dir.path() / "bad.json";
  test::write_text(bad, broken.dump());
  const auto r = test::run_command(std::string(kPython) + " " + ULPSCOPE_SCHEMA_VALIDATOR + " " +
                                   ULPSCOPE_REPORT_SCHEMA + " " + good.string() + " " + bad.string());
  EXPECT_NE(r.output.find("valid: " + good.string() + "\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("invalid: " + bad.string() + ":"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ulpscope
