#include "accuracy/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "formats/round_to_dtype.hpp"

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
  // The exact sum 70000 is past fp16's 65504: RN is +Inf too, and the note says so.
  EXPECT_FALSE(ulp_error(HUGE_VAL, exact(70000.0), Dtype::fp16, &note).has_value());
  EXPECT_EQ(note, "infinite result for a finite reference (its exact value overflows fp16 too)");
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
