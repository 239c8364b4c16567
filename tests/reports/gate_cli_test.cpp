// The gate end to end, through accuracy_report on the CPU backend: a small
// matrix is run for real, stored as the baseline, re-run and compared; the
// baseline is then edited to be better than the run (a regression), broken,
// or made with another schema. Exit statuses 0, 1 and 2 (docs/ci.md).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

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

// --label names the run in the summary; $GITHUB_STEP_SUMMARY, when set, gets
// the summary appended, as well as --gate-summary FILE.
TEST_F(GateCli, TheSummaryNamesTheLabelAndReachesTheStepSummary) {
  test::write_text(path("step.md"), "an earlier step\n");
  const auto r = test::run_command("GITHUB_STEP_SUMMARY=" + path("step.md") + " " + kTool + " --backend cpu -q --baseline " +
                                   path("base.json") + " --gate --label 'my-branch @ 1a2b3c4' --gate-summary " +
                                   path("label.md") + " --format json --out " + path("label.json"));
  EXPECT_EQ(r.status, 0) << r.output;
  const std::string md = test::read_text(path("label.md"));
  EXPECT_NE(md.find("### ulpscope gate: ✅ pass · my-branch @ 1a2b3c4"), std::string::npos) << md;
  EXPECT_NE(md.find("- current: **my-branch @ 1a2b3c4**"), std::string::npos) << md;
  EXPECT_EQ(test::read_text(path("step.md")), "an earlier step\n" + md + "\n");
  // Stored reports too, without --gate-summary.
  const auto c = test::run_command("GITHUB_STEP_SUMMARY=" + path("step.md") + " " + kTool + " --baseline " +
                                   path("base.json") + " --current " + path("label.json") + " --gate");
  EXPECT_EQ(c.status, 0) << c.output;
  const std::string step = test::read_text(path("step.md"));
  const std::string before = "an earlier step\n" + md + "\n";  // appended after the first summary
  EXPECT_EQ(step.substr(0, before.size()), before);
  EXPECT_EQ(step.rfind("### ulpscope gate"), before.size()) << step;
}

TEST_F(GateCli, ALabelWithoutABaselineIsStatusTwo) {
  for (const std::string& args : {std::string("--backend cpu -q --label x --op sum --n 100"),
                                  std::string("--baseline ") + path("base.json") + " --current " + path("base.json") +
                                      " --label \"$(printf 'two\\nlines')\""}) {
    const auto r = run(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("--label"), std::string::npos) << r.output;
  }
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

// The gallery runs its own matrix; a gate beside it would never gate.
TEST_F(GateCli, GalleryWithAGateIsStatusTwo) {
  const auto r = run("--backend cpu -q --gallery --baseline /nonexistent.json --gate");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--gallery does not go with --baseline"), std::string::npos) << r.output;
}

// A run that makes no cell passes nothing.
TEST_F(GateCli, ARunThatMeasuresNothingIsStatusTwo) {
  for (const std::string& matrix : {"--op rmsnorm --n 4097", "--op sum --axis inner --cols 1000 --n 4096"}) {
    const auto r = run("--backend cpu -q --dtype fp16 --accumulator fp32 --dist normal " + matrix +
                       " --format json --out " + path("nothing.json"));
    EXPECT_EQ(r.status, 2) << matrix << ": " << r.output;
    EXPECT_NE(r.output.find("measured nothing: "), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(path("nothing.json")));
  }
}

TEST_F(GateCli, ABaselineWithoutCellsIsStatusTwo) {
  auto doc = load("base.json");
  doc["cells"] = nlohmann::json::array();
  save("empty.json", doc);
  const auto r = run("--backend cpu -q --baseline " + path("empty.json") + " --gate");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("the baseline has no cells"), std::string::npos) << r.output;
  // Stored reports: an empty baseline, or an empty current report.
  const auto b = run("--baseline " + path("empty.json") + " --current " + path("base.json") + " --gate");
  EXPECT_EQ(b.status, 2) << b.output;
  const auto c = run("--baseline " + path("base.json") + " --current " + path("empty.json") + " --gate");
  EXPECT_EQ(c.status, 2) << c.output;
  EXPECT_NE(c.output.find("the current report has no cells"), std::string::npos) << c.output;
}

