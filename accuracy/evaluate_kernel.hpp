#pragma once
// Measuring a user's kernel (accuracy/user_kernel.hpp) with the suite's
// distributions, references, metrics, reproducibility and throughput: the run
// matrix (accuracy/run_matrix.hpp) restricted to the kernel's op and formats,
// giving the same cells as the built-in kernels (accuracy/cell.hpp).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/distribution.hpp"
#include "accuracy/run_matrix.hpp"
#include "accuracy/user_kernel.hpp"

namespace ulpscope {

enum class EvaluationBackend : std::uint8_t {
  automatic,  // the GPU when one is present and a kernel has run_device, else the host
  cpu,        // run_host (or the model) on the host
  cuda,       // run_device on the GPU; no GPU is an error
};

struct EvaluateOptions {
  // Empty: every adversarial distribution of docs/spec.md (ill_conditioned at
  // condition numbers 1e8 and 1e16), as in accuracy_report's default matrix.
  std::vector<DistributionSpec> distributions;
  std::vector<std::int64_t> sizes = {1, 33, 1023, 4096};
  std::vector<std::uint64_t> seeds = {1, 2};
  // Row-wise problems (the norms; reductions along inner/outer) are
  // [n / row_cols, row_cols]; n <= row_cols is one row of n.
  std::int64_t row_cols = 1024;
  int runs = 3;          // repeated runs of the default configuration
  int permutations = 2;  // permuted copies of the input
  double eps = 1e-6;
  Saturation saturation = Saturation::satfinite;  // how the references round to fp8 outputs
  EvaluationBackend backend = EvaluationBackend::automatic;
  // Built-in kernels measured on the same inputs, for comparison (both empty:
  // none).
  std::vector<Accumulator> accumulators;
  std::vector<Shape> shapes;
};

struct Evaluation {
  std::vector<Cell> cells;
  std::vector<std::pair<std::string, std::string>> unavailable;  // (kernel or shape, why)
  MatrixSettings settings;  // the matrix that was run (a report's header.settings)
  std::string backend;      // "cpu" or "cuda"
  std::string device;       // "CPU models" or the GPU's name
};

// The matrix evaluate_kernels runs: the kernels' ops, input formats and axes,
// the options' distributions, sizes and seeds.
MatrixSettings evaluation_settings(const std::vector<UserKernel>& kernels, const EvaluateOptions& options);

// Runs the matrix. Throws std::invalid_argument for a kernel that cannot be
// measured (describe_problem) or two kernels of one name, GpuError when
// options.backend is cuda and there is no GPU.
Evaluation evaluate_kernels(const std::vector<UserKernel>& kernels, const EvaluateOptions& options = {});
Evaluation evaluate_kernel(const UserKernel& kernel, const EvaluateOptions& options = {});

// The accuracy_report command line that re-runs this one cell of the kernel
// through its plug-in library (UserKernel::library; "LIB" when it has none).
std::string replay_command(const Cell& cell, const UserKernel& kernel, const Evaluation& evaluation);

// The evaluation as a report (reports/json_report.hpp writes it as JSON).
Report evaluation_report(const Evaluation& evaluation, const std::string& command_line);

}  // namespace ulpscope
