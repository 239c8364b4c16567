#include "reports/gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "kernels/shape.hpp"
#include "reports/json_report.hpp"
#include "reports/markdown_report.hpp"

namespace ulpscope {
namespace {

std::map<CellKey, const Cell*> index_cells(const Report& report, std::string_view which) {
  std::map<CellKey, const Cell*> index;
  for (const Cell& c : report.cells)
    if (!index.emplace(cell_key(c), &c).second)
      throw ReportInputError(fmt::format("{} report: cell \"{}\" appears twice", which, cell_label(c)));
  return index;
}

// The first setting that differs, as "sizes: [1024] vs [4096]".
std::string settings_difference(const nlohmann::json& a, const nlohmann::json& b) {
  for (const auto& [key, value] : a.items()) {
    const auto it = b.find(key);
    if (it == b.end()) return fmt::format("{}: {} vs (absent)", key, value.dump());
    if (*it != value) return fmt::format("{}: {} vs {}", key, value.dump(), it->dump());
  }
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) return fmt::format("{}: (absent) vs {}", key, value.dump());
  return {};
}

std::string bool_text(std::optional<bool> b) { return b ? (*b ? "true" : "false") : "null"; }

void compare_cell(const Cell& b, const Cell& c, const GateOptions& options,
                  const std::vector<std::string>& nondeterministic_kernels, GateResult& result) {
  const CellKey key = cell_key(b);
  auto add = [&](FindingKind kind, std::string change) { result.findings.push_back({kind, key, std::move(change)}); };

  if (!is_failed(b) && is_failed(c)) add(FindingKind::failed, fmt::format("status ok -> {}", c.status));
  if (is_failed(b) && !is_failed(c)) add(FindingKind::improved, fmt::format("status {} -> ok", b.status));
  if (b.ulp_error && c.ulp_error) {
    if (*c.ulp_error > *b.ulp_error + options.ulp_tolerance)
      add(FindingKind::ulp_error_grew, fmt::format("max ulp_error {} -> {} (tolerance {})", short_number(b.ulp_error),
                                                   short_number(c.ulp_error), options.ulp_tolerance));
    else if (*c.ulp_error < *b.ulp_error)
      add(FindingKind::improved,
          fmt::format("max ulp_error {} -> {}", short_number(b.ulp_error), short_number(c.ulp_error)));
  } else if (b.ulp_error && !c.ulp_error) {
    add(FindingKind::ulp_error_undefined,
        fmt::format("max ulp_error {} -> undefined ({})", short_number(b.ulp_error),
                    c.error_note.empty() ? "no reason given" : c.error_note));
  } else if (!b.ulp_error && c.ulp_error) {
    add(FindingKind::improved, fmt::format("max ulp_error undefined -> {}", short_number(c.ulp_error)));
  }
  if (b.correctly_rounded && !c.correctly_rounded)
    add(FindingKind::no_longer_correctly_rounded,
        fmt::format("correctly_rounded true -> false (result {}, reference {})", c.result, c.reference_rounded));
  else if (!b.correctly_rounded && c.correctly_rounded)
    add(FindingKind::improved, "correctly_rounded false -> true");

  struct Repro {
    const char* what;
    std::optional<int> before, after;
  };
  const Repro repro[] = {
      {"distinct_results", b.distinct_results, c.distinct_results},
      {"distinct_across_configs", b.distinct_across_configs, c.distinct_across_configs},
      {"distinct_across_permutations", b.distinct_across_permutations, c.distinct_across_permutations},
  };
  // A shape whose order varies by design (atomic: docs/spec.md, "Kernel shapes"),
  // or a user kernel declared non-deterministic (the settings' list), promises
  // no determinism: a baseline that happened to see one result is a
  // measurement, and a later run that sees two is not a regression.
  const auto shape = parse_shape(b.shape);
  const bool promises_determinism =
      shape ? is_deterministic_order(*shape)
            : std::find(nondeterministic_kernels.begin(), nondeterministic_kernels.end(), b.shape) ==
                  nondeterministic_kernels.end();
  for (const auto& r : repro)
    if (promises_determinism && r.before == 1 && r.after.value_or(0) > 1)
      add(FindingKind::became_non_deterministic, fmt::format("{} 1 -> {}", r.what, *r.after));

  // A GPU result that matched its model and now does not, or is no longer
  // checked, is a regression either way: the gate cannot vouch for it.
  if (b.matches_model == true && c.matches_model != true)
    add(FindingKind::model_mismatch, fmt::format("matches_model true -> {}", bool_text(c.matches_model)));

  if (options.throughput_tolerance) {
    if (b.gbps && c.gbps) {
      if (*c.gbps < *b.gbps * (1 - *options.throughput_tolerance))
        add(FindingKind::throughput_dropped,
            fmt::format("{:.1f} -> {:.1f} GB/s ({:+.1f} %, tolerance -{:.1f} %)", *b.gbps, *c.gbps,
                        (*c.gbps / *b.gbps - 1) * 100, *options.throughput_tolerance * 100));
    } else {
      ++result.throughput_unmeasured;
    }
  }
}

std::string summary(const Report& baseline, const Report& current, const GateOptions& options,
                    const GateResult& result) {
  const std::size_t regressions = result.regressions();
  std::string md = fmt::format("### ulpscope gate: {}\n\n", regressions == 0 ? "✅ pass" : "❌ FAIL");
  md += fmt::format("**{} regression{}** in {} baseline cells ({} compared).\n\n", regressions,
                    regressions == 1 ? "" : "s", result.baseline_cells, result.compared_cells);
  auto who = [](const ReportHeader& h) {
    return fmt::format("commit {} ({} backend on {})", h.git_commit.empty() ? "unknown" : h.git_commit,
                       h.backend, h.device);
  };
  md += fmt::format("- baseline: {}\n- current: {}\n", markdown_text(who(baseline.header)),
                    markdown_text(who(current.header)));
  md += fmt::format("- ulp tolerance: {}; throughput: {}\n", options.ulp_tolerance,
                    options.throughput_tolerance
                        ? fmt::format("a drop of at most {:.1f} %", *options.throughput_tolerance * 100)
                        : std::string("not checked"));
  if (options.throughput_tolerance && result.throughput_unmeasured > 0)
    md += fmt::format("- throughput not compared in {} cells (not measured)\n", result.throughput_unmeasured);
  md += "\n";

  constexpr std::size_t kMaxChars = 60000;  // GitHub's comment limit is 65536
  auto table = [&](bool regression_rows) {
    std::string t = "| | cell | change |\n|---|---|---|\n";
    std::size_t rows = 0, left = 0;
    for (const auto& f : result.findings) {
      if (is_regression(f.kind) != regression_rows) continue;
      std::string row = fmt::format("| {} | {} | {} |\n", to_string(f.kind), markdown_text(cell_label(f.cell)),
                                    markdown_text(f.change));
      if (md.size() + t.size() + row.size() + 200 > kMaxChars) {
        ++left;
        continue;
      }
      t += row;
      ++rows;
    }
    if (left > 0) t += fmt::format("\n{} more left out to fit a comment.\n", left);
    return std::pair{rows + left, t};
  };
  if (regressions > 0) {
    auto [n, t] = table(true);
    md += "#### Regressions\n\n" + t + "\n";
  }
  const std::size_t others = result.findings.size() - regressions;
  if (others > 0) {
    auto [n, t] = table(false);
    md += fmt::format("<details><summary>{} improvement{} and new cells</summary>\n\n{}\n</details>\n", n,
                      n == 1 ? "" : "s", t);
  }
  return md;
}

}  // namespace