// A baseline's settings are refused as the flags would be, at once
// (before: row_cols 0 was SIGFPE, permutations 1e9 a hang, n = -5 a "regression").
TEST_F(GateCli, BaselineSettingsAreCheckedLikeFlags) {
  const std::vector<std::pair<std::string, nlohmann::json>> bad = {
      {"row_cols", 0}, {"permutations", 1000000000}, {"runs", 0},
      {"sizes", nlohmann::json::array({1000, -5})}, {"sizes", nlohmann::json::array({std::int64_t(1) << 41})},
      {"eps", 0.0}, {"sizes", nlohmann::json::array({1000, 1000})}};
  for (const auto& [key, value] : bad) {
    auto doc = load("base.json");
    doc["header"]["settings"][key] = value;
    save("bad_settings.json", doc);
    const auto r = test::run_command("timeout 60 " + kTool + " --backend cpu -q --baseline " +
                                     path("bad_settings.json") + " --gate");
    EXPECT_EQ(r.status, 2) << key << " " << value.dump() << ": " << r.output;
    EXPECT_NE(r.output.find("bad_settings.json: settings: " + key.substr(0, key.size() - 1)), std::string::npos)
        << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

// An output never replaces an input of the same run.
TEST_F(GateCli, AnOutputThatIsAnInputIsRefused) {
  const std::string before = test::read_text(path("base.json"));
  const std::string same = (*dir_ / "." / "base.json").string();  // another spelling
  for (const std::string& args : {"--backend cpu -q --baseline " + path("base.json") + " --out " + same,
                                  "--backend cpu -q --baseline " + path("base.json") + " --gate --gate-summary " + same,
                                  "--baseline " + path("base.json") + " --current " + path("base.json") +
                                      " --gate-summary " + same}) {
    const auto r = run(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("is also this run's --baseline"), std::string::npos) << r.output;
  }
  // Nor the other output.
  const auto both = run("--backend cpu -q --baseline " + path("base.json") + " --gate --out " + path("twice.md") +
                        " --gate-summary " + path("twice.md"));
  EXPECT_EQ(both.status, 2) << both.output;
  EXPECT_NE(both.output.find("is also this run's --out"), std::string::npos) << both.output;
  EXPECT_EQ(test::read_text(path("base.json")), before);
}

// --out and --gate-summary refuse what is not a regular file (a
// symbolic link included: it would be replaced, its target left stale) and a
// missing or non-directory parent, before the run.
TEST_F(GateCli, OutputsThatCannotBeWrittenAreRefusedBeforeTheRun) {
  std::filesystem::create_directories(path("a_directory"));
  ASSERT_EQ(::mkfifo(path("a_fifo").c_str(), 0600), 0);
  test::write_text(path("target.json"), "keep");
  std::filesystem::create_symlink(path("target.json"), path("a_link.json"));
  test::write_text(path("a_file"), "x");
  const std::string matrix = "--backend cpu -q --dtype fp16 --op sum --accumulator fp32 --shape serial --dist normal"
                             " --n 100 --format json";
  for (const auto& [flag, target, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--out", path("a_directory"), "is a directory, not a regular file"},
           {"--out", path("a_fifo"), "is a FIFO, not a regular file"},
           {"--out", path("a_link.json"), "is a symbolic link"},
           {"--out", path("missing/report.json"), "does not exist"},
           {"--out", path("a_file") + "/report.json", "is not a directory"},
           {"--gate-summary", path("a_file") + "/summary.md", "is not a directory"},
           {"--gate-summary", path("missing/summary.md"), "does not exist"}}) {
    const std::string gate = flag == "--gate-summary" ? " --baseline " + path("base.json") + " --gate" : "";
    const auto r = test::run_command("timeout 60 " + kTool + " " + matrix + gate + " " + flag + " " + target);
    EXPECT_EQ(r.status, 2) << flag << " " << target << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  EXPECT_TRUE(std::filesystem::is_symlink(path("a_link.json")));
  EXPECT_EQ(test::read_text(path("target.json")), "keep");
}

// A FIFO as an input is refused, not waited on in open().
TEST_F(GateCli, AFifoAsAnInputIsRefused) {
  ASSERT_EQ(::mkfifo(path("input_fifo.npy").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(path("baseline_fifo.json").c_str(), 0600), 0);
  for (const std::string& args : {"--backend cpu -q --op sum --input " + path("input_fifo.npy"),
                                  "--backend cpu -q --baseline " + path("baseline_fifo.json") + " --gate"}) {
    const auto r = test::run_command("timeout 30 " + kTool + " " + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("not a regular file"), std::string::npos) << r.output;
  }
}

// "--dist normal,normal" makes each cell once (the gate refuses
// a report with a cell twice).
TEST_F(GateCli, RepeatedDistributionsMakeEachCellOnce) {
  const auto r = run("--backend cpu -q --dtype fp16 --op sum --accumulator fp32 --shape serial"
                     " --dist normal,normal,ill_conditioned:1e16,ill_conditioned:1e+16 --n 100,100 --seed 1,1"
                     " --format json --out " + path("repeated.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(load("repeated.json")["cells"].size(), 2u);
  const auto g = run("--baseline " + path("repeated.json") + " --current " + path("repeated.json") + " --gate");
  EXPECT_EQ(g.status, 0) << g.output;
}

}  // namespace
}  // namespace ulpscope
