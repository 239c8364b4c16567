// The kernel in its own GoogleTest suite, described with ulpscope's C++ API
// (<ulpscope/accuracy/user_kernel.hpp>) and checked with its assertion: within
// one bf16 ulp of the exact RMSNorm on every adversarial distribution, over
// sizes and seeds, and deterministic. The bad accumulation fails here.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <ulpscope/testing/ulpscope_gtest.hpp>

#include "rmsnorm.hpp"

namespace {

ulpscope::UserKernel rmsnorm_kernel() {
  ulpscope::UserKernel k;
  k.name = "rmsnorm_example";
  k.op = ulpscope::Op::rmsnorm;
  k.in = ulpscope::Dtype::bf16;
  k.out = ulpscope::Dtype::bf16;
  k.run_host = [](const ulpscope::KernelArgs& a) {
    rmsnorm::rmsnorm_bf16_host(static_cast<const std::uint16_t*>(a.x), static_cast<const std::uint16_t*>(a.gamma),
                               static_cast<std::uint16_t*>(a.out), a.rows, a.cols, a.eps);
  };
#ifdef RMSNORM_HAVE_CUDA
  k.run_device = [](const ulpscope::KernelArgs& a, void* stream) {
    const int status = rmsnorm::rmsnorm_bf16_cuda(
        static_cast<const std::uint16_t*>(a.x), static_cast<const std::uint16_t*>(a.gamma),
        static_cast<std::uint16_t*>(a.out), a.rows, a.cols, a.eps, a.config.threads, stream);
    if (status != 0) throw std::runtime_error("rmsnorm_bf16_cuda: cudaError_t " + std::to_string(status));
  };
  k.configs = {{0, 256}, {0, 128}, {0, 1024}};
#endif
  // The plug-in built from the same code, for the replay command.
  k.library = RMSNORM_PLUGIN_PATH;
  return k;
}

// A plain check first: a row of ones normalises to gamma / sqrt(1 + eps).
TEST(RmsNorm, ARowOfOnesGivesGamma) {
  const std::uint16_t one = 0x3F80, half = 0x3F00;  // bf16 1.0 and 0.5
  const std::vector<std::uint16_t> x(64, one), gamma(64, half);
  std::vector<std::uint16_t> y(64, 0);
  rmsnorm::rmsnorm_bf16_host(x.data(), gamma.data(), y.data(), 1, 64, 1e-6);
  for (std::uint16_t v : y) EXPECT_EQ(v, half);  // 0.5 / sqrt(1 + 1e-6) rounds to 0.5 in bf16
}

TEST(RmsNorm, WithinOneUlpOnEveryAdversarialDistribution) {
  EXPECT_ULPSCOPE_WITHIN_ULPS(rmsnorm_kernel(), 1.0);
}

}  // namespace
