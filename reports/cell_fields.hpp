#pragma once
// The keys of a cell and of a --check value, declared once. The JSON writer
// and reader (reports/json_report.cpp) and the CSV columns
// (reports/csv_report.cpp) walk these tables; a test holds
// reports/report.schema.json and docs/report-schema.md to them. A new
// metric is a member of Cell (accuracy/cell.hpp) and a row here, then its
// line in the schema and in the docs.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "accuracy/cell.hpp"
#include "reports/cell_facts.hpp"

namespace ulpscope {

// How a string member is written and read.
enum class TextForm : std::uint8_t {
  plain,         // a JSON string, always present
  empty_is_null, // "" is written as null; null or absent reads as ""
  hex_float,     // C's %a form, "inf", "-inf" or "nan" (formats/hex_float.hpp); refused otherwise
};

// One key. The member's type sets the JSON type: strings as TextForm says;
// bool; int, std::int64_t (integers >= 0); std::uint64_t; std::optional of
// these (null where absent); std::optional<double> (a metric: null where
// undefined or non-finite, the reason then in error_note);
// std::optional<ScanProfile> (the object of reports/scan_json.hpp, or null);
// std::optional<AllreduceProfile> (the object of reports/allreduce_json.hpp, or null).
template <class Record>
struct Field {
  using Member = std::variant<std::string Record::*, bool Record::*, int Record::*, std::int64_t Record::*,
                              std::uint64_t Record::*, std::optional<bool> Record::*,
                              std::optional<int> Record::*, std::optional<std::int64_t> Record::*,
                              std::optional<double> Record::*, std::optional<ScanProfile> Record::*,
                              std::optional<AllreduceProfile> Record::*>;
  // The JSON key; "reference.rounded" is the key "rounded" of the object
  // "reference". The CSV column is the key with '_' for '.'.
  const char* key;
  Member member;
  TextForm text = TextForm::plain;
  // Part of the cell's identity (CellKey, reports/cell_facts.hpp): two
  // reports' cells with equal identities are the same measurement.
  bool identity = false;
  // Metrics: a negative value is refused on reading (an error is a distance).
  bool non_negative = false;
  // Keys newer than the schema's first version, not "required" in the
  // schema: an absent metric reads as null, an absent or null string as "",
  // so that older reports (baselines) still read.
  bool may_be_absent = false;
  // Written only where it has a value (a key some ops' cells have: `scan`
  // on cumsum cells); with may_be_absent, absent and null read as none.
  bool omit_null = false;
  // A CSV column of its own; an object (`scan`) has none, the CSV being one
  // value per column.
  bool in_csv = true;
  // Strings with a closed set of values: the reader refuses others with
  // "<value as JSON> <refusal>".
  bool (*accepts)(const std::string&) = nullptr;
  const char* refusal = nullptr;
  // What is written in place of the member (JSON and CSV), when not itself.
  std::string (*exported)(const Record&) = nullptr;
};

inline bool is_axis_name(const std::string& s) { return s == "all" || s == "inner" || s == "outer"; }
inline bool is_status_text(const std::string& s) { return s == "ok" || s.starts_with("failed: "); }

// docs/report-schema.md, "cells", in the order written.
inline constexpr Field<Cell> kCellFields[] = {
    {.key = "op", .member = &Cell::op, .identity = true},
    {.key = "dtype", .member = &Cell::dtype, .identity = true},
    {.key = "out_dtype", .member = &Cell::out_dtype, .identity = true},
    {.key = "accumulator", .member = &Cell::accumulator, .identity = true},
    {.key = "shape", .member = &Cell::shape, .identity = true},
    {.key = "distribution", .member = &Cell::distribution, .identity = true},
    {.key = "n", .member = &Cell::n, .identity = true},
    {.key = "seed", .member = &Cell::seed, .identity = true},
    {.key = "rows", .member = &Cell::rows, .identity = true},
    {.key = "cols", .member = &Cell::cols, .identity = true},
    {.key = "axis", .member = &Cell::axis, .identity = true, .accepts = is_axis_name,
     .refusal = "is not all, inner or outer"},
    {.key = "saturation", .member = &Cell::saturation, .text = TextForm::empty_is_null, .identity = true},
    {.key = "reference.rounded", .member = &Cell::reference_rounded, .text = TextForm::hex_float},
    {.key = "reference.exact", .member = &Cell::reference_exact},
    {.key = "result", .member = &Cell::result, .text = TextForm::hex_float},
    {.key = "component", .member = &Cell::component},
    {.key = "ulp_error", .member = &Cell::ulp_error, .non_negative = true},
    {.key = "rel_error", .member = &Cell::rel_error},
    {.key = "condition", .member = &Cell::condition},
    {.key = "bound_ratio", .member = &Cell::bound_ratio},
    {.key = "working_dtype", .member = &Cell::working_dtype, .text = TextForm::empty_is_null, .may_be_absent = true},
    {.key = "mean_ulp_error", .member = &Cell::mean_ulp_error, .non_negative = true, .may_be_absent = true},
    {.key = "rstd_ulp_error", .member = &Cell::rstd_ulp_error, .non_negative = true, .may_be_absent = true},
    {.key = "variance_ulp_error", .member = &Cell::variance_ulp_error, .non_negative = true,
     .may_be_absent = true},
    {.key = "ideal_ulp_error", .member = &Cell::ideal_ulp_error, .non_negative = true, .may_be_absent = true},
    {.key = "accumulator_ulp_error", .member = &Cell::accumulator_ulp_error, .non_negative = true,
     .may_be_absent = true},
    {.key = "statistics_note", .member = &Cell::statistics_note, .may_be_absent = true},
    {.key = "scan", .member = &Cell::scan, .may_be_absent = true, .omit_null = true, .in_csv = false},
    {.key = "allreduce", .member = &Cell::allreduce, .may_be_absent = true, .omit_null = true, .in_csv = false},
    {.key = "error_note", .member = &Cell::error_note, .exported = error_note_for_export},
    {.key = "correctly_rounded", .member = &Cell::correctly_rounded},
    {.key = "matches_model", .member = &Cell::matches_model},
    {.key = "models_checked", .member = &Cell::models_checked},
    {.key = "runs", .member = &Cell::runs},
    {.key = "distinct_results", .member = &Cell::distinct_results},
    {.key = "configs", .member = &Cell::configs},
    {.key = "distinct_across_configs", .member = &Cell::distinct_across_configs},
    {.key = "permutations", .member = &Cell::permutations},
    {.key = "distinct_across_permutations", .member = &Cell::distinct_across_permutations},
    {.key = "gbps", .member = &Cell::gbps},
    {.key = "fraction_of_cub", .member = &Cell::fraction_of_cub},
    {.key = "fraction_of_copy", .member = &Cell::fraction_of_copy},
    {.key = "throughput_n", .member = &Cell::throughput_n},
    {.key = "status", .member = &Cell::status, .accepts = is_status_text,
     .refusal = "is neither \"ok\" nor \"failed: reason\""},
    {.key = "note", .member = &Cell::note},
};

// docs/report-schema.md, "checks", in the order written.
inline constexpr Field<UserValueCheck> kCheckFields[] = {
    {.key = "label", .member = &UserValueCheck::label},
    {.key = "given", .member = &UserValueCheck::given},
    {.key = "value", .member = &UserValueCheck::value, .text = TextForm::hex_float},
    {.key = "given_exactly", .member = &UserValueCheck::given_exactly},
    {.key = "op", .member = &UserValueCheck::op},
    {.key = "out_dtype", .member = &UserValueCheck::out_dtype},
    {.key = "reference.rounded", .member = &UserValueCheck::reference_rounded, .text = TextForm::hex_float},
    {.key = "reference.exact", .member = &UserValueCheck::reference_exact},
    {.key = "ulp_error", .member = &UserValueCheck::ulp_error, .non_negative = true},
    {.key = "error_note", .member = &UserValueCheck::error_note},
    {.key = "correctly_rounded", .member = &UserValueCheck::correctly_rounded},
};

// The CSV column of a key: "reference.rounded" -> "reference_rounded".
inline std::string csv_column(const char* key) {
  std::string column = key;
  for (char& ch : column)
    if (ch == '.') ch = '_';
  return column;
}

}  // namespace ulpscope
