#pragma once
// docs/spec.md, "Scans along the index": the per-index metrics of a cumsum
// cell from the ULP errors of its outputs.
#include <cstdint>
#include <optional>
#include <vector>

#include "accuracy/scan_profile.hpp"

namespace ulpscope {

// errors[i]: the ULP error of output i (nullopt: a finite/non-finite
// mismatch); correct[i]: whether it is the correctly rounded prefix. The
// outputs are lines of line_length elements, one after another; worst is
// the output the cell reports (its ulp_error).
ScanProfile scan_profile(const std::vector<std::optional<double>>& errors, const std::vector<bool>& correct,
                         std::int64_t line_length, std::size_t worst);

}  // namespace ulpscope
