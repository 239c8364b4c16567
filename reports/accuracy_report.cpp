// accuracy_report: docs/spec.md, "What ulpscope measures". Runs the matrix on the GPU (or
// on the CPU models), writes the report, and optionally gates it against a
// baseline. Exit status: 0 done, 1 regression (gate) or failed cells, 2 usage
// or input error.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "accuracy/allreduce_matrix.hpp"
#include "accuracy/evaluate_kernel.hpp"
#include "accuracy/input_file.hpp"
#include "accuracy/memory_budget.hpp"
#include "accuracy/run_matrix.hpp"
#include "accuracy/scan_shapes.hpp"
#include "accuracy/settings_check.hpp"
#include "accuracy/user_value.hpp"
#include "kernels/gpu_backend.hpp"
#include "plugin/kernel_lib.hpp"
#include "reports/allreduce_run.hpp"
#include "reports/cli_options.hpp"
#include "reports/gate.hpp"
#include "reports/json_report.hpp"
#include "reports/report_format.hpp"
#include "reports/atomic_file.hpp"
#include "reports/gallery_table.hpp"
#include "reports/recommend.hpp"
#include "ulpscope_git_commit.hpp"  // generated at build time: ULPSCOPE_GIT_COMMIT

namespace ulpscope {
namespace {

constexpr int kUsage = 2;

struct UsageProblem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

MatrixSettings settings_from(const CliOptions& o) {
  MatrixSettings s = default_matrix(o.full);
  if (!o.dtypes.empty()) s.dtypes = o.dtypes;
  if (!o.ops.empty()) s.ops = o.ops;
  if (!o.accumulators.empty()) s.accumulators = o.accumulators;
  if (!o.shapes.empty()) s.shapes = o.shapes;
  else add_scan_shapes(s);  // --op cumsum: the scan shapes
  if (!o.distributions.empty()) {
    s.distributions.clear();
    for (const auto& text : o.distributions) {
      std::string why;
      const auto d = parse_distribution(text, &why);
      if (!d) throw UsageProblem(why);
      // "--dist normal,normal" or "ill_conditioned:1e16,ill_conditioned:1e+16": one cell each, not two.
      const bool seen = std::any_of(s.distributions.begin(), s.distributions.end(), [&](const DistributionSpec& e) {
        return e.d == d->d && e.parameter() == d->parameter();
      });
      if (!seen) s.distributions.push_back(*d);
    }
  }
  if (!o.sizes.empty()) s.sizes = o.sizes;
  if (!o.seeds.empty()) s.seeds = o.seeds;
  s.out_dtype = o.out_dtype;
  if (o.saturation) s.saturation = *o.saturation;
  if (o.axis) s.axes = {*o.axis};
  if (o.cols) s.row_cols = *o.cols;
  if (o.runs > 0) s.runs = o.runs;
  if (o.throughput_n) s.throughput_n = *o.throughput_n;
  if (o.eps) s.eps = *o.eps;
  return s;
}

std::optional<UserInput> user_input_from(const CliOptions& o, MatrixSettings& s, ReportHeader& header) {
  if (o.input_path.empty()) return std::nullopt;
  if (o.dtypes.size() > 1) throw UsageProblem("--input takes at most one --dtype");
  const std::optional<Dtype> dtype = o.dtypes.empty() ? std::nullopt : std::optional<Dtype>(o.dtypes.front());
  LoadedInput in;
  std::error_code size_error;
  const auto file_bytes = std::filesystem::file_size(o.input_path, size_error);
  if (const auto available = host_available_bytes(); !size_error && available && double(file_bytes) > *available)
    throw SizeError(fmt::format("--input {}: {:.1f} GiB does not fit in the {:.1f} GiB of host memory available",
                                o.input_path, double(file_bytes) / double(1ull << 30), *available / double(1ull << 30)));
  const bool npy = std::filesystem::path(o.input_path).extension() == ".npy";
  if (npy) {
    in = read_npy(o.input_path, dtype);
  } else {
    if (!dtype || o.sizes.size() != 1)
      throw UsageProblem("a raw --input file needs one --dtype and one --n (or use a .npy file)");
    in = read_raw(o.input_path, *dtype, o.sizes.front());
  }
  if (o.rows || o.cols) reshape(in, o.rows.value_or(in.rows * in.cols / o.cols.value_or(1)),
                                o.cols.value_or(in.rows * in.cols / o.rows.value_or(1)));
  for (Op op : s.ops)
    for (Axis axis : is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s.axes) check_shape_fits(in, op, axis);
  header.input = InputDescription{o.input_path, in.source_dtype, std::string(to_string(in.values.dtype())),
                                  in.conversion};
  UserInput u;
  u.name = "file:" + std::filesystem::path(o.input_path).filename().string();
  u.rows = in.rows;
  u.cols = in.cols;
  u.values = std::move(in.values);
  s.dtypes = {u.values.dtype()};
  s.distributions.clear();
  s.sizes = {u.rows * u.cols};
  s.seeds = {0};
  s.row_cols = u.cols;
  return u;
}

// --check: the values are scored against the reference of one problem, so
// the run must define exactly one with one output: an --input file, one --op
// reduced to one value (docs/spec.md, "Metrics"). Checked before the file is
// read, so that the refusal is about --check.
void check_check_request(const CliOptions& o, const MatrixSettings& s, bool other_job) {
  if (o.check_values.empty()) return;
  if (o.input_path.empty())
    throw UsageProblem("--check scores values against the reference of an --input file: give --input FILE");
  if (other_job) throw UsageProblem("--check does not go with --baseline or --recommend");
  if (o.ops.size() != 1)
    throw UsageProblem("--check needs one --op: the op that gave the values (sum, mean, norm2, ...)");
  const Op op = s.ops.front();
  if (takes_second_input(op))
    throw UsageProblem(fmt::format("--check: {} needs a second input y; an --input file gives x only", to_string(op)));
  if (is_elementwise_output(op) || is_scan(op) || op == Op::mean_var || s.axes != std::vector<Axis>{Axis::all})
    throw UsageProblem(fmt::format("--check scores ops that give one value (sum, mean, norm2, rms, max, ...); {}{} "
                                   "gives several",
                                   to_string(op), s.axes != std::vector<Axis>{Axis::all} ? " along rows" : ""));
}

// The output format the --check values are read in, once the input format
// is known, after reading each one: a bad one is refused before anything
// runs. nullopt without --check.
std::optional<Dtype> checked_output(const CliOptions& o, const MatrixSettings& s) {
  if (o.check_values.empty()) return std::nullopt;
  const Dtype out = s.out_dtype.value_or(default_out_dtype(s.dtypes.front()));
  for (const std::string& v : o.check_values) {
    try {
      read_user_value(v, out);
    } catch (const UserValueError& e) {
      throw UsageProblem(fmt::format("{} (read as {}, the output format)", e.what(), to_string(out)));
    }
  }
  return out;
}

std::vector<UserValueCheck> score_checks(const CliOptions& o, const MatrixSettings& s, Dtype out,
                                         const std::vector<UserReference>& references) {
  const Op op = s.ops.front();
  const auto it = std::find_if(references.begin(), references.end(),
                               [&](const UserReference& r) { return r.op == op && r.out == out; });
  if (it == references.end())
    throw std::runtime_error(fmt::format("--check: no reference of {} in {} was computed", to_string(op),
                                         to_string(out)));
  std::vector<UserValueCheck> checks;
  for (std::size_t i = 0; i < o.check_values.size(); ++i)
    checks.push_back(check_user_value(fmt::format("user value {}", i + 1), o.check_values[i], op, out, s.saturation,
                                      it->reference));
  return checks;
}

// --kernel-lib: the libraries' kernels. Without matrix flags they are
// measured alone, on their own ops, formats and axes; with --baseline, the
// kernels the baseline measured, which the libraries must export.
std::vector<UserKernel> user_kernels_from(const CliOptions& o, MatrixSettings& s, bool from_baseline) {
  std::vector<UserKernel> all;
  for (const auto& path : o.kernel_libs)
    for (auto& k : load_kernel_lib(path, PluginCalls{o.kernel_timeout})) {
      for (const UserKernel& other : all)
        if (other.name == k.name)
          throw UsageProblem(fmt::format("--kernel-lib: two kernels named '{}' ({} and {})", k.name, other.library,
                                         k.library));
      all.push_back(std::move(k));
    }
  if (from_baseline) {
    if (s.user_kernels.empty()) {
      if (!all.empty()) throw UsageProblem("--kernel-lib: the baseline measured no user kernels");
      return {};
    }
    std::vector<UserKernel> kept;
    for (const auto& name : s.user_kernels) {
      auto it = std::find_if(all.begin(), all.end(), [&](const UserKernel& k) { return k.name == name; });
      if (it == all.end())
        throw UsageProblem(fmt::format("the baseline measured user kernel '{}': give the --kernel-lib that exports it",
                                       name));
      kept.push_back(*it);
    }
    return kept;
  }
  if (all.empty()) return {};
  if (o.recommend) {
    // The user's kernels of the op and format are candidates beside the built-in ones.
    std::vector<UserKernel> kept;
    for (UserKernel& k : all)
      if (k.op == s.ops.front() && k.in == s.dtypes.front()) kept.push_back(std::move(k));
    if (kept.empty())
      throw UsageProblem(fmt::format("--kernel-lib: no kernel of {} over {} to recommend", to_string(s.ops.front()),
                                     to_string(s.dtypes.front())));
    for (const UserKernel& k : kept) {
      s.user_kernels.push_back(k.name);
      if (!k.deterministic) s.nondeterministic_kernels.push_back(k.name);
    }
    return kept;
  }
  const MatrixSettings own = evaluation_settings(all, {});
  if (o.ops.empty()) s.ops = own.ops;
  if (o.dtypes.empty()) s.dtypes = own.dtypes;
  if (!o.axis) s.axes = own.axes;
  if (o.accumulators.empty() && o.shapes.empty()) {
    s.accumulators.clear();
    s.shapes.clear();
  }
  s.user_kernels = own.user_kernels;
  s.nondeterministic_kernels = own.nondeterministic_kernels;
  return all;
}

// A progress bar on a terminal only: not when stderr is piped, not in CI.
// The GPU unless --backend cpu; --backend cuda without one is a usage error,
// auto without one says so and runs the CPU models.
std::unique_ptr<GpuBackend> open_backend(const CliOptions& o) {
  if (o.backend == BackendChoice::cpu) return nullptr;
  std::string no_gpu;
  std::unique_ptr<GpuBackend> gpu = GpuBackend::open(&no_gpu);
  if (!gpu && o.backend == BackendChoice::cuda) throw UsageProblem("--backend cuda: " + no_gpu);
  if (!gpu && !o.quiet) std::cerr << "accuracy_report: no GPU (" << no_gpu << "); running the CPU models\n";
  return gpu;
}

MatrixProgress progress_for(const CliOptions& o) {
  const char* ci = std::getenv("CI");
  if (o.quiet || !isatty(STDERR_FILENO) || (ci && *ci)) return {};
  // Elapsed time and, once an input is done, the time left at the pace so far.
  return {[start = std::chrono::steady_clock::now()](std::size_t done, std::size_t total) {
    const int width = 30;
    const int filled = total ? int(width * done / total) : width;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string eta =
        done > 0 && done < total ? fmt::format(", about {:.0f} s left", elapsed / double(done) * double(total - done))
                                 : "";
    const std::string line = fmt::format("[{:<{}}] {}/{} problems, {:.0f} s{}", std::string(std::size_t(filled), '#'),
                                         width, done, total, elapsed, eta);
    std::fprintf(stderr, "\r%-*s", 80, line.c_str());
    if (done == total) std::fprintf(stderr, "\r%*s\r", 80, "");
    std::fflush(stderr);
  }};
}

std::string now_iso8601() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(t));
}

