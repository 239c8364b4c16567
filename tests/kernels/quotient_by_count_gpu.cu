// quotient_by_count.hpp on the device against __fdiv_rn (quotient_by_count_gpu.hpp).
#include <cuda_runtime.h>

#include "kernels/quotient_by_count.hpp"
#include "quotient_by_count_gpu.hpp"

namespace ulpscope::test {
namespace {

constexpr std::uint32_t kSignificands = 1u << 23;

// blockIdx.y = n - 1; threads stride over the significands of d.
__global__ void count_mismatches(std::uint32_t sign_exponent, unsigned long long* bad) {
  const int n = blockIdx.y + 1;
  const float fn = float(n);
  const float y = kDeviceCountReciprocals.reciprocal[n - 1];
  if (blockIdx.x == 0 && threadIdx.x == 0 && __float_as_uint(y) != __float_as_uint(__fdiv_rn(1.0f, fn)))
    atomicAdd(&bad[0], 1ull);
  unsigned long long local = 0;
  for (std::uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < kSignificands; s += gridDim.x * blockDim.x) {
    const float d = __uint_as_float((sign_exponent << 23) | s);
    local += __float_as_uint(quotient_by_count(d, fn, y)) != __float_as_uint(__fdiv_rn(d, fn));
  }
  if (local) atomicAdd(&bad[1], local);
}

bool failed(cudaError_t e, std::string* error) {
  if (e == cudaSuccess) return false;
  *error = cudaGetErrorString(e);
  return true;
}

}  // namespace

bool count_quotient_mismatches(std::uint32_t sign_exponent, QuotientMismatches* out, std::string* error) {
  unsigned long long* bad = nullptr;
  if (failed(cudaMalloc(&bad, 2 * sizeof(unsigned long long)), error)) return false;
  unsigned long long host[2] = {0, 0};
  bool ok = !failed(cudaMemset(bad, 0, sizeof host), error);
  if (ok) {
    count_mismatches<<<dim3(64, kCountReciprocals), 256>>>(sign_exponent, bad);
    ok = !failed(cudaGetLastError(), error) && !failed(cudaMemcpy(host, bad, sizeof host, cudaMemcpyDeviceToHost), error);
  }
  cudaFree(bad);
  out->table = host[0];
  out->quotient = host[1];
  return ok;
}

}  // namespace ulpscope::test
