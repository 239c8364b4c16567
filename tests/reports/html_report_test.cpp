// The HTML report is self-contained, its four views hold data computed from
// the cells, every plot draws in a real browser (headless Chromium, Debian's
// chromium package), and its cell table sorts and filters there.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "reports/cell_facts.hpp"
#include "reports/html_report.hpp"
#include "reports/report_format.hpp"
#include "reports/verdict.hpp"
#include "sample_report.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

std::string html_of(const Report& r) {
  std::ostringstream out;
  write_html(r, out);
  return out.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The text of one section of the page, by id.
std::string section(const std::string& html, const std::string& id) {
  const auto begin = html.find("<section id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  return html.substr(begin, html.find("</section>", begin) - begin);
}

// The attribute's value inside one tag, or "" (std::regex recurses too deeply
// on a DOM that holds all of Chart.js).
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto at = tag.find(key);
  if (at == std::string::npos) return "";
  const auto begin = at + key.size();
  return tag.substr(begin, tag.find('"', begin) - begin);
}

// What the page's plugin left on each canvas of a view, read from the DOM
// that Chromium dumped after running the scripts.
struct CanvasState {
  bool rendered = false;
  long points = -1, front = -1, ink = -1;
};
std::vector<CanvasState> canvases(const std::string& dom, const std::string& view) {
  std::vector<CanvasState> out;
  for (auto at = dom.find("<canvas"); at != std::string::npos; at = dom.find("<canvas", at + 1)) {
    const std::string tag = dom.substr(at, dom.find('>', at) - at);
    if (attribute(tag, "data-view") != view) continue;
    CanvasState s;
    s.rendered = attribute(tag, "data-rendered") == "1";
    if (const auto p = attribute(tag, "data-points"); !p.empty()) s.points = std::stol(p);
    if (const auto f = attribute(tag, "data-front"); !f.empty()) s.front = std::stol(f);
    if (const auto k = attribute(tag, "data-ink"); !k.empty()) s.ink = std::stol(k);
    out.push_back(s);
  }
  return out;
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

// What each view must show, counted here from the cells, not from the page.
struct Expected {
  std::size_t error_vs_n = 0;  // (op, dtype, accumulator, n) with a defined error, n > 0
  std::size_t kernels_with_throughput = 0;  // (op, dtype, accumulator, shape) with GB/s and a defined error
  std::size_t heat_values = 0;              // (dtype, op, accumulator, distribution) with a defined error
  std::size_t determinism_squares = 0;      // (dtype, accumulator, shape, op)
};
Expected expected(const Report& r) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::set<Key> evn, tput, heat, det, kernels_without;
  for (const Cell& c : r.cells) {
    det.insert({c.dtype, c.accumulator, c.shape, c.op});
    if (!c.ulp_error) continue;
    if (c.n > 0) evn.insert({c.op, c.dtype, c.accumulator, std::to_string(c.n)});
    heat.insert({c.dtype, c.op, c.accumulator, c.distribution});
    if (c.gbps) tput.insert({c.op, c.dtype, c.accumulator, c.shape});
  }
  return {evn.size(), tput.size(), heat.size(), det.size()};
}

TEST(HtmlReport, IsSelfContained) {
  const std::string html = html_of(test::sample_report());
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("Chart.js"), std::string::npos);
  for (const char* id : kHtmlViewIds) EXPECT_NE(html.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
  // Text from cells is escaped, and no cell can end a <script> early.
  EXPECT_NE(html.find("&lt;b&gt;|x|&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>|x|</b>"), std::string::npos);
  EXPECT_NE(html.find("<th>not run</th><td>cub_deterministic: needs CCCL &gt;= 3.1</td>"), std::string::npos);
}

// The settings read as a key/value table, not as JSON.
TEST(HtmlReport, SettingsAreAKeyValueTable) {
  const std::string html = html_of(test::sample_report());
  const std::string run = section(html, "run");
  EXPECT_NE(run.find("<tr><th>dtypes</th><td>fp16, bf16</td></tr>"), std::string::npos) << run;
  EXPECT_NE(run.find("<tr><th>sizes</th><td>1024</td></tr>"), std::string::npos) << run;
  EXPECT_NE(run.find("<tr><th>runs</th><td>5</td></tr>"), std::string::npos) << run;
  EXPECT_EQ(run.find("{&quot;dtypes"), std::string::npos) << run;
}

TEST(HtmlReport, OpensWithTheVerdictOneRowPerKernel) {
  const Report r = test::sample_report();
  const std::string html = html_of(r);
  const std::string verdict = section(html, "verdict");
  ASSERT_FALSE(verdict.empty());
  EXPECT_LT(html.find("id=\"verdict\""), html.find("id=\"view-error-vs-n\"")) << "the verdict comes first";
  const std::vector<Verdict> v = verdicts(r.cells);
  ASSERT_FALSE(v.empty());
  std::size_t rows = 0;
  for (std::size_t at = verdict.find("<tr><td>"); at != std::string::npos; at = verdict.find("<tr><td>", at + 1)) ++rows;
  EXPECT_EQ(rows, v.size());
  // Each row says what the verdict module says, in the same words.
  for (const Verdict& k : v) {
    EXPECT_NE(verdict.find(worst_ulp_text(k.realistic)), std::string::npos) << k.op << " " << k.accumulator;
    EXPECT_NE(verdict.find(correctly_rounded_text(k)), std::string::npos) << k.op << " " << k.accumulator;
  }
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

struct ParetoCase {
  const char* name;
  std::vector<KernelPoint> points;
  std::vector<std::size_t> front;  // by increasing GB/s
};
const ParetoCase kPareto[] = {
    {"one_point", {{100, 3}}, {0}},
    {"faster_and_more_accurate_dominates", {{100, 3}, {200, 1}}, {1}},
    {"a_trade_off_keeps_both", {{100, 0.5}, {200, 8}}, {0, 1}},
    {"equal_speed_worse_error_is_dominated", {{900, 0.5}, {900, 0}, {1200, 2048}, {900, 1.5}}, {1, 2}},
    {"equal_points_are_all_on_the_front", {{100, 1}, {100, 1}, {50, 2}}, {0, 1}},
    {"three_steps", {{10, 0.1}, {20, 1}, {30, 10}, {15, 5}, {25, 20}}, {0, 1, 2}},
};
class ParetoFront : public ::testing::TestWithParam<ParetoCase> {};
TEST_P(ParetoFront, KeepsTheUndominated) { EXPECT_EQ(pareto_front(GetParam().points), GetParam().front); }
INSTANTIATE_TEST_SUITE_P(Kernels, ParetoFront, ::testing::ValuesIn(kPareto),
                         [](const auto& info) { return std::string(info.param.name); });

// The heat map and the determinism grid are HTML, filled from the cells.
TEST(HtmlReport, HeatMapAndDeterminismGridHoldTheCells) {
  const Report report = test::sample_report();
  const Expected e = expected(report);
  const std::string html = html_of(report);
  const std::string heat = section(html, kHtmlViewIds[1]);
  EXPECT_EQ(count(heat, "class=\"heat-cell h") - count(heat, "class=\"heat-cell hna") -
                count(heat, "class=\"heat-cell hfail"),
            e.heat_values)
      << heat;
  // The naive fp16 sum of a constant input: 2048 ulp, in the "<= 10^6" bucket.
  EXPECT_NE(heat.find("class=\"heat-cell h4\" data-v=\"2048\""), std::string::npos) << heat;
  // The fp8 cell without an ulp error, and the failed cub cell.
  EXPECT_EQ(count(heat, "class=\"heat-cell hna\""), 1u);
  EXPECT_EQ(count(heat, "class=\"heat-cell hfail\""), 1u);

  const std::string det = section(html, kHtmlViewIds[3]);
  EXPECT_EQ(count(det, "<td class=\"det-cell\">"), e.determinism_squares) << det;
  // The atomic fp32 sum: 3 distinct results over 5 runs, 2 over its orders.
  EXPECT_NE(det.find("title=\"run to run: different bits in 1 of 1 cells\""), std::string::npos) << det;
  EXPECT_NE(det.find("title=\"input orders: different bits in 1 of 1 cells\""), std::string::npos) << det;
}

class HtmlInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kChromium))
      GTEST_SKIP() << kChromium << " is missing: install Debian's chromium package to render the HTML report";
  }
};

