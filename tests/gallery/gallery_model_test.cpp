// The seed gallery's CPU models against an independent recomputation of each
// kernel's order, written here from the seeds' pseudo-code in a different form
// (v1 folds adjacent pairs level by level, v2 folds halves, blocks pad with
// the identity instead of testing bounds, ...), and against exact sums and
// plain maxima. Sizes that are not powers of two and not multiples of the
// block, several launch configurations, a 32-thread block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "formats/round_to_dtype.hpp"
#include "kernels/model.hpp"
#include "gallery_test_support.hpp"

namespace ulpscope {
namespace {

using Values = std::vector<float>;
using namespace test;

constexpr std::int64_t kSizes[] = {0, 1, 31, 33, 1000, 4097};

// The operation, written again: a float add (rounded to the input format for
// the naive accumulator, by formats/round_to_dtype), or IEEE maximum with NaN
// winning and +0 above -0.
struct Combiner {
  Op op;
  Accumulator acc;
  Dtype in;
  float identity() const { return op == Op::max ? -INFINITY : -0.0f; }
  float operator()(float a, float b) const {
    if (op == Op::max) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a != b) return a > b ? a : b;
      return std::signbit(a) ? b : a;
    }
    const float s = a + b;
    return acc == Accumulator::naive ? float(round_to_dtype(double(s), in)) : s;
  }
};

float fold_halves(Values v, const Combiner& c) {
  for (std::size_t h = v.size() / 2; h >= 1; h /= 2)
    for (std::size_t t = 0; t < h; ++t) v[t] = c(v[t], v[t + h]);
  return v[0];
}

float fold_pairs(Values v, const Combiner& c) {
  while (v.size() > 1) {
    Values w(v.size() / 2);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = c(v[2 * k], v[2 * k + 1]);
    v = w;
  }
  return v[0];
}

// Warp shuffles: each warp folds its 32 lanes in halves, the warp results
// (padded to 32) fold again.
float warps_then_block(const Values& lanes, const Combiner& c) {
  Values slots(32, c.identity());
  for (std::size_t w = 0; w * 32 < lanes.size(); ++w)
    slots[w] = fold_halves(Values(lanes.begin() + std::ptrdiff_t(w * 32), lanes.begin() + std::ptrdiff_t(w * 32 + 32)), c);
  return fold_halves(slots, c);
}

// Chunks of `per` values, identity-padded, each to one value by `block`,
// again and again until one value is left.
float chunk_passes(Values x, std::size_t per, const Combiner& c, const std::function<float(const Values&)>& block) {
  if (x.empty()) return c.identity();
  do {
    Values partials;
    for (std::size_t b = 0; b < x.size(); b += per) {
      Values chunk(per, c.identity());
      std::copy(x.begin() + std::ptrdiff_t(b), x.begin() + std::ptrdiff_t(std::min(b + per, x.size())), chunk.begin());
      partials.push_back(block(chunk));
    }
    x = partials;
  } while (x.size() > 1);
  return x[0];
}

// The two halves of a chunk of 2T combined lane by lane (the first add).
Values first_add(const Values& chunk, const Combiner& c) {
  const std::size_t T = chunk.size() / 2;
  Values v(T);
  for (std::size_t t = 0; t < T; ++t) v[t] = c(chunk[t], chunk[t + T]);
  return v;
}

