#include "reports/scan_json.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ulpscope {
namespace {

using ojson = nlohmann::ordered_json;

ojson series(const std::array<std::optional<double>, kIndexDeciles>& v) {
  ojson a = ojson::array();
  for (const auto& e : v) a.push_back(e ? ojson(*e) : ojson(nullptr));
  return a;
}

std::array<std::optional<double>, kIndexDeciles> read_series(const nlohmann::json& v, const char* key) {
  const auto it = v.find(key);
  if (it == v.end() || !it->is_array() || it->size() != kIndexDeciles)
    throw std::invalid_argument(fmt::format("{}: expected an array of {} numbers or nulls", key, kIndexDeciles));
  std::array<std::optional<double>, kIndexDeciles> out{};
  for (int d = 0; d < kIndexDeciles; ++d) {
    const auto& e = (*it)[std::size_t(d)];
    if (e.is_null()) continue;
    if (!e.is_number() || e.get<double>() < 0)
      throw std::invalid_argument(fmt::format("{}[{}]: expected a number >= 0 or null, found {}", key, d, e.dump()));
    out[std::size_t(d)] = e.get<double>();
  }
  return out;
}

}  // namespace

ojson scan_to_json(const ScanProfile& s) {
  ojson j;
  j["share_correctly_rounded"] = s.share_correctly_rounded;
  j["worst_index"] = s.worst_index ? ojson(*s.worst_index) : ojson(nullptr);
  j["line_length"] = s.line_length;
  j["max_ulp_by_decile"] = series(s.max_ulp_by_decile);
  j["mean_ulp_by_decile"] = series(s.mean_ulp_by_decile);
  return j;
}

ScanProfile scan_from_json(const nlohmann::json& v) {
  if (!v.is_object()) throw std::invalid_argument("expected an object");
  ScanProfile s;
  const auto share = v.find("share_correctly_rounded");
  if (share == v.end() || !share->is_number() || share->get<double>() < 0 || share->get<double>() > 1)
    throw std::invalid_argument("share_correctly_rounded: expected a number in [0, 1]");
  s.share_correctly_rounded = share->get<double>();
  const auto length = v.find("line_length");
  if (length == v.end() || !length->is_number_integer() || length->get<std::int64_t>() < 0)
    throw std::invalid_argument("line_length: expected a whole number >= 0");
  s.line_length = length->get<std::int64_t>();
  const auto worst = v.find("worst_index");
  if (worst == v.end() || !(worst->is_null() || (worst->is_number_integer() && worst->get<std::int64_t>() >= 0 &&
                                                 worst->get<std::int64_t>() < std::max<std::int64_t>(s.line_length, 1))))
    throw std::invalid_argument("worst_index: expected null or a whole number below line_length");
  if (!worst->is_null()) s.worst_index = worst->get<std::int64_t>();
  s.max_ulp_by_decile = read_series(v, "max_ulp_by_decile");
  s.mean_ulp_by_decile = read_series(v, "mean_ulp_by_decile");
  return s;
}

}  // namespace ulpscope
