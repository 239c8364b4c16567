#pragma once
// The terminal report's section on scans (docs/spec.md, "Scans along the
// index"): how a cumsum kernel's error grows along the index, one line per
// kernel, so that a serial fp16 running sum's drift and an fp32 or exact
// scan's flat line read side by side without the JSON.
#include <optional>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"

namespace ulpscope {

// For each kernel with cumsum cells, in the order they first appear: the
// mean ulp error over each tenth of a line, on the cell (distribution and
// size) whose last tenth is worst, and the growth from the first tenth to
// the last. Grouped by op and format as the verdict is, with its legend;
// empty when no cell has a scan profile.
std::string scan_index_text(const std::vector<Cell>& cells);

// A decile's mean as the section prints it, at most five characters: "0",
// "<0.01", "0.012", "0.251", "12.5", "999", "1.9e3", "3e12"; "n/a" where
// undefined.
std::string compact_ulp(std::optional<double> v);

}  // namespace ulpscope
