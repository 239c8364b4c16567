#include "reports/recommend.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

namespace ulpscope {

BudgetMetric budget_metric(const RecommendRequest& r) {
  if (r.metric) return *r.metric;
  return is_elementwise_output(r.op) ? BudgetMetric::accumulator : BudgetMetric::strict;
}

double budget(const RecommendRequest& r) {
  // docs/spec.md, "Choosing an accumulator": statistics within about one ulp
  // of their working format score up to about 1.5 accumulator ulps.
  if (r.budget) return *r.budget;
  return budget_metric(r) == BudgetMetric::accumulator ? 2.0 : 1.0;
}

MatrixSettings recommend_matrix(const RecommendRequest& r) {
  MatrixSettings s = default_matrix(false);
  s.ops = {r.op};
  s.dtypes = {r.dtype};
  s.accumulators.clear();
  for (const auto& [acc, name] : kAccumulatorNames) s.accumulators.push_back(acc);
  s.shapes = {Shape::tree};
  s.seeds = r.seeds;
  s.permutations = 0;
  if (!r.distributions.empty()) s.distributions = r.distributions;
  const bool rowwise = is_elementwise_output(r.op);
  // Norms: rows of the given width; norm2 and sum: one vector of it.
  s.sizes = {rowwise ? r.rows * r.hidden : r.hidden};
  s.row_cols = r.hidden;
  s.eps = r.eps;
  return s;
}

double modelled_cost(Accumulator acc) { return facts_of(acc).modelled_cost; }

std::string group_name(const std::string& distribution) {
  if (const auto d = parse_distribution(distribution)) return std::string(to_string(group_of(d->d)));
  return "input";
}

const GroupVerdict* Candidate::verdict(const std::string& group) const {
  for (const GroupVerdict& g : groups)
    if (g.group == group) return &g;
  return nullptr;
}

std::vector<std::string> Recommendation::unmet() const {
  std::vector<std::string> out;
  for (const GroupChoice& g : groups)
    if (!g.chosen) out.push_back(g.group);
  return out;
}

namespace {

std::string where_of(const Cell& c) {
  return fmt::format("{}, seed {}{}{}", c.distribution, c.seed, c.component.empty() ? "" : ", ", c.component);
}

// The candidate's verdict on one cell: the budget metric's value, or why it has none.
struct CellVerdict {
  std::optional<double> value;
  std::string why_undefined;
};
CellVerdict judge(const Cell& c, BudgetMetric metric) {
  if (c.status != "ok") return {std::nullopt, c.status};
  if (metric == BudgetMetric::accumulator) {
    if (c.accumulator_ulp_error) return {c.accumulator_ulp_error, ""};
    if (!c.ulp_error) return {std::nullopt, c.error_note.empty() ? "undefined error" : c.error_note};
    return {std::nullopt, c.working_dtype.empty() ? "no accumulator error for this op" : "undefined accumulator error"};
  }
  if (c.ulp_error) return {c.ulp_error, ""};
  return {std::nullopt, c.error_note.empty() ? "undefined error" : c.error_note};
}

}  // namespace

Recommendation recommend(const RecommendRequest& r, const std::vector<Cell>& cells, bool measured_costs) {
  Recommendation rec;
  rec.measured = measured_costs;
  rec.cost_basis = measured_costs
                       ? "measured: median milliseconds per call on the GPU (CUDA events), summed over the cells"
                       : "estimated, not measured (CPU backend, no timing): relative work per element of the tree "
                         "kernel, naive/fp32 1, pairwise 1.2, kahan 1.5, welford 2, fp64 2, two_pass 2, exact 3; "
                         "users' kernels unknown";
  const BudgetMetric metric = budget_metric(r);
  const double limit = budget(r);
  // Groups and distributions in the matrix's order.
  std::vector<std::string> dist_order;
  for (const Cell& c : cells)
    if (std::find(dist_order.begin(), dist_order.end(), c.distribution) == dist_order.end())
      dist_order.push_back(c.distribution);
  for (const auto& [g, name] : kDistributionGroupNames) rec.groups.push_back({std::string(name), {}, std::nullopt});
  rec.groups.push_back({"input", {}, std::nullopt});
  for (const std::string& d : dist_order)
    for (GroupChoice& g : rec.groups)
      if (g.group == group_name(d)) g.distributions.push_back(d);
  rec.groups.erase(std::remove_if(rec.groups.begin(), rec.groups.end(),
                                  [](const GroupChoice& g) { return g.distributions.empty(); }),
                   rec.groups.end());

  // The cells of each candidate, in distribution order.
  std::map<std::string, std::vector<const Cell*>> by_candidate;
  std::vector<std::string> names;
  for (const Cell& c : cells) {
    const bool user = c.shape != "tree";
    const std::string name = user ? c.shape : c.accumulator;
    if (!by_candidate.count(name)) names.push_back(name);
    by_candidate[name].push_back(&c);
  }
  const auto dist_index = [&](const Cell* c) {
    return std::find(dist_order.begin(), dist_order.end(), c->distribution) - dist_order.begin();
  };
  for (const std::string& name : names) {
    std::vector<const Cell*>& mine = by_candidate[name];
    std::stable_sort(mine.begin(), mine.end(), [&](const Cell* a, const Cell* b) { return dist_index(a) < dist_index(b); });
    Candidate k;
    k.name = name;
    k.accumulator = mine.front()->accumulator;
    k.user_kernel = mine.front()->shape != "tree";
    double measured = 0;
    bool all_timed = true;
    for (const GroupChoice& g : rec.groups) {
      GroupVerdict v;
      v.group = g.group;
      v.meets = true;
      for (const Cell* c : mine) {
        if (group_name(c->distribution) != g.group) continue;
        const CellVerdict cv = judge(*c, metric);
        if (c->ulp_error && (!v.worst_strict || *c->ulp_error > *v.worst_strict)) v.worst_strict = c->ulp_error;
        const bool fails = !cv.value || *cv.value > limit;
        if (cv.value && (!v.worst || *cv.value > *v.worst)) {
          v.worst = cv.value;
          v.worst_where = where_of(*c);
        }
        if (fails && v.meets) {
          v.meets = false;
          v.first_failing = c->distribution;
          v.why_not = cv.value ? fmt::format("{:.3g} on {} (budget {:g})", *cv.value, where_of(*c), limit)
                               : fmt::format("{} on {}", cv.why_undefined, where_of(*c));
        }
      }
      k.groups.push_back(std::move(v));
    }
    for (const Cell* c : mine) {
      if (c->gbps && *c->gbps > 0) {
        // Bytes of input over GB/s: milliseconds per call.
        measured += double(c->n) * format_info(*parse_dtype(c->dtype)).bits / 8.0 / (*c->gbps * 1e6);
      } else {
        all_timed = false;
      }
    }
    if (measured_costs) {
      if (all_timed) k.cost = measured;
    } else if (!k.user_kernel) {
      if (const auto acc = parse_in(kAccumulatorNames, k.accumulator)) k.cost = modelled_cost(*acc);
    }
    rec.candidates.push_back(std::move(k));
  }
  std::stable_sort(rec.candidates.begin(), rec.candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.cost.has_value() != b.cost.has_value()) return a.cost.has_value();
    return a.cost && *a.cost < *b.cost;
  });
  for (GroupChoice& g : rec.groups)
    for (const Candidate& k : rec.candidates)
      if (const GroupVerdict* v = k.verdict(g.group); v && v->meets) {
        g.chosen = k.name;
        break;
      }
  return rec;
}

