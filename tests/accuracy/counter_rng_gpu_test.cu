// The generator's primitives give the same bits on the GPU as on the host
// (docs/spec.md, "Adversarial distributions": the same bits on CPU and GPU). Every
// distribution is built from these with exact steps (scaling by powers of
// two, sign flips) and one final rounding to the input format.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/counter_rng.hpp"

namespace ulpscope {
namespace {

constexpr int kValues = 6;  // per element

__host__ __device__ void primitives(std::uint64_t seed, std::uint64_t i, double* out) {
  const CounterRng rng(seed, 3);
  const double u = rng.uniform(i);
  out[0] = u;
  out[1] = double(rng.below(i, 1000003));
  out[2] = standard_normal(rng, i);
  out[3] = standard_cauchy(rng, i);
  out[4] = portable::log(u > 0 ? u : 0.5);
  out[5] = portable::exp(40.0 * u - 20.0);
}

__global__ void primitives_kernel(std::uint64_t seed, std::uint64_t n, double* out) {
  const std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) primitives(seed, i, out + i * kValues);
}

TEST(CounterRngOnGpu, SameBitsAsTheHost) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t n = 1 << 20, seed = 2026;
  double* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * kValues * sizeof(double)), cudaSuccess);
  primitives_kernel<<<unsigned((n + 255) / 256), 256>>>(seed, n, d);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<double> gpu(n * kValues);
  ASSERT_EQ(cudaMemcpy(gpu.data(), d, gpu.size() * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  std::uint64_t differ[kValues] = {};
  double host[kValues];
  for (std::uint64_t i = 0; i < n; ++i) {
    primitives(seed, i, host);
    for (int k = 0; k < kValues; ++k)
      differ[k] += std::memcmp(&host[k], &gpu[i * kValues + k], sizeof(double)) != 0;
  }
  const char* names[kValues] = {"uniform", "below", "standard_normal", "standard_cauchy", "portable::log",
                                "portable::exp"};
  for (int k = 0; k < kValues; ++k) EXPECT_EQ(differ[k], 0u) << names[k] << " differs on " << differ[k] << " of " << n;
}

}  // namespace
}  // namespace ulpscope
