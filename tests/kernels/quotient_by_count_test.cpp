// quotient_by_count.hpp on the host (the same arithmetic as on the device):
// the table is RN(1/n), and the quotient equals the division on samples of
// its domain; zeros keep their sign; below kQuotientMin it can fail. The
// exhaustive check runs on the GPU (quotient_by_count_gpu_test.cu).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/quotient_by_count.hpp"

namespace ulpscope {
namespace {

constexpr CountReciprocals kTable = make_count_reciprocals();

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

float quotient(float d, int n) { return quotient_by_count(d, float(n), kTable.reciprocal[n - 1]); }

TEST(QuotientByCount, TableHoldsRoundedReciprocals) {
  for (int n = 1; n <= kCountReciprocals; ++n) {
    volatile float one = 1.0f;  // divided at run time, not by the compiler
    ASSERT_EQ(bits(kTable.reciprocal[n - 1]), bits(one / float(n))) << "n = " << n;
  }
}

// Every significand of d in [1, 2) for a few counts (odd ones: an even count
// only shifts the quotient), and a sparse sweep over every count and the
// exponents from 2^-113 to 2^127.
TEST(QuotientByCount, EqualsDivisionOnSamples) {
  for (int n : {3, 7, 2047, 4095}) {
    int bad = 0;
    for (std::uint32_t s = 0; s < (1u << 23); ++s) {
      const float d = from_bits(0x3f800000u | s);
      bad += bits(quotient(d, n)) != bits(d / float(n));
    }
    EXPECT_EQ(bad, 0) << "n = " << n;
  }
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  long bad = 0;
  for (int n = 1; n <= kCountReciprocals; ++n)
    for (int k = 0; k < 512; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const std::uint32_t r = std::uint32_t(state >> 32);
      const std::uint32_t exponent = 127 - 113 + r % (254 - (127 - 113) + 1);
      const float d = from_bits((r & 0x80000000u) | (exponent << 23) | (std::uint32_t(state) & 0x7fffffu));
      bad += bits(quotient(d, n)) != bits(d / float(n));
    }
  EXPECT_EQ(bad, 0);
}

TEST(QuotientByCount, ZerosKeepTheirSign) {
  for (int n : {1, 3, 4096}) {
    EXPECT_EQ(bits(quotient(0.0f, n)), bits(0.0f / float(n)));
    EXPECT_EQ(bits(quotient(-0.0f, n)), bits(-0.0f / float(n)));
  }
}

// Why callers check |d| >= kQuotientMin and finiteness first.
TEST(QuotientByCount, FailsWhereTheQuotientUnderflowsAndOnInfinity) {
  int bad = 0;
  for (std::uint32_t s = 0; s < (1u << 23) && bad == 0; ++s) {
    const float d = from_bits(std::uint32_t(127 - 126) << 23 | s);
    bad += bits(quotient(d, 6)) != bits(d / 6.0f);
  }
  EXPECT_GT(bad, 0) << "no mismatch for d in [2^-126, 2^-125) at n = 6";
  EXPECT_TRUE(std::isnan(quotient(INFINITY, 3)));
  EXPECT_TRUE(std::isinf(INFINITY / 3.0f));
}

}  // namespace
}  // namespace ulpscope
