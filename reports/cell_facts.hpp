#pragma once
// What every report format says about a cell: its identity (the gate's key),
// whether it failed or gave different bits, and how its numbers are shown.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>

#include "accuracy/cell.hpp"

namespace ulpscope {

// The identity of a cell: what was run, not what came out. Two reports'
// cells with equal keys are the same measurement (the gate compares them).
// Its members are the fields reports/cell_fields.hpp marks identity (a test
// holds the two together).
struct CellKey {
  std::string op, dtype, out_dtype, accumulator, shape, distribution;
  std::int64_t n = 0;
  std::uint64_t seed = 0;
  std::string axis;
  std::optional<std::int64_t> rows, cols;
  std::string saturation;
  auto operator<=>(const CellKey&) const = default;
};

CellKey cell_key(const Cell& c);
// "sum fp16->fp16 fp32 tree normal n=1024 seed=1" (+ axis, rows x cols, saturation).
std::string cell_label(const CellKey& k);
inline std::string cell_label(const Cell& c) { return cell_label(cell_key(c)); }

bool is_failed(const Cell& c);
// docs/spec.md, "Metrics", reproducibility, kept apart: different bits over
// repeated runs of one configuration (non-deterministic), over launch
// configurations, over permutations of the input (order-dependent: every
// inexact accumulator is, so it is a property, not a defect).
bool is_non_deterministic(const Cell& c);
bool is_config_dependent(const Cell& c);
bool is_order_dependent(const Cell& c);
bool is_model_mismatch(const Cell& c);

// A metric as printed in tables: "n/a" where undefined (SPEC: shown as
// unknown, never invented), "{:.3g}" otherwise.
std::string short_number(std::optional<double> v);
// The max ulp error as the tables show it: with the accumulator's own error
// beside it where the op has one ("2.59e+04 (acc 0.594)"; docs/spec.md, "Row
// statistics and the accumulator's own error").
std::string ulp_error_text(const Cell& c);

// JSON has no Inf or NaN: such a metric is written as null, and the reason
// goes into error_note. Returns the note to write.
std::string error_note_for_export(const Cell& c);
// The metric as exported: nullopt where undefined or non-finite.
std::optional<double> finite_or_null(std::optional<double> v);

// The eps of the report's settings (its header's settings JSON), as the
// table and the Markdown summary print it ("1e-05"); empty when absent.
std::string settings_eps(const std::string& settings_json);

}  // namespace ulpscope
