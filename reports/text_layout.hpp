#pragma once
// How the terminal report lays out text: lines within a terminal's width,
// words wrapped, columns aligned (reports/table_report.hpp and the sections
// it prints).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ulpscope {

// Lines for the verdict and the legends are kept within this width (a
// terminal's 120 columns); the per-cell table is as wide as its cells.
inline constexpr std::size_t kTextWidth = 120;

// Fields joined by " | ", starting a new line where the next would pass kTextWidth.
std::string joined_within_width(const std::vector<std::string>& fields);

// A size as the reports print it: "2^26" for powers of two from 1024 up,
// else the number.
std::string size_text(std::int64_t n);

// Words wrapped at kTextWidth, the first line indented as text is, the others
// by `indent` spaces.
std::string wrapped(const std::string& text, std::size_t indent);

// Aligned columns: numbers right, names left, two spaces apart (or as many as
// `gaps` says for the column), no trailing blanks.
class AlignedRows {
 public:
  explicit AlignedRows(std::vector<bool> right_aligned, std::vector<std::size_t> gaps = {})
      : right_(std::move(right_aligned)), gaps_(std::move(gaps)), width_(right_.size()) {
    gaps_.resize(right_.size(), 2);
  }
  void measure(const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) width_[i] = std::max(width_[i], row[i].size());
  }
  // highlight(i, text) may colour column i's padded text.
  template <class Highlight>
  std::string line(const std::vector<std::string>& row, Highlight highlight) const {
    std::string s;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width_[i] == 0) continue;  // a column with nothing in it anywhere
      const std::string padded =
          right_[i] ? fmt::format("{:>{}}", row[i], width_[i]) : fmt::format("{:<{}}", row[i], width_[i]);
      if (!s.empty()) s += std::string(gaps_[i], ' ');
      s += highlight(i, padded);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }
  std::string line(const std::vector<std::string>& row) const {
    return line(row, [](std::size_t, const std::string& t) { return t; });
  }

 private:
  std::vector<bool> right_;
  std::vector<std::size_t> gaps_;
  std::vector<std::size_t> width_;
};

}  // namespace ulpscope