// The four views, each with data: error against n and accuracy against
// throughput drawn by Chart.js (every point laid out, ink in a series
// colour, the Pareto front marked), the heat map and the determinism grid.
TEST_F(HtmlInChromium, TheFourViewsShowData) {
  test::ScratchDir dir;
  const Report report = test::sample_report();
  const Expected e = expected(report);
  ASSERT_GT(e.error_vs_n, 0u);
  ASSERT_GT(e.kernels_with_throughput, 0u);
  const auto path = dir / "report.html";
  write_report_file(report, ReportFormat::html, path);
  const std::string dom = render_in_chromium(path, dir);

  const auto evn = canvases(dom, "error-vs-n");
  ASSERT_FALSE(evn.empty());
  long points = 0;
  for (const CanvasState& s : evn) {
    EXPECT_TRUE(s.rendered);
    EXPECT_GT(s.points, 0);
    EXPECT_GT(s.ink, 0) << "no pixel in a series colour";
    points += s.points;
  }
  EXPECT_EQ(points, static_cast<long>(e.error_vs_n));

  const auto tput = canvases(dom, "accuracy-vs-throughput");
  ASSERT_FALSE(tput.empty());
  long kernels = 0, front = 0;
  for (const CanvasState& s : tput) {
    EXPECT_TRUE(s.rendered);
    EXPECT_GT(s.ink, 0);
    EXPECT_GE(s.front, 1);
    kernels += s.points;
    front += s.front;
  }
  EXPECT_EQ(kernels, static_cast<long>(e.kernels_with_throughput));
  // sum fp16: exact tree (900 GB/s, 0 ulp) and naive tree (1200 GB/s, 2048 ulp);
  // every other chart holds one kernel.
  EXPECT_EQ(front, static_cast<long>(tput.size()) + 1);

  EXPECT_GT(count(section(dom, kHtmlViewIds[1]), "class=\"heat-cell h"), 0u);
  EXPECT_EQ(count(section(dom, kHtmlViewIds[3]), "<td class=\"det-cell\">"), e.determinism_squares);
  EXPECT_EQ(dom.find("class=\"empty-view\">Nothing"), std::string::npos);
}

