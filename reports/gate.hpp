#pragma once
// The CI gate (docs/spec.md, "What ulpscope measures", 2): a baseline report against a
// current one, cell by cell. A regression is a cell that disappeared, failed,
// got a larger max ulp error than the tolerance allows, stopped being
// correctly rounded, started to give different bits run to run, across
// launch configurations or across orders of its input, stopped matching its
// CPU model, or (optionally) lost throughput. The summary counts cells and
// lists each cell once, with all its reasons.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"
#include "formats/named_enum.hpp"
#include "reports/cell_facts.hpp"

namespace ulpscope {

// Exit statuses of accuracy_report --gate.
inline constexpr int kGatePass = 0;
inline constexpr int kGateRegression = 1;
inline constexpr int kGateInputError = 2;  // usage, unreadable or incomparable reports

struct GateOptions {
  double ulp_tolerance = 0;                   // allowed growth of max ulp_error, in ulps
  std::optional<double> throughput_tolerance;  // allowed relative drop of GB/s (0.1: 10 %); unset: not checked
  std::string label;                           // names the current run in the summary (--label: a commit, a PR)
};

// Each finding is one reason about one cell; a cell may have several.
enum class FindingKind : std::uint8_t {
  // Regressions.
  cell_missing, failed, ulp_error_grew, ulp_error_undefined, no_longer_correctly_rounded,
  became_non_deterministic,  // run to run: repeated runs of one configuration give different bits
  became_config_dependent,   // launch configurations give different bits
  became_order_sensitive,    // permutations of the input give different bits
  model_mismatch, throughput_dropped,
  // Worth telling, not failing for.
  new_cell, improved,
  also_changed,  // a change for the better in a cell that regressed: told beside its regression, never "improved"
};

inline constexpr NameTable<FindingKind, 13> kFindingKindNames = {
    {{FindingKind::cell_missing, "cell missing"},
     {FindingKind::failed, "cell failed"},
     {FindingKind::ulp_error_grew, "ulp error grew"},
     {FindingKind::ulp_error_undefined, "ulp error undefined"},
     {FindingKind::no_longer_correctly_rounded, "no longer correctly rounded"},
     {FindingKind::became_non_deterministic, "became non-deterministic (run to run)"},
     {FindingKind::became_config_dependent, "now differs across launch configurations"},
     {FindingKind::became_order_sensitive, "became order-sensitive (input permutations)"},
     {FindingKind::model_mismatch, "GPU differs from model"},
     {FindingKind::throughput_dropped, "throughput dropped"},
     {FindingKind::new_cell, "new cell"},
     {FindingKind::improved, "improved"},
     {FindingKind::also_changed, "also changed"}}};

constexpr std::string_view to_string(FindingKind k) { return name_in(kFindingKindNames, k); }
constexpr bool is_regression(FindingKind k) {
  return k != FindingKind::new_cell && k != FindingKind::improved && k != FindingKind::also_changed;
}

struct GateFinding {
  FindingKind kind;
  CellKey cell;
  std::string change;  // "max ulp_error 0.5 -> 3 (tolerance 1)"
};

struct GateResult {
  std::vector<GateFinding> findings;  // in baseline cell order (a cell's reasons together), then new cells
  std::size_t baseline_cells = 0, compared_cells = 0;
  std::size_t throughput_unmeasured = 0;  // cells a throughput check could not compare (null GB/s)
  std::string markdown;                   // the summary for a pull-request comment
  std::size_t regressions() const;        // reasons (findings) that are regressions
  std::size_t regressed_cells() const;    // cells with at least one
};

// Throws ReportInputError (reports/json_report.hpp) when the reports cannot be
// compared: a report without cells, another backend, other settings, a
// duplicated cell, or throughput compared across devices.
void check_comparable(const Report& baseline, const Report& current, const GateOptions& options);

// check_comparable, then the cell-by-cell comparison and the summary; throws
// ReportInputError when no baseline cell is in the current report.
GateResult run_gate(const Report& baseline, const Report& current, const GateOptions& options);

// kGatePass or kGateRegression.
int gate_exit_status(const GateResult& result);

// --baseline base.json --current cur.json: reads both, compares, and turns
// every input problem into kGateInputError with one line in error.
struct GateOutcome {
  int status = kGateInputError;
  std::string error;
  std::optional<GateResult> result;
};
GateOutcome gate_report_files(const std::filesystem::path& baseline, const std::filesystem::path& current,
                              const GateOptions& options);

// Writes the summary to summary_path (when not empty; atomically) and
// appends it to the file named by $GITHUB_STEP_SUMMARY when that is set
// (GitHub Actions shows that file on the run's page; each step appends).
// Throws OutputFileError (reports/atomic_file.hpp) when either cannot be written.
void publish_gate_summary(const std::string& markdown, const std::filesystem::path& summary_path);

}  // namespace ulpscope
