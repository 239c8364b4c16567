#include "reports/html_views.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "reports/cell_facts.hpp"
#include "reports/html_report.hpp"
#include "reports/verdict.hpp"

namespace ulpscope::html {

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

namespace {

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

}  // namespace

std::string why_not_drawn(int cells, int total) {
  if (cells == 0) return "Every cell is drawn.";
  return fmt::format("{} of {} cells are not drawn: their max ulp error is undefined (an infinity or NaN in the "
                     "result or the reference: see the table's error note) or n is 0.",
                     cells, total);
}

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
namespace {

struct KernelStats {
  Worst worst;
  std::optional<double> gbps;
  std::int64_t gbps_n = -1;
};

}  // namespace

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
namespace {

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

}  // namespace

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
namespace {

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

}  // namespace

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

}  // namespace ulpscope::html
