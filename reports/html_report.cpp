#include "reports/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/cell_facts.hpp"
#include "reports/json_report.hpp"

namespace ulpscope {
namespace {

using ojson = nlohmann::ordered_json;

std::string html_text(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// JSON inside <script>: "</script" or "<!--" in a cell's text would end or
// confuse the element. In JSON text '<' occurs only inside strings, where
// \u003c is the same character.
std::string script_safe(const std::string& json_text) {
  std::string out;
  for (char ch : json_text) {
    if (ch == '<')
      out += "\\u003c";
    else
      out += ch;
  }
  return out;
}

std::string read_chart_js() {
  const std::filesystem::path path = chart_js_path();
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty())
    throw std::runtime_error(fmt::format(
        "HTML report: cannot read Chart.js at {} (install Debian's libjs-chart.js, or set ULPSCOPE_CHART_JS)",
        path.string()));
  std::string js = text.str();
  std::string lower = js;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (lower.find("</script") != std::string::npos)
    throw std::runtime_error(fmt::format("HTML report: {} contains \"</script\" and cannot be inlined", path.string()));
  return js;
}

// Log axes cannot show 0: a max ulp error of exactly 0 is drawn at this floor,
// a power of ten below the smallest positive error, and its tick reads "0".
double zero_floor(const std::vector<Cell>& cells) {
  double smallest = 1.0;
  for (const Cell& c : cells)
    if (c.ulp_error && std::isfinite(*c.ulp_error) && *c.ulp_error > 0) smallest = std::min(smallest, *c.ulp_error);
  return std::pow(10.0, std::floor(std::log10(smallest)) - 1);
}

struct PlotSpec {
  const char* id;
  const char* title;
  const char* x_title;
  const char* y_title;
  bool x_log, y_log, x_zero_floor, y_zero_floor;
};

// One series per accumulator, in order of first appearance.
ojson plot_json(const PlotSpec& spec, const std::vector<Cell>& cells, double floor,
                const std::function<std::optional<std::pair<double, double>>(const Cell&)>& point,
                int& left_out) {
  std::vector<std::string> order;
  std::map<std::string, ojson> series;
  left_out = 0;
  for (const Cell& c : cells) {
    auto xy = point(c);
    if (xy && (!std::isfinite(xy->first) || !std::isfinite(xy->second))) xy.reset();
    if (xy && spec.x_log && xy->first <= 0 && !(spec.x_zero_floor && xy->first == 0)) xy.reset();
    if (xy && spec.y_log && xy->second <= 0 && !(spec.y_zero_floor && xy->second == 0)) xy.reset();
    if (!xy) {
      ++left_out;
      continue;
    }
    if (spec.x_zero_floor && xy->first == 0) xy->first = floor;
    if (spec.y_zero_floor && xy->second == 0) xy->second = floor;
    if (!series.count(c.accumulator)) {
      order.push_back(c.accumulator);
      series[c.accumulator] = ojson::array();
    }
    series[c.accumulator].push_back({{"x", xy->first}, {"y", xy->second}, {"cell", cell_label(c)}});
  }
  ojson plot = {{"id", spec.id},          {"x_title", spec.x_title}, {"y_title", spec.y_title},
                {"x_log", spec.x_log},    {"y_log", spec.y_log},     {"x_zero_floor", spec.x_zero_floor},
                {"y_zero_floor", spec.y_zero_floor}, {"series", ojson::array()}};
  for (const auto& name : order) plot["series"].push_back({{"name", name}, {"points", series[name]}});
  return plot;
}

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed { background: #fdd; } tr.nondet { background: #ffd; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(30em, 1fr)); gap: 1.5em; }
.plot-box { position: relative; height: 24em; }
.note { color: #666; font-size: 0.85em; }
)";

// Draws every plot; a plugin records on each canvas that it drew, how many
// points Chart.js laid out and how many pixels carry a series colour.
constexpr const char* kPlotScript = R"(
(function () {
  const data = JSON.parse(document.getElementById('ulpscope-data').textContent);
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                   '#17becf', '#bcbd22', '#7f7f7f'];
  const rgb = palette.map(h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16)));
  const drawn = {
    id: 'ulpscope-drawn',
    afterRender(chart) {
      const canvas = chart.canvas;
      let points = 0;
      chart.data.datasets.forEach((d, i) => {
        if (chart.isDatasetVisible(i)) points += chart.getDatasetMeta(i).data.length;
      });
      const px = chart.ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let ink = 0;
      for (let k = 0; k < px.length; k += 4)
        if (px[k + 3] === 255 && rgb.some(c => c[0] === px[k] && c[1] === px[k + 1] && c[2] === px[k + 2])) ink++;
      canvas.dataset.points = points;
      canvas.dataset.ink = ink;
      canvas.dataset.rendered = '1';
    }
  };
  const number = (v) => (v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5))
      ? v.toExponential(0) : String(parseFloat(v.toPrecision(3)));
  // Log axes: label the powers of ten only; the zero floor reads "0".
  const tick = (log, zeroFloor) => (v) => {
    if (zeroFloor && v === data.zero_floor) return '0';
    if (!log) return number(v);
    const e = Math.log10(v);
    return Math.abs(e - Math.round(e)) < 1e-9 ? number(v) : '';
  };
  const axis = (title, log, zeroFloor) => ({
    type: log ? 'logarithmic' : 'linear',
    title: { display: true, text: title },
    min: zeroFloor ? data.zero_floor : undefined,
    ticks: { autoSkip: false, callback: tick(log, zeroFloor) }
  });
  for (const plot of data.plots) {
    new Chart(document.getElementById(plot.id), {
      type: 'scatter',
      data: {
        datasets: plot.series.map((s, i) => ({
          label: s.name, data: s.points, pointRadius: 4,
          backgroundColor: palette[i % palette.length], borderColor: palette[i % palette.length]
        }))
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        parsing: { xAxisKey: 'x', yAxisKey: 'y' },
        scales: { x: axis(plot.x_title, plot.x_log, plot.x_zero_floor),
                  y: axis(plot.y_title, plot.y_log, plot.y_zero_floor) },
        plugins: { tooltip: { callbacks: { label: (ctx) => ctx.raw.cell } } }
      },
      plugins: [drawn]
    });
  }
})();
)";

}  // namespace

