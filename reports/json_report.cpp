#include "reports/json_report.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <utility>
#include <variant>

#include "formats/hex_float.hpp"
#include "reports/cell_facts.hpp"
#include "reports/cell_fields.hpp"
#include "reports/allreduce_json.hpp"
#include "reports/scan_json.hpp"
#include "reports/verdict.hpp"

namespace ulpscope {
namespace {

using ojson = nlohmann::ordered_json;

ojson number_or_null(std::optional<double> v) {
  v = finite_or_null(v);
  return v ? ojson(*v) : ojson(nullptr);
}

template <class T>
ojson optional_value(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

// The value of one field as written: the member's JSON type, nulls where
// cell_fields.hpp says.
template <class Record>
ojson field_to_json(const Field<Record>& f, const Record& r, const std::string& text) {
  if (f.exported) return f.exported(r);
  if (f.text == TextForm::empty_is_null && text.empty()) return nullptr;
  return text;
}
template <class Record>
ojson field_to_json(const Field<Record>&, const Record&, std::optional<double> v) { return number_or_null(v); }
template <class Record, class T>
ojson field_to_json(const Field<Record>&, const Record&, const std::optional<T>& v) { return optional_value(v); }
template <class Record>
ojson field_to_json(const Field<Record>&, const Record&, const std::optional<ScanProfile>& v) {
  return v ? scan_to_json(*v) : ojson(nullptr);
}
template <class Record>
ojson field_to_json(const Field<Record>&, const Record&, const std::optional<AllreduceProfile>& v) {
  return v ? allreduce_to_json(*v) : ojson(nullptr);
}
template <class Record, class T>
ojson field_to_json(const Field<Record>&, const Record&, const T& v) { return v; }

template <class Record, std::size_t N>
ojson record_to_json(const Record& r, const Field<Record> (&fields)[N]) {
  ojson j;
  for (const Field<Record>& f : fields) {
    ojson v = std::visit([&](auto member) { return field_to_json(f, r, r.*member); }, f.member);
    if (f.omit_null && v.is_null()) continue;
    const std::string_view key = f.key;
    if (const auto dot = key.find('.'); dot != std::string_view::npos)
      j[std::string(key.substr(0, dot))][std::string(key.substr(dot + 1))] = std::move(v);
    else
      j[std::string(key)] = std::move(v);
  }
  return j;
}

// One JSON object being read, with the path for messages ("cells[3]").
// A string from the file, quoted as JSON writes it (a line break as \n), so
// that a refusal stays one line (docs/bad-inputs.md).
std::string json_quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

class Fields {
 public:
  Fields(const nlohmann::json& obj, std::string path, std::string_view source)
      : obj_(obj), path_(std::move(path)), source_(source) {
    if (!obj_.is_object()) fail(path_, fmt::format("expected an object, found {}", obj_.type_name()));
  }

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw ReportInputError(fmt::format("{}: {}: {}", source_, where, what));
  }
  std::string where(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }
  const nlohmann::json& need(std::string_view key) const {
    const auto it = obj_.find(key);
    if (it == obj_.end()) fail(where(key), "missing");
    return *it;
  }
  [[noreturn]] void wrong(std::string_view key, const char* expected) const {
    fail(where(key), fmt::format("expected {}, found {}", expected, need(key).type_name()));
  }

  std::string text(std::string_view key) const {
    const auto& v = need(key);
    if (!v.is_string()) wrong(key, "a string");
    return v.get<std::string>();
  }
  std::string text_or_null(std::string_view key) const {
    const auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return {};
    if (!it->is_string()) wrong(key, "a string or null");
    return it->get<std::string>();
  }
  std::string hex(std::string_view key) const {
    std::string s = text(key);
    if (!parse_hex_float(s)) fail(where(key), fmt::format("{} is not a hex-float", json_quoted(s)));
    return s;
  }
  bool boolean(std::string_view key) const {
    const auto& v = need(key);
    if (!v.is_boolean()) wrong(key, "a boolean");
    return v.get<bool>();
  }
  std::optional<bool> boolean_or_null(std::string_view key) const {
    const auto& v = need(key);
    if (v.is_null()) return std::nullopt;
    if (!v.is_boolean()) wrong(key, "a boolean or null");
    return v.get<bool>();
  }
  std::optional<double> number_or_null(std::string_view key) const {
    const auto& v = need(key);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) wrong(key, "a number or null");
    return v.get<double>();
  }
  // Fields newer than the schema's first version: absent reads as null, so
  // that older reports (baselines) still read.
  std::optional<double> number_absent_or_null(std::string_view key) const {
    const auto it = obj_.find(key);
    if (it == obj_.end()) return std::nullopt;
    return number_or_null(key);
  }
  double number(std::string_view key) const {
    const auto& v = need(key);
    if (!v.is_number()) wrong(key, "a number");
    return v.get<double>();
  }
  // An integer in [lo, hi]; absent or null allowed only through integer_or_null.
  std::int64_t integer(std::string_view key, std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const {
    return checked_integer(key, need(key), lo, hi);
  }
  std::optional<std::int64_t> integer_or_null(std::string_view key, std::int64_t lo,
                                              std::int64_t hi) const {
    const auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return std::nullopt;
    return checked_integer(key, *it, lo, hi);
  }
  std::uint64_t unsigned_integer(std::string_view key) const {
    const auto& v = need(key);
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
    wrong(key, "a non-negative integer");
  }
  Fields object(std::string_view key) const { return Fields(need(key), where(key), source_); }
  bool has(std::string_view key) const { return obj_.find(key) != obj_.end(); }

 private:
  std::int64_t checked_integer(std::string_view key, const nlohmann::json& v, std::int64_t lo,
                               std::int64_t hi) const {
    if (!v.is_number_integer()) wrong(key, "an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(where(key), fmt::format("{} is out of range", v.get<std::uint64_t>()));
    const std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi) fail(where(key), fmt::format("{} is out of range [{}, {}]", x, lo, hi));
    return x;
  }

  const nlohmann::json& obj_;
  std::string path_;
  std::string_view source_;
};

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Reads one key into its member, refusing what cell_fields.hpp does not allow.
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>& f, std::string& into) {
  switch (f.text) {
    case TextForm::plain: into = f.may_be_absent ? obj.text_or_null(key) : obj.text(key); break;
    case TextForm::empty_is_null: into = obj.text_or_null(key); break;
    case TextForm::hex_float: into = obj.hex(key); break;
  }
  if (f.accepts && !f.accepts(into)) obj.fail(obj.where(key), fmt::format("{} {}", json_quoted(into), f.refusal));
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>&, bool& into) {
  into = obj.boolean(key);
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>&, std::optional<bool>& into) {
  into = obj.boolean_or_null(key);
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>&, int& into) {
  into = static_cast<int>(obj.integer(key, 0, kIntMax));
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>&, std::int64_t& into) {
  into = obj.integer(key, 0);
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>&, std::uint64_t& into) {
  into = obj.unsigned_integer(key);
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>&, std::optional<int>& into) {
  into.reset();
  if (auto v = obj.integer_or_null(key, 0, kIntMax)) into = static_cast<int>(*v);
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>&, std::optional<std::int64_t>& into) {
  into = obj.integer_or_null(key, 0, kInt64Max);
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>& f, std::optional<double>& into) {
  into = f.may_be_absent ? obj.number_absent_or_null(key) : obj.number_or_null(key);
  if (f.non_negative && into && *into < 0) obj.fail(obj.where(key), fmt::format("{} is negative", *into));
}

template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>& f, std::optional<ScanProfile>& into) {
  into.reset();
  if (f.may_be_absent && !obj.has(key)) return;
  const nlohmann::json& v = obj.need(key);
  if (v.is_null()) return;
  try {
    into = scan_from_json(v);
  } catch (const std::invalid_argument& e) {
    obj.fail(obj.where(key), e.what());
  }
}
template <class Record>
void read_field(const Fields& obj, std::string_view key, const Field<Record>& f,
                std::optional<AllreduceProfile>& into) {
  into.reset();
  if (f.may_be_absent && !obj.has(key)) return;
  const nlohmann::json& v = obj.need(key);
  if (v.is_null()) return;
  try {
    into = allreduce_from_json(v);
  } catch (const std::invalid_argument& e) {
    obj.fail(obj.where(key), e.what());
  }
}

