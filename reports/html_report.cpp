#include "reports/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
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
#include "reports/html_assets.hpp"
#include "reports/html_views.hpp"
#include "reports/allreduce_chart.hpp"
#include "reports/scan_chart.hpp"
#include "reports/verdict.hpp"

namespace ulpscope {
namespace {

using namespace html;

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

}  // namespace

std::filesystem::path chart_js_path() {
  if (const char* env = std::getenv("ULPSCOPE_CHART_JS"); env != nullptr && *env != '\0') return env;
  return ULPSCOPE_CHART_JS_PATH;
}

std::vector<std::size_t> pareto_front(const std::vector<KernelPoint>& points) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const KernelPoint& p = points[i];
    const bool dominated = std::any_of(points.begin(), points.end(), [&](const KernelPoint& q) {
      return q.gbps >= p.gbps && q.worst_ulp <= p.worst_ulp && (q.gbps > p.gbps || q.worst_ulp < p.worst_ulp);
    });
    if (!dominated) front.push_back(i);
  }
  std::stable_sort(front.begin(), front.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].gbps < points[b].gbps; });
  return front;
}

void write_html(const Report& report, std::ostream& out) {
  const std::string chart_js = read_chart_js();
  const auto& h = report.header;
  const auto& cells = report.cells;

  // Errors below this are drawn on it (a log axis has no 0); its tick reads
  // "≤0.001": a thousandth of an ulp is far below any difference that matters.
  constexpr double kUlpFloor = 1e-3;
  int evn_not_drawn = 0;
  const ojson evn = error_vs_n(cells, evn_not_drawn);
  const ThroughputView tput = accuracy_vs_throughput(cells);
  ojson data = {{"ulp_floor", kUlpFloor}, {"error_vs_n", evn}, {"accuracy_vs_throughput", tput.charts}};

  // View 1.
  std::string view1;
  {
    std::vector<std::string> dists;
    for (const Cell& c : cells)
      if (std::find(dists.begin(), dists.end(), c.distribution) == dists.end()) dists.push_back(c.distribution);
    if (evn.empty()) {
      view1 = "<p class=\"empty-view\">Nothing to draw: no cell has a defined ulp error at n &gt; 0.</p>\n";
    } else {
      view1 = "<p><label>Distribution: <select id=\"error-vs-n-dist\"><option value=\"*\">worst over all"
              "</option>";
      for (const auto& d : dists) view1 += fmt::format("<option>{}</option>", html_text(d));
      view1 += "</select></label></p>\n<div class=\"plots\">\n";
      for (const auto& chart : evn)
        view1 += fmt::format(
            "<div><div class=\"plot-title\">{0}</div><div class=\"plot-box\"><canvas id=\"{1}\" class=\"ulpscope-plot\" "
            "data-view=\"error-vs-n\"></canvas></div><p id=\"{1}-empty\" class=\"empty-view\" style=\"display:none\">"
            "</p></div>\n",
            html_text(chart["title"].get<std::string>()), chart["id"].get<std::string>());
      view1 += "</div>\n";
    }
    view1 += fmt::format(
        "<p class=\"note\">One line per accumulator: the worst max ulp error at each n over shapes and seeds, for "
        "the distribution chosen above. Markers differ in shape and are hollow, and each line is moved by a small "
        "fraction of a decade along n (the tooltip gives the true n), so that equal errors do not hide each "
        "other. Errors below {} ulp, 0 included, are drawn at {}. {}</p>\n",
        kUlpFloor, kUlpFloor, why_not_drawn(evn_not_drawn, static_cast<int>(cells.size())));
  }

  // View 3.
  std::string view3;
  if (tput.charts.empty()) {
    std::string why;
    if (h.backend == "cpu")
      why = "Throughput is not measured on the CPU backend: it runs bit-exact models of the kernels, whose speed "
            "says nothing about the GPU's. Run on the cuda backend to see accuracy against throughput.";
    else if (tput.kernels == tput.without_gbps)
      why = "No kernel has a throughput measurement in this report.";
    else
      why = "No kernel has both a throughput and a defined ulp error.";
    view3 = "<p class=\"empty-view\">Nothing to draw. " + why + "</p>\n";
  } else {
    view3 = "<div class=\"plots\">\n";
    for (const auto& chart : tput.charts)
      view3 += fmt::format(
          "<div><div class=\"plot-title\">{}</div><div class=\"plot-box\"><canvas id=\"{}\" class=\"ulpscope-plot\" "
          "data-view=\"accuracy-vs-throughput\"></canvas></div></div>\n",
          html_text(chart["title"].get<std::string>()), chart["id"].get<std::string>());
    view3 += "</div>\n";
    view3 += fmt::format(
        "<p class=\"note\">One point per kernel (accumulator and shape): its worst max ulp error over every "
        "distribution, size and seed against its GB/s at the largest size measured. The dashed line joins the "
        "Pareto front: the kernels that no other kernel beats on both speed and error.{}</p>\n",
        tput.without_gbps + tput.without_ulp == 0
            ? std::string()
            : fmt::format(" Not drawn: {} kernels without a throughput, {} without a defined ulp error.",
                          tput.without_gbps, tput.without_ulp));
  }

  std::string rows;
  for (const Cell& c : cells) {
    const char* cls = is_failed(c) ? "failed" : is_non_deterministic(c) ? "nondet" : "";
    auto pair = [](std::optional<int> total, std::optional<int> distinct) {
      return total.value_or(0) == 0 ? std::string("n/a") : fmt::format("{}/{}", *total, distinct.value_or(0));
    };
    auto num = [](std::optional<double> v) -> std::optional<double> {
      return v && std::isfinite(*v) ? v : std::nullopt;
    };
    // (text, sort value for numeric columns)
    const std::pair<std::string, std::optional<double>> fields[] = {
        {c.op, {}},
        {c.dtype + "->" + c.out_dtype, {}},
        {c.accumulator, {}},
        {c.shape, {}},
        {c.distribution, {}},
        {fmt::to_string(c.n), static_cast<double>(c.n)},
        {ulp_error_text(c), num(c.ulp_error)},
        {c.correctly_rounded ? "yes" : "no", {}},
        {c.rel_error ? fmt::format("{:.2e}", *c.rel_error) : "n/a", num(c.rel_error)},
        {short_number(c.bound_ratio), num(c.bound_ratio)},
        {short_number(c.condition), num(c.condition)},
        {pair(c.runs, c.distinct_results), c.runs ? std::optional<double>(c.distinct_results) : std::nullopt},
        {pair(c.configs, c.distinct_across_configs),
         c.configs ? std::optional<double>(c.distinct_across_configs) : std::nullopt},
        {pair(c.permutations, c.distinct_across_permutations),
         c.permutations.value_or(0) ? std::optional<double>(c.distinct_across_permutations.value_or(0)) : std::nullopt},
        {c.gbps ? fmt::format("{:.1f}", *c.gbps) : "n/a", num(c.gbps)},
        {c.status, {}},
        {error_note_for_export(c), {}},
        {c.note, {}}};
    rows += fmt::format("<tr class=\"{}\">", cls);
    for (std::size_t i = 0; i < std::size(fields); ++i) {
      const auto& [text, v] = fields[i];
      const bool note = i + 2 >= std::size(fields);  // the two notes: free text, wrapped
      rows += v ? fmt::format("<td class=\"num\" data-v=\"{}\">", *v)
                : std::string(note ? "<td class=\"wrap\">" : "<td>");
      rows += html_text(text) + "</td>";
    }
    rows += "</tr>\n";
  }
  // The columns: heading, numeric (sorted by value, filtered with < and >).
  const std::pair<const char*, bool> columns[] = {
      {"op", false},       {"dtype", false},          {"acc", false},          {"shape", false},
      {"dist", false},     {"n", true},               {"max ulp", true},       {"CR", false},
      {"rel", true},       {"bound ratio", true},     {"condition", true},     {"runs/distinct", true},
      {"configs/distinct", true}, {"orders/distinct", true}, {"GB/s", true}, {"status", false},
      {"error note", false}, {"note", false}};
  std::string heads, filters;
  for (const auto& [name, numeric] : columns) {
    heads += fmt::format("<th{}>{}</th>", numeric ? " data-num=\"1\"" : "", name);
    filters += fmt::format("<th><input type=\"search\" aria-label=\"filter {0}\" placeholder=\"{1}\"></th>", name,
                           numeric ? "&gt;1" : "filter");
  }

  // The verdict first, as in every format (docs/spec.md, "The report").
  std::string verdict_rows;
  for (const Verdict& v : verdicts(cells)) {
    const auto where = [](const WorstError& w) {
      return w.cells == 0 ? std::string() : fmt::format(" <small>({}, n={})</small>", html_text(w.distribution), w.n);
    };
    verdict_rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}{}</td><td class=\"num\">{}{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        html_text(v.op), html_text(verdict_format_text(v)), html_text(v.accumulator), html_text(v.shape),
        worst_ulp_text(v.realistic), where(v.realistic), worst_ulp_text(v.adversarial), where(v.adversarial),
        correctly_rounded_text(v), to_string(v.run_to_run), to_string(v.across_configs), to_string(v.across_orders),
        html_text(throughput_text(v)));
  }

  std::string run_rows;
  const std::pair<const char*, std::string> header_fields[] = {
      {"version", h.version},         {"git commit", h.git_commit},   {"device", h.device},
      {"backend", h.backend},         {"build flags", h.build_flags}, {"command line", h.command_line},
      {"started at", h.started_at},   {"seconds", fmt::format("{:.1f}", h.seconds)}};
  for (const auto& [name, value] : header_fields)
    run_rows += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, html_text(value));
  for (const auto& [shape, reason] : h.unavailable)
    run_rows += fmt::format("<tr><th>not run</th><td>{}: {}</td></tr>\n", html_text(shape), html_text(reason));

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<title>ulpscope accuracy report</title>\n<style>" << kStyle << "</style>\n"
      << "<script>/* Chart.js, MIT licence (https://www.chartjs.org), embedded from "
      << html_text(chart_js_path().string()) << " */\n"
      << chart_js << "\n</script>\n</head>\n<body>\n<h1>ulpscope accuracy report</h1>\n"
      << fmt::format("<p>{} cells · failed: {} · non-deterministic (run to run): {} · different over launch "
                     "configurations: {} · over input orders: {} · correctly rounded: {}</p>\n",
                     cells.size(), std::count_if(cells.begin(), cells.end(), is_failed),
                     std::count_if(cells.begin(), cells.end(), is_non_deterministic),
                     std::count_if(cells.begin(), cells.end(), is_config_dependent),
                     std::count_if(cells.begin(), cells.end(), is_order_dependent),
                     std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return c.correctly_rounded; }))
      << "<nav><a href=\"#verdict\">verdict</a><a href=\"#view-error-vs-n\">error against n</a><a href=\"#view-error-by-distribution\">error by "
         "distribution</a><a href=\"#view-accuracy-vs-throughput\">accuracy against throughput</a>"
         "<a href=\"#view-determinism\">determinism</a><a href=\"#run\">run and settings</a>"
         "<a href=\"#cells-view\">cells</a></nav>\n"
      << "<section id=\"verdict\"><h2>Verdict</h2>\n<p>One line per kernel: the worst ULP error on realistic and "
         "on adversarial inputs (where it occurred), the share of cells correctly rounded, whether the bits were "
         "the same run to run, across launch configurations and across input orders, and the throughput.</p>\n"
         "<div class=\"scroll\"><table class=\"verdict\"><thead><tr><th>op</th><th>format</th>"
         "<th>accumulator</th><th>shape</th><th>worst ulp, realistic</th><th>worst ulp, adversarial</th>"
         "<th>correctly rounded</th><th>run to run</th><th>configs</th><th>orders</th><th>throughput</th></tr>"
         "</thead><tbody>\n"
      << verdict_rows << "</tbody></table></div></section>\n"
      << "<section id=\"" << kHtmlViewIds[0] << "\"><h2>Error against n</h2>\n" << view1 << "</section>\n"
      << "<section id=\"" << kHtmlViewIds[1] << "\"><h2>Error by distribution</h2>\n"
      << error_by_distribution(cells) << "</section>\n"
      << "<section id=\"" << kHtmlViewIds[2] << "\"><h2>Accuracy against throughput</h2>\n" << view3
      << "</section>\n"
      << "<section id=\"" << kHtmlViewIds[3] << "\"><h2>Determinism</h2>\n" << determinism(cells) << "</section>\n"
      << scan_section(cells)       // cumsum cells only
      << allreduce_section(cells)  // all-reduce cells only
      << "<section id=\"run\"><h2>Run and settings</h2>\n<div class=\"kv-tables\">"
      << "<table class=\"kv header\">\n" << run_rows << "</table>\n"
      << "<table class=\"kv settings\">\n<tr><th colspan=\"2\">settings</th></tr>\n" << settings_rows(h.settings_json)
      << "</table></div></section>\n"
      << "<section id=\"cells-view\"><h2>Cells</h2>\n"
      << fmt::format("<p class=\"note\">Showing <span id=\"cells-shown\">{}</span> of {} cells. Click a heading "
                     "to sort (again to reverse); type in a box to filter (text anywhere; numbers also "
                     "&lt;, &lt;=, &gt;, &gt;=, = and a value). Orders: the input and its permutations.</p>\n",
                     cells.size(), cells.size())
      << "<div class=\"scroll\"><table class=\"cells\" id=\"cells\">\n<thead><tr>" << heads
      << "</tr>\n<tr class=\"filters\">" << filters << "</tr></thead>\n<tbody>\n"
      << rows << "</tbody></table></div></section>\n"
      << "<script type=\"application/json\" id=\"ulpscope-data\">" << script_safe(data.dump()) << "</script>\n"
      << "<script>" << kPlotScript << "</script>\n<script>" << kTableScript << "</script>\n</body>\n</html>\n";
}

}  // namespace ulpscope
