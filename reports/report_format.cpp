#include "reports/report_format.hpp"

#include <ostream>
#include <sstream>

#include "reports/atomic_file.hpp"
#include "reports/csv_report.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "reports/markdown_report.hpp"

namespace ulpscope {

std::optional<ReportFormat> format_for_extension(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".json") return ReportFormat::json;
  if (ext == ".csv") return ReportFormat::csv;
  if (ext == ".md") return ReportFormat::md;
  if (ext == ".html" || ext == ".htm") return ReportFormat::html;
  if (ext == ".txt") return ReportFormat::table;
  return std::nullopt;
}

void write_report(const Report& report, ReportFormat format, std::ostream& out, const TableStyle& style) {
  switch (format) {
    case ReportFormat::table: write_table(report, out, style); break;
    case ReportFormat::json: write_json(report, out); break;
    case ReportFormat::csv: write_csv(report, out); break;
    case ReportFormat::md: write_markdown(report, out); break;
    case ReportFormat::html: write_html(report, out); break;
  }
}

void write_report_file(const Report& report, ReportFormat format, const std::filesystem::path& path,
                       const TableStyle& style) {
  std::ostringstream text;
  TableStyle plain = style;
  plain.colour = false;
  write_report(report, format, text, plain);
  write_file_atomically(path, text.str());
}

}  // namespace ulpscope