std::filesystem::path chart_js_path() {
  if (const char* env = std::getenv("ULPSCOPE_CHART_JS"); env != nullptr && *env != '\0') return env;
  return ULPSCOPE_CHART_JS_PATH;
}

void write_html(const Report& report, std::ostream& out) {
  const std::string chart_js = read_chart_js();
  const auto& h = report.header;
  const auto& cells = report.cells;
  const double floor = zero_floor(cells);

  const PlotSpec specs[] = {
      {kHtmlPlotIds[0], "Error against n", "n", "max ulp error", true, true, false, true},
      {kHtmlPlotIds[1], "Error against condition number", "condition number", "max ulp error", true, true,
       false, true},
      {kHtmlPlotIds[2], "Throughput against error", "max ulp error", "GB/s", true, false, true, false},
  };
  using Point = std::optional<std::pair<double, double>>;
  const std::function<Point(const Cell&)> points[] = {
      [](const Cell& c) -> Point {
        if (!c.ulp_error) return std::nullopt;
        return std::pair{static_cast<double>(c.n), *c.ulp_error};
      },
      [](const Cell& c) -> Point {
        if (!c.ulp_error || !c.condition) return std::nullopt;
        return std::pair{*c.condition, *c.ulp_error};
      },
      [](const Cell& c) -> Point {
        if (!c.ulp_error || !c.gbps) return std::nullopt;
        return std::pair{*c.ulp_error, *c.gbps};
      },
  };
  const char* why_left_out[] = {"no defined ulp error, or n = 0 (a log axis)",
                                "no defined ulp error or condition number",
                                "no defined ulp error or no throughput measured"};

  ojson data = {{"zero_floor", floor}, {"plots", ojson::array()}};
  std::string sections;
  for (std::size_t i = 0; i < std::size(specs); ++i) {
    int left_out = 0;
    data["plots"].push_back(plot_json(specs[i], cells, floor, points[i], left_out));
    sections += fmt::format(
        "<section><h2>{}</h2><div class=\"plot-box\"><canvas id=\"{}\" class=\"ulpscope-plot\"></canvas></div>"
        "<p class=\"note\">{}</p></section>\n",
        specs[i].title, specs[i].id,
        left_out == 0 ? std::string("All cells drawn.")
                      : fmt::format("{} of {} cells not drawn: {}.", left_out, cells.size(), why_left_out[i]));
  }

  std::string rows;
  for (const Cell& c : cells) {
    const char* cls = is_failed(c) ? "failed" : is_non_deterministic(c) ? "nondet" : "";
    auto pair = [](int total, int distinct) {
      return total == 0 ? std::string("n/a") : fmt::format("{}/{}", total, distinct);
    };
    const std::pair<bool, std::string> fields[] = {
        {false, c.op},
        {false, c.dtype + "->" + c.out_dtype},
        {false, c.accumulator},
        {false, c.shape},
        {false, c.distribution},
        {true, fmt::to_string(c.n)},
        {true, ulp_error_text(c)},
        {false, c.correctly_rounded ? "yes" : "no"},
        {true, c.rel_error ? fmt::format("{:.2e}", *c.rel_error) : "n/a"},
        {true, short_number(c.bound_ratio)},
        {true, short_number(c.condition)},
        {true, pair(c.runs, c.distinct_results)},
        {true, pair(c.configs, c.distinct_across_configs)},
        {true, c.gbps ? fmt::format("{:.1f}", *c.gbps) : "n/a"},
        {false, c.status},
        {false, error_note_for_export(c)},
        {false, c.note}};
    rows += fmt::format("<tr class=\"{}\">", cls);
    for (const auto& [numeric, text] : fields)
      rows += (numeric ? "<td class=\"num\">" : "<td>") + html_text(text) + "</td>";
    rows += "</tr>\n";
  }

  std::string header_rows;
  const std::pair<const char*, std::string> header_fields[] = {
      {"version", h.version},         {"git commit", h.git_commit},   {"device", h.device},
      {"backend", h.backend},         {"build flags", h.build_flags}, {"command line", h.command_line},
      {"started at", h.started_at},   {"seconds", fmt::format("{:.1f}", h.seconds)},
      {"settings", h.settings_json}};
  for (const auto& [name, value] : header_fields)
    header_rows += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, html_text(value));
  for (const auto& [shape, reason] : h.unavailable)
    header_rows += fmt::format("<tr><th>not run</th><td>{}: {}</td></tr>\n", html_text(shape), html_text(reason));

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<title>ulpscope accuracy report</title>\n<style>" << kStyle << "</style>\n"
      << "<script>/* Chart.js, MIT licence (https://www.chartjs.org), embedded from "
      << html_text(chart_js_path().string()) << " */\n"
      << chart_js << "\n</script>\n</head>\n<body>\n<h1>ulpscope accuracy report</h1>\n"
      << "<table class=\"header\">\n" << header_rows << "</table>\n"
      << fmt::format("<p>{} cells · failed: {} · non-deterministic (run to run): {} · different over launch "
                     "configurations: {} · over input permutations: {} · correctly rounded: {}</p>\n",
                     cells.size(), std::count_if(cells.begin(), cells.end(), is_failed),
                     std::count_if(cells.begin(), cells.end(), is_non_deterministic),
                     std::count_if(cells.begin(), cells.end(), is_config_dependent),
                     std::count_if(cells.begin(), cells.end(), is_order_dependent),
                     std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return c.correctly_rounded; }))
      << "<p class=\"note\">Max ulp errors of exactly 0 are drawn at the axis' lowest tick, labelled 0.</p>\n"
      << "<div class=\"plots\">\n" << sections << "</div>\n"
      << "<h2>Cells</h2>\n<table class=\"cells\">\n<tr><th>op</th><th>dtype</th><th>acc</th><th>shape</th>"
      << "<th>dist</th><th>n</th><th>max ulp</th><th>CR</th><th>rel</th><th>bound ratio</th><th>condition</th>"
      << "<th>runs/distinct</th><th>configs/distinct</th><th>GB/s</th><th>status</th><th>error note</th><th>note</th></tr>\n"
      << rows << "</table>\n"
      << "<script type=\"application/json\" id=\"ulpscope-data\">" << script_safe(data.dump()) << "</script>\n"
      << "<script>" << kPlotScript << "</script>\n</body>\n</html>\n";
}

}  // namespace ulpscope
