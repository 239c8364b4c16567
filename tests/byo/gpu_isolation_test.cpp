// A plug-in's run_device in its ulpscope-kernel-host process (plugin/kernel_host.hpp)
// on the GPU: a crash, exit, abort, a kernel that never ends, a write past out,
// an illegal address and a kernel that writes nothing each fail their cells
// naming the kernel, the function and the signal or CUDA error, while the
// good kernel's cells are measured as in this process: the same bits, and a
// throughput timed the same way. Skips without a CUDA device.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <map>
#include <vector>

#include "accuracy/evaluate_kernel.hpp"
#include "accuracy/kernel_under_test.hpp"
#include "kernels/gpu_backend.hpp"
#include "plugin/kernel_lib.hpp"

namespace ulpscope {
namespace {

class GpuIsolation : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!GpuBackend::open(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  }
  static EvaluateOptions options() {
    EvaluateOptions o;
    o.distributions = {{Distribution::normal, std::nullopt}};
    o.sizes = {33, 4096};
    o.seeds = {1};
    o.runs = 2;
    o.permutations = 1;
    o.backend = EvaluationBackend::cuda;
    return o;
  }
};

TEST_F(GpuIsolation, EachWayOfFailingIsACellAndTheGoodKernelSurvives) {
  const double timeout = 3;
  const auto kernels = load_kernel_lib(BYO_GPU_CRASH_PLUGIN, PluginCalls(timeout, ULPSCOPE_KERNEL_HOST_PROGRAM));
  ASSERT_EQ(kernels.size(), 8u);
  for (const UserKernel& k : kernels) {
    EXPECT_FALSE(k.run_device) << k.name << " runs in this process";
    EXPECT_TRUE(k.isolated_device) << k.name;
  }
  const Evaluation e = evaluate_kernels(kernels, options());
  EXPECT_EQ(e.backend, "cuda");
  const std::string sigsegv = ::strsignal(SIGSEGV), sigabrt = ::strsignal(SIGABRT);
  // The status each kernel's cells must have; a prefix where the rest is the
  // driver's wording.
  const std::map<std::string, std::string> expected{
      {"gpu_fine_sum", "ok"},
      {"gpu_segv_sum", "failed: gpu_segv_sum (run_device): killed by signal 11 (" + sigsegv + ")"},
      {"gpu_exit_sum", "failed: gpu_exit_sum (run_device): exited with status 3 instead of returning"},
      {"gpu_abort_sum", "failed: gpu_abort_sum (run_device): killed by signal 6 (" + sigabrt + ")"},
      {"gpu_hang_sum", "failed: gpu_hang_sum (run_device): did not return within 3 s (killed; --kernel-timeout)"},
      {"gpu_overrun_sum", "failed: gpu_overrun_sum (run_device): wrote past its output on the device (4 bytes)"},
      {"gpu_illegal_address_sum", "failed: gpu_illegal_address_sum (run_device): CUDA error cudaErrorIllegalAddress"},
      {"gpu_lazy_sum", "failed: gpu_lazy_sum (run_device): did not write its output (1 of 1 values left as filled)"},
  };
  std::map<std::string, int> cells;
  for (const Cell& c : e.cells) {
    SCOPED_TRACE(c.shape + " n=" + std::to_string(c.n));
    ASSERT_EQ(expected.count(c.shape), 1u);
    const std::string& want = expected.at(c.shape);
    EXPECT_EQ(c.status.substr(0, want.size()), want) << c.status;
    ++cells[c.shape];
    if (c.shape == "gpu_fine_sum") {
      EXPECT_EQ(c.runs, 2);
      EXPECT_EQ(c.distinct_results, 1);
      EXPECT_EQ(c.permutations, 2);
    }
  }
  EXPECT_EQ(cells.size(), expected.size());
  for (const auto& [name, count] : cells) EXPECT_EQ(count, 2) << name;  // one cell per size
}

// The isolated call gives the in-process call's bits, on the same problem,
// and its throughput is measured by the same GpuBackend::time_launch (in the
// child): the two figures agree within run-to-run noise. What the isolation
// adds per call (a copy into shared memory when the inputs changed, the
// child's upload, the socket round trip) is printed for docs/byo.md.
TEST_F(GpuIsolation, GivesTheInProcessBitsAndThroughput) {
  const auto isolated = load_kernel_lib(BYO_GPU_PLUGIN, PluginCalls(60, ULPSCOPE_KERNEL_HOST_PROGRAM));
  const auto in_process = load_kernel_lib(BYO_GPU_PLUGIN, PluginCalls(0));
  ASSERT_TRUE(isolated[0].isolated_device);
  ASSERT_TRUE(in_process[0].run_device);
  std::string why;
  const auto gpu = GpuBackend::open(&why);
  ASSERT_TRUE(gpu) << why;
  // [2^14, 1024] fp32 (64 MiB, above L2), one sum per row.
  const std::int64_t rows = 1 << 14, cols = 1024;
  std::vector<float> values(std::size_t(rows * cols));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i % 1000) * 0.001f - 0.5f;
  TypedArray x(std::move(values));
  ReductionProblem p;
  p.op = Op::sum;
  p.axis = Axis::inner;
  p.rows = rows;
  p.cols = cols;
  p.x = &x;
  gpu->upload(p);
  const LaunchConfig cfg{0, 256};
  const std::size_t bytes = std::size_t(rows) * sizeof(float);

