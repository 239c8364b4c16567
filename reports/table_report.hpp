#pragma once
// The terminal table (docs/spec.md, "What ulpscope measures", 1): cells grouped by op and
// dtype, aligned columns, failed and non-deterministic cells marked.
#include <iosfwd>

#include "accuracy/cell.hpp"

namespace ulpscope {

struct TableStyle {
  bool colour = false;
};

// Colour only on a terminal, and never when NO_COLOR is set to a non-empty
// value (https://no-color.org).
TableStyle table_style_for_fd(int fd);

void write_table(const Report& report, std::ostream& out, const TableStyle& style = {});

}  // namespace ulpscope
