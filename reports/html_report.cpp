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
#include "reports/scan_chart.hpp"
#include "reports/verdict.hpp"

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

// Keys in order of first appearance, each with its value.
template <class Key, class Value>
struct Ordered {
  std::vector<Key> order;
  std::map<Key, Value> items;
  Value& operator[](const Key& k) {
    auto [it, inserted] = items.try_emplace(k);
    if (inserted) order.push_back(k);
    return it->second;
  }
};

bool has_ulp(const Cell& c) { return c.ulp_error && std::isfinite(*c.ulp_error); }

// The worst (largest) max ulp error of a set of cells, and the cell it came from.
struct Worst {
  std::optional<double> ulp;
  std::string cell;
  int cells = 0, undefined = 0, failed = 0;
  std::string undefined_note;
  void add(const Cell& c) {
    ++cells;
    if (is_failed(c)) ++failed;
    if (!has_ulp(c)) {
      ++undefined;
      if (undefined_note.empty()) undefined_note = error_note_for_export(c);
      return;
    }
    if (!ulp || *c.ulp_error > *ulp) {
      ulp = *c.ulp_error;
      cell = cell_label(c);
    }
  }
};

std::string why_not_drawn(int cells, int total) {
  if (cells == 0) return "Every cell is drawn.";
  return fmt::format("{} of {} cells are not drawn: their max ulp error is undefined (an infinity or NaN in the "
                     "result or the reference: see the table's error note) or n is 0.",
                     cells, total);
}

// View 1: for each (op, dtype), one series per accumulator: the worst max ulp
// error at each n over shapes and seeds, for every distribution and over all
// of them ("*").
ojson error_vs_n(const std::vector<Cell>& cells, int& not_drawn) {
  using ByN = std::map<std::int64_t, Worst>;
  using ByDist = Ordered<std::string, ByN>;
  Ordered<std::pair<std::string, std::string>, Ordered<std::string, ByDist>> groups;
  not_drawn = 0;
  for (const Cell& c : cells) {
    if (!has_ulp(c) || c.n <= 0) {
      ++not_drawn;
      continue;
    }
    ByDist& by_dist = groups[{c.op, c.dtype}][c.accumulator];
    by_dist["*"][c.n].add(c);
    by_dist[c.distribution][c.n].add(c);
  }
  ojson charts = ojson::array();
  for (const auto& g : groups.order) {
    auto& accs = groups.items.at(g);
    ojson series = ojson::array();
    for (const auto& acc : accs.order) {
      ojson points = ojson::object();
      auto& by_dist = accs.items.at(acc);
      for (const auto& dist : by_dist.order) {
        ojson list = ojson::array();
        for (const auto& [n, w] : by_dist.items.at(dist)) list.push_back({n, *w.ulp, w.cell});
        points[dist] = list;
      }
      series.push_back({{"name", acc}, {"points", points}});
    }
    charts.push_back({{"id", fmt::format("plot-error-vs-n-{}", charts.size())},
                      {"title", g.first + " · " + g.second},
                      {"series", series}});
  }
  return charts;
}

// The throughput of a kernel: its cells' GB/s at the largest size measured
// (docs/spec.md, "Metrics": measured on the cell's input when it is large
// enough, else once per kernel at the run's throughput size).
struct KernelStats {
  Worst worst;
  std::optional<double> gbps;
  std::int64_t gbps_n = -1;
};

struct ThroughputView {
  ojson charts = ojson::array();
  int kernels = 0, without_gbps = 0, without_ulp = 0;
};

