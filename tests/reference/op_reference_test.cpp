// Every op's reference against the same op evaluated independently in
// Boost's cpp_bin_float (its own sqrt, exp and log, at 1100 bits, from
// exact sums) and rounded by big_round; special values; Ziv's loop raising its
// precision on a hard case; row-wise slicing.
#include "reference/op_reference.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>
#include <vector>
#include <stdexcept>

#include "formats/round_to_dtype.hpp"
#include "reference/exact_sum.hpp"
#include "reference/round_to_format.hpp"
#include "reference/ziv.hpp"
#include "reference_test_support.hpp"

namespace ulpscope {
namespace {

using testing::Big;
using testing::Spread;
// One precision for everything: conversions between cpp_bin_float
// precisions are avoided (Boost 1.74 warns about them).
using Wide = Big;

constexpr double kEps = 1e-5;

struct Stats {
  Big s = 0, q = 0;
  std::vector<double> x;
};
template <class T>
Stats stats_of(const std::vector<T>& v) {
  Stats st;
  st.x = testing::widened(v);
  for (double e : st.x) {
    st.s += Big(e);
    st.q += Big(e) * Big(e);
  }
  return st;
}

// Compares a reference with the independent value: same rounding, the
// reference's `exact` within 2^-140 of it relatively, and (for certified
// approximations) the same 40 significant decimal digits.
void expect_reference(const Reference& r, const Wide& want, OutputFormat out, const std::string& what) {
  const double rounded = testing::big_round(Big(want), out.dtype, out.sat);
  EXPECT_TRUE(testing::same_double(r.rounded, rounded))
      << what << ": " << r.rounded << " vs " << rounded << " (" << r.exact_decimal << ")";
  if (want != 0 && boost::multiprecision::isfinite(want)) {
    const Wide got(testing::to_big(r.exact));
    EXPECT_LE(abs((got - want) / want), Wide(std::ldexp(1.0, -140))) << what;
  }
  if (!r.exact_is_exact && want != 0 && boost::multiprecision::isfinite(want)) {
    // Boost's own decimal conversion: "d.ddd...e+XX", 39 digits after the point.
    EXPECT_EQ(r.exact_decimal, want.str(kDecimalDigits - 1, std::ios_base::scientific)) << what;
  }
}

template <class T>
class OpReferenceTest : public ::testing::Test {};
TYPED_TEST_SUITE(OpReferenceTest, testing::InputTypes);

TYPED_TEST(OpReferenceTest, AgreesWithCppBinFloat) {
  using T = TypeParam;
  const Dtype in = dtype_of_v<T>;
  std::uint64_t seed = 100;
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(31), std::size_t(33), std::size_t(257)})
    for (Dtype od : {default_out_dtype(in), Dtype::fp64, Dtype::fp16}) {
      const OutputFormat out{od, Saturation::nosat};
      const auto v = testing::random_values<T>(n, seed++, Spread::narrow);
      const TypedArray x(v);
      const Stats st = stats_of(v);
      const Wide s(st.s), q(st.q), nn(static_cast<double>(n));
      const std::string tag = std::string(to_string(in)) + "->" + std::string(to_string(od)) + " n=" + std::to_string(n);
      expect_reference(sum_reference(x, out), s, out, "sum " + tag);
      expect_reference(mean_reference(x, out), s / nn, out, "mean " + tag);
      expect_reference(sumsq_reference(x, out), q, out, "sumsq " + tag);
      expect_reference(norm2_reference(x, out), sqrt(q), out, "norm2 " + tag);
      expect_reference(rms_reference(x, kEps, out), sqrt(q / nn + Wide(kEps)), out, "rms " + tag);
      const MeanVarReference mv = mean_var_reference(x, out);
      expect_reference(mv.mean, s / nn, out, "mean_var.mean " + tag);
      const Wide var((Big(n) * st.q - st.s * st.s) / (Big(n) * Big(n)));
      expect_reference(mv.variance, var, out, "mean_var.variance " + tag);
      Wide lse = 0;
      for (double e : st.x) lse += exp(Wide(e));
      expect_reference(logsumexp_reference(x, out), log(lse), out, "logsumexp " + tag);

      std::vector<double> gamma(n), beta(n);
      for (std::size_t i = 0; i < n; ++i) {
        gamma[i] = 0.5 + 0.125 * double(i % 9);
        beta[i] = 0.25 * double(int(i % 5) - 2);
      }
      const auto rn = rmsnorm_reference(x, gamma, kEps, out);
      const auto ln = layernorm_reference(x, gamma, beta, kEps, out);
      ASSERT_EQ(rn.size(), n);
      ASSERT_EQ(ln.size(), n);
      const Wide rms = sqrt(q / nn + Wide(kEps));
      const Wide sd = sqrt(var + Wide(kEps));
      for (std::size_t i = 0; i < n; ++i) {
        expect_reference(rn[i], Wide(st.x[i]) / rms * Wide(gamma[i]), out, "rmsnorm " + tag);
        expect_reference(ln[i], (Wide(st.x[i]) - s / nn) / sd * Wide(gamma[i]) + Wide(beta[i]), out,
                         "layernorm " + tag);
      }
    }
}

