#include "reports/allreduce_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "reports/html_views.hpp"

namespace ulpscope {
namespace {

bool is_allreduce(const Cell& c) { return c.allreduce.has_value() && c.status == "ok"; }

// The worst error of each (line, P) over the chart's other cells
// (distributions, sizes, seeds, protocols); a missing error (a non-finite
// mismatch) makes the point undefined.
struct Worst {
  std::optional<double> value;
  bool undefined = false;
  void add(const std::optional<double>& e) {
    if (!e) undefined = true;
    else value = std::max(value.value_or(0.0), *e);
  }
};

constexpr const char* kAllreduceScript = R"(
(function () {
  const data = JSON.parse(document.getElementById('ulpscope-allreduce-data').textContent);
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2'];
  const styles = ['circle', 'triangle', 'rect', 'rectRot', 'star', 'crossRot', 'cross'];
  for (const chart of data.charts) {
    const sets = chart.series.map((s, k) => ({
      label: s.name,
      data: s.points.map(p => ({ x: p[0], y: p[1] === null ? null : Math.max(p[1], data.floor) })),
      showLine: true, spanGaps: false, borderWidth: 1.5, pointRadius: 4, pointStyle: styles[k % styles.length],
      backgroundColor: 'rgba(0,0,0,0)', borderColor: palette[k % palette.length]
    }));
    new Chart(document.getElementById(chart.id), { type: 'scatter', data: { datasets: sets },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
        scales: { x: { type: 'logarithmic', title: { display: true, text: 'ranks P' } },
                  y: { type: 'logarithmic', title: { display: true, text: 'max ulp error over the elements' } } } } });
  }
})();
)";

}  // namespace

std::string allreduce_section(const std::vector<Cell>& cells) {
  using Chart = std::pair<std::string, std::string>;  // op, dtype
  std::vector<Chart> order;
  std::map<Chart, std::map<std::string, std::map<int, Worst>>> worst;  // line "method algorithm" -> P
  for (const Cell& c : cells) {
    if (!is_allreduce(c)) continue;
    const Chart k{c.op, c.dtype};
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    worst[k][c.allreduce->method + " " + c.allreduce->algorithm][c.allreduce->ranks].add(c.allreduce->max_ulp_error);
  }
  if (order.empty()) return "";
  nlohmann::json charts = nlohmann::json::array();
  std::string plots = "<div class=\"plots\">\n";
  int id = 0;
  for (const Chart& k : order) {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& [line, by_p] : worst[k]) {
      nlohmann::json points = nlohmann::json::array();
      for (const auto& [p, w] : by_p)
        points.push_back({p, w.value && !w.undefined ? nlohmann::json(*w.value) : nlohmann::json()});
      series.push_back({{"name", line}, {"points", points}});
    }
    const std::string chart_id = fmt::format("allreduce-plot-{}", id++);
    charts.push_back({{"id", chart_id}, {"series", series}});
    plots += fmt::format(
        "<div><div class=\"plot-title\">{} {}</div><div class=\"plot-box\"><canvas id=\"{}\" "
        "class=\"ulpscope-plot\" data-view=\"allreduce-error\"></canvas></div></div>\n",
        html::html_text(k.first), html::html_text(k.second), chart_id);
  }
  plots += "</div>\n";
  std::string json = nlohmann::json({{"floor", kAllreduceUlpFloor}, {"charts", charts}}).dump();
  for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 2)) json.insert(at + 1, "\\");
  return fmt::format(
      "<section id=\"view-allreduce-error\"><h2>All-reduce: error against P</h2>\n{}"
      "<p class=\"note\">One line per method and algorithm: the largest ulp error over the n output elements at "
      "each number of ranks P, worst over the chart's protocols, distributions, sizes and seeds. Errors below {} "
      "ulp, 0 included, are drawn at {}; a gap is a P without a defined error.</p>\n"
      "<script type=\"application/json\" id=\"ulpscope-allreduce-data\">{}</script>\n<script>{}</script>"
      "</section>\n",
      plots, kAllreduceUlpFloor, kAllreduceUlpFloor, json, kAllreduceScript);
}

std::string allreduce_markdown(const std::vector<Cell>& cells) {
  using Line = std::tuple<std::string, std::string, std::string, std::string>;  // op, dtype, method, shape
  std::vector<Line> lines;
  std::set<int> ranks;
  std::map<Line, std::map<int, Worst>> worst;
  // A problem (op, dtype, distribution, n, seed, P) -> the digests of its cells by method.
  using Problem = std::tuple<std::string, std::string, std::string, std::int64_t, std::uint64_t, int>;
  std::map<Problem, std::map<std::string, std::set<std::string>>> digests;
  std::map<Problem, std::size_t> cell_count;
  for (const Cell& c : cells) {
    if (!is_allreduce(c)) continue;
    const Line l{c.op, c.dtype, c.allreduce->method, c.allreduce->algorithm + "/" + c.allreduce->protocol};
    if (std::find(lines.begin(), lines.end(), l) == lines.end()) lines.push_back(l);
    ranks.insert(c.allreduce->ranks);
    worst[l][c.allreduce->ranks].add(c.allreduce->max_ulp_error);
    const Problem p{c.op, c.dtype, c.distribution, c.n, c.seed, c.allreduce->ranks};
    digests[p][c.allreduce->method].insert(c.allreduce->digest);
    ++cell_count[p];
  }
  if (lines.empty()) return "";
  std::string md = "#### All-reduce: max ULP error over the elements, by P\n\n| op | format | method | shape |";
  for (int p : ranks) md += fmt::format(" P={} |", p);
  md += "\n| --- | --- | --- | --- |";
  for (std::size_t i = 0; i < ranks.size(); ++i) md += " ---: |";
  md += "\n";
  for (const Line& l : lines) {
    const auto& [op, dtype, method, shape] = l;
    md += fmt::format("| {} | {} | {} | {} |", op, dtype, method, shape);
    for (int p : ranks) {
      const auto it = worst[l].find(p);
      if (it == worst[l].end()) md += " |";
      else if (it->second.undefined || !it->second.value) md += " inf |";
      else md += fmt::format(" {:.3g} |", *it->second.value);
    }
    md += "\n";
  }
  md += "\n#### All-reduce: distinct outputs of each problem across algorithms and protocols\n\n"
        "| op | format | distribution | n | seed | P | cells | distinct, by method |\n"
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const auto& [p, by_method] : digests) {
    const auto& [op, dtype, dist, n, seed, ranks_p] = p;
    std::string distinct;
    for (const auto& [method, d] : by_method) distinct += fmt::format("{}{} {}", distinct.empty() ? "" : ", ", method, d.size());
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", op, dtype, dist, n, seed, ranks_p, cell_count[p],
                      distinct);
  }
  return md + "\n";
}

}  // namespace ulpscope
