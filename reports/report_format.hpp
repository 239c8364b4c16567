#pragma once
// The output formats of accuracy_report (--format) and one entry point that
// writes any of them, to a stream or, never half-written, to a file.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>

#include "accuracy/cell.hpp"
#include "formats/named_enum.hpp"
#include "reports/table_report.hpp"

namespace ulpscope {

enum class ReportFormat : std::uint8_t { table, json, csv, md, html };

inline constexpr NameTable<ReportFormat, 5> kReportFormatNames = {{{ReportFormat::table, "table"},
                                                                   {ReportFormat::json, "json"},
                                                                   {ReportFormat::csv, "csv"},
                                                                   {ReportFormat::md, "md"},
                                                                   {ReportFormat::html, "html"}}};

constexpr std::string_view to_string(ReportFormat f) { return name_in(kReportFormatNames, f); }

// ".json" -> json, ".csv" -> csv, ".md" -> md, ".html"/".htm" -> html,
// ".txt" -> table; nullopt otherwise.
std::optional<ReportFormat> format_for_extension(const std::filesystem::path& path);

void write_report(const Report& report, ReportFormat format, std::ostream& out, const TableStyle& style = {});

// Renders the whole report in memory, then replaces path atomically
// (reports/atomic_file.hpp): a failure leaves the old file. Tables written to
// files have no colour (style.colour is ignored). Throws std::runtime_error
// with one line.
void write_report_file(const Report& report, ReportFormat format, const std::filesystem::path& path,
                       const TableStyle& style = {});

}  // namespace ulpscope
