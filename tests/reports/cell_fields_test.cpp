// The field tables of reports/cell_fields.hpp are the one list of a cell's
// and a --check value's keys: the schema file and docs/report-schema.md must
// name exactly those keys, and CellKey exactly the identity ones.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "reports/cell_facts.hpp"
#include "reports/cell_fields.hpp"

namespace ulpscope {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class Record, std::size_t N>
std::set<std::string> table_keys(const Field<Record> (&fields)[N]) {
  std::set<std::string> keys;
  for (const auto& f : fields) EXPECT_TRUE(keys.insert(f.key).second) << "twice in the table: " << f.key;
  return keys;
}

// A nested object always present ("reference") stands for its keys, as the
// table's "reference.rounded"; one that may be null ("scan", an
// optional<ScanProfile>) is one key, written and read whole.
bool spread_into_keys(const nlohmann::json& def) {
  return def.contains("properties") && def.contains("type") && def.at("type") == "object";
}

// The keys a schema object allows, nested objects' keys as "outer.inner".
std::set<std::string> schema_keys(const nlohmann::json& object, const std::string& prefix = "") {
  std::set<std::string> keys;
  for (const auto& [key, def] : object.at("properties").items()) {
    if (spread_into_keys(def)) {
      for (const auto& inner : schema_keys(def, prefix + key + ".")) keys.insert(inner);
    } else {
      keys.insert(prefix + key);
    }
  }
  return keys;
}

// The keys a schema object requires, likewise.
std::set<std::string> schema_required(const nlohmann::json& object, const std::string& prefix = "") {
  std::set<std::string> keys;
  for (const std::string key : object.at("required")) {
    const auto& def = object.at("properties").at(key);
    if (spread_into_keys(def)) {
      for (const auto& inner : schema_required(def, prefix + key + ".")) keys.insert(inner);
    } else {
      keys.insert(prefix + key);
    }
  }
  return keys;
}

// Every key is written; those older reports lack are not required.
template <class Record, std::size_t N>
std::set<std::string> table_required(const Field<Record> (&fields)[N]) {
  std::set<std::string> keys;
  for (const auto& f : fields)
    if (!f.may_be_absent) keys.insert(f.key);
  return keys;
}

// The keys named in the first column of the table under "## `section`" of
// docs/report-schema.md ("| `rows`, `cols` | ..." names two).
std::set<std::string> documented_keys(const std::string& doc, const std::string& section) {
  const std::string heading = "## `" + section + "`\n";
  const auto start = doc.find(heading);
  EXPECT_NE(start, std::string::npos) << "no section " << heading;
  if (start == std::string::npos) return {};
  auto end = doc.find("\n## ", start + heading.size());
  if (end == std::string::npos) end = doc.size();
  std::set<std::string> keys;
  std::istringstream lines(doc.substr(start, end - start));
  const std::regex name("`([a-z_.]+)`");
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| `")) continue;
    const std::string first = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator it(first.begin(), first.end(), name), e; it != e; ++it)
      EXPECT_TRUE(keys.insert((*it)[1]).second) << "documented twice: " << (*it)[1];
  }
  return keys;
}

TEST(CellFields, SchemaNamesExactlyTheTablesKeys) {
  const auto schema = nlohmann::json::parse(read_file(ULPSCOPE_REPORT_SCHEMA));
  const auto& cell = schema.at("$defs").at("cell");
  const auto& check = schema.at("properties").at("checks").at("items");
  EXPECT_EQ(schema_keys(cell), table_keys(kCellFields));
  EXPECT_EQ(schema_required(cell), table_required(kCellFields));
  EXPECT_EQ(schema_keys(check), table_keys(kCheckFields));
  EXPECT_EQ(schema_required(check), table_required(kCheckFields));
}

TEST(CellFields, DocsNameExactlyTheTablesKeys) {
  const std::string doc = read_file(ULPSCOPE_REPORT_SCHEMA_DOC);
  EXPECT_EQ(documented_keys(doc, "cells"), table_keys(kCellFields));
  EXPECT_EQ(documented_keys(doc, "checks"), table_keys(kCheckFields));
}

// Changing one field of a cell changes its CellKey exactly when the table
// marks the field as identity.
TEST(CellFields, CellKeyIsTheIdentityFields) {
  for (const auto& f : kCellFields) {
    Cell a;
    Cell b;
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(b.*member)>;
          if constexpr (std::is_same_v<T, std::string>) {
            b.*member = "changed";
          } else if constexpr (std::is_same_v<T, bool>) {
            b.*member = !(a.*member);
          } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
            b.*member = true;
          } else if constexpr (std::is_same_v<T, std::optional<ScanProfile>>) {
            b.*member = ScanProfile{};
          } else if constexpr (std::is_same_v<T, std::optional<AllreduceProfile>>) {
            b.*member = AllreduceProfile{};
          } else if constexpr (std::is_arithmetic_v<T>) {
            b.*member = a.*member + 1;
          } else {
            b.*member = typename T::value_type{7};
          }
        },
        f.member);
    EXPECT_EQ(cell_key(a) != cell_key(b), f.identity) << f.key;
  }
}

TEST(CellFields, CsvColumnsFlattenNestedKeys) {
  EXPECT_EQ(csv_column("reference.rounded"), "reference_rounded");
  EXPECT_EQ(csv_column("ulp_error"), "ulp_error");
}

}  // namespace
}  // namespace ulpscope
