// Every bit pattern of fp16, bf16 and both fp8 formats (and a structured
// sample of fp32), against MPFR and against docs/spec.md's table: decoding,
// encoding of every value and of every midpoint between neighbours, and
// hex-float printing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "formats/binary_format.hpp"
#include "formats/dtype.hpp"
#include "formats/hex_float.hpp"
#include "mismatches.hpp"
#include "mpfr_format.hpp"
#include "pattern_kind.hpp"
#include "spec_formats.hpp"

namespace ulpscope::test {
namespace {

template <class F>
class EveryPattern : public ::testing::Test {};
TYPED_TEST_SUITE(EveryPattern, AllFormats, FormatName);

TYPED_TEST(EveryPattern, ParametersMatchSpec) {
  using F = TypeParam;
  using S = Spec<F>;
  const MpfrFormat m = MpfrFormat::of<F>();
  EXPECT_EQ(F::bits, 1 + S::exp_bits + S::precision - 1);
  EXPECT_EQ(F::precision, S::precision);
  EXPECT_EQ(F::bias, S::bias);
  EXPECT_EQ(F::emin, m.emin());
  EXPECT_EQ(F::emax, MpfrFormat::exponent(S::max_finite));
  EXPECT_EQ(F::has_infinity, S::has_infinity);
  EXPECT_EQ(F::max_finite(), S::max_finite);
  EXPECT_EQ(F::min_normal(), m.min_normal());
  EXPECT_EQ(F::min_subnormal(), S::min_subnormal);
  EXPECT_EQ(m.min_subnormal(), S::min_subnormal);
  EXPECT_EQ(decode<F>(F::max_bits), S::max_finite);

  const FormatInfo& info = format_info(S::dtype);
  EXPECT_EQ(info.bits, F::bits);
  EXPECT_EQ(info.precision, S::precision);
  EXPECT_EQ(info.emin, m.emin());
  EXPECT_EQ(info.emax, MpfrFormat::exponent(S::max_finite));
  EXPECT_EQ(info.has_infinity, S::has_infinity);
  EXPECT_EQ(info.max_finite, S::max_finite);
  EXPECT_EQ(info.min_normal, m.min_normal());
  EXPECT_EQ(info.min_subnormal, S::min_subnormal);
  EXPECT_EQ(parse_dtype(to_string(S::dtype)), S::dtype);
}

TYPED_TEST(EveryPattern, DecodesAsMpfrBuildsTheFields) {
  using F = TypeParam;
  Mismatches bad;
  for (std::uint32_t b : patterns_of<F>()) {
    const double want = spec_value<F>(b);
    const double got = decode<F>(b);
    if (!same_value(got, want))
      bad.add(fmt::format("{}: decode {} want {}", show_bits(b), show(got), show(want)));
  }
  EXPECT_NO_MISMATCHES(bad);
}

TYPED_TEST(EveryPattern, EveryValueEncodesToItsOwnPattern) {
  using F = TypeParam;
  Mismatches bad;
  for (std::uint32_t b : patterns_of<F>()) {
    const double v = spec_value<F>(b);
    if (kind_of<F>(b) == Kind::nan) {
      for (Saturation sat : {Saturation::nosat, Saturation::satfinite})
        if (kind_of<F>(encode<F>(v, sat)) != Kind::nan)
          bad.add(fmt::format("NaN ({}) encodes to {}", to_string(sat), show_bits(encode<F>(v, sat))));
      continue;
    }
    if (encode<F>(v, Saturation::nosat) != b)
      bad.add(fmt::format("{} ({}) nosat -> {}", show(v), show_bits(b), show_bits(encode<F>(v))));
    // satfinite keeps every finite value and takes infinities to +-max.
    const double sat_want = std::isinf(v) ? std::copysign(Spec<F>::max_finite, v) : v;
    const double sat_got = decode<F>(encode<F>(v, Saturation::satfinite));
    if (!same_value(sat_got, sat_want))
      bad.add(fmt::format("{} satfinite -> {}", show(v), show(sat_got)));
  }
  EXPECT_NO_MISMATCHES(bad);
}

// Between neighbours lo < hi of the same sign, the midpoint goes to the one
// whose last fraction bit is 0 (IEEE 754-2019, 4.3.1 roundTiesToEven) and
// the doubles next to the midpoint go to the nearer one. Includes 0 and the
// smallest subnormal, and the last subnormal and the smallest normal. The
// midpoint above the largest finite value is the overflow threshold, checked
// in overflow_test.cpp.
TYPED_TEST(EveryPattern, MidpointsTieToEvenAndNeighboursGoToTheNearer) {
  using F = TypeParam;
  const MpfrFormat m = MpfrFormat::of<F>();
  const std::uint32_t sign = 1u << (F::bits - 1);
  Mismatches bad;
  auto expect = [&](double x, std::uint32_t want) {
    for (Saturation sat : {Saturation::nosat, Saturation::satfinite}) {
      const std::uint32_t got = encode<F>(x, sat);
      if (got != want)
        bad.add(fmt::format("{} ({}) -> {} want {}", show(x), to_string(sat), show_bits(got),
                            show_bits(want)));
      const double oracle = m.round(x, sat);
      if (!same_value(decode<F>(want), oracle))
        bad.add(fmt::format("{} ({}): MPFR rounds to {}, ties-to-even says {}", show(x),
                            to_string(sat), show(oracle), show(decode<F>(want))));
    }
  };
  std::size_t midpoints = 0;
  for (std::uint32_t b : patterns_of<F>()) {
    if ((b & sign) != 0 || kind_of<F>(b) != Kind::finite) continue;
    const std::uint32_t next = b + 1;
    if (kind_of<F>(next) != Kind::finite || (next & sign) != 0) continue;
    const double lo = spec_value<F>(b);
    const double hi = spec_value<F>(next);
    const double mid = lo + (hi - lo) / 2;  // exact: p + 1 <= 25 bits
    const std::uint32_t even = (b & 1u) == 0 ? b : next;
    for (std::uint32_t s : {0u, sign}) {
      const double k = s != 0 ? -1.0 : 1.0;
      expect(k * mid, s | even);
      expect(k * std::nextafter(mid, lo), s | b);
      expect(k * std::nextafter(mid, hi), s | next);
    }
    ++midpoints;
  }
  if constexpr (F::bits <= 16) {
    // Every positive finite value but the largest has a midpoint above it.
    const std::size_t finite_positive =
        (std::size_t(1) << (F::bits - 1)) - (Spec<F>::has_infinity ? (1u << (F::bits - 1 - Spec<F>::exp_bits)) : 1u);
    EXPECT_EQ(midpoints, finite_positive - 1);
  }
  EXPECT_NO_MISMATCHES(bad);
}

TYPED_TEST(EveryPattern, NegativeZeroKeepsItsSign) {
  using F = TypeParam;
  const std::uint32_t sign = 1u << (F::bits - 1);
  for (Saturation sat : {Saturation::nosat, Saturation::satfinite}) {
    EXPECT_EQ(encode<F>(-0.0, sat), sign);
    EXPECT_EQ(encode<F>(0.0, sat), 0u);
    // Below half the smallest subnormal, and double subnormals: a signed zero.
    EXPECT_EQ(encode<F>(-Spec<F>::min_subnormal / 2, sat), sign);
    EXPECT_EQ(encode<F>(-std::numeric_limits<double>::denorm_min(), sat), sign);
    EXPECT_EQ(encode<F>(std::numeric_limits<double>::denorm_min(), sat), 0u);
  }
  EXPECT_TRUE(std::signbit(decode<F>(sign)));
  EXPECT_EQ(decode<F>(sign), 0.0);
}

// Random doubles over the format's whole range and beyond, a quarter of them
// with only p+1 significant bits (so that many are exact midpoints).
TYPED_TEST(EveryPattern, RandomDoublesRoundAsMpfrDoes) {
  using F = TypeParam;
  using S = Spec<F>;
  const MpfrFormat m = MpfrFormat::of<F>();
  std::mt19937_64 rng(0x5eed0001);
  const int lo_exp = m.emin() - S::precision - 3;
  const int hi_exp = MpfrFormat::exponent(S::max_finite) + 2;
  std::uniform_int_distribution<int> exp_of(lo_exp, hi_exp);
  Mismatches bad;
  std::vector<double> inputs = {0.0,
                                -0.0,
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::max(),
                                -std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t significand = rng() & ((std::uint64_t(1) << 52) - 1);
    if (i % 4 == 0) significand &= ~((std::uint64_t(1) << (52 - S::precision)) - 1);
    const std::uint64_t bits = (std::uint64_t(exp_of(rng) + 1023) << 52) | significand |
                               ((rng() & 1) ? std::uint64_t(1) << 63 : 0);
    inputs.push_back(detail::double_from_bits(bits));
  }
  for (double x : inputs)
    for (Saturation sat : {Saturation::nosat, Saturation::satfinite}) {
      const double got = decode<F>(encode<F>(x, sat));
      const double want = m.round(x, sat);
      if (!same_value(got, want))
        bad.add(fmt::format("{} ({}) -> {} MPFR {}", show(x), to_string(sat), show(got), show(want)));
    }
  EXPECT_NO_MISMATCHES(bad);
}

TYPED_TEST(EveryPattern, HexFloatRoundTrips) {
  using F = TypeParam;
  Mismatches bad;
  for (std::uint32_t b : patterns_of<F>()) {
    const double v = decode<F>(b);
    const std::string text = hex_float(v);
    const auto back = parse_hex_float(text);
    if (!back || !same_value(*back, v)) bad.add(fmt::format("{} -> \"{}\"", show_bits(b), text));
    const bool special = kind_of<F>(b) != Kind::finite;
    const bool named = text == "nan" || text == "inf" || text == "-inf";
    if (special != named) bad.add(fmt::format("{} printed as \"{}\"", show_bits(b), text));
  }
  EXPECT_NO_MISMATCHES(bad);
}

}  // namespace
}  // namespace ulpscope::test
