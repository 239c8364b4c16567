#include "reports/csv_report.hpp"

#include <fmt/format.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "reports/cell_facts.hpp"

namespace ulpscope {
namespace {

constexpr const char* kColumns[] = {
    "op",        "dtype",       "out_dtype",  "accumulator",       "shape",
    "distribution", "n",        "seed",       "rows",              "cols",
    "axis",      "saturation",  "reference_rounded", "reference_exact", "result",
    "component", "ulp_error",   "rel_error",  "condition",         "bound_ratio",
    "working_dtype", "mean_ulp_error", "rstd_ulp_error", "variance_ulp_error", "ideal_ulp_error",
    "accumulator_ulp_error", "statistics_note",
    "error_note", "correctly_rounded", "matches_model", "models_checked", "runs", "distinct_results",
    "configs",   "distinct_across_configs", "permutations", "distinct_across_permutations", "gbps",
    "fraction_of_cub", "fraction_of_copy", "throughput_n", "status", "note"};

// RFC 4180: quote a field holding a comma, a quote or a line break; double the quotes.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + '"';
}

template <class T>
std::string optional_field(const std::optional<T>& v) {
  return v ? fmt::to_string(*v) : std::string();
}

// Shortest text that reads back to the same double (fmt's default).
std::string number_field(std::optional<double> v) {
  v = finite_or_null(v);
  return v ? fmt::format("{}", *v) : std::string();
}

}  // namespace

void write_csv(const Report& report, std::ostream& out) {
  std::string line;
  for (const char* name : kColumns) {
    if (!line.empty()) line += ',';
    line += name;
  }
  out << line << "\r\n";
  for (const Cell& c : report.cells) {
    const std::vector<std::string> values = {
        c.op, c.dtype, c.out_dtype, c.accumulator, c.shape, c.distribution,
        fmt::to_string(c.n), fmt::to_string(c.seed), optional_field(c.rows), optional_field(c.cols),
        c.axis, c.saturation, c.reference_rounded, c.reference_exact, c.result, c.component,
        number_field(c.ulp_error), number_field(c.rel_error), number_field(c.condition),
        number_field(c.bound_ratio), c.working_dtype, number_field(c.mean_ulp_error),
        number_field(c.rstd_ulp_error), number_field(c.variance_ulp_error), number_field(c.ideal_ulp_error),
        number_field(c.accumulator_ulp_error), c.statistics_note, error_note_for_export(c), c.correctly_rounded ? "true" : "false",
        c.matches_model ? (*c.matches_model ? "true" : "false") : "", optional_field(c.models_checked),
        fmt::to_string(c.runs), fmt::to_string(c.distinct_results), fmt::to_string(c.configs),
        fmt::to_string(c.distinct_across_configs), optional_field(c.permutations),
        optional_field(c.distinct_across_permutations), number_field(c.gbps),
        number_field(c.fraction_of_cub), number_field(c.fraction_of_copy), optional_field(c.throughput_n), c.status,
        c.note};
    line.clear();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) line += ',';
      line += field(values[i]);
    }
    out << line << "\r\n";
  }
}

}  // namespace ulpscope