ThroughputView accuracy_vs_throughput(const std::vector<Cell>& cells) {
  using KernelKey = std::pair<std::string, std::string>;  // accumulator, shape
  Ordered<std::pair<std::string, std::string>, Ordered<KernelKey, KernelStats>> groups;
  for (const Cell& c : cells) {
    KernelStats& k = groups[{c.op, c.dtype}][{c.accumulator, c.shape}];
    k.worst.add(c);
    if (c.gbps && std::isfinite(*c.gbps) && *c.gbps > 0) {
      const std::int64_t at = c.throughput_n.value_or(c.n);
      if (at > k.gbps_n || (at == k.gbps_n && *c.gbps > *k.gbps)) {
        k.gbps = *c.gbps;
        k.gbps_n = at;
      }
    }
  }
  ThroughputView view;
  for (const auto& g : groups.order) {
    const auto& kernels = groups.items.at(g);
    std::vector<KernelPoint> points;
    std::vector<const KernelKey*> keys;
    for (const auto& key : kernels.order) {
      const KernelStats& k = kernels.items.at(key);
      ++view.kernels;
      if (!k.gbps) {
        ++view.without_gbps;
        continue;
      }
      if (!k.worst.ulp) {
        ++view.without_ulp;
        continue;
      }
      points.push_back({*k.gbps, *k.worst.ulp});
      keys.push_back(&key);
    }
    if (points.empty()) continue;
    const std::vector<std::size_t> front = pareto_front(points);
    Ordered<std::string, ojson> by_acc;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const KernelStats& k = kernels.items.at(*keys[i]);
      ojson& list = by_acc[keys[i]->first];
      if (list.is_null()) list = ojson::array();
      list.push_back({points[i].gbps, points[i].worst_ulp,
                      fmt::format("{} {}: {:.1f} GB/s at n={}; worst {} ulp ({})", keys[i]->first, keys[i]->second,
                                  points[i].gbps, k.gbps_n, short_number(points[i].worst_ulp), k.worst.cell)});
    }
    ojson series = ojson::array();
    for (const auto& acc : by_acc.order) series.push_back({{"name", acc}, {"points", by_acc.items.at(acc)}});
    ojson front_points = ojson::array();
    for (std::size_t i : front)
      front_points.push_back({points[i].gbps, points[i].worst_ulp,
                              fmt::format("Pareto front: {} {}", keys[i]->first, keys[i]->second)});
    view.charts.push_back({{"id", fmt::format("plot-accuracy-vs-throughput-{}", view.charts.size())},
                           {"title", g.first + " · " + g.second},
                           {"series", series},
                           {"front", front_points}});
  }
  return view;
}

// Heat-map buckets of a max ulp error, with their legend.
struct Bucket {
  double up_to;
  const char* css;
  const char* legend;
};
constexpr Bucket kBuckets[] = {
    {0.5, "h0", "≤ 0.5 (correctly rounded)"}, {1, "h1", "≤ 1"},          {10, "h2", "≤ 10"},
    {1e3, "h3", "≤ 1000"},                      {1e6, "h4", "≤ 10⁶"}, {INFINITY, "h5", "> 10⁶"}};

const char* bucket_css(double ulp) {
  for (const Bucket& b : kBuckets)
    if (ulp <= b.up_to) return b.css;
  return kBuckets[std::size(kBuckets) - 1].css;
}

