#pragma once
// A user's reduction kernel (docs/spec.md, "What ulpscope measures", 4: bring your own),
// described so that the run matrix measures it exactly as it measures the
// built-in kernels: the same inputs, references, metrics and cells
// (accuracy/evaluate_kernel.hpp). The C plug-in ABI (plugin/ulpscope_plugin.h)
// describes the same thing for shared libraries; plugin/kernel_lib.hpp turns
// one into these.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/dtype.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

// One call of a user's kernel: raw arrays, each element the bit pattern of its
// format (fp32 as IEEE binary32, fp16/bf16 as 16-bit words, fp8 as bytes,
// fp64 outputs as binary64), host byte order, row-major [rows, cols]. The
// pointers are host memory for run_host and model, device memory for
// run_device. A whole-array op sees rows = 1, cols = n.
struct KernelArgs {
  Op op = Op::sum;
  Axis axis = Axis::all;
  Dtype in_dtype = Dtype::fp32, out_dtype = Dtype::fp32;
  std::int64_t rows = 1, cols = 0;
  const void* x = nullptr;
  const void* y = nullptr;      // dot: the second vector, same shape as x
  const void* gamma = nullptr;  // rmsnorm, layernorm: cols values of format in_dtype
  const void* beta = nullptr;   // layernorm: cols values of format in_dtype
  double eps = 1e-6;            // rms, rmsnorm, layernorm
  // output_count(op, axis, rows, cols) values of format out_dtype, laid out as
  // ReductionResult::values: [reduction][component] (mean_var: mean, then
  // variance) or [row][col] for rmsnorm and layernorm. Every one must be
  // written.
  void* out = nullptr;
  LaunchConfig config;  // one of UserKernel::configs
};

// Values one call writes: reductions x components, or rows x cols for the
// norms. A whole-array op has one reduction.
std::int64_t output_count(Op op, Axis axis, std::int64_t rows, std::int64_t cols);
// Bytes of one element of format d (fp64 included).
std::size_t element_bytes(Dtype d);

struct UserKernel {
  // The cell's `shape` column: the kernel's name, as the report shows it.
  std::string name;
  // The cell's `accumulator` column: what the kernel accumulates in, in the
  // user's words ("fp32", "bf16 running sum"); "custom" when not said.
  std::string accumulator = "custom";
  Op op = Op::sum;
  Dtype in = Dtype::fp32;
  Dtype out = Dtype::fp32;
  // The reduced dimensions the kernel handles; empty: the whole array for
  // reductions, rows (inner) for rmsnorm and layernorm.
  std::vector<Axis> axes;

  // Runs the kernel on host memory. Throw to report a failure (the cell says
  // "failed: " and the message).
  std::function<void(const KernelArgs&)> run_host;
  // Enqueues the kernel on `stream` (a cudaStream_t) over device memory; the
  // suite synchronises and checks CUDA's errors. Used when a GPU is present.
  std::function<void(const KernelArgs&, void* stream)> run_device;
  // run_device made in another process (a plug-in's, plugin/kernel_host.hpp),
  // in place of run_device: it takes host arrays and a host out, as run_host
  // does, and that process copies them to its own device and back; time
  // times it there as GpuBackend::time_launch times run_device here.
  struct IsolatedDevice {
    std::function<void(const KernelArgs&)> run;
    std::function<GpuBackend::Timing(const KernelArgs&, int warmup, int reps)> time;
  };
  std::optional<IsolatedDevice> isolated_device;
  // Optional: a host function that must give run_device's bits exactly (the
  // kernel's CPU model); on the GPU, each cell's matches_model says whether
  // it did.
  std::function<void(const KernelArgs&)> model;

  // Optional: the built-in accumulator and shape whose a-priori error bound
  // the kernel's algorithm obeys ({fp32, serial} for an fp32 loop in index
  // order, Higham 2002, eq. 4.4); gives the cells' bound_ratio, whose value
  // above 1 says the kernel is not that algorithm. Unset: no bound_ratio.
  std::optional<std::pair<Accumulator, Shape>> error_bound_of;

  // Launch configurations to compare (reproducibility across configs); the
  // first is the default one, used for timing and permutations. Empty: one
  // configuration, {blocks = 0, threads = 256}.
  std::vector<LaunchConfig> configs;
  // Whether the kernel promises the same bits on every run of one
  // configuration (the gtest helpers check it when true).
  bool deterministic = true;
  // Whether run_host and model may be called from several threads at once
  // (the CPU backend measures inputs in parallel); false serialises them.
  bool reentrant = true;
  // The plug-in library that exports this kernel, if any: replay commands
  // (accuracy_report --kernel-lib FILE ...) name it.
  std::string library;
};

// Outputs as written by a kernel (count values of format d, bit patterns in
// host byte order), widened exactly to double.
std::vector<double> decode_outputs(const void* bytes, Dtype d, std::size_t count);

// Whether the kernel has a GPU form (run_device, in this process or another).
bool has_device_form(const UserKernel& k);

// The axes the kernel is measured along (UserKernel::axes, or its default).
std::vector<Axis> kernel_axes(const UserKernel& k);
// The configurations it is measured over (UserKernel::configs, or the default).
std::vector<LaunchConfig> kernel_configs(const UserKernel& k);
// Why the description cannot be measured ("no name", "neither run_host nor
// run_device", "rmsnorm reduces rows: axes must be {inner}", ...), or empty.
std::string describe_problem(const UserKernel& k);

}  // namespace ulpscope