// A CPU-backend report has no throughput: that view says why instead of
// drawing an empty chart, and the other plots still draw.
TEST_F(HtmlInChromium, CpuReportSaysWhyThereIsNoThroughput) {
  test::ScratchDir dir;
  Report report = test::sample_report();
  report.header.backend = "cpu";
  for (Cell& c : report.cells) c.gbps.reset();
  const auto path = dir / "report.html";
  write_report_file(report, ReportFormat::html, path);
  const std::string dom = render_in_chromium(path, dir);
  long points = 0;
  for (const CanvasState& s : canvases(dom, "error-vs-n")) {
    EXPECT_TRUE(s.rendered);
    EXPECT_GT(s.ink, 0);
    points += s.points;
  }
  EXPECT_EQ(points, static_cast<long>(expected(report).error_vs_n));
  EXPECT_TRUE(canvases(dom, "accuracy-vs-throughput").empty());
  EXPECT_NE(section(dom, kHtmlViewIds[2]).find("Throughput is not measured on the CPU backend"), std::string::npos);
}

// The page driven as a reader would, by a script appended after the page's
// own: Chromium's DOM after it ran.
std::string drive_in_chromium(const Report& report, const std::string& script, const test::ScratchDir& dir) {
  std::string html = html_of(report);
  html.insert(html.rfind("</body>"), "<script>" + script + "</script>");
  test::write_text(dir / "driven.html", html);
  return render_in_chromium(dir / "driven.html", dir);
}

// Choosing a distribution redraws error against n; a chart with nothing on
// it says so instead of drawing an empty frame, and the others still draw.
TEST_F(HtmlInChromium, ErrorAgainstNFollowsTheChosenDistribution) {
  test::ScratchDir dir;
  const Report report = test::sample_report();
  const std::string dom = drive_in_chromium(report, R"(
    const pick = document.getElementById('error-vs-n-dist');
    pick.value = 'constant';
    pick.dispatchEvent(new Event('change'));)", dir);
  // Only the naive fp16 sum ran on a constant input.
  const auto states = canvases(dom, "error-vs-n");
  long points = 0, inked = 0;
  for (const CanvasState& s : states) {
    points += s.points;
    inked += s.ink > 0;
  }
  EXPECT_EQ(points, 1);
  EXPECT_EQ(inked, 1);
  EXPECT_EQ(count(dom, "has a defined ulp error.</p>"), states.size() - 1) << section(dom, kHtmlViewIds[0]);
  EXPECT_NE(dom.find("No cell of mean_var · fp32 on constant has a defined ulp error."), std::string::npos);
  // The plots after it still drew.
  for (const CanvasState& s : canvases(dom, "accuracy-vs-throughput")) EXPECT_GT(s.ink, 0);
}

// The cell table, driven as a reader would: "max ulp" clicked twice (largest
// first), then "sum" typed in the op filter.
TEST_F(HtmlInChromium, CellTableSortsAndFilters) {
  test::ScratchDir dir;
  const Report report = test::sample_report();
  const std::string dom = drive_in_chromium(report, R"(
    const heads = document.querySelectorAll('#cells thead tr:first-child th');
    const ulp = Array.from(heads).find(th => th.textContent === 'max ulp');
    ulp.click(); ulp.click();
    const box = document.querySelector('#cells thead tr.filters input');
    box.value = 'sum';
    box.dispatchEvent(new Event('input'));)", dir);

  // The rows left visible, in page order: their op and max ulp text.
  std::vector<std::pair<std::string, std::string>> visible;
  const auto body = dom.find("<tbody>", dom.find("id=\"cells\""));
  ASSERT_NE(body, std::string::npos);
  const auto end = dom.find("</tbody>", body);
  for (auto at = dom.find("<tr", body); at < end; at = dom.find("<tr", at + 1)) {
    const std::string row = dom.substr(at, dom.find("</tr>", at) - at);
    if (row.find("display: none") != std::string::npos) continue;
    std::vector<std::string> texts;
    for (auto td = row.find("<td"); td != std::string::npos; td = row.find("<td", td + 1)) {
      const auto open = row.find('>', td) + 1;
      texts.push_back(row.substr(open, row.find("</td>", open) - open));
    }
    ASSERT_GT(texts.size(), 6u) << row;
    visible.emplace_back(texts[0], texts[6]);
  }
  std::vector<std::pair<std::string, std::string>> want;  // the sum cells, largest error first, n/a last
  for (const std::string& ulp : {"2.05e+03", "1.5", "0.5", "0", "n/a"}) want.emplace_back("sum", ulp);
  EXPECT_EQ(visible, want);
  EXPECT_NE(dom.find("Showing <span id=\"cells-shown\">5</span> of 8 cells"), std::string::npos);
}

}  // namespace
}  // namespace ulpscope
