#include "reports/table_report.hpp"

#include <unistd.h>

#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "reports/cell_facts.hpp"
#include "reports/input_answer.hpp"
#include "reports/scan_index_table.hpp"
#include "reports/text_layout.hpp"
#include "reports/verdict.hpp"

namespace ulpscope {
namespace {

// The per-cell table (--cells). Op and format head each group; runs and
// configs are "total/distinct".
enum class Column { mark, acc, shape, dist, n, ulp, cr, rel, bound, runs, configs, gbps, cub, status };
constexpr std::size_t kColumns = 14;
constexpr std::array<const char*, kColumns> kHeadings = {"",   "acc",   "shape", "dist", "n",    "max ulp", "CR",
                                                         "rel", "bound", "runs", "configs", "GB/s", "%cub", "status"};
// Numbers right-aligned, names left-aligned.
constexpr std::array<bool, kColumns> kRightAligned = {false, false, false, false, true, true, false,
                                                      true,  true,  true,  true,  true, true, false};

// The marks and what they mean, in legend order.
struct Mark {
  char symbol;
  const char* meaning;
  bool (*applies)(const Cell&);
};
constexpr std::array<Mark, 6> kMarks = {{
    {'x', "failed", [](const Cell& c) { return is_failed(c); }},
    {'~', "non-deterministic: different bits over repeated runs", [](const Cell& c) { return is_non_deterministic(c); }},
    {'c', "different bits over launch configurations", [](const Cell& c) { return is_config_dependent(c); }},
    {'p', "different bits over permutations of the input", [](const Cell& c) { return is_order_dependent(c); }},
    {'!', "GPU result differs from the CPU model", [](const Cell& c) { return is_model_mismatch(c); }},
    {'?', "ulp error undefined (see the JSON report's error_note)",
     [](const Cell& c) { return !c.ulp_error && !is_failed(c); }},
}};

std::string marks_of(const Cell& c) {
  std::string m;
  for (const Mark& mark : kMarks)
    if (mark.applies(c)) m += mark.symbol;
  return m;
}

std::string count_pair(int total, int distinct) {
  return total == 0 ? std::string("n/a") : fmt::format("{}/{}", total, distinct);
}

std::array<std::string, kColumns> row_of(const Cell& c) {
  return {marks_of(c),
          c.accumulator,
          c.shape,
          c.distribution,
          fmt::to_string(c.n),
          ulp_error_text(c),
          c.correctly_rounded ? "yes" : "no",
          c.rel_error ? fmt::format("{:.2e}", *c.rel_error) : "n/a",
          short_number(c.bound_ratio),
          count_pair(c.runs, c.distinct_results),
          count_pair(c.configs, c.distinct_across_configs),
          c.gbps ? fmt::format("{:.1f}", *c.gbps) : "n/a",
          c.fraction_of_cub ? fmt::format("{:.0f}%", *c.fraction_of_cub * 100) : "n/a",
          c.status};
}

// Groups (a heading and its items) in order of first appearance.
template <class T>
struct Grouped {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const T*>> items;
  void add(const std::string& heading, const T* item) {
    auto [it, fresh] = items.try_emplace(heading);
    if (fresh) order.push_back(heading);
    it->second.push_back(item);
  }
};

// The verdict's columns: a mark for kernels with failed cells, accumulator,
// shape, one column per distribution group present ("worst ulp" and where),
// the share correctly rounded, the three reproducibility answers, throughput.
constexpr std::array<DistributionGroup, 3> kGroups = {DistributionGroup::realistic, DistributionGroup::adversarial,
                                                      DistributionGroup::user_input};
// The column of a group (the verdict counts special values as adversarial).
constexpr std::size_t column_of(DistributionGroup g) {
  for (std::size_t i = 0; i < kGroups.size(); ++i)
    if (kGroups[i] == g) return i;
  return 1;
}

std::string throughput_cell(const Verdict& v) {
  if (!v.gbps) return "not measured";
  if (!v.fraction_of_cub) return fmt::format("{:.0f}", *v.gbps);
  return fmt::format("{:.0f}, {:.0f}%", *v.gbps, *v.fraction_of_cub * 100);
}

void write_verdict(const Report& report, std::ostream& out, const TableStyle& style) {
  const std::vector<Verdict> all = verdicts(report.cells);
  std::array<bool, kGroups.size()> present{};
  for (const Verdict& v : all)
    for (std::size_t g = 0; g < kGroups.size(); ++g) present[g] = present[g] || v.worst(kGroups[g]).cells > 0;
  const bool any_failed = std::any_of(all.begin(), all.end(), [](const Verdict& v) { return v.failed > 0; });
  std::vector<std::int64_t> throughput_sizes;
  for (const Verdict& v : all)
    if (v.throughput_n && std::find(throughput_sizes.begin(), throughput_sizes.end(), *v.throughput_n) ==
                              throughput_sizes.end())
      throughput_sizes.push_back(*v.throughput_n);

  // The worst ulp is right-aligned inside its column, the distribution after it.
  std::array<std::size_t, kGroups.size()> ulp_width{};
  for (const Verdict& v : all)
    for (std::size_t g = 0; g < kGroups.size(); ++g)
      ulp_width[g] = std::max(ulp_width[g], worst_ulp_text(v.worst(kGroups[g])).size());
  auto worst_cell = [&](const WorstError& w, std::size_t g) {
    std::string s = fmt::format("{:>{}}", worst_ulp_text(w), ulp_width[g]);
    if (!w.distribution.empty()) s += " " + w.distribution;
    return s;
  };

  // A column empty everywhere (no failed kernel, a group with no cells) is left out.
  std::vector<std::string> headings = {"", "acc", "shape"};
  std::vector<bool> right = {false, false, false};
  for (std::size_t g = 0; g < kGroups.size(); ++g) {
    headings.push_back(present[g] ? std::string(to_string(kGroups[g])) : std::string());
    right.push_back(false);
  }
  std::vector<std::size_t> gaps(headings.size(), 2);
  gaps[1] = 1;  // after the one-letter mark
  for (const char* h : {"CR", "run", "cfg", "order", "GB/s, %cub"}) {
    headings.push_back(h);
    right.push_back(std::string_view(h) == "CR");
    // The three yes/no answers read as one group, one space apart; the
    // right-aligned share follows the last worst-error column at one space.
    const std::string_view name(h);
    gaps.push_back(name == "cfg" || name == "order" || name == "CR" ? 1 : 2);
  }
  AlignedRows table(right, gaps);
  table.measure(headings);
  Grouped<Verdict> groups;
  std::map<const Verdict*, std::vector<std::string>> rows;
  for (const Verdict& v : all) {
    std::vector<std::string> row = {v.failed > 0 ? "x" : "", v.accumulator, v.shape};
    for (std::size_t g = 0; g < kGroups.size(); ++g)
      row.push_back(present[g] ? worst_cell(v.worst(kGroups[g]), g) : std::string());
    row.push_back(correctly_rounded_text(v));
    for (SameBits same : {v.run_to_run, v.across_configs, v.across_orders}) row.push_back(to_string(same));
    row.push_back(throughput_cell(v));
    table.measure(row);
    rows.emplace(&v, std::move(row));
    groups.add(fmt::format("{} | {}", v.op, verdict_format_text(v)), &v);
  }

  auto styled = [&](const fmt::text_style& ts, const std::string& s) {
    return style.colour ? fmt::format(ts, "{}", s) : s;
  };
  std::string legend = fmt::format(
      "Verdict: one line per kernel, the worst of its {} cells (every cell: --cells, or --format json or csv).\n",
      report.cells.size());
  // What the worst-error columns mean, for the groups shown.
  std::vector<std::string> generated;
  for (std::size_t g = 0; g < kGroups.size(); ++g)
    if (present[g] && kGroups[g] != DistributionGroup::user_input) generated.emplace_back(to_string(kGroups[g]));
  std::string worst_meaning;
  if (!generated.empty())
    worst_meaning = fmt::format("{}: the largest error in ULPs over those distributions (accuracy_report --help lists "
                                "them), and where it occurred",
                                fmt::join(generated, ", "));
  if (present[column_of(DistributionGroup::user_input)])
    worst_meaning += std::string(worst_meaning.empty() ? "" : "; ") +
                     "user input: the largest error in ULPs on the --input data";
  legend += wrapped(fmt::format("  {}; inf: a non-finite result where the correctly rounded one is finite, or the "
                                "reverse.",
                                worst_meaning),
                    4);
  legend += wrapped("  CR: the share of cells correctly rounded. run, cfg, order: the same bits run to run, across "
                    "launch configurations, across orders of the input (every inexact accumulator depends on order); "
                    "n/a: not measured.",
                    4);
  if (throughput_sizes.empty()) {
    legend += fmt::format("  GB/s, %cub: not measured ({} backend).\n", report.header.backend);
  } else {
    std::vector<std::string> sizes;
    for (std::int64_t n : throughput_sizes) sizes.push_back(size_text(n));
    legend += wrapped(fmt::format("  GB/s, %cub: throughput at n = {}, and as a share of cub::DeviceReduce::Sum's "
                                  "(--throughput-n).",
                                  fmt::join(sizes, ", ")),
                      4);
  }
  if (any_failed) legend += "  x: some of the kernel's cells failed (--cells says why).\n";
  out << '\n' << legend;

  for (const std::string& heading : groups.order) {
    out << '\n' << styled(fmt::emphasis::bold, heading) << '\n';
    out << styled(fmt::emphasis::underline, table.line(headings)) << '\n';
    for (const Verdict* v : groups.items[heading])
      out << table.line(rows.at(v), [&](std::size_t i, const std::string& text) {
        if (i == 0 && !text.empty() && text[0] == 'x') return styled(fmt::fg(fmt::terminal_color::red), text);
        return text;
      }) << '\n';
  }
}

// Every cell, grouped by op and format, with the legend of its marks first.
void write_cells(const Report& report, std::ostream& out, const TableStyle& style) {
  auto styled = [&](const fmt::text_style& ts, const std::string& s) {
    return style.colour ? fmt::format(ts, "{}", s) : s;
  };
  std::string legend;
  for (const Mark& mark : kMarks)
    if (std::any_of(report.cells.begin(), report.cells.end(), mark.applies))
      legend += fmt::format("  {}  {}\n", mark.symbol, mark.meaning);
  out << '\n'
      << wrapped("Every cell. max ulp: the error in ULPs (the largest over an op's outputs); CR: correctly rounded; "
                 "rel: the relative error before the final rounding; bound: the error over its a-priori bound; runs, "
                 "configs: how many, and how many distinct results.",
                 2);
  if (!legend.empty()) out << "marks:\n" << legend;

  Grouped<Cell> groups;
  for (const Cell& c : report.cells)
    groups.add(fmt::format("{} | {}", c.op, c.dtype == c.out_dtype ? c.dtype : c.dtype + "->" + c.out_dtype), &c);
  AlignedRows table(std::vector<bool>(kRightAligned.begin(), kRightAligned.end()));
  const std::vector<std::string> headings(kHeadings.begin(), kHeadings.end());
  table.measure(headings);
  std::map<const Cell*, std::vector<std::string>> rows;
  for (const Cell& c : report.cells) {
    const auto r = row_of(c);
    std::vector<std::string> row(r.begin(), r.end());
    table.measure(row);
    rows.emplace(&c, std::move(row));
  }
  for (const std::string& heading : groups.order) {
    out << '\n' << styled(fmt::emphasis::bold, heading) << '\n';
    out << styled(fmt::emphasis::underline, table.line(headings)) << '\n';
    for (const Cell* c : groups.items[heading])
      out << table.line(rows.at(c), [&](std::size_t i, const std::string& text) {
        if (i == static_cast<std::size_t>(Column::mark) && text.find_first_not_of(' ') != std::string::npos)
          return styled(fmt::fg(fmt::terminal_color::yellow) | fmt::emphasis::bold, text);
        if (i == static_cast<std::size_t>(Column::status))
          return styled(fmt::fg(is_failed(*c) ? fmt::terminal_color::red : fmt::terminal_color::green), text);
        if (i == static_cast<std::size_t>(Column::cr) && c->correctly_rounded)
          return styled(fmt::fg(fmt::terminal_color::green), text);
        return text;
      }) << '\n';
  }
}

}  // namespace

TableStyle table_style_for_fd(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  return {::isatty(fd) == 1 && (no_color == nullptr || *no_color == '\0')};
}

void write_table(const Report& report, std::ostream& out, const TableStyle& style) {
  const auto& h = report.header;
  std::vector<std::string> fields = {
      style.colour ? fmt::format(fmt::emphasis::bold, "ulpscope {}", h.version.empty() ? "?" : h.version)
                   : fmt::format("ulpscope {}", h.version.empty() ? "?" : h.version),
      fmt::format("{} backend on {}", h.backend, h.device),
      fmt::format("commit {}", h.git_commit.empty() ? "unknown" : h.git_commit),
      fmt::format("{} cells in {:.1f} s", report.cells.size(), h.seconds)};
  if (const std::string eps = settings_eps(h.settings_json); !eps.empty()) fields.push_back("eps " + eps);
  out << joined_within_width(fields);
  for (const auto& [shape, reason] : h.unavailable) out << wrapped(fmt::format("not run: {} ({})", shape, reason), 2);
  out << input_answer_text(report);
  if (report.cells.empty()) {
    out << "(no cells)\n";
    return;
  }
  write_verdict(report, out, style);
  out << scan_index_text(report.cells);
  if (style.cells) write_cells(report, out, style);
}

}  // namespace ulpscope
