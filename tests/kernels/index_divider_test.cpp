// index_divider.hpp against the integer division, at the edges that its
// corrections exist for: k just below, at and above multiples of d, for
// divisors from 1 to near 2^52, and random indices below 2^52.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/index_divider.hpp"

namespace ulpscope {
namespace {

constexpr std::int64_t kLimit = std::int64_t(1) << 52;  // the divider's domain: k < 2^52

void expect_divides(const IndexDivider& div, std::int64_t k) {
  std::int64_t r = -1;
  const std::int64_t q = div.quotient(k, r);
  ASSERT_EQ(q, k / div.d) << "k = " << k << ", d = " << div.d;
  ASSERT_EQ(r, k % div.d) << "k = " << k << ", d = " << div.d;
}

TEST(IndexDivider, EqualsIntegerDivision) {
  const std::vector<std::int64_t> divisors = {1,          2,          3,           7,          31,
                                              33,         1023,       4096,        4097,       (1 << 20) + 3,
                                              2147483647, 2147483649, 8589934597,  kLimit / 3, kLimit - 1};
  std::mt19937_64 rng(12);
  for (const std::int64_t d : divisors) {
    const IndexDivider div = IndexDivider::of(d);
    for (std::int64_t k = 0; k < 100; ++k) expect_divides(div, k);
    // Around multiples q d across the range of quotients, the largest first.
    for (std::int64_t q = (kLimit - 1) / d; q > 0; q /= 3) {
      for (std::int64_t dk = -2; dk <= 2; ++dk) {
        const std::int64_t k = q * d + dk;
        if (k >= 0 && k < kLimit) expect_divides(div, k);
      }
    }
    for (int i = 0; i < 20000; ++i) expect_divides(div, std::int64_t(rng() % std::uint64_t(kLimit)));
    expect_divides(div, kLimit - 1);
  }
}

// Random divisors too, with indices at multiples where the estimate is
// closest to a wrong integer.
TEST(IndexDivider, EqualsIntegerDivisionForRandomDivisors) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t d = 1 + std::int64_t(rng() % std::uint64_t(std::int64_t(1) << (1 + i % 50)));
    const IndexDivider div = IndexDivider::of(d);
    const std::int64_t q = std::int64_t(rng() % std::uint64_t((kLimit - 1) / d));
    for (std::int64_t dk = -1; dk <= 1; ++dk) {
      const std::int64_t k = q * d + dk;
      if (k >= 0 && k < kLimit) expect_divides(div, k);
    }
  }
}

}  // namespace
}  // namespace ulpscope
