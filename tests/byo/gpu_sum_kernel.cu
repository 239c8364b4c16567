#include <cuda_runtime.h>

#include "gpu_sum_kernel.hpp"

namespace ulpscope::test {
namespace {

__global__ void serial_sums(const float* x, float* out, std::int64_t reductions, std::int64_t length,
                            std::int64_t cols, bool outer) {
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= reductions) return;
  auto at = [&](std::int64_t k) { return x[outer ? k * cols + g : g * length + k]; };
  float acc = length > 0 ? at(0) : 0.0f;
  for (std::int64_t k = 1; k < length; ++k) acc = __fadd_rn(acc, at(k));
  out[g] = acc;
}

}  // namespace

void launch_serial_sum_fp32(const void* x, void* out, std::int64_t rows, std::int64_t cols, int axis, int threads,
                            void* stream) {
  const std::int64_t reductions = axis == 0 ? 1 : axis == 2 ? cols : rows;
  const std::int64_t length = axis == 0 ? rows * cols : axis == 2 ? rows : cols;
  if (reductions == 0) return;
  const std::int64_t blocks = (reductions + threads - 1) / threads;
  serial_sums<<<unsigned(blocks), unsigned(threads), 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(x), static_cast<float*>(out), reductions, length, cols, axis == 2);
}

}  // namespace ulpscope::test
