// quotient_by_count.hpp on the device: the table of reciprocals is RN(1/n),
// and the quotient equals the division for every n of the table and every
// significand of d at the exponents its comment names (the scaling argument
// covers the exponents between). Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "gpu_test_backend.hpp"
#include "kernels/quotient_by_count.hpp"

namespace ulpscope {
namespace {

constexpr std::uint32_t kSignificands = 1u << 23;

// blockIdx.y = n - 1; threads stride over the significands of d with the
// given sign and exponent field. bad[0]: table entries that are not RN(1/n);
// bad[1]: quotients that differ from the division, in bits.
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

struct Case {
  std::uint32_t sign_exponent;  // sign bit and biased exponent field
  const char* what;
};

TEST(QuotientByCount, EqualsDivision) {
  REQUIRE_GPU();
  (void)g;
  unsigned long long* bad = nullptr;
  ASSERT_EQ(cudaMalloc(&bad, 2 * sizeof(unsigned long long)), cudaSuccess);
  const Case cases[] = {{127 - 113, "[2^-113, 2^-112)"}, {127 - 112, "[2^-112, 2^-111)"}, {127 - 60, "[2^-60, 2^-59)"},
                        {127, "[1, 2)"},                 {0x100 | 127, "(-2, -1]"},         {254, "[2^127, 2^128)"}};
  for (const Case& c : cases) {
    ASSERT_EQ(cudaMemset(bad, 0, 2 * sizeof(unsigned long long)), cudaSuccess);
    count_mismatches<<<dim3(64, kCountReciprocals), 256>>>(c.sign_exponent, bad);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    unsigned long long host[2] = {1, 1};
    ASSERT_EQ(cudaMemcpy(host, bad, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(host[0], 0u) << "table entries that are not RN(1/n)";
    EXPECT_EQ(host[1], 0u) << "quotients unlike the division for d in " << c.what;
  }
  // Below the table's domain it does fail (the reason callers divide there).
  ASSERT_EQ(cudaMemset(bad, 0, 2 * sizeof(unsigned long long)), cudaSuccess);
  count_mismatches<<<dim3(64, kCountReciprocals), 256>>>(127 - 117, bad);
  unsigned long long host[2] = {0, 0};
  ASSERT_EQ(cudaMemcpy(host, bad, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_GT(host[1], 0u) << "no mismatch for d in [2^-117, 2^-116): kQuotientMin could be lower";
  cudaFree(bad);
}

}  // namespace
}  // namespace ulpscope
