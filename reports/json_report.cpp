#include "reports/json_report.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <ostream>
#include <utility>

#include "formats/hex_float.hpp"
#include "reports/cell_facts.hpp"
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

ojson cell_to_json(const Cell& c) {
  ojson j;
  j["op"] = c.op;
  j["dtype"] = c.dtype;
  j["out_dtype"] = c.out_dtype;
  j["accumulator"] = c.accumulator;
  j["shape"] = c.shape;
  j["distribution"] = c.distribution;
  j["n"] = c.n;
  j["seed"] = c.seed;
  j["rows"] = optional_value(c.rows);
  j["cols"] = optional_value(c.cols);
  j["axis"] = c.axis;
  j["saturation"] = c.saturation.empty() ? ojson(nullptr) : ojson(c.saturation);
  j["reference"] = {{"rounded", c.reference_rounded}, {"exact", c.reference_exact}};
  j["result"] = c.result;
  j["component"] = c.component;
  j["ulp_error"] = number_or_null(c.ulp_error);
  j["rel_error"] = number_or_null(c.rel_error);
  j["condition"] = number_or_null(c.condition);
  j["bound_ratio"] = number_or_null(c.bound_ratio);
  j["working_dtype"] = c.working_dtype.empty() ? ojson(nullptr) : ojson(c.working_dtype);
  j["mean_ulp_error"] = number_or_null(c.mean_ulp_error);
  j["rstd_ulp_error"] = number_or_null(c.rstd_ulp_error);
  j["variance_ulp_error"] = number_or_null(c.variance_ulp_error);
  j["ideal_ulp_error"] = number_or_null(c.ideal_ulp_error);
  j["accumulator_ulp_error"] = number_or_null(c.accumulator_ulp_error);
  j["statistics_note"] = c.statistics_note;
  if (c.scan) j["scan"] = scan_to_json(*c.scan);  // cumsum cells only
  j["error_note"] = error_note_for_export(c);
  j["correctly_rounded"] = c.correctly_rounded;
  j["matches_model"] = optional_value(c.matches_model);
  j["models_checked"] = optional_value(c.models_checked);
  j["runs"] = c.runs;
  j["distinct_results"] = c.distinct_results;
  j["configs"] = c.configs;
  j["distinct_across_configs"] = c.distinct_across_configs;
  j["permutations"] = optional_value(c.permutations);
  j["distinct_across_permutations"] = optional_value(c.distinct_across_permutations);
  j["gbps"] = number_or_null(c.gbps);
  j["fraction_of_cub"] = number_or_null(c.fraction_of_cub);
  j["fraction_of_copy"] = number_or_null(c.fraction_of_copy);
  j["throughput_n"] = optional_value(c.throughput_n);
  j["status"] = c.status;
  j["note"] = c.note;
  return j;
}

