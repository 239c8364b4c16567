// The exact sums against two independent paths (mpfr_sum, Boost's
// cpp_bin_float), on random and adversarial arrays of every input format.
#include "reference/exact_sum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "formats/round_to_dtype.hpp"
#include "reference/round_to_format.hpp"
#include "reference_test_support.hpp"

namespace ulpscope {
namespace {

using testing::Big;
using testing::Spread;

template <class T>
class ExactSumTest : public ::testing::Test {};
TYPED_TEST_SUITE(ExactSumTest, testing::InputTypes);

// The terms of each kind, computed exactly in double (products of two input
// values are exact) for mpfr_sum, and in Big for the Boost path.
std::vector<double> terms_of(Terms k, const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> t(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    switch (k) {
      case Terms::value: t[i] = x[i]; break;
      case Terms::magnitude: t[i] = std::fabs(x[i]); break;
      case Terms::square: t[i] = x[i] * x[i]; break;
      case Terms::product: t[i] = x[i] * y[i]; break;
      case Terms::product_magnitude: t[i] = std::fabs(x[i] * y[i]); break;
    }
  }
  return t;
}

Big big_sum(const std::vector<double>& t) {
  Big s = 0;
  for (double v : t) s += Big(v);  // exact: 1100 bits hold every partial sum
  return s;
}

constexpr Terms kAllTerms[] = {Terms::value, Terms::magnitude, Terms::square, Terms::product,
                               Terms::product_magnitude};
constexpr std::size_t kSizes[] = {0, 1, 2, 31, 33, 255, 256, 257, 1000, 4097, 20011};

TYPED_TEST(ExactSumTest, AgreesWithMpfrSumAndCppBinFloat) {
  using T = TypeParam;
  std::uint64_t seed = 1;
  for (Spread spread : {Spread::narrow, Spread::wide})
    for (std::size_t n : kSizes) {
      const auto xs = testing::random_values<T>(n, seed++, spread);
      const auto ys = testing::random_values<T>(n, seed++, spread);
      const TypedArray x(xs), y(ys);
      const auto xd = testing::widened(xs), yd = testing::widened(ys);
      for (Terms k : kAllTerms) {
        const ExactReal got = exact_reduce(k, x, &y);
        const std::vector<double> t = terms_of(k, xd, yd);
        const ExactReal want = testing::mpfr_sum_of(t);
        ASSERT_TRUE(mpfr_equal_p(got.get(), want.get()) || (got.is_zero() && want.is_zero()))
            << "n=" << n << " terms=" << int(k) << " spread=" << int(spread) << ": "
            << exact_decimal(got) << " vs mpfr_sum " << exact_decimal(want);
        ASSERT_EQ(testing::to_big(got), big_sum(t)) << "n=" << n << " terms=" << int(k);
      }
    }
}

TYPED_TEST(ExactSumTest, RoundedSumAgreesWithIndependentRounding) {
  using T = TypeParam;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const auto xs = testing::random_values<T>(100 + seed * 7, 1000 + seed, seed % 2 ? Spread::wide : Spread::narrow);
    const ExactReal s = exact_sum(TypedArray(xs));
    const Big b = big_sum(testing::widened(xs));
    for (Dtype out : kOutputDtypes)
      for (Saturation sat : {Saturation::nosat, Saturation::satfinite}) {
        if (!is_fp8(out) && sat == Saturation::satfinite) continue;  // IEEE formats: Inf either way
        EXPECT_TRUE(testing::same_double(round_to_format(s, out, sat), testing::big_round(b, out, sat)))
            << to_string(out) << " " << exact_decimal(s);
      }
  }
}

TYPED_TEST(ExactSumTest, PermutationsNeverChangeABit) {
  using T = TypeParam;
  auto xs = testing::random_values<T>(3001, 77, Spread::wide);
  auto ys = testing::random_values<T>(3001, 78, Spread::narrow);
  // Make it an ill-conditioned sum: append the negation of most values.
  for (std::size_t i = 0; i < 1000; ++i) xs.push_back(testing::value_of<T>(-to_double(xs[i])));
  ys.resize(xs.size(), ys[0]);
  const ExactReal sum0 = exact_sum(TypedArray(xs));
  const ExactReal dot0 = exact_dot(TypedArray(xs), TypedArray(ys));
  std::vector<std::size_t> order(xs.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 g(5);
  for (int round = 0; round < 60; ++round) {
    std::shuffle(order.begin(), order.end(), g);
    std::vector<T> px, py;
    for (std::size_t i : order) {
      px.push_back(xs[i]);
      py.push_back(ys[i]);
    }
    const ExactReal s = exact_sum(TypedArray(px));
    const ExactReal d = exact_dot(TypedArray(px), TypedArray(py));
    ASSERT_TRUE(mpfr_equal_p(s.get(), sum0.get()) && s.signbit() == sum0.signbit()) << "permutation " << round;
    ASSERT_TRUE(mpfr_equal_p(d.get(), dot0.get()) && d.signbit() == dot0.signbit()) << "permutation " << round;
    for (Dtype out : kOutputDtypes)
      ASSERT_TRUE(testing::same_double(round_to_format(s, out), round_to_format(sum0, out)));
  }
}

TYPED_TEST(ExactSumTest, ExactCancellationGivesPlusZeroAndNegativeZerosGiveMinusZero) {
  using T = TypeParam;
  auto xs = testing::random_values<T>(2000, 9, Spread::wide);
  const std::size_t half = xs.size();
  for (std::size_t i = 0; i < half; ++i) xs.push_back(testing::value_of<T>(-to_double(xs[i])));
  std::shuffle(xs.begin(), xs.end(), std::mt19937_64(3));
  const ExactReal zero = exact_sum(TypedArray(xs));
  EXPECT_TRUE(zero.is_zero());
  EXPECT_FALSE(zero.signbit());  // x + (-x) = +0 in round to nearest (IEEE 754-2019, 6.3)

  for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(300)}) {
    const std::vector<T> neg(n, testing::value_of<T>(-0.0));
    EXPECT_TRUE(exact_sum(TypedArray(neg)).signbit()) << n;
    const TypedArray ones(std::vector<T>(n, testing::value_of<T>(1.0)));
    EXPECT_TRUE(exact_dot(TypedArray(neg), ones).signbit()) << "-0 * 1 is -0";
    std::vector<T> mixed = neg;
    mixed.push_back(testing::value_of<T>(0.0));
    EXPECT_FALSE(exact_sum(TypedArray(mixed)).signbit()) << n;
    EXPECT_FALSE(exact_sumsq(TypedArray(neg)).signbit()) << "(-0)^2 is +0";
  }
  EXPECT_FALSE(exact_sum(TypedArray(std::vector<T>{})).signbit()) << "the empty sum is +0";

