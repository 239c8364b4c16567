// The CPU models: end-to-end facts of the textbook algorithms (issue 11),
// the exact accumulator against MPFR, and the tree order against an
// independent re-implementation.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/reducers.hpp"
#include "kernels/model.hpp"
#include "model_test_support.hpp"

namespace ulpscope {
namespace {

using test::make_array;

KernelSpec spec_of(Op op, Dtype in, Accumulator acc, Shape shape, Dtype out) {
  KernelSpec s;
  s.op = op;
  s.in = in;
  s.out = out;
  s.acc = acc;
  s.shape = shape;
  return s;
}

ReductionProblem whole(Op op, const TypedArray& x, const TypedArray* y = nullptr) {
  ReductionProblem p;
  p.op = op;
  p.axis = Axis::all;
  p.rows = 1;
  p.cols = std::int64_t(x.size());
  p.x = &x;
  p.y = y;
  return p;
}

double run1(const KernelSpec& s, const ReductionProblem& p, LaunchConfig c = {1, 1}, int k = 0) {
  return run_model(s, p, c).values.at(k);
}

// --- Issue 11: what the textbook loop does -------------------------------

TEST(SerialFacts, Fp32NaiveSumOfOnesStagnatesAt2To24) {
  const TypedArray ones = make_array(Dtype::fp32, std::int64_t(1) << 25, [](auto) { return 1.0; });
  const auto p = whole(Op::sum, ones);
  EXPECT_EQ(run1(spec_of(Op::sum, Dtype::fp32, Accumulator::naive, Shape::serial, Dtype::fp32), p), 0x1p24);
  EXPECT_EQ(run1(spec_of(Op::sum, Dtype::fp32, Accumulator::fp32, Shape::serial, Dtype::fp32), p), 0x1p24);
  // Compensated summation recovers every lost unit: correctly rounded.
  EXPECT_EQ(run1(spec_of(Op::sum, Dtype::fp32, Accumulator::kahan, Shape::serial, Dtype::fp32), p), 0x1p25);
  EXPECT_EQ(run1(spec_of(Op::sum, Dtype::fp32, Accumulator::pairwise, Shape::serial, Dtype::fp32), p), 0x1p25);
  EXPECT_EQ(run1(spec_of(Op::sum, Dtype::fp32, Accumulator::exact, Shape::serial, Dtype::fp32), p), 0x1p25);
}

TEST(SerialFacts, Fp16NaiveSumOfUniformStopsAt2048) {
  std::uint64_t s = 11;
  const TypedArray x = make_array(Dtype::fp16, 20000, [&](auto) { return test::uniform01(s); });
  const auto p = whole(Op::sum, x);
  // At 2048 the fp16 spacing is 2: any value below 1 rounds back (a tie at 1 goes to even).
  EXPECT_EQ(run1(spec_of(Op::sum, Dtype::fp16, Accumulator::naive, Shape::serial, Dtype::fp16), p), 2048.0);
  const double fp32 = run1(spec_of(Op::sum, Dtype::fp16, Accumulator::fp32, Shape::serial, Dtype::fp32), p);
  EXPECT_GT(fp32, 9000.0);
}

TEST(SerialFacts, NaiveVarianceAtLargeMeanLosesEveryDigit) {
  std::uint64_t s = 5;
  const std::int64_t n = 100000;
  const TypedArray x = make_array(Dtype::fp32, n, [&](auto) {
    const double u = test::uniform01(s), v = test::uniform01(s);
    return 1e4 + std::sqrt(-2.0 * std::log(1.0 - u)) * std::cos(6.283185307179586 * v);  // Box-Muller
  });
  // Reference: two passes in long double over the exact float values.
  long double mean = 0, m2 = 0;
  for (std::int64_t i = 0; i < n; ++i) mean += x.at(i);
  mean /= n;
  for (std::int64_t i = 0; i < n; ++i) m2 += (x.at(i) - mean) * (x.at(i) - mean);
  const double var = double(m2 / n);
  ASSERT_NEAR(var, 1.0, 0.05);
  const auto p = whole(Op::mean_var, x);
  for (Shape shape : {Shape::serial, Shape::tree}) {
    auto rel = [&](Accumulator a) {
      const KernelSpec k = spec_of(Op::mean_var, Dtype::fp32, a, shape, Dtype::fp32);
      const LaunchConfig c = launch_configs(k, n).front();
      return std::fabs(run_model(k, p, c).values.at(1) - var) / var;
    };
    SCOPED_TRACE(std::string(to_string(shape)));
    EXPECT_GE(rel(Accumulator::naive), 1.0);  // no correct digit left
    EXPECT_GE(rel(Accumulator::fp32), 1.0);
    EXPECT_LT(rel(Accumulator::welford), 1e-3);
    EXPECT_LT(rel(Accumulator::two_pass), 1e-3);
    EXPECT_LT(rel(Accumulator::fp64), 1e-3);  // the same formula in fp64 keeps about half its digits
  }
}

// --- exact: correctly rounded (sum, dot, sumsq, mean, norm2, rms), and the same bits in any order ---

struct ExactCase {
  Dtype in;
  Op op;
};

class ExactModel : public ::testing::TestWithParam<ExactCase> {};

// RN_out(sqrt(S / n + eps)) by MPFR: z = S + n eps exactly, w = z / n rounded
// to odd at 8192 bits, then one correctly rounded square root. w is within
// 2^-8191 of z / n, which moves the root across a rounding boundary of out
// only if the root lies that close to one; these random inputs do not.
double rms_want(const mpfr_t sum, std::int64_t n, double eps, Dtype out) {
  mpfr_t z, w;
  mpfr_init2(z, 8192);
  mpfr_init2(w, 8192);
  mpfr_set_d(w, eps, MPFR_RNDN);
  mpfr_mul_si(w, w, long(n), MPFR_RNDN);  // exact: 53 + 64 bits
  mpfr_add(z, sum, w, MPFR_RNDN);         // exact: both within 8192 bits of each other
  if (mpfr_div_si(w, z, long(n), MPFR_RNDZ) != 0 && mpfr_min_prec(w) < 8192) mpfr_nextabove(w);  // to odd
  const double v = test::round_mpfr_to(w, out, 1, true);
  mpfr_clear(z);
  mpfr_clear(w);
  return v;
}

TEST_P(ExactModel, CorrectlyRoundedInEveryOrderAndConfiguration) {
  const auto [in, op] = GetParam();
  const bool square = op == Op::sumsq || op == Op::norm2 || op == Op::rms;
  for (std::int64_t n : {0, 1, 31, 33, 1023, 4097, 70001}) {
    std::uint64_t s = std::uint64_t(n) * 7 + unsigned(in);
    const FormatInfo& f = format_info(in);
    // Random signs and magnitudes over the whole range, subnormals included,
    // kept clear of overflow so that every output is finite.
    const double top = square ? std::sqrt(f.max_finite / 4) : f.max_finite / 4;
    auto gen = [&](auto) {
      const double e = std::log2(f.min_subnormal) + test::uniform01(s) * (std::log2(top) - std::log2(f.min_subnormal));
      return (test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(e) / std::max(1.0, std::sqrt(double(n)) / 8);
    };
    const TypedArray x = make_array(in, n, gen);
    const TypedArray y = make_array(in, n, gen);
    const TypedArray* yp = op == Op::dot ? &y : nullptr;
    mpfr_t ex;
    test::exact_sum(ex, x, yp, square);
    std::vector<Dtype> outs = {Dtype::fp64, Dtype::fp32, Dtype::bf16, Dtype::fp16};
    if (is_fp8(in)) outs.push_back(in);
    for (Dtype out : outs) {
      // mean: one rounding of the exact quotient, the mean of nothing is NaN
      // (so is the rms of nothing); norm2, rms: one rounding of the exact root.
      double want = op == Op::rms     ? (n == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                : rms_want(ex, n, ReductionProblem{}.eps, out))
                    : op == Op::norm2 ? test::round_mpfr_to(ex, out, 1, true)
                    : op != Op::mean ? test::round_mpfr_to(ex, out)
                    : n == 0         ? std::numeric_limits<double>::quiet_NaN()
                                     : test::round_mpfr_to(ex, out, long(n));
      // fp8 outputs saturate (KernelSpec's default, CUDA's __NV_SATFINITE).
      if (is_fp8(out) && std::isinf(want)) want = std::copysign(format_info(out).max_finite, want);
      SCOPED_TRACE(std::string(to_string(in)) + " " + std::string(to_string(op)) + " n=" + std::to_string(n) +
                   " out=" + std::string(to_string(out)));
      for (Shape shape : {Shape::serial, Shape::tree}) {
        const KernelSpec k = spec_of(op, in, Accumulator::exact, shape, out);
        for (const LaunchConfig& c : launch_configs(k, n)) {
          const double got = run1(k, whole(op, x, yp), c);
          if (std::isnan(want)) EXPECT_TRUE(std::isnan(got));
          else {
            EXPECT_EQ(got, want) << std::hexfloat << got << " vs " << want;
            EXPECT_EQ(std::signbit(got), std::signbit(want));
          }
        }
      }
    }
    // A permutation of the input: same bits.
    if (n > 1 && op != Op::dot) {
      std::vector<double> v(n);
      for (std::int64_t i = 0; i < n; ++i) v[i] = x.at(i);
      std::reverse(v.begin(), v.end());
      std::swap(v[0], v[n / 2]);
      const TypedArray xr = make_array(in, n, [&](auto i) { return v[i]; });
      const KernelSpec k = spec_of(op, in, Accumulator::exact, Shape::tree, Dtype::fp32);
      const auto c = launch_configs(k, n);
      EXPECT_EQ(run1(k, whole(op, xr), c[1]), run1(k, whole(op, x), c[0]));
    }
    mpfr_clear(ex);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, ExactModel,
    ::testing::Values(ExactCase{Dtype::fp32, Op::sum}, ExactCase{Dtype::fp16, Op::sum}, ExactCase{Dtype::bf16, Op::sum},
                      ExactCase{Dtype::fp8_e4m3, Op::sum}, ExactCase{Dtype::fp8_e5m2, Op::sum},
                      ExactCase{Dtype::fp32, Op::dot}, ExactCase{Dtype::fp16, Op::sumsq},
                      ExactCase{Dtype::bf16, Op::dot}, ExactCase{Dtype::fp8_e4m3, Op::sumsq},
                      ExactCase{Dtype::fp8_e5m2, Op::dot}, ExactCase{Dtype::fp32, Op::mean},
                      ExactCase{Dtype::fp16, Op::mean}, ExactCase{Dtype::bf16, Op::mean},
                      ExactCase{Dtype::fp8_e5m2, Op::mean}, ExactCase{Dtype::fp32, Op::norm2},
                      ExactCase{Dtype::fp16, Op::norm2}, ExactCase{Dtype::bf16, Op::norm2},
                      ExactCase{Dtype::fp8_e4m3, Op::norm2}, ExactCase{Dtype::fp32, Op::rms},
                      ExactCase{Dtype::fp16, Op::rms}, ExactCase{Dtype::bf16, Op::rms},
                      ExactCase{Dtype::fp8_e5m2, Op::rms}),
    [](const auto& info) {
      return std::string(to_string(info.param.in)) + "_" + std::string(to_string(info.param.op));
    });

// The exact accumulator's shortcuts (exact_sum.hpp) against one deposit per
// term: the double run checked once per vector of fp16 or fp8 values, checked float sums
// of a vector of bf16 values (add_group), the checked double run for fp32,
// bf16 and products. Special values included: a NaN, an
// infinity of either sign, both zeros, subnormals, the largest value.
template <class F, int W>
void expect_groups_equal_single_adds(Dtype d) {
  using Acc = ExactSum<F, false>;
  static_assert(Acc::template groups<W>, "narrow formats add whole vectors");
  const FormatInfo& info = format_info(d);
  std::vector<double> pool = {0.0, -0.0, info.min_subnormal, -info.min_subnormal, info.max_finite,
                              -info.max_finite, 1.0, -1.0, 0x1p-3, 0x1p4, 0x1p8};
  std::uint64_t s = 12345;
  for (int i = 0; i < 64; ++i) {
    const double e = std::log2(info.min_subnormal) + test::uniform01(s) * (std::log2(info.max_finite) -
                                                                           std::log2(info.min_subnormal));
    pool.push_back((test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(e));
  }
  std::vector<double> specials = {std::numeric_limits<double>::quiet_NaN()};
  if (info.has_infinity) {
    specials.push_back(std::numeric_limits<double>::infinity());
    specials.push_back(-std::numeric_limits<double>::infinity());
  }
  // Whole vectors of one kind: all -0 (the sum stays -0), -0 with one +0, an
  // infinity among finite values, both infinities, NaN, the largest values
  // and the smallest.
  const float inf = std::numeric_limits<float>::infinity();
  const float big = float(info.max_finite), tiny = float(info.min_subnormal);
  std::vector<std::vector<float>> fixed = {std::vector<float>(W, -0.0f), std::vector<float>(W, -0.0f),
                                           std::vector<float>(W, big), std::vector<float>(W, -big),
                                           std::vector<float>(W, tiny), std::vector<float>(W, 1.0f),
                                           std::vector<float>(W, std::numeric_limits<float>::quiet_NaN())};
  fixed[1][W / 2] = 0.0f;
  if (info.has_infinity) {
    fixed.push_back(std::vector<float>(W, big));
    fixed.back()[1] = inf;
    fixed.push_back(std::vector<float>(W, tiny));
    fixed.back()[0] = inf;
    fixed.back()[W - 1] = -inf;
  }
  // The vectors of x added as groups, and value by value: the same partial.
  auto expect_same_partial = [](const std::vector<float>& x, const std::string& what) {
    auto g = Acc::start(), one = Acc::start();
    for (std::size_t k = 0; k + W <= x.size(); k += W) Acc::template add_group<W>(g, &x[k]);
    for (float v : x) Acc::add(one, Acc::term(v));
    const auto pg = Acc::partial(g), po = Acc::partial(one);
    for (int d = 0; d < Acc::digits; ++d) ASSERT_EQ(pg.limb[d], po.limb[d]) << what << " digit " << d;
    ASSERT_EQ(pg.flags, po.flags) << what;
    // And as doubles, each added as it is taken (add_values_by: the tree
    // kernels' path for fp8 values).
    if constexpr (Acc::template double_value_runs<W>) {
      auto b = Acc::start();
      for (std::size_t k = 0; k + W <= x.size(); k += W)
        Acc::template add_values_by<W>(b, [&](int j) { return double(x[k + j]); });
      const auto pb = Acc::partial(b);
      for (int d = 0; d < Acc::digits; ++d) ASSERT_EQ(pb.limb[d], po.limb[d]) << what << " doubles, digit " << d;
      ASSERT_EQ(pb.flags, po.flags) << what << " doubles";
    }
  };
  for (std::size_t k = 0; k < fixed.size(); ++k) {
    for (int groups = 1; groups <= 2; ++groups) {
      std::vector<float> x;
      for (int r = 0; r < groups; ++r) x.insert(x.end(), fixed[k].begin(), fixed[k].end());
      expect_same_partial(x, "fixed " + std::to_string(k));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // Runs filled and spilled many times over (fp16: every 2^13 terms; e5m2:
  // every 2^21), the values of one sign so that the run grows past what
  // holds the smallest value's bits (fp16: 2^29).
  {
    std::vector<float> x(std::size_t(140000) * W);
    for (float& xj : x)
      xj = float(decode<F>(encode<F>(std::abs(pool[test::mix(s) % pool.size()]), Saturation::satfinite)));
    expect_same_partial(x, "long");
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (int trial = 0; trial < 3000; ++trial) {
    const int groups = 1 + int(test::mix(s) % 3);
    std::vector<float> x(std::size_t(groups) * W);
    for (float& xj : x) {
      double v = pool[test::mix(s) % pool.size()];
      // Half the trials in a narrow range, where float sums are exact.
      if (trial % 2 == 1) v = (test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(test::uniform01(s) * 8 - 4);
      if (trial % 10 == 0 && test::mix(s) % 16 == 0) v = specials[test::mix(s) % specials.size()];
      xj = float(decode<F>(encode<F>(v, Saturation::satfinite)));  // a value of F
      if (std::isnan(v)) xj = std::numeric_limits<float>::quiet_NaN();
      else if (std::isinf(v)) xj = float(v);
    }
    expect_same_partial(x, "trial " + std::to_string(trial));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(ExactAccumulator, VectorGroupsGiveTheSameInteger) {
  // Which way each format's vectors go (exact_sum.hpp, add_group).
  static_assert(ExactSum<Fp8E4M3Format, false>::float_groups<16>);
  static_assert(!ExactSum<Fp8E5M2Format, false>::float_groups<16> && !ExactSum<Fp16Format, false>::float_groups<8>);
  static_assert(ExactSum<Bf16Format, false>::checked_float_groups<8>);
  static_assert(ExactSum<Fp8E5M2Format, false>::double_value_groups<16> &&
                ExactSum<Fp16Format, false>::double_value_groups<8>);
  static_assert(!ExactSum<Fp8E4M3Format, false>::double_value_groups<16> &&
                !ExactSum<Bf16Format, false>::double_value_groups<8>);
  static_assert(ExactSum<Fp8E4M3Format, false>::double_value_runs<16>, "though mean_var adds them as doubles");
  static_assert(ExactMomentsReducer<Fp8E5M2Format, true>::takes_values_by<16> &&
                ExactMomentsReducer<Fp8E4M3Format, true>::takes_values_by<16> &&
                SumReducer<ExactSum<Fp8E5M2Format, false>, TermKind::value>::takes_values_by<16>);
  static_assert(!SumReducer<ExactSum<Fp8E4M3Format, false>, TermKind::value>::takes_values_by<16>,
                "e4m3 sums add in float first");
  expect_groups_equal_single_adds<Fp16Format, 8>(Dtype::fp16);
  expect_groups_equal_single_adds<Bf16Format, 8>(Dtype::bf16);  // checked float groups

  expect_groups_equal_single_adds<Fp8E4M3Format, 16>(Dtype::fp8_e4m3);
  expect_groups_equal_single_adds<Fp8E5M2Format, 16>(Dtype::fp8_e5m2);
}

// fp64's products are fused into its sum (rounded_sum.hpp, add_product): the
// same bits as the rounded product added, since a product of two floats is
// exact in double. Random float bit patterns (every exponent, subnormals,
// infinities, NaN) and running sums from random double bit patterns, zeros
// of both signs, infinities and the largest double included.
TEST(Fp64Accumulator, FusedProductsGiveTheSameBits) {
  std::uint64_t s = 4242;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> sums = {0.0, -0.0, inf, -inf, std::numeric_limits<double>::max(), 1.0, -0x1p-1074};
  const std::vector<float> values = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), 0x1p-149f,
                                     std::numeric_limits<float>::max(), -1.0f, 3.0f};
  for (int trial = 0; trial < 200000; ++trial) {
    auto pick = [&](const std::vector<float>& v) {
      return test::mix(s) % 4 == 0 ? v[test::mix(s) % v.size()] : std::bit_cast<float>(std::uint32_t(test::mix(s)));
    };
    const float x = pick(values), y = trial % 3 == 0 ? x : pick(values);
    const double s0 = test::mix(s) % 4 == 0 ? sums[test::mix(s) % sums.size()] : std::bit_cast<double>(test::mix(s));
    auto fused = Fp64Sum::start(), rounded = Fp64Sum::start();
    fused.s = rounded.s = s0;
    Fp64Sum::add_product(fused, x, y);
    Fp64Sum::add(rounded, Fp64Sum::product(x, y));
    if (std::isnan(rounded.s)) ASSERT_TRUE(std::isnan(fused.s)) << x << " * " << y << " + " << s0;
    else
      ASSERT_EQ(std::bit_cast<std::uint64_t>(fused.s), std::bit_cast<std::uint64_t>(rounded.s))
          << x << " * " << y << " + " << s0;
  }
}

TEST(ExactAccumulator, CheckedDoubleRunIsExact) {
  // Terms whose double sum rounds (1 + 2^-60), cancels (2^100 - 2^100), or
  // overflows float's range, against the integer alone.
  using Acc = ExactSum<Fp32Format, false>;
  static_assert(!Acc::template groups<4>, "fp32 has no float groups: checked double adds");
  const std::vector<std::vector<double>> cases = {
      {1.0, 0x1p-60, -1.0},           {0x1p100, 1.0, -0x1p100, 0x1p-149},
      {0x1.fffffep127, 0x1.fffffep127, -0x1.fffffep127}, {-0.0, -0.0},
      {-0.0, 0.0},                    {1.0, -1.0},
      {0x1p-149, 0x1p-149, 0x1p-126}, {3.0, std::numeric_limits<double>::infinity(), 1.0}};
  for (const auto& c : cases) {
    auto st = Acc::start();
    auto ref = Acc::identity();
    for (double v : c) {
      Acc::add(st, Acc::term(float(v)));
      Acc::deposit(ref, double(float(v)));
    }
    auto p = Acc::partial(st);
    Acc::carry(ref);
    for (int d = 0; d < Acc::digits; ++d) EXPECT_EQ(p.limb[d], ref.limb[d]) << "digit " << d;
    EXPECT_EQ(p.flags, ref.flags);
  }
}

// Products of two fp16 or fp8 values are formed in float (ExactLayout's
// float_products): every product of every pair of values (fp8: all 256 x 256;
// fp16: random pairs and the extremes) equals the double product, which is
// exact. bf16 and fp32 products do not fit float and stay in double.
template <class F>
void expect_float_products_exact(bool all_pairs) {
  using Acc = ExactSum<F, true>;
  static_assert(ExactLayout<F, true>::float_products);
  std::vector<float> v;
  if (all_pairs) {
    for (std::uint32_t b = 0; b < (1u << F::bits); ++b) v.push_back(float(decode<F>(b)));
  } else {
    std::uint64_t s = 99;
    for (int i = 0; i < 4000; ++i) v.push_back(float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits)))));
    for (std::uint32_t b : {0x0001u, 0x8001u, 0x7BFFu, 0xFBFFu, 0x03FFu, 0x0400u}) v.push_back(float(decode<F>(b)));
  }
  for (float x : v)
    for (float y : v) {
      if (std::isnan(x) || std::isnan(y)) continue;
      const double want = double(x) * double(y), got = Acc::product(x, y);
      ASSERT_TRUE(std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want))
          << x << " * " << y;
    }
}

TEST(ExactAccumulator, NarrowProductsAreExactInFloat) {
  expect_float_products_exact<Fp8E4M3Format>(true);
  expect_float_products_exact<Fp8E5M2Format>(true);
  expect_float_products_exact<Fp16Format>(false);
  static_assert(!ExactLayout<Bf16Format, true>::float_products && !ExactLayout<Fp32Format, true>::float_products);
}

// A partial against the carried integer ref of one deposit per term: the
// same digits and flags, or, where an infinity or NaN decides the result
// alone (the digits beside it are whatever the runs spilled; a run holding
// inf absorbs its finite terms, inf + -inf is NaN there and both flags
// here), the same total.
template <class Acc>
void expect_same_sum(const typename Acc::Partial& p, const typename Acc::Partial& ref, const std::string& what) {
  if (ref.flags & (Acc::kNan | Acc::kPosInf | Acc::kNegInf)) {
    const double want = Acc::total(ref), got = Acc::total(p);
    ASSERT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << what;
    return;
  }
  for (int d = 0; d < Acc::digits; ++d) ASSERT_EQ(p.limb[d], ref.limb[d]) << what << " digit " << d;
  ASSERT_EQ(p.flags, ref.flags) << what;
}

// The exact integer of a list of terms, one deposit each, and the state's
// partial (expect_same_sum).
template <class Acc>
void expect_same_integer(const typename Acc::State& st, const std::vector<double>& terms, const std::string& what) {
  auto ref = Acc::identity();
  for (double t : terms) Acc::deposit(ref, t);
  Acc::carry(ref);
  expect_same_sum<Acc>(Acc::partial(st), ref, what);
}

// Products of fp16 in dot (not split: ExactLayout's SplitProducts): the double
// run, its TwoSum errors in a checked second double, the integer for the rest;
// the same integer as one deposit per product, for random products (errors
// that fit and errors that do not), cancellations, zeros of both signs,
// infinities and NaN.
TEST(ExactAccumulator, ProductRunWithTwoSumErrorsIsExact) {
  using F = Fp16Format;
  using Acc = ExactSum<F, true, false>;
  static_assert(std::is_same_v<Acc, ExactSumOf<Acc::low, Acc::digits, 0, 32, -1, true, true>>);
  const float inf = std::numeric_limits<float>::infinity(), big = float(F::max_finite()),
              tiny = float(F::min_subnormal());
  std::vector<std::vector<std::pair<float, float>>> cases = {
      {{1.0f, 1.0f}, {0x1p-12f, 0x1p-12f}, {-1.0f, 1.0f}},
      {{-0.0f, 1.0f}, {-0.0f, 2.0f}},
      {{0.0f, -1.0f}, {-0.0f, 1.0f}},
      {{3.0f, inf}, {1.0f, 1.0f}},
      {{3.0f, inf}, {-1.0f, inf}},
      {{std::numeric_limits<float>::quiet_NaN(), 1.0f}},
      {{big, big}, {tiny, tiny}, {-big, big}}};
  std::uint64_t s = 4242;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::pair<float, float>> c(1 + test::mix(s) % 2000);
    for (auto& [x, y] : c) {
      x = float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
      y = float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
      if (!std::isfinite(x) || !std::isfinite(y)) x = y = 1.0f;  // specials are the cases above
    }
    cases.push_back(c);
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    auto st = Acc::start();
    std::vector<double> terms;
    for (auto [x, y] : cases[k]) {
      Acc::add(st, Acc::product(x, y));
      terms.push_back(double(x) * double(y));
    }
    expect_same_integer<Acc>(st, terms, "case " + std::to_string(k));
  }
}

// Products of fp32 and bf16 (squares and dot alike) go to two exact runs
// split on a grid that follows a window of exponents (exact_sum.hpp,
// Window). Against one deposit per term: terms at both edges of the window
// and just outside, runs filled past their length with the terms that
// stretch them most (the largest of P significant bits at the top, the
// finest at the bottom, both signs), windows moved up by growing terms,
// zeros, infinities and NaN, and random products over narrow and wide
// exponent ranges.
template <class F>
void expect_window_runs_exact() {
  using Acc = ExactSum<F, true>;
  static_assert(Acc::window && std::is_same_v<Acc, ExactSum<F, true, false>>, "squares and dot alike");
  constexpr int W = 8;
  static_assert(Acc::template groups<W> && !Acc::template groups<2 * W>, "groups of up to 8 terms");
  constexpr int P = 2 * (F::man_bits + 1);
  const double full = std::ldexp(std::ldexp(1.0, P) - 1.0, -(P - 1));  // P bits set, in [1, 2)
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // The window after a first term 2^e0 spans exponents [lo, hi].
  const int e0 = 3, hi = e0 + Acc::kHeadroom, lo = hi - Acc::kWindowWidth;
  std::vector<std::vector<double>> cases = {
      {-0.0, -0.0},
      {-0.0, 0.0, -0.0},
      {1.0, -0.0},
      {1.0, inf, 2.0},
      {1.0, inf, -inf},
      {nan, 1.0},
      {1.0, -1.0},
      {std::ldexp(1.0, e0), std::ldexp(full, hi), std::ldexp(full, lo), -std::ldexp(full, lo)},
      {std::ldexp(1.0, e0), std::ldexp(1.0, hi + 1), std::ldexp(full, lo - 1), std::ldexp(1.0, lo)},
      {std::ldexp(1.0, e0), std::ldexp(full, lo - 1), std::ldexp(1.0, e0)}};
  std::uint64_t s = 4243;
  auto significand = [&] {  // P random bits, in [1, 2)
    return std::ldexp(double((std::uint64_t(1) << (P - 1)) | (test::mix(s) >> (65 - P))), -(P - 1));
  };
  // Runs that stretch the split's two sums to 53 bits: the hi parts of terms
  // at the window's top (random significands: a sum of 2^L of them needs
  // every bit up to 2^(S + 53)), and the lo parts of terms just below half a
  // grid step (each lo nearly 2^(S - 1)) with one term of the finest quantum,
  // at the bottom, per run. One binade more at either edge rounds them.
  const int S = lo - (Acc::kRunLog2 - 55 + P);
  const double big_lo = lo >= S ? std::ldexp(1.0, lo) + std::ldexp(1.0, S - 1) - std::ldexp(1.0, lo - P + 1)
                                : std::ldexp(1.0, S - 1) - std::ldexp(1.0, S - P);
  for (double sign : {1.0, -1.0}) {
    std::vector<double> tops = {std::ldexp(1.0, e0)}, los = tops, below = tops;
    for (std::uint32_t i = 1; i < 3 * Acc::fast_every + 5; ++i) {
      tops.push_back(sign * std::ldexp(significand(), hi));
      los.push_back(sign * (i % Acc::fast_every == 0 ? std::ldexp(full, lo) : big_lo));
      below.push_back(sign * (i % Acc::fast_every == 0 ? std::ldexp(full, lo - 1) : big_lo));
    }
    cases.push_back(tops);
    cases.push_back(los);
    cases.push_back(below);
  }
  std::vector<double> growing, shrinking;  // the window moves up with the terms; shrinking ones fall out of it
  for (int e = -200; e <= 200; e += 3) growing.push_back(std::ldexp(full, e));
  for (int e = 200; e >= -200; e -= 3) shrinking.push_back(std::ldexp(full, e));
  cases.push_back(growing);
  cases.push_back(shrinking);
  const float big = float(F::max_finite()), tiny = float(F::min_subnormal());
  cases.push_back({Acc::product(big, big), Acc::product(tiny, tiny), Acc::product(-big, big), Acc::product(tiny, big)});
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> c(1 + test::mix(s) % (trial % 10 == 0 ? 5000 : 1500));
    const double span = trial % 3 == 0 ? 2.0 * F::emax : (trial % 3 == 1 ? 40.0 : 4.0);  // exponent range
    auto r = [&] {  // a normal value of F
      const double m = 1.0 + double(test::mix(s) % (1u << F::man_bits)) / double(1u << F::man_bits);
      const int e = std::clamp(int(test::uniform01(s) * span - span / 2), F::emin, F::emax);
      return float((test::mix(s) & 1 ? -1.0 : 1.0) * std::ldexp(m, e));
    };
    for (double& t : c) {
      const float x = r(), y = trial % 2 ? x : r();
      t = Acc::product(x, y);
      ASSERT_EQ(t, double(x) * double(y));
    }
    cases.push_back(c);
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    auto one = Acc::start(), g = Acc::start();
    const auto& c = cases[k];
    for (double t : c) Acc::add(one, t);
    expect_same_integer<Acc>(one, c, "case " + std::to_string(k) + ", term by term");
    // In groups of W after an odd start, so that groups straddle the runs'
    // ends and the window's moves.
    std::size_t i = 0;
    for (; i < std::min<std::size_t>(c.size(), 3); ++i) Acc::add(g, c[i]);
    for (; i + W <= c.size(); i += W) Acc::template add_group<W>(g, &c[i]);
    for (; i < c.size(); ++i) Acc::add(g, c[i]);
    expect_same_integer<Acc>(g, c, "case " + std::to_string(k) + ", in groups");
  }
}

TEST(ExactAccumulator, ProductWindowRunsAreExact) {
  static_assert(ExactLayout<Fp32Format, true>::window && ExactLayout<Bf16Format, true>::window);
  static_assert(!ExactLayout<Fp16Format, true, false>::window && !ExactLayout<Fp8E5M2Format, true, false>::window);
  expect_window_runs_exact<Fp32Format>();
  expect_window_runs_exact<Bf16Format>();
}

// Products of fp16 and fp8_e5m2 go to two exact runs, split on a grid
// (exact_sum.hpp, Split), and fp8_e4m3 products to one, both a vector at a
// time; against one deposit per exact product: signed zeros alone and mixed,
// infinities of one and of both signs, NaN, 0 * inf, the largest products
// for more terms than a run holds, and random products over the whole range.
template <class F, int W>
void expect_product_runs_exact() {
  using Acc = ExactSum<F, true>;
  static_assert(Acc::template groups<W>, "products of narrow formats are added a vector at a time");
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float big = float(F::max_finite()), tiny = float(F::min_subnormal());
  std::vector<std::vector<std::pair<float, float>>> cases = {
      {{-0.0f, 1.0f}, {0.0f, -2.0f}, {-0.0f, -0.0f}},  // -0 + -0 + +0: +0
      {{-0.0f, 1.0f}, {0.0f, -2.0f}},                  // -0 alone: -0
      {{big, big}, {-big, big}, {tiny, tiny}},
      {{inf, 1.0f}, {big, big}, {tiny, -tiny}},
      {{inf, 1.0f}, {-inf, 1.0f}},
      {{nan, 1.0f}, {1.0f, 1.0f}},
      {{0.0f, inf}, {1.0f, 1.0f}},
      {{1.0f, tiny}, {-1.0f, tiny}}};
  // Ties of add_float_products' cut (e4m3: the grid 2^3), 6 groups of them:
  // products 4, 12, -4, -12, 20, and a small one.
  const std::pair<float, float> ties[] = {{2.0f, 2.0f}, {2.0f, 6.0f},  {-4.0f, 1.0f},
                                          {3.0f, -4.0f}, {4.0f, 5.0f}, {0.5f, 0.5f}};
  cases.emplace_back();
  for (int k = 0; k < 6 * W; ++k) cases.back().push_back(ties[k % 6]);
  cases.emplace_back(2 * W, std::pair<float, float>{-0.0f, 1.0f});  // whole groups of -0: -0
  cases.emplace_back(2 * W, std::pair<float, float>{-0.0f, 1.0f});
  cases.back()[W + 3] = {0.0f, 1.0f};  // and one +0 in the second: +0
  // Runs filled to their length with the terms that stretch them most: the
  // largest product, the smallest, 2^S (the least hi) and 2^(S - 1) (the
  // largest lo), S the split's grid.
  const int at = Acc::split_at;
  const std::pair<float, float> least_hi{std::ldexp(1.0f, at - at / 2), std::ldexp(1.0f, at / 2)},
      largest_lo{std::ldexp(1.0f, (at - 1) - (at - 1) / 2), std::ldexp(1.0f, (at - 1) / 2)};
  for (float sign : {1.0f, -1.0f}) {
    const std::pair<float, float> pattern[] = {{big, sign * big}, least_hi, largest_lo, {tiny, tiny}};
    std::vector<std::pair<float, float>> longest(std::size_t(Acc::fast_every) * 2 + 2 * W + 3);
    for (std::size_t i = 0; i < longest.size(); ++i) longest[i] = pattern[i % 4];
    cases.push_back(longest);
  }
  // Split runs that would outgrow their length without a spill: seven of
  // the largest products to one of 2^S (hi), seven of the largest lo to the
  // smallest product (lo), one sign, three runs' worth. A run that does not
  // spill in time loses the light term's bit.
  if constexpr (ExactLayout<F, true>::split) {
    const std::pair<float, float> largest{big, big}, smallest{tiny, tiny};
    for (const auto& [heavy, light] : {std::pair{largest, least_hi}, std::pair{largest_lo, smallest}}) {
      std::vector<std::pair<float, float>> c(std::size_t(Acc::fast_every) * 3 + W + 1);
      for (std::size_t i = 0; i < c.size(); ++i) c[i] = i % 8 == 7 ? light : heavy;
      cases.push_back(c);
    }
  }
  // Split products cut in float a vector at a time (e5m2, add_float_products
  // on the grid 2^S'): lo at its largest, 2^(S' - 1), by ties that round
  // down (products 2^(S' - 1) and 5 2^(S' - 1): lo +2^(S' - 1)) and up
  // (3 2^(S' - 1): lo -2^(S' - 1)), for more terms than a run holds, with
  // the largest products beside them (hi at its largest) and alone.
  if constexpr (Acc::template float_hi_groups<W>) {
    const int g = Acc::template float_hi_at<W>, h = g - 1, a = h / 2;
    const std::pair<float, float> down{std::ldexp(1.0f, a), std::ldexp(1.0f, h - a)},
        down5{std::ldexp(1.25f, a), std::ldexp(1.0f, h - a)}, up{std::ldexp(1.5f, a), std::ldexp(1.0f, h - a)},
        largest{big, big};
    ASSERT_EQ(double(down.first) * down.second, std::ldexp(1.0, h));
    // More terms than three runs hold (each lo counts float_hi_weight terms).
    const std::size_t runs3 = std::size_t(Acc::fast_every / Acc::template float_hi_weight<W>) * 3;
    using Products = std::vector<std::pair<float, float>>;
    for (float sign : {1.0f, -1.0f}) {
      auto signed_case = [&](Products c) {  // every product of one sign
        for (auto& p : c) p.first *= sign;
        cases.push_back(std::move(c));
      };
      for (const auto& pattern : {Products{down, down5, largest}, Products{up}, Products{largest}}) {
        Products longest(runs3 + 5 * W + 3);
        for (std::size_t i = 0; i < longest.size(); ++i) longest[i] = pattern[i % pattern.size()];
        signed_case(longest);
      }
      // err's last bit first, then lo at its largest for more terms than a
      // run holds: the last bit is lost where a run outgrows 2^(53 + Low).
      Products lasting(runs3 + W, down);
      lasting[0] = {tiny, tiny};
      signed_case(lasting);
      // A hi with the grid's last bit (3 2^S') beside W - 1 of the largest:
      // the float sum of the hi parts keeps it only on the grid 2^S'.
      Products widest(2 * W, largest);
      widest[0] = widest[W + 5] = {std::ldexp(1.5f, a + 1), std::ldexp(1.0f, g - a)};
      signed_case(widest);
    }
  }
  std::uint64_t s = 2718;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::pair<float, float>> c(1 + test::mix(s) % (trial % 10 == 0 ? 40000 : 600));
    for (auto& [x, y] : c) {
      x = float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
      y = float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
      if (!std::isfinite(x) || !std::isfinite(y)) x = y = big;  // specials are the cases above
    }
    cases.push_back(c);
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    auto one = Acc::start(), g = Acc::start();
    auto ref = Acc::identity();
    const auto& c = cases[k];
    for (auto [x, y] : c) {
      Acc::add(one, Acc::product(x, y));
      Acc::deposit(ref, double(x) * double(y));
    }
    std::size_t i = 0;
    for (; i + W <= c.size(); i += W) {
      double t[W];
      for (int j = 0; j < W; ++j) t[j] = Acc::product(c[i + j].first, c[i + j].second);
      Acc::template add_group<W>(g, t);
    }
    for (; i < c.size(); ++i) Acc::add(g, Acc::product(c[i].first, c[i].second));
    // And through add_product_group, as SumReducer adds a vector of products
    // (e4m3 and e5m2: cut in float, add_float_products).
    auto f = Acc::start();
    for (i = 0; i + W <= c.size(); i += W) {
      float xs[W], ys[W];
      for (int j = 0; j < W; ++j) std::tie(xs[j], ys[j]) = c[i + j];
      add_product_group<Acc, W>(f, xs, ys);
    }
    for (; i < c.size(); ++i) Acc::add(f, Acc::product(c[i].first, c[i].second));
    // And fp16's through add_split_products, as mean_var adds its squares
    // (the other formats: the single adds again).
    auto fs = one;
    if constexpr (Acc::template split_product_groups<W>) {
      fs = Acc::start();
      for (i = 0; i + W <= c.size(); i += W) {
        float xs[W], ys[W];
        for (int j = 0; j < W; ++j) std::tie(xs[j], ys[j]) = c[i + j];
        Acc::template add_split_products<W>(fs, xs, ys);
      }
      for (; i < c.size(); ++i) Acc::add(fs, Acc::product(c[i].first, c[i].second));
    }
    Acc::carry(ref);
    for (const auto& p : {Acc::partial(one), Acc::partial(g), Acc::partial(f), Acc::partial(fs)}) {
      expect_same_sum<Acc>(p, ref, "case " + std::to_string(k));
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(ExactAccumulator, ProductRunsOfNarrowFormatsAreExact) {
  static_assert(ExactLayout<Fp16Format, true>::split && ExactLayout<Fp8E5M2Format, true>::split);
  static_assert(std::is_same_v<ExactSum<Fp8E5M2Format, true, false>, ExactSum<Fp8E5M2Format, true>>,
                "e5m2 dot splits its products as its squares");
  static_assert(!ExactLayout<Fp16Format, true, false>::split, "fp16 dot keeps TwoSum");
  static_assert(!ExactLayout<Fp8E4M3Format, true>::split, "e4m3 products fit one exact run");
  static_assert(ExactSum<Fp8E4M3Format, true>::float_split_groups<16>, "and are split in float a vector at a time");
  static_assert(ExactSum<Fp8E5M2Format, true>::float_hi_groups<16>, "e5m2's hi parts add in float a vector at a time");
  static_assert(!ExactSum<Fp16Format, true>::float_hi_groups<8>, "fp16's lo parts would not fit its runs");
  static_assert(ExactSum<Fp16Format, true>::split_product_groups<8>, "mean_var splits them inside fma");
  static_assert(!ExactSum<Fp8E5M2Format, true>::split_product_groups<16>);
  static_assert(ExactSum<Fp8E4M3Format, true>::double_product_groups<16> &&
                ExactSum<Fp8E5M2Format, true>::double_product_groups<16> &&
                ExactSum<Fp16Format, true>::double_product_groups<8>, "products of doubles into the runs by fma");
  static_assert(!ExactSum<Fp32Format, true>::double_product_groups<4> &&
                !ExactSum<Bf16Format, true>::double_product_groups<8>, "not through a window or checked adds");
  static_assert(!ExactLayout<Fp32Format, true>::split && !ExactLayout<Bf16Format, true>::split);
  expect_product_runs_exact<Fp16Format, 8>();
  expect_product_runs_exact<Fp8E5M2Format, 16>();
  expect_product_runs_exact<Fp8E4M3Format, 16>();
}

// The GPU's first pass keeps the digits in shared memory (LimbsOutside,
// exact_sum.hpp): the same stream of values, vectors and single ones, gives
// the same partial as the digits in the state, for every format and term kind
// and mean_var's two sums, through spills of every kind (runs filled, the
// window moved, checked additions that would round, infinities and NaN). The
// slice lies between inaccessible pages (GuardedSlice): any access outside it
// faults.
// A value of F: anywhere in the format (an infinity or NaN one time in
// eight that the code gives one), or in [1/16, 16) where runs stay exact.
template <class F>
float value_of(std::uint64_t& s, bool narrow) {
  if (narrow) {
    const double v = (test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(test::uniform01(s) * 8 - 4);
    return float(decode<F>(encode<F>(v, Saturation::satfinite)));
  }
  for (;;) {
    float x;
    if constexpr (F::bits == 32) x = std::bit_cast<float>(std::uint32_t(test::mix(s)));
    else x = float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
    if (std::isfinite(x) || test::mix(s) % 8 == 0) return x;
  }
}

template <int D>
void expect_same_integer(const LongInteger<D>& a, const LongInteger<D>& b, int trial) {
  for (int k = 0; k < D; ++k) ASSERT_EQ(a.limb[k], b.limb[k]) << "trial " << trial << " digit " << k;
  ASSERT_EQ(a.flags, b.flags) << "trial " << trial;
}
template <class P1, class P2>
void expect_same_integer(const ExactMomentsPartial<P1, P2>& a, const ExactMomentsPartial<P1, P2>& b, int trial) {
  expect_same_integer(a.p1, b.p1, trial);
  expect_same_integer(a.p2, b.p2, trial);
}

// Memory for one thread's digits between two inaccessible pages, at the
// start of its page (AtEnd false) or ending at its end (true): a read or
// write outside the slice, even one that adds zero, faults.
class GuardedSlice {
 public:
  GuardedSlice(std::size_t limbs, bool at_end) {
    page_ = std::size_t(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = limbs * sizeof(std::int64_t);
    if (bytes > page_) throw std::logic_error("a slice larger than a page");
    base_ = static_cast<char*>(mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    if (mprotect(base_, page_, PROT_NONE) != 0 || mprotect(base_ + 2 * page_, page_, PROT_NONE) != 0)
      throw std::runtime_error("mprotect failed");
    limbs_ = reinterpret_cast<std::int64_t*>(base_ + page_ + (at_end ? page_ - bytes : 0));
  }
  ~GuardedSlice() { munmap(base_, 3 * page_); }
  GuardedSlice(const GuardedSlice&) = delete;
  GuardedSlice& operator=(const GuardedSlice&) = delete;
  std::int64_t* limbs() const { return limbs_; }

 private:
  std::size_t page_;
  char* base_;
  std::int64_t* limbs_;
};

template <class F, class R, class Outside, int W>
void expect_digits_outside_give_the_same_partial() {
  static_assert(Outside::limbs_outside > 0 && R::limbs_outside == 0);
  static_assert(std::is_same_v<typename R::Partial, typename Outside::Partial>);
  std::uint64_t s = 4242;
  const typename R::Params pr{};
  for (int trial = 0; trial < 40; ++trial) {
    const GuardedSlice memory(Outside::limbs_outside, trial % 2 == 0);
    auto in = R::start();
    auto out = Outside::start();
    Outside::place_limbs(out, memory.limbs());
    // Past the longest run (fp16 values: 2^13 terms) one trial in eight;
    // narrow values (long exact runs, small sums) in odd trials.
    const int n = trial % 8 == 0 ? 20000 + int(test::mix(s) % 1000) : int(test::mix(s) % 600);
    const bool narrow = trial % 4 == 1 || trial % 4 == 2;
    float x[W], y[W];
    for (int i = 0; i < n;) {
      const int w = test::mix(s) % 3 == 0 ? 1 : W;
      for (int j = 0; j < w; ++j) {
        x[j] = value_of<F>(s, narrow);
        y[j] = value_of<F>(s, narrow);
      }
      i += w;
      if constexpr (R::template adds_groups<W>) {
        if (w == W) {
          R::template add_group<W>(in, x, y, pr);
          // The tree kernels' fp8 values come as doubles (add_values_by).
          if constexpr (Outside::template takes_values_by<W>) {
            Outside::template add_values_by<W>(out, [&](int j) { return double(x[j]); });
            continue;
          }
          Outside::template add_group<W>(out, x, y, pr);
          continue;
        }
      }
      for (int j = 0; j < w; ++j) {
        R::add(in, x[j], y[j], pr);
        Outside::add(out, x[j], y[j], pr);
      }
    }
    expect_same_integer(R::partial(in), Outside::partial(out), trial);
    if (testing::Test::HasFatalFailure()) return;
  }
}

template <class F, int W>
void expect_digits_outside_for_format() {
  using Sum = ExactSum<F, false>;
  using Sq = ExactSum<F, true>;
  using Dot = ExactSum<F, true, false>;
  expect_digits_outside_give_the_same_partial<F, SumReducer<Sum, TermKind::value>,
                                              SumReducer<typename Sum::WithLimbsOutside, TermKind::value>, W>();
  expect_digits_outside_give_the_same_partial<F, SumReducer<Sq, TermKind::square>,
                                              SumReducer<typename Sq::WithLimbsOutside, TermKind::square>, W>();
  expect_digits_outside_give_the_same_partial<F, SumReducer<Dot, TermKind::product>,
                                              SumReducer<typename Dot::WithLimbsOutside, TermKind::product>, W>();
  expect_digits_outside_give_the_same_partial<F, ExactMomentsReducer<F>, ExactMomentsReducer<F, true>, W>();
}

// mean_var's values as doubles (add_values_by, the tree kernels' path for
// fp8) through runs that would outgrow their length without a spill: seven
// of the largest values to one light one, the light ones alternately the
// smallest value (its bit in the values' run, and its square's in an unsplit
// squares' run) and, where squares are split, the one whose square is the
// split's grid 2^S (its bit in the squares' hi run), three runs' worth of the
// longer run that fits in memory; the same integers as value-by-value adds.
template <class F, int W>
void expect_moments_values_by_spill_in_time() {
  using R = ExactMomentsReducer<F, true>;
  static_assert(R::template takes_values_by<W>);
  const GuardedSlice memory(R::limbs_outside, false);
  auto by = R::start();
  R::place_limbs(by, memory.limbs());
  auto one = ExactMomentsReducer<F>::start();
  constexpr bool split = R::A2::template double_split_groups<W>;
  const double big = F::max_finite(), tiny = F::min_subnormal();
  const double grid = split ? std::ldexp(1.0, R::A2::split_at / 2) : tiny;
  if (split) {
    ASSERT_EQ(grid * grid, std::ldexp(1.0, R::A2::split_at));
  }
  // (e4m3's values' run, 2^30 terms, is too long to fill here: the squares'.)
  const std::uint32_t runs =
      R::A1::fast_every <= (1u << 22) ? std::max(R::A1::fast_every, R::A2::fast_every) : R::A2::fast_every;
  std::vector<double> x(std::size_t(runs) * 3 + W);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 8 != 7 ? big : ((i / 8) % 2 ? tiny : grid);
  for (std::size_t k = 0; k + W <= x.size(); k += W)
    R::template add_values_by<W>(by, [&](int j) { return x[k + j]; });
  for (double v : x) ExactMomentsReducer<F>::add(one, float(v), 0.0f, {});
  expect_same_integer(ExactMomentsReducer<F>::partial(one), R::partial(by), 0);
}

TEST(ExactAccumulator, MomentsValuesAsDoublesSpillInTime) {
  expect_moments_values_by_spill_in_time<Fp16Format, 8>();
  expect_moments_values_by_spill_in_time<Fp8E5M2Format, 16>();
  expect_moments_values_by_spill_in_time<Fp8E4M3Format, 16>();
}

TEST(ExactAccumulator, DigitsOutsideTheStateGiveTheSamePartial) {
  expect_digits_outside_for_format<Fp32Format, 4>();
  expect_digits_outside_for_format<Fp16Format, 8>();
  expect_digits_outside_for_format<Bf16Format, 8>();
  expect_digits_outside_for_format<Fp8E4M3Format, 16>();
  expect_digits_outside_for_format<Fp8E5M2Format, 16>();
}

// x dealt to the states st as a block's threads take it: each value to a
// random state, 16 at once through A::add_group<16> (three turns in four,
// where the segment has room) or one through A::add, flush() after every
// `segment` values and at the end.
template <class A, class Flush>
void deal_in_segments(const std::vector<float>& x, std::vector<typename A::State>& st, std::size_t segment,
                      std::uint64_t& s, Flush flush) {
  std::size_t i = 0, in_segment = 0;
  while (i < x.size()) {
    auto& mine = st[test::mix(s) % st.size()];
    if (test::mix(s) % 4 != 0 && i + 16 <= x.size() && in_segment + 16 <= segment) {
      A::template add_group<16>(mine, x.data() + i);
      i += 16;
      in_segment += 16;
    } else {
      A::add(mine, x[i++]);
      ++in_segment;
    }
    if (in_segment == segment) {
      flush();
      in_segment = 0;
    }
  }
  flush();
}

// The squares of bf16 in bins of double (exact_binned_squares.hpp; the tree
// kernels' first pass of exact sumsq, norm2, rms of bf16, block_bins.cuh)
// give the integer of one deposit per square, and the partial of the reducer
// the models run (SumReducer of the same Acc), when a block's threads add
// them in segments of at most `segment` squares (run_terms at most), each
// followed by a flush as the GPU's: gather_warp for every warp and lane, then
// spill_warps for every lane, then the 32 integers merged. Cases: no terms,
// -0 alone, zeros, infinities, NaN, subnormals, each bin's largest and
// smallest squares, a bin filled three times over in segments of run_terms
// (a longer segment loses the light squares' last bit), random values of
// every field in random segments, in groups and one at a time; the bins
// strided wider than the block, the memory between them left alone, every
// bin left at -0.
template <class B, class Acc>
void expect_binned_squares(const std::vector<float>& x, int threads, std::size_t segment, std::uint64_t& s,
                           const std::string& what) {
  using Integer = typename B::Integer;
  constexpr int kLanes = 32;
  constexpr double kUntouched = 12.5;
  const unsigned stride = unsigned(threads) + 32;
  std::vector<double> memory(std::size_t(B::bins) * stride, kUntouched);
  std::vector<std::int64_t> digits(std::size_t(kLanes) * Integer::digits + 1, 77);
  std::vector<typename B::State> st(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) B::place_bins(st[std::size_t(t)], memory.data() + t, stride);
  std::vector<typename Integer::State> lane(kLanes, Integer::start());
  for (int l = 0; l < kLanes; ++l) Integer::place_limbs(lane[std::size_t(l)], digits.data() + l * Integer::digits);
  auto flush = [&] {
    for (int w = 0; w < threads / kLanes; ++w)
      for (int l = 0; l < kLanes; ++l) B::gather_warp(memory.data(), stride, l, w);
    for (int l = 0; l < kLanes; ++l) B::spill_warps(memory.data(), stride, threads / kLanes, l, lane[std::size_t(l)]);
  };
  deal_in_segments<B>(x, st, segment, s, flush);
  auto got = Acc::identity();
  for (int l = 0; l < kLanes; ++l) Acc::merge(got, Integer::partial(lane[std::size_t(l)]));
  auto model = Acc::start();
  for (float v : x) add_product<Acc>(model, v, v);
  auto ref = Acc::identity();
  for (float v : x) Acc::deposit(ref, double(v) * double(v));
  Acc::carry(ref);
  expect_same_sum<Acc>(got, ref, what);
  if (testing::Test::HasFatalFailure()) return;
  expect_same_sum<Acc>(Acc::partial(model), ref, what + ": the model");
  if (testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(digits.back(), 77) << what << ": memory after the digits";
  for (std::size_t k = 0; k < memory.size(); ++k) {
    if (k % stride >= std::size_t(threads)) {
      ASSERT_EQ(memory[k], kUntouched) << what << ": memory between the bins";
    } else {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(memory[k]), std::bit_cast<std::uint64_t>(-0.0)) << what << ": a bin left";
    }
  }
}

TEST(ExactAccumulator, BinnedSquaresGiveTheSameInteger) {
  using F = Bf16Format;
  using Acc = ExactSum<F, true>;
  using B = ExactBinnedSquares<F, Acc>;
  static_assert(B::bins == 32 && B::run_terms == (1u << 23));
  // The tree kernels' segments: the most vectors of W per thread that, with
  // a tail element, keep a block's squares within run_terms.
  for (int threads = 32; threads <= 512; threads += 32)
    for (int w : {1, 4, 8}) {
      const std::int64_t v = B::segment_vectors(threads, w);
      EXPECT_LE((v * w + 1) * threads, std::int64_t(B::run_terms)) << threads << " threads, " << w;
      EXPECT_GT(((v + 1) * w + 1) * threads, std::int64_t(B::run_terms)) << threads << " threads, " << w;
    }
  auto bf = [](std::uint32_t bits) { return float(decode<F>(bits)); };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::uint64_t s = 8128;
  std::vector<std::vector<float>> cases = {
      {}, {-0.0f}, {-0.0f, 0.0f, -0.0f}, {inf}, {-inf, 1.0f}, {nan, 2.0f}, {inf, -inf}, {bf(1), bf(0x7F), bf(0x80)},
      {bf(F::max_bits), bf(F::max_bits), bf(1), -bf(F::max_bits)}};
  // Each bin's extremes: the largest value of its top field, the least
  // significant square of its bottom one.
  std::vector<float> extremes;
  for (std::uint32_t b = 0; b < 32; ++b) {
    const std::uint32_t top = std::min<std::uint32_t>(8 * b + 7, 254), bottom = 8 * b;
    extremes.push_back(bf(top << 7 | 0x7F));
    extremes.push_back(-bf(bottom << 7 | 1));
  }
  cases.push_back(extremes);
  const std::size_t specials = cases.size();
  // Bins filled three times over: seven of the bin's largest squares to one
  // whose square is an odd multiple of its quantum.
  for (std::uint32_t b : {0u, 15u, 16u, 31u}) {
    const float heavy = bf(std::min<std::uint32_t>(8 * b + 7, 254) << 7 | 0x7F), light = bf((8 * b) << 7 | 1);
    std::vector<float> c(std::size_t(B::run_terms) * 3 + 17);
    for (std::size_t k = 0; k < c.size(); ++k) c[k] = k % 8 == 7 ? light : heavy;
    cases.push_back(std::move(c));
  }
  const std::size_t filled = cases.size();
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> c(test::mix(s) % (trial % 10 == 0 ? 40000 : 700));
    for (auto& v : c) {
      v = bf(std::uint32_t(test::mix(s) % (1u << F::bits)));
      if (trial % 4 != 0 && !std::isfinite(v)) v = bf(F::max_bits);  // specials in one trial in four
    }
    cases.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const int threads = 32 * int(1 + k % 3);
    const std::size_t segment = k < specials || (k >= filled && k % 2 == 0)
                                    ? 1 + test::mix(s) % 300
                                    : (k < filled ? B::run_terms : B::run_terms - test::mix(s) % 100);
    expect_binned_squares<B, Acc>(cases[k], threads, segment, s,
                                  "case " + std::to_string(k) + " threads " + std::to_string(threads) + " segment " +
                                      std::to_string(segment));
    if (testing::Test::HasFatalFailure()) return;
  }
}

// The values of bf16 in runs on windows that follow the data, their spills
// into one integer that a block's threads share (exact_value_window.hpp;
// the tree kernels' first pass of exact mean_var of bf16, block_bins.cuh)
// give the integer of one deposit per value, and the partial of the
// accumulator the models run (Acc's checked additions), when `threads`
// states take the values in random turns, in groups of 16 and one at a
// time, every run spilled and the integer carried after each segment of
// `segment` values, as the GPU's flushes do. The words after the integer are
// left alone.
template <class V, class Acc>
void expect_value_window(const std::vector<float>& x, int threads, std::size_t segment, std::uint64_t& s,
                         const std::string& what) {
  std::vector<std::int64_t> words(V::words + 1, 77);
  V::zero_integer(words.data(), 0, 1);
  std::vector<typename V::State> st(static_cast<std::size_t>(threads), V::start());
  for (auto& t : st) V::place_integer(t, words.data());
  auto flush = [&] {
    for (auto& t : st) V::spill_run(t);
    V::carry_integer(words.data());
  };
  deal_in_segments<V>(x, st, segment, s, flush);
  ASSERT_EQ(words.back(), 77) << what << ": memory after the integer";
  auto got = V::partial_of(words.data());
  Acc::carry(got);
  auto ref = Acc::identity();
  for (float v : x) Acc::deposit(ref, double(v));
  Acc::carry(ref);
  auto model = Acc::start();
  for (float v : x) Acc::add(model, Acc::term(v));
  expect_same_sum<Acc>(got, ref, what);
  if (testing::Test::HasFatalFailure()) return;
  expect_same_sum<Acc>(Acc::partial(model), ref, what + ": the model");
}

TEST(ExactAccumulator, ValueWindowsGiveTheSameInteger) {
  using F = Bf16Format;
  using Acc = ExactSum<F, false>;
  using V = ExactValueWindow<F, Acc>;
  static_assert(V::kWidth == 36 && V::kHeadroom == 9 && V::run_terms == 1024);
  auto bf = [](std::uint32_t bits) { return float(decode<F>(bits)); };
  auto p2 = [](int e) { return float(std::ldexp(1.0, e)); };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::uint64_t s = 6174;
  std::vector<std::vector<float>> cases = {
      {},
      {-0.0f},
      {-0.0f, 0.0f, -0.0f},
      {inf},
      {-inf, 1.0f},
      {nan, 2.0f},
      {inf, -inf},
      {1.0f, -1.0f},
      {bf(1), bf(0x7F), bf(0x80), -bf(1)},
      {bf(F::max_bits), bf(F::max_bits), bf(1), -bf(F::max_bits)},
      // The window's binades from a first value 2^0: 2^-26 .. 2^9, so in,
      // in, below; then above, moving them to 2^-16 .. 2^19: in, below.
      {1.0f, p2(9) * 1.9921875f, p2(-26), p2(-27) * 1.9921875f, -p2(10), p2(-16), p2(-17) * 1.5f},
      // Rising (each moves the window) and falling (each below it).
      {p2(-120), p2(-90), p2(-60), p2(-30), p2(0), p2(30), p2(60), p2(90), p2(120)},
      {p2(120), p2(90), p2(60), p2(30), p2(0), -p2(-30), p2(-60), p2(-90), p2(-120), bf(1)},
  };
  const std::size_t specials = cases.size();
  // Runs filled three times over with the window's largest values and its
  // least significant bit: 2^9 (1 + 127/128) and 2^-26 + 2^-33 (the grid
  // 2^S); again with 2^-27 + 2^-34, just below the window (in a run, it
  // would round).
  for (const float light : {p2(-26) * 1.0078125f, p2(-27) * 1.0078125f}) {
    std::vector<float> c(std::size_t(V::run_terms) * 3 + 17);
    for (std::size_t k = 0; k < c.size(); ++k) c[k] = k == 0 ? 1.0f : (k % 8 == 7 ? light : p2(9) * 1.9921875f);
    cases.push_back(std::move(c));
  }
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> c(test::mix(s) % (trial % 10 == 0 ? 40000 : 700));
    const bool everywhere = trial % 2 == 0;  // every field, else mostly 2^-4 .. 2^4 and a few far below
    for (auto& v : c) {
      if (everywhere) {
        v = bf(std::uint32_t(test::mix(s) % (1u << F::bits)));
        if (trial % 4 != 0 && !std::isfinite(v)) v = bf(F::max_bits);  // specials in one trial in four
      } else {
        const int e = test::mix(s) % 64 == 0 ? int(test::mix(s) % 100) - 130 : int(test::mix(s) % 9) - 4;
        v = bf(std::uint32_t(test::mix(s) & 0x807F) | std::uint32_t(std::max(e + 127, 0)) << 7);
      }
    }
    cases.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const bool filling = k >= specials && k < specials + 2;
    const int threads = filling ? 1 : 1 + int(k % 5) * 7;  // one thread fills the runs
    const std::size_t segment =
        filling ? std::size_t(1) << 23 : (k < specials || k % 2 == 0 ? 1 + test::mix(s) % 3000 : std::size_t(1) << 23);
    expect_value_window<V, Acc>(cases[k], threads, segment, s,
                                "case " + std::to_string(k) + " threads " + std::to_string(threads) + " segment " +
                                    std::to_string(segment));
    if (testing::Test::HasFatalFailure()) return;
  }
}

// kahan with products exact in float (fp16, fp8 inputs) fuses each product
// into TwoSum (compensated_sum.hpp): the same sum and compensation, bit for
// bit, as the rounded product added by the ordered Fast2Sum, over random
// values of the format (cancellations, zeros of both signs, subnormals), and
// NaN where that gives NaN (infinities).
template <class F>
void expect_fused_kahan_products_equal() {
  static_assert(ExactLayout<F, true>::float_products);
  using Fused = KahanSumOf<true>;
  using Plain = KahanSumOf<false>;
  std::uint64_t s = 31337;
  for (int trial = 0; trial < 2000; ++trial) {
    auto a = Fused::start();
    auto b = Plain::start();
    const int n = 1 + int(test::mix(s) % 300);
    for (int i = 0; i < n; ++i) {
      const float x = float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
      const float y = trial % 2 ? x : float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
      Fused::add_product(a, x, y);
      Plain::add(b, Plain::product(x, y));
    }
    if (std::isnan(b.s) || std::isnan(b.c)) {
      ASSERT_TRUE(std::isnan(a.s) || std::isnan(a.c)) << "trial " << trial;
      continue;
    }
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a.s), std::bit_cast<std::uint32_t>(b.s)) << "trial " << trial;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a.c), std::bit_cast<std::uint32_t>(b.c)) << "trial " << trial;
  }
}

TEST(KahanAccumulator, FusedExactProductsGiveTheSameBits) {
  expect_fused_kahan_products_equal<Fp16Format>();
  expect_fused_kahan_products_equal<Fp8E4M3Format>();
  expect_fused_kahan_products_equal<Fp8E5M2Format>();
}

// pairwise: a vector's balanced tree inserted at level log2(W) is the same
// tree as W single steps of the counter (pairwise_sum.hpp, add_group), for
// sums, squares and products, and for the two sums of mean_var.
template <int W>
void expect_pairwise_groups_equal_single_adds() {
  std::uint64_t s = 777 + W;
  for (int trial = 0; trial < 200; ++trial) {
    const int groups = 1 + int(test::mix(s) % 300);
    std::vector<float> x(std::size_t(groups) * W), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = float((test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(test::uniform01(s) * 40 - 20));
      y[i] = float(test::uniform01(s) * 2 - 1);
    }
    auto check = [&]<class R>(std::type_identity<R>) {
      static_assert(R::template adds_groups<W>);
      auto g = R::start(), one = R::start();
      for (int k = 0; k < groups; ++k) R::template add_group<W>(g, &x[k * W], &y[k * W], {});
      for (std::size_t i = 0; i < x.size(); ++i) R::add(one, x[i], y[i], {});
      auto pg = R::partial(g), po = R::partial(one);
      ASSERT_EQ(0, std::memcmp(&pg, &po, sizeof pg)) << "trial " << trial << " groups " << groups;
    };
    check(std::type_identity<SumReducer<PairwiseSum, TermKind::value>>{});
    check(std::type_identity<SumReducer<PairwiseSum, TermKind::square>>{});
    check(std::type_identity<SumReducer<PairwiseSum, TermKind::product>>{});
    check(std::type_identity<MomentsReducer<PairwiseSum>>{});
  }
}

TEST(PairwiseAccumulator, VectorGroupsBuildTheSameTree) {
  expect_pairwise_groups_equal_single_adds<4>();
  expect_pairwise_groups_equal_single_adds<8>();
  expect_pairwise_groups_equal_single_adds<16>();
  expect_pairwise_groups_equal_single_adds<32>();  // 4 vectors of 8 (loads in flight)
  expect_pairwise_groups_equal_single_adds<64>();  // 4 vectors of 16
}

// The carry chains (pairwise_sum.hpp: carry_low, a level per template
// instance, and carry_low_pair for mean_var's two sums) against the binary
// counter's carry written as a plain loop here: every level of both states
// (registers and the high levels alike), for carries that end at every level
// from L up to 31.
template <class P>
void carry_by_loop(typename P::State& st, float v, int from) {
  for (int k = from; k < 32; ++k) {
    if (((st.count >> k) & 1u) == 0) {
      st.at(k) = v;
      return;
    }
    v = rn::add(st.at(k), v);
  }
}
template <int L>
void expect_carry_chains_equal_the_loop(std::uint64_t& s) {
  using P = PairwiseSum;
  for (int trial = 0; trial < 600; ++trial) {
    const int ones = trial % (32 - L);  // occupied levels the carry passes
    const std::uint64_t run = ((std::uint64_t(1) << ones) - 1) << L;
    const std::uint64_t above = test::mix(s) & ~((std::uint64_t(2) << (L + ones)) - 1) & 0xFFFFFFFFull;
    const std::uint64_t c = run | above;
    P::State a = P::start(), b = P::start();
    for (int k = 0; k < 32; ++k) {
      a.at(k) = float(test::uniform01(s) * 2 - 1);
      b.at(k) = float(test::uniform01(s) * 64 - 32);
    }
    a.count = b.count = c;
    const float v = float(test::uniform01(s) * 4 - 2), w = float(test::uniform01(s) * 100);
    P::State chain = a, pair_a = a, pair_b = b, loop_a = a, loop_b = b;
    P::carry_low<L>(chain, v, c);
    P::carry_low_pair<L>(pair_a, v, pair_b, w, c);
    carry_by_loop<P>(loop_a, v, L);
    carry_by_loop<P>(loop_b, w, L);
    for (int k = 0; k < 32; ++k) {
      const auto bits = [](float f) { return std::bit_cast<std::uint32_t>(f); };
      ASSERT_EQ(bits(chain.at(k)), bits(loop_a.at(k))) << "carry_low, level " << k << ", count " << c;
      ASSERT_EQ(bits(pair_a.at(k)), bits(loop_a.at(k))) << "carry_low_pair, level " << k << ", count " << c;
      ASSERT_EQ(bits(pair_b.at(k)), bits(loop_b.at(k))) << "carry_low_pair, level " << k << ", count " << c;
    }
  }
}

TEST(PairwiseAccumulator, CarryChainsEqualTheLoop) {
  std::uint64_t s = 99;
  expect_carry_chains_equal_the_loop<0>(s);  // single terms (a thread's tail)
  expect_carry_chains_equal_the_loop<5>(s);  // groups of 32
  expect_carry_chains_equal_the_loop<6>(s);  // groups of 64
}

// Hard cases for the final rounding: ties, ties broken by a far sticky bit,
// results in the subnormal range and at the overflow threshold.
TEST(ExactModel, RoundsTiesStickyBitsSubnormalsAndOverflow) {
  struct Case {
    Dtype in, out;
    std::vector<double> x;
  };
  const std::vector<Case> cases = {
      {Dtype::fp32, Dtype::fp32, {1.0, 0x1p-24}},                     // tie: to even, 1
      {Dtype::fp32, Dtype::fp32, {1.0, 0x1p-24, 0x1p-149}},           // past the tie: up
      {Dtype::fp32, Dtype::fp32, {1.0, 0x1p-24, -0x1p-149}},          // below it: down
      {Dtype::fp32, Dtype::fp32, {1.0 + 0x1p-23, 0x1p-24}},           // tie: to even, up
      {Dtype::fp32, Dtype::fp16, {0x1p-24, 0x1p-26}},                 // subnormal fp16 result
      {Dtype::fp32, Dtype::fp16, {0x1p-25}},                          // half the least subnormal: 0
      {Dtype::fp32, Dtype::fp16, {0x1p-25, 0x1p-60}},                 // just above: least subnormal
      {Dtype::fp32, Dtype::fp16, {65504.0, 16.0}},                    // below the threshold: max
      {Dtype::fp32, Dtype::fp16, {65504.0, 16.0, 0x1p-100}},          // above: inf
      {Dtype::fp16, Dtype::fp16, {-0.0, -0.0}},                       // -0 kept
      {Dtype::fp16, Dtype::fp16, {-0.0, 0.0}},                        // +0
      {Dtype::fp32, Dtype::fp64, {0x1p100, 1.0, -0x1p100}},           // cancellation: exactly 1
  };
  for (const auto& c : cases) {
    const TypedArray x = make_array(c.in, std::int64_t(c.x.size()), [&](auto i) { return c.x[i]; });
    mpfr_t ex;
    test::exact_sum(ex, x, nullptr, false);
    const double want = c.x.size() == 2 && c.x[0] == -0.0 && std::signbit(c.x[0]) && std::signbit(c.x[1])
                            ? -0.0
                            : test::round_mpfr_to(ex, c.out);
    mpfr_clear(ex);
    const KernelSpec k = spec_of(Op::sum, c.in, Accumulator::exact, Shape::tree, c.out);
    for (const auto& cfg : launch_configs(k, x.size())) {
      const double got = run1(k, whole(Op::sum, x), cfg);
      EXPECT_EQ(got, want) << std::hexfloat << got << " vs " << want;
      EXPECT_EQ(std::signbit(got), std::signbit(want));
    }
  }
}

// exact mean_var: the mean and the population variance each rounded once,
// against MPFR's (n S2 - S1^2) / n^2 from the exact sums, on inputs over the
// whole range, at a large mean with a small spread (where E[x^2] - E[x]^2
// cancels every digit in floating point) and constant ones (variance +0), in
// every order and launch configuration.
TEST(ExactModel, MeanVarIsCorrectlyRoundedTwice) {
  for (Dtype in : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2})
    for (int dist = 0; dist < 3; ++dist)
      for (std::int64_t n : {0, 1, 2, 31, 33, 1023, 4097}) {
        const FormatInfo& f = format_info(in);
        std::uint64_t s = std::uint64_t(n) * 13 + unsigned(in) * 7 + unsigned(dist);
        const double center = std::exp2(std::floor(std::log2(f.max_finite)) - 3);  // large, in range
        auto gen = [&](auto) {
          if (dist == 2) return center;
          if (dist == 1) return center * (1 + (test::uniform01(s) - 0.5) * 0x1p-4);
          const double e = std::log2(f.min_subnormal) +
                           test::uniform01(s) * (std::log2(f.max_finite / 4) - std::log2(f.min_subnormal));
          return (test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(e);
        };
        const TypedArray x = make_array(in, n, gen);
        mpfr_t s1, s2, num;
        test::exact_sum(s1, x, nullptr, false);
        test::exact_sum(s2, x, nullptr, true);
        mpfr_init2(num, 2 * mpfr_get_prec(s2) + 128);
        mpfr_mul_si(num, s2, long(n), MPFR_RNDN);  // exact: the precision holds it
        mpfr_t sq;
        mpfr_init2(sq, 2 * mpfr_get_prec(s1));
        mpfr_sqr(sq, s1, MPFR_RNDN);  // exact
        ASSERT_EQ(mpfr_sub(num, num, sq, MPFR_RNDN), 0) << "the numerator must be exact";
        ASSERT_GE(mpfr_sgn(num), 0);
        for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
          const double nan = std::numeric_limits<double>::quiet_NaN();
          const double want_mean = n == 0 ? nan : test::round_mpfr_to(s1, out, long(n));
          const double want_var = n == 0 ? nan : test::round_mpfr_to(num, out, long(n * n));
          SCOPED_TRACE(std::string(to_string(in)) + " dist " + std::to_string(dist) + " n=" + std::to_string(n) +
                       " out=" + std::string(to_string(out)));
          if (dist == 2 && n > 0) {
            EXPECT_EQ(want_var, 0.0);
          }
          for (Shape shape : {Shape::serial, Shape::tree}) {
            const KernelSpec k = spec_of(Op::mean_var, in, Accumulator::exact, shape, out);
            ASSERT_FALSE(unsupported(k, Axis::all));
            for (const LaunchConfig& c : launch_configs(k, n)) {
              const auto r = run_model(k, whole(Op::mean_var, x), c);
              for (int j = 0; j < 2; ++j) {
                const double got = r.values.at(j), want = j == 0 ? want_mean : want_var;
                if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << j;
                else EXPECT_EQ(got, want) << (j == 0 ? "mean " : "var ") << std::hexfloat << got << " vs " << want;
              }
            }
          }
        }
        mpfr_clears(s1, s2, num, sq, (mpfr_ptr) nullptr);
      }
}