ojson check_to_json(const UserValueCheck& c) {
  ojson j;
  j["label"] = c.label;
  j["given"] = c.given;
  j["value"] = c.value;
  j["given_exactly"] = c.given_exactly;
  j["op"] = c.op;
  j["out_dtype"] = c.out_dtype;
  j["reference"] = {{"rounded", c.reference_rounded}, {"exact", c.reference_exact}};
  j["ulp_error"] = number_or_null(c.ulp_error);
  j["error_note"] = c.error_note;
  j["correctly_rounded"] = c.correctly_rounded;
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

Cell cell_from_json(const Fields& f) {
  Cell c;
  c.op = f.text("op");
  c.dtype = f.text("dtype");
  c.out_dtype = f.text("out_dtype");
  c.accumulator = f.text("accumulator");
  c.shape = f.text("shape");
  c.distribution = f.text("distribution");
  c.n = f.integer("n", 0);
  c.seed = f.unsigned_integer("seed");
  c.rows = f.integer_or_null("rows", 0, std::numeric_limits<std::int64_t>::max());
  c.cols = f.integer_or_null("cols", 0, std::numeric_limits<std::int64_t>::max());
  c.axis = f.text("axis");
  if (c.axis != "all" && c.axis != "inner" && c.axis != "outer")
    f.fail(f.where("axis"), fmt::format("{} is not all, inner or outer", json_quoted(c.axis)));
  c.saturation = f.text_or_null("saturation");
  const Fields ref = f.object("reference");
  c.reference_rounded = ref.hex("rounded");
  c.reference_exact = ref.text("exact");
  c.result = f.hex("result");
  c.component = f.text("component");
  c.ulp_error = f.number_or_null("ulp_error");
  // Facts no run writes (docs/bad-inputs.md): an error is a distance, and a NaN result
  // has an error (0) only beside a NaN reference.
  if (c.ulp_error && *c.ulp_error < 0) f.fail(f.where("ulp_error"), fmt::format("{} is negative", *c.ulp_error));
  const auto is_nan = [](const std::string& hex) {
    const auto v = parse_hex_float(hex);
    return v && std::isnan(*v);
  };
  if (c.ulp_error && is_nan(c.result) && !is_nan(c.reference_rounded))
    f.fail(f.where("result"), fmt::format("NaN beside a finite ulp_error ({}) and a non-NaN reference", *c.ulp_error));
  c.rel_error = f.number_or_null("rel_error");
  c.condition = f.number_or_null("condition");
  c.bound_ratio = f.number_or_null("bound_ratio");
  c.working_dtype = f.text_or_null("working_dtype");
  const std::pair<const char*, std::optional<double>*> statistics[] = {
      {"mean_ulp_error", &c.mean_ulp_error},   {"rstd_ulp_error", &c.rstd_ulp_error},
      {"variance_ulp_error", &c.variance_ulp_error}, {"ideal_ulp_error", &c.ideal_ulp_error},
      {"accumulator_ulp_error", &c.accumulator_ulp_error}};
  for (const auto& [key, into] : statistics) {
    *into = f.number_absent_or_null(key);
    if (*into && **into < 0) f.fail(f.where(key), fmt::format("{} is negative", **into));
  }
  c.statistics_note = f.text_or_null("statistics_note");
  if (f.has("scan") && !f.need("scan").is_null()) {
    try {
      c.scan = scan_from_json(f.need("scan"));
    } catch (const std::invalid_argument& e) {
      f.fail(f.where("scan"), e.what());
    }
  }
  c.error_note = f.text("error_note");
  c.correctly_rounded = f.boolean("correctly_rounded");
  c.matches_model = f.boolean_or_null("matches_model");
  if (auto m = f.integer_or_null("models_checked", 0, kIntMax)) c.models_checked = static_cast<int>(*m);
  c.runs = static_cast<int>(f.integer("runs", 0, kIntMax));
  c.distinct_results = static_cast<int>(f.integer("distinct_results", 0, kIntMax));
  c.configs = static_cast<int>(f.integer("configs", 0, kIntMax));
  c.distinct_across_configs = static_cast<int>(f.integer("distinct_across_configs", 0, kIntMax));
  if (auto p = f.integer_or_null("permutations", 0, kIntMax)) c.permutations = static_cast<int>(*p);
  if (auto d = f.integer_or_null("distinct_across_permutations", 0, kIntMax))
    c.distinct_across_permutations = static_cast<int>(*d);
  c.gbps = f.number_or_null("gbps");
  c.fraction_of_cub = f.number_or_null("fraction_of_cub");
  c.fraction_of_copy = f.number_or_null("fraction_of_copy");
  c.throughput_n = f.integer_or_null("throughput_n", 0, std::numeric_limits<std::int64_t>::max());
  c.status = f.text("status");
  if (c.status != "ok" && !c.status.starts_with("failed: "))
    f.fail(f.where("status"), fmt::format("{} is neither \"ok\" nor \"failed: reason\"", json_quoted(c.status)));
  c.note = f.text("note");
  return c;
}

UserValueCheck check_from_json(const Fields& f) {
  UserValueCheck c;
  c.label = f.text("label");
  c.given = f.text("given");
  c.value = f.hex("value");
  c.given_exactly = f.boolean("given_exactly");
  c.op = f.text("op");
  c.out_dtype = f.text("out_dtype");
  const Fields ref = f.object("reference");
  c.reference_rounded = ref.hex("rounded");
  c.reference_exact = ref.text("exact");
  c.ulp_error = f.number_or_null("ulp_error");
  if (c.ulp_error && *c.ulp_error < 0) f.fail(f.where("ulp_error"), fmt::format("{} is negative", *c.ulp_error));
  c.error_note = f.text("error_note");
  c.correctly_rounded = f.boolean("correctly_rounded");
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
  for (const Cell& c : report.cells) cells.push_back(cell_to_json(c));
  doc["cells"] = std::move(cells);
  ojson checks = ojson::array();
  for (const UserValueCheck& c : report.checks) checks.push_back(check_to_json(c));
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
      report.checks.push_back(check_from_json(Fields(checks[i], fmt::format("checks[{}]", i), source)));
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
