#pragma once
// The GPU side of ulpscope as seen from host code (accuracy/, bench/, tests):
// open the device, upload a problem once, run any GPU shape on it, time it
// per docs/spec.md ("Metrics", throughput), and measure the yardsticks in the same
// process. No CUDA header is needed to use it; a build without CUDA links
// gpu_backend_none.cpp, whose open() says why there is no GPU.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/launch_policy.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

// Any failure on the GPU side, as one line: "out of memory: needs 4.00 GiB for
// the rotating input copies (78.1 GiB free of 79.2 GiB)", "CUDA error
// cudaErrorIllegalAddress (an illegal memory access ...) in launch_tree".
struct GpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  std::string name;
  int sm_count = 0;
  int registers_per_sm = 0;
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  std::string cccl_version;  // the CCCL (CUB) headers the kernels were built with, "3.6.0"
  // What the default launches are planned for (launch_policy.hpp).
  DeviceShape shape() const { return {sm_count, registers_per_sm}; }
};

class GpuBackend {
 public:
  // One per process: it owns a stream, the uploaded problem, the workspace and
  // the output buffers. nullptr, with *why_not set, when the build has no
  // CUDA, no device is present, or the driver fails.
  static std::unique_ptr<GpuBackend> open(std::string* why_not);
  ~GpuBackend();
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;

  const DeviceInfo& info() const;
  // The device memory free now (cudaMemGetInfo).
  std::size_t free_memory_bytes() const;

  // Copies the problem's arrays to the device (once per input). Throws
  // GpuError on out-of-memory and any other CUDA failure.
  void upload(const ReductionProblem&);
  // The same, except that arrays already on the device (the same host
  // arrays, uploaded before, and unchanged since: the caller's promise) are
  // not copied again: the ops of one input share one upload.
  void view_as(const ReductionProblem&);
  // Makes run() read the problem as viewed with its elements permuted on the
  // device by ProblemPermutation (kernels/index_permutation.hpp) with this
  // seed; nullopt goes back to the problem as uploaded. One permuted copy is
  // held at a time.
  void use_permutation(std::optional<std::uint64_t> seed);

  // Runs one kernel on the uploaded problem (spec.op may differ from the
  // problem's op when the arrays it needs are there), synchronises, checks
  // every error and that every output element was written.
  ReductionResult run(const KernelSpec&, const LaunchConfig&);
  // The same run, checked and digested on the device (kernels/output_digest.hpp:
  // the digest results_digest gives on the host; a permuted norm's outputs at
  // the positions they go back to), bringing back only what the caller asks
  // for: every output (rows == nullptr), or the outputs of the listed rows of
  // `cols` outputs each (the scored rows of a large norm; none when empty).
  struct DigestedRun {
    ReductionResult copied;
    std::uint64_t digest = 0;
  };
  DigestedRun run_digested(const KernelSpec&, const LaunchConfig&, const std::vector<std::int64_t>* rows,
                           std::int64_t cols);

  struct Timing {
    double median_ms = 0, min_ms = 0, max_ms = 0;
    double gbps = 0;              // bytes_per_run / median, in 1e9 bytes per second
    int timed_runs = 0;
    std::size_t bytes_per_run = 0;  // input bytes read (a copy counts read + written)
    int copies = 1;                 // rotating copies of the input
    bool exceeds_l2 = false;        // whether the copies together are larger than L2
  };
  // CUDA events around each launch after `warmup` untimed ones; the launches
  // rotate among copies of the input whose total exceeds L2 (up to a cap for
  // tiny inputs: exceeds_l2 says whether it did). Every launch's error is
  // checked.
  Timing time(const KernelSpec&, const LaunchConfig&, int warmup, int reps);
  // The yardsticks, measured on their own buffers (n fp32 values that are not
  // zeros; a copy of `bytes`), timed the same way.
  Timing time_cub_sum_fp32(std::int64_t n, int warmup = 5, int reps = 20);
  Timing time_copy(std::size_t bytes, int warmup = 5, int reps = 20);

  // Users' kernels (accuracy/user_kernel.hpp) on the uploaded problem. A
  // launch gets the uploaded arrays' device pointers (x and y may point at a
  // rotated copy when timed), an output buffer of the requested size and the
  // backend's stream (a cudaStream_t), and enqueues its work there.
  struct UploadedArrays {
    Dtype in = Dtype::fp32;
    Axis axis = Axis::all;
    std::int64_t rows = 1, cols = 0;  // whole-array problems: [1, n]
    double eps = 1e-6;
    const void* x = nullptr;
    const void* y = nullptr;
    const void* gamma = nullptr;
    const void* beta = nullptr;
  };
  using Launch = std::function<void(const UploadedArrays&, void* out, void* stream)>;
  // Fills the output with 0xFF bytes, launches, synchronises, checks every
  // CUDA error (naming `what`) and returns the output's bytes.
  std::vector<unsigned char> run_launch(const Launch&, std::size_t out_bytes, const std::string& what);
  // Times a launch as time() times a built-in kernel: CUDA events, warm-up,
  // inputs rotated among copies above L2. bytes_per_run counts x (and y when
  // the kernel reads it), gamma and beta.
  Timing time_launch(const Launch&, std::size_t out_bytes, bool reads_y, int warmup, int reps,
                     const std::string& what);

  // Why this build cannot run a shape on the GPU at all (serial is a CPU
  // shape; cub_deterministic needs CCCL >= 3.1; tree/atomic before their
  // kernels are built), or nullopt.
  static std::optional<std::string> shape_unavailable(Shape);
  // The same for one kernel: a shape that exists but not for this op,
  // accumulator, format or axis (cub has no Kahan accumulator, ...).
  static std::optional<std::string> unavailable(const KernelSpec&, Axis);

  struct Impl;

 private:
  explicit GpuBackend(std::unique_ptr<Impl>);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ulpscope