// The exact mean's division for counts on both sides of 2^32 (divide() has a
// 64-bit path below it and a 128-bit one above), against MPFR.
TEST(ExactModel, MeanDividesCountsOnBothSidesOf2To32) {
  using X = ExactSum<Fp32Format, false>;
  const std::vector<float> terms = {3.0f, 0x1p-149f, -0x1.8p100f, 0x1.fffffep127f, 1e-3f, -7.0f};
  const std::int64_t counts[] = {1, 3, 6, 0xFFFFFFFFll, 0x100000000ll, 0x100000007ll, 205891132094649ll,
                                 (std::int64_t(1) << 62) + 1};
  for (std::size_t m = 1; m <= terms.size(); ++m) {
    auto st = X::start();
    mpfr_t ex;
    mpfr_init2(ex, 8192);
    mpfr_set_zero(ex, 1);
    for (std::size_t i = 0; i < m; ++i) {
      X::add(st, terms[i]);
      mpfr_add_d(ex, ex, double(terms[i]), MPFR_RNDN);  // exact at 8192 bits
    }
    const auto p = X::partial(st);
    for (std::int64_t n : counts)
      for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
        SCOPED_TRACE("terms=" + std::to_string(m) + " n=" + std::to_string(n) + " " + std::string(to_string(out)));
        const double want = test::round_mpfr_to(ex, out, long(n));
        double total = 0;
        EXPECT_EQ(X::round_quotient(p, n, out_format(out), total), want);
        EXPECT_EQ(total, test::round_mpfr_to(ex, Dtype::fp64));  // the sum, from the same magnitude
      }
    mpfr_clear(ex);
  }
}

