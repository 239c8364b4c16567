// A user's CUDA kernel through the run matrix on the GPU (GpuBackend::run_launch
// and time_launch): its bits against its host model, its throughput, and a
// launch error reaching the cell. Skips without a CUDA device.
#include <algorithm>
#include <gtest/gtest.h>

#include <memory>

#include "accuracy/evaluate_kernel.hpp"
#include "byo_kernels.hpp"
#include "gpu_sum_kernel.hpp"
#include "kernels/gpu_backend.hpp"
#include "plugin/kernel_lib.hpp"

namespace ulpscope {
namespace {

class GpuUserKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!GpuBackend::open(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  }
  static UserKernel device_sum() {
    UserKernel k = test::serial_fp32_sum(Dtype::fp32, Dtype::fp32);
    k.name = "gpu_serial_sum";
    k.model = k.run_host;  // the same order and arithmetic on the host
    k.run_host = nullptr;
    k.configs = {LaunchConfig{0, 64}, LaunchConfig{0, 256}};
    k.run_device = [](const KernelArgs& a, void* stream) {
      test::launch_serial_sum_fp32(a.x, a.out, a.rows, a.cols, int(a.axis), a.config.threads, stream);
    };
    return k;
  }
  static EvaluateOptions options() {
    EvaluateOptions o;
    o.distributions = {{Distribution::normal, std::nullopt}, {Distribution::log_uniform, std::nullopt},
                       {Distribution::negative_zeros, std::nullopt}};
    o.sizes = {0, 1, 33, 4096, (1 << 20) + 3};
    o.seeds = {1};
    o.row_cols = 1024;
    o.backend = EvaluationBackend::cuda;
    return o;
  }
};

// A timed GPU cell has a positive throughput, measured at the default
// throughput size or at its own n when larger; an empty input reads no
// bytes, so its throughput is unknown.
void expect_throughput(const Cell& c) {
  if (c.n == 0) {
    EXPECT_FALSE(c.gbps);
    EXPECT_FALSE(c.throughput_n);
    return;
  }
  ASSERT_TRUE(c.gbps);
  EXPECT_GT(*c.gbps, 0);
  ASSERT_TRUE(c.throughput_n);
  EXPECT_EQ(*c.throughput_n, std::max<std::int64_t>(c.n, std::int64_t(1) << 26));
}

TEST_F(GpuUserKernel, MatchesItsModelBitForBitAndIsTimed) {
  const Evaluation e = evaluate_kernel(device_sum(), options());
  EXPECT_EQ(e.backend, "cuda");
  ASSERT_FALSE(e.cells.empty());
  for (const Cell& c : e.cells) {
    SCOPED_TRACE(c.distribution + " n=" + std::to_string(c.n) + " axis " + c.axis);
    EXPECT_EQ(c.status, "ok");
    EXPECT_EQ(c.matches_model, true);
    EXPECT_EQ(c.configs, 2);
    EXPECT_EQ(c.distinct_results, 1);
    expect_throughput(c);
    if (c.n > 0) {
      EXPECT_TRUE(c.fraction_of_cub);
    }
  }
  // The host form of the same kernel gives the same results, cell by cell.
  EvaluateOptions host = options();
  host.backend = EvaluationBackend::cpu;
  UserKernel on_host = test::serial_fp32_sum(Dtype::fp32, Dtype::fp32);
  on_host.name = "gpu_serial_sum";
  const Evaluation h = evaluate_kernel(on_host, host);
  ASSERT_EQ(h.cells.size(), e.cells.size());
  for (std::size_t i = 0; i < h.cells.size(); ++i) {
    EXPECT_EQ(h.cells[i].result, e.cells[i].result);
    EXPECT_EQ(h.cells[i].ulp_error, e.cells[i].ulp_error);
  }
}

TEST_F(GpuUserKernel, ALaunchErrorFailsTheCellAndTheRunGoesOn) {
  UserKernel k = device_sum();
  k.configs = {LaunchConfig{0, 4096}};  // more threads per block than CUDA allows
  const Evaluation e = evaluate_kernel(k, options());
  std::size_t failed = 0;
  for (const Cell& c : e.cells) {
    if (c.n == 0) continue;  // nothing to launch
    EXPECT_NE(c.status.find("failed: CUDA error"), std::string::npos) << c.status;
    failed += c.status != "ok";
  }
  EXPECT_GT(failed, 0u);
}

TEST_F(GpuUserKernel, APluginsDeviceFunctionGivesItsHostTwinsBits) {
  // gpu_plugin.cpp's kernel on the GPU, good_plugin.c's on the host: the
  // same order, so the same results; the GPU one timed.
  auto gpu = load_kernel_lib(BYO_GPU_PLUGIN, PluginCalls(60, ULPSCOPE_KERNEL_HOST_PROGRAM));
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_FALSE(gpu[0].run_host);
  auto host = load_kernel_lib(BYO_GOOD_PLUGIN);
  host.resize(1);  // c_serial_sum
  host[0].name = gpu[0].name;
  const Evaluation on_gpu = evaluate_kernels(gpu, options());
  EvaluateOptions o = options();
  o.backend = EvaluationBackend::cpu;
  const Evaluation on_host = evaluate_kernels(host, o);
  ASSERT_EQ(on_gpu.cells.size(), on_host.cells.size());
  ASSERT_FALSE(on_gpu.cells.empty());
  for (std::size_t i = 0; i < on_gpu.cells.size(); ++i) {
    const Cell& g = on_gpu.cells[i];
    SCOPED_TRACE(g.distribution + " n=" + std::to_string(g.n) + " axis " + g.axis);
    EXPECT_EQ(g.status, "ok");
    EXPECT_EQ(g.result, on_host.cells[i].result);
    EXPECT_EQ(g.ulp_error, on_host.cells[i].ulp_error);
    EXPECT_EQ(g.configs, 2);
    EXPECT_EQ(g.distinct_across_configs, 1);
    expect_throughput(g);
  }
}

}  // namespace
}  // namespace ulpscope