std::int64_t clamp_blocks(std::int64_t want, std::int64_t cap) { return std::max<std::int64_t>(1, std::min(want, cap)); }
std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Grid-stride partials: thread g of G combines x[g], x[g + G], ... (v6:
// pairs g, g + T per 2T-wide step).
float reference(Shape s, const Values& x0, const LaunchConfig& cfg, const Combiner& c) {
  const std::int64_t T = cfg.threads, n = std::int64_t(x0.size());
  switch (s) {
    case Shape::v1_interleaved: return chunk_passes(x0, std::size_t(T), c, [&](const Values& v) { return fold_pairs(v, c); });
    case Shape::v2_sequential: return chunk_passes(x0, std::size_t(T), c, [&](const Values& v) { return fold_halves(v, c); });
    case Shape::v3_first_add:
    case Shape::v4_unroll_last_warp:  // the unrolled kernels change the speed, not the order
    case Shape::v5_complete_unroll:
      return chunk_passes(x0, std::size_t(2 * T), c, [&](const Values& v) { return fold_halves(first_add(v, c), c); });
    case Shape::v5_shuffle:
      return chunk_passes(x0, std::size_t(2 * T), c, [&](const Values& v) { return warps_then_block(first_add(v, c), c); });
    case Shape::cg_reduce: return chunk_passes(x0, std::size_t(T), c, [&](const Values& v) { return warps_then_block(v, c); });
    default: break;
  }
  if (n == 0) return c.identity();
  if (s == Shape::atomic_element) {
    float acc = c.identity();
    for (float v : x0) acc = c(acc, v);
    return acc;
  }
  if (s == Shape::atomic_shared) {
    const std::int64_t B = clamp_blocks(cfg.blocks, cdiv(n, T));
    std::vector<Values> mine(static_cast<std::size_t>(B));
    for (std::int64_t i = 0; i < n; ++i) mine[std::size_t((i / T) % B)].push_back(x0[std::size_t(i)]);
    float acc = c.identity();
    for (const Values& m : mine) {
      float slot = c.identity();
      for (float v : m) slot = c(slot, v);
      acc = c(acc, slot);
    }
    return acc;
  }
  if (s == Shape::v6_multi_add) {
    auto pass = [&](const Values& x, std::int64_t B) {
      const std::int64_t m = std::int64_t(x.size());
      Values out;
      for (std::int64_t b = 0; b < B; ++b) {
        Values lanes(std::size_t(T), c.identity());
        for (std::int64_t t = 0; t < T; ++t)
          for (std::int64_t i = 2 * T * b + t; i < m; i += 2 * T * B) {
            lanes[std::size_t(t)] = c(lanes[std::size_t(t)], x[std::size_t(i)]);
            if (i + T < m) lanes[std::size_t(t)] = c(lanes[std::size_t(t)], x[std::size_t(i + T)]);
          }
        out.push_back(fold_halves(lanes, c));
      }
      return out;
    };
    const Values p = pass(x0, clamp_blocks(cfg.blocks, cdiv(n, 2 * T)));
    return p.size() == 1 ? p[0] : pass(p, 1)[0];
  }
  if (s == Shape::cluster) {
    auto pass = [&](const Values& x, std::int64_t B) {
      const std::int64_t m = std::int64_t(x.size());
      Values totals;
      for (std::int64_t b = 0; b < B; ++b) {
        Values lanes(std::size_t(T), c.identity());
        for (std::int64_t t = 0; t < T; ++t)
          for (std::int64_t i = b * T + t; i < m; i += T * B) lanes[std::size_t(t)] = c(lanes[std::size_t(t)], x[std::size_t(i)]);
        totals.push_back(warps_then_block(lanes, c));
      }
      Values out;
      for (std::size_t k = 0; k < totals.size(); k += 4) {
        float t = c.identity();
        for (std::size_t r = 0; r < 4; ++r) t = c(t, totals[k + r]);
        out.push_back(t);
      }
      return out;
    };
    const Values p = pass(x0, cdiv(clamp_blocks(cfg.blocks, cdiv(n, T)), 4) * 4);
    return p.size() == 1 ? p[0] : pass(p, 4)[0];
  }
  // two_stage, seed 001: BLOCK_SIZE = next_pow2(n) up to 1024, else
  // max(64, next_pow2(cdiv(n, min(cdiv(n, 256), cap)))).
  auto pow2 = [](std::int64_t k) {
    std::int64_t p = 1;
    while (p < k) p *= 2;
    return p;
  };
  auto stage = [&](const Values& x, std::int64_t chunk) {
    Values out;
    for (std::size_t b = 0; b < x.size(); b += std::size_t(chunk)) {
      Values lanes(std::size_t(T), c.identity());
      for (std::int64_t e = 0; e < chunk && b + std::size_t(e) < x.size(); ++e) {
        float& l = lanes[std::size_t((e / 4) % T)];
        l = c(l, x[b + std::size_t(e)]);
      }
      out.push_back(warps_then_block(lanes, c));
    }
    return out;
  };
  const std::int64_t bs = n <= 1024 ? pow2(n) : std::max<std::int64_t>(64, pow2(cdiv(n, std::min(cdiv(n, 256), std::int64_t(cfg.blocks)))));
  const Values mid = stage(x0, bs);
  return mid.size() == 1 ? mid[0] : stage(mid, pow2(std::int64_t(mid.size())))[0];
}

Values widened(const TypedArray& a) {
  Values v(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) v[i] = float(a.at(i));
  return v;
}

std::vector<LaunchConfig> configs_for(const KernelSpec& k, std::int64_t n) {
  auto c = launch_configs(k, n);
  c.push_back(LaunchConfig{3, 32});  // one warp per block: the unrolled last warp's trap
  return c;
}

struct Case {
  Shape shape;
  Dtype in;
};
std::string case_name(const testing::TestParamInfo<Case>& info) {
  return std::string(to_string(info.param.shape)) + "_" + std::string(to_string(info.param.in));
}
std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (Shape s : kGallery)
    for (Dtype d : kGalleryFormats) out.push_back({s, d});
  return out;
}