  const std::vector<unsigned char> here = gpu->run_launch(matrix::user_launch(in_process[0], cfg), bytes, "in process");
  std::vector<unsigned char> there(bytes);
  const auto started = std::chrono::steady_clock::now();
  isolated[0].isolated_device->run(matrix::kernel_args(isolated[0], matrix::host_arrays(p), there.data(), cfg));
  const auto first = std::chrono::steady_clock::now();
  isolated[0].isolated_device->run(matrix::kernel_args(isolated[0], matrix::host_arrays(p), there.data(), cfg));
  const auto second = std::chrono::steady_clock::now();
  EXPECT_EQ(here, there);
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto start = std::chrono::steady_clock::now();
  (void)gpu->run_launch(matrix::user_launch(in_process[0], cfg), bytes, "in process");
  const double in_process_ms = ms(std::chrono::steady_clock::now() - start);

  const GpuBackend::Timing t_here =
      gpu->time_launch(matrix::user_launch(in_process[0], cfg), bytes, false, 3, 10, "in process");
  const GpuBackend::Timing t_there =
      isolated[0].isolated_device->time(matrix::kernel_args(isolated[0], matrix::host_arrays(p), nullptr, cfg), 3, 10);
  std::printf("64 MiB [16384, 1024] fp32 row sums: in process %.1f GB/s (median %.3f ms), isolated %.1f GB/s "
              "(median %.3f ms)\n",
              t_here.gbps, t_here.median_ms, t_there.gbps, t_there.median_ms);
  std::printf("one call, wall clock: in process %.2f ms; isolated %.2f ms with the child's start and the inputs' "
              "copy and upload, %.2f ms with the inputs unchanged\n",
              in_process_ms, ms(first - started), ms(second - first));
  EXPECT_EQ(t_there.bytes_per_run, t_here.bytes_per_run);
  EXPECT_EQ(t_there.timed_runs, t_here.timed_runs);
  EXPECT_EQ(t_there.copies, t_here.copies);
  ASSERT_GT(t_here.gbps, 0);
  // The same kernel timed the same way on the same device; a factor of 2
  // would be a difference in method, not noise.
  EXPECT_GT(t_there.gbps / t_here.gbps, 0.5);
  EXPECT_LT(t_there.gbps / t_here.gbps, 2.0);
}

}  // namespace
}  // namespace ulpscope
