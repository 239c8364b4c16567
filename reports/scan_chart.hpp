#pragma once
// The HTML report's "Error along the index" section (docs/spec.md, "Scans
// along the index"): one chart per (format, axis, shape) of the cumsum
// cells, one line per accumulator, the max ulp error of each index decile.
#include <string>
#include <vector>

#include "accuracy/cell.hpp"

namespace ulpscope {

inline constexpr double kScanUlpFloor = 1e-3;

// The section's HTML with its data and script; empty when no cell scans.
std::string scan_section(const std::vector<Cell>& cells);

}  // namespace ulpscope
