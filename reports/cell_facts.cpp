#include "reports/cell_facts.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <utility>
#include <variant>

#include "reports/cell_fields.hpp"

namespace ulpscope {

CellKey cell_key(const Cell& c) {
  return {c.op, c.dtype, c.out_dtype, c.accumulator, c.shape, c.distribution, c.n, c.seed,
          c.axis, c.rows,  c.cols,      c.saturation};
}

std::string cell_label(const CellKey& k) {
  std::string s = fmt::format("{} {}->{} {} {} {} n={} seed={}", k.op, k.dtype, k.out_dtype,
                              k.accumulator, k.shape, k.distribution, k.n, k.seed);
  if (k.axis != "all") s += fmt::format(" axis={}", k.axis);
  if (k.rows || k.cols)
    s += fmt::format(" [{}x{}]", k.rows ? fmt::to_string(*k.rows) : "?",
                     k.cols ? fmt::to_string(*k.cols) : "?");
  if (!k.saturation.empty()) s += " " + k.saturation;
  return s;
}

bool is_failed(const Cell& c) { return c.status != "ok"; }

bool is_non_deterministic(const Cell& c) { return c.distinct_results > 1; }
bool is_config_dependent(const Cell& c) { return c.distinct_across_configs > 1; }
bool is_order_dependent(const Cell& c) { return c.distinct_across_permutations.value_or(0) > 1; }

bool is_model_mismatch(const Cell& c) { return c.matches_model == false; }

std::string short_number(std::optional<double> v) {
  if (!v) return "n/a";
  if (std::isnan(*v)) return "nan";
  if (std::isinf(*v)) return *v > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", *v);
}

std::string ulp_error_text(const Cell& c) {
  if (c.working_dtype.empty()) return short_number(c.ulp_error);
  return fmt::format("{} (acc {})", short_number(c.ulp_error), short_number(c.accumulator_ulp_error));
}

std::optional<double> finite_or_null(std::optional<double> v) {
  if (v && !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::string error_note_for_export(const Cell& c) {
  std::string note = c.error_note;
  for (const Field<Cell>& f : kCellFields) {
    const auto* metric = std::get_if<std::optional<double> Cell::*>(&f.member);
    if (metric == nullptr) continue;
    const std::optional<double>& value = c.**metric;
    if (!value || std::isfinite(*value)) continue;
    if (!note.empty()) note += "; ";
    note += fmt::format("{} was {} (written as null)", f.key, short_number(value));
  }
  return note;
}

std::string settings_eps(const std::string& settings_json) {
  const auto settings = nlohmann::json::parse(settings_json, nullptr, false);
  if (!settings.is_object() || !settings.contains("eps") || !settings["eps"].is_number()) return "";
  return fmt::format("{}", settings["eps"].get<double>());
}

}  // namespace ulpscope
