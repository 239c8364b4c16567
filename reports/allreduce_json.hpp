#pragma once
// The `allreduce` object of an all-reduce cell in the JSON report
// (docs/report-schema.md): written by json_report, read back for baselines;
// and the same values as the CSV's allreduce_* columns.
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "accuracy/allreduce_profile.hpp"

namespace ulpscope {

nlohmann::ordered_json allreduce_to_json(const AllreduceProfile& a);
// Throws std::invalid_argument with what is wrong (a missing key, a name
// that is not an algorithm, protocol or method, a negative error).
AllreduceProfile allreduce_from_json(const nlohmann::json& v);

// (column, text) for each key of the object, in order; empty text where JSON has null.
std::vector<std::pair<std::string, std::string>> allreduce_csv_columns(const AllreduceProfile* a);

}  // namespace ulpscope
