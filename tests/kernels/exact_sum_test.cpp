// The exact accumulator's shortcuts (accumulators/exact_sum.hpp) against one
// deposit per term: vector groups, checked runs, products in float, TwoSum,
// windows and split runs.
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

}  // namespace
}  // namespace ulpscope
