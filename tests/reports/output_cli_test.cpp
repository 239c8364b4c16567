// The outputs through the real program, on the CPU backend: several formats
// in one run, --out's name choosing the format or refused when it
// contradicts --format, and the default text report of one format: the
// verdict first, within 120 columns and a few hundred lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_files.hpp"

namespace ulpscope {
namespace {

const std::string kTool = ULPSCOPE_ACCURACY_REPORT;

test::CommandResult run(const std::string& args) { return test::run_command(kTool + " --backend cpu -q " + args); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

const std::string kSmall = "--dtype fp16 --op sum --accumulator fp32,exact --shape tree --dist normal,near_max "
                           "--n 1023 --seed 1 ";

TEST(OutputCli, SeveralFormatsInOneRunBesideTheTextOnStandardOutput) {
  test::ScratchDir dir;
  const auto json = dir / "r.json", md = dir / "r.md", html = dir / "r.html", csv = dir / "r.csv";
  const auto r = run(kSmall + "--json " + json.string() + " --md " + md.string() + " --html " + html.string() +
                     " --csv " + csv.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Verdict: one line per kernel"), std::string::npos) << r.output;
  const auto doc = nlohmann::json::parse(test::read_text(json));
  EXPECT_EQ(doc["cells"].size(), 4u);
  EXPECT_EQ(doc["verdicts"].size(), 2u);
  EXPECT_EQ(test::read_text(md).rfind("### ulpscope accuracy report", 0), 0u);
  EXPECT_NE(test::read_text(md).find("#### Verdict"), std::string::npos);
  EXPECT_NE(test::read_text(html).find("<html"), std::string::npos);
  EXPECT_EQ(lines_of(test::read_text(csv)).size(), 1u + 4);  // a header and the cells
  // With --out, the text goes there and standard output stays empty.
  const auto txt = dir / "r.txt";
  const auto quiet = run(kSmall + "--out " + txt.string() + " --json " + json.string());
  ASSERT_EQ(quiet.status, 0) << quiet.output;
  EXPECT_EQ(quiet.output, "");
  EXPECT_NE(test::read_text(txt).find("Verdict: one line per kernel"), std::string::npos);
}

TEST(OutputCli, OutNamePicksTheFormat) {
  test::ScratchDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"r.json", "{"}, {"r.md", "### ulpscope"}, {"r.csv", "op,"}, {"r.txt", "ulpscope "}};
  for (const auto& [name, start] : cases) {
    const auto path = dir / name;
    const auto r = run(kSmall + "--out " + path.string());
    ASSERT_EQ(r.status, 0) << name << ": " << r.output;
    EXPECT_EQ(test::read_text(path).rfind(start, 0), 0u) << name << ": " << test::read_text(path).substr(0, 80);
  }
}

TEST(OutputCli, ContradictionsExit2InOneLineAndWriteNothing) {
  test::ScratchDir dir;
  const std::string json = (dir / "r.json").string();
  const std::string contradictions[] = {
      "--out " + json + " --format md",
      "--json " + (dir / "r.md").string(),
      "--out " + json + " --json " + json,  // one file, two outputs
  };
  for (const std::string& args : contradictions) {
    const auto r = run(kSmall + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_EQ(r.output.rfind("accuracy_report: ", 0), 0u) << r.output;
    EXPECT_EQ(lines_of(r.output).size(), 1u) << r.output;
    EXPECT_FALSE(std::filesystem::exists(json)) << args;
    EXPECT_FALSE(std::filesystem::exists(dir / "r.md")) << args;
  }
}

// The default text report of one format on the CPU models: the verdict first,
// every line within 120 columns, a few hundred lines, one verdict row per
// kernel of the JSON report.
TEST(OutputCli, DefaultTextReportOfOneFormatIsAShortVerdict) {
  test::ScratchDir dir;
  const std::string json = (dir / "fp16.json").string();
  const auto r = test::run_command(kTool + " --dtype fp16 --backend cpu -q --json " + json + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output.substr(0, 2000);
  const auto lines = lines_of(r.output);
  EXPECT_LE(lines.size(), 400u);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 120u) << line;
  std::size_t first_text = 1;
  // After the header: the "not run" lines (wrapped ones go on indented).
  while (first_text < lines.size() && (lines[first_text].empty() || lines[first_text].rfind("not run:", 0) == 0 ||
                                       lines[first_text].rfind("  ", 0) == 0))
    ++first_text;
  ASSERT_LT(first_text, lines.size());
  EXPECT_EQ(lines[first_text].rfind("Verdict: one line per kernel", 0), 0u) << lines[first_text];
  const auto doc = nlohmann::json::parse(test::read_text(json));
  std::size_t rows = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i)
    if (lines[i].find(" | fp16") != std::string::npos) {
      // A group: its heading, its column headings, its rows up to the blank line.
      for (std::size_t j = i + 2; j < lines.size() && !lines[j].empty(); ++j) ++rows;
    }
  EXPECT_EQ(rows, doc["verdicts"].size());
  EXPECT_GT(doc["cells"].size(), 5 * rows);  // each row sums up many cells
  EXPECT_EQ(r.output.find("Every cell."), std::string::npos);
}

}  // namespace
}  // namespace ulpscope