namespace {

const char* metric_field(BudgetMetric m) {
  return m == BudgetMetric::accumulator ? "accumulator_ulp_error" : "ulp_error";
}

std::string cost_text(const Candidate& k) { return k.cost ? fmt::format("{:.4g}", *k.cost) : "unknown"; }

}  // namespace

void write_recommendation(const RecommendRequest& r, const Recommendation& rec, std::ostream& out) {
  const char* width_word = is_elementwise_output(r.op) ? "hidden size" : "length";
  const BudgetMetric metric = budget_metric(r);
  fmt::print(out, "Accumulator for {} over {} at {} {}, eps {:g}\n", to_string(r.op), to_string(r.dtype), width_word,
             r.hidden, r.eps);
  fmt::print(out, "Budget: {:g} in {}{}\n", budget(r), metric_field(metric),
             metric == BudgetMetric::accumulator
                 ? " (the error the accumulator adds to what the format and the row's conditioning force; the "
                   "strict ulp_error beside it)"
                 : " (the strict error against the correctly rounded result)");
  fmt::print(out, "Cost: {}\n\n", rec.cost_basis);
  for (const GroupChoice& g : rec.groups) {
    if (g.chosen) fmt::print(out, "{} inputs ({}): {}\n", g.group, fmt::join(g.distributions, ", "), *g.chosen);
    else fmt::print(out, "{} inputs ({}): no candidate meets the budget\n", g.group, fmt::join(g.distributions, ", "));
  }
  fmt::print(out, "\n{:<14} {:>9}", "candidate", "cost");
  for (const GroupChoice& g : rec.groups) fmt::print(out, "  {:<26}", g.group + " (worst, strict)");
  fmt::print(out, "\n");
  for (const Candidate& k : rec.candidates) {
    fmt::print(out, "{:<14} {:>9}", k.name, cost_text(k));
    for (const GroupChoice& g : rec.groups) {
      const GroupVerdict* v = k.verdict(g.group);
      std::string text = !v ? "n/a"
                         : v->meets ? fmt::format("yes ({:.3g}, {:.3g})", v->worst.value_or(0), v->worst_strict.value_or(0))
                                    : "no: " + v->first_failing;
      fmt::print(out, "  {:<26}", text);
    }
    fmt::print(out, "\n");
  }
  bool any_failed = false;
  for (const Candidate& k : rec.candidates)
    for (const GroupVerdict& v : k.groups)
      if (!v.meets) {
        if (!any_failed) fmt::print(out, "\nWhy not:\n");
        any_failed = true;
        fmt::print(out, "  {} on {}: {}\n", k.name, v.group, v.why_not);
      }
}