// The exact root's special cases, answered without rounding the integer
// (round_sqrt, round_rms): sqrt(+0) = +0, sqrt(-0) = -0 (the empty sum),
// sqrt(+inf) = +inf, sqrt(-inf) and sqrt(NaN) NaN, inf - inf NaN (IEEE 754,
// squareRoot); rms of an infinite or NaN sum is its root.
template <class X>
void expect_special_roots() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::vector<double> terms;
    double want;
  };
  const std::vector<Case> cases = {
      {{}, -0.0},         {{0.0}, 0.0},        {{-0.0, 0.0}, 0.0}, {{inf}, inf},       {{4.0, inf}, inf},
      {{-inf}, nan},      {{nan}, nan},        {{inf, -inf}, nan}, {{inf, nan}, nan},  {{4.0}, 2.0},
  };
  for (const Case& c : cases) {
    auto st = X::start();
    for (double t : c.terms) X::add(st, t);
    const auto p = X::partial(st);
    for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
      SCOPED_TRACE(std::to_string(c.terms.size()) + " terms, want " + std::to_string(c.want) + " in " +
                   std::string(to_string(out)));
      const double got = X::round_sqrt(p, out_format(out));
      if (std::isnan(c.want)) {
        EXPECT_TRUE(std::isnan(got));
      } else {
        EXPECT_EQ(got, c.want);
        EXPECT_EQ(std::signbit(got), std::signbit(c.want));
      }
      if (std::isinf(c.want) || std::isnan(c.want)) {
        double rms = 0.0;
        ASSERT_TRUE(X::round_rms(p, 3, 1e-6, out_format(out), rms));
        if (std::isnan(c.want)) EXPECT_TRUE(std::isnan(rms));
        else EXPECT_EQ(rms, c.want);
      }
    }
  }
}

