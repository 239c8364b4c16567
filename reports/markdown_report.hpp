#pragma once
// The report as Markdown that fits a pull-request comment: the summary first,
// then the verdict (one row per kernel, reports/verdict.hpp), the worst cells
// by ULP error, the cells without one, the rest folded in <details>.
#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>

#include "accuracy/cell.hpp"

namespace ulpscope {

struct MarkdownOptions {
  std::size_t worst_cells = 20;
  // GitHub refuses comments over 65536 characters; the folded table stops
  // before this many and says how many cells it left out.
  std::size_t max_chars = 60000;
};

void write_markdown(const Report& report, std::ostream& out, const MarkdownOptions& options = {});

// Text made safe for a Markdown table cell: | \ ` < & escaped (a '>' only
// matters at the start of a line, which a table cell never is).
std::string markdown_text(std::string_view s);

}  // namespace ulpscope
