// Typed tests over the five formats (docs/spec.md, "Number formats") for the value
// type SmallFloat and the run-time functions of round_to_dtype.hpp:
// classification, nextUp/nextDown, ulp, rounding, representability.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "formats/round_to_dtype.hpp"
#include "formats/small_float.hpp"
#include "mismatches.hpp"
#include "mpfr_format.hpp"
#include "pattern_kind.hpp"
#include "spec_formats.hpp"

namespace ulpscope::test {
namespace {

template <class F>
class SmallFloatOf : public ::testing::Test {};
TYPED_TEST_SUITE(SmallFloatOf, AllFormats, FormatName);

TYPED_TEST(SmallFloatOf, ClassifiesAsTheSpecTableSays) {
  using F = TypeParam;
  using T = SmallFloat<F>;
  const double min_normal = MpfrFormat::of<F>().min_normal();
  Mismatches bad;
  std::size_t nans = 0, infs = 0;
  for (std::uint32_t b : patterns_of<F>()) {
    const T x = T::from_bits(b);
    const Kind k = kind_of<F>(b);
    const double v = spec_value<F>(b);
    const double a = std::fabs(v);
    const bool want[] = {k == Kind::nan,
                         k == Kind::infinity,
                         k == Kind::finite,
                         k == Kind::finite && a == 0,
                         k == Kind::finite && a > 0 && a < min_normal,
                         k == Kind::finite && a >= min_normal,
                         fields_of<F>(b).negative};
    const bool got[] = {x.is_nan(),       x.is_inf(),    x.is_finite(), x.is_zero(),
                        x.is_subnormal(), x.is_normal(), x.signbit()};
    for (int i = 0; i < 7; ++i)
      if (want[i] != got[i]) bad.add(fmt::format("{} predicate #{}: got {}", show_bits(b), i, got[i]));
    if (x.exponent_field() != fields_of<F>(b).exponent || x.fraction() != fields_of<F>(b).fraction)
      bad.add(fmt::format("{}: fields", show_bits(b)));
    if (k == Kind::finite && !same_value(x.to_double(), v)) bad.add(fmt::format("{}: value", show_bits(b)));
    if (k == Kind::finite && !same_value(double(x.to_float()), v))
      bad.add(fmt::format("{}: to_float", show_bits(b)));
    if (!same_bits(x.negate().negate(), x) || x.negate().signbit() == x.signbit())
      bad.add(fmt::format("{}: negate", show_bits(b)));
    nans += k == Kind::nan;
    infs += k == Kind::infinity;
  }
  EXPECT_NO_MISMATCHES(bad);
  if constexpr (F::bits <= 16) {
    // IEEE: 2 (2^m - 1) NaNs and 2 infinities; FN: S.1111.111 twice, no infinity.
    const std::size_t man = std::size_t(1) << (Spec<F>::precision - 1);
    EXPECT_EQ(nans, Spec<F>::has_infinity ? 2 * (man - 1) : 2u);
    EXPECT_EQ(infs, Spec<F>::has_infinity ? 2u : 0u);
  }
}

TYPED_TEST(SmallFloatOf, NextUpAndDownAgreeWithMpfr) {
  using F = TypeParam;
  using T = SmallFloat<F>;
  const MpfrFormat m = MpfrFormat::of<F>();
  Mismatches bad;
  for (std::uint32_t b : patterns_of<F>()) {
    const T x = T::from_bits(b);
    const double v = spec_value<F>(b);
    const double up = x.next_up().to_double();
    const double down = x.next_down().to_double();
    if (!same_value(up, m.next_up(v)))
      bad.add(fmt::format("next_up({}) = {}, MPFR {}", show(v), show(up), show(m.next_up(v))));
    if (!same_value(down, m.next_down(v)))
      bad.add(fmt::format("next_down({}) = {}, MPFR {}", show(v), show(down), show(m.next_down(v))));
    // Between the two neighbours there is no value of the format.
    if (kind_of<F>(b) == Kind::finite && std::isfinite(up) && up != v) {
      const double mid = v + (up - v) / 2;
      const double rounded = decode<F>(encode<F>(mid));
      if (rounded != v && rounded != up)
        bad.add(fmt::format("a value between {} and {}", show(v), show(up)));
    }
  }
  EXPECT_NO_MISMATCHES(bad);
  // IEEE 754-2019, 5.3.1: nextUp(-min subnormal) is -0; nextUp(+-0) is the
  // smallest subnormal.
  EXPECT_EQ(T::from_bits(1).negate().next_up().bits, T::from_bits(0).negate().bits);
  EXPECT_EQ(T::from_bits(0).negate().next_up().to_double(), Spec<F>::min_subnormal);
  EXPECT_EQ(T::from_bits(0).next_down().to_double(), -Spec<F>::min_subnormal);
}

// docs/spec.md, "Metrics": ulp(x) = 2^(max(e, emin) - p + 1), e = floor(log2 |x|),
// ulp(0) the smallest subnormal.
double spec_ulp(double x, int precision, int emin) {
  if (x == 0) return std::ldexp(1.0, emin - precision + 1);
  const int e = MpfrFormat::exponent(x);
  return std::ldexp(1.0, std::max(e, emin) - precision + 1);
}

TYPED_TEST(SmallFloatOf, UlpFollowsTheSpecFormula) {
  using F = TypeParam;
  using T = SmallFloat<F>;
  const MpfrFormat m = MpfrFormat::of<F>();
  const Dtype d = Spec<F>::dtype;
  Mismatches bad;
  for (std::uint32_t b : patterns_of<F>()) {
    const T x = T::from_bits(b);
    const double v = spec_value<F>(b);
    if (kind_of<F>(b) != Kind::finite) {
      if (!std::isnan(x.ulp()) || !std::isnan(ulp_in(v, d))) bad.add(fmt::format("ulp({}) not NaN", show(v)));
      continue;
    }
    const double want = spec_ulp(v, Spec<F>::precision, m.emin());
    if (x.ulp() != want) bad.add(fmt::format("ulp({}) = {} want {}", show(v), show(x.ulp()), show(want)));
    if (ulp_in(v, d) != want) bad.add(fmt::format("ulp_in({}) = {}", show(v), show(ulp_in(v, d))));
    // Above a non-negative value, the next one is one ulp away (the spacing
    // below a power of two is half that).
    const double up = x.next_up().to_double();
    if (!x.signbit() && std::isfinite(up) && up - v != want)
      bad.add(fmt::format("spacing above {} is {}", show(v), show(up - v)));
  }
  // ulp_in of doubles that are not values of the format: the formula at e.
  std::mt19937_64 rng(0x5eed0002);
  std::uniform_real_distribution<double> frac(1.0, 2.0);
  std::uniform_int_distribution<int> exp_of(m.emin() - Spec<F>::precision - 4,
                                            MpfrFormat::exponent(Spec<F>::max_finite) + 4);
  for (int i = 0; i < 20000; ++i) {
    const double x = std::ldexp(frac(rng), exp_of(rng)) * ((i & 1) ? -1 : 1);
    const double want = spec_ulp(x, Spec<F>::precision, m.emin());
    if (ulp_in(x, d) != want) bad.add(fmt::format("ulp_in({}) = {} want {}", show(x), show(ulp_in(x, d)), show(want)));
  }
  EXPECT_NO_MISMATCHES(bad);
}

TYPED_TEST(SmallFloatOf, RoundToDtypeAndRepresentability) {
  using F = TypeParam;
  const MpfrFormat m = MpfrFormat::of<F>();
  const Dtype d = Spec<F>::dtype;
  Mismatches bad;
  for (std::uint32_t b : patterns_of<F>()) {
    const double v = spec_value<F>(b);
    const Kind k = kind_of<F>(b);
    if (!is_representable(v, d)) bad.add(fmt::format("{} not representable", show(v)));
    if (k == Kind::finite && !same_value(round_to_dtype(v, d), v)) bad.add(fmt::format("RN({}) moved", show(v)));
    if (k != Kind::finite) continue;
    // The midpoint to the next value is not representable, and rounds as MPFR says.
    const double up = SmallFloat<F>::from_bits(b).next_up().to_double();
    if (!std::isfinite(up)) continue;
    const double mid = v + (up - v) / 2;
    if (is_representable(mid, d)) bad.add(fmt::format("midpoint {} representable", show(mid)));
    for (Saturation sat : {Saturation::nosat, Saturation::satfinite})
      if (!same_value(round_to_dtype(mid, d, sat), m.round(mid, sat)))
        bad.add(fmt::format("RN({}) = {} MPFR {}", show(mid), show(round_to_dtype(mid, d, sat)),
                            show(m.round(mid, sat))));
  }
  EXPECT_NO_MISMATCHES(bad);
  EXPECT_EQ(is_representable(std::numeric_limits<double>::infinity(), d), Spec<F>::has_infinity);
  EXPECT_TRUE(is_representable(std::numeric_limits<double>::quiet_NaN(), d));
  EXPECT_FALSE(is_representable(std::nextafter(Spec<F>::max_finite, 0.0), d));
  EXPECT_FALSE(is_representable(Spec<F>::max_finite * 2, d));
  EXPECT_FALSE(is_representable(Spec<F>::min_subnormal / 2, d));
}

TYPED_TEST(SmallFloatOf, ConstructorRoundsWithTheCudaDefaultSaturation) {
  using F = TypeParam;
  using T = SmallFloat<F>;
  // CUDA: __nv_fp8_e4m3(float) and __nv_fp8_e5m2(float) saturate; __half and
  // __nv_bfloat16 overflow to infinity.
  const double huge = Spec<F>::max_finite * 4;
  const double want = F::bits == 8 ? Spec<F>::max_finite : std::numeric_limits<double>::infinity();
  EXPECT_EQ(T(huge).to_double(), want);
  EXPECT_EQ(T(-huge).to_double(), -want);
  EXPECT_TRUE(T(huge, Saturation::nosat).is_nan() || T(huge, Saturation::nosat).is_inf());
  EXPECT_EQ(T(1.0).to_double(), 1.0);
  EXPECT_EQ(T().bits, 0u);
}

// ulp_in for fp64 against the spacing of doubles.
TEST(UlpIn, Fp64IsTheSpacingOfDoubles) {
  std::mt19937_64 rng(0x5eed0003);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t bits = rng() & 0x7FDFFFFFFFFFFFFFull;  // finite, positive, below the top binade
    const double x = detail::double_from_bits(bits);
    ASSERT_EQ(ulp_in(x, Dtype::fp64), std::nextafter(x, std::numeric_limits<double>::infinity()) - x) << show(x);
    ASSERT_EQ(ulp_in(-x, Dtype::fp64), ulp_in(x, Dtype::fp64));
  }
  EXPECT_EQ(ulp_in(0.0, Dtype::fp64), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(round_to_dtype(0.1, Dtype::fp64), 0.1);
}

}  // namespace
}  // namespace ulpscope::test