TEST(ExactModel, RootsOfSpecialSums) {
  expect_special_roots<ExactSum<Fp32Format, true>>();  // the window
  expect_special_roots<ExactSum<Bf16Format, true>>();
  expect_special_roots<ExactSum<Fp16Format, true>>();  // split runs
  expect_special_roots<ExactSum<Fp8E5M2Format, true>>();
}

// X's partial of `terms`, one add each, and their exact sum in ex (set up
// here, 4096 bits: wide enough for every such list of doubles).
template <class X>
typename X::Partial partial_with_exact_sum(const std::vector<double>& terms, mpfr_t ex) {
  auto st = X::start();
  mpfr_init2(ex, 4096);
  mpfr_set_zero(ex, 1);
  for (double t : terms) {
    X::add(st, t);
    mpfr_add_d(ex, ex, t, MPFR_RNDN);
  }
  return X::partial(st);
}

// The exact root where rounding is hardest, against MPFR's correctly rounded
// root of the same integer: (m + 1/2)^2 (a tie between two neighbours of the
// output format, to even), that plus or minus a tiny term (just past the tie
// either way), and m^2 +- tiny (just either side of a representable root);
// m has the output's precision, scaled by powers of two over the integer's
// range. Every term is an exact double: m^2 as a product and its error (fma).
// The random sums of ExactModel land near such a boundary only by chance.
template <class X>
void expect_roots_near_boundaries(Dtype out) {
  const int p = format_info(out).precision;
  std::uint64_t s = 0x5eedu + unsigned(out);
  for (int i = 0; i < 400; ++i) {
    const double m = std::ldexp(double((test::mix(s) >> (64 - p + 1)) | (1ull << (p - 1))), 1 - p);  // [1, 2)
    const int k = -60 + int(test::mix(s) % 120);  // the root's binade
    const double h = (i & 1) ? std::ldexp(1.0, -p) : 0.0;  // half an ulp of m, or none
    const double mk = std::ldexp(m, k), hk = std::ldexp(h, k);
    const double sq = mk * mk, sq_err = std::fma(mk, mk, -sq);
    const int tiny_at = 2 * k - 2 * p - 1 - int(test::mix(s) % 40);
    for (int sign : {-1, 0, 1}) {
      mpfr_t ex;
      const auto part =
          partial_with_exact_sum<X>({sq, sq_err, 2 * mk * hk, hk * hk, sign * std::ldexp(1.0, tiny_at)}, ex);
      const double want = test::round_mpfr_to(ex, out, 1, true);
      SCOPED_TRACE(std::string(to_string(out)) + " m=" + std::to_string(m) + " k=" + std::to_string(k) +
                   " half=" + std::to_string(h != 0) + " tiny=" + std::to_string(sign) + "*2^" +
                   std::to_string(tiny_at));
      EXPECT_EQ(X::round_sqrt(part, out_format(out)), want);
      mpfr_clear(ex);
    }
  }
}

