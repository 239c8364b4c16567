#include "reports/markdown_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <vector>

#include "reports/allreduce_chart.hpp"
#include "reports/cell_facts.hpp"
#include "reports/input_answer.hpp"
#include "reports/verdict.hpp"

namespace ulpscope {
namespace {

// A cell with a ULP error ranks by it, largest first; cells without one (failed,
// or a non-finite result where a finite one was due, or the reverse) come after,
// failed first: they are listed apart, not among the worst by ULP.
bool worse(const Cell* a, const Cell* b) {
  auto rank = [](const Cell& c) { return c.ulp_error && !is_failed(c) ? 0 : is_failed(c) ? 1 : 2; };
  if (rank(*a) != rank(*b)) return rank(*a) < rank(*b);
  if (a->ulp_error && b->ulp_error && *a->ulp_error != *b->ulp_error) return *a->ulp_error > *b->ulp_error;
  return false;
}

bool has_ulp_error(const Cell* c) { return !is_failed(*c) && c->ulp_error.has_value(); }

// Room kept after the verdict for the worst cells and the closing lines.
constexpr std::size_t kRoomAfterVerdict = 12000;

std::string verdict_worst(const WorstError& w) {
  if (w.cells == 0) return "-";
  return fmt::format("{} ({})", worst_ulp_text(w), markdown_text(w.distribution));
}

// The verdict table, one row per kernel, until `budget` characters; says how
// many kernels it left out.
std::string verdict_table(const std::vector<Cell>& cells, std::size_t budget) {
  const std::vector<Verdict> all = verdicts(cells);
  const bool user_input =
      std::any_of(all.begin(), all.end(), [](const Verdict& v) { return v.user_input.cells > 0; });
  const bool generated = std::any_of(all.begin(), all.end(), [](const Verdict& v) {
    return v.realistic.cells > 0 || v.adversarial.cells > 0;
  });
  std::string md = "#### Verdict\n\n";
  md += "One row per kernel, the worst of its cells. Worst ULP error on realistic and on adversarial distributions, "
        "and where (inf: a non-finite result where the correctly rounded one is finite, or the reverse); CR: the "
        "share of cells correctly rounded; the same bits run to run, across launch configurations (cfg) and input "
        "orders (every inexact accumulator depends on order); throughput at the largest size measured.\n\n";
  md += "| op | format | accumulator | shape |";
  if (generated) md += " realistic | adversarial |";
  if (user_input) md += " user input |";
  md += " CR | run | cfg | order | throughput | failed |\n|---|---|---|---|";
  if (generated) md += "--:|--:|";
  if (user_input) md += "--:|";
  md += "--:|---|---|---|--:|--:|\n";
  std::size_t shown = 0;
  for (const Verdict& v : all) {
    std::string row = fmt::format("| {} | {} | {} | {} |", markdown_text(v.op), markdown_text(verdict_format_text(v)),
                                  markdown_text(v.accumulator), markdown_text(v.shape));
    if (generated) row += fmt::format(" {} | {} |", verdict_worst(v.realistic), verdict_worst(v.adversarial));
    if (user_input) row += fmt::format(" {} |", verdict_worst(v.user_input));
    row += fmt::format(" {} | {} | {} | {} | {} | {} |\n", correctly_rounded_text(v), to_string(v.run_to_run),
                       to_string(v.across_configs), to_string(v.across_orders), throughput_text(v), v.failed);
    if (md.size() + row.size() > budget) break;
    md += row;
    ++shown;
  }
  if (shown < all.size())
    md += fmt::format("\n{} more kernels left out to fit a comment: see the JSON report's verdicts.\n",
                      all.size() - shown);
  return md + "\n";
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
  // Where there is no ULP error, the reason beside the status.
  std::string status = c.status;
  if (!c.ulp_error && !is_failed(c))
    if (const std::string note = error_note_for_export(c); !note.empty()) status += ": " + note;
  return fmt::format("| {}{} | {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_text(cell_label(c)), marks,
                     ulp_error_text(c), c.correctly_rounded ? "yes" : "no",
                     c.rel_error ? fmt::format("{:.2e}", *c.rel_error) : "n/a", short_number(c.bound_ratio),
                     pair(c.runs, c.distinct_results), pair(c.configs, c.distinct_across_configs),
                     c.gbps ? fmt::format("{:.1f}", *c.gbps) : "n/a", markdown_text(status));
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
  const auto with_ulp = std::size_t(std::count_if(order.begin(), order.end(), has_ulp_error));
  if (with_ulp > 0)
    md += fmt::format("- largest max ulp error: **{}** ({})\n", short_number(order.front()->ulp_error),
                      markdown_text(cell_label(*order.front())));
  if (with_ulp < order.size())
    md += fmt::format("- cells without a ULP error (failed, or non-finite where the correctly rounded result is "
                      "finite, or the reverse): {}\n",
                      order.size() - with_ulp);
  if (std::none_of(cells.begin(), cells.end(), [](const Cell& c) { return c.gbps.has_value(); }))
    md += "- throughput: not measured\n";
  for (const auto& [shape, reason] : h.unavailable)
    md += fmt::format("- not run: {} ({})\n", markdown_text(shape), markdown_text(reason));
  md += "\n";
  md += input_answer_markdown(report);
  if (cells.empty()) {
    out << md;
    return;
  }
  md += verdict_table(cells, options.max_chars > kRoomAfterVerdict ? options.max_chars - kRoomAfterVerdict : 0);
  md += allreduce_markdown(cells);  // all-reduce cells only

  // The worst cells by ULP error, then those without one, then the rest folded.
  std::vector<bool> listed(order.size(), false);
  const std::size_t worst = std::min(options.worst_cells, with_ulp);
  if (worst > 0) {
    md += worst == with_ulp ? std::string("#### Cells by ULP error, worst first\n\n")
                                : fmt::format("#### The {} worst cells by ULP error\n\n", worst);
    md += kTableHead;
    for (std::size_t i = 0; i < worst; ++i) {
      md += table_row(*order[i]);
      listed[i] = true;
    }
  }
  const std::size_t without = std::min(options.worst_cells, order.size() - with_ulp);
  if (without > 0) {
    md += without == order.size() - with_ulp
              ? fmt::format("\n#### The {} cells without a ULP error\n\n", without)
              : fmt::format("\n#### {} of the {} cells without a ULP error\n\n", without, order.size() - with_ulp);
    md += kTableHead;
    for (std::size_t i = with_ulp; i < with_ulp + without; ++i) {
      md += table_row(*order[i]);
      listed[i] = true;
    }
  }
  md += "\n❌ failed · ≠ non-deterministic (run to run) · ⚙ differs across launch configurations · "
        "⚠️ GPU differs from the CPU model · n/a: not defined or not measured\n";

  const std::size_t rest_count = std::size_t(std::count(listed.begin(), listed.end(), false));
  if (rest_count > 0) {
    const std::string close = "\n</details>\n";
    std::string rest = fmt::format("\n<details><summary>The other {} cells</summary>\n\n", rest_count);
    rest += kTableHead;
    std::size_t left_out = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (listed[i]) continue;
      std::string row = table_row(*order[i]);
      // Room for this row, the closing tag and the "left out" line.
      if (left_out > 0 || md.size() + rest.size() + row.size() + close.size() + 120 > options.max_chars) {
        ++left_out;
        continue;
      }
      rest += row;
    }
    if (left_out > 0)
      rest += fmt::format("\n{} more cells left out to fit a comment: see the JSON report.\n", left_out);
    md += rest + close;
  }
  out << md;
}

}  // namespace ulpscope