  // Whole blocks of 256 whose nonzero inputs give only -0 products, or whose
  // terms cancel in pairs.
  std::vector<T> a(512, testing::value_of<T>(-0.0)), b(512, testing::value_of<T>(1.0));
  a[0] = a[300] = testing::value_of<T>(-1.0);
  b[0] = b[300] = testing::value_of<T>(0.0);
  const ExactReal dz = exact_dot(TypedArray(a), TypedArray(b));
  EXPECT_TRUE(dz.is_zero() && dz.signbit()) << "-1 * 0 and -0 * 1 are all -0";
  std::vector<T> pairs;
  for (int i = 0; i < 256; ++i) pairs.push_back(testing::value_of<T>((i % 2 ? -1.0 : 1.0) * (1 + i / 2 % 5)));
  const ExactReal pz = exact_sum(TypedArray(pairs));
  EXPECT_TRUE(pz.is_zero() && !pz.signbit());
}

TYPED_TEST(ExactSumTest, SpecialValuesFollowIeee) {
  using T = TypeParam;
  auto base = testing::random_values<T>(700, 4, Spread::narrow);
  const double inf = HUGE_VAL;
  auto with = [&](std::initializer_list<double> extra) {
    std::vector<T> v = base;
    std::size_t at = 13;
    for (double e : extra) v.insert(v.begin() + static_cast<std::ptrdiff_t>(at += 211), testing::value_of<T>(e));
    return TypedArray(v);
  };
  EXPECT_TRUE(exact_sum(with({std::nan("")})).is_nan());
  EXPECT_TRUE(exact_sumsq(with({std::nan("")})).is_nan());
  if (format_info(dtype_of_v<T>).has_infinity) {
    const ExactReal p = exact_sum(with({inf})), m = exact_sum(with({-inf}));
    EXPECT_TRUE(p.is_inf() && !p.signbit());
    EXPECT_TRUE(m.is_inf() && m.signbit());
    EXPECT_TRUE(exact_sum(with({inf, -inf})).is_nan());
    EXPECT_TRUE(exact_sumsq(with({-inf})).is_inf());
    // Inf * 0 is NaN in a dot product.
    std::vector<T> a = {testing::value_of<T>(inf), testing::value_of<T>(1.0)};
    std::vector<T> b = {testing::value_of<T>(0.0), testing::value_of<T>(1.0)};
    EXPECT_TRUE(exact_dot(TypedArray(a), TypedArray(b)).is_nan());
  }
}