// integer_sqrt (round_sqrt's root of 125-126 bits) by its definition, r^2 <=
// t < (r + 1)^2: at perfect squares, one below and one above them, the
// range's ends and random values.
TEST(ExactModel, IntegerSquareRoots) {
  using X = ExactSum<Fp32Format, true>;
  using u128 = unsigned __int128;
  std::uint64_t s = 0x1507u;
  std::vector<u128> ts = {u128(1) << 124, (u128(1) << 126) - 1};
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t k = (test::mix(s) >> 1) | (1ull << 62);  // [2^62, 2^63): k^2 in [2^124, 2^126)
    const u128 sq = u128(k) * k;
    for (u128 t : {sq, sq - 1, sq + 1, sq + 2 * u128(k)}) ts.push_back(t);
    ts.push_back((u128(test::mix(s)) << 64 | test::mix(s)) >> 2 | u128(1) << 124);
  }
  int failures = 0;
  for (u128 t : ts) {
    if (t >> 124 == 0 || t >> 126 != 0) continue;  // sq + 2k can pass 2^126
    const u128 r = X::integer_sqrt(t);
    if (!(r * r <= t && (r + 1) * (r + 1) > t) && ++failures <= 5)
      ADD_FAILURE() << "t = " << std::hex << std::uint64_t(t >> 64) << ":" << std::uint64_t(t)
                    << ", r = " << std::uint64_t(r);
  }
  EXPECT_EQ(failures, 0);
}

