// The all-reduce family through the real program on the CPU backend: every
// format carries its cells (JSON's allreduce object under the schema, CSV's
// allreduce_* columns, the Markdown and HTML sections), a gate re-runs it,
// and bad requests exit 2 with one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_files.hpp"

namespace ulpscope {
namespace {

const std::string kTool = ULPSCOPE_ACCURACY_REPORT;
const std::string kSmall = "--op allreduce_sum,allreduce_mean --dtype bf16 --ranks 2,4 --n 300 --dist normal ";

test::CommandResult run(const std::string& args) { return test::run_command(kTool + " --backend cpu -q " + args); }

std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(AllreduceCli, EveryFormatCarriesTheFamily) {
  test::ScratchDir dir;
  const auto json = dir / "r.json", csv = dir / "r.csv", md = dir / "r.md", html = dir / "r.html";
  const auto r = run(kSmall + "--json " + json.string() + " --csv " + csv.string() + " --md " + md.string() +
                     " --html " + html.string() + " --format table");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ring/simple P=4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not run: nccl"), std::string::npos) << r.output;
  const auto j = nlohmann::json::parse(test::read_text(json));
  // 2 ops x 3 methods x 2 algorithms x 2 values of P.
  ASSERT_EQ(j["cells"].size(), 24u);
  EXPECT_EQ(j["header"]["settings"]["family"], "allreduce");
  for (const auto& c : j["cells"]) {
    const auto& a = c["allreduce"];
    EXPECT_EQ(a["ranks"], c["rows"]);
    EXPECT_EQ(c["axis"], "outer");
    if (a["method"] == "exact") EXPECT_EQ(a["share_correctly_rounded"].get<double>(), 1.0);
    if (a["ranks"] == 2 && c["op"] == "allreduce_sum") EXPECT_TRUE(c["correctly_rounded"].get<bool>());
  }
  const std::string table = test::read_text(csv);
  EXPECT_NE(table.find(",allreduce_ranks,allreduce_algorithm,"), std::string::npos);
  EXPECT_NE(test::read_text(md).find("All-reduce: max ULP error"), std::string::npos);
  EXPECT_NE(test::read_text(html).find("view-allreduce-error"), std::string::npos);

  constexpr const char* kPython = "/usr/bin/python3";
  if (!std::filesystem::exists(kPython) ||
      test::run_command(std::string(kPython) + " -c 'import jsonschema'").status != 0)
    GTEST_SKIP() << "python3-jsonschema is missing: the schema is not checked";
  const auto v = test::run_command(std::string(kPython) + " " + ULPSCOPE_SCHEMA_VALIDATOR + " " +
                                   ULPSCOPE_REPORT_SCHEMA + " " + json.string());
  EXPECT_NE(v.output.find("valid: " + json.string() + "\n"), std::string::npos) << v.output;
}

TEST(AllreduceCli, AGateReRunsTheBaselinesFamily) {
  test::ScratchDir dir;
  const auto base = dir / "base.json";
  auto r = run("--op allreduce_sum --dtype fp16 --ranks 3 --n 200 --dist uniform --format json --out " + base.string());
  ASSERT_EQ(r.status, 0) << r.output;
  r = run("--baseline " + base.string() + " --gate --format json --out " + (dir / "again.json").string());
  EXPECT_EQ(r.status, 0) << r.output;
  const auto a = nlohmann::json::parse(test::read_text(base)), b = nlohmann::json::parse(test::read_text(dir / "again.json"));
  ASSERT_EQ(a["cells"].size(), b["cells"].size());
  for (std::size_t i = 0; i < a["cells"].size(); ++i)
    EXPECT_EQ(a["cells"][i]["allreduce"]["digest"], b["cells"][i]["allreduce"]["digest"]);
}

TEST(AllreduceCli, BadRequestsExit2InOneLine) {
  struct Bad {
    std::string args, says;
  };
  const std::vector<Bad> cases = {
      {"--op allreduce_sum --ranks 0", "bad --ranks '0'"},
      {"--op allreduce_sum --ranks 100000", "bad --ranks '100000'"},
      {"--op allreduce_sum --algo butterfly", "unknown --algo 'butterfly'"},
      {"--op allreduce_sum --proto ll256", "unknown --proto 'll256'"},
      {"--op allreduce_sum --method kahan", "unknown --method 'kahan'"},
      {"--op allreduce_sum --channels 65", "bad --channels '65'"},
      {"--op allreduce_sum,sum", "run alone"},
      {"--op sum --ranks 4", "belong to --op allreduce_sum"},
      {"--op allreduce_sum --accumulator fp32", "--accumulator"},
      {"--op allreduce_sum --dist sorted_ascending", "not elementwise"},
      {"--op allreduce_sum --dtype fp8_e4m3 --out-dtype fp32", "--out-dtype"},
  };
  for (const Bad& b : cases) {
    const auto r = run(b.args + " --n 64");
    EXPECT_EQ(r.status, 2) << b.args << ": " << r.output;
    EXPECT_EQ(lines(r.output), 1u) << b.args << ": " << r.output;
    EXPECT_NE(r.output.find(b.says), std::string::npos) << b.args << ": " << r.output;
  }
}

TEST(AllreduceCli, CudaWithoutEnoughGpusExits2SayingWhy) {
  // Without NCCL in the build there is no GPU to count; with it, 4096 ranks
  // are more than any machine's GPUs, and nccl_unavailable says how many it has.
  const auto r = test::run_command(kTool + " -q --backend cuda --op allreduce_sum --ranks 4096 --n 64");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  EXPECT_EQ(r.output.rfind("accuracy_report: --backend cuda: ", 0), 0u) << r.output;
}

}  // namespace
}  // namespace ulpscope
