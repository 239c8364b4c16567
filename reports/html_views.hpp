#pragma once
// The HTML report's views as data for its page (reports/html_report.cpp):
// error against n, accuracy against throughput (Chart.js series as JSON),
// error by distribution and determinism (HTML tables), and the settings.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "accuracy/cell.hpp"

namespace ulpscope::html {

using ojson = nlohmann::ordered_json;

// Text for HTML content and attribute values: <, >, & and " escaped.
std::string html_text(std::string_view s);

// View 3: per (op, dtype), one point per kernel (accumulator, shape) at its
// throughput and worst max ulp error; the kernels without either are counted.
struct ThroughputView {
  ojson charts = ojson::array();
  int kernels = 0, without_gbps = 0, without_ulp = 0;
};

// The line under a plot: how many of its cells could not be drawn, and why.
std::string why_not_drawn(int cells, int total);

// View 1: for each (op, dtype), one series per accumulator: the worst max ulp
// error at each n over shapes and seeds, for every distribution and over all
// of them ("*").
ojson error_vs_n(const std::vector<Cell>& cells, int& not_drawn);

ThroughputView accuracy_vs_throughput(const std::vector<Cell>& cells);

// View 2: per dtype, rows op x accumulator, columns distributions; each cell
// the worst max ulp error over shapes, sizes and seeds (an HTML table).
std::string error_by_distribution(const std::vector<Cell>& cells);

// View 4: per dtype, rows accumulator x shape, columns ops; each square three
// marks: run to run (R), launch configurations (C), input orders (O).
std::string determinism(const std::vector<Cell>& cells);

// The settings as a key/value table: lists comma-separated, null "not set".
std::string settings_rows(const std::string& settings_json);

}  // namespace ulpscope::html
