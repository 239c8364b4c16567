// fp32 through BinaryFormat (Fp32Format) against the host's own double->float
// conversion, which rounds to nearest even in the default rounding mode.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "formats/binary_format.hpp"
#include "formats/round_to_dtype.hpp"
#include "mismatches.hpp"
#include "pattern_kind.hpp"

namespace ulpscope::test {
namespace {

std::vector<double> fp32_inputs() {
  std::vector<double> out = {0.0, -0.0, 1.0, 0x1p-149, 0x1p-150, 0x1.8p-150, 0x1p-126,
                             0x1.fffffcp-127, 0x1.fffffep-127, 0x1.ffffffp-127, 0x1.fffffep127,
                             0x1.ffffffp127, 0x1.fffffefffffffp127, std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 rng(0x5eed0004);
  std::uniform_int_distribution<int> exp_of(-152, 130);
  for (int i = 0; i < 1000000; ++i) {
    std::uint64_t bits;
    if (i % 3 == 0) {
      bits = rng();  // any double
    } else {
      std::uint64_t significand = rng() & ((std::uint64_t(1) << 52) - 1);
      if (i % 3 == 1) significand &= ~((std::uint64_t(1) << 28) - 1);  // 25 bits: ties abound
      bits = (std::uint64_t(exp_of(rng) + 1023) << 52) | significand | (rng() & (std::uint64_t(1) << 63));
    }
    out.push_back(detail::double_from_bits(bits));
  }
  return out;
}

TEST(Fp32Format, EncodesAsTheHardwareConversion) {
  Mismatches bad;
  for (double x : fp32_inputs()) {
    const float hw = static_cast<float>(x);
    std::uint32_t hw_bits;
    std::memcpy(&hw_bits, &hw, 4);
    const std::uint32_t ours = encode<Fp32Format>(x);
    const bool agree = std::isnan(x) ? kind_of<Fp32Format>(ours) == Kind::nan : ours == hw_bits;
    if (!agree) bad.add(fmt::format("{} -> {} hardware {}", show(x), show_bits(ours), show_bits(hw_bits)));
    if (!same_value(round_to_dtype(x, Dtype::fp32), double(hw)))
      bad.add(fmt::format("round_to_dtype({}, fp32)", show(x)));
    if (!same_value(decode<Fp32Format>(hw_bits), double(hw))) bad.add(fmt::format("decode {}", show_bits(hw_bits)));
  }
  EXPECT_NO_MISMATCHES(bad);
}

}  // namespace
}  // namespace ulpscope::test