TYPED_TEST(ExactSumTest, EveryValueAloneIsItself) {
  using T = TypeParam;
  if constexpr (testing::bits_of_type<T>() <= 16) {
    std::vector<T> all;
    for (std::uint32_t b = 0; b < (1u << testing::bits_of_type<T>()); ++b) all.push_back(testing::from_raw<T>(b));
    for (const T& v : all) {
      const ExactReal s = exact_sum(TypedArray(std::vector<T>{v}));
      const double d = to_double(v);
      if (std::isnan(d)) {
        ASSERT_TRUE(s.is_nan());
      } else {
        ASSERT_TRUE(testing::same_double(s.to_double(), d)) << d;
      }
    }
  }
}

// Every pair of fp8 values, both formats: the sum of two is exact in double,
// and double addition gives IEEE's NaN, Inf and zero signs.
template <class T>
void check_all_pairs() {
  for (std::uint32_t a = 0; a < 256; ++a)
    for (std::uint32_t b = 0; b < 256; ++b) {
      const T x = T::from_bits(a), y = T::from_bits(b);
      const ExactReal s = exact_sum(TypedArray(std::vector<T>{x, y}));
      const double want = x.to_double() + y.to_double();
      ASSERT_TRUE(testing::same_double(s.to_double(), want)) << a << " + " << b;
      ASSERT_TRUE(testing::same_double(round_to_format(s, dtype_of_v<T>, Saturation::satfinite),
                                       round_to_dtype(want, dtype_of_v<T>, Saturation::satfinite)));
      const ExactReal p = exact_dot(TypedArray(std::vector<T>{x}), TypedArray(std::vector<T>{y}));
      ASSERT_TRUE(testing::same_double(p.to_double(), x.to_double() * y.to_double())) << a << " * " << b;
    }
}
TEST(ExactSumPairs, EveryPairOfFp8Values) {
  check_all_pairs<Fp8E4M3>();
  check_all_pairs<Fp8E5M2>();
}

TEST(ExactSumAdversarial, HugeCancellation) {
  const ExactReal s = exact_sum(TypedArray(std::vector<float>{1e30f, 3.0f, -1e30f}));
  EXPECT_EQ(s.to_double(), 3.0);
  EXPECT_EQ(round_to_format(s, Dtype::fp32), 3.0);
  // The same with every fp32 binade in between, and the tiniest subnormal.
  std::vector<float> v = {1e30f, std::ldexp(1.0f, -149), -1e30f};
  for (int e = -126; e < 100; ++e) {
    v.push_back(std::ldexp(1.0f, e));
    v.push_back(-std::ldexp(1.0f, e));
  }
  const ExactReal t = exact_sum(TypedArray(v));
  EXPECT_EQ(t.to_double(), std::ldexp(1.0, -149));
  EXPECT_EQ(round_to_format(t, Dtype::fp32), std::ldexp(1.0, -149));
  EXPECT_EQ(round_to_format(t, Dtype::fp16), 0.0);
}

TEST(ExactSumAdversarial, Fp16OverflowThreshold) {
  const auto sum16 = [](double a, double b) {
    return round_to_format(exact_sum(TypedArray(std::vector<Fp16>{Fp16(a), Fp16(b)})), Dtype::fp16);
  };
  EXPECT_EQ(sum16(65504, 16), HUGE_VAL);  // 65520 is the midpoint to 2^16: ties to even goes up
  EXPECT_EQ(sum16(65504, 15), 65504.0);
  EXPECT_EQ(sum16(-65504, -16), -HUGE_VAL);
  // In fp32 the same sum is representable.
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(std::vector<Fp16>{Fp16(65504.0), Fp16(16.0)})), Dtype::fp32),
            65520.0);
}

