// quotient_by_count.hpp on the device: the table of reciprocals is RN(1/n),
// and the quotient equals the division for every n of the table and every
// significand of d at the exponents its comment names (the scaling argument
// covers the exponents between). Skips without a GPU.
#include <gtest/gtest.h>

#include "gpu_test_backend.hpp"
#include "quotient_by_count_gpu.hpp"

namespace ulpscope {
namespace {

struct Case {
  std::uint32_t sign_exponent;  // sign bit and biased exponent field
  const char* what;
};

TEST(QuotientByCount, EqualsDivision) {
  REQUIRE_GPU();
  (void)g;
  const Case cases[] = {{127 - 113, "[2^-113, 2^-112)"}, {127 - 112, "[2^-112, 2^-111)"}, {127 - 60, "[2^-60, 2^-59)"},
                        {127, "[1, 2)"},                 {0x100 | 127, "(-2, -1]"},         {254, "[2^127, 2^128)"}};
  for (const Case& c : cases) {
    test::QuotientMismatches bad;
    std::string error;
    ASSERT_TRUE(test::count_quotient_mismatches(c.sign_exponent, &bad, &error)) << error;
    EXPECT_EQ(bad.table, 0u) << "table entries that are not RN(1/n)";
    EXPECT_EQ(bad.quotient, 0u) << "quotients unlike the division for d in " << c.what;
  }
  // Below the table's domain it does fail (the reason callers divide there).
  test::QuotientMismatches bad;
  std::string error;
  ASSERT_TRUE(test::count_quotient_mismatches(127 - 117, &bad, &error)) << error;
  EXPECT_GT(bad.quotient, 0u) << "no mismatch for d in [2^-117, 2^-116): kQuotientMin could be lower";
}

}  // namespace
}  // namespace ulpscope