// View 2: per dtype, rows op x accumulator, columns distributions; each cell
// the worst max ulp error over shapes, sizes and seeds.
std::string error_by_distribution(const std::vector<Cell>& cells) {
  using Row = std::pair<std::string, std::string>;  // op, accumulator
  Ordered<std::string, std::pair<Ordered<std::string, int>, Ordered<Row, Ordered<std::string, Worst>>>> by_dtype;
  for (const Cell& c : cells) {
    auto& [dists, rows] = by_dtype[c.dtype];
    dists[c.distribution];
    rows[{c.op, c.accumulator}][c.distribution].add(c);
  }
  std::string html = "<p class=\"legend\">Worst max ulp error over shapes, sizes and seeds: ";
  for (const Bucket& b : kBuckets) html += fmt::format("<span class=\"swatch {}\">{}</span> ", b.css, b.legend);
  html += "<span class=\"swatch hna\">n/a: undefined</span> <span class=\"swatch hfail\">failed</span></p>\n";
  for (const auto& dtype : by_dtype.order) {
    auto& [dists, rows] = by_dtype.items.at(dtype);
    html += fmt::format("<div class=\"scroll\"><table class=\"heat\" data-dtype=\"{}\">\n<thead><tr><th>{}</th><th>"
                        "accumulator</th>",
                        html_text(dtype), html_text(dtype));
    for (const auto& d : dists.order) html += fmt::format("<th class=\"dist\"><span>{}</span></th>", html_text(d));
    html += "</tr></thead>\n<tbody>\n";
    std::string previous_op;
    for (const auto& row : rows.order) {
      const bool first_of_op = row.first != previous_op;
      previous_op = row.first;
      html += fmt::format("<tr{}><th>{}</th><th>{}</th>", first_of_op ? " class=\"op-start\"" : "",
                          first_of_op ? html_text(row.first) : "", html_text(row.second));
      auto& by_dist = rows.items.at(row);
      for (const auto& d : dists.order) {
        const auto it = by_dist.items.find(d);
        if (it == by_dist.items.end()) {
          html += "<td class=\"hnone\"></td>";
          continue;
        }
        const Worst& w = it->second;
        std::string title = fmt::format("{} {} on {}: {} cells", row.first, row.second, d, w.cells);
        if (w.undefined) title += fmt::format(", {} with an undefined ulp error ({})", w.undefined, w.undefined_note);
        if (w.failed) title += fmt::format(", {} failed", w.failed);
        if (w.ulp) title += fmt::format("; worst {} ulp: {}", short_number(w.ulp), w.cell);
        const char* css = w.failed ? "hfail" : w.ulp ? bucket_css(*w.ulp) : "hna";
        const std::string text = w.failed ? "failed" : w.ulp ? short_number(w.ulp) : "n/a";
        html += fmt::format("<td class=\"heat-cell {}\"{} title=\"{}\">{}{}</td>", css,
                            w.ulp ? fmt::format(" data-v=\"{}\"", *w.ulp) : "", html_text(title), html_text(text),
                            w.ulp && w.undefined ? "*" : "");
      }
      html += "</tr>\n";
    }
    html += "</tbody></table></div>\n";
  }
  html += "<p class=\"note\">* some cells of that square have an undefined ulp error (hover for the reason); the "
          "value is the worst of the others.</p>\n";
  return html;
}

// One determinism question over a set of cells: how many measured it (more
// than one run, configuration or order), and in how many the bits differed.
struct Repro {
  int measured = 0, differing = 0;
  void add(int tried, int distinct) {
    if (tried <= 1) return;
    ++measured;
    differing += distinct > 1;
  }
};

// Different bits run to run are a defect (red); across launch
// configurations or input orders, a property of an inexact accumulator (amber).
std::string repro_mark(const char* letter, const char* what, const Repro& r, const char* differs) {
  if (r.measured == 0)
    return fmt::format("<span class=\"mark mna\" title=\"{}: not measured (one try)\">{}</span>", what, letter);
  if (r.differing == 0)
    return fmt::format("<span class=\"mark msame\" title=\"{}: same bits in all {} cells\">{}</span>", what,
                       r.measured, letter);
  return fmt::format("<span class=\"mark {}\" title=\"{}: different bits in {} of {} cells\">{}</span>", differs,
                     what, r.differing, r.measured, letter);
}

