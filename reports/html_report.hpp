#pragma once
// A self-contained HTML report (no network): the header, the plots (error
// against n, error against condition number, throughput against error, one
// series per accumulator) drawn by Chart.js embedded inline, and every cell.
#include <filesystem>
#include <iosfwd>
#include <string>

#include "accuracy/cell.hpp"

namespace ulpscope {

// Where the embedded Chart.js comes from: $ULPSCOPE_CHART_JS if set, else the
// file found at configure time (Debian: libjs-chart.js).
std::filesystem::path chart_js_path();

// Throws std::runtime_error naming the missing file and the package when
// Chart.js cannot be read.
void write_html(const Report& report, std::ostream& out);

// The ids of the plots' <canvas> elements, in page order. Each canvas gets
// data-rendered="1", data-points (points Chart.js laid out) and data-ink
// (pixels painted in a series colour) once drawn; tests read them back.
inline constexpr const char* kHtmlPlotIds[] = {"plot-error-vs-n", "plot-error-vs-condition",
                                               "plot-throughput-vs-error"};

}  // namespace ulpscope