TYPED_TEST(OpReferenceTest, WideRangeSumsAndSelections) {
  using T = TypeParam;
  const OutputFormat out{default_out_dtype(dtype_of_v<T>), Saturation::satfinite};
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(1000)}) {
    const auto v = testing::random_values<T>(n, 500 + n, Spread::wide);
    const TypedArray x(v);
    const Stats st = stats_of(v);
    expect_reference(sum_reference(x, out), Wide(st.s), out, "sum");
    expect_reference(mean_reference(x, out), Wide(st.s) / Wide(double(n)), out, "mean");
    double mx = -HUGE_VAL, mn = HUGE_VAL, am = 0;
    for (double e : st.x) {
      mx = std::max(mx, e);
      mn = std::min(mn, e);
      am = std::max(am, std::fabs(e));
    }
    EXPECT_EQ(max_reference(x, out).rounded, round_to_dtype(mx, out.dtype, out.sat));
    EXPECT_EQ(min_reference(x, out).rounded, round_to_dtype(mn, out.dtype, out.sat));
    EXPECT_EQ(amax_reference(x, out).rounded, round_to_dtype(am, out.dtype, out.sat));
  }
}

TEST(OpReference, SpecialValues) {
  const OutputFormat out{Dtype::fp32, Saturation::nosat};
  const double nan = std::nan(""), inf = HUGE_VAL;
  auto arr = [](std::vector<float> v) { return TypedArray(std::move(v)); };
  const TypedArray empty(std::vector<float>{});
  EXPECT_EQ(sum_reference(empty, out).rounded, 0.0);
  EXPECT_TRUE(std::isnan(mean_reference(empty, out).rounded));
  EXPECT_TRUE(std::isnan(rms_reference(empty, kEps, out).rounded));
  EXPECT_EQ(max_reference(empty, out).rounded, -inf);
  EXPECT_EQ(min_reference(empty, out).rounded, inf);
  EXPECT_EQ(amax_reference(empty, out).rounded, 0.0);
  EXPECT_EQ(logsumexp_reference(empty, out).rounded, -inf);

  const TypedArray with_nan = arr({1.0f, float(nan), -2.0f});
  EXPECT_TRUE(std::isnan(sum_reference(with_nan, out).rounded));
  EXPECT_TRUE(std::isnan(max_reference(with_nan, out).rounded)) << "NaN is not dropped, as fmaxf would";
  EXPECT_TRUE(std::isnan(min_reference(with_nan, out).rounded));
  EXPECT_TRUE(std::isnan(amax_reference(with_nan, out).rounded));
  EXPECT_TRUE(std::isnan(logsumexp_reference(with_nan, out).rounded));
  EXPECT_TRUE(std::isnan(norm2_reference(with_nan, out).rounded));
  EXPECT_TRUE(std::isnan(mean_var_reference(with_nan, out).variance.rounded));

  const TypedArray both_inf = arr({float(inf), 1.0f, float(-inf)});
  EXPECT_TRUE(std::isnan(sum_reference(both_inf, out).rounded));
  EXPECT_EQ(logsumexp_reference(both_inf, out).rounded, inf) << "exp(-inf) is 0";
  EXPECT_EQ(amax_reference(both_inf, out).rounded, inf);
  const TypedArray one_inf = arr({float(-inf), 1.0f});
  EXPECT_EQ(sum_reference(one_inf, out).rounded, -inf);
  EXPECT_EQ(mean_reference(one_inf, out).rounded, -inf);
  EXPECT_EQ(norm2_reference(one_inf, out).rounded, inf);
  EXPECT_EQ(logsumexp_reference(one_inf, out).rounded, 1.0) << "one finite term: log(exp(1)) = 1, exactly";
  EXPECT_TRUE(logsumexp_reference(one_inf, out).exact_is_exact);
  EXPECT_TRUE(std::isnan(mean_var_reference(one_inf, out).variance.rounded));

  const TypedArray zeros = arr({-0.0f, -0.0f});
  EXPECT_TRUE(std::signbit(sum_reference(zeros, out).rounded));
  EXPECT_TRUE(std::signbit(mean_reference(zeros, out).rounded));
  EXPECT_FALSE(std::signbit(norm2_reference(zeros, out).rounded));
  EXPECT_EQ(mean_var_reference(zeros, out).variance.rounded, 0.0);
  EXPECT_TRUE(std::signbit(max_reference(zeros, out).rounded));
  const TypedArray mixed_zeros = arr({-0.0f, 0.0f});
  EXPECT_FALSE(std::signbit(max_reference(mixed_zeros, out).rounded)) << "maximum(-0, +0) = +0";
  EXPECT_TRUE(std::signbit(min_reference(mixed_zeros, out).rounded)) << "minimum(-0, +0) = -0";
  EXPECT_FALSE(std::signbit(amax_reference(zeros, out).rounded));
  // A row of zeros: 0 / sqrt(0 + eps) = 0, but 0 / 0 is NaN without eps.
  EXPECT_EQ(rmsnorm_reference(zeros, {}, kEps, out)[0].rounded, 0.0);
  EXPECT_TRUE(std::isnan(rmsnorm_reference(zeros, {}, 0.0, out)[0].rounded));
  EXPECT_TRUE(std::isnan(layernorm_reference(zeros, {}, {}, 0.0, out)[1].rounded));
  const std::vector<double> beta = {0.5, -0.25};
  const auto flat = layernorm_reference(arr({3.0f, 3.0f}), {}, beta, kEps, out);
  EXPECT_EQ(flat[0].rounded, 0.5) << "a constant row normalises to beta";
  EXPECT_EQ(flat[1].rounded, -0.25);
  EXPECT_TRUE(flat[0].exact_is_exact);
  // fp8_e4m3 has no infinity: an overflowing sum is NaN or 448 by mode.
  const TypedArray big = TypedArray(std::vector<Fp8E4M3>{Fp8E4M3(448.0), Fp8E4M3(448.0)});
  EXPECT_TRUE(std::isnan(sum_reference(big, {Dtype::fp8_e4m3, Saturation::nosat}).rounded));
  EXPECT_EQ(sum_reference(big, {Dtype::fp8_e4m3, Saturation::satfinite}).rounded, 448.0);
  EXPECT_EQ(sum_reference(big, {Dtype::fp32, Saturation::nosat}).rounded, 896.0);
}

