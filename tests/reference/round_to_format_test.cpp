// round_to_format against formats/' integer encoder (doubles) and against a
// rounding written from the definition on cpp_bin_float (values with more
// bits than a double: midpoints plus or minus a whisker).
#include "reference/round_to_format.hpp"

#include <gtest/gtest.h>

#include <random>

#include "formats/round_to_dtype.hpp"
#include "reference_test_support.hpp"

namespace ulpscope {
namespace {

using testing::Big;

// v + sign * 2^whisker_exponent, exactly.
ExactReal with_whisker(const ExactReal& v, mpfr_exp_t whisker_exponent, int sign) {
  ExactReal w(2);
  mpfr_set_si_2exp(w.get(), sign, whisker_exponent, MPFR_RNDN);
  return exact_add(v, w);
}
ExactReal with_whisker(double v, mpfr_exp_t whisker_exponent, int sign) {
  return with_whisker(ExactReal::from_double(v), whisker_exponent, sign);
}
ExactReal power_of_two(mpfr_exp_t e, int sign = 1) {
  ExactReal r(2);
  mpfr_set_si_2exp(r.get(), sign, e, MPFR_RNDN);
  return r;
}

class RoundToFormatTest : public ::testing::TestWithParam<Dtype> {};

std::vector<Saturation> modes_of(Dtype d) {
  if (is_fp8(d)) return {Saturation::nosat, Saturation::satfinite};
  return {Saturation::nosat};  // IEEE formats overflow to Inf in both modes
}

TEST_P(RoundToFormatTest, AgreesWithTheIntegerEncoderOnRandomDoubles) {
  const Dtype d = GetParam();
  const FormatInfo& f = format_info(d);
  std::mt19937_64 g(42);
  for (int i = 0; i < 20000; ++i) {
    // Doubles around the format's whole range, some exact values, some not.
    const int e = f.emin - f.precision - 2 + int(g() % std::uint64_t(f.emax - f.emin + f.precision + 6));
    double v = std::ldexp(1.0 + double(g() >> 11) * 0x1p-53, e);
    if (i % 3 == 0) v = round_to_dtype(v, d);
    if (g() & 1) v = -v;
    for (Saturation s : modes_of(d))
      ASSERT_TRUE(testing::same_double(round_to_format(ExactReal::from_double(v), d, s), round_to_dtype(v, d, s)))
          << to_string(d) << " " << v;
  }
}

TEST_P(RoundToFormatTest, MidpointsAndWhiskersAgreeWithTheDefinition) {
  const Dtype d = GetParam();
  const FormatInfo& f = format_info(d);
  std::mt19937_64 g(7);
  for (int i = 0; i < 3000; ++i) {
    // A value of the format and its upper neighbour's midpoint.
    const int e = f.emin - f.precision + 1 + int(g() % std::uint64_t(f.emax - f.emin + f.precision));
    const double a = round_to_dtype(std::ldexp(1.0 + double(g() >> 11) * 0x1p-53, e), d);
    if (!std::isfinite(a)) continue;
    const ExactReal mid = exact_add(ExactReal::from_double(a), ExactReal::from_double(ulp_in(a, d) / 2));
    for (int sign : {-1, 0, 1})
      for (Saturation s : modes_of(d)) {
        const ExactReal x = with_whisker(mid, e - f.precision - 60, sign);
        ASSERT_TRUE(testing::same_double(round_to_format(x, d, s), testing::big_round(testing::to_big(x), d, s)))
            << to_string(d) << " mid " << exact_decimal(mid) << " sign " << sign;
      }
  }
}

TEST_P(RoundToFormatTest, OverflowAndUnderflowThresholds) {
  const Dtype d = GetParam();
  const FormatInfo& f = format_info(d);
  const double max = f.max_finite;
  // The midpoint above the largest finite value: its significand is odd
  // (IEEE) so ties go up, except E4M3 whose largest significand 1.110 is
  // even (the pattern above it is NaN).
  const double half_ulp = ulp_in(max, d) / 2;
  const double tie = max + half_ulp;
  for (Saturation s : modes_of(d)) {
    const double overflow = is_fp8(d) && s == Saturation::satfinite ? max
                            : f.has_infinity                         ? HUGE_VAL
                                                                     : std::nan("");
    const double at_tie = d == Dtype::fp8_e4m3 ? max : overflow;
    if (d != Dtype::fp64) {
      EXPECT_TRUE(testing::same_double(round_to_format(ExactReal::from_double(tie), d, s), at_tie)) << to_string(d);
      EXPECT_TRUE(testing::same_double(round_to_format(with_whisker(tie, -200, +1), d, s), overflow));
      EXPECT_TRUE(testing::same_double(round_to_format(with_whisker(tie, -200, -1), d, s), max));
    }
    ExactReal inf(2);
    mpfr_set_inf(inf.get(), -1);
    EXPECT_TRUE(testing::same_double(round_to_format(inf, d, s), -overflow));
  }
  // Half the smallest subnormal: ties to even is zero; a whisker more is the
  // smallest subnormal; signs are kept.
  const double tiny = f.min_subnormal;
  const mpfr_exp_t half_tiny = f.emin - f.precision;  // log2 of half the smallest subnormal
  EXPECT_EQ(round_to_format(power_of_two(half_tiny), d), 0.0);
  const double neg_zero = round_to_format(power_of_two(half_tiny, -1), d);
  EXPECT_EQ(neg_zero, 0.0);
  EXPECT_TRUE(std::signbit(neg_zero));
  EXPECT_EQ(round_to_format(with_whisker(power_of_two(half_tiny), half_tiny - 100, +1), d), tiny);
  EXPECT_EQ(round_to_format(with_whisker(power_of_two(half_tiny, -1), half_tiny - 100, -1), d), -tiny);
  EXPECT_EQ(round_to_format(power_of_two(half_tiny - 500), d), 0.0);
  // 1.5 times the smallest subnormal is a midpoint: even is 2x.
  if (d != Dtype::fp64) {
    EXPECT_EQ(round_to_format(ExactReal::from_double(1.5 * tiny), d), 2 * tiny);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOutputFormat, RoundToFormatTest, ::testing::ValuesIn(kOutputDtypes),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(RoundToFormat, EveryFp16MidpointExhaustively) {
  // Every pair of neighbouring positive fp16 values: the midpoint goes to the
  // even one, a whisker either side to the nearer one.
  for (std::uint32_t b = 0; b < 0x7BFF; ++b) {
    const double lo = Fp16::from_bits(b).to_double(), hi = Fp16::from_bits(b + 1).to_double();
    const double mid = (lo + hi) / 2;
    const double even = (b & 1) ? hi : lo;
    ASSERT_EQ(round_to_format(ExactReal::from_double(mid), Dtype::fp16), even) << b;
    ASSERT_EQ(round_to_format(with_whisker(mid, -90, +1), Dtype::fp16), hi) << b;
    ASSERT_EQ(round_to_format(with_whisker(mid, -90, -1), Dtype::fp16), lo) << b;
  }
}

TEST(ExactDecimal, ShortValuesExactlyLongOnesTo40Digits) {
  EXPECT_EQ(exact_decimal(ExactReal::from_double(3.0)), "3e+00");
  EXPECT_EQ(exact_decimal(ExactReal::from_double(-65520.0)), "-6.552e+04");
  EXPECT_EQ(exact_decimal(ExactReal::from_double(double(0.1f))), "1.00000001490116119384765625e-01");
  // 2^-149 has 105 significant digits: 40 of them, rounded.
  EXPECT_EQ(exact_decimal(ExactReal::from_double(std::ldexp(1.0, -149))),
            "1.401298464324817070923729583289916131280e-45");
  // 1/3 to 200 bits: not a short decimal either.
  ExactReal third(200);
  mpfr_set_ui(third.get(), 1, MPFR_RNDN);
  mpfr_div_ui(third.get(), third.get(), 3, MPFR_RNDN);
  EXPECT_EQ(exact_decimal(third).substr(0, 44), "3.333333333333333333333333333333333333333e-0");
  EXPECT_EQ(exact_decimal(ExactReal::from_double(-0.0)), "-0");
  EXPECT_EQ(exact_decimal(ExactReal::from_double(HUGE_VAL)), "inf");
  EXPECT_EQ(exact_decimal(ExactReal::from_double(-HUGE_VAL)), "-inf");
  EXPECT_EQ(exact_decimal(ExactReal::from_double(std::nan(""))), "nan");
}

}  // namespace
}  // namespace ulpscope