template <class Record, std::size_t N>
Record record_from_json(const Fields& obj, const Field<Record> (&fields)[N]) {
  Record r;
  for (const Field<Record>& f : fields) {
    const std::string_view key = f.key;
    std::visit(
        [&](auto member) {
          if (const auto dot = key.find('.'); dot != std::string_view::npos)
            read_field(obj.object(key.substr(0, dot)), key.substr(dot + 1), f, r.*member);
          else
            read_field(obj, key, f, r.*member);
        },
        f.member);
  }
  return r;
}

Cell cell_from_json(const Fields& f) {
  Cell c = record_from_json(f, kCellFields);
  // A fact no run writes (docs/bad-inputs.md): a NaN result has an error (0)
  // only beside a NaN reference.
  const auto is_nan = [](const std::string& hex) {
    const auto v = parse_hex_float(hex);
    return v && std::isnan(*v);
  };
  if (c.ulp_error && is_nan(c.result) && !is_nan(c.reference_rounded))
    f.fail(f.where("result"), fmt::format("NaN beside a finite ulp_error ({}) and a non-NaN reference", *c.ulp_error));
  return c;
}

ojson worst_to_json(const WorstError& w) {
  if (w.cells == 0) return nullptr;
  ojson j;
  j["cells"] = w.cells;
  j["max_ulp"] = number_or_null(w.max_ulp);
  j["unbounded"] = w.unbounded;
  j["distribution"] = w.distribution;
  j["n"] = w.n;
  j["seed"] = w.seed;
  return j;
}

