// store_out (kernels/store_out.hpp): the bits an output takes in its own
// format, as the exact kernels' finishing pass writes them. Storing a value
// already rounded to the format (what the reducers' finish gives) must give
// the bits of the value itself, and the bits of a few values are known.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/out_format.hpp"
#include "kernels/store_out.hpp"

namespace ulpscope {
namespace {

// Element 1 of a small array of d (elements 0 and 2 must stay untouched).
std::uint64_t stored_bits(double x, Dtype d, Saturation sat) {
  unsigned char buffer[3 * 8];
  std::memset(buffer, 0xA5, sizeof buffer);
  store_out(x, d, sat, buffer, 1);
  const std::size_t w = std::size_t(format_info(d).bits / 8);
  for (std::size_t i = 0; i < w; ++i) {
    EXPECT_EQ(buffer[i], 0xA5) << "element 0 written";
    EXPECT_EQ(buffer[2 * w + i], 0xA5) << "element 2 written";
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, buffer + w, w);  // little-endian, as the device
  return bits;
}

struct Known {
  double x;
  Dtype d;
  Saturation sat;
  std::uint64_t bits;
};

TEST(StoreOut, KnownBitPatterns) {
  const double inf = std::numeric_limits<double>::infinity();
  const Known cases[] = {
      {1.0, Dtype::fp16, Saturation::nosat, 0x3C00},
      {-0.0, Dtype::fp16, Saturation::nosat, 0x8000},
      {65504.0, Dtype::fp16, Saturation::nosat, 0x7BFF},
      {0x1p-24, Dtype::fp16, Saturation::nosat, 0x0001},  // the least subnormal
      {1.0, Dtype::bf16, Saturation::nosat, 0x3F80},
      {-2.0, Dtype::bf16, Saturation::nosat, 0xC000},
      {1.0, Dtype::fp32, Saturation::nosat, 0x3F800000},
      {-inf, Dtype::fp32, Saturation::nosat, 0xFF800000},
      {0.1, Dtype::fp64, Saturation::nosat, 0x3FB999999999999Aull},
      {1.0, Dtype::fp8_e4m3, Saturation::satfinite, 0x38},
      {448.0, Dtype::fp8_e4m3, Saturation::satfinite, 0x7E},
      {1e6, Dtype::fp8_e4m3, Saturation::satfinite, 0x7E},  // saturated
      {1.0, Dtype::fp8_e5m2, Saturation::satfinite, 0x3C},
      {inf, Dtype::fp8_e5m2, Saturation::satfinite, 0x7B},  // saturated
      {inf, Dtype::fp8_e5m2, Saturation::nosat, 0x7C},
  };
  for (const Known& k : cases)
    EXPECT_EQ(stored_bits(k.x, k.d, k.sat), k.bits) << k.x << " as " << to_string(k.d);
}

// A value already in the format is stored exactly: the same bits as storing
// the unrounded value, and decoding them gives round_to_out back.
TEST(StoreOut, RoundedValuesAreStoredExactly) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {0.0,    -0.0,   1.0,     1.0 / 3,  -2.5e-3, 3.0e4,  65519.0, 1e-7,
                                      1e-30,  -1e38,  3.5e38,  0x1p-149, 447.99,  6e4,    -1e300,  inf,
                                      -inf,   nan,    0x1p-25, 0x1.8p-24};
  for (Dtype d : kOutputDtypes) {
    for (Saturation sat : {Saturation::nosat, Saturation::satfinite}) {
      for (double x : values) {
        const double r = round_to_out(x, d, sat);
        const std::uint64_t bits = stored_bits(r, d, sat);
        EXPECT_EQ(bits, stored_bits(x, d, sat)) << x << " as " << to_string(d);
        double back = 0;
        switch (d) {
          case Dtype::fp64: std::memcpy(&back, &bits, 8); break;
          case Dtype::fp32: {
            float f;
            std::memcpy(&f, &bits, 4);
            back = f;
            break;
          }
          case Dtype::fp16: back = decode<Fp16Format>(std::uint32_t(bits)); break;
          case Dtype::bf16: back = decode<Bf16Format>(std::uint32_t(bits)); break;
          case Dtype::fp8_e4m3: back = decode<Fp8E4M3Format>(std::uint32_t(bits)); break;
          case Dtype::fp8_e5m2: back = decode<Fp8E5M2Format>(std::uint32_t(bits)); break;
        }
        if (std::isnan(r)) {
          EXPECT_TRUE(std::isnan(back)) << x << " as " << to_string(d);
        } else {
          EXPECT_EQ(back, r) << x << " as " << to_string(d);
          EXPECT_EQ(std::signbit(back), std::signbit(r)) << x << " as " << to_string(d);
        }
      }
    }
  }
}

}  // namespace
}  // namespace ulpscope
