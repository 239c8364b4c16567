#pragma once
// A kernel as the run matrix measures it, built-in or a user's, and what its
// runs on one problem leave behind.
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/problem_reference.hpp"
#include "accuracy/user_kernel.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/model.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::matrix {

// One kernel as the measurement sees it: how to run it on a problem (on the
// GPU, the uploaded one), over which configurations, and what else it can
// tell (a bit-exact model, its throughput, an a-priori bound). Built-in
// kernels and users' kernels (accuracy/user_kernel.hpp) both become one, so
// that every cell is made by the same code (MatrixRunner, accuracy/run_matrix.cpp).
struct KernelUnderTest {
  std::vector<LaunchConfig> configs;  // the first is the default one
  int runs = 1;                       // repeated runs of the default configuration
  bool on_gpu = false;                // runs on the GPU, one cell at a time
  bool reads_host_problem = false;    // on the GPU, but given the host's arrays (run's problem)
  std::function<ReductionResult(const ReductionProblem&, const LaunchConfig&, std::uint64_t run)> run;
  // run() into a result whose arrays are reused from run to run, for the
  // runs kept only as digests (every launch after the first, every repeated
  // run): the CPU models. Empty: run() each time.
  std::function<void(const ReductionProblem&, const LaunchConfig&, std::uint64_t run, ReductionResult& into)> run_into;
  // The GPU's built-in kernels: a run digested on the device, bringing back
  // only the listed rows' outputs (all with nullptr); a permuted norm's
  // outputs are digested where they go back to (GpuBackend::run_digested).
  // Empty: run() and a digest on the host.
  std::function<GpuBackend::DigestedRun(const LaunchConfig&, const std::vector<std::int64_t>* rows, std::int64_t cols)>
      run_digested;
  // Whether a configuration's result equals the model's bits; empty where
  // there is no bit-exact model to compare with.
  // got: the digest of the configuration's result (accuracy/metrics.hpp).
  std::function<bool(const ReductionProblem&, const LaunchConfig&, std::uint64_t got)> matches_model;
  std::function<GpuBackend::Timing()> time;  // empty: not timed (CPU)
  // Measured error of output i over the a-priori bound; empty where the
  // kernel's algorithm is not known.
  std::function<std::optional<double>(const ProblemReference&, const ReductionProblem&, const ReductionResult&,
                                      std::size_t)>
      bound_ratio;
  // The working format of the kernel's statistics and of its ideal kernel
  // (accuracy/ideal_kernel.hpp).
  Dtype working = Dtype::fp32;
  // A norm's row statistics where the run's result does not carry them: on
  // the GPU, those of the kernel's bit-exact CPU model (the GPU's outputs
  // equal the model's: matches_model). Empty where none can be known.
  std::function<std::vector<double>(const ReductionProblem&)> statistics;
  std::string no_statistics;  // why, when there are none
};


// Measured error over the a-priori bound of spec's algorithm, at the
// addition depth of its order in configuration cfg (accuracy/error_bound.hpp).
decltype(KernelUnderTest::bound_ratio) bound_ratio_for(const KernelSpec& spec, const LaunchConfig& cfg);

// A kernel's runs on one problem: the first run's scored outputs (released
// once scored), every run only as its digest (accuracy/metrics.hpp), so that
// large outputs (the norms' one per element) are not kept run after run.
struct KernelRuns {
  ReductionResult first;                      // the default configuration's first run
  std::uint64_t first_digest = 0;
  std::vector<std::uint64_t> run_digests;     // every run of the default configuration
  std::vector<std::uint64_t> config_digests;  // the first run of each configuration
  // One per configuration compared with the model; run on the pool while the
  // GPU goes on.
  std::vector<std::future<bool>> model_checks;
  std::optional<GpuBackend::Timing> timing;
};

// A user kernel's arguments: the problem's arrays (host or device), where to
// write, and the configuration.
KernelArgs kernel_args(const UserKernel& u, const GpuBackend::UploadedArrays& a, void* out, const LaunchConfig& cfg);

// The host problem's arrays as GpuBackend::upload lays them out (whole-array
// problems as [1, n]).
GpuBackend::UploadedArrays host_arrays(const ReductionProblem& p);

// A user's kernel as a GpuBackend launch in configuration cfg.
GpuBackend::Launch user_launch(const UserKernel& u, const LaunchConfig& cfg);

}  // namespace ulpscope::matrix
