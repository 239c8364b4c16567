#pragma once
// The terminal report (docs/spec.md, "What ulpscope measures", 1): the verdict
// first, one line per kernel (reports/verdict.hpp) with its legend, then, with
// --cells, every cell grouped by op and format, failed and non-deterministic
// cells marked. Lines fit 120 columns for the built-in kernels.
#include <iosfwd>

#include "accuracy/cell.hpp"

namespace ulpscope {

struct TableStyle {
  bool colour = false;
  bool cells = false;  // every cell after the verdict (--cells)
};

// Colour only on a terminal, and never when NO_COLOR is set to a non-empty
// value (https://no-color.org).
TableStyle table_style_for_fd(int fd);

void write_table(const Report& report, std::ostream& out, const TableStyle& style = {});

}  // namespace ulpscope