std::size_t GateResult::regressions() const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(), [](const GateFinding& f) { return is_regression(f.kind); }));
}

namespace {

// What check_comparable checks, kept for run_gate: the (equal) settings,
// parsed once, and each report's cells by key.
struct Comparable {
  nlohmann::json settings;
  std::map<CellKey, const Cell*> baseline_index, current_index;
};

Comparable comparable(const Report& baseline, const Report& current, const GateOptions& options) {
  const auto& b = baseline.header;
  const auto& c = current.header;
  // A gate must not pass on nothing (docs/bad-inputs.md): a report without cells
  // measured nothing, and a comparison with it would vouch for nothing.
  if (baseline.cells.empty())
    throw ReportInputError("the baseline report has no cells: a gate against it would compare nothing");
  if (current.cells.empty()) throw ReportInputError("the current report has no cells: it measured nothing");
  if (b.backend != c.backend)
    throw ReportInputError(
        fmt::format("reports not comparable: baseline backend \"{}\", current \"{}\"", b.backend, c.backend));
  nlohmann::json bs, cs;
  try {
    bs = nlohmann::json::parse(b.settings_json);
    cs = nlohmann::json::parse(c.settings_json);
  } catch (const nlohmann::json::parse_error&) {
    throw ReportInputError("reports not comparable: settings are not valid JSON");
  }
  if (bs != cs)
    throw ReportInputError(
        fmt::format("reports not comparable: different settings (baseline vs current) {}", settings_difference(bs, cs)));
  if (options.throughput_tolerance && b.device != c.device)
    throw ReportInputError(fmt::format("--throughput-tolerance: baseline measured on \"{}\", current on \"{}\"",
                                       b.device, c.device));
  const auto& t = options.throughput_tolerance;
  if (!(options.ulp_tolerance >= 0) || (t && !(*t >= 0 && *t <= 1)))
    throw ReportInputError("gate tolerances: --ulp-tolerance must be >= 0, --throughput-tolerance in [0, 1]");
  return {bs, index_cells(baseline, "baseline"), index_cells(current, "current")};
}

}  // namespace

