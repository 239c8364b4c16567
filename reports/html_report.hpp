#pragma once
// A self-contained HTML report (no network) that answers questions at a
// glance: error against n per op (one line per accumulator), error by
// distribution (a heat map), accuracy against throughput (one point per
// kernel, the Pareto front marked), determinism (run to run, launch
// configurations, input orders), then the run's settings and every cell in
// a sortable, filterable table. Chart.js, embedded inline, draws the plots.
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"

namespace ulpscope {

// Where the embedded Chart.js comes from: $ULPSCOPE_CHART_JS if set, else the
// file found at configure time (Debian: libjs-chart.js).
std::filesystem::path chart_js_path();

// Throws std::runtime_error naming the missing file and the package when
// Chart.js cannot be read.
void write_html(const Report& report, std::ostream& out);

// The four views' <section> ids, in page order. Every plot is a <canvas
// class="ulpscope-plot" data-view="..."> that gets data-rendered="1",
// data-points (kernel or accumulator points Chart.js laid out), data-front
// (points on a Pareto front) and data-ink (pixels painted in a series colour)
// once drawn; a view with nothing to draw holds a <p class="empty-view">
// saying why instead of a chart. Tests read them back.
inline constexpr const char* kHtmlViewIds[] = {"view-error-vs-n", "view-error-by-distribution",
                                               "view-accuracy-vs-throughput", "view-determinism"};

// A kernel in the accuracy-against-throughput view.
struct KernelPoint {
  double gbps = 0, worst_ulp = 0;
};
// The indices of the points that no other point dominates (another with
// gbps >= and worst_ulp <=, better in one of them), by increasing gbps;
// equal points are all on the front.
std::vector<std::size_t> pareto_front(const std::vector<KernelPoint>& points);

}  // namespace ulpscope
