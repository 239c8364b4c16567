#include "reports/scan_index_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "reports/text_layout.hpp"
#include "reports/verdict.hpp"

namespace ulpscope {
namespace {

bool same_kernel(const Verdict& v, const Cell& c) {
  return v.op == c.op && v.dtype == c.dtype && v.out_dtype == c.out_dtype && v.accumulator == c.accumulator &&
         v.shape == c.shape && v.axis == c.axis && v.saturation == c.saturation;
}

// The last tenth's mean where it is defined, the key on which a kernel's
// cells are compared.
std::optional<double> last_tenth(const Cell& c) { return c.scan->mean_ulp_by_decile[kIndexDeciles - 1]; }

// The cell of the kernel whose last tenth is worst; the first with a profile
// when no last tenth is defined.
const Cell* worst_at_the_end(const Verdict& v, const std::vector<Cell>& cells) {
  const Cell* pick = nullptr;
  for (const Cell& c : cells) {
    if (!same_kernel(v, c)) continue;
    if (pick == nullptr) pick = &c;
    const auto here = last_tenth(c), best = last_tenth(*pick);
    if (here && (!best || *here > *best)) pick = &c;
  }
  return pick;
}

// The last tenth's mean over the first's; undefined where either is, or the
// first is 0 (a first tenth with no error has no ratio to grow from).
std::optional<double> growth(const ScanProfile& s) {
  const auto first = s.mean_ulp_by_decile[0], last = s.mean_ulp_by_decile[kIndexDeciles - 1];
  if (!first || !last || *first == 0) return std::nullopt;
  return *last / *first;
}

}  // namespace

std::string compact_ulp(std::optional<double> v) {
  if (!v || std::isnan(*v)) return "n/a";
  if (std::isinf(*v)) return "inf";
  if (*v == 0) return "0";
  if (*v < 0.01) return "<0.01";
  if (*v < 0.1) return fmt::format("{:.2g}", *v);
  if (*v < 999.5) return fmt::format("{:.3g}", *v);
  // The exponent without its sign or zeros, and one digit after the point
  // while the exponent has one digit ("1.2e3", "3e12").
  int exponent = int(std::floor(std::log10(*v)));
  double mantissa = *v / std::pow(10.0, exponent);
  if (std::round(mantissa * 10) >= 100) mantissa /= 10, ++exponent;
  if (exponent >= 10) {
    if (std::round(mantissa) >= 10) mantissa /= 10, ++exponent;
    return fmt::format("{:.0f}e{}", mantissa, exponent);
  }
  return fmt::format("{:.1f}e{}", mantissa, exponent);
}

std::string scan_index_text(const std::vector<Cell>& cells) {
  std::vector<Cell> scans;
  for (const Cell& c : cells)
    if (c.scan) scans.push_back(c);
  if (scans.empty()) return {};

  std::vector<std::string> headings = {"acc", "shape", "dist", "n"};
  std::vector<bool> right = {false, false, false, true};
  // The length, the ten numbers of one profile and the growth, right-aligned,
  // one space apart: the longest names and lengths still fit kTextWidth.
  std::vector<std::size_t> gaps = {2, 2, 2, 1};
  for (int d = 1; d <= kIndexDeciles; ++d) {
    headings.push_back(fmt::format("{}%", 10 * d));
    right.push_back(true);
    gaps.push_back(1);
  }
  headings.push_back("growth");
  right.push_back(true);
  gaps.push_back(1);
  AlignedRows table(right, gaps);
  // One kernel's line: its cell and the row as printed but for the length.
  struct Line {
    std::string heading;
    std::int64_t length;
    std::vector<std::string> row;
  };
  std::vector<Line> lines;
  for (const Verdict& v : verdicts(scans)) {
    const Cell* c = worst_at_the_end(v, scans);
    if (c == nullptr) continue;
    Line line{fmt::format("{} | {}", v.op, verdict_format_text(v)), c->scan->line_length,
              {v.accumulator, v.shape, c->distribution, ""}};
    for (const auto& mean : c->scan->mean_ulp_by_decile) line.row.push_back(compact_ulp(mean));
    const auto g = growth(*c->scan);
    line.row.push_back(g ? fmt::format("x{}", compact_ulp(g)) : "n/a");
    lines.push_back(std::move(line));
  }
  // The length gets a column only where the lines differ in it; otherwise the
  // headings say it once (AlignedRows leaves out a column empty everywhere).
  const bool one_length = std::all_of(lines.begin(), lines.end(),
                                      [&](const Line& l) { return l.length == lines.front().length; });
  if (one_length) headings[3].clear();
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::vector<std::string>>> groups;
  for (Line& line : lines) {
    if (!one_length) line.row[3] = size_text(line.length);
    table.measure(line.row);
    if (one_length) line.heading += fmt::format(", lines of {}", size_text(line.length));
    auto [it, fresh] = groups.try_emplace(line.heading);
    if (fresh) order.push_back(line.heading);
    it->second.push_back(std::move(line.row));
  }

  std::string out =
      "\n" + wrapped("Along the index: the mean ulp error over each tenth of a line (10%: its first tenth, 100%: its "
                     "last), on the kernel's cell whose last tenth is worst (dist; n or the heading: the length of its "
                     "lines); growth: the last tenth's mean over the first's; n/a: a tenth with no element or with a "
                     "non-finite result where the correctly rounded one is finite, or a first tenth with no error.",
                     2);
  table.measure(headings);
  for (const std::string& heading : order) {
    out += "\n" + heading + "\n" + table.line(headings) + "\n";
    for (const auto& row : groups[heading]) out += table.line(row) + "\n";
  }
  return out;
}

}  // namespace ulpscope
