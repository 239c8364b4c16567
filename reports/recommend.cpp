#include "reports/recommend.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

namespace ulpscope {

MatrixSettings recommend_matrix(const RecommendRequest& r) {
  MatrixSettings s = default_matrix(false);
  s.ops = {r.op};
  s.dtypes = {r.dtype};
  s.accumulators.clear();
  for (const auto& [acc, name] : kAccumulatorNames) s.accumulators.push_back(acc);
  s.shapes = {Shape::tree};
  s.seeds = r.seeds;
  s.permutations = 0;
  const bool rowwise = is_elementwise_output(r.op);
  // Norms: 32 rows of the given width; norm2 and sum: one vector of it.
  s.sizes = {rowwise ? 32 * r.hidden : r.hidden};
  s.row_cols = r.hidden;
  return s;
}

double modelled_cost(Accumulator acc) {
  // Relative work per element in the tree kernel, memory traffic equal
  // (every accumulator reads each input once, but two_pass reads it twice):
  // naive/fp32 one add (or FMA); pairwise the same adds in another order plus
  // a small stack; kahan/Neumaier 4 flops and a compare per element (Higham
  // 2002, Alg. 4.2); welford a division per element; fp64 runs on fp64 units
  // (half the fp32 rate on H100, far less on consumer parts); two_pass reads
  // the row twice; exact keeps an integer or binned state per thread.
  switch (acc) {
    case Accumulator::naive: return 1.0;
    case Accumulator::fp32: return 1.0;
    case Accumulator::pairwise: return 1.2;
    case Accumulator::kahan: return 1.5;
    case Accumulator::welford: return 2.0;
    case Accumulator::fp64: return 2.0;
    case Accumulator::two_pass: return 2.0;
    case Accumulator::exact: return 3.0;
  }
  return 10.0;
}

Recommendation recommend(const RecommendRequest& r, const std::vector<Cell>& cells, bool measured_costs) {
  Recommendation rec;
  rec.cost_basis = measured_costs
                       ? "measured: median milliseconds per call on the GPU, summed over the distributions"
                       : "modelled (CPU backend, no timing): relative work per element, naive/fp32 1, pairwise 1.2, "
                         "kahan 1.5, welford 2, fp64 2, two_pass 2, exact 3";
  std::map<std::string, Candidate> by_acc;
  for (const Cell& c : cells) {
    Candidate& k = by_acc[c.accumulator];
    k.accumulator = c.accumulator;
    ++k.cells;
    const std::string where = fmt::format("{}, seed {}{}{}", c.distribution, c.seed,
                                          c.component.empty() ? "" : ", ", c.component);
    if (c.status != "ok") {
      ++k.failed_cells;
      if (k.why_not.empty()) k.why_not = fmt::format("{} on {}", c.status, where);
      continue;
    }
    if (!c.ulp_error) {
      if (k.why_not.empty()) k.why_not = fmt::format("{} on {}", c.error_note, where);
      k.worst_ulps.reset();
      k.worst_where = where;
      continue;
    }
    if (k.why_not.empty() && (!k.worst_ulps || *c.ulp_error > *k.worst_ulps)) {
      k.worst_ulps = c.ulp_error;
      k.worst_where = where;
    }
    if (measured_costs && c.gbps && *c.gbps > 0) {
      // Bytes of input over GB/s: milliseconds per call.
      k.cost += double(c.n) * format_info(*parse_dtype(c.dtype)).bits / 8.0 / (*c.gbps * 1e6);
    }
  }
  for (auto& [name, k] : by_acc) {
    if (!measured_costs) k.cost = modelled_cost(*parse_in(kAccumulatorNames, name));
    if (k.why_not.empty() && k.worst_ulps && *k.worst_ulps > r.ulp_tolerance)
      k.why_not = fmt::format("{:.3g} ulps on {} (budget {:g})", *k.worst_ulps, k.worst_where, r.ulp_tolerance);
    k.meets = k.why_not.empty() && k.worst_ulps.has_value();
    rec.candidates.push_back(k);
  }
  std::stable_sort(rec.candidates.begin(), rec.candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.cost < b.cost; });
  for (const Candidate& k : rec.candidates)
    if (k.meets) {
      rec.chosen = k.accumulator;
      break;
    }
  return rec;
}

void write_recommendation(const RecommendRequest& r, const Recommendation& rec, std::ostream& out) {
  const char* width_word = is_elementwise_output(r.op) ? "hidden size" : "length";
  if (rec.chosen) {
    fmt::print(out, "Recommended accumulator for {} over {} at {} {}: {} (budget {:g} ulps on every distribution)\n",
               to_string(r.op), to_string(r.dtype), width_word, r.hidden, *rec.chosen, r.ulp_tolerance);
  } else {
    fmt::print(out, "No accumulator keeps {} over {} at {} {} within {:g} ulps on every distribution\n",
               to_string(r.op), to_string(r.dtype), width_word, r.hidden, r.ulp_tolerance);
  }
  fmt::print(out, "Cost: {}\n\n", rec.cost_basis);
  fmt::print(out, "{:<10} {:>10} {:>12}  {:<5} {}\n", "candidate", "cost", "worst ulps", "meets", "worst case / why not");
  for (const Candidate& k : rec.candidates) {
    const std::string ulps = k.worst_ulps ? fmt::format("{:.3g}", *k.worst_ulps) : "undefined";
    fmt::print(out, "{:<10} {:>10.4g} {:>12}  {:<5} {}\n", k.accumulator, k.cost, ulps, k.meets ? "yes" : "no",
               k.meets ? k.worst_where : k.why_not);
  }
}

}  // namespace ulpscope
