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

namespace ulpscope {
namespace {

enum class Column { mark, op, dtype, acc, shape, dist, n, ulp, cr, rel, bound, runs, configs, gbps, cub, status };
constexpr std::size_t kColumns = 16;
constexpr std::array<const char*, kColumns> kHeadings = {
    "",  "op",        "dtype->out", "acc",           "shape",              "dist", "n", "max ulp",
    "CR", "rel", "bound ratio", "runs/distinct", "configs/distinct", "GB/s", "%cub", "status"};
// Numbers right-aligned, names left-aligned.
constexpr std::array<bool, kColumns> kRightAligned = {false, false, false, false, false, false, true, true,
                                                      false, true,  true,  true,  true,  true,  true,  false};

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
          c.op,
          c.dtype == c.out_dtype ? c.dtype : fmt::format("{}->{}", c.dtype, c.out_dtype),
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

}  // namespace

TableStyle table_style_for_fd(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  return {::isatty(fd) == 1 && (no_color == nullptr || *no_color == '\0')};
}

void write_table(const Report& report, std::ostream& out, const TableStyle& style) {
  const auto& h = report.header;
  auto styled = [&](const fmt::text_style& ts, const std::string& s) {
    return style.colour ? fmt::format(ts, "{}", s) : s;
  };
  out << styled(fmt::emphasis::bold, fmt::format("ulpscope {}", h.version.empty() ? "?" : h.version))
      << fmt::format(" | {} backend on {} | commit {} | {} cells in {:.1f} s", h.backend, h.device,
                     h.git_commit.empty() ? "unknown" : h.git_commit, report.cells.size(), h.seconds);
  if (const std::string eps = settings_eps(h.settings_json); !eps.empty()) out << " | eps " << eps;
  out << '\n';
  for (const auto& [shape, reason] : h.unavailable) out << fmt::format("not run: {} ({})\n", shape, reason);
  if (report.cells.empty()) {
    out << "(no cells)\n";
    return;
  }

  // Groups by (op, dtype) in order of first appearance; cells keep their
  // order inside a group.
  std::vector<std::pair<std::string, std::string>> group_order;
  std::map<std::pair<std::string, std::string>, std::vector<const Cell*>> groups;
  for (const Cell& c : report.cells) {
    auto key = std::make_pair(c.op, c.dtype);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) group_order.push_back(key);
    it->second.push_back(&c);
  }

  std::array<std::size_t, kColumns> width{};
  for (std::size_t i = 0; i < kColumns; ++i) width[i] = std::string(kHeadings[i]).size();
  std::vector<std::array<std::string, kColumns>> rows;
  rows.reserve(report.cells.size());
  for (const auto& key : group_order)
    for (const Cell* c : groups[key]) {
      rows.push_back(row_of(*c));
      for (std::size_t i = 0; i < kColumns; ++i) width[i] = std::max(width[i], rows.back()[i].size());
    }

  auto line = [&](const std::array<std::string, kColumns>& cols, const Cell* c) {
    std::string s;
    for (std::size_t i = 0; i < kColumns; ++i) {
      std::string text = kRightAligned[i] ? fmt::format("{:>{}}", cols[i], width[i])
                                          : fmt::format("{:<{}}", cols[i], width[i]);
      if (style.colour && c != nullptr) {
        if (i == static_cast<std::size_t>(Column::mark) && !cols[i].empty())
          text = styled(fmt::fg(fmt::terminal_color::yellow) | fmt::emphasis::bold, text);
        if (i == static_cast<std::size_t>(Column::status))
          text = styled(fmt::fg(is_failed(*c) ? fmt::terminal_color::red : fmt::terminal_color::green), text);
        if (i == static_cast<std::size_t>(Column::cr) && c->correctly_rounded)
          text = styled(fmt::fg(fmt::terminal_color::green), text);
      }
      s += text;
      if (i + 1 < kColumns) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };

  std::array<std::string, kColumns> headings;
  for (std::size_t i = 0; i < kColumns; ++i) headings[i] = kHeadings[i];
  std::size_t r = 0;
  for (const auto& key : group_order) {
    out << '\n' << styled(fmt::emphasis::bold, fmt::format("{} | {}", key.first, key.second)) << '\n';
    out << styled(fmt::emphasis::underline, line(headings, nullptr)) << '\n';
    for (const Cell* c : groups[key]) out << line(rows[r++], c) << '\n';
  }

  // Legend: only the marks that occur, and what n/a throughput means.
  std::string legend;
  for (const Mark& mark : kMarks)
    if (std::any_of(report.cells.begin(), report.cells.end(), mark.applies))
      legend += fmt::format("  {}  {}\n", mark.symbol, mark.meaning);
  out << '\n';
  if (!legend.empty()) out << "marks:\n" << legend;
  out << "CR: correctly rounded; rel: relative error before the final rounding; bound ratio: error over "
         "the a-priori bound\n";
  if (std::none_of(report.cells.begin(), report.cells.end(), [](const Cell& c) { return c.gbps.has_value(); }))
    out << fmt::format("GB/s, %cub: not measured ({} backend)\n", h.backend);
}

}  // namespace ulpscope
