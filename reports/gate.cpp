#include "reports/gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "formats/hex_float.hpp"
#include "kernels/shape.hpp"
#include "reports/atomic_file.hpp"
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

// A stored hex-float with its decimal value beside it: "0x1.004p+0 (1.00390625)".
// The decimal is the shortest that reads back to the same double.
std::string with_decimal(const std::string& hex) {
  const auto v = parse_hex_float(hex);
  if (!v || !std::isfinite(*v)) return hex;
  return fmt::format("{} ({})", hex, *v);
}

// What a cell computed, for a reader: the result before and after, the
// correctly rounded reference and the exact value in decimal.
std::string values_text(const Cell& b, const Cell& c) {
  std::string text = b.result == c.result ? fmt::format("result {}", with_decimal(c.result))
                                          : fmt::format("result {} -> {}", with_decimal(b.result), with_decimal(c.result));
  text += fmt::format(", correctly rounded {}", with_decimal(c.reference_rounded));
  if (!c.reference_exact.empty()) text += fmt::format(", exact {}", c.reference_exact);
  if (!c.component.empty()) text += fmt::format(" (worst output: {})", c.component);
  return text;
}

void compare_cell(const Cell& b, const Cell& c, const GateOptions& options,
                  const std::vector<std::string>& nondeterministic_kernels, GateResult& result) {
  const CellKey key = cell_key(b);
  std::vector<GateFinding> found;
  auto add = [&](FindingKind kind, std::string change) { found.push_back({kind, key, std::move(change)}); };
  // The values behind a change of error, told once per cell.
  bool values_told = false;
  auto with_values = [&](std::string change) {
    if (values_told) return change;
    values_told = true;
    return change + "; " + values_text(b, c);
  };

  if (!is_failed(b) && is_failed(c)) add(FindingKind::failed, fmt::format("status ok -> {}", c.status));
  if (is_failed(b) && !is_failed(c)) add(FindingKind::improved, fmt::format("status {} -> ok", b.status));
  if (b.ulp_error && c.ulp_error) {
    if (*c.ulp_error > *b.ulp_error + options.ulp_tolerance)
      add(FindingKind::ulp_error_grew,
          with_values(fmt::format("max ulp_error {} -> {} (tolerance {})", short_number(b.ulp_error),
                                  short_number(c.ulp_error), options.ulp_tolerance)));
    else if (*c.ulp_error < *b.ulp_error)
      add(FindingKind::improved,
          fmt::format("max ulp_error {} -> {}", short_number(b.ulp_error), short_number(c.ulp_error)));
  } else if (b.ulp_error && !c.ulp_error) {
    add(FindingKind::ulp_error_undefined,
        with_values(fmt::format("max ulp_error {} -> undefined ({})", short_number(b.ulp_error),
                                c.error_note.empty() ? "no reason given" : c.error_note)));
  } else if (!b.ulp_error && c.ulp_error) {
    add(FindingKind::improved, fmt::format("max ulp_error undefined -> {}", short_number(c.ulp_error)));
  }
  if (b.correctly_rounded && !c.correctly_rounded)
    add(FindingKind::no_longer_correctly_rounded, with_values("correctly_rounded true -> false"));
  else if (!b.correctly_rounded && c.correctly_rounded)
    add(FindingKind::improved, "correctly_rounded false -> true");

  struct Repro {
    FindingKind kind;
    const char* what;
    std::optional<int> before, after;
  };
  const Repro repro[] = {
      {FindingKind::became_non_deterministic, "distinct_results", b.distinct_results, c.distinct_results},
      {FindingKind::became_config_dependent, "distinct_across_configs", b.distinct_across_configs,
       c.distinct_across_configs},
      {FindingKind::became_order_sensitive, "distinct_across_permutations", b.distinct_across_permutations,
       c.distinct_across_permutations},
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
      add(r.kind, fmt::format("{} 1 -> {}", r.what, *r.after));

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

  // A cell that regressed is not also "improved": a smaller ulp error beside
  // a lost correct rounding is context for the regression, told with it.
  const bool regressed = std::any_of(found.begin(), found.end(), [](const GateFinding& f) { return is_regression(f.kind); });
  for (GateFinding& f : found) {
    if (regressed && f.kind == FindingKind::improved) f.kind = FindingKind::also_changed;
    result.findings.push_back(std::move(f));
  }
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// One table row per cell, its reasons together, in the order of the findings.
struct CellRow {
  CellKey cell;
  std::vector<const GateFinding*> reasons;
};
std::vector<CellRow> rows_of(const std::vector<GateFinding>& findings, bool regressed) {
  std::vector<CellRow> rows;
  std::map<CellKey, std::size_t> at;
  std::map<CellKey, bool> cell_regressed;
  for (const auto& f : findings) cell_regressed[f.cell] = cell_regressed[f.cell] || is_regression(f.kind);
  for (const auto& f : findings) {
    if (cell_regressed.at(f.cell) != regressed) continue;
    auto [it, inserted] = at.try_emplace(f.cell, rows.size());
    if (inserted) rows.push_back({f.cell, {}});
    rows[it->second].reasons.push_back(&f);
  }
  return rows;
}

std::string summary(const Report& baseline, const Report& current, const GateOptions& options,
                    const GateResult& result) {
  const std::size_t regressed = result.regressed_cells();
  const std::vector<CellRow> bad = rows_of(result.findings, true);
  const std::vector<CellRow> good = rows_of(result.findings, false);
  std::size_t improved = 0, added = 0;
  for (const auto& row : good) (row.reasons.front()->kind == FindingKind::new_cell ? added : improved) += 1;

  std::string md = fmt::format("### ulpscope gate: {}{}\n\n", regressed == 0 ? "✅ pass" : "❌ FAIL",
                               options.label.empty() ? "" : " · " + markdown_text(options.label));
  md += fmt::format("**{} of {} baseline cells regressed** ({} compared", regressed, result.baseline_cells,
                    result.compared_cells);
  md += fmt::format("); {} improved, {}.\n\n", plural(improved, "cell", "cells"),
                    plural(added, "new cell", "new cells"));
  // Each reason with the number of cells it holds for (a cell may have several).
  if (regressed > 0) {
    std::map<FindingKind, std::size_t> cells_by_kind;
    for (const auto& row : bad) {
      std::vector<FindingKind> kinds;
      for (const GateFinding* f : row.reasons)
        if (is_regression(f->kind) && std::find(kinds.begin(), kinds.end(), f->kind) == kinds.end())
          kinds.push_back(f->kind);
      for (FindingKind k : kinds) ++cells_by_kind[k];
    }
    std::string reasons;
    for (const auto& [kind, n] : cells_by_kind)
      reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", to_string(kind), plural(n, "cell", "cells"));
    md += "Reasons: " + reasons + ".\n\n";
  }
  auto who = [](const ReportHeader& h) {
    return fmt::format("commit {} ({} backend on {})", h.git_commit.empty() ? "unknown" : h.git_commit,
                       h.backend, h.device);
  };
  md += fmt::format("- current: {}{}\n- baseline: {}\n",
                    options.label.empty() ? "" : "**" + markdown_text(options.label) + "**, ",
                    markdown_text(who(current.header)), markdown_text(who(baseline.header)));
  md += fmt::format("- ulp tolerance: {}; throughput: {}\n", options.ulp_tolerance,
                    options.throughput_tolerance
                        ? fmt::format("a drop of at most {:.1f} %", *options.throughput_tolerance * 100)
                        : std::string("not checked"));
  if (options.throughput_tolerance && result.throughput_unmeasured > 0)
    md += fmt::format("- throughput not compared in {} cells (not measured)\n", result.throughput_unmeasured);
  md += "\n";

  constexpr std::size_t kMaxChars = 60000;  // GitHub's comment limit is 65536
  auto table = [&](const std::vector<CellRow>& cells) {
    std::string t = "| cell | what changed |\n|---|---|\n";
    std::size_t left = 0;
    for (const auto& row : cells) {
      std::string reasons;
      for (const GateFinding* f : row.reasons)
        reasons += fmt::format("{}**{}**: {}", reasons.empty() ? "" : "<br>", to_string(f->kind),
                               markdown_text(f->change));
      std::string line = fmt::format("| {} | {} |\n", markdown_text(cell_label(row.cell)), reasons);
      if (md.size() + t.size() + line.size() + 200 > kMaxChars) {
        ++left;
        continue;
      }
      t += line;
    }
    if (left > 0) t += fmt::format("\n{} more left out to fit a comment.\n", plural(left, "cell", "cells"));
    return t;
  };
  if (!bad.empty()) md += fmt::format("#### Regressions ({})\n\n", plural(bad.size(), "cell", "cells")) + table(bad) + "\n";
  if (!good.empty())
    md += fmt::format("<details><summary>{} improved, {}</summary>\n\n{}\n</details>\n",
                      plural(improved, "cell", "cells"), plural(added, "new cell", "new cells"), table(good));
  return md;
}

}  // namespace

std::size_t GateResult::regressions() const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(), [](const GateFinding& f) { return is_regression(f.kind); }));
}

std::size_t GateResult::regressed_cells() const {
  std::set<CellKey> cells;
  for (const auto& f : findings)
    if (is_regression(f.kind)) cells.insert(f.cell);
  return cells.size();
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

void publish_gate_summary(const std::string& markdown, const std::filesystem::path& summary_path) {
  if (!summary_path.empty()) write_file_atomically(summary_path, markdown);
  const char* step_summary = std::getenv("GITHUB_STEP_SUMMARY");
  if (step_summary == nullptr || *step_summary == '\0') return;
  std::ofstream out(step_summary, std::ios::app | std::ios::binary);
  out << markdown << '\n';
  out.flush();
  if (!out)
    throw OutputFileError(fmt::format("$GITHUB_STEP_SUMMARY ({}): cannot append the gate's summary", step_summary));
}

}  // namespace ulpscope
