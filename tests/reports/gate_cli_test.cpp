// The gate end to end, through accuracy_report on the CPU backend: a small
// matrix is run for real, stored as the baseline, re-run and compared; the
// baseline is then edited to be better than the run (a regression), broken,
// or made with another schema. Exit statuses 0, 1 and 2 (docs/ci.md).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "test_files.hpp"

namespace ulpscope {
namespace {

const std::string kTool = ULPSCOPE_ACCURACY_REPORT;

class GateCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::ScratchDir;
    const auto r = run("--backend cpu -q --dtype fp16 --op sum --accumulator naive,fp32 --shape serial,tree"
                       " --dist normal,constant --n 1000,4097 --seed 1 --runs 2 --format json --out " +
                       path("base.json"));
    ASSERT_EQ(r.status, 0) << r.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::string path(const std::string& name) { return (*dir_ / name).string(); }
  static test::CommandResult run(const std::string& args) { return test::run_command(kTool + " " + args); }
  static nlohmann::json load(const std::string& name) { return nlohmann::json::parse(test::read_text(path(name))); }
  static void save(const std::string& name, const nlohmann::json& doc) { test::write_text(path(name), doc.dump(1)); }

  static test::ScratchDir* dir_;
};
test::ScratchDir* GateCli::dir_ = nullptr;

TEST_F(GateCli, TheBaselineIsARealRun) {
  const auto doc = load("base.json");
  EXPECT_EQ(doc["header"]["backend"], "cpu");
  EXPECT_EQ(doc["cells"].size(), 2u * 2 * 2 * 2);  // accumulators x shapes x distributions x sizes
}

// The header names the commit stamped into this build (cmake/write_git_commit.cmake),
// not the one the build tree was configured at.
TEST_F(GateCli, TheHeaderNamesTheCommitOfTheBuild) {
  const std::string stamp = test::read_text(ULPSCOPE_GIT_COMMIT_HEADER);
  const std::string key = "#define ULPSCOPE_GIT_COMMIT \"";
  const auto at = stamp.find(key);
  ASSERT_NE(at, std::string::npos) << stamp;
  const auto begin = at + key.size();
  const std::string commit = stamp.substr(begin, stamp.find('"', begin) - begin);
  ASSERT_FALSE(commit.empty()) << stamp;
  EXPECT_EQ(load("base.json")["header"]["git_commit"], commit);
}

TEST_F(GateCli, ReRunningTheBaselinesMatrixPasses) {
  const auto r = run("--backend cpu -q --baseline " + path("base.json") + " --gate --gate-summary " +
                     path("pass.md") + " --format json --out " + path("cur.json"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(test::read_text(path("pass.md")).find("gate: ✅ pass"), std::string::npos);
  // And the stored reports compare the same way.
  const auto c = run("--baseline " + path("base.json") + " --current " + path("cur.json") + " --gate");
  EXPECT_EQ(c.status, 0) << c.output;
}

TEST_F(GateCli, ABetterBaselineMeansARegression) {
  auto doc = load("base.json");
  // The worst cell's error, shrunk in the baseline: the run now looks worse.
  nlohmann::json* worst = nullptr;
  for (auto& cell : doc["cells"])
    if (cell["ulp_error"].is_number() && (worst == nullptr || cell["ulp_error"] > (*worst)["ulp_error"])) worst = &cell;
  ASSERT_NE(worst, nullptr);
  ASSERT_GT((*worst)["ulp_error"].get<double>(), 1.0) << "the matrix has no inexact cell to regress";
  (*worst)["ulp_error"] = 0.0;
  save("better.json", doc);
  const auto r = run("--backend cpu -q --baseline " + path("better.json") + " --gate --ulp-tolerance 0.5 --gate-summary " +
                     path("fail.md") + " --format json --out " + path("cur2.json"));
  EXPECT_EQ(r.status, 1) << r.output;
  const std::string md = test::read_text(path("fail.md"));
  EXPECT_NE(md.find("❌ FAIL"), std::string::npos) << md;
  EXPECT_NE(md.find("ulp error grew"), std::string::npos) << md;
  // Without --gate the run reports but does not fail on the comparison.
  const auto c = run("--baseline " + path("better.json") + " --current " + path("cur2.json"));
  EXPECT_EQ(c.status, 0) << c.output;
}

TEST_F(GateCli, ACellThatDisappearsIsARegression) {
  auto doc = load("base.json");
  auto extra = doc["cells"][0];
  extra["seed"] = 99;  // a cell the run does not have
  doc["cells"].push_back(extra);
  save("more.json", doc);
  const auto r = run("--baseline " + path("more.json") + " --current " + path("base.json") + " --gate");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("cell missing"), std::string::npos) << r.output;
}

TEST_F(GateCli, CorruptBaselineIsStatusTwo) {
  const std::string text = test::read_text(path("base.json"));
  test::write_text(path("corrupt.json"), text.substr(0, text.size() / 3));
  const auto r = run("--backend cpu -q --baseline " + path("corrupt.json") + " --gate");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("corrupt.json: not valid JSON"), std::string::npos) << r.output;

  auto doc = load("base.json");
  doc["cells"][2]["correctly_rounded"] = "yes";
  save("wrong_type.json", doc);
  const auto w = run("--baseline " + path("wrong_type.json") + " --current " + path("base.json") + " --gate");
  EXPECT_EQ(w.status, 2) << w.output;
  EXPECT_NE(w.output.find("cells[2].correctly_rounded: expected a boolean"), std::string::npos) << w.output;
}

TEST_F(GateCli, AnotherSchemaIsStatusTwo) {
  auto doc = load("base.json");
  doc["schema"] = "ulpscope.report/2";
  save("v2.json", doc);
  const auto r = run("--backend cpu -q --baseline " + path("v2.json") + " --gate");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("schema \"ulpscope.report/2\" is not supported"), std::string::npos) << r.output;
}

TEST_F(GateCli, OtherSettingsAreStatusTwo) {
  auto doc = load("base.json");
  doc["header"]["settings"]["seeds"] = {7};
  save("other.json", doc);
  const auto r = run("--baseline " + path("other.json") + " --current " + path("base.json") + " --gate");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("different settings"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ulpscope
