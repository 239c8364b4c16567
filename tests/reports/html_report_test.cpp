// The HTML report is self-contained, and every plot draws in a real browser
// (headless Chromium, Debian's chromium package).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "reports/cell_facts.hpp"
#include "reports/html_report.hpp"
#include "reports/report_format.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

// The attributes the page's plugin left on a canvas, read from the DOM that
// Chromium dumped after running the scripts.
struct CanvasState {
  bool found = false, rendered = false;
  long points = -1, ink = -1;
};

// The attribute's value inside one tag, or "" (std::regex recurses too deeply
// on a DOM that holds all of Chart.js).
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto at = tag.find(key);
  if (at == std::string::npos) return "";
  const auto begin = at + key.size();
  return tag.substr(begin, tag.find('"', begin) - begin);
}

CanvasState canvas_state(const std::string& dom, const std::string& id) {
  CanvasState s;
  const auto at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return s;
  const auto open = dom.rfind("<canvas", at);
  const auto close = dom.find('>', at);
  if (open == std::string::npos || close == std::string::npos) return s;
  const std::string tag = dom.substr(open, close - open);
  s.found = true;
  s.rendered = attribute(tag, "data-rendered") == "1";
  if (const auto p = attribute(tag, "data-points"); !p.empty()) s.points = std::stol(p);
  if (const auto k = attribute(tag, "data-ink"); !k.empty()) s.ink = std::stol(k);
  return s;
}

std::string render_in_chromium(const std::filesystem::path& html, const test::ScratchDir& dir) {
  const std::string cmd = std::string("timeout 120 ") + kChromium +
                          " --headless --no-sandbox --disable-gpu --disable-background-networking"
                          " --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage"
                          " --user-data-dir=" + (dir / "profile").string() +
                          " --virtual-time-budget=5000 --dump-dom file://" + html.string() + " > " +
                          (dir / "dom.html").string();
  const test::CommandResult r = test::run_command(cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.output;
  return test::read_text(dir / "dom.html");
}

// The points each plot must show, counted here from the cells, not from the page.
struct Expected {
  long error_vs_n = 0, error_vs_condition = 0, throughput_vs_error = 0;
};
Expected expected_points(const Report& r) {
  Expected e;
  for (const Cell& c : r.cells) {
    if (!c.ulp_error) continue;
    if (c.n > 0) ++e.error_vs_n;
    if (c.condition && *c.condition > 0) ++e.error_vs_condition;
    if (c.gbps) ++e.throughput_vs_error;
  }
  return e;
}

TEST(HtmlReport, IsSelfContained) {
  std::ostringstream out;
  write_html(test::sample_report(), out);
  const std::string html = out.str();
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("Chart.js"), std::string::npos);
  for (const char* id : kHtmlPlotIds) EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  // Text from cells is escaped, and no cell can end a <script> early.
  EXPECT_NE(html.find("&lt;b&gt;|x|&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>|x|</b>"), std::string::npos);
  EXPECT_NE(html.find("<th>not run</th><td>cub_deterministic: needs CCCL &gt;= 3.1</td>"), std::string::npos);
}

TEST(HtmlReport, MissingChartJsIsOneClearError) {
  test::ScratchDir dir;
  ::setenv("ULPSCOPE_CHART_JS", (dir / "absent.js").c_str(), 1);
  std::ostringstream out;
  try {
    write_html(test::sample_report(), out);
    ADD_FAILURE() << "wrote HTML without Chart.js";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("libjs-chart.js"), std::string::npos) << e.what();
  }
  ::unsetenv("ULPSCOPE_CHART_JS");
  EXPECT_TRUE(out.str().empty());
}

class HtmlInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kChromium))
      GTEST_SKIP() << kChromium << " is missing: install Debian's chromium package to render the HTML report";
  }
};

TEST_F(HtmlInChromium, EveryPlotDraws) {
  test::ScratchDir dir;
  const Report report = test::sample_report();
  const auto path = dir / "report.html";
  write_report_file(report, ReportFormat::html, path);
  const std::string dom = render_in_chromium(path, dir);
  const Expected e = expected_points(report);
  ASSERT_GT(e.error_vs_n, 0);
  ASSERT_GT(e.error_vs_condition, 0);
  ASSERT_GT(e.throughput_vs_error, 0);
  const std::pair<const char*, long> plots[] = {
      {kHtmlPlotIds[0], e.error_vs_n}, {kHtmlPlotIds[1], e.error_vs_condition}, {kHtmlPlotIds[2], e.throughput_vs_error}};
  for (const auto& [id, points] : plots) {
    const CanvasState s = canvas_state(dom, id);
    ASSERT_TRUE(s.found) << id;
    EXPECT_TRUE(s.rendered) << id << " was not drawn";
    EXPECT_EQ(s.points, points) << id;
    EXPECT_GT(s.ink, 0) << id << ": no pixel in a series colour";
  }
}

// A CPU-backend report has no throughput: the plot still draws (empty, with a
// note) and the page has no script error that stops the other plots.
TEST_F(HtmlInChromium, CpuReportWithoutThroughputDraws) {
  test::ScratchDir dir;
  Report report = test::sample_report();
  report.header.backend = "cpu";
  for (Cell& c : report.cells) c.gbps.reset();
  const auto path = dir / "report.html";
  write_report_file(report, ReportFormat::html, path);
  const std::string dom = render_in_chromium(path, dir);
  const CanvasState n = canvas_state(dom, kHtmlPlotIds[0]);
  EXPECT_TRUE(n.rendered);
  EXPECT_EQ(n.points, expected_points(report).error_vs_n);
  EXPECT_GT(n.ink, 0);
  const CanvasState t = canvas_state(dom, kHtmlPlotIds[2]);
  EXPECT_TRUE(t.rendered);
  EXPECT_EQ(t.points, 0);
  EXPECT_EQ(t.ink, 0);
  EXPECT_NE(dom.find("no defined ulp error or no throughput measured"), std::string::npos);
}

}  // namespace
}  // namespace ulpscope
