#include "reports/scan_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "reports/html_views.hpp"

namespace ulpscope {
namespace {

// Drawn after the canvases, with the page's Chart.js (html_report.cpp embeds
// it in the head). Errors below the floor, 0 included, sit on the floor of a
// logarithmic axis.
constexpr const char* kScanScript = R"(
(function () {
  const data = JSON.parse(document.getElementById('ulpscope-scan-data').textContent);
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2'];
  const styles = ['circle', 'triangle', 'rect', 'rectRot', 'star', 'crossRot', 'cross'];
  for (const chart of data.charts) {
    const sets = chart.series.map((s, k) => ({
      label: s.name,
      data: s.max.map((v, d) => ({ x: 10 * d + 5, y: v === null ? null : Math.max(v, data.floor) })),
      showLine: true, spanGaps: false, borderWidth: 1.5, pointRadius: 4, pointStyle: styles[k % styles.length],
      backgroundColor: 'rgba(0,0,0,0)', borderColor: palette[k % palette.length]
    }));
    new Chart(document.getElementById(chart.id), { type: 'scatter', data: { datasets: sets },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
        scales: { x: { type: 'linear', min: 0, max: 100, title: { display: true, text: 'index in the line (%)' } },
                  y: { type: 'logarithmic', title: { display: true, text: 'max ulp error in the decile' } } } } });
  }
})();
)";

}  // namespace

std::string scan_section(const std::vector<Cell>& cells) {
  // (dtype, axis, shape) -> accumulator -> the worst per decile over the
  // chart's cells (distributions, sizes, seeds).
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::map<std::string, std::array<std::optional<double>, kIndexDeciles>>> worst;
  std::map<Key, std::map<std::string, std::array<bool, kIndexDeciles>>> undefined;
  std::vector<Key> order;
  for (const Cell& c : cells) {
    if (!c.scan || c.status != "ok") continue;
    const Key k{c.dtype, c.axis, c.shape};
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    auto& w = worst[k][c.accumulator];
    auto& u = undefined[k][c.accumulator];
    for (int d = 0; d < kIndexDeciles; ++d) {
      const auto& e = c.scan->max_ulp_by_decile[std::size_t(d)];
      // A decile with elements but no defined error (a non-finite mismatch) stays null.
      if (!e && c.scan->line_length >= kIndexDeciles) u[std::size_t(d)] = true;
      if (e) w[std::size_t(d)] = std::max(w[std::size_t(d)].value_or(0.0), *e);
    }
  }
  if (order.empty()) return "";
  nlohmann::json charts = nlohmann::json::array();
  std::string plots = "<div class=\"plots\">\n";
  int id = 0;
  for (const Key& k : order) {
    const auto& [dtype, axis, shape] = k;
    nlohmann::json series = nlohmann::json::array();
    for (const auto& [acc, values] : worst[k]) {
      nlohmann::json max = nlohmann::json::array();
      for (int d = 0; d < kIndexDeciles; ++d) {
        const bool bad = undefined[k][acc][std::size_t(d)];
        max.push_back(values[std::size_t(d)] && !bad ? nlohmann::json(*values[std::size_t(d)]) : nlohmann::json());
      }
      series.push_back({{"name", acc}, {"max", max}});
    }
    const std::string chart_id = fmt::format("scan-plot-{}", id++);
    charts.push_back({{"id", chart_id}, {"series", series}});
    plots += fmt::format(
        "<div><div class=\"plot-title\">cumsum {} axis={} shape={}</div><div class=\"plot-box\"><canvas id=\"{}\" "
        "class=\"ulpscope-plot\" data-view=\"scan-error\"></canvas></div></div>\n",
        html::html_text(dtype), html::html_text(axis), html::html_text(shape), chart_id);
  }
  plots += "</div>\n";
  std::string json = nlohmann::json({{"floor", kScanUlpFloor}, {"charts", charts}}).dump();
  for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 2)) json.insert(at + 1, "\\");
  return fmt::format(
      "<section id=\"view-scan-error\"><h2>Error along the index (cumsum)</h2>\n{}"
      "<p class=\"note\">One line per accumulator: the largest ulp error of the elements in each tenth of the "
      "scanned line (the array, or each row), worst over the chart's distributions, sizes and seeds. A growing "
      "line is an error that accumulates along the index. Errors below {} ulp, 0 included, are drawn at {}; a "
      "gap is a decile without a defined error.</p>\n"
      "<script type=\"application/json\" id=\"ulpscope-scan-data\">{}</script>\n<script>{}</script></section>\n",
      plots, kScanUlpFloor, kScanUlpFloor, json, kScanScript);
}

}  // namespace ulpscope