void check_comparable(const Report& baseline, const Report& current, const GateOptions& options) {
  comparable(baseline, current, options);
}

GateResult run_gate(const Report& baseline, const Report& current, const GateOptions& options) {
  const Comparable cmp = comparable(baseline, current, options);
  std::vector<std::string> nondeterministic;
  if (cmp.settings.is_object() && cmp.settings.contains("nondeterministic_kernels"))
    nondeterministic = cmp.settings.at("nondeterministic_kernels").get<std::vector<std::string>>();
  GateResult result;
  result.baseline_cells = baseline.cells.size();
  for (const Cell& b : baseline.cells) {
    const auto it = cmp.current_index.find(cell_key(b));
    if (it == cmp.current_index.end()) {
      result.findings.push_back({FindingKind::cell_missing, cell_key(b), "in the baseline, not in the current report"});
      continue;
    }
    ++result.compared_cells;
    compare_cell(b, *it->second, options, nondeterministic, result);
  }
  if (result.compared_cells == 0)
    throw ReportInputError(fmt::format("the gate compared no cells: none of the baseline's {} cells is in the current report",
                                       result.baseline_cells));
  for (const Cell& c : current.cells)
    if (!cmp.baseline_index.count(cell_key(c)))
      result.findings.push_back({FindingKind::new_cell, cell_key(c), "not in the baseline"});
  result.markdown = summary(baseline, current, options, result);
  return result;
}

int gate_exit_status(const GateResult& result) { return result.regressions() == 0 ? kGatePass : kGateRegression; }

GateOutcome gate_report_files(const std::filesystem::path& baseline, const std::filesystem::path& current,
                              const GateOptions& options) {
  GateOutcome outcome;
  try {
    const Report b = read_report_file(baseline);
    const Report c = read_report_file(current);
    outcome.result = run_gate(b, c, options);
    outcome.status = gate_exit_status(*outcome.result);
  } catch (const ReportInputError& e) {
    outcome.status = kGateInputError;
    outcome.error = e.what();
    outcome.result.reset();
  }
  return outcome;
}

}  // namespace ulpscope