void write_recommendation_json(const RecommendRequest& r, const Recommendation& rec, std::ostream& out) {
  using ojson = nlohmann::ordered_json;
  const auto number = [](std::optional<double> v) {
    return v && std::isfinite(*v) ? ojson(*v) : ojson(nullptr);
  };
  ojson doc;
  doc["schema"] = "ulpscope.recommendation/1";
  doc["op"] = std::string(to_string(r.op));
  doc["dtype"] = std::string(to_string(r.dtype));
  doc["hidden"] = r.hidden;
  doc["eps"] = r.eps;
  doc["budget"] = {{"metric", metric_field(budget_metric(r))}, {"value", budget(r)}};
  doc["cost_basis"] = rec.cost_basis;
  doc["cost_measured"] = rec.measured;
  doc["groups"] = ojson::array();
  for (const GroupChoice& g : rec.groups)
    doc["groups"].push_back({{"group", g.group},
                             {"distributions", g.distributions},
                             {"chosen", g.chosen ? ojson(*g.chosen) : ojson(nullptr)}});
  doc["candidates"] = ojson::array();
  for (const Candidate& k : rec.candidates) {
    ojson verdicts = ojson::object();
    for (const GroupVerdict& v : k.groups)
      verdicts[v.group] = {{"meets", v.meets},
                           {"first_failing", v.meets ? ojson(nullptr) : ojson(v.first_failing)},
                           {"why_not", v.why_not},
                           {"worst", number(v.worst)},
                           {"worst_where", v.worst_where},
                           {"worst_ulp_error", number(v.worst_strict)}};
    doc["candidates"].push_back({{"name", k.name},
                                 {"accumulator", k.accumulator},
                                 {"user_kernel", k.user_kernel},
                                 {"cost", number(k.cost)},
                                 {"groups", verdicts}});
  }
  out << doc.dump(2) << '\n';
}

}  // namespace ulpscope