TEST(OpReference, ExactResultsAreRecognisedAndRoundToEven) {
  const OutputFormat fp16{Dtype::fp16, Saturation::nosat};
  // sqrt((1 + 2^-11)^2) = 1 + 2^-11 exactly: an fp16 midpoint, even is 1.
  const float m = 1.0f + std::ldexp(1.0f, -11);
  const Reference r = norm2_reference(TypedArray(std::vector<float>{m}), fp16);
  EXPECT_TRUE(r.exact_is_exact);
  EXPECT_EQ(r.rounded, 1.0);
  // The mean of {2049, 2049} is 2049, halfway between fp16's 2048 and 2050.
  const Reference mean = mean_reference(TypedArray(std::vector<float>{2049.0f, 2049.0f}), fp16);
  EXPECT_TRUE(mean.exact_is_exact);
  EXPECT_EQ(mean.rounded, 2048.0);
  // 1/3 is not dyadic: certified, not exact, and at least 128 bits.
  const Reference third = mean_reference(TypedArray(std::vector<float>{1.0f, 0.0f, 0.0f}), {Dtype::fp32});
  EXPECT_FALSE(third.exact_is_exact);
  EXPECT_GE(third.exact.precision(), 128);
  EXPECT_EQ(third.rounded, double(1.0f / 3.0f));
}