TEST(ExactModel, RootsNearRoundingBoundaries) {
  using X = ExactSum<Fp32Format, true>;  // the window: any double term from 2^-298 up
  for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::bf16, Dtype::fp16}) expect_roots_near_boundaries<X>(out);
}

// The exact mean and rms where rounding is hardest, against MPFR: sums of
// n (m + h) 2^k (mean) and n (m + h)^2 2^2k (rms, eps = 0) plus or minus a
// tiny term or none, h half an ulp of m or none, so that the quotient by n
// (and its root) lies on a tie, just past it, or just beside a representable
// value. The tiny term reaches 150-200 bits below the sum's top, beyond the
// 128 bits that round_sqrt takes from the integer, where only the sticky bit
// (the remainder, the digits below) decides. Every term is an exact double:
// n t as a product and its error (fma), (m + h)^2 as m^2 (a product and its
// error), 2 m h and h^2.
template <class X>
void expect_quotients_near_boundaries(Dtype out, bool root) {
  const int p = format_info(out).precision;
  std::uint64_t s = 0x9e37u + unsigned(out) + (root ? 100u : 0u);
  const std::vector<std::int64_t> ns = {3, 7, 1000003, (std::int64_t(1) << 32) + 15};
  for (int i = 0; i < 400; ++i) {
    const std::int64_t n = ns[i % ns.size()];
    const double h = (i / ns.size()) % 2 ? std::ldexp(1.0, -p) : 0.0;
    const int k = root ? int(test::mix(s) % 60) : -20 + int(test::mix(s) % 60);
    const double m = std::ldexp(double((test::mix(s) >> (64 - p + 1)) | (1ull << (p - 1))), 1 - p);  // [1, 2)
    const double mk = std::ldexp(m, k), hk = std::ldexp(h, k);
    std::vector<double> parts = {mk, hk};  // the value, or its square's parts
    if (root) parts = {mk * mk, std::fma(mk, mk, -mk * mk), 2 * mk * hk, hk * hk};
    std::vector<double> terms;
    for (double t : parts) {
      const double big = t * double(n);
      terms.push_back(big);
      terms.push_back(std::fma(t, double(n), -big));
    }
    const int tiny_at = (root ? 2 * k - 2 * p - 4 - int(test::mix(s) % 150) : k - p - 1 - int(test::mix(s) % 200));
    for (int sign : {-1, 0, 1}) {
      std::vector<double> ts = terms;
      if (sign != 0) ts.push_back(sign * std::ldexp(1.0, tiny_at));
      mpfr_t ex;
      const auto part = partial_with_exact_sum<X>(ts, ex);
      SCOPED_TRACE(std::string(to_string(out)) + (root ? " rms" : " mean") + " n=" + std::to_string(n) +
                   " m=" + std::to_string(m) + " k=" + std::to_string(k) + " half=" + std::to_string(h != 0) +
                   " tiny=" + std::to_string(sign) + "*2^" + std::to_string(tiny_at));
      if (root) {
        double got = 0.0;
        ASSERT_TRUE(X::round_rms(part, n, 0.0, out_format(out), got));
        EXPECT_EQ(got, rms_want(ex, n, 0.0, out));
      } else {
        double total = 0.0;
        EXPECT_EQ(X::round_quotient(part, n, out_format(out), total), test::round_mpfr_to(ex, out, long(n)));
      }
      mpfr_clear(ex);
    }
  }
}