// View 4: per dtype, rows accumulator x shape, columns ops; each square three
// marks: run to run (R), launch configurations (C), input orders (O).
std::string determinism(const std::vector<Cell>& cells) {
  using Row = std::pair<std::string, std::string>;  // accumulator, shape
  struct Marks {
    Repro runs, configs, orders;
  };
  Ordered<std::string, std::pair<Ordered<std::string, int>, Ordered<Row, std::map<std::string, Marks>>>> by_dtype;
  for (const Cell& c : cells) {
    auto& [ops, rows] = by_dtype[c.dtype];
    ops[c.op];
    Marks& m = rows[{c.accumulator, c.shape}][c.op];
    m.runs.add(c.runs, c.distinct_results);
    m.configs.add(c.configs, c.distinct_across_configs);
    m.orders.add(c.permutations.value_or(0), c.distinct_across_permutations.value_or(0));
  }
  std::string html =
      "<p class=\"legend\"><span class=\"mark msame\">R</span> run to run, <span class=\"mark msame\">C</span> "
      "across launch configurations, <span class=\"mark msame\">O</span> across input orders (permutations): "
      "<span class=\"swatch msame\">same bits in every cell</span> <span class=\"swatch mdiff\">different bits run "
      "to run (non-deterministic)</span> <span class=\"swatch mvary\">different bits across configurations or "
      "orders</span> <span class=\"swatch mna\">not measured</span>; hover a mark for how many cells. The CPU "
      "models run a deterministic shape once; an inexact accumulator's result depends on the order of its inputs, "
      "so a launch configuration that changes the order changes the bits.</p>\n";
  for (const auto& dtype : by_dtype.order) {
    auto& [ops, rows] = by_dtype.items.at(dtype);
    html += fmt::format("<div class=\"scroll\"><table class=\"determinism\" data-dtype=\"{}\">\n<thead><tr><th>{}"
                        "</th><th>shape</th>",
                        html_text(dtype), html_text(dtype));
    for (const auto& op : ops.order) html += fmt::format("<th>{}</th>", html_text(op));
    html += "</tr></thead>\n<tbody>\n";
    std::string previous_acc;
    for (const auto& row : rows.order) {
      const bool first = row.first != previous_acc;
      previous_acc = row.first;
      html += fmt::format("<tr{}><th>{}</th><th>{}</th>", first ? " class=\"op-start\"" : "",
                          first ? html_text(row.first) : "", html_text(row.second));
      const auto& by_op = rows.items.at(row);
      for (const auto& op : ops.order) {
        const auto it = by_op.find(op);
        if (it == by_op.end()) {
          html += "<td></td>";
          continue;
        }
        const Marks& m = it->second;
        html += "<td class=\"det-cell\">" + repro_mark("R", "run to run", m.runs, "mdiff") +
                repro_mark("C", "launch configurations", m.configs, "mvary") +
                repro_mark("O", "input orders", m.orders, "mvary") +
                "</td>";
      }
      html += "</tr>\n";
    }
    html += "</tbody></table></div>\n";
  }
  return html;
}