TEST(ExactSumAdversarial, MidpointsRoundToEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10 in fp16: even is 1.
  const std::vector<float> mid = {1.0f, std::ldexp(1.0f, -11)};
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(mid)), Dtype::fp16), 1.0);
  // A whisker above the midpoint, far below fp32's last bit: rounds up.
  std::vector<float> above = mid;
  above.push_back(std::ldexp(1.0f, -140));
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(above)), Dtype::fp16), 1.0 + std::ldexp(1.0, -10));
  std::vector<float> below = mid;
  below.push_back(-std::ldexp(1.0f, -140));
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(below)), Dtype::fp16), 1.0);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: even is 1 + 2^-9.
  const std::vector<float> odd = {1.0f, 3 * std::ldexp(1.0f, -11)};
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(odd)), Dtype::fp16), 1.0 + std::ldexp(1.0, -9));
  // fp32: 2^24 + 1 is a midpoint (even: 2^24); one more 2^-100 decides upward.
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(std::vector<float>{16777216.0f, 1.0f})), Dtype::fp32), 16777216.0);
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(std::vector<float>{16777216.0f, 1.0f, std::ldexp(1.0f, -100)})),
                            Dtype::fp32),
            16777218.0);
}

TEST(ExactSumAdversarial, SubnormalResults) {
  // fp16's smallest subnormal is 2^-24; 1.5 * 2^-24 is a midpoint (even: 2^-23).
  const std::vector<float> v = {std::ldexp(1.0f, -14), -std::ldexp(1.0f, -14), 1.5f * std::ldexp(1.0f, -24)};
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(v)), Dtype::fp16), std::ldexp(1.0, -23));
  // Half the smallest subnormal rounds to (even) zero, keeping the sign.
  const std::vector<float> half = {-std::ldexp(1.0f, -25)};
  const double r = round_to_format(exact_sum(TypedArray(half)), Dtype::fp16);
  EXPECT_EQ(r, 0.0);
  EXPECT_TRUE(std::signbit(r));
  // A subnormal fp32 result from normal inputs.
  const std::vector<float> w = {std::ldexp(1.0f, -125), -std::ldexp(1.0f, -125) + std::ldexp(1.0f, -148)};
  EXPECT_EQ(round_to_format(exact_sum(TypedArray(w)), Dtype::fp32), std::ldexp(1.0, -148));
}

TEST(ExactSumLarge, ThreadedSumEqualsChunkedSums) {
  // 2^21 + 3 values take the two-thread path; chunks of 2^16 do not.
  const std::size_t n = (std::size_t(1) << 21) + 3;
  for (Spread spread : {Spread::narrow, Spread::wide}) {
    const auto xs = testing::random_values<float>(n, 11, spread);
    for (Terms k : {Terms::value, Terms::square, Terms::product}) {
      const TypedArray xa(xs);
      const ExactReal whole = exact_reduce(k, xa, &xa);
      ExactReal chunks = exact_from_uint(0);
      for (std::size_t at = 0; at < n; at += std::size_t(1) << 16) {
        std::vector<float> part(xs.begin() + at, xs.begin() + std::min(n, at + (std::size_t(1) << 16)));
        const TypedArray pa(std::move(part));
        chunks = exact_add(chunks, exact_reduce(k, pa, &pa));
      }
      EXPECT_TRUE(mpfr_equal_p(whole.get(), chunks.get())) << int(k);
    }
  }
}

TEST(ExactSumLarge, ManyWideValuesAgreeWithMpfrSum) {
  // More than 2^18 values per thread go through the exponent bins' flush.
  const auto xs = testing::random_values<float>((std::size_t(1) << 19) + 5, 21, Spread::wide);
  const ExactReal got = exact_sum(TypedArray(xs));
  const ExactReal want = testing::mpfr_sum_of(testing::widened(xs));
  EXPECT_TRUE(mpfr_equal_p(got.get(), want.get()));
}

TEST(ExactVariance, NumeratorIsExact) {
  // Large mean, small variance: the cancellation that breaks E[x^2] - E[x]^2.
  std::vector<float> v;
  for (int i = 0; i < 1001; ++i) v.push_back(10000.0f + 0.0009765625f * float(i % 7));
  const ExactReal num = exact_variance_numerator(TypedArray(v));
  Big s = 0, q = 0;
  for (float x : v) {
    s += Big(x);
    q += Big(x) * Big(x);
  }
  EXPECT_EQ(testing::to_big(num), Big(v.size()) * q - s * s);
  EXPECT_GT(num.to_double(), 0.0);
}

}  // namespace
}  // namespace ulpscope
