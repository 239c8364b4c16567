#include "formats/hex_float.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

namespace ulpscope {
namespace {

TEST(HexFloat, MatchesCPrintfForm) {
  EXPECT_EQ(hex_float(12.0), "0x1.8p+3");
  EXPECT_EQ(hex_float(-0.0), "-0x0p+0");
  EXPECT_EQ(hex_float(0.0), "0x0p+0");
  EXPECT_EQ(hex_float(1.0), "0x1p+0");
  EXPECT_EQ(hex_float(HUGE_VAL), "inf");
  EXPECT_EQ(hex_float(-HUGE_VAL), "-inf");
  EXPECT_EQ(hex_float(std::nan("")), "nan");
  for (double x : {0.1, 65504.0, 5.960464477539063e-08, 1e-310, -3.4028234663852886e38}) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", x);
    EXPECT_EQ(hex_float(x), buf) << x;
  }
}

TEST(HexFloat, RoundTrips) {
  for (double x : {0.1, -0.0, 0.0, 65504.0, 1e-310, -HUGE_VAL, HUGE_VAL,
                   std::numeric_limits<double>::max()}) {
    const auto back = parse_hex_float(hex_float(x));
    ASSERT_TRUE(back.has_value()) << x;
    EXPECT_EQ(std::signbit(*back), std::signbit(x));
    EXPECT_EQ(*back, x);
  }
  EXPECT_TRUE(std::isnan(*parse_hex_float("nan")));
  EXPECT_FALSE(parse_hex_float("1.5").has_value());
  EXPECT_FALSE(parse_hex_float("0x1.8p+3junk").has_value());
}

}  // namespace
}  // namespace ulpscope