// The settings as a key/value table: lists comma-separated, null "not set".
std::string settings_rows(const std::string& settings_json) {
  nlohmann::json s;
  try {
    s = nlohmann::json::parse(settings_json);
  } catch (const nlohmann::json::parse_error&) {
    return fmt::format("<tr><th>settings</th><td>{}</td></tr>\n", html_text(settings_json));
  }
  if (!s.is_object()) return fmt::format("<tr><th>settings</th><td>{}</td></tr>\n", html_text(s.dump()));
  auto text = [](const nlohmann::json& v) -> std::string {
    if (v.is_null()) return "not set";
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
  };
  std::string rows;
  for (const auto& [key, value] : s.items()) {
    std::string shown;
    if (value.is_array()) {
      for (const auto& item : value) shown += (shown.empty() ? "" : ", ") + text(item);
      if (value.empty()) shown = "none";
    } else {
      shown = text(value);
    }
    rows += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_text(key), html_text(shown));
  }
  return rows;
}

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 110em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; }
th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv td { max-width: 80em; overflow-wrap: anywhere; }
.kv-tables { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }
tr.failed { background: #fdd; } tr.nondet { background: #ffd; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(24em, 1fr)); gap: 1em; }
.plot-box { position: relative; height: 19em; }
.plot-title { font-weight: 600; margin: 0.3em 0; }
.note, .legend { color: #555; font-size: 0.85em; }
.empty-view { padding: 1em; background: #f6f6f6; border: 1px dashed #bbb; }
.scroll { overflow-x: auto; margin-bottom: 1em; }
table.heat td, table.determinism td { text-align: center; white-space: nowrap; }
table.heat td { font-size: 0.8em; min-width: 2.5em; padding: 0.15em 0.3em; }
table.heat th { padding: 0.15em 0.3em; }
th.dist { vertical-align: bottom; height: 9em; }
th.dist span { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; }
tr.op-start > * { border-top: 2px solid #888; }
.swatch { display: inline-block; padding: 0 0.4em; border: 1px solid #ccc; }
.h0 { background: #c6e8bf; } .h1 { background: #e6f5a8; } .h2 { background: #fee08b; }
.h3 { background: #fdae61; } .h4 { background: #f46d43; } .h5 { background: #a50026; color: #fff; }
.hna { background: #ddd; color: #555; } .hfail { background: #555; color: #fff; } .hnone { background: #fff; }
.mark { display: inline-block; width: 1.3em; margin: 0 1px; font-size: 0.8em; font-weight: 600; }
.msame { background: #c6e8bf; } .mdiff { background: #d73027; color: #fff; } .mvary { background: #fdae61; } .mna { background: #e4e4e4; color: #888; }
table.cells th { cursor: pointer; white-space: nowrap; }
table.cells td { white-space: nowrap; } table.cells td.wrap { white-space: normal; min-width: 16em; }
table.cells th.sorted-asc::after { content: " ▲"; } table.cells th.sorted-desc::after { content: " ▼"; }
table.cells tr.filters th { cursor: default; background: #fafafa; }
table.cells input { width: 100%; min-width: 3em; box-sizing: border-box; font-size: 0.9em; }
select { font-size: 1em; }
nav a { margin-right: 1em; }
)";

// Draws every plot; a plugin records on each canvas that it drew, how many
// points Chart.js laid out and how many pixels carry a series colour.
constexpr const char* kPlotScript = R"(
(function () {
  const data = JSON.parse(document.getElementById('ulpscope-data').textContent);
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                   '#17becf', '#bcbd22', '#7f7f7f'];
  // Distinct marker shapes as well as colours, drawn hollow: equal values
  // stay visible through each other.
  const styles = ['circle', 'triangle', 'rect', 'rectRot', 'star', 'crossRot', 'cross', 'rectRounded', 'line', 'dash'];
  const rgb = palette.map(h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16)));
  const drawn = {
    id: 'ulpscope-drawn',
    afterRender(chart) {
      const canvas = chart.canvas;
      let points = 0, front = 0;
      chart.data.datasets.forEach((d, i) => {
        if (!chart.isDatasetVisible(i)) return;
        if (d.front) front += chart.getDatasetMeta(i).data.length;
        else points += chart.getDatasetMeta(i).data.length;
      });
      // A hidden chart (nothing to show for the chosen distribution) has no pixels to read.
      const px = canvas.width && canvas.height ? chart.ctx.getImageData(0, 0, canvas.width, canvas.height).data : [];
      let ink = 0;
      for (let k = 0; k < px.length; k += 4)
        if (px[k + 3] === 255 && rgb.some(c => c[0] === px[k] && c[1] === px[k + 1] && c[2] === px[k + 2])) ink++;
      canvas.dataset.points = points;
      canvas.dataset.front = front;
      canvas.dataset.ink = ink;
      canvas.dataset.rendered = '1';
    }
  };
  const floor = data.ulp_floor;
  const number = (v) => (v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5))
      ? v.toExponential(0) : String(parseFloat(v.toPrecision(3)));
  const shown = (v) => Math.max(v, floor);
  // A log axis over the data only, whole decades.
  const decades = (values) => {
    const lo = Math.min(...values), hi = Math.max(...values);
    let min = Math.pow(10, Math.floor(Math.log10(lo) + 1e-9)), max = Math.pow(10, Math.ceil(Math.log10(hi) - 1e-9));
    if (max <= min) max = min * 10;
    return { min, max };
  };
  const logTicks = (v) => {
    if (Math.abs(v - floor) < floor * 1e-9) return '≤' + number(floor);
    const e = Math.log10(v);
    return Math.abs(e - Math.round(e)) < 1e-9 ? number(v) : '';
  };
  const ulpAxis = (values) => Object.assign({
    type: 'logarithmic', title: { display: true, text: 'worst max ulp error' },
    ticks: { autoSkip: false, callback: logTicks }
  }, decades(values.map(shown)));
  const tooltip = { callbacks: { label: (ctx) => ctx.raw.label } };
  const legend = { labels: { usePointStyle: true, boxWidth: 8 } };
  const common = { animation: false, responsive: true, maintainAspectRatio: false,
                   parsing: { xAxisKey: 'x', yAxisKey: 'y' } };

  // Error against n: points of series k are moved by a small fraction of a
  // decade in n (the tooltip gives the true n), so that ties do not hide.
  const evn = [];
  function errorVsN(dist) {
    for (const chart of data.error_vs_n) {
      const canvas = document.getElementById(chart.id);
      const empty = document.getElementById(chart.id + '-empty');
      const K = chart.series.length;
      const all = [];
      const datasets = chart.series.map((s, k) => {
        const pts = (s.points[dist] || []).map(p => ({ n: p[0], v: p[1], label: `${s.name}: ${p[2]}, max ulp ${number(p[1])}` }));
        pts.forEach(p => all.push(p));
        return { name: s.name, k, pts };
      });
      const box = canvas.parentElement;
      if (all.length === 0) {
        box.style.display = 'none';
        empty.style.display = '';
        empty.textContent = `No cell of ${chart.title} on ${dist} has a defined ulp error.`;
      } else {
        box.style.display = '';
        empty.style.display = 'none';
      }
      const ns = all.map(p => p.n);
      const span = all.length ? Math.max(1, Math.log10(Math.max(...ns)) - Math.log10(Math.min(...ns))) : 1;
      const step = 0.025 * span;
      const sets = datasets.map(d => ({
        label: d.name,
        data: d.pts.map(p => ({ x: p.n * Math.pow(10, (d.k - (K - 1) / 2) * step), y: shown(p.v), label: p.label })),
        showLine: true, borderWidth: 1.5, pointRadius: 5, pointHoverRadius: 7, pointBorderWidth: 1.5,
        pointStyle: styles[d.k % styles.length], backgroundColor: 'rgba(0,0,0,0)',
        borderColor: palette[d.k % palette.length]
      }));
      const xs = ns.length ? ns : [1];
      const half = (K / 2 + 1) * step;
      const scales = {
        x: { type: 'logarithmic', title: { display: true, text: 'n' },
             min: Math.min(...xs) / Math.pow(10, half), max: Math.max(...xs) * Math.pow(10, half),
             ticks: { autoSkip: false, maxRotation: 0, callback: (v) => { const e = Math.log10(v); return Math.abs(e - Math.round(e)) < 1e-9 ? number(v) : ''; } } },
        y: ulpAxis(all.length ? all.map(p => p.v) : [1])
      };
      const old = evn.find(c => c.canvas === canvas);
      if (old) {
        old.data.datasets = sets;
        old.options.scales = scales;
        old.update();
        // A hidden chart is not drawn again: what it says it shows is nothing.
        if (all.length === 0) Object.assign(canvas.dataset, { points: '0', front: '0', ink: '0' });
      } else {
        evn.push(new Chart(canvas, { type: 'scatter', data: { datasets: sets },
          options: Object.assign({}, common, { scales, plugins: { tooltip, legend } }), plugins: [drawn] }));
      }
    }
  }
  const pick = document.getElementById('error-vs-n-dist');
  if (pick) pick.addEventListener('change', () => errorVsN(pick.value));
  errorVsN('*');

  // Accuracy against throughput: one point per kernel; the Pareto front is
  // a dashed black line through the kernels that no other beats on both.
  for (const chart of data.accuracy_vs_throughput) {
    const sets = chart.series.map((s, k) => ({
      label: s.name, data: s.points.map(p => ({ x: p[0], y: shown(p[1]), label: p[2] })),
      pointRadius: 6, pointHoverRadius: 8, pointBorderWidth: 2, pointStyle: styles[k % styles.length],
      backgroundColor: 'rgba(0,0,0,0)', borderColor: palette[k % palette.length]
    }));
    sets.push({ label: 'Pareto front', front: true, data: chart.front.map(p => ({ x: p[0], y: shown(p[1]), label: p[2] })),
                showLine: true, borderDash: [6, 4], borderWidth: 1.5, borderColor: '#000', backgroundColor: 'rgba(0,0,0,0)',
                pointRadius: 10, pointBorderWidth: 1, pointStyle: 'circle' });
    new Chart(document.getElementById(chart.id), { type: 'scatter', data: { datasets: sets },
      options: Object.assign({}, common, {
        scales: { x: { type: 'linear', title: { display: true, text: 'GB/s (higher is faster)' },
                       grace: '5%', ticks: { maxRotation: 0 } },
                  y: ulpAxis(chart.series.flatMap(s => s.points.map(p => p[1]))) },
        plugins: { tooltip, legend } }), plugins: [drawn] });
  }
})();
)";

// Sorting (click a heading; again to reverse) and filtering (a box per
// column: text matches anywhere, case-insensitive; numbers also take
// <, <=, >, >=, = and a value) of the cell table.
constexpr const char* kTableScript = R"(
(function () {
  const table = document.getElementById('cells');
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const heads = Array.from(table.tHead.rows[0].cells);
  const boxes = Array.from(table.tHead.rows[1].querySelectorAll('input'));
  const count = document.getElementById('cells-shown');
  const value = (row, i) => {
    const td = row.cells[i];
    if (td.dataset.v !== undefined) return parseFloat(td.dataset.v);
    return heads[i].dataset.num ? NaN : td.textContent;
  };
  let sorted = -1, ascending = true;
  heads.forEach((th, i) => th.addEventListener('click', () => {
    ascending = sorted === i ? !ascending : true;
    sorted = i;
    heads.forEach(h => h.classList.remove('sorted-asc', 'sorted-desc'));
    th.classList.add(ascending ? 'sorted-asc' : 'sorted-desc');
    const sign = ascending ? 1 : -1;
    const keyed = rows.map((r, k) => [value(r, i), k, r]);
    keyed.sort((a, b) => {
      const an = typeof a[0] === 'number' && isNaN(a[0]), bn = typeof b[0] === 'number' && isNaN(b[0]);
      if (an !== bn) return an ? 1 : -1;  // n/a last either way
      if (!an && a[0] !== b[0]) return (a[0] < b[0] ? -1 : 1) * sign;
      return a[1] - b[1];
    });
    for (const [, , r] of keyed) body.appendChild(r);
  }));
  const test = (text, i) => {
    text = text.trim();
    if (!text) return () => true;
    const m = heads[i].dataset.num && text.match(/^(<=|>=|<|>|=)\s*(\S+)$/);
    if (m) {
      const x = parseFloat(m[2]);
      const cmp = { '<': (v) => v < x, '<=': (v) => v <= x, '>': (v) => v > x, '>=': (v) => v >= x, '=': (v) => v === x }[m[1]];
      return (row) => { const v = value(row, i); return !isNaN(v) && cmp(v); };
    }
    const needle = text.toLowerCase();
    return (row) => row.cells[i].textContent.toLowerCase().includes(needle);
  };
  const filter = () => {
    const tests = boxes.map((b, i) => test(b.value, i));
    let shown = 0;
    for (const r of rows) {
      const ok = tests.every(t => t(r));
      r.style.display = ok ? '' : 'none';
      shown += ok;
    }
    count.textContent = shown;
  };
  boxes.forEach(b => b.addEventListener('input', filter));
})();
)";

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
      << scan_section(cells)  // cumsum cells only
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