TEST(OpReference, ZivRaisesThePrecisionOnAHardCase) {
  // sqrt((1 + 2^-11)^2 + 2^-298) exceeds fp16's midpoint 1 + 2^-11 by about
  // 2^-299: no evaluation at fewer than about 300 bits can tell which side
  // it is on.
  const float m = 1.0f + std::ldexp(1.0f, -11);
  const float tiny = std::ldexp(1.0f, -149);
  const Reference r = norm2_reference(TypedArray(std::vector<float>{m, tiny}), {Dtype::fp16});
  EXPECT_FALSE(r.exact_is_exact);
  EXPECT_GE(r.working_precision, 300);
  EXPECT_GT(r.working_precision, kZivStartPrecision);
  EXPECT_EQ(r.rounded, 1.0 + std::ldexp(1.0, -10));
  // Without the tiny term, the first precision decides (exactly).
  EXPECT_EQ(norm2_reference(TypedArray(std::vector<float>{1.5f, 2.0f}), {Dtype::fp16}).working_precision,
            kZivStartPrecision);

  // The loop itself: an approximation that claims a wide error until 1024 bits.
  int calls = 0;
  const ZivResult z = ziv_round(
      [&](mpfr_prec_t p) {
        ++calls;
        Approximation a{ExactReal(p)};
        // 2^-500 above the midpoint, known within 2^-100 until 1024 bits.
        mpfr_set_d(a.value.get(), 1.0 + std::ldexp(1.0, -11), MPFR_RNDN);
        mpfr_add_d(a.value.get(), a.value.get(), std::ldexp(1.0, -500), MPFR_RNDN);
        a.error_exponent = p >= 1024 ? -600 : -100;
        return a;
      },
      Dtype::fp16, Saturation::nosat);
  mpfr_prec_t expected = kZivStartPrecision;
  int expected_calls = 1;
  for (; expected < 1024; expected *= 2) ++expected_calls;
  EXPECT_EQ(z.precision, expected);
  EXPECT_EQ(calls, expected_calls);
  EXPECT_FALSE(z.exact);
  EXPECT_EQ(round_to_format(z.value, Dtype::fp16), 1.0 + std::ldexp(1.0, -10));
}

// A quotient that is not dyadic can be a decimal tie: its expansion ends in a
// 5 at the 41st significant digit, which no interval around it decides. The
// expected strings are Python's decimal module at 40 digits, ties to even.
// The lines of a hard-case file (tests/data/hard_cases), split into words,
// without comments and blank lines; each line's "#" comment as its last word.
std::vector<std::vector<std::string>> hard_case_lines(const std::string& name) {
  const std::string path = std::string(ULPSCOPE_HARD_CASES_DIR) + "/" + name;
  std::ifstream file(path);
  if (!file) ADD_FAILURE() << "cannot read " << path;
  std::vector<std::vector<std::string>> lines;
  for (std::string line; std::getline(file, line);) {
    std::string why;
    if (const auto hash = line.find('#'); hash != std::string::npos) {
      why = line.substr(hash + 1);
      line.resize(hash);
    }
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.empty()) continue;
    words.push_back(why);
    lines.push_back(std::move(words));
  }
  return lines;
}

TEST(OpReference, DecimalTiesOfQuotientsAreDecidedOnTheFraction) {
  const auto integer = [](const std::string& digits) {
    ExactReal r(256);
    mpfr_set_str(r.get(), digits.c_str(), 10, MPFR_RNDN);
    return r;
  };
  const auto quotients = hard_case_lines("quotient_decimals.txt");
  EXPECT_GE(quotients.size(), 5u);
  for (const auto& w : quotients) {
    ASSERT_EQ(w.size(), 4u) << "quotient_decimals.txt: numerator, denominator, decimal, # why";
    EXPECT_EQ(quotient_decimal(integer(w[0]), integer(w[1])), w[2]) << w[0] << " / " << w[1] << ":" << w[3];
  }
  EXPECT_THROW(quotient_decimal(integer("1"), integer("0")), std::invalid_argument);

  const auto rows = hard_case_lines("mean_var_rows.txt");
  EXPECT_GE(rows.size(), 1u);
  for (const auto& w : rows) {
    ASSERT_GE(w.size(), 4u) << "mean_var_rows.txt: format, variance, values..., # why";
    const auto d = parse_dtype(w[0]);
    ASSERT_TRUE(d && *d != Dtype::fp64) << "mean_var_rows.txt: not an input format: " << w[0];
    TypedArray x(*d, w.size() - 3);
    std::visit(
        [&](auto& v) {
          using T = typename std::decay_t<decltype(v)>::value_type;
          for (std::size_t i = 0; i < v.size(); ++i) {
            char* end = nullptr;
            const double e = std::strtod(w[i + 2].c_str(), &end);
            EXPECT_EQ(*end, '\0') << "mean_var_rows.txt: not a number: " << w[i + 2];
            v[i] = T(e);
            EXPECT_EQ(to_double(v[i]), e) << "mean_var_rows.txt: not exact in " << w[0] << ": " << w[i + 2];
          }
          const MeanVarReference r = mean_var_reference(x, {*d});
          EXPECT_FALSE(r.variance.exact_is_exact) << w.back();
          EXPECT_EQ(r.variance.exact_decimal, w[1]) << w.back();
          // The rounding against Boost's (its binary approximation of the
          // fraction may lie on either side of a decimal tie, so only the
          // rounding to the format is compared with it).
          const Stats st = stats_of(v);
          const Big n(double(v.size()));
          const double want = testing::big_round((n * st.q - st.s * st.s) / (n * n), *d, Saturation::nosat);
          EXPECT_TRUE(testing::same_double(r.variance.rounded, want)) << r.variance.rounded << " vs " << want;
        },
        x.data());
  }
}

