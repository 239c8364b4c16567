// What write_json produces satisfies reports/report.schema.json, checked by an
// independent validator (python3-jsonschema), and the schema is not vacuous:
// reports broken in known ways fail it.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

  // Writes each text to a file and validates them all in one run of the
  // validator; returns its status and, per text, whether it was valid.
  std::pair<int, std::vector<bool>> validate(const std::vector<std::string>& texts) {
    std::string paths;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto path = dir_ / ("report" + std::to_string(i) + ".json");
      test::write_text(path, texts[i]);
      paths += " " + path.string();
    }
    const auto r = test::run_command(std::string(kPython) + " " + ULPSCOPE_SCHEMA_VALIDATOR + " " +
                                     ULPSCOPE_REPORT_SCHEMA + paths);
    output_ = r.output;
    std::vector<bool> valid;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const std::string path = (dir_ / ("report" + std::to_string(i) + ".json")).string();
      valid.push_back(r.output.find("valid: " + path + "\n") != std::string::npos &&
                      r.output.find("invalid: " + path + ":") == std::string::npos);
      EXPECT_TRUE(r.output.find("valid: " + path) != std::string::npos) << "no verdict for " << path << "\n" << r.output;
    }
    return {r.status, valid};
  }

  static std::string sample_json() {
    std::ostringstream out;
    write_json(test::sample_report(), out);
    return out.str();
  }

  test::ScratchDir dir_;
  std::string output_;
};

TEST_F(JsonSchema, WrittenReportsAreValid) {
  std::ostringstream empty;
  write_json(Report{}, empty);
  const auto [status, valid] = validate({sample_json(), empty.str()});
  EXPECT_EQ(status, 0) << output_;
  EXPECT_EQ(valid, (std::vector<bool>{true, true})) << output_;
}

// An --input run's header and --check values, and a check that breaks them.
TEST_F(JsonSchema, InputAndChecksAreValid) {
  Report r = test::sample_report();
  r.header.input = InputDescription{"x.npy", "<V2", "bf16", ""};
  UserValueCheck u;
  u.label = "user value 1";
  u.given = "4444";
  u.value = "0x1.15cp+12";
  u.op = "sum";
  u.out_dtype = "fp32";
  u.reference_rounded = "0x1.16p+12";
  u.reference_exact = "4448";
  u.ulp_error = 8192;
  r.checks.push_back(u);
  std::ostringstream out;
  write_json(r, out);
  auto broken = nlohmann::json::parse(out.str());
  broken["checks"][0]["value"] = "4444";
  const auto [status, valid] = validate({out.str(), broken.dump()});
  EXPECT_EQ(valid, (std::vector<bool>{true, false})) << output_;
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
      {"unavailable without reason", [](nlohmann::json& d) { d["header"]["unavailable"][0].erase("reason"); }},
  };
  std::vector<std::string> texts;
  for (const auto& [name, apply] : breakages) {
    auto doc = good;
    apply(doc);
    texts.push_back(doc.dump());
  }
  // NaN is not JSON, even where the schema allows a number.
  std::string nan_text = good.dump();
  const std::string key = "\"ulp_error\":0.5";
  ASSERT_NE(nan_text.find(key), std::string::npos);
  nan_text.replace(nan_text.find(key), key.size(), "\"ulp_error\":NaN");
  texts.push_back(nan_text);

  const auto [status, valid] = validate(texts);
  EXPECT_EQ(status, 1) << output_;
  for (std::size_t i = 0; i < texts.size(); ++i)
    EXPECT_FALSE(valid[i]) << (i < std::size(breakages) ? breakages[i].first : "NaN") << " passed the schema";
}

}  // namespace
}  // namespace ulpscope
