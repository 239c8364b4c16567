#pragma once
// The `scan` object of a cumsum cell in the JSON report
// (docs/report-schema.md): written by json_report, read back for baselines.
#include <nlohmann/json.hpp>

#include "accuracy/scan_profile.hpp"

namespace ulpscope {

nlohmann::ordered_json scan_to_json(const ScanProfile& s);
// Throws std::invalid_argument with what is wrong (a missing key, a
// negative error, a series that is not ten numbers or nulls).
ScanProfile scan_from_json(const nlohmann::json& v);

}  // namespace ulpscope
