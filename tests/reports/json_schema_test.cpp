// What write_json produces satisfies reports/report.schema.json, checked by an
// independent validator (python3-jsonschema), and the schema is not vacuous:
// reports broken in known ways fail it.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/json_report.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, where python3-jsonschema installs

class JsonSchema : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kPython)) GTEST_SKIP() << kPython << " is missing (Debian: python3)";
    const auto probe = test::run_command(std::string(kPython) + " -c 'import jsonschema'");
    if (probe.status != 0) GTEST_SKIP() << "python3-jsonschema is missing: install Debian's python3-jsonschema";
  }

  test::CommandResult validate(const std::string& json_text) {
    const auto path = dir_ / "report.json";
    test::write_text(path, json_text);
    return test::run_command(std::string(kPython) + " " + ULPSCOPE_SCHEMA_VALIDATOR + " " +
                             ULPSCOPE_REPORT_SCHEMA + " " + path.string());
  }

  static std::string sample_json() {
    std::ostringstream out;
    write_json(test::sample_report(), out);
    return out.str();
  }

  test::ScratchDir dir_;
};

TEST_F(JsonSchema, WrittenReportsAreValid) {
  const auto r = validate(sample_json());
  EXPECT_EQ(r.status, 0) << r.output;
  Report empty;
  std::ostringstream out;
  write_json(empty, out);
  const auto e = validate(out.str());
  EXPECT_EQ(e.status, 0) << e.output;
}

TEST_F(JsonSchema, BrokenReportsAreInvalid) {
  const auto good = nlohmann::json::parse(sample_json());
  const std::pair<const char*, void (*)(nlohmann::json&)> breakages[] = {
      {"ulp_error as string", [](nlohmann::json& d) { d["cells"][0]["ulp_error"] = "0.5"; }},
      {"missing status", [](nlohmann::json& d) { d["cells"][1].erase("status"); }},
      {"unknown key", [](nlohmann::json& d) { d["cells"][2]["colour"] = "red"; }},
      {"schema 2", [](nlohmann::json& d) { d["schema"] = "ulpscope.report/2"; }},
      {"decimal result", [](nlohmann::json& d) { d["cells"][0]["result"] = "1.5"; }},
      {"negative n", [](nlohmann::json& d) { d["cells"][0]["n"] = -1; }},
      {"settings as string", [](nlohmann::json& d) { d["header"]["settings"] = "{}"; }},
  };
  for (const auto& [name, apply] : breakages) {
    auto doc = good;
    apply(doc);
    const auto r = validate(doc.dump());
    EXPECT_EQ(r.status, 1) << name << ": " << r.output;
  }
  // NaN is not JSON, even where the schema allows a number.
  std::string text = good.dump();
  const std::string key = "\"ulp_error\":0.5";
  ASSERT_NE(text.find(key), std::string::npos);
  text.replace(text.find(key), key.size(), "\"ulp_error\":NaN");
  EXPECT_NE(validate(text).status, 0);
}

}  // namespace
}  // namespace ulpscope
