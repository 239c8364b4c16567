#pragma once
// The command line of accuracy_report (CLI11), turned into typed options.
// Parsing never exits the process: it returns the options, or a message and
// the exit status (0 for --help/--version, 2 for bad usage).
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "formats/dtype.hpp"
#include "kernels/accumulator.hpp"
#include "kernels/op.hpp"
#include "kernels/reduction.hpp"
#include "kernels/shape.hpp"
#include "reports/allreduce_cli.hpp"
#include "reports/budget_metric.hpp"

namespace ulpscope {

enum class BackendChoice : std::uint8_t { automatic, cuda, cpu };
inline constexpr NameTable<BackendChoice, 3> kBackendNames = {
    {{BackendChoice::automatic, "auto"}, {BackendChoice::cuda, "cuda"}, {BackendChoice::cpu, "cpu"}}};

struct CliOptions {
  // The matrix. Empty lists mean "the default matrix's" (or --full's).
  std::vector<Dtype> dtypes;
  std::vector<Op> ops;
  AllreduceCli allreduce;  // --op allreduce_sum/allreduce_mean and the family's flags
  std::vector<Accumulator> accumulators;
  std::vector<Shape> shapes;
  std::vector<std::string> distributions;  // validated by accuracy/ (names may carry :param)
  std::vector<std::int64_t> sizes;
  std::vector<std::uint64_t> seeds;
  std::optional<Dtype> out_dtype;
  std::optional<Saturation> saturation;
  std::optional<Axis> axis;
  std::optional<std::int64_t> rows, cols;
  bool full = false;
  int runs = 0;  // repeated runs per configuration (0: the default)
  std::optional<std::int64_t> throughput_n;  // the size throughput is measured at (0: not measured)
  std::optional<double> eps;                 // rms, rmsnorm, layernorm (nullopt: MatrixSettings' default)

  BackendChoice backend = BackendChoice::automatic;
  // The main output: --format, or the format --out's extension names.
  std::string format = "table";  // one of reports/report_format.hpp's names
  std::string out_path;          // empty: standard output
  bool cells = false;            // the text table lists every cell after the verdict
  // More outputs of the same run (--json, --md, --html, --csv FILE), each
  // written atomically; in that order, whatever the command line's.
  struct ExtraOutput {
    std::string flag, format, path;
  };
  std::vector<ExtraOutput> extra_outputs;
  std::string input_path;        // --input FILE (.npy or raw with --dtype and --n)
  std::vector<std::string> check_values;  // --check V,...: values got elsewhere, scored against --input's reference
  std::vector<std::string> kernel_libs;  // --kernel-lib FILE (plug-ins: plugin/ulpscope_plugin.h)
  double kernel_timeout = 60;            // seconds per plug-in host call, in a child process; 0: in-process

  // The gate.
  std::string baseline_path, current_path, gate_summary_path;
  std::string label;  // --label: names the current run (a commit, a PR) in the gate's summary
  bool gate = false;
  std::optional<double> ulp_tolerance, throughput_tolerance;

  // The recommendation.
  std::optional<Op> recommend;
  std::optional<std::int64_t> hidden;
  std::optional<BudgetMetric> budget_metric;  // --budget-metric

  // The seed gallery's evolution table (reports/gallery_table.hpp).
  bool gallery = false;

  bool quiet = false;
  bool phase_times = false;  // where the run's time went, on standard error
  std::string command_line;  // as typed, for the report's header
};

struct CliExit {
  int status;           // 0: --help or --version printed; 2: usage error
  std::string message;  // what to print (stdout for status 0, stderr otherwise)
};

std::variant<CliOptions, CliExit> parse_cli(int argc, const char* const* argv);

// "1024", "1e6", "2^20", "2^20+3", "2^31-1" -> the size; nullopt if malformed,
// negative or above 2^40.
std::optional<std::int64_t> parse_size(const std::string& text);

}  // namespace ulpscope