TEST(OpReference, LogsumexpOfManyTermsAgreesWithCppBinFloat) {
  // Long enough for the exponentials to be shared out over threads and
  // summed in many blocks (reference/op_reference.cpp), not a multiple of
  // either. The values repeat 61 distinct ones, so that the independent sum
  // is 61 exponentials at 1100 bits times their counts.
  const std::size_t n = 2 * 16384 + 1031;
  const auto distinct = testing::widened(testing::random_values<float>(61, 77, Spread::narrow));
  std::vector<float> v(n);
  std::vector<std::size_t> count(distinct.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = i * 7919 % distinct.size();
    v[i] = float(distinct[k]);
    ++count[k];
  }
  const TypedArray x(v);
  Wide lse = 0;
  for (std::size_t k = 0; k < distinct.size(); ++k) lse += Wide(double(count[k])) * exp(Wide(distinct[k]));
  for (Dtype od : {Dtype::fp32, Dtype::fp64})
    expect_reference(logsumexp_reference(x, {od, Saturation::nosat}), log(lse), {od, Saturation::nosat},
                     "logsumexp n=" + std::to_string(n) + " -> " + std::string(to_string(od)));
}

TEST(OpReference, LogsumexpOfCancellingValues) {
  // log(exp(-1000) + exp(-1000)) = -1000 + log 2: the big exponents are
  // handled by subtracting the maximum; log 2 from Boost.
  const TypedArray x(std::vector<float>{-1000.0f, -1000.0f});
  const Reference r = logsumexp_reference(x, {Dtype::fp32});
  EXPECT_EQ(r.rounded, double(float(-1000.0 + std::log(2.0))));
  // A 2^20-element reference finishes (the benchmark times it).
  EXPECT_FALSE(r.exact_is_exact);
}

TEST(OpReference, RowWiseLinesAreRowsOrColumns) {
  // [3, 4]: row j is x[4j .. 4j+3]; column j is x[j], x[4+j], x[8+j].
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = float(i * i) * 0.5f;
  const TypedArray x(v);
  const auto rows = for_each_line(x, 3, 4, Along::inner, [](const TypedArray& line) {
    return sum_reference(line, {Dtype::fp32});
  });
  const auto cols = for_each_line(x, 3, 4, Along::outer, [](const TypedArray& line) {
    return sum_reference(line, {Dtype::fp32});
  });
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(cols.size(), 4u);
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(rows[j].rounded, double(v[4 * j] + v[4 * j + 1] + v[4 * j + 2] + v[4 * j + 3]));
  for (int j = 0; j < 4; ++j) EXPECT_EQ(cols[j].rounded, double(v[j] + v[4 + j] + v[8 + j]));
  const auto norms = for_each_line(x, 3, 4, Along::inner, [](const TypedArray& line) {
    return rmsnorm_reference(line, {}, kEps, {Dtype::fp32});
  });
  ASSERT_EQ(norms.size(), 3u);
  EXPECT_EQ(norms[2].size(), 4u);
  EXPECT_THROW(line_of(x, 5, 4, Along::inner, 0), std::invalid_argument);
  EXPECT_THROW(line_of(x, 3, 4, Along::outer, 4), std::out_of_range);
}

}  // namespace
}  // namespace ulpscope
