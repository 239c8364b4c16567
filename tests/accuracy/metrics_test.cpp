#include "accuracy/metrics.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "formats/round_to_dtype.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope {
namespace {

// a + b + c exactly (enough bits for the cases here).
ExactReal exact(double a, double b = 0, double c = 0) {
  ExactReal r(2200);
  mpfr_set_d(r.get(), a, MPFR_RNDN);
  mpfr_add_d(r.get(), r.get(), b, MPFR_RNDN);
  mpfr_add_d(r.get(), r.get(), c, MPFR_RNDN);
  return r;
}

ExactReal special(double v) { return ExactReal::from_double(v); }

constexpr double p2(int e) { return e >= 0 ? double(1ull << e) : 1.0 / double(1ull << -e); }

TEST(UlpError, OneUlpInFp32) {
  EXPECT_EQ(ulp_error(1.0 + p2(-23), exact(1.0), Dtype::fp32), 1.0);
  EXPECT_EQ(ulp_error(1.0, exact(1.0), Dtype::fp32), 0.0);
  EXPECT_EQ(ulp_error(3.0, exact(1.0), Dtype::fp32), std::ldexp(2.0, 23));
}

TEST(UlpError, ReferenceAtAPowerOfTwoUsesTheUlpAboveIt) {
  // r = 1: e = 0, ulp = 2^-23 although the neighbour below is 2^-24 away.
  EXPECT_EQ(ulp_error(1.0 - p2(-24), exact(1.0), Dtype::fp32), 0.5);
  // r just below 1: e = -1, ulp = 2^-24; |y - r| = 2^-24 - 2^-30.
  EXPECT_EQ(ulp_error(1.0 - p2(-24), exact(1.0, -p2(-30)), Dtype::fp32), 1.0 - p2(-6));
  // The same in fp16 around 2048: ulp 2 above, 1 below.
  EXPECT_EQ(ulp_error(2047.0, exact(2048.0), Dtype::fp16), 0.5);
  EXPECT_EQ(ulp_error(2047.0, exact(2047.5), Dtype::fp16), 0.5);
  EXPECT_EQ(ulp_exponent(exact(2048.0), Dtype::fp16), 1);
  EXPECT_EQ(ulp_exponent(exact(2047.5), Dtype::fp16), 0);
}

TEST(UlpError, ZeroReferenceUsesTheSmallestSubnormal) {
  EXPECT_EQ(ulp_error(p2(-24), exact(0.0), Dtype::fp16), 1.0);
  EXPECT_EQ(ulp_error(std::ldexp(1.0, -149), exact(0.0), Dtype::fp32), 1.0);
  EXPECT_EQ(ulp_error(-std::ldexp(3.0, -149), exact(0.0), Dtype::fp32), 3.0);
  EXPECT_EQ(ulp_error(0.0, exact(0.0), Dtype::fp32), 0.0);
  EXPECT_EQ(ulp_error(-0.0, exact(0.0), Dtype::fp32), 0.0);  // the sign shows in correctly_rounded
  EXPECT_EQ(ulp_error(p2(-9), exact(0.0), Dtype::fp8_e4m3), 1.0);
  EXPECT_EQ(ulp_error(std::ldexp(1.0, -1074), exact(0.0), Dtype::fp64), 1.0);
}

TEST(UlpError, SubnormalReferences) {
  // fp16: below 2^-14 the quantum is 2^-24 whatever the magnitude.
  EXPECT_EQ(ulp_error(p2(-24), exact(0.75 * p2(-24)), Dtype::fp16), 0.25);
  EXPECT_EQ(ulp_error(0.0, exact(0.75 * p2(-24)), Dtype::fp16), 0.75);
  EXPECT_EQ(ulp_error(p2(-20), exact(p2(-20), p2(-26)), Dtype::fp16), 0.25);
  // fp32: r = 2^-140 + 2^-150, y = 2^-140: 2^-150 / 2^-149.
  EXPECT_EQ(ulp_error(std::ldexp(1.0, -140), exact(std::ldexp(1.0, -140), std::ldexp(1.0, -150)), Dtype::fp32), 0.5);
  // bf16 has fp32's range: its subnormal quantum is 2^-133.
  EXPECT_EQ(ulp_exponent(exact(std::ldexp(1.0, -130)), Dtype::bf16), -133);
}

TEST(UlpError, MeasuresDifferencesFarBelowADouble) {
  // r = 1 + 2^-100, y = 1 in fp64: 2^-100 / 2^-52 = 2^-48.
  EXPECT_EQ(ulp_error(1.0, exact(1.0, p2(-60) * p2(-40)), Dtype::fp64), std::ldexp(1.0, -48));
  // r = 2^60 + 1 - 2^-40 against y = 2^60 in fp32 (ulp 2^37).
  const double got = *ulp_error(p2(60), exact(p2(60), 1.0, -p2(-40)), Dtype::fp32);
  EXPECT_DOUBLE_EQ(got, (1.0 - p2(-40)) / p2(37));
}

TEST(UlpError, OutputFormatsOfEveryWidth) {
  // bf16: ulp(1) = 2^-7; a tie at 1 + 2^-8 is half an ulp and rounds to 1 (even).
  EXPECT_EQ(ulp_error(1.0, exact(1.0, p2(-8)), Dtype::bf16), 0.5);
  EXPECT_TRUE(correctly_rounded(1.0, round_to_dtype(1.0 + p2(-8), Dtype::bf16)));
  // fp8_e4m3: 464 is past the largest value 448; saturated to 448 it is half
  // an ulp (2^(8-3) = 32) away.
  EXPECT_EQ(ulp_error(448.0, exact(464.0), Dtype::fp8_e4m3), 0.5);
  // fp8_e5m2: ulp(3) = 2^(1-2) = 0.5.
  EXPECT_EQ(ulp_error(3.5, exact(3.0), Dtype::fp8_e5m2), 1.0);
}

TEST(UlpError, Fp16StagnationOf1Summed3000Times) {
  // A running fp16 sum of 1.0 stops at 2048 = 2^p: 2048 + 1 rounds back (tie to even).
  double s = 0;
  for (int i = 0; i < 3000; ++i) s = round_to_dtype(s + 1.0, Dtype::fp16);
  EXPECT_EQ(s, 2048.0);
  // ulp_fp16(3000) = 2^(11 - 10) = 2: (3000 - 2048) / 2.
  EXPECT_EQ(ulp_error(s, exact(3000.0), Dtype::fp16), 476.0);
  EXPECT_FALSE(correctly_rounded(s, round_to_dtype(3000.0, Dtype::fp16)));
  EXPECT_EQ(rel_error(s, exact(3000.0)), 952.0 / 3000.0);
}

TEST(UlpError, NonFiniteResultsAndReferences) {
  std::string note;
  EXPECT_FALSE(ulp_error(NAN, exact(1.0), Dtype::fp32, &note).has_value());
  EXPECT_EQ(note, "NaN result for a finite reference");
  EXPECT_FALSE(ulp_error(HUGE_VAL, exact(1.0), Dtype::fp32, &note).has_value());
  EXPECT_EQ(note, "infinite result for a finite reference");
  // The exact value 61440 overflows fp8_e5m2, which saturates to 57344: an
  // infinity is not the saturated rounding, and the note says the value overflows.
  EXPECT_FALSE(ulp_error(HUGE_VAL, exact(61440.0), Dtype::fp8_e5m2, &note, Saturation::satfinite).has_value());
  EXPECT_EQ(note, "infinite result for a finite reference (its exact value overflows fp8_e5m2 too)");
  EXPECT_EQ(ulp_error(NAN, special(NAN), Dtype::fp32, &note), 0.0);
  EXPECT_FALSE(ulp_error(1.0, special(NAN), Dtype::fp32, &note).has_value());
  EXPECT_EQ(note, "finite result for a NaN reference");
  EXPECT_FALSE(ulp_error(HUGE_VAL, special(NAN), Dtype::fp32, &note).has_value());
  EXPECT_EQ(note, "infinite result for a NaN reference");
  EXPECT_EQ(ulp_error(HUGE_VAL, special(HUGE_VAL), Dtype::fp32), 0.0);
  EXPECT_EQ(ulp_error(-HUGE_VAL, special(-HUGE_VAL), Dtype::fp16), 0.0);
  EXPECT_FALSE(ulp_error(-HUGE_VAL, special(HUGE_VAL), Dtype::fp32, &note).has_value());
  EXPECT_EQ(note, "opposite infinite result for an infinite reference");
  EXPECT_FALSE(ulp_error(65504.0, special(HUGE_VAL), Dtype::fp16, &note).has_value());
  EXPECT_EQ(note, "finite result for an infinite reference");
  EXPECT_FALSE(ulp_error(NAN, special(HUGE_VAL), Dtype::fp16, &note).has_value());
  EXPECT_EQ(note, "NaN result for an infinite reference");
}

// Issue 41, item 2: overflow is scored as IEEE 754 rounds (§7.4): where
// RN_out(exact) is an infinity, that infinity is the correctly rounded result,
// 0 ULPs; any other result there, or an infinity where RN_out(exact) is
// finite, has no ULP error (null, with the reason). Each format at its
// overflow threshold, the midpoint between the largest finite value and the
// next power of the format's step, and just below it.
struct OverflowCase {
  Dtype out;
  double threshold;  // the smallest value that rounds to the overflow value
  double below;      // a value just below it, which rounds to the largest finite value
};

class OverflowAtTheFormatsBoundary : public ::testing::TestWithParam<OverflowCase> {};

TEST_P(OverflowAtTheFormatsBoundary, TheSameInfinityIsZeroUlpsAnythingElseHasNone) {
  const auto [out, threshold, below] = GetParam();
  const double max = format_info(out).max_finite;
  for (const double sign : {1.0, -1.0}) {
    const ExactReal r = exact(sign * threshold);
    ASSERT_EQ(round_to_format(r, out), sign * HUGE_VAL) << to_string(out);
    std::string note;
    EXPECT_EQ(ulp_error(sign * HUGE_VAL, r, out, &note), 0.0) << to_string(out) << ' ' << note;
    EXPECT_TRUE(correctly_rounded(sign * HUGE_VAL, round_to_format(r, out)));
    // Far past the threshold too.
    EXPECT_EQ(ulp_error(sign * HUGE_VAL, exact(sign * 4 * max), out), 0.0) << to_string(out);
    // The largest finite value, the opposite infinity or NaN where the correct result is an infinity.
    EXPECT_FALSE(ulp_error(sign * max, r, out, &note).has_value()) << to_string(out);
    EXPECT_EQ(note, std::string("finite result where the correctly rounded one is ") + (sign > 0 ? "+inf" : "-inf") +
                        " (its exact value overflows " + std::string(to_string(out)) + ")");
    EXPECT_FALSE(ulp_error(-sign * HUGE_VAL, r, out, &note).has_value()) << to_string(out);
    EXPECT_NE(note.find("opposite infinite result where the correctly rounded one is"), std::string::npos) << note;
    EXPECT_FALSE(ulp_error(NAN, r, out, &note).has_value()) << to_string(out);
    EXPECT_NE(note.find("NaN result where the correctly rounded one is"), std::string::npos) << note;
    // Just below the threshold the correct result is finite: an infinity fails, the largest value is measured.
    const ExactReal b = exact(sign * below);
    ASSERT_EQ(round_to_format(b, out), sign * max) << to_string(out);
    EXPECT_FALSE(ulp_error(sign * HUGE_VAL, b, out, &note).has_value()) << to_string(out);
    EXPECT_EQ(note, "infinite result for a finite reference");
    const auto measured = ulp_error(sign * max, b, out);
    ASSERT_TRUE(measured.has_value());
    EXPECT_LT(*measured, 0.5);
    EXPECT_GT(*measured, 0.49);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, OverflowAtTheFormatsBoundary,
    ::testing::Values(
        // fp16: 65504 = (2 - 2^-10) 2^15; the midpoint to 2^16 is 65520, a tie that rounds to even (2^16: overflow).
        OverflowCase{Dtype::fp16, 65520.0, 65520.0 - p2(-20)},
        // bf16: (2 - 2^-7) 2^127; the midpoint (2 - 2^-8) 2^127.
        OverflowCase{Dtype::bf16, std::ldexp(2 - p2(-8), 127), std::ldexp(2 - p2(-8), 127) - std::ldexp(1.0, 90)},
        OverflowCase{Dtype::fp32, std::ldexp(2 - p2(-24), 127), std::ldexp(2 - p2(-24), 127) - std::ldexp(1.0, 90)},
        // fp8_e5m2 without saturation: 57344 = 1.75 * 2^15; the midpoint 61440.
        OverflowCase{Dtype::fp8_e5m2, 61440.0, 61440.0 - p2(-20)}),
    [](const auto& info) { return std::string(to_string(info.param.out)); });

// fp8_e4m3 has no infinity: an overflow is NaN without saturation. Saturated
// (satfinite, either fp8 format), the largest finite value is the correct
// rounding of anything past it: 0 ULPs, as it is correctly rounded.
TEST(UlpError, Fp8OverflowToNaNOrToTheSaturatedValue) {
  std::string note;
  // e4m3: 448 = 1.75 * 2^8; 464, the midpoint to 480 (the NaN pattern), ties to 448.
  const ExactReal past = exact(464.0, p2(-20));
  ASSERT_TRUE(std::isnan(round_to_format(past, Dtype::fp8_e4m3, Saturation::nosat)));
  EXPECT_EQ(ulp_error(NAN, past, Dtype::fp8_e4m3, &note, Saturation::nosat), 0.0) << note;
  EXPECT_FALSE(ulp_error(448.0, past, Dtype::fp8_e4m3, &note, Saturation::nosat).has_value());
  EXPECT_EQ(note, "finite result where the correctly rounded one is NaN (its exact value overflows fp8_e4m3)");
  EXPECT_EQ(ulp_error(-NAN, exact(-1e6), Dtype::fp8_e4m3, &note, Saturation::nosat), 0.0);
  EXPECT_EQ(ulp_error(448.0, past, Dtype::fp8_e4m3, &note, Saturation::satfinite), 0.0);
  EXPECT_EQ(ulp_error(-448.0, exact(-1e6), Dtype::fp8_e4m3, &note, Saturation::satfinite), 0.0);
  EXPECT_FALSE(ulp_error(NAN, past, Dtype::fp8_e4m3, &note, Saturation::satfinite).has_value());
  // Saturated, a value other than the largest one is measured as usual: 1e6 - 416 over ulp(1e6) = 2^16.
  EXPECT_DOUBLE_EQ(*ulp_error(416.0, exact(1e6), Dtype::fp8_e4m3, &note, Saturation::satfinite),
                   (1e6 - 416.0) / 65536.0);
  // 464 itself rounds to 448 in either mode: half an ulp, not an overflow.
  EXPECT_EQ(ulp_error(448.0, exact(464.0), Dtype::fp8_e4m3, &note, Saturation::nosat), 0.5);
  // e5m2 saturated: 57344 for 61440 and beyond.
  EXPECT_EQ(ulp_error(57344.0, exact(61440.0), Dtype::fp8_e5m2, &note, Saturation::satfinite), 0.0);
  EXPECT_EQ(ulp_error(-57344.0, exact(-1e9), Dtype::fp8_e5m2, &note, Saturation::satfinite), 0.0);
  EXPECT_EQ(ulp_error(HUGE_VAL, exact(1e9), Dtype::fp8_e5m2, &note, Saturation::nosat), 0.0);
}

// Underflow to zero is already a rounding like any other: a zero of the sign
// of RN_out(exact) is correctly rounded and its ULP error is its true
// distance, |r| / ulp_F(0) <= 0.5 (never null); a zero of the other sign is
// not correctly rounded. At each format's smallest subnormal: a quarter of it
// rounds to zero, half of it ties to zero (even).
TEST(UlpError, UnderflowToZeroIsCorrectlyRoundedAtEveryFormatsSmallestSubnormal) {
  for (const Dtype out : {Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2, Dtype::fp32}) {
    const double tiny = format_info(out).min_subnormal;
    for (const double sign : {1.0, -1.0}) {
      for (const double fraction : {0.25, 0.5}) {
        const ExactReal r = exact(sign * fraction * tiny);
        const double rn = round_to_format(r, out);
        ASSERT_EQ(rn, 0.0) << to_string(out);
        ASSERT_EQ(std::signbit(rn), sign < 0) << to_string(out);
        EXPECT_TRUE(correctly_rounded(sign * 0.0, rn)) << to_string(out);
        EXPECT_FALSE(correctly_rounded(-sign * 0.0, rn)) << to_string(out);
        EXPECT_EQ(ulp_error(sign * 0.0, r, out), fraction) << to_string(out);
      }
      // Just above half the smallest subnormal rounds up to it: zero is then wrong (just over half an ulp).
      const ExactReal r = exact(sign * 0.5 * tiny, sign * std::ldexp(tiny, -20));
      EXPECT_EQ(round_to_format(r, out), sign * tiny) << to_string(out);
      EXPECT_GT(*ulp_error(sign * 0.0, r, out), 0.5) << to_string(out);
      EXPECT_LT(*ulp_error(sign * tiny, r, out), 0.5) << to_string(out);
    }
  }
}

// ulp_error's path in double arithmetic gives the MPFR definition's number,
// bit for bit, on the pairs a scan or a sum of narrow values scores (a
// result near an exact value of at most 53 bits) and on pairs where the path
// must decline: exponents far apart, quotients below the normal doubles,
// references past a format's largest value, wider references.
TEST(UlpError, ThePathInDoubleGivesTheMpfrDefinitionsNumber) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> exponent(-1100, 1030), near(-60, 60), gap(-80, 80);
  std::uniform_real_distribution<double> unit(1.0, 2.0);
  auto random_double = [&](int e) { return std::ldexp(unit(rng), e) * ((rng() & 1) ? -1 : 1); };
  int compared = 0, defined = 0;
  for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2}) {
    for (int i = 0; i < 20000; ++i) {
      const int e = i % 4 == 0 ? exponent(rng) : near(rng);
      const double r = random_double(e);
      // y: r's rounding to the format and a neighbour, a value whose exponent
      // is up to 80 away, zero, or r itself.
      double y = 0;
      switch (i % 5) {
        case 0: y = round_to_dtype(r, out, Saturation::nosat); break;
        case 1: y = std::nextafter(round_to_dtype(r, out, Saturation::nosat), 0.0); break;
        case 2: y = random_double(e + gap(rng)); break;
        case 3: y = 0; break;
        default: y = r; break;
      }
      ExactReal exact_r = ExactReal::from_double(r);
      if (i % 7 == 0) mpfr_nextabove(exact_r.get());  // still 53 bits
      const auto got = ulp_error(y, exact_r, out);
      const auto want = ulp_error_through_mpfr(y, exact_r, out);
      ASSERT_EQ(got.has_value(), want.has_value()) << to_string(out) << " y=" << y << " r=" << r;
      if (want) {
        ASSERT_EQ(std::bit_cast<std::uint64_t>(*got), std::bit_cast<std::uint64_t>(*want))
            << to_string(out) << " y=" << y << " r=" << r << ": " << *got << " vs " << *want;
        ++defined;
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6 * 20000);
  EXPECT_GT(defined, compared / 2);
  // A reference of more than 53 bits (a sum of two far-apart values) takes
  // the MPFR path, and measures what no double difference could.
  const ExactReal wide = exact(1.0, std::ldexp(1.0, -70));
  EXPECT_EQ(ulp_error(1.0, wide, Dtype::fp32), ulp_error_through_mpfr(1.0, wide, Dtype::fp32));
  EXPECT_GT(*ulp_error(1.0, wide, Dtype::fp32), 0.0);
}

TEST(CorrectlyRounded, ComparesBits) {
  EXPECT_TRUE(correctly_rounded(1.0, 1.0));
  EXPECT_FALSE(correctly_rounded(0.0, -0.0));
  EXPECT_FALSE(correctly_rounded(-0.0, 0.0));
  EXPECT_TRUE(correctly_rounded(-0.0, -0.0));
  EXPECT_TRUE(correctly_rounded(NAN, -NAN));
  EXPECT_FALSE(correctly_rounded(NAN, 1.0));
  EXPECT_FALSE(correctly_rounded(1.0, NAN));
  EXPECT_TRUE(correctly_rounded(HUGE_VAL, HUGE_VAL));
  EXPECT_FALSE(correctly_rounded(HUGE_VAL, -HUGE_VAL));
}

TEST(RelError, HandComputedCases) {
  EXPECT_EQ(rel_error(1.5, exact(1.0)), 0.5);
  EXPECT_EQ(rel_error(-3.0, exact(-4.0)), 0.25);
  EXPECT_EQ(rel_error(0.0, exact(0.0)), 0.0);
  EXPECT_EQ(rel_error(-0.0, exact(0.0)), 0.0);
  EXPECT_FALSE(rel_error(1e-300, exact(0.0)).has_value());
  // 2^-100 / (1 + 2^-100): a relative error of 7.9e-31 is still seen.
  EXPECT_DOUBLE_EQ(*rel_error(1.0, exact(1.0, p2(-60) * p2(-40))), p2(-60) * p2(-40));
  EXPECT_EQ(rel_error(NAN, special(NAN)), 0.0);
  EXPECT_EQ(rel_error(HUGE_VAL, special(HUGE_VAL)), 0.0);
  EXPECT_FALSE(rel_error(HUGE_VAL, exact(1.0)).has_value());
  EXPECT_FALSE(rel_error(1.0, special(HUGE_VAL)).has_value());
  EXPECT_FALSE(rel_error(NAN, exact(1.0)).has_value());
}

TEST(Condition, SumAndDot) {
  EXPECT_EQ(condition_sum(exact(6.0), exact(2.0)), 3.0);
  EXPECT_EQ(condition_sum(exact(6.0), exact(-2.0)), 3.0);
  EXPECT_EQ(condition_sum(exact(5.0), exact(0.0)), HUGE_VAL);
  EXPECT_FALSE(condition_sum(exact(0.0), exact(0.0)).has_value());  // no terms, or all zero
  EXPECT_FALSE(condition_sum(special(HUGE_VAL), exact(1.0)).has_value());
  EXPECT_FALSE(condition_sum(special(NAN), special(NAN)).has_value());
  // sum|x| = 2e16 + 1 against the exact sum 1, which a double cannot hold beside 1e16.
  EXPECT_EQ(condition_sum(exact(1e16, 1e16, 1.0), exact(1.0)), 2e16 + 2);
  EXPECT_EQ(condition_dot(exact(5.0), exact(1.0)), 5.0);
}

TEST(Condition, VarianceAfterChanGolubLeVeque) {
  // {1, 2, 3, 4}: sum 10, sum of squares 30, S = 5, kappa^2 = 4*30/(120-100) = 6.
  EXPECT_DOUBLE_EQ(*condition_variance(exact(10.0), exact(30.0), 4), std::sqrt(6.0));
  EXPECT_EQ(sum_squared_deviations(exact(10.0), exact(30.0), 4), 5.0);
  // {9999, 10001}: S = 2, mean 1e4: kappa = sqrt(1 + 2e8/2) = sqrt(100000001).
  // (9999^2 + 10001^2 = 2e8 + 2.)
  EXPECT_DOUBLE_EQ(*condition_variance(exact(20000.0), exact(2e8, 2.0), 2), std::sqrt(100000001.0));
  EXPECT_EQ(sum_squared_deviations(exact(20000.0), exact(2e8, 2.0), 2), 2.0);
  EXPECT_EQ(condition_variance(exact(10.0), exact(50.0), 2), HUGE_VAL);  // {5, 5}: S = 0
  EXPECT_FALSE(condition_variance(exact(0.0), exact(0.0), 3).has_value());
  EXPECT_FALSE(condition_variance(exact(0.0), exact(0.0), 0).has_value());
  EXPECT_FALSE(sum_squared_deviations(exact(0.0), exact(0.0), 0).has_value());
}

TEST(Reproducibility, DistinctBitPatterns) {
  EXPECT_EQ(distinct_results(std::vector<std::vector<double>>{}), 0);
  EXPECT_EQ(distinct_results(std::vector<std::vector<double>>{{1, 2}, {1, 2}, {1, 3}}), 2);
  EXPECT_EQ(distinct_results(std::vector<std::vector<double>>{{0.0}, {-0.0}}), 2);
  EXPECT_EQ(distinct_results(std::vector<std::vector<double>>{{NAN}, {-NAN}}), 1);
  EXPECT_EQ(distinct_results(std::vector<double>{1.0, 1.0, 1.0}), 1);
  EXPECT_EQ(distinct_results(std::vector<double>{1.0, std::nextafter(1.0, 2.0), 1.0}), 2);
  EXPECT_EQ(distinct_results(std::vector<double>{0.0, -0.0, NAN, NAN}), 3);
}

}  // namespace
}  // namespace ulpscope