TEST(ExactModel, QuotientsAndRootsNearRoundingBoundaries) {
  using X = ExactSum<Fp32Format, true>;
  for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::bf16, Dtype::fp16}) {
    expect_quotients_near_boundaries<X>(out, false);  // mean
    expect_quotients_near_boundaries<X>(out, true);   // rms
  }
}

// The exact variance where rounding is hardest, for counts on both sides of
// 2^32 (the division's 64-bit and 128-bit paths): S1 = 2^j n and S2 =
// 2^(2j) n + t n + tiny, so that var = (n S2 - S1^2) / n^2 = t + tiny / n
// with t a tie between two neighbours of the output format or a
// representable value, and tiny = 0 or just past it either way. The variance
// divides only the numerator's top digits (exact_moments.hpp): these cases
// need its sticky bit (the digits under them and both remainders) to be
// right. Against MPFR's RN((S2 - 2^(2j) n) / n), the same quotient.
TEST(ExactModel, VarianceNearRoundingBoundaries) {
  using R = ExactMomentsReducer<Fp32Format>;
  using A1 = R::A1;
  using A2 = R::A2;
  using V = ExactVariance<A1, A2>;
  const std::vector<std::int64_t> ns = {1, 3, 1000003, (std::int64_t(1) << 32) - 1, (std::int64_t(1) << 32) + 15,
                                        (std::int64_t(1) << 40) + 3};
  for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
    const int p = format_info(out).precision;
    std::uint64_t s = 0x7a11u + unsigned(out);
    for (int i = 0; i < 240; ++i) {
      const std::int64_t n = ns[i % ns.size()];
      const double h = (i / ns.size()) % 2 ? std::ldexp(1.0, -p) : 0.0;
      const int k = -14 + int(test::mix(s) % 28), j = -10 + int(test::mix(s) % 20);
      const double m = std::ldexp(double((test::mix(s) >> (64 - p + 1)) | (1ull << (p - 1))), 1 - p);  // [1, 2)
      const double mk = std::ldexp(m, k), hk = std::ldexp(h, k), dn = double(n);
      const double c1 = std::ldexp(std::floor(std::ldexp(dn, -24)), 24), c0 = dn - c1;  // n in float-sized chunks
      const int tiny_at = k - p - 1 - int(test::mix(s) % 120);
      for (int sign : {-1, 0, 1}) {
        mpfr_t ex1, ex2, d;
        const auto p1 = partial_with_exact_sum<A1>({std::ldexp(c1, j), std::ldexp(c0, j)}, ex1);
        std::vector<double> sq = {std::ldexp(dn, 2 * j)};
        for (double part : {mk, hk}) {  // t n, each part's product with n (below 2^41) and its error exactly
          sq.push_back(part * dn);
          sq.push_back(std::fma(part, dn, -part * dn));
        }
        if (sign != 0) sq.push_back(sign * std::ldexp(1.0, tiny_at));
        const auto p2 = partial_with_exact_sum<A2>(sq, ex2);
        mpfr_init2(d, 4096);
        mpfr_set_d(d, std::ldexp(dn, 2 * j), MPFR_RNDN);
        ASSERT_EQ(mpfr_sub(d, ex2, d, MPFR_RNDN), 0);  // S2 - 2^(2j) n = t n + tiny, exactly
        SCOPED_TRACE(std::string(to_string(out)) + " n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     " k=" + std::to_string(k) + " j=" + std::to_string(j) + " half=" + std::to_string(h != 0) +
                     " tiny=" + std::to_string(sign) + "*2^" + std::to_string(tiny_at));
        double in_fp64 = 0.0;
        EXPECT_EQ(V::round(p1, p2, n, out_format(out), in_fp64),
                  test::round_mpfr_to(d, out, long(n)));
        EXPECT_EQ(in_fp64, test::round_mpfr_to(d, Dtype::fp64, long(n)));
        mpfr_clears(ex1, ex2, d, (mpfr_ptr) nullptr);
      }
    }
  }
}

// merge must keep limbs bounded (it carries after every merge): partials with
// uncarried limbs just below 2^61, merged again and again (eight such merges
// overflow a 64-bit limb if nothing carries), keep the value.
TEST(ExactModel, MergeCarriesBeforeLimbsOverflow) {
  using X = ExactSum<Fp16Format, false>;
  X::Partial big = X::identity();
  for (int k = 0; k < X::digits - 1; ++k) big.limb[k] = (std::int64_t(1) << 61) - 1 - k;  // uncarried digits
  big.limb[X::digits - 1] = -3;  // and a negative top digit
  auto st = X::start();
  for (float v : {1.5f, -0.25f, 0x1p-24f, 65504.0f}) X::add(st, v);
  X::Partial acc = X::partial(st);
  mpfr_t want, t;
  mpfr_inits2(4096, want, t, (mpfr_ptr) nullptr);
  mpfr_set_d(want, 1.5 - 0.25 + 0x1p-24 + 65504.0, MPFR_RNDN);  // exact
  for (int rep = 0; rep < 40; ++rep) {
    X::merge(acc, big);
    for (int k = 0; k < X::digits; ++k) {
      mpfr_set_si(t, long(big.limb[k]), MPFR_RNDN);
      mpfr_mul_2si(t, t, X::low + 32 * k, MPFR_RNDN);
      mpfr_add(want, want, t, MPFR_RNDN);  // exact at 4096 bits
    }
    for (int k = 0; k < X::digits; ++k) {
      ASSERT_LT(acc.limb[k], std::int64_t(1) << 62) << "limb " << k << " after " << rep + 1 << " merges";
      ASSERT_GE(acc.limb[k], k < X::digits - 1 ? 0 : -(std::int64_t(1) << 62));
    }
    for (Dtype out : {Dtype::fp64, Dtype::fp32})
      ASSERT_EQ(X::round(acc, out_format(out)), test::round_mpfr_to(want, out)) << "after " << rep + 1 << " merges";
  }
  mpfr_clears(want, t, (mpfr_ptr) nullptr);
}

// The exact mean's digit step (divide_step: a double estimate of the quotient
// and one correction) against the integer division, at quotients and
// remainders on their bounds (0, 1, n - 1; quotients up to 2^32 - 1, where the
// estimate is least precise) and at random, for divisors up to 2^32 - 1.
TEST(ExactModel, DivideStepMatchesIntegerDivision) {
  using X = ExactSum<Fp32Format, false>;
  std::mt19937_64 rng(12);
  std::vector<std::uint64_t> divisors = {1, 2, 3, 7, 641, 65537, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFB,
                                         0xFFFFFFFF};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 0xFFFFFFFFull);
  std::int64_t checked = 0;
  for (std::uint64_t n : divisors) {
    const double inv = rn::div(1.0, double(n));
    std::vector<std::uint64_t> quotients = {0, 1, 2, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};
    for (int i = 0; i < 20; ++i) quotients.push_back(rng() & 0xFFFFFFFF);
    for (std::uint64_t q : quotients)
      for (std::uint64_t r : {std::uint64_t(0), std::uint64_t(1), n - 1, rng() % n}) {
        if (r >= n) continue;
        const std::uint64_t cur = q * n + r;  // below n 2^32
        std::uint64_t rem = ~0ull;
        ASSERT_EQ(X::divide_step(cur, n, inv, rem), cur / n) << "cur=" << cur << " n=" << n;
        ASSERT_EQ(rem, cur % n) << "cur=" << cur << " n=" << n;
        ++checked;
      }
  }
  EXPECT_GT(checked, 20000);
}

// --- the tree order against an independent re-implementation ------------

// fp32 sum in the tree order, written from the description in other terms:
// elements are dealt to threads by index; the shuffle tree as a recursion.
float warp_tree(const std::vector<float>& lane, int l, int stride) {
  if (stride == 32) return lane[l];
  return warp_tree(lane, l, 2 * stride) + warp_tree(lane, l + stride, 2 * stride);
}
float block_tree(const std::vector<float>& thread_sums, int threads) {
  std::vector<float> slots(32, -0.0f);
  for (int w = 0; w < threads / 32; ++w)
    slots[w] = warp_tree(std::vector<float>(thread_sums.begin() + 32 * w, thread_sums.begin() + 32 * w + 32), 0, 1);
  return warp_tree(slots, 0, 1);
}
float independent_tree_sum(const std::vector<float>& x, int blocks, int threads, int vec) {
  const std::int64_t G = std::int64_t(blocks) * threads, n = std::int64_t(x.size());
  const std::int64_t body = n / vec * vec;
  std::vector<std::vector<float>> items(G);
  for (std::int64_t i = 0; i < body; ++i) items[(i / vec) % G].push_back(x[i]);
  for (std::int64_t i = body; i < n; ++i) items[i - body].push_back(x[i]);
  std::vector<float> block_sums;
  for (int b = 0; b < blocks; ++b) {
    std::vector<float> sums(threads);
    for (int t = 0; t < threads; ++t) {
      float s = -0.0f;
      for (float v : items[std::int64_t(b) * threads + t]) s += v;
      sums[t] = s;
    }
    block_sums.push_back(block_tree(sums, threads));
  }
  std::vector<float> second(threads, -0.0f);
  for (int i = 0; i < blocks; ++i) second[i % threads] += block_sums[i];
  return block_tree(second, threads);
}

TEST(TreeModel, Fp32SumMatchesAnIndependentImplementation) {
  for (std::int64_t n : {0, 1, 31, 32, 33, 1023, 4097, (1 << 20) + 3}) {
    std::uint64_t s = std::uint64_t(n) + 99;
    const TypedArray x = make_array(Dtype::fp32, n, [&](auto) { return test::uniform01(s) * 2 - 0.7; });
    std::vector<float> xf(x.as<float>());
    const KernelSpec k = spec_of(Op::sum, Dtype::fp32, Accumulator::fp32, Shape::tree, Dtype::fp32);
    auto configs = launch_configs(k, n);
    configs.push_back({3, 64});
    configs.push_back({1500, 32});  // more blocks than second-pass threads
    for (const auto& c : configs) {
      SCOPED_TRACE("n=" + std::to_string(n) + " blocks=" + std::to_string(c.blocks) +
                   " threads=" + std::to_string(c.threads));
      const float want = independent_tree_sum(xf, c.blocks, c.threads, 4);
      const double got = run1(k, whole(Op::sum, x), c);
      EXPECT_EQ(got, n == 0 ? 0.0 : double(want));
    }
  }
}

// --- every combination runs, or says why not ------------------------------

TEST(Model, EveryCombinationRunsOrGivesAReason) {
  constexpr Op kOps[] = {Op::sum, Op::mean, Op::dot, Op::sumsq, Op::norm2, Op::rms, Op::mean_var,
                         Op::max, Op::min, Op::amax};
  constexpr Accumulator kAccs[] = {Accumulator::naive, Accumulator::fp32,     Accumulator::fp64,
                                   Accumulator::kahan, Accumulator::pairwise, Accumulator::welford,
                                   Accumulator::two_pass, Accumulator::exact};
  int ran = 0;
  for (Dtype in : kInputDtypes)
    for (Op op : kOps)
      for (Accumulator acc : kAccs)
        for (Shape shape : {Shape::serial, Shape::tree, Shape::atomic}) {
          const KernelSpec k = spec_of(op, in, acc, shape, default_out_dtype(in));
          std::uint64_t s = 3;
          const TypedArray x = make_array(in, 517, [&](auto) { return test::uniform01(s) + 0.5; });
          const TypedArray y = make_array(in, 517, [&](auto) { return test::uniform01(s) - 0.5; });
          const auto p = whole(op, x, &y);
          if (auto why = unsupported(k, Axis::all)) {
            EXPECT_FALSE(why->empty());
            EXPECT_THROW(run_model(k, p, {1, 32}), std::invalid_argument);
            continue;
          }
          const auto r = run_model(k, p, launch_configs(k, 517).front(), 7);
          ASSERT_EQ(r.values.size(), std::size_t(components(op)));
          for (double v : r.values) EXPECT_TRUE(std::isfinite(v));
          ++ran;
        }
  EXPECT_GT(ran, 300);
}

// max, min and amax select an input; NaN anywhere gives NaN.
TEST(Model, SelectionsPickTheExtremeAndPropagateNaN) {
  std::uint64_t s = 17;
  std::vector<double> v(4097);
  for (auto& e : v) e = test::uniform01(s) * 200 - 100;
  const TypedArray x = make_array(Dtype::bf16, 4097, [&](auto i) { return v[i]; });
  double mx = -1e9, mn = 1e9, am = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    mx = std::max(mx, x.at(i));
    mn = std::min(mn, x.at(i));
    am = std::max(am, std::fabs(x.at(i)));
  }
  for (auto [op, want] : {std::pair{Op::max, mx}, {Op::min, mn}, {Op::amax, am}}) {
    const KernelSpec k = spec_of(op, Dtype::bf16, Accumulator::fp32, Shape::tree, Dtype::bf16);
    for (const auto& c : launch_configs(k, 4097)) EXPECT_EQ(run1(k, whole(op, x), c), want);
  }
  const TypedArray xn = make_array(Dtype::fp32, 100, [](auto i) { return i == 57 ? std::nan("") : double(i); });
  for (Op op : {Op::max, Op::min, Op::amax}) {
    const KernelSpec k = spec_of(op, Dtype::fp32, Accumulator::fp32, Shape::tree, Dtype::fp32);
    EXPECT_TRUE(std::isnan(run1(k, whole(op, xn), launch_configs(k, 100)[1])));
  }
}

