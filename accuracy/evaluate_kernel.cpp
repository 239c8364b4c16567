#include "accuracy/evaluate_kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

#include "kernels/gpu_backend.hpp"

namespace ulpscope {

namespace {
template <class T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}
}  // namespace

MatrixSettings evaluation_settings(const std::vector<UserKernel>& kernels, const EvaluateOptions& o) {
  MatrixSettings s;
  s.ops.clear();
  s.dtypes.clear();
  s.axes.clear();
  for (const UserKernel& k : kernels) {
    add_once(s.ops, k.op);
    add_once(s.dtypes, k.in);
    // The norms always run along rows (run_matrix); the other ops along the
    // matrix's axes.
    if (!is_elementwise_output(k.op))
      for (Axis a : kernel_axes(k)) add_once(s.axes, a);
    add_once(s.user_kernels, k.name);
    if (!k.deterministic) add_once(s.nondeterministic_kernels, k.name);
  }
  if (s.axes.empty()) s.axes = {Axis::all};
  s.accumulators = o.accumulators;
  s.shapes = o.shapes;
  s.distributions = o.distributions.empty() ? default_matrix(false).distributions : o.distributions;
  s.sizes = o.sizes;
  s.seeds = o.seeds;
  s.saturation = o.saturation;
  s.row_cols = o.row_cols;
  s.runs = o.runs;
  s.permutations = o.permutations;
  s.eps = o.eps;
  return s;
}

Evaluation evaluate_kernels(const std::vector<UserKernel>& kernels, const EvaluateOptions& o) {
  std::set<std::string> names;
  for (const UserKernel& k : kernels) {
    if (const std::string why = describe_problem(k); !why.empty())
      throw std::invalid_argument("user kernel '" + k.name + "': " + why);
    if (!names.insert(k.name).second) throw std::invalid_argument("two user kernels are named '" + k.name + "'");
  }
  Evaluation e;
  e.settings = evaluation_settings(kernels, o);
  std::unique_ptr<GpuBackend> gpu;
  const bool wants_gpu = std::any_of(kernels.begin(), kernels.end(), [](const UserKernel& k) {
    return has_device_form(k);
  });
  if (o.backend == EvaluationBackend::cuda || (o.backend == EvaluationBackend::automatic && wants_gpu)) {
    std::string why;
    gpu = GpuBackend::open(&why);
    if (!gpu && o.backend == EvaluationBackend::cuda) throw GpuError("evaluate_kernels on the GPU: " + why);
  }
  e.backend = gpu ? "cuda" : "cpu";
  e.device = gpu ? gpu->info().name : "CPU models";
  MatrixRun run = run_matrix(e.settings, gpu.get(), {}, std::nullopt, kernels);
  e.cells = std::move(run.cells);
  e.unavailable = std::move(run.unavailable);
  return e;
}

Evaluation evaluate_kernel(const UserKernel& kernel, const EvaluateOptions& o) {
  return evaluate_kernels(std::vector<UserKernel>{kernel}, o);
}

std::string replay_command(const Cell& c, const UserKernel& k, const Evaluation& e) {
  const MatrixSettings& s = e.settings;
  std::string cmd = fmt::format("accuracy_report --kernel-lib {} --backend {} --op {} --dtype {} --dist {} --n {} --seed {}",
                                k.library.empty() ? "LIB" : k.library, e.backend, c.op, c.dtype, c.distribution,
                                c.n, c.seed);
  if (c.axis != "all" && !is_elementwise_output(k.op)) cmd += " --axis " + c.axis;
  if (c.cols) cmd += fmt::format(" --cols {}", s.row_cols);
  cmd += fmt::format(" --runs {}", s.runs);
  return cmd;
}

Report evaluation_report(const Evaluation& e, const std::string& command_line) {
  Report r;
  r.header.backend = e.backend;
  r.header.device = e.device;
  r.header.command_line = command_line;
  r.header.settings_json = e.settings.to_json();
  r.header.unavailable = e.unavailable;
  r.cells = e.cells;
  return r;
}

}  // namespace ulpscope
