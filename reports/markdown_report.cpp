#include "reports/markdown_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <vector>

#include "reports/cell_facts.hpp"

namespace ulpscope {
namespace {

// Failed cells first, then undefined errors, then by max ulp error, largest first.
bool worse(const Cell* a, const Cell* b) {
  auto rank = [](const Cell& c) { return is_failed(c) ? 0 : !c.ulp_error ? 1 : 2; };
  if (rank(*a) != rank(*b)) return rank(*a) < rank(*b);
  if (a->ulp_error && b->ulp_error && *a->ulp_error != *b->ulp_error) return *a->ulp_error > *b->ulp_error;
  return false;
}

constexpr const char* kTableHead =
    "| cell | max ulp | CR | rel | bound ratio | runs/distinct | configs/distinct | GB/s | status |\n"
    "|---|--:|---|--:|--:|--:|--:|--:|---|\n";

std::string table_row(const Cell& c) {
  std::string marks;
  if (is_failed(c)) marks += " ❌";
  if (is_non_deterministic(c)) marks += " ≠";
  if (is_config_dependent(c)) marks += " ⚙";
  if (is_model_mismatch(c)) marks += " ⚠️";
  auto pair = [](int total, int distinct) {
    return total == 0 ? std::string("n/a") : fmt::format("{}/{}", total, distinct);
  };
  return fmt::format("| {}{} | {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_text(cell_label(c)), marks,
                     ulp_error_text(c), c.correctly_rounded ? "yes" : "no",
                     c.rel_error ? fmt::format("{:.2e}", *c.rel_error) : "n/a", short_number(c.bound_ratio),
                     pair(c.runs, c.distinct_results), pair(c.configs, c.distinct_across_configs),
                     c.gbps ? fmt::format("{:.1f}", *c.gbps) : "n/a", markdown_text(c.status));
}

}  // namespace

std::string markdown_text(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '`': out += "\\`"; break;
      case '<': out += "&lt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': out += ' '; break;
      default: out += ch;
    }
  }
  return out;
}

void write_markdown(const Report& report, std::ostream& out, const MarkdownOptions& options) {
  const auto& h = report.header;
  const auto& cells = report.cells;
  auto count = [&](auto pred) { return std::count_if(cells.begin(), cells.end(), pred); };
  const auto failed = count(is_failed);
  const auto nondet = count(is_non_deterministic);
  const auto config_dependent = count(is_config_dependent);
  const auto order_dependent = count(is_order_dependent);
  const auto mismatch = count(is_model_mismatch);
  const auto rounded = count([](const Cell& c) { return c.correctly_rounded; });

  std::string md = "### ulpscope accuracy report\n\n";
  md += fmt::format("**{} cells** · {} backend on {} · commit {} · {:.1f} s", cells.size(),
                    markdown_text(h.backend), markdown_text(h.device),
                    markdown_text(h.git_commit.empty() ? "unknown" : h.git_commit), h.seconds);
  if (const std::string eps = settings_eps(h.settings_json); !eps.empty()) md += " · eps " + eps;
  md += "\n\n";
  md += fmt::format("- failed: **{}** · non-deterministic: **{}** · GPU differs from model: **{}** · "
                    "correctly rounded: {}/{}\n",
                    failed, nondet, mismatch, rounded, cells.size());
  md += fmt::format("- different bits over launch configurations: {} · over input permutations: {}\n",
                    config_dependent, order_dependent);
  std::vector<const Cell*> order;
  for (const Cell& c : cells) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), worse);
  const auto worst_defined = std::find_if(order.begin(), order.end(), [](const Cell* c) {
    return !is_failed(*c) && c->ulp_error.has_value();
  });
  if (worst_defined != order.end())
    md += fmt::format("- largest max ulp error: **{}** ({})\n", short_number((*worst_defined)->ulp_error),
                      markdown_text(cell_label(**worst_defined)));
  if (std::none_of(cells.begin(), cells.end(), [](const Cell& c) { return c.gbps.has_value(); }))
    md += "- throughput: not measured\n";
  for (const auto& [shape, reason] : h.unavailable)
    md += fmt::format("- not run: {} ({})\n", markdown_text(shape), markdown_text(reason));
  md += "\n";
  if (cells.empty()) {
    out << md;
    return;
  }

  const std::size_t shown = std::min(options.worst_cells, order.size());
  md += shown == order.size() ? std::string("#### Cells, worst first\n\n")
                               : fmt::format("#### The {} worst cells\n\n", shown);
  md += kTableHead;
  for (std::size_t i = 0; i < shown; ++i) md += table_row(*order[i]);
  md += "\n❌ failed · ≠ non-deterministic (run to run) · ⚙ differs across launch configurations · "
        "⚠️ GPU differs from the CPU model · n/a: not defined or not measured\n";

  if (order.size() > shown) {
    const std::string close = "\n</details>\n";
    std::string rest = fmt::format("\n<details><summary>The other {} cells</summary>\n\n", order.size() - shown);
    rest += kTableHead;
    std::size_t i = shown;
    for (; i < order.size(); ++i) {
      std::string row = table_row(*order[i]);
      // Room for this row, the closing tag and the "left out" line.
      if (md.size() + rest.size() + row.size() + close.size() + 120 > options.max_chars) break;
      rest += row;
    }
    if (i < order.size())
      rest += fmt::format("\n{} more cells left out to fit a comment: see the JSON report.\n", order.size() - i);
    md += rest + close;
  }
  out << md;
}

}  // namespace ulpscope
