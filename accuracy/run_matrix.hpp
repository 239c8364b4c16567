#pragma once
// docs/spec.md, "What ulpscope measures" 1: the run matrix, op x dtype x accumulator x shape
// x distribution x n x seed on a backend. Each input is generated (and on the
// GPU uploaded) once, each reference computed once per (input, op,
// out_dtype) and shared by every kernel on that input, each permuted copy
// made once per problem; the CPU's work is spread over its cores.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/distribution.hpp"
#include "accuracy/phase_times.hpp"
#include "accuracy/user_kernel.hpp"
#include "formats/dtype.hpp"
#include "formats/typed_array.hpp"
#include "kernels/reduction.hpp"
#include "reference/op_reference.hpp"

namespace ulpscope {

class GpuBackend;

struct MatrixSettings {
  std::vector<Op> ops;
  std::vector<Dtype> dtypes;
  std::vector<Accumulator> accumulators;
  std::vector<Shape> shapes;
  std::vector<DistributionSpec> distributions;
  std::vector<std::int64_t> sizes;       // whole-array ops: n
  std::vector<std::uint64_t> seeds;
  std::optional<Dtype> out_dtype;        // nullopt: SPEC's default per input format
  Saturation saturation = Saturation::satfinite;
  // Row-wise problems are [n / row_cols rows, row_cols]; the reductions run
  // along each of `axes` (all: the whole array), the norms (rmsnorm,
  // layernorm) always along the inner one.
  std::int64_t row_cols = 4096;
  std::vector<Axis> axes = {Axis::all};
  int runs = 3;                          // repeated runs per launch configuration (GPU; atomic model orders)
  int permutations = 2;                  // permuted copies of the input (order reproducibility)
  double eps = 1e-6;
  // Throughput is measured at this many elements or more, where it reaches
  // the memory's bandwidth (0: not measured).
  std::int64_t throughput_n = std::int64_t(1) << 26;
  // Users' kernels measured beside the built-in ones, by name (the kernels
  // themselves are passed to run_matrix): a gate re-running this matrix
  // needs the same kernels (--kernel-lib).
  std::vector<std::string> user_kernels;
  // Those of them declared non-deterministic (UserKernel::deterministic
  // false): the gate does not count their run-to-run variation as a regression.
  std::vector<std::string> nondeterministic_kernels;

  // The settings as a JSON object string (the report header's "settings"), so
  // that a gate can refuse a baseline made with other settings.
  std::string to_json() const;
};

// The inverse of MatrixSettings::to_json (a baseline's matrix, re-run by the
// gate). Throws std::invalid_argument with one line for anything it does not
// recognise.
MatrixSettings settings_from_json(const std::string& json);

// The default matrix (finishes in under a minute per dtype on the CPU models
// of a 2-core machine) and the thorough one.
MatrixSettings default_matrix(bool full);

// A user's data (--input) instead of generated distributions.
struct UserInput {
  std::string name;  // shown as the distribution, e.g. "file:x.npy"
  TypedArray values;
  std::int64_t rows = 1, cols = 0;
  // Keep the reference of each problem reduced to one value
  // (MatrixRun::user_references), for values got elsewhere (--check).
  bool keep_references = false;
};

struct MatrixProgress {
  std::function<void(std::size_t done, std::size_t total)> update;
};

// Runs the matrix on the CPU models (gpu == nullptr) or on the GPU, the models
// giving matches_model. A cell that fails is reported with status
// "failed: reason" and the run goes on. Shapes that cannot run on this
// backend are listed in unavailable (shape, reason) rather than dropped.
// User kernels run on every input of their op and input format, along their
// axes, through the same measurement as the built-in ones (their cells name
// the kernel as the shape); on the GPU through run_device where they have
// one, else through run_host.
// A user's input reduced to one value (axis all, one output): the
// reference of that problem, at the output format of the built-in kernels.
struct UserReference {
  Op op;
  Dtype out;
  Reference reference;
};
struct MatrixRun {
  std::vector<Cell> cells;
  std::vector<std::pair<std::string, std::string>> unavailable;
  std::vector<UserReference> user_references;  // UserInput::keep_references only
};
// clock, when given, sums the time spent in each phase (--phase-times).
MatrixRun run_matrix(const MatrixSettings& settings, GpuBackend* gpu, const MatrixProgress& progress,
                     const std::optional<UserInput>& user_input = std::nullopt,
                     const std::vector<UserKernel>& user_kernels = {}, PhaseTimes* clock = nullptr);

}  // namespace ulpscope
