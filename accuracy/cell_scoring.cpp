#include "accuracy/cell_scoring.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "accuracy/ideal_kernel.hpp"
#include "accuracy/metrics.hpp"
#include "accuracy/scan_metrics.hpp"
#include "formats/hex_float.hpp"

namespace ulpscope::matrix {
namespace {

// docs/spec.md, "Row statistics and the accumulator's own error": the
// statistics' errors in ULPs of their own format, the ideal kernel's error
// and what the kernel adds to it.
void score_statistics(Cell& c, const KernelUnderTest& kut, Dtype out_dtype, const ReductionProblem& p,
                      const ProblemReference& ref, const ReductionResult& res, const ScoredRows* scored,
                      const std::vector<std::optional<double>>& errors, IdealCache& ideal_cache, Saturation sat) {
  const Dtype working = kut.working;
  c.working_dtype = to_string(working);
  const auto row_name = [&](std::size_t row) {
    return fmt::format("row {}", scored ? scored->rows[row] : std::int64_t(row));
  };
  WorstOutputError mean, second;  // the mean; the variance (mean_var) or r (the norms)
  if (p.op == Op::mean_var) {
    for (std::size_t i = 0; i < res.values.size(); ++i) {
      std::string note;
      const auto e = ulp_error(res.values[i], ref.outputs[i].exact, out_dtype, &note, sat);
      (i % 2 == 0 ? mean : second).add(e, note, ref.component_name(i));
    }
    c.mean_ulp_error = mean.value;
    c.variance_ulp_error = second.value;
    c.statistics_note = mean.note.empty() ? second.note : mean.note;
  } else {
    std::vector<double> stats = res.statistics;
    if (stats.empty() && kut.statistics) stats = kut.statistics(p);
    if (stats.size() != 2 * std::size_t(p.rows)) {
      c.statistics_note = kut.no_statistics.empty() ? "the kernel gave no row statistics" : kut.no_statistics;
    } else {
      for (std::size_t row = 0; row < std::size_t(p.rows); ++row) {
        const auto exact = ref.row_statistics(row);
        if (!exact) {
          mean.add(std::nullopt, "its exact statistics are not finite", row_name(row));
          second.add(std::nullopt, "its exact statistics are not finite", row_name(row));
          continue;
        }
        std::string note;
        if (exact->mean) {
          const auto e = ulp_error(stats[2 * row], *exact->mean, working, &note);
          mean.add(e, note, row_name(row));
        }
        note.clear();
        const auto e = ulp_error(stats[2 * row + 1], exact->rstd, working, &note);
        second.add(e, note, row_name(row));
      }
      if (p.op == Op::layernorm) c.mean_ulp_error = mean.value;
      c.rstd_ulp_error = second.value;
      c.statistics_note = mean.note.empty() ? second.note : mean.note;
    }
  }
  const IdealScores& ideal = ideal_cache.get(p, ref, working, out_dtype, sat);
  if (ideal.errors.size() != res.values.size()) return;
  WorstOutputError ideal_worst;
  for (const auto& e : ideal.errors) ideal_worst.add(e, "", "");
  c.ideal_ulp_error = ideal_worst.value;
  c.accumulator_ulp_error = accumulator_ulp_error(errors, ideal.scales);
}

}  // namespace

const IdealScores& IdealCache::get(const ReductionProblem& p, const ProblemReference& ref, Dtype working, Dtype out,
                                   Saturation sat) {
  const std::lock_guard lock(mutex_);
  auto [it, fresh] = scores_.try_emplace({working, out});
  if (fresh) {
    const std::vector<double> outputs = ideal_kernel_outputs(p, ref, working, out, sat);
    for (std::size_t i = 0; i < outputs.size(); ++i)
      it->second.errors.push_back(ulp_error(outputs[i], ref.outputs[i].exact, out, nullptr, sat));
    it->second.scales = conditioning_scales(p, ref, working, out);
  }
  return it->second;
}

void score(Cell& c, const KernelUnderTest& kut, Dtype out_dtype, const ReductionResult& res, const ReductionProblem& p,
           const ProblemReference& ref, const ScoredRows* scored, IdealCache& ideal, Saturation sat) {
  if (res.values.size() != ref.outputs.size())
    throw std::runtime_error(fmt::format("kernel gave {} outputs, the reference has {}", res.values.size(),
                                         ref.outputs.size()));
  // The worst output names the cell (docs/spec.md, "Ops": several outputs).
  std::size_t worst = 0;
  double worst_rank = -1;
  std::optional<double> worst_ulps;
  std::string worst_note;
  bool all_cr = true;
  std::vector<std::optional<double>> errors(res.values.size());
  for (std::size_t i = 0; i < res.values.size(); ++i) {
    std::string note;
    const auto ulps = errors[i] = ulp_error(res.values[i], ref.outputs[i].exact, out_dtype, &note, sat);
    const double rank = ulps ? *ulps : HUGE_VAL;  // a non-finite mismatch is worst
    if (rank > worst_rank) {
      worst_rank = rank;
      worst_ulps = ulps;
      worst = i;
      worst_note = note;
    }
    all_cr = all_cr && correctly_rounded(res.values[i], ref.outputs[i].rounded);
  }
  if (!res.values.empty()) {
    const Reference& r = ref.outputs[worst];
    c.reference_rounded = hex_float(r.rounded);
    c.reference_exact = decimal_of(r);
    c.result = hex_float(res.values[worst]);
    c.ulp_error = worst_ulps;
    c.error_note = worst_note;
    c.component = scored ? fmt::format("row {}, col {}", scored->rows[worst / std::size_t(p.cols)],
                                       worst % std::size_t(p.cols))
                         : ref.component_name(worst);
    if (!res.unrounded.empty()) c.rel_error = rel_error(res.unrounded[worst], r.exact);
    c.condition = ref.condition(worst);
    if (kut.bound_ratio) c.bound_ratio = kut.bound_ratio(ref, p, res, worst);
    if (is_elementwise_output(p.op) || p.op == Op::mean_var) score_statistics(c, kut, out_dtype, p, ref, res, scored, errors, ideal, sat);
  }
  c.correctly_rounded = all_cr;
  if (is_scan(p.op)) {
    std::vector<bool> correct(res.values.size());
    for (std::size_t i = 0; i < res.values.size(); ++i)
      correct[i] = correctly_rounded(res.values[i], ref.outputs[i].rounded);
    c.scan = scan_profile(errors, correct, p.length(), worst);
  }
  if (scored) {
    const std::string sample =
        fmt::format("scored and compared with the model on {} of {} rows, evenly spaced; reproducibility over "
                    "every output",
                    scored->rows.size(), c.rows.value_or(0));
    c.note = c.note.empty() ? sample : c.note + "; " + sample;
  }
}

}  // namespace ulpscope::matrix
