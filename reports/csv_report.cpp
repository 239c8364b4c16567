#include "reports/csv_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <variant>

#include "reports/cell_facts.hpp"
#include "reports/allreduce_json.hpp"
#include "reports/cell_fields.hpp"

namespace ulpscope {
namespace {

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

// The text of one field: empty where JSON has null.
std::string field_text(const Field<Cell>& f, const Cell& c, const std::string& text) {
  return f.exported ? f.exported(c) : text;
}
std::string field_text(const Field<Cell>&, const Cell&, bool v) { return v ? "true" : "false"; }
std::string field_text(const Field<Cell>&, const Cell&, std::optional<bool> v) {
  return v ? (*v ? "true" : "false") : "";
}
std::string field_text(const Field<Cell>&, const Cell&, std::optional<double> v) { return number_field(v); }
template <class T>
std::string field_text(const Field<Cell>&, const Cell&, const std::optional<T>& v) {
  return optional_field(v);
}
// Fields without a column (in_csv false) are not written.
std::string field_text(const Field<Cell>& f, const Cell&, const std::optional<ScanProfile>&) {
  throw std::logic_error(fmt::format("{} has no CSV column", f.key));
}
std::string field_text(const Field<Cell>& f, const Cell&, const std::optional<AllreduceProfile>&) {
  throw std::logic_error(fmt::format("{} has no CSV column", f.key));
}
template <class T>
std::string field_text(const Field<Cell>&, const Cell&, const T& v) {
  return fmt::to_string(v);
}

}  // namespace

void write_csv(const Report& report, std::ostream& out) {
  // The all-reduce object's keys as allreduce_* columns, after the others,
  // in reports that hold an all-reduce cell (other reports keep their columns).
  const bool allreduce = std::any_of(report.cells.begin(), report.cells.end(),
                                     [](const Cell& c) { return c.allreduce.has_value(); });
  std::string line;
  for (const Field<Cell>& f : kCellFields) {
    if (!f.in_csv) continue;
    if (!line.empty()) line += ',';
    line += csv_column(f.key);
  }
  if (allreduce)
    for (const auto& [column, text] : allreduce_csv_columns(nullptr)) line += ',' + column;
  out << line << "\r\n";
  for (const Cell& c : report.cells) {
    line.clear();
    bool first = true;
    for (const Field<Cell>& f : kCellFields) {
      if (!f.in_csv) continue;
      if (!first) line += ',';
      first = false;
      line += field(std::visit([&](auto member) { return field_text(f, c, c.*member); }, f.member));
    }
    if (allreduce)
      for (const auto& [column, text] : allreduce_csv_columns(c.allreduce ? &*c.allreduce : nullptr))
        line += ',' + field(text);
    out << line << "\r\n";
  }
}

}  // namespace ulpscope
