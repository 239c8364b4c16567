// Issue 41 through the real program, on the CPU backend: --eps reaches the
// settings, the header and the kernels, and is refused unless finite and
// > 0 (item 4); every (op, n, axis) that cannot run is listed once as "not
// run" with its reason, in every format that has a header (item 5).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_files.hpp"

namespace ulpscope {
namespace {

const std::string kTool = ULPSCOPE_ACCURACY_REPORT;

test::CommandResult run(const std::string& args) { return test::run_command(kTool + " --backend cpu -q " + args); }

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

const std::string kRms = "--dtype fp32 --op rms --accumulator fp64 --shape serial --dist normal --n 64 --seed 1 ";

TEST(MatrixCli, EpsReachesTheSettingsTheHeaderAndTheResult) {
  test::ScratchDir dir;
  const std::string with = (dir / "eps.json").string(), without = (dir / "default.json").string();
  auto r = run(kRms + "--eps 1e-5 --format json --out " + with);
  ASSERT_EQ(r.status, 0) << r.output;
  r = run(kRms + "--format json --out " + without);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto a = nlohmann::json::parse(test::read_text(with)), b = nlohmann::json::parse(test::read_text(without));
  EXPECT_EQ(a["header"]["settings"]["eps"].get<double>(), 1e-5);
  EXPECT_EQ(b["header"]["settings"]["eps"].get<double>(), 1e-6);
  // sqrt(Q/n + eps) of 64 normal values: eps 1e-5 instead of 1e-6 moves it by
  // about 4.5e-6 relative, some 70 fp32 ulps: the kernel and the reference both saw it.
  ASSERT_EQ(a["cells"].size(), 1u);
  ASSERT_EQ(b["cells"].size(), 1u);
  EXPECT_NE(a["cells"][0]["reference"]["rounded"], b["cells"][0]["reference"]["rounded"]);
  EXPECT_NE(a["cells"][0]["result"], b["cells"][0]["result"]);
  EXPECT_TRUE(a["cells"][0]["correctly_rounded"].get<bool>());
  // The terminal table and the Markdown summary say it in their header.
  r = run(kRms + "--eps 1e-5 --format table");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("eps 1e-05"), std::string::npos) << r.output;
  r = run(kRms + "--eps 1e-5 --format md");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("eps 1e-05"), std::string::npos) << r.output;
}

TEST(MatrixCli, EpsThatIsNotAFiniteNumberAboveZeroExits2InOneLine) {
  for (const std::string bad : {"-1", "nan", "0", "inf"}) {
    const auto r = run(kRms + "--eps " + bad);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
    EXPECT_EQ(r.output.rfind("accuracy_report: bad --eps", 0), 0u) << bad << ": " << r.output;
    EXPECT_EQ(occurrences(r.output, "\n"), 1u) << bad << ": " << r.output;
  }
}

const std::string kGaps = "--dtype fp32 --op sum,rmsnorm --axis inner --accumulator fp32 --shape tree "
                          "--dist normal,uniform --seed 1,2 --n 4096,4097 ";

TEST(MatrixCli, WhatCannotRunIsListedOnceInEveryFormat) {
  test::ScratchDir dir;
  const std::string json = (dir / "gaps.json").string();
  auto r = run(kGaps + "--format json --out " + json);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = nlohmann::json::parse(test::read_text(json));
  std::vector<std::pair<std::string, std::string>> listed;
  for (const auto& u : doc["header"]["unavailable"]) listed.emplace_back(u["shape"], u["reason"]);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"sum n=4097 axis=inner", "not a whole number of rows of 4096"},
      {"rmsnorm n=4097 axis=inner", "not a whole number of rows of 4096"}};
  EXPECT_EQ(listed, expected);  // once each, not once per distribution and seed
  for (const auto& cell : doc["cells"]) EXPECT_EQ(cell["n"], 4096) << cell.dump();
  EXPECT_EQ(doc["cells"].size(), 2u * 2 * 2);  // ops x distributions x seeds at n = 4096

  for (const std::string format : {"table", "md", "html"}) {
    r = run(kGaps + "--format " + format);
    EXPECT_EQ(r.status, 0) << format << ": " << r.output;
    EXPECT_EQ(occurrences(r.output, "rmsnorm n=4097 axis=inner"), 1u) << format << ": " << r.output;
    EXPECT_EQ(occurrences(r.output, "sum n=4097 axis=inner"), 1u) << format;
    EXPECT_EQ(occurrences(r.output, "not a whole number of rows of 4096"), 2u) << format;
  }
}

TEST(MatrixCli, ARunOfOnlyGapsNamesThemWhenItMeasuresNothing) {
  const auto r = run("--dtype fp16 --accumulator fp32 --dist normal --op rmsnorm --n 4097 --format json");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("measured nothing"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rmsnorm n=4097 axis=inner: not a whole number of rows of 4096"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace ulpscope
