// The fp64, kahan and pairwise accumulators' shortcuts (accumulators/
// rounded_sum.hpp, compensated_sum.hpp, pairwise_sum.hpp) give the bits of
// their plain definitions.
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

}  // namespace
}  // namespace ulpscope