// Between zeros max keeps +0 and min keeps -0 wherever the one zero of the
// other sign sits, in every launch configuration; amax of -0 is +0.
TEST(Model, SelectionsOrderSignedZeros) {
  for (std::int64_t n : {1, 2, 33, 4097})
    for (std::int64_t at : {std::int64_t(0), n / 2, n - 1}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " at=" + std::to_string(at));
      const TypedArray neg = make_array(Dtype::fp16, n, [&](auto i) { return i == at ? 0.0 : (i % 3 ? -0.0 : -1.0); });
      const TypedArray pos = make_array(Dtype::fp16, n, [&](auto i) { return i == at ? -0.0 : (i % 3 ? 0.0 : 1.0); });
      const KernelSpec kmax = spec_of(Op::max, Dtype::fp16, Accumulator::fp32, Shape::tree, Dtype::fp32);
      const KernelSpec kmin = spec_of(Op::min, Dtype::fp16, Accumulator::fp32, Shape::tree, Dtype::fp32);
      const KernelSpec kamax = spec_of(Op::amax, Dtype::fp16, Accumulator::fp32, Shape::tree, Dtype::fp32);
      for (const auto& c : launch_configs(kmax, n)) {
        const double mx = run1(kmax, whole(Op::max, neg), c), mn = run1(kmin, whole(Op::min, pos), c);
        EXPECT_TRUE(mx == 0.0 && !std::signbit(mx));
        EXPECT_TRUE(mn == 0.0 && std::signbit(mn));
        bool ones = false;  // neg holds -1 somewhere: amax 1, else +0 (never -0)
        for (std::int64_t i = 0; i < n; ++i) ones = ones || neg.at(i) == -1.0;
        const double am = run1(kamax, whole(Op::amax, neg), c);
        EXPECT_TRUE(am == (ones ? 1.0 : 0.0) && !std::signbit(am));
      }
    }
  // The selections themselves, against IEEE 754-2019 maximum and minimum.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float vals[] = {-inf, -1.0f, -0.0f, 0.0f, 1e-45f, 2.0f, inf, nan};
  for (float a : vals)
    for (float b : vals) {
      const float mx = rn::maximum(a, b), mn = rn::minimum(a, b);
      if (std::isnan(a) || std::isnan(b)) {
        EXPECT_TRUE(std::isnan(mx) && std::isnan(mn));
        continue;
      }
      const bool zeros = a == 0 && b == 0;
      EXPECT_EQ(mx, std::max(a, b));
      EXPECT_EQ(mn, std::min(a, b));
      if (zeros) {
        EXPECT_EQ(std::signbit(mx), std::signbit(a) && std::signbit(b));
        EXPECT_EQ(std::signbit(mn), std::signbit(a) || std::signbit(b));
      }
      EXPECT_FALSE(std::signbit(rn::abs(a)));
    }
}

// Row-wise orders: inner rows follow the block tree with V elements per
// thread step, outer columns the serial order.
TEST(Model, RowWiseMatchesPerRowReductions) {
  const std::int64_t rows = 7, cols = 1000;
  std::uint64_t s = 23;
  const TypedArray x = make_array(Dtype::fp16, rows * cols, [&](auto) { return test::uniform01(s) * 4 - 1; });
  const KernelSpec tree = spec_of(Op::sum, Dtype::fp16, Accumulator::fp32, Shape::tree, Dtype::fp32);
  const KernelSpec serial = spec_of(Op::sum, Dtype::fp16, Accumulator::fp32, Shape::serial, Dtype::fp32);
  ReductionProblem p;
  p.op = Op::sum;
  p.rows = rows;
  p.cols = cols;
  p.x = &x;
  p.axis = Axis::inner;
  const auto inner = run_model(tree, p, {1, 128}).values;
  p.axis = Axis::outer;
  const auto outer = run_model(tree, p, {1, 128}).values;
  ASSERT_EQ(inner.size(), std::size_t(rows));
  ASSERT_EQ(outer.size(), std::size_t(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    const TypedArray row = make_array(Dtype::fp16, cols, [&](auto i) { return x.at(r * cols + i); });
    // A block of 128 threads over one row is the whole-array order with one block
    // (the second pass only merges identities, which changes no bits).
    EXPECT_EQ(inner[r], run1(tree, whole(Op::sum, row), {1, 128}));
  }
  for (std::int64_t c = 0; c < cols; c += 97) {
    const TypedArray col = make_array(Dtype::fp16, rows, [&](auto i) { return x.at(i * cols + c); });
    EXPECT_EQ(outer[c], run1(serial, whole(Op::sum, col)));
  }
}

// rmsnorm and layernorm: the row statistics of sumsq and mean_var in the same
// order, then y = (x * r) * gamma (+ beta) element by element in fp32.
TEST(Model, NormalisedRowsFollowTheirStatistics) {
  const std::int64_t rows = 5, cols = 4100;
  std::uint64_t s = 31;
  const TypedArray x = make_array(Dtype::bf16, rows * cols, [&](auto) { return test::uniform01(s) * 6 - 2; });
  const TypedArray gamma = make_array(Dtype::bf16, cols, [&](auto) { return test::uniform01(s) + 0.5; });
  const TypedArray beta = make_array(Dtype::bf16, cols, [&](auto) { return test::uniform01(s) - 0.5; });
  ReductionProblem p;
  p.axis = Axis::inner;
  p.rows = rows;
  p.cols = cols;
  p.x = &x;
  p.gamma = &gamma;
  p.beta = &beta;
  p.eps = 1e-5;
  for (Op op : {Op::rmsnorm, Op::layernorm}) {
    const Op stats_op = op == Op::rmsnorm ? Op::sumsq : Op::mean_var;
    for (Accumulator acc : {Accumulator::fp32, Accumulator::kahan, Accumulator::welford}) {
      KernelSpec k = spec_of(op, Dtype::bf16, acc, Shape::tree, Dtype::fp32);
      if (unsupported(k, Axis::inner)) {
        EXPECT_EQ(acc, Accumulator::welford);
        EXPECT_EQ(op, Op::rmsnorm);
        continue;
      }
      p.op = op;
      const auto y = run_model(k, p, {1, 256});
      p.op = stats_op;
      KernelSpec ks = k;
      ks.op = stats_op;
      const auto st = run_model(ks, p, {1, 256});
      ASSERT_EQ(y.values.size(), std::size_t(rows * cols));
      for (std::int64_t r = 0; r < rows; ++r) {
        const float eps = float(p.eps);
        const float scale =
            op == Op::rmsnorm ? 1.0f / std::sqrt(float(st.unrounded[r]) / float(cols) + eps)
                              : 1.0f / std::sqrt(float(st.unrounded[2 * r + 1]) + eps);
        const float mean = op == Op::rmsnorm ? 0.0f : float(st.unrounded[2 * r]);
        for (std::int64_t j = 0; j < cols; j += 13) {
          const float xv = float(x.at(r * cols + j)), g = float(gamma.at(j)), b = float(beta.at(j));
          const float want = op == Op::rmsnorm ? (xv * scale) * g : ((xv - mean) * scale) * g + b;
          ASSERT_EQ(y.values[r * cols + j], double(want)) << to_string(op) << " row " << r << " col " << j;
        }
      }
    }
  }
}

// log of the sum of e^x_i, each exponential and the sum rounded at 256 bits
// (MPFR: e^-inf is +0), rounded to double.
double mpfr_logsumexp(const TypedArray& x) {
  mpfr_t acc, t;
  mpfr_inits2(256, acc, t, (mpfr_ptr) nullptr);
  mpfr_set_zero(acc, 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(t, x.at(i), MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_add(acc, acc, t, MPFR_RNDN);
  }
  mpfr_log(acc, acc, MPFR_RNDN);
  const double r = mpfr_get_d(acc, MPFR_RNDN);
  mpfr_clears(acc, t, (mpfr_ptr) nullptr);
  return r;
}

// logsumexp against MPFR (log of the exact sum of exact exponentials): the
// online max-and-rescale is accurate to a few ulps of the result in fp32.
TEST(Model, LogSumExpIsCloseToTheExactValue) {
  for (std::int64_t n : {1, 33, 4097, 100003}) {
    std::uint64_t s = std::uint64_t(n);
    const TypedArray x = make_array(Dtype::fp16, n, [&](auto) { return test::uniform01(s) * 40 - 20; });
    const double want = mpfr_logsumexp(x);
    for (Accumulator a : {Accumulator::fp32, Accumulator::fp64})
      for (Shape shape : {Shape::serial, Shape::tree}) {
        const KernelSpec k = spec_of(Op::logsumexp, Dtype::fp16, a, shape, Dtype::fp64);
        for (const auto& c : launch_configs(k, n)) {
          const double got = run1(k, whole(Op::logsumexp, x), c);
          const double tol = (a == Accumulator::fp32 ? 0x1p-24 : 0x1p-53) * std::fabs(want) *
                             (a == Accumulator::fp32 ? 64 : 64) * (shape == Shape::serial ? std::sqrt(double(n)) : 4);
          EXPECT_NEAR(got, want, tol) << "n=" << n << " " << to_string(a) << " " << to_string(shape);
        }
      }
  }
  // NaN anywhere gives NaN; +inf gives +inf; only -inf gives -inf.
  const double inf = INFINITY;
  const KernelSpec k = spec_of(Op::logsumexp, Dtype::fp32, Accumulator::fp32, Shape::tree, Dtype::fp32);
  const TypedArray xn = make_array(Dtype::fp32, 70, [](auto i) { return i == 5 ? std::nan("") : 1.0; });
  const TypedArray xi = make_array(Dtype::fp32, 70, [&](auto i) { return i == 5 ? inf : 1.0; });
  const TypedArray xm = make_array(Dtype::fp32, 70, [&](auto) { return -inf; });
  for (const auto& c : launch_configs(k, 70)) {
    EXPECT_TRUE(std::isnan(run1(k, whole(Op::logsumexp, xn), c)));
    EXPECT_EQ(run1(k, whole(Op::logsumexp, xi), c), inf);
    EXPECT_EQ(run1(k, whole(Op::logsumexp, xm), c), -inf);
  }
}

// logsumexp's groups (a vector's elements after one rescaling) next to the
// element-by-element path they fall back to: -inf terms among finite ones add
// nothing, and an infinity or NaN anywhere (first group, last element) wins,
// whatever the groups before or after it hold.
TEST(Model, LogSumExpGroupsHandleInfinitiesAnywhere) {
  const double inf = INFINITY;
  const std::int64_t n = 1000;
  std::uint64_t s = 99;
  const TypedArray x = make_array(Dtype::fp32, n, [&](auto i) { return i % 3 == 1 ? -inf : test::uniform01(s) * 20 - 10; });
  const double want = mpfr_logsumexp(x);  // e^-inf is 0
  auto with = [&](std::int64_t at, double v) {
    return make_array(Dtype::fp32, n, [&](auto i) { return std::int64_t(i) == at ? v : x.at(i); });
  };
  for (Accumulator a : {Accumulator::fp32, Accumulator::fp64}) {
    const KernelSpec k = spec_of(Op::logsumexp, Dtype::fp32, a, Shape::tree, Dtype::fp64);
    for (const auto& c : launch_configs(k, n)) {
      SCOPED_TRACE(std::string(to_string(a)) + " " + std::to_string(c.blocks) + "x" + std::to_string(c.threads));
      EXPECT_NEAR(run1(k, whole(Op::logsumexp, x), c), want, std::fabs(want) * 1e-6);
      for (std::int64_t at : {std::int64_t(0), std::int64_t(2), n / 2, n - 1}) {
        EXPECT_EQ(run1(k, whole(Op::logsumexp, with(at, inf)), c), inf) << at;
        EXPECT_TRUE(std::isnan(run1(k, whole(Op::logsumexp, with(at, std::nan(""))), c))) << at;
      }
    }
  }
}

// Every whole-array tree kernel gets at least three distinct launch
// configurations the CUDA kernels accept, at every size; at 2^28 elements the
// default is 4, 5, 6, 8 or 16 blocks per SM of an H100's 132 (default_blocks_per_sm).
TEST(Model, EveryTreeKernelHasDistinctValidLaunchConfigs) {
  int checked = 0;
  for (Dtype in : kInputDtypes)
    for (const auto& [op, op_name] : kOpNames)
      for (const auto& [acc, acc_name] : kAccumulatorNames) {
        const KernelSpec k = spec_of(op, in, acc, Shape::tree, default_out_dtype(in));
        if (unsupported(k, Axis::all)) continue;
        for (std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(4097), std::int64_t(1) << 28}) {
          const auto c = launch_configs(k, n);
          ASSERT_GE(c.size(), 3u) << op_name << " " << acc_name;
          for (std::size_t i = 0; i < c.size(); ++i) {
            EXPECT_GE(c[i].blocks, 1);
            EXPECT_TRUE(c[i].threads >= 32 && c[i].threads <= 512 && c[i].threads % 32 == 0) << c[i].threads;
            for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(c[i] == c[j]) << op_name << " " << acc_name << " " << n;
          }
          if (n == std::int64_t(1) << 28) {
            const int per_sm = c[0].blocks / 132;
            EXPECT_EQ(c[0].blocks % 132, 0) << op_name << " " << acc_name;
            // The grids that default_blocks_per_sm chose from sweeps on the H100.
            EXPECT_TRUE(per_sm == 3 || per_sm == 4 || per_sm == 5 || per_sm == 6 || per_sm == 8 || per_sm == 16)
                << op_name << " " << acc_name << " " << per_sm;
          }
        }
        ++checked;
      }
  EXPECT_GT(checked, 200);
}

TEST(Model, LaunchConfigsDifferAndDepthGrowsWithTheChain) {
  const KernelSpec k = spec_of(Op::sum, Dtype::fp32, Accumulator::fp32, Shape::tree, Dtype::fp32);
  const auto c = launch_configs(k, 1 << 20);
  ASSERT_GE(c.size(), 3u);
  for (std::size_t i = 1; i < c.size(); ++i) EXPECT_FALSE(c[i] == c[0]);
  const KernelSpec ser = spec_of(Op::sum, Dtype::fp32, Accumulator::fp32, Shape::serial, Dtype::fp32);
  EXPECT_EQ(addition_depth(ser, Axis::all, 1000, {1, 1}), 999);
  // 2^20 fp32 elements, 1024 blocks of 256: one vector of 4 per thread (3 adds),
  // 8 levels in the block, 4 partials per second-pass thread (3) and 8 levels.
  EXPECT_EQ(addition_depth(k, Axis::all, 1 << 20, {1024, 256}), 3 + 8 + 3 + 8);
}

}  // namespace
}  // namespace ulpscope
