#include "reports/input_answer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <vector>

#include "formats/hex_float.hpp"
#include "formats/round_trip_decimal.hpp"
#include "reports/cell_facts.hpp"
#include "reports/markdown_report.hpp"

namespace ulpscope {
namespace {

// A hex-float of the report, in decimal in its format (docs/spec.md: the
// report keeps hex-floats; people read decimals).
std::string decimal(const std::string& hex, const std::string& dtype) {
  const auto v = parse_hex_float(hex);
  const auto d = parse_dtype(dtype);
  if (!v || !d) return hex;
  return round_trip_decimal(*v, *d);
}

// The report's exact decimal ("4.448e+03", "-1.2345678901234567890123456789012345678901e-02")
// without its exponent where that stays short ("4448", "-0.012345678901234567890123456789012345678901"):
// the same digits, the point moved, nothing rounded.
std::string plain_decimal(const std::string& sci) {
  const std::size_t e = sci.find('e');
  if (e == std::string::npos) return sci;
  const std::string sign = sci[0] == '-' ? "-" : "";
  std::string digits;
  for (char c : sci.substr(sign.size(), e - sign.size()))
    if (c >= '0' && c <= '9') digits += c;
    else if (c != '.') return sci;
  const int exponent = std::atoi(sci.c_str() + e + 1);
  if (digits.empty() || exponent < -5 || exponent >= 21) return sci;
  std::string out;
  if (exponent < 0) {
    out = "0." + std::string(std::size_t(-exponent - 1), '0') + digits;
  } else if (std::size_t(exponent) + 1 >= digits.size()) {
    out = digits + std::string(std::size_t(exponent) + 1 - digits.size(), '0');
  } else {
    out = digits.substr(0, std::size_t(exponent) + 1) + "." + digits.substr(std::size_t(exponent) + 1);
  }
  return sign + out;
}

// One line of the answer: a kernel's cell or a user's value.
struct Row {
  std::string who, result, hex, ulp, cr;
  std::string component, rounded, exact;  // where the rows' references differ
};

// The rows of one (op, dtype, out_dtype, axis), with the reference they share
// when they do.
struct Group {
  std::string title;
  std::vector<Row> rows;
  bool shared = true;  // every row has the reference below
  std::string rounded, rounded_hex, exact;
};

std::vector<Group> groups_of(const Report& report) {
  std::vector<Group> groups;
  std::map<std::array<std::string, 4>, std::size_t> index;
  auto group_for = [&](const std::string& op, const std::string& dtype, const std::string& out,
                       const std::string& axis) -> Group& {
    const std::array<std::string, 4> key{op, dtype, out, axis};
    auto [it, fresh] = index.try_emplace(key, groups.size());
    if (fresh) {
      Group g;
      g.title = fmt::format("{} {}{}", op, dtype == out ? dtype : dtype + "->" + out,
                            axis == "all" ? "" : " along " + axis);
      groups.push_back(std::move(g));
    }
    return groups[it->second];
  };
  // A failed cell has no result to set beside a reference: it neither sets
  // nor breaks the group's.
  auto add = [](Group& g, Row row, const std::string& rounded_hex, const std::string& exact, const std::string& out,
                const std::string& component, bool failed) {
    if (!failed) {
      if (g.rounded_hex.empty() && g.exact.empty()) {
        g.rounded_hex = rounded_hex;
        g.rounded = decimal(rounded_hex, out);
        g.exact = plain_decimal(exact);
      } else if (g.rounded_hex != rounded_hex || g.exact != plain_decimal(exact)) {
        g.shared = false;
      }
      if (!component.empty()) g.shared = false;
      row.component = component;
      row.rounded = decimal(rounded_hex, out);
      row.exact = plain_decimal(exact);
    }
    g.rows.push_back(std::move(row));
  };
  for (const Cell& c : report.cells) {
    if (c.op.empty()) continue;  // an input that failed before any kernel ran
    Group& g = group_for(c.op, c.dtype, c.out_dtype, c.axis);
    Row row;
    row.who = fmt::format("{} {}", c.accumulator, c.shape);
    if (is_failed(c)) {
      row.result = "failed";
    } else {
      row.result = decimal(c.result, c.out_dtype);
      row.hex = c.result;
      row.ulp = short_number(c.ulp_error);
      row.cr = c.correctly_rounded ? "yes" : "no";
    }
    add(g, std::move(row), c.reference_rounded, c.reference_exact, c.out_dtype, c.component, is_failed(c));
  }
  for (const UserValueCheck& u : report.checks) {
    const std::string dtype = report.header.input ? report.header.input->read_as : u.out_dtype;
    Group& g = group_for(u.op, dtype, u.out_dtype, "all");
    Row row;
    row.who = u.given_exactly ? u.label : fmt::format("{} ({})", u.label, u.given);
    row.result = decimal(u.value, u.out_dtype);
    row.hex = u.value;
    row.ulp = u.ulp_error ? short_number(u.ulp_error) : "n/a";
    row.cr = u.correctly_rounded ? "yes" : "no";
    add(g, std::move(row), u.reference_rounded, u.reference_exact, u.out_dtype, "", false);
  }
  return groups;
}

std::string input_line(const InputDescription& in) {
  return fmt::format("your data: {} (stored as '{}', read as {})", in.file, in.stored_as, in.read_as);
}

}  // namespace

std::string input_answer_text(const Report& report) {
  if (!report.header.input) return "";
  const InputDescription& in = *report.header.input;
  std::string out = '\n' + input_line(in) + '\n';
  if (!in.conversion.empty()) out += "  " + in.conversion + '\n';
  for (const Group& g : groups_of(report)) {
    out += '\n' + g.title;
    if (g.shared && !g.rounded_hex.empty())
      out += fmt::format(": correctly rounded {} ({}), exact {}", g.rounded, g.rounded_hex, g.exact);
    out += '\n';
    std::vector<std::vector<std::string>> lines;
    lines.push_back({"kernel or value", "result", "hex", "ulp", "CR"});
    if (!g.shared) lines.back().insert(lines.back().end(), {"at", "correctly rounded", "exact"});
    for (const Row& r : g.rows) {
      lines.push_back({r.who, r.result, r.hex, r.ulp, r.cr});
      if (!g.shared) lines.back().insert(lines.back().end(), {r.component, r.rounded, r.exact});
    }
    std::vector<std::size_t> width(lines.front().size(), 0);
    for (const auto& l : lines)
      for (std::size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
    for (const auto& l : lines) {
      std::string s;
      for (std::size_t i = 0; i < l.size(); ++i) {
        const bool right = i == 1 || i == 3;  // the numbers
        s += "  " + (right ? fmt::format("{:>{}}", l[i], width[i]) : fmt::format("{:<{}}", l[i], width[i]));
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out += s + '\n';
    }
  }
  return out;
}

std::string input_answer_markdown(const Report& report) {
  if (!report.header.input) return "";
  const InputDescription& in = *report.header.input;
  std::string md = fmt::format("#### {}\n", markdown_text(input_line(in)));
  if (!in.conversion.empty()) md += fmt::format("\n{}\n", markdown_text(in.conversion));
  for (const Group& g : groups_of(report)) {
    md += fmt::format("\n**{}**", markdown_text(g.title));
    if (g.shared && !g.rounded_hex.empty())
      md += fmt::format(": correctly rounded `{}` ({}), exact `{}`", g.rounded, g.rounded_hex, g.exact);
    md += "\n\n| kernel or value | result | hex | ulp | CR |";
    md += g.shared ? "\n|---|--:|---|--:|---|\n" : " at | correctly rounded | exact |\n|---|--:|---|--:|---|---|--:|---|\n";
    for (const Row& r : g.rows) {
      md += fmt::format("| {} | {} | {} | {} | {} |", markdown_text(r.who), r.result, r.hex, r.ulp, r.cr);
      if (!g.shared)
        md += fmt::format(" {} | {} | {} |", markdown_text(r.component), r.rounded, r.exact);
      md += '\n';
    }
  }
  return md + '\n';
}

}  // namespace ulpscope