// --phase-times: where the run's time went, and its wall time.
void print_phase_times(const PhaseTimes& clock, double wall_seconds) {
  std::cerr << "accuracy_report: phase times (summed over threads)\n"
            << clock.summary() << fmt::format("{:<13} {:9.3f} s\n", "wall", wall_seconds);
}

// --gallery: its own matrix and table (reports/gallery_table.hpp).
int run_gallery(const CliOptions& o) {
  std::vector<Dtype> dtypes;
  for (Dtype d : o.dtypes.empty() ? std::vector<Dtype>{Dtype::fp32, Dtype::fp16, Dtype::bf16} : o.dtypes) {
    if (d == Dtype::fp32 || d == Dtype::fp16 || d == Dtype::bf16) dtypes.push_back(d);
    else if (o.dtypes.size() == 1 || o.dtypes.size() != kInputDtypes.size())  // "all" names fp8 too: left out
      throw UsageProblem("--gallery takes --dtype fp32, fp16, bf16 or all, not " + std::string(to_string(d)));
  }
  if (o.format != "table" && o.format != "md" && o.format != "json")
    throw UsageProblem("--gallery writes --format table, md or json");
  const std::unique_ptr<GpuBackend> gpu = open_backend(o);
  PhaseTimes clock;
  const auto t0 = std::chrono::steady_clock::now();
  const GalleryTable table = gallery_table(dtypes, gpu.get(), progress_for(o), &clock);
  if (o.phase_times)
    print_phase_times(clock, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::ostringstream text;
  write_gallery(table, o.format, text);
  if (o.out_path.empty()) std::cout << text.str();
  else write_file_atomically(o.out_path, text.str());
  for (const GalleryRow& r : table.rows)
    if (r.failed) {
      std::cerr << "accuracy_report: some gallery cells failed\n";
      return 1;
    }
  return 0;
}

// The outputs, before anything runs (docs/bad-inputs.md): another file of the same
// run, a non-regular file, a link or a missing directory is refused at once.
void check_outputs(const CliOptions& o) {
  std::vector<NamedPath> others = {
      {o.input_path, "--input"}, {o.baseline_path, "--baseline"}, {o.current_path, "--current"}};
  for (const auto& lib : o.kernel_libs) others.push_back({lib, "--kernel-lib"});
  if (!o.out_path.empty()) check_output_path(o.out_path, "--out", others);
  others.push_back({o.out_path, "--out"});
  for (const auto& extra : o.extra_outputs) {
    check_output_path(extra.path, extra.flag, others);
    others.push_back({extra.path, extra.flag});
  }
  if (!o.gate_summary_path.empty()) check_output_path(o.gate_summary_path, "--gate-summary", others);
}

// The main output (standard output, or --out) and every --json, --md, --html,
// --csv file, each written whole or not at all.
void write_outputs(const Report& report, const CliOptions& o, bool main_to_stdout) {
  const ReportFormat format = *parse_in(kReportFormatNames, o.format);
  TableStyle style = table_style_for_fd(STDOUT_FILENO);
  style.cells = o.cells;
  if (!o.out_path.empty()) write_report_file(report, format, o.out_path, style);
  else if (main_to_stdout) write_report(report, format, std::cout, style);
  for (const auto& extra : o.extra_outputs)
    write_report_file(report, *parse_in(kReportFormatNames, extra.format), extra.path, style);
}

// Why a run made no cell: shapes this backend cannot run, or ops that do not
// fit the sizes and axes.
std::string why_nothing(const MatrixSettings& s, const std::vector<std::pair<std::string, std::string>>& unavailable) {
  std::string text;
  for (const auto& [what, reason] : unavailable) text += fmt::format("; {}: {}", what, reason);
  return fmt::format("no kernel of the matrix ran on its sizes {} and axes (row-wise ops need n a multiple of the row "
                     "width {}){}",
                     fmt::join(s.sizes, ","), s.row_cols, text);
}

// --op allreduce_sum/allreduce_mean, or a baseline of them: the family's own
// matrix (docs/spec.md, "All-reduce across GPUs"), then the same outputs and gate.
int run_allreduce(const CliOptions& o, const std::optional<Report>& baseline) {
  AllreduceSettings s;
  std::string not_through_nccl;
  bool nccl = false;
  try {
    s = baseline ? allreduce_settings_from_json(baseline->header.settings_json) : allreduce_settings_from(o);
    if (const std::string why = allreduce_settings_problem(s); !why.empty()) throw std::invalid_argument(why);
    nccl = allreduce_through_nccl(o.backend, s, &not_through_nccl);
  } catch (const std::invalid_argument& e) {
    throw UsageProblem(baseline ? o.baseline_path + ": " + e.what() : std::string(e.what()));
  }
  if (!not_through_nccl.empty() && !o.quiet)
    std::cerr << "accuracy_report: all-reduce on the CPU models (" << not_through_nccl << ")\n";
  Report report;
  report.header.version = ULPSCOPE_VERSION;
  report.header.git_commit = ULPSCOPE_GIT_COMMIT;
  report.header.backend = nccl ? "cuda" : "cpu";
  report.header.device = nccl ? "NCCL on this machine's GPUs" : "CPU models";
  report.header.build_flags = ULPSCOPE_BUILD_FLAGS;
  report.header.command_line = o.command_line;
  report.header.started_at = now_iso8601();
  report.header.settings_json = s.to_json();
  const auto t0 = std::chrono::steady_clock::now();
  AllreduceMatrixRun run = run_allreduce_matrix(s, nccl);
  report.header.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report.header.unavailable = std::move(run.unavailable);
  if (!not_through_nccl.empty() && !report.header.unavailable.empty())
    report.header.unavailable.front().second += " (" + not_through_nccl + ")";
  report.cells = std::move(run.cells);
  write_outputs(report, o, true);
  std::size_t failed = 0;
  for (const Cell& c : report.cells) failed += c.status != "ok";
  if (failed) std::cerr << "accuracy_report: " << failed << " cell(s) failed (status \"failed: ...\")\n";
  if (baseline) {
    const GateOptions gate_options{o.ulp_tolerance.value_or(0), o.throughput_tolerance, o.label};
    const GateResult g = run_gate(*baseline, report, gate_options);
    std::cerr << g.markdown;
    publish_gate_summary(g.markdown, o.gate_summary_path);
    if (o.gate) return gate_exit_status(g);
  }
  return failed ? 1 : 0;
}

int run(const CliOptions& o) {
  check_outputs(o);
  if (o.gallery) return run_gallery(o);
  const GateOptions gate_options{o.ulp_tolerance.value_or(0), o.throughput_tolerance, o.label};
  if (!o.check_values.empty() && !o.current_path.empty())
    throw UsageProblem("--check does not go with --current (it scores values against an --input file's reference)");
  // Comparing two stored reports needs no run.
  if (!o.current_path.empty()) {
    const GateOutcome g = gate_report_files(o.baseline_path, o.current_path, gate_options);
    if (!g.result) throw UsageProblem(g.error);
    std::cout << g.result->markdown;
    publish_gate_summary(g.result->markdown, o.gate_summary_path);
    return o.gate ? g.status : 0;
  }

  if (!o.allreduce.means.empty()) {
    if (!o.baseline_path.empty()) throw UsageProblem("--baseline re-runs its own matrix: drop --op and its flags");
    return run_allreduce(o, std::nullopt);
  }
  std::optional<Report> baseline;
  if (!o.baseline_path.empty()) {
    Report b = read_report_file(o.baseline_path);
    if (is_allreduce_settings_json(b.header.settings_json)) {
      if (b.cells.empty())
        throw UsageProblem(o.baseline_path + ": the baseline has no cells: a gate against it would compare nothing");
      return run_allreduce(o, b);
    }
  }
  MatrixSettings settings = settings_from(o);
  std::optional<RecommendRequest> recommend_request;
  if (o.recommend) {
    // With --input, the file gives the format (when --dtype does not) and the width.
    if (o.input_path.empty() && (o.dtypes.size() != 1 || !o.hidden))
      throw UsageProblem("--recommend needs one --dtype and --hidden H (or an --input file)");
    if (o.dtypes.size() > 1) throw UsageProblem("--recommend takes one --dtype");
    if (o.format != "table" && o.format != "json")
      throw UsageProblem("--recommend writes --format table or json (--out FILE keeps the evidence as a report)");
    RecommendRequest r;
    r.op = *o.recommend;
    r.dtype = o.dtypes.empty() ? Dtype::fp32 : o.dtypes.front();
    r.hidden = o.hidden.value_or(1);
    r.budget = o.ulp_tolerance;
    r.metric = o.budget_metric;
    if (!o.seeds.empty()) r.seeds = o.seeds;
    if (!o.distributions.empty()) r.distributions = settings.distributions;
    if (o.eps) r.eps = *o.eps;
    recommend_request = r;
    settings = recommend_matrix(r);
  }
  if (!o.baseline_path.empty()) {
    // Re-run the baseline's matrix: its settings, not the defaults.
    baseline = read_report_file(o.baseline_path);
    if (baseline->cells.empty())
      throw UsageProblem(o.baseline_path + ": the baseline has no cells: a gate against it would compare nothing");
    try {
      settings = settings_from_json(baseline->header.settings_json);
    } catch (const std::invalid_argument& e) {
      throw UsageProblem(o.baseline_path + ": " + e.what());
    }
    // Checked as the flags are, before anything runs.
    if (const std::string why = settings_problem(settings); !why.empty()) throw UsageProblem(o.baseline_path + ": " + why);
  }
  const std::vector<UserKernel> kernels = user_kernels_from(o, settings, baseline.has_value());
  // The flags' matrix (an --input file's shape is its reader's to check).
  if (const std::string why = settings_problem(settings); !why.empty()) throw UsageProblem(why);
  PhaseTimes clock;
  check_check_request(o, settings, baseline.has_value() || recommend_request);
  std::optional<UserInput> user;
  Report report;
  {
    const auto scope = timed(&clock, Phase::input);
    user = user_input_from(o, settings, report.header);
  }
  const std::optional<Dtype> check_out = checked_output(o, settings);
  if (user) user->keep_references = check_out.has_value();
  // Never silent: a file whose values were rounded to another format says so.
  if (report.header.input && !report.header.input->conversion.empty())
    std::cerr << "accuracy_report: " << o.input_path << ": " << report.header.input->conversion << '\n';
  if (recommend_request && user) {
    recommend_request->dtype = user->values.dtype();
    recommend_request->hidden = is_elementwise_output(recommend_request->op) ? user->cols : user->rows * user->cols;
  }

  const std::unique_ptr<GpuBackend> gpu = open_backend(o);

  report.header.version = ULPSCOPE_VERSION;
  report.header.git_commit = ULPSCOPE_GIT_COMMIT;
  report.header.backend = gpu ? "cuda" : "cpu";
  report.header.device = gpu ? gpu->info().name : "CPU models";
  report.header.build_flags = ULPSCOPE_BUILD_FLAGS;
  report.header.command_line = o.command_line;
  report.header.started_at = now_iso8601();
  report.header.settings_json = settings.to_json();
  const auto t0 = std::chrono::steady_clock::now();
  MatrixRun run = run_matrix(settings, gpu.get(), progress_for(o), user, kernels, &clock);
  report.header.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.phase_times) print_phase_times(clock, report.header.seconds);
  report.header.unavailable = std::move(run.unavailable);
  report.cells = std::move(run.cells);
  if (check_out) report.checks = score_checks(o, settings, *check_out, run.user_references);
  // A run that measured nothing passes nothing (docs/bad-inputs.md).
  if (report.cells.empty()) throw UsageProblem("measured nothing: " + why_nothing(settings, report.header.unavailable));

  if (recommend_request) {
    // The answer on standard output; the evidence as a report with --out (and the other outputs).
    const Recommendation rec = recommend(*recommend_request, report.cells, gpu != nullptr);
    if (o.format == "json") write_recommendation_json(*recommend_request, rec, std::cout);
    else write_recommendation(*recommend_request, rec, std::cout);
    write_outputs(report, o, false);
    if (const auto unmet = rec.unmet(); !unmet.empty()) {
      std::cerr << fmt::format("accuracy_report: no candidate meets the budget on {} inputs\n", fmt::join(unmet, ", "));
      return 1;
    }
  } else {
    write_outputs(report, o, true);
  }

  std::size_t failed = 0;
  for (const Cell& c : report.cells) failed += c.status != "ok";
  if (failed) std::cerr << "accuracy_report: " << failed << " cell(s) failed (status \"failed: ...\")\n";

  if (baseline) {
    const GateResult g = run_gate(*baseline, report, gate_options);
    std::cerr << g.markdown;
    publish_gate_summary(g.markdown, o.gate_summary_path);
    if (o.gate) return gate_exit_status(g);
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ulpscope

int main(int argc, char** argv) {
  using namespace ulpscope;
  const auto parsed = parse_cli(argc, argv);
  if (const auto* e = std::get_if<CliExit>(&parsed)) {
    if (e->status == 0) {
      std::cout << e->message;
    } else {
      std::cerr << "accuracy_report: " << e->message << '\n';
    }
    return e->status;
  }
  try {
    return run(std::get<CliOptions>(parsed));
  } catch (const UsageProblem& e) {
    std::cerr << "accuracy_report: " << e.what() << '\n';
    return kUsage;
  } catch (const InputError& e) {
    std::cerr << "accuracy_report: " << e.what() << '\n';
    return kUsage;
  } catch (const ReportInputError& e) {
    std::cerr << "accuracy_report: " << e.what() << '\n';
    return kUsage;
  } catch (const SizeError& e) {
    std::cerr << "accuracy_report: " << e.what() << '\n';
    return kUsage;
  } catch (const OutputFileError& e) {
    std::cerr << "accuracy_report: " << e.what() << '\n';
    return kUsage;
  } catch (const KernelLibError& e) {
    std::cerr << "accuracy_report: " << e.what() << '\n';
    return kUsage;
  } catch (const GpuError& e) {
    std::cerr << "accuracy_report: GPU error: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "accuracy_report: " << e.what() << '\n';
    return 1;
  }
}
