#pragma once
// One measured cell of the run matrix, and a whole report: docs/spec.md, "The
// report, as data". accuracy/ fills them, reports/ writes and reads them.
// Names are strings (not enums) so that users' own kernels and shapes
// (--kernel-lib) fit the same cells. Each member of Cell and UserValueCheck
// has a row in reports/cell_fields.hpp: its JSON key and how it is written.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accuracy/allreduce_profile.hpp"
#include "accuracy/scan_profile.hpp"

namespace ulpscope {

struct Cell {
  // What was run.
  std::string op, dtype, out_dtype, accumulator, shape, distribution;
  std::int64_t n = 0;
  std::uint64_t seed = 0;
  std::optional<std::int64_t> rows, cols;  // row-wise ops only
  std::string axis = "all";                // all, inner, outer
  std::string saturation;                  // fp8 outputs: "satfinite" or "nosat"; else empty

  // The exact answer: hex-float of RN_out(exact) and a decimal string of the
  // exact value (at least 40 significant digits, or exact when shorter).
  std::string reference_rounded, reference_exact;
  // The kernel's output in out_dtype, as a hex-float ("inf", "-inf", "nan").
  std::string result;
  // The worst output of a multi-output op (mean_var: "mean"/"variance";
  // rmsnorm/layernorm: "row 3, col 17"); empty for single-output ops.
  std::string component;

  // Metrics (docs/spec.md, "Metrics"); nullopt where undefined (JSON null).
  std::optional<double> ulp_error, rel_error, condition, bound_ratio;
  // Why ulp_error is missing when it is: "non-finite result for a finite
  // reference", "finite result for a non-finite reference", ...
  std::string error_note;
  // Ops whose outputs follow from row statistics (rmsnorm, layernorm,
  // mean_var; docs/spec.md, "Row statistics and the accumulator's own
  // error"); nullopt elsewhere. working_dtype: the format W of the kernel's
  // statistics and of its ideal kernel ("" elsewhere). mean_ulp_error,
  // rstd_ulp_error: the worst row's mean and r = 1/sqrt(. + eps) in ULPs of
  // W (mean_var: its mean and variance outputs, in ULPs of out_dtype).
  // ideal_ulp_error: the worst ulp_error of the ideal kernel (exact
  // statistics rounded once to W, then the same elementwise step);
  // accumulator_ulp_error: what the kernel's accumulator adds to it.
  std::string working_dtype;
  std::optional<double> mean_ulp_error, rstd_ulp_error, variance_ulp_error;
  std::optional<double> ideal_ulp_error, accumulator_ulp_error;
  std::string statistics_note;  // why a statistic's error is missing
  // cumsum: the error along the index (docs/spec.md, "Scans along the index"); nullopt elsewhere.
  std::optional<ScanProfile> scan;
  // allreduce_sum/allreduce_mean: the per-element errors, P, algorithm,
  // protocol, method and cost (docs/spec.md, "All-reduce across GPUs"); nullopt elsewhere.
  std::optional<AllreduceProfile> allreduce;
  bool correctly_rounded = false;
  std::optional<bool> matches_model;  // null on the CPU backend
  // How many launch configurations were compared with the model (of
  // `configs`); null where none was.
  std::optional<int> models_checked;

  // Reproducibility: distinct bit patterns over repeated runs, over launch
  // configurations, over permutations of the input.
  int runs = 0, distinct_results = 0;
  int configs = 0, distinct_across_configs = 0;
  std::optional<int> permutations, distinct_across_permutations;

  // Throughput of the kernel, measured at throughput_n elements: the cell's
  // own input when it is at least the run's throughput size, else once per
  // kernel on a generated input of that size (docs/spec.md, "Metrics").
  // Null on the CPU backend and where it could not be measured.
  std::optional<double> gbps, fraction_of_cub, fraction_of_copy;
  std::optional<std::int64_t> throughput_n;

  std::string status = "ok";  // or "failed: reason"
  std::string note;           // e.g. the condition number an ill-conditioned input reached
};

// --input: the file the cells ran on, and how its values were read.
struct InputDescription {
  std::string file;        // as given
  std::string stored_as;   // the .npy descr ("<f2", "<V2") or "raw fp16"
  std::string read_as;     // the input format the cells ran in ("bf16")
  std::string conversion;  // one line where the values were rounded to read_as; empty otherwise
};

// --check: a value the user got elsewhere (PyTorch, NumPy), scored against
// the reference of the one problem the run's --input and --op define
// (docs/spec.md, "Metrics").
struct UserValueCheck {
  std::string label;      // "user value 1"
  std::string given;      // as typed
  std::string value;      // hex-float of the value read into out_dtype (RN when the text was not exact)
  bool given_exactly = true;  // the text was a value of out_dtype (else `value` is its nearest)
  std::string op, out_dtype;
  std::string reference_rounded, reference_exact;  // as in Cell
  std::optional<double> ulp_error;
  std::string error_note;  // why ulp_error is missing, as in Cell
  bool correctly_rounded = false;
};

struct ReportHeader {
  std::string version, git_commit, device, backend, build_flags, command_line, started_at;
  double seconds = 0;
  // The matrix's settings (ops, dtypes, ... as lists of names; sizes; seeds;
  // repetitions), so that a gate can refuse a baseline made with others.
  std::string settings_json = "{}";
  // Shapes this backend could not run, with the reason (cub on the CPU
  // backend; cub_deterministic without CCCL >= 3.1): listed, never dropped.
  std::vector<std::pair<std::string, std::string>> unavailable;
  std::optional<InputDescription> input;  // --input runs only
};

struct Report {
  static constexpr const char* kSchema = "ulpscope.report/1";
  ReportHeader header;
  std::vector<Cell> cells;
  std::vector<UserValueCheck> checks;  // --check only
};

}  // namespace ulpscope