class GalleryModel : public testing::TestWithParam<Case> {};

TEST_P(GalleryModel, MatchesTheIndependentRecomputation) {
  const auto [shape, in] = GetParam();
  int compared = 0;
  for (std::int64_t n : kSizes) {
    const TypedArray x = mixed(in, n, 7 + std::uint64_t(n));
    const Values xs = widened(x);
    for (const Variant& v : kVariants) {
      const KernelSpec k{v.op, in, in, v.acc, shape};
      ASSERT_FALSE(unsupported(k, Axis::all).has_value()) << *unsupported(k, Axis::all);
      const Combiner c{v.op, v.acc, in};
      for (const LaunchConfig& cfg : configs_for(k, n)) {
        const double got = run_model(k, whole(x, k.op), cfg, 0).values.at(0);
        float r = reference(shape, xs, cfg, c);
        if (v.op == Op::sum && n == 0) r = 0.0f;  // the empty sum is +0
        const double want = round_to_dtype(double(r), in);
        ASSERT_TRUE(same_bits(got, want)) << to_string(shape) << " " << to_string(v.op) << " acc "
                                          << to_string(v.acc) << " n " << n << " config " << cfg.blocks << "x"
                                          << cfg.threads << ": model " << got << ", recomputed " << want;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 6 * 3 * 5);
}

// Small integers: every partial is exact in fp32, so every order gives the
// exact sum (MPFR); the maximum is the plain maximum.
TEST_P(GalleryModel, ExactOnIntegersAndMaxima) {
  const auto [shape, in] = GetParam();
  for (std::int64_t n : kSizes) {
    std::uint64_t s = 99 + std::uint64_t(n);
    const TypedArray x = test::make_array(in, n, [&](auto) { return double(int(test::mix(s) % 7) - 3); });
    mpfr_t exact;
    test::exact_sum(exact, x, nullptr, false);
    const double sum = mpfr_get_d(exact, MPFR_RNDN);
    mpfr_clear(exact);
    double mx = -INFINITY;
    for (std::size_t i = 0; i < x.size(); ++i) mx = std::max(mx, x.at(i));
    const KernelSpec sum_k{Op::sum, in, Dtype::fp32, Accumulator::fp32, shape};
    const KernelSpec max_k{Op::max, in, in, Accumulator::fp32, shape};
    for (const LaunchConfig& cfg : configs_for(sum_k, n)) {
      EXPECT_EQ(run_model(sum_k, whole(x, sum_k.op), cfg, 0).values.at(0), sum) << "n " << n << " threads " << cfg.threads;
      EXPECT_EQ(run_model(max_k, whole(x, max_k.op), cfg, 0).values.at(0), mx) << "n " << n << " threads " << cfg.threads;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GalleryModel, testing::ValuesIn(all_cases()), case_name);

TEST(GalleryModelOrders, AtomicOrdersVaryButMaxDoesNot) {
  const TypedArray x = mixed(Dtype::fp32, 4097, 5);
  for (Shape s : {Shape::atomic_element, Shape::atomic_shared}) {
    const KernelSpec sum_k{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, s};
    const KernelSpec max_k{Op::max, Dtype::fp32, Dtype::fp32, Accumulator::fp32, s};
    EXPECT_FALSE(model_is_bit_exact(sum_k));
    EXPECT_FALSE(is_deterministic_order(s));
    std::set<double> sums, maxima;
    const LaunchConfig cfg = launch_configs(sum_k, 4097).front();
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      sums.insert(run_model(sum_k, whole(x, sum_k.op), cfg, seed).values.at(0));
      maxima.insert(run_model(max_k, whole(x, max_k.op), cfg, seed).values.at(0));
    }
    EXPECT_GT(sums.size(), 1u) << to_string(s);
    EXPECT_EQ(maxima.size(), 1u) << to_string(s);
  }
  for (Shape s : kGallery) {
    if (s == Shape::atomic_element || s == Shape::atomic_shared) continue;
    EXPECT_TRUE(is_deterministic_order(s)) << to_string(s);
    EXPECT_TRUE(model_is_bit_exact(KernelSpec{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::naive, s}));
  }
}

// What the orders share, on fp16 sums kept in fp16 (every add rounds
// visibly): v1's interleaved tree is the adjacent-pair tree over the whole
// array whatever the block size; the first add of v3 is sequential
// addressing's first step, so v3 with T threads is v2 with 2T; v4 and v5
// unroll v3 without changing an operation. The orders still differ.
TEST(GalleryModelOrders, WhatTheOrdersShare) {
  const TypedArray x = mixed(Dtype::fp16, 4097, 3);
  auto sum = [&](Shape s, LaunchConfig cfg) {
    const KernelSpec k{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::naive, s};
    return run_model(k, whole(x, Op::sum), cfg, 0).values.at(0);
  };
  const double v1 = sum(Shape::v1_interleaved, LaunchConfig{1, 256});
  std::set<double> all;
  for (int T : {32, 64, 128, 256, 512}) {
    const LaunchConfig cfg{64, T};
    EXPECT_TRUE(same_bits(sum(Shape::v1_interleaved, cfg), v1)) << T;
    if (T < 512) {
      EXPECT_TRUE(same_bits(sum(Shape::v3_first_add, cfg), sum(Shape::v2_sequential, LaunchConfig{64, 2 * T}))) << T;
    }
    EXPECT_TRUE(same_bits(sum(Shape::v4_unroll_last_warp, cfg), sum(Shape::v3_first_add, cfg))) << T;
    EXPECT_TRUE(same_bits(sum(Shape::v5_complete_unroll, cfg), sum(Shape::v3_first_add, cfg))) << T;
    for (Shape s : kGallery) all.insert(sum(s, cfg));
  }
  EXPECT_FALSE(std::isinf(v1));
  EXPECT_GE(all.size(), 5u);
}

// Recursive summation's bound with the order's depth (Higham 2002, eq. 4.4):
// |s - exact| <= gamma_depth sum|x_i|, with the fp32 unit roundoff.
TEST(GalleryModelOrders, ErrorWithinTheBoundOfTheAdditionDepth) {
  const double u = 0x1p-24;
  for (Shape s : kGallery)
    for (std::int64_t n : {1000, 4097, 65539}) {
      const TypedArray x = mixed(Dtype::fp32, n, 11);
      double abs_sum = 0;
      for (std::size_t i = 0; i < x.size(); ++i) abs_sum += std::fabs(x.at(i));
      mpfr_t exact;
      test::exact_sum(exact, x, nullptr, false);
      const KernelSpec k{Op::sum, Dtype::fp32, Dtype::fp64, Accumulator::fp32, s};
      for (const LaunchConfig& cfg : launch_configs(k, n)) {
        const std::int64_t depth = addition_depth(k, Axis::all, n, cfg);
        ASSERT_GT(depth, 0);
        ASSERT_LT(double(depth) * u, 0.5);
        const double got = run_model(k, whole(x, k.op), cfg, 0).values.at(0);
        mpfr_t err;
        mpfr_init2(err, 4096);
        mpfr_sub_d(err, exact, got, MPFR_RNDN);
        const double e = std::fabs(mpfr_get_d(err, MPFR_RNDU));
        mpfr_clear(err);
        const double bound = double(depth) * u / (1 - double(depth) * u) * abs_sum * (1 + 1e-12);
        EXPECT_LE(e, bound) << to_string(s) << " n " << n << " threads " << cfg.threads << " depth " << depth;
      }
      mpfr_clear(exact);
    }
}

TEST(GalleryModelOrders, SaysWhatItDoesNotDo) {
  const KernelSpec base{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::naive, Shape::v2_sequential};
  EXPECT_TRUE(unsupported(base, Axis::inner).has_value());
  KernelSpec k = base;
  k.op = Op::mean;
  EXPECT_TRUE(unsupported(k, Axis::all).has_value());
  k = base;
  k.acc = Accumulator::kahan;
  EXPECT_TRUE(unsupported(k, Axis::all).has_value());
  k = base;
  k.in = Dtype::fp8_e4m3;
  EXPECT_TRUE(unsupported(k, Axis::all).has_value());
  k = base;
  k.op = Op::max;
  EXPECT_TRUE(unsupported(k, Axis::all).has_value());  // max: fp32 stands for all
  k.acc = Accumulator::fp32;
  EXPECT_FALSE(unsupported(k, Axis::all).has_value());
  const TypedArray x = mixed(Dtype::fp16, 100, 1);
  EXPECT_THROW(run_model(base, whole(x, base.op), LaunchConfig{4, 96}, 0), std::invalid_argument);  // not a power of two
  EXPECT_THROW(run_model(base, whole(x, base.op), LaunchConfig{4, 1024}, 0), std::invalid_argument);
  // The default matrix's table does not list the gallery.
  for (const auto& [s, name] : kShapeNames) EXPECT_FALSE(is_gallery(s)) << name;
  EXPECT_EQ(to_string(Shape::v4_unroll_last_warp), "v4_unroll_last_warp");
}

}  // namespace
}  // namespace ulpscope
