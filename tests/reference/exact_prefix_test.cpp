// The scan references (reference/exact_prefix.hpp) against MPFR: every
// prefix summed on its own by mpfr_sum and rounded by the definition
// (reference_test_support.hpp's big_round), on small sizes in full and on a
// long array at sampled indices; adversarial data (cancellation, huge and
// tiny values together, NaN, infinities, signed zeros).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "formats/binary_format.hpp"
#include "reference/exact_prefix.hpp"
#include "reference/round_to_format.hpp"
#include "reference_test_support.hpp"

namespace ulpscope::testing {
namespace {

// Prefix i of x summed directly by MPFR (an independent exact sum).
ExactReal direct_prefix(const std::vector<double>& x, std::size_t i) {
  return mpfr_sum_of(std::vector<double>(x.begin(), x.begin() + std::ptrdiff_t(i) + 1));
}

bool same_exact(const ExactReal& a, const ExactReal& b) {
  if (a.is_nan() || b.is_nan()) return a.is_nan() && b.is_nan();
  return mpfr_equal_p(a.get(), b.get()) && a.signbit() == b.signbit();
}

template <class T>
void expect_prefixes_match_mpfr(const std::vector<T>& values, Dtype out, Saturation sat,
                                const std::vector<std::size_t>& checked) {
  const TypedArray x(values);
  const std::vector<double> terms = widened(values);
  const std::vector<Reference> refs = cumsum_reference(x, OutputFormat{out, sat});
  const std::vector<double> rounded = cumsum_rounded(x, OutputFormat{out, sat});
  ASSERT_EQ(refs.size(), values.size());
  ASSERT_EQ(rounded.size(), values.size());
  for (std::size_t i : checked) {
    const ExactReal direct = direct_prefix(terms, i);
    EXPECT_TRUE(same_exact(refs[i].exact, direct)) << "prefix " << i << ": " << decimal_of(refs[i]);
    // The decimal a cell reports, written when asked, of the same number.
    EXPECT_TRUE(refs[i].exact_decimal.empty()) << "prefix " << i;
    EXPECT_EQ(decimal_of(refs[i]), exact_decimal(direct)) << "prefix " << i;
    // Only the prefix's own bits, from its lowest nonzero one to its highest.
    if (mpfr_regular_p(direct.get())) {
      EXPECT_EQ(refs[i].exact.precision(), std::max<mpfr_prec_t>(2, mpfr_min_prec(direct.get()))) << "prefix " << i;
    }
    const double want = big_round(to_big(direct), out, sat);
    EXPECT_TRUE(same_double(refs[i].rounded, want)) << "prefix " << i << ": " << refs[i].rounded << " vs " << want;
    EXPECT_TRUE(same_double(rounded[i], refs[i].rounded)) << "prefix " << i;
  }
}

std::vector<std::size_t> every_index(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

template <class T>
class ExactPrefixTest : public ::testing::Test {};
using InputTypes = ::testing::Types<float, Fp16, Bf16, Fp8E4M3, Fp8E5M2>;
TYPED_TEST_SUITE(ExactPrefixTest, InputTypes);

template <class T>
Dtype dtype_of() {
  return TypedArray(std::vector<T>{}).dtype();
}

TYPED_TEST(ExactPrefixTest, EveryPrefixOfSmallArraysMatchesMpfr) {
  using T = TypeParam;
  const Dtype d = dtype_of<T>();
  for (std::size_t n : {0u, 1u, 31u, 32u, 33u, 1023u}) {
    for (Spread spread : {Spread::narrow, Spread::wide}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " spread=" << int(spread));
      const auto v = random_values<T>(n, 7 + n, spread);
      expect_prefixes_match_mpfr(v, d, Saturation::nosat, every_index(n));
      if (is_fp8(d)) expect_prefixes_match_mpfr(v, Dtype::fp32, Saturation::nosat, every_index(n));
    }
  }
}

// x, then -x: every second prefix cancels to an exact zero; tiny values
// between them survive only in an exact sum.
TYPED_TEST(ExactPrefixTest, CancellationAndHugeTinyMixes) {
  using T = TypeParam;
  const Dtype d = dtype_of<T>();
  const double big = format_info(d).max_finite;
  const double tiny = format_info(d).min_subnormal;
  std::vector<T> v;
  for (int k = 0; k < 40; ++k) {
    const double x = k % 3 == 0 ? big : (k % 3 == 1 ? 1.0 : tiny);
    v.push_back(T(x));
    v.push_back(T(tiny));
    v.push_back(T(-x));
  }
  expect_prefixes_match_mpfr(v, d, Saturation::nosat, every_index(v.size()));
  // Prefixes that pass the largest finite value, then come back.
  std::vector<T> over{T(big), T(big), T(-big), T(-big), T(-big), T(big)};
  expect_prefixes_match_mpfr(over, d, Saturation::nosat, every_index(over.size()));
  if (is_fp8(d)) expect_prefixes_match_mpfr(over, d, Saturation::satfinite, every_index(over.size()));
}

// x in T without saturation (an fp8 value built from a double saturates by default).
template <class T>
T unsaturated(double x) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(x);
  else return T::from_bits(encode<typename T::format>(x, Saturation::nosat));
}

TYPED_TEST(ExactPrefixTest, NaNAndInfinitiesStickToLaterPrefixes) {
  using T = TypeParam;
  const Dtype d = dtype_of<T>();
  std::vector<T> w{T(1.0), unsaturated<T>(std::nan("")), T(2.0)};
  expect_prefixes_match_mpfr(w, d, Saturation::nosat, every_index(w.size()));
  if (!format_info(d).has_infinity) GTEST_SKIP() << "no infinity in this format (its NaN is checked above)";
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<T> v{T(1.0), T(-0.0), unsaturated<T>(inf), T(2.0), unsaturated<T>(-inf), T(1.0)};
  expect_prefixes_match_mpfr(v, d, Saturation::nosat, every_index(v.size()));
  const std::vector<double> r = cumsum_rounded(TypedArray(v), OutputFormat{d, Saturation::nosat});
  EXPECT_EQ(r[2], inf);
  EXPECT_TRUE(std::isnan(r[4]) && std::isnan(r[5]));
}

TEST(ExactPrefix, SignedZeros) {
  const std::vector<double> r =
      cumsum_rounded(TypedArray(std::vector<float>{-0.0f, -0.0f, 0.0f, -0.0f}), OutputFormat{Dtype::fp32});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(std::signbit(r[0]) && std::signbit(r[1]));
  EXPECT_FALSE(std::signbit(r[2]) || std::signbit(r[3]));
}

// 1000003 fp16 values: the prefixes at sampled indices (the ends, the
// middle, the odd sizes, where the chunks of two threads meet) against
// MPFR's sum of each prefix alone.
TEST(ExactPrefix, LongArrayAtSampledIndices) {
  const auto v = random_values<Fp16>(1000003, 11, Spread::narrow);
  const std::vector<std::size_t> checked{0,      1,      30,     31,     32,     33,     4095,
                                         4096,   65535,  65536,  500000, 500001, 999999, 1000002};
  const std::vector<double> terms = widened(v);
  const std::vector<double> rounded = cumsum_rounded(TypedArray(v), OutputFormat{Dtype::fp16});
  ASSERT_EQ(rounded.size(), v.size());
  for (std::size_t i : checked) {
    const double want = big_round(to_big(direct_prefix(terms, i)), Dtype::fp16, Saturation::nosat);
    EXPECT_TRUE(same_double(rounded[i], want)) << "prefix " << i;
  }
}

// Long arrays are scanned in chunks on several threads (where the machine
// has them), each chunk starting from the chunks before it: what those carry
// besides their sum, a -0 start and a NaN, reaches every later prefix.
TEST(ExactPrefix, LongArraysCarrySignedZerosAndNaNAcrossChunks) {
  const std::size_t n = 3 * 65536 + 7;
  std::vector<float> zeros(n, -0.0f);
  const std::vector<double> z = cumsum_rounded(TypedArray(zeros), OutputFormat{Dtype::fp32});
  ASSERT_EQ(z.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(z[i] == 0 && std::signbit(z[i])) << "prefix " << i;
  zeros[n - 1] = 0.0f;
  EXPECT_FALSE(std::signbit(cumsum_rounded(TypedArray(zeros), OutputFormat{Dtype::fp32}).back()));

  std::vector<float> v(n, 1.0f);
  v[5] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Reference> r = cumsum_reference(TypedArray(v), OutputFormat{Dtype::fp32});
  ASSERT_EQ(r.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(r[i].exact.is_nan(), i >= 5) << "prefix " << i;
    if (i < 5) {
      ASSERT_EQ(r[i].rounded, double(i + 1)) << "prefix " << i;
    }
  }
}

}  // namespace
}  // namespace ulpscope::testing
