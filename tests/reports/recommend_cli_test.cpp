// accuracy_report --recommend through the real program on the CPU backend
// (docs/spec.md, "Choosing an accumulator"): it honours --dist and --eps,
// writes JSON with --format json, refuses formats it does not write, and
// exits 1 with one line when no candidate meets the budget.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "test_files.hpp"

namespace ulpscope {
namespace {

test::CommandResult run(const std::string& args) {
  return test::run_command(std::string(ULPSCOPE_ACCURACY_REPORT) + " --backend cpu -q " + args);
}

TEST(RecommendCli, JsonHonoursDistAndEps) {
  test::ScratchDir dir;
  const auto out = (dir / "evidence.json").string();
  const auto r = run("--recommend rmsnorm --dtype bf16 --hidden 256 --dist normal,near_max --seed 1 --eps 1e-5 "
                     "--format json --out " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["schema"], "ulpscope.recommendation/1");
  EXPECT_EQ(j["eps"], 1e-5);
  EXPECT_EQ(j["budget"]["metric"], "accumulator_ulp_error");
  EXPECT_EQ(j["budget"]["value"], 2.0);
  ASSERT_EQ(j["groups"].size(), 2u);
  EXPECT_EQ(j["groups"][0]["group"], "realistic");
  EXPECT_EQ(j["groups"][0]["distributions"], nlohmann::json({"normal"}));
  EXPECT_EQ(j["groups"][1]["distributions"], nlohmann::json({"near_max"}));
  EXPECT_FALSE(j["cost_measured"].get<bool>());
  // The evidence: only the asked-for distributions, with the eps passed on.
  const auto report = nlohmann::json::parse(test::read_text(out));
  EXPECT_EQ(report["header"]["settings"]["eps"], 1e-5);
  for (const auto& c : report["cells"]) {
    EXPECT_TRUE(c["distribution"] == "normal" || c["distribution"] == "near_max") << c["distribution"];
    EXPECT_EQ(c["working_dtype"], c["accumulator"] == "fp64" || c["accumulator"] == "exact" ? "fp64" : "fp32");
  }
}

TEST(RecommendCli, NoCandidateWithinTheBudgetIsStatusOneAndOneLine) {
  // A budget of 0 strict ulps: no accumulator is exact on a sum of normal values' rounding.
  const auto r = run("--recommend sum --dtype fp16 --hidden 1000 --dist normal --seed 1 --ulp-tolerance 0");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("realistic inputs (normal): no candidate meets the budget"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("accuracy_report: no candidate meets the budget on realistic inputs\n"), std::string::npos)
      << r.output;
}

TEST(RecommendCli, FormatsItDoesNotWriteAreRefused) {
  const auto r = run("--recommend sum --dtype fp16 --hidden 1000 --format csv");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_EQ(run("--recommend sum --dtype fp16").status, 2);  // no --hidden and no --input
}

}  // namespace
}  // namespace ulpscope
