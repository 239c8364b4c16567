// The same RMSNorm on the GPU: one block per row, each thread adds the squares
// of a strided share of the row, a shared-memory tree adds the threads'
// partials, then each thread writes its share of y. The accumulation follows
// RMSNORM_SUMSQ_IN_BF16 as on the host (rmsnorm.hpp); the order differs, so
// the bits may too.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "rmsnorm.hpp"

namespace rmsnorm {
namespace {

#if RMSNORM_SUMSQ_IN_BF16
using Partial = __nv_bfloat16;
__device__ Partial zero() { return __float2bfloat16_rn(0.0f); }
__device__ Partial square(__nv_bfloat16 v) { return __hmul(v, v); }
__device__ Partial add(Partial a, Partial b) { return __hadd(a, b); }
__device__ double widen(Partial a) { return double(__bfloat162float(a)); }
#else
using Partial = double;
__device__ Partial zero() { return 0.0; }
__device__ Partial square(__nv_bfloat16 v) {
  const double d = __bfloat162float(v);
  return __dmul_rn(d, d);
}
__device__ Partial add(Partial a, Partial b) { return __dadd_rn(a, b); }
__device__ double widen(Partial a) { return a; }
#endif

__global__ void rmsnorm_rows(const __nv_bfloat16* x, const __nv_bfloat16* gamma, __nv_bfloat16* y,
                             std::int64_t cols, double eps) {
  extern __shared__ __align__(8) unsigned char shared_bytes[];
  Partial* partial = reinterpret_cast<Partial*>(shared_bytes);
  const __nv_bfloat16* row = x + std::int64_t(blockIdx.x) * cols;
  Partial acc = zero();
  for (std::int64_t i = threadIdx.x; i < cols; i += blockDim.x) acc = add(acc, square(row[i]));
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {  // blockDim.x is a power of two
    if (threadIdx.x < half) partial[threadIdx.x] = add(partial[threadIdx.x], partial[threadIdx.x + half]);
    __syncthreads();
  }
  const double inv_rms = 1.0 / sqrt(widen(partial[0]) / double(cols) + eps);
  for (std::int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    const double v = __dmul_rn(__dmul_rn(double(__bfloat162float(row[i])), inv_rms), double(__bfloat162float(gamma[i])));
    y[std::int64_t(blockIdx.x) * cols + i] = __double2bfloat16(v);
  }
}

}  // namespace

int rmsnorm_bf16_cuda(const std::uint16_t* x, const std::uint16_t* gamma, std::uint16_t* y, std::int64_t rows,
                      std::int64_t cols, double eps, int threads, void* stream) {
  if (rows == 0) return int(cudaSuccess);
  int t = 1;
  while (t * 2 <= threads && t < 1024) t *= 2;
  rmsnorm_rows<<<unsigned(rows), unsigned(t), std::size_t(t) * sizeof(Partial), static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<const __nv_bfloat16*>(x), reinterpret_cast<const __nv_bfloat16*>(gamma),
      reinterpret_cast<__nv_bfloat16*>(y), cols, eps);
  return int(cudaGetLastError());
}

}  // namespace rmsnorm