ojson same_bits_to_json(SameBits s) { return s == SameBits::not_measured ? ojson(nullptr) : ojson(s == SameBits::yes); }

}  // namespace

nlohmann::ordered_json verdicts_to_json(const std::vector<Verdict>& verdicts) {
  ojson out = ojson::array();
  for (const Verdict& v : verdicts) {
    ojson j;
    j["op"] = v.op;
    j["dtype"] = v.dtype;
    j["out_dtype"] = v.out_dtype;
    j["accumulator"] = v.accumulator;
    j["shape"] = v.shape;
    j["axis"] = v.axis;
    j["saturation"] = v.saturation.empty() ? ojson(nullptr) : ojson(v.saturation);
    j["cells"] = v.cells;
    j["failed"] = v.failed;
    j["correctly_rounded"] = v.correctly_rounded;
    j["worst"] = {{"realistic", worst_to_json(v.realistic)},
                  {"adversarial", worst_to_json(v.adversarial)},
                  {"user_input", worst_to_json(v.user_input)}};
    j["same_bits"] = {{"run_to_run", same_bits_to_json(v.run_to_run)},
                      {"across_configs", same_bits_to_json(v.across_configs)},
                      {"across_orders", same_bits_to_json(v.across_orders)}};
    j["throughput"] = v.gbps ? ojson{{"gbps", number_or_null(v.gbps)},
                                     {"fraction_of_cub", number_or_null(v.fraction_of_cub)},
                                     {"n", optional_value(v.throughput_n)}}
                             : ojson(nullptr);
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::ordered_json report_to_json(const Report& report) {
  const auto& h = report.header;
  ojson settings;
  try {
    settings = ojson::parse(h.settings_json);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(fmt::format("report header: settings are not valid JSON: {}", e.what()));
  }
  if (!settings.is_object()) throw std::invalid_argument("report header: settings must be a JSON object");
  ojson doc;
  doc["schema"] = Report::kSchema;
  doc["header"] = {{"version", h.version},           {"git_commit", h.git_commit},
                   {"device", h.device},             {"backend", h.backend},
                   {"build_flags", h.build_flags},   {"command_line", h.command_line},
                   {"seconds", finite_or_null(h.seconds).value_or(0.0)},
                   {"started_at", h.started_at},     {"settings", std::move(settings)},
                   {"unavailable", ojson::array()}};
  for (const auto& [shape, reason] : h.unavailable)
    doc["header"]["unavailable"].push_back({{"shape", shape}, {"reason", reason}});
  doc["header"]["input"] = h.input ? ojson{{"file", h.input->file},
                                          {"stored_as", h.input->stored_as},
                                          {"read_as", h.input->read_as},
                                          {"conversion", h.input->conversion}}
                                   : ojson(nullptr);
  doc["verdicts"] = verdicts_to_json(verdicts(report.cells));
  ojson cells = ojson::array();
  for (const Cell& c : report.cells) cells.push_back(record_to_json(c, kCellFields));
  doc["cells"] = std::move(cells);
  ojson checks = ojson::array();
  for (const UserValueCheck& c : report.checks) checks.push_back(record_to_json(c, kCheckFields));
  doc["checks"] = std::move(checks);
  return doc;
}

void write_json(const Report& report, std::ostream& out) { out << report_to_json(report).dump(2) << '\n'; }

Report report_from_json(const nlohmann::json& doc, std::string_view source) {
  if (!doc.is_object())
    throw ReportInputError(fmt::format("{}: not an ulpscope report (a JSON {}, not an object)", source,
                                       doc.type_name()));
  const auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string())
    throw ReportInputError(fmt::format("{}: not an ulpscope report (no \"schema\" string)", source));
  if (schema->get<std::string>() != Report::kSchema)
    throw ReportInputError(fmt::format("{}: schema {} is not supported (this build reads \"{}\")",
                                       source, json_quoted(schema->get<std::string>()), Report::kSchema));
  const Fields top(doc, "", source);
  const Fields h = top.object("header");
  Report report;
  report.header.version = h.text("version");
  report.header.git_commit = h.text("git_commit");
  report.header.device = h.text("device");
  report.header.backend = h.text("backend");
  report.header.build_flags = h.text("build_flags");
  report.header.command_line = h.text("command_line");
  report.header.seconds = h.number("seconds");
  report.header.started_at = h.text("started_at");
  const auto& settings = h.need("settings");
  if (!settings.is_object()) h.wrong("settings", "an object");
  report.header.settings_json = settings.dump();
  const auto& unavailable = h.need("unavailable");
  if (!unavailable.is_array()) h.wrong("unavailable", "an array");
  for (std::size_t i = 0; i < unavailable.size(); ++i) {
    const Fields u(unavailable[i], fmt::format("header.unavailable[{}]", i), source);
    report.header.unavailable.emplace_back(u.text("shape"), u.text("reason"));
  }
  // Absent from reports of versions before --check (baselines stay readable).
  if (h.has("input") && !h.need("input").is_null()) {
    const Fields in = h.object("input");
    report.header.input =
        InputDescription{in.text("file"), in.text("stored_as"), in.text("read_as"), in.text("conversion")};
  }
  // The verdicts are derived from the cells (recomputed where needed): optional, not read back.
  if (const auto v = doc.find("verdicts"); v != doc.end() && !v->is_array()) top.wrong("verdicts", "an array");
  const auto& cells = top.need("cells");
  if (!cells.is_array()) top.wrong("cells", "an array");
  report.cells.reserve(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i)
    report.cells.push_back(cell_from_json(Fields(cells[i], fmt::format("cells[{}]", i), source)));
  if (top.has("checks")) {
    const auto& checks = top.need("checks");
    if (!checks.is_array()) top.wrong("checks", "an array");
    for (std::size_t i = 0; i < checks.size(); ++i)
      report.checks.push_back(record_from_json(Fields(checks[i], fmt::format("checks[{}]", i), source), kCheckFields));
  }
  return report;
}

// A report nests five levels deep (cells[i].reference.rounded). nlohmann
// parses without recursion but dumps and compares recursively: a settings
// object nested 200000 deep overflowed the stack (SIGSEGV) when stored.
constexpr int kMaxJsonDepth = 64;

Report read_report(std::istream& in, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxJsonDepth)
        throw ReportInputError(fmt::format("{}: not an ulpscope report (nested deeper than {} levels)", source,
                                           kMaxJsonDepth));
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 7: ...", or
    // out_of_range.406 for a number beyond a double ("1e400"), which no report holds.
    std::string what = e.what();
    if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw ReportInputError(fmt::format("{}: not valid JSON: {}", source, what));
  }
  return report_from_json(doc, source);
}

Report read_report_file(const std::filesystem::path& path) {
  // A FIFO or a device would block open() or never end (docs/bad-inputs.md).
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw ReportInputError(fmt::format("{}: not a regular file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportInputError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  return read_report(in, path.string());
}

}  // namespace ulpscope
