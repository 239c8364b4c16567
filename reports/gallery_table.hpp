#pragma once
// `accuracy_report --gallery`: the seeds' evolution table (shared/seeds 000,
// 003, 004: v1 -> v6 with time and bandwidth), with the suite's accuracy and
// determinism next to the speed. The accuracy columns come from the run
// matrix over the gallery shapes (every adversarial distribution, two sizes);
// the timing from GpuBackend::time on a uniform input of 2^24 values (the
// seeds' N = 16M) against cub::DeviceReduce::Sum fp32 measured in the same
// process. On the CPU backend the timing columns are unknown.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/run_matrix.hpp"
#include "formats/dtype.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

class GpuBackend;

struct GalleryRow {
  Dtype dtype = Dtype::fp32;
  std::string kernel;  // a gallery shape's name, or "cub" (GPU only, the last row)
  Op op = Op::sum;
  Accumulator acc = Accumulator::fp32;
  // Over the cells (distributions x sizes) of this kernel.
  int cells = 0, failed = 0;
  std::optional<double> max_ulp;  // over the cells with a finite ULP error
  std::vector<double> ulps;       // those cells' ULP errors
  int without_ulp = 0;            // cells with no ULP number (non-finite result or reference)
  int correctly_rounded = 0;
  int max_distinct_runs = 0, max_distinct_configs = 0;
  int matches_model = 0, model_checked = 0;  // GPU: cells whose bits equal the model's
  // Timing (GPU only): median of CUDA-event-timed launches.
  std::optional<double> ms, gbps, fraction_of_cub;
  std::string note;  // why timing is missing
};

struct GalleryTable {
  std::string backend, device;
  std::int64_t timing_n = 0;
  std::optional<double> cub_fp32_gbps;
  std::string settings;  // sizes, distributions, runs: what each row is over
  std::vector<GalleryRow> rows;
};

// The matrix the accuracy columns come from.
MatrixSettings gallery_matrix(const std::vector<Dtype>& dtypes, bool gpu);

// Runs it all. Throws GpuError on a GPU failure outside a cell.
GalleryTable gallery_table(const std::vector<Dtype>& dtypes, GpuBackend* gpu, const MatrixProgress& progress,
                           PhaseTimes* clock = nullptr);

// format: "table", "md" or "json".
void write_gallery(const GalleryTable& table, const std::string& format, std::ostream& out);

}  // namespace ulpscope
