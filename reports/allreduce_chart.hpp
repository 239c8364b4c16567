#pragma once
// The all-reduce family in the Markdown and HTML reports (docs/spec.md,
// "All-reduce across GPUs"): the worst per-element error against P, and how
// many distinct outputs each problem gave across algorithms, protocols and
// methods.
#include <string>
#include <vector>

#include "accuracy/cell.hpp"

namespace ulpscope {

inline constexpr double kAllreduceUlpFloor = 1e-3;

// The HTML section: one chart of the max ULP error against P per (op,
// format), one line per method and algorithm; empty when no cell is an
// all-reduce.
std::string allreduce_section(const std::vector<Cell>& cells);

// The Markdown section: per (op, format, method, shape) the max ULP error
// at each P, then the distinct outputs of each problem; empty when no cell
// is an all-reduce.
std::string allreduce_markdown(const std::vector<Cell>& cells);

}  // namespace ulpscope
