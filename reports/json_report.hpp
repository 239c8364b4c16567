#pragma once
// The report as JSON (docs/spec.md, "The report"; docs/report-schema.md;
// reports/report.schema.json), written and read back. Reading is strict: a
// report the gate compares against must be exactly what this build writes.
#include <filesystem>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "accuracy/cell.hpp"
#include "reports/verdict.hpp"

namespace ulpscope {

// A report that cannot be used: unreadable, not JSON, another schema version,
// a key missing or of the wrong type, reports made with different settings.
// what() is one line that names the source ("base.json: cells[3].n: ...").
struct ReportInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Keys in SPEC's order. Non-finite metrics become null (JSON has no Inf or
// NaN) with the reason in error_note. Throws std::invalid_argument when
// header.settings_json is not a JSON object.
nlohmann::ordered_json report_to_json(const Report& report);
// The report's "verdicts" array (docs/report-schema.md), for any format that
// embeds them as data.
nlohmann::ordered_json verdicts_to_json(const std::vector<Verdict>& verdicts);
void write_json(const Report& report, std::ostream& out);

// source names the input in error messages (a path, "<stdin>").
Report report_from_json(const nlohmann::json& doc, std::string_view source);
Report read_report(std::istream& in, std::string_view source);
Report read_report_file(const std::filesystem::path& path);

}  // namespace ulpscope
