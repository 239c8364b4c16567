// The tree and atomic kernels on the GPU against their CPU models, bit for bit
// (docs/spec.md, "Kernel shapes"): every op x format x accumulator on the ugly
// sizes at three launch configurations, repeated runs, row-wise orders, and
// one input above 2^31 elements (64-bit indices), long chains on small grids.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/gpu_backend.hpp"
#include "kernels/model.hpp"
#include "model_test_support.hpp"
#include "gpu_test_backend.hpp"

namespace ulpscope {
namespace {

using test::make_array;

bool same_bits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  std::uint64_t ua, ub;
  std::memcpy(&ua, &a, 8);
  std::memcpy(&ub, &b, 8);
  return ua == ub;
}

constexpr Op kOps[] = {Op::sum, Op::mean, Op::dot, Op::sumsq, Op::norm2, Op::rms, Op::mean_var,
                       Op::max, Op::min, Op::amax, Op::logsumexp, Op::rmsnorm, Op::layernorm};
constexpr Accumulator kAccs[] = {Accumulator::naive, Accumulator::fp32,     Accumulator::fp64,
                                 Accumulator::kahan, Accumulator::pairwise, Accumulator::welford,
                                 Accumulator::two_pass, Accumulator::exact};

// Values with a spread of magnitudes and signs, a mean away from zero, and
// ties to round: enough to make every order visible in the low bits.
TypedArray inputs(Dtype d, std::int64_t n, std::uint64_t seed) {
  std::uint64_t s = seed;
  return make_array(d, n, [&](auto) {
    const double u = test::uniform01(s);
    return (0.25 + u) * std::exp2(double(int(test::mix(s) % 7) - 3)) * ((test::mix(s) & 3) == 0 ? -1 : 1);
  });
}

// Zeros of both signs, mostly: the selections' +0 > -0 and the sums' signed
// zeros, with a few values and (nan_at >= 0) one NaN at nan_at.
TypedArray signed_zeros(Dtype d, std::int64_t n, std::uint64_t seed, std::int64_t nan_at) {
  std::uint64_t s = seed;
  return make_array(d, n, [&](auto i) {
    if (std::int64_t(i) == nan_at) return std::nan("");
    const std::uint64_t r = test::mix(s) % 64;
    return r == 0 ? 0.5 : r == 1 ? -0.25 : (r & 2 ? -0.0 : 0.0);
  });
}

using MakeInputs = std::function<TypedArray(Dtype, std::int64_t, std::uint64_t)>;

int compare_all(GpuBackend* g, Axis axis, std::int64_t rows, std::int64_t cols, Shape shape,
                const MakeInputs& make = inputs) {
  int compared = 0;
  for (Dtype in : kInputDtypes) {
    const TypedArray x = make(in, rows * cols, 1 + std::uint64_t(cols));
    const TypedArray y = make(in, rows * cols, 2 + std::uint64_t(cols));
    const TypedArray gamma = inputs(in, cols, 3), beta = inputs(in, cols, 4);
    ReductionProblem p;
    p.gamma = &gamma;
    p.beta = &beta;
    p.axis = axis;
    p.rows = rows;
    p.cols = cols;
    p.x = &x;
    p.y = &y;
    g->upload(p);
    for (Op op : kOps)
      for (Accumulator acc : kAccs) {
        KernelSpec k;
        k.op = op;
        k.in = in;
        k.out = default_out_dtype(in);
        k.acc = acc;
        k.shape = shape;
        if (unsupported(k, axis) || GpuBackend::unavailable(k, axis)) continue;
        p.op = op;
        const auto configs = launch_configs(k, axis == Axis::all ? rows * cols : p.length());
        for (std::size_t c = 0; c < 3 && c < configs.size(); ++c) {
          SCOPED_TRACE(std::string(to_string(op)) + " " + std::string(to_string(in)) + " " +
                       std::string(to_string(acc)) + " " + std::string(to_string(axis)) + " rows=" +
                       std::to_string(rows) + " cols=" + std::to_string(cols) + " config " + std::to_string(c));
          const ReductionResult want = run_model(k, p, configs[c], 0);
          const ReductionResult got = g->run(k, configs[c]);
          EXPECT_EQ(got.values.size(), want.values.size());
          if (got.values.size() != want.values.size()) return compared;
          for (std::size_t i = 0; i < want.values.size(); ++i) {
            if (shape == Shape::atomic) {
              // The order of the atomic adds varies, so bits may differ, except
              // where fp64 sums these inputs exactly (a few dozen bits each).
              // Elsewhere the accumulators' values (before the output's rounding,
              // which may overflow fp16) stay within a relative 1e-3.
              if (op == Op::sum && acc == Accumulator::fp64) {
                EXPECT_TRUE(same_bits(got.values[i], want.values[i]));
              } else {
                const bool pre = !got.unrounded.empty();
                const double gv = pre ? got.unrounded[i] : got.values[i], wv = pre ? want.unrounded[i] : want.values[i];
                EXPECT_TRUE(gv == wv || std::fabs(gv - wv) <= 1e-3 * std::fabs(wv) + 1e-6)
                    << std::hexfloat << "gpu " << gv << " model " << wv;
              }
              continue;
            }
            EXPECT_TRUE(same_bits(got.values[i], want.values[i]))
                << std::hexfloat << "gpu " << got.values[i] << " model " << want.values[i] << " at " << i;
            if (!got.unrounded.empty()) {
              EXPECT_TRUE(same_bits(got.unrounded[i], want.unrounded[i]))
                  << std::hexfloat << "gpu " << got.unrounded[i] << " model " << want.unrounded[i];
            }
          }
          // Run to run: the same bits again.
          const ReductionResult again = g->run(k, configs[c]);
          for (std::size_t i = 0; i < got.values.size() && shape != Shape::atomic; ++i)
            EXPECT_TRUE(same_bits(got.values[i], again.values[i]));
          ++compared;
          if (::testing::Test::HasFatalFailure()) return compared;
        }
      }
  }
  return compared;
}

// One kernel at one launch against its model: values and unrounded values, bit for bit.
void expect_same_as_model(GpuBackend* g, const KernelSpec& k, const ReductionProblem& p, const LaunchConfig& c) {
  const ReductionResult want = run_model(k, p, c, 0);
  const ReductionResult got = g->run(k, c);
  ASSERT_EQ(got.values.size(), want.values.size());
  ASSERT_EQ(got.unrounded.size(), want.unrounded.size());
  for (std::size_t i = 0; i < want.values.size(); ++i)
    EXPECT_TRUE(same_bits(got.values[i], want.values[i]))
        << std::hexfloat << "gpu " << got.values[i] << " model " << want.values[i];
  for (std::size_t i = 0; i < want.unrounded.size(); ++i)
    EXPECT_TRUE(same_bits(got.unrounded[i], want.unrounded[i]))
        << std::hexfloat << "gpu " << got.unrounded[i] << " model " << want.unrounded[i];
}

class GpuTreeWhole : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(GpuTreeWhole, EveryKernelMatchesItsModelBitForBit) {
  REQUIRE_GPU();
  EXPECT_GT(compare_all(g, Axis::all, 1, GetParam(), Shape::tree), 100);
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuTreeWhole,
                         ::testing::Values(0, 1, 31, 32, 33, 1023, 4097, (std::int64_t(1) << 20) + 3));

// Small grids, so that each thread's chain is thousands of vectors long: the
// exact first passes that read through cp.async slots (kernels/tree/tree_tuning.hpp,
// exact_async_stages: 4 per thread) refill every slot many times, and their
// chains end at every offset into the ring. The default configurations give
// most threads at most 4-6 vectors at these sizes.
TEST(GpuTreeChains, LongChainsMatchTheirModels) {
  REQUIRE_GPU();
  int compared = 0;
  for (std::int64_t n : {std::int64_t(4097), (std::int64_t(1) << 20) + 3}) {
    for (Dtype in : kInputDtypes) {
      const TypedArray x = inputs(in, n, 11), y = inputs(in, n, 12);
      ReductionProblem p;
      p.rows = 1;
      p.cols = n;
      p.x = &x;
      p.y = &y;
      g->upload(p);
      for (Op op : {Op::sum, Op::dot, Op::sumsq, Op::rms, Op::mean_var}) {
        KernelSpec k;
        k.op = op;
        k.in = in;
        k.out = default_out_dtype(in);
        k.acc = Accumulator::exact;
        k.shape = Shape::tree;
        p.op = op;
        for (const LaunchConfig c : {LaunchConfig{1, 32}, LaunchConfig{3, 64}, LaunchConfig{7, 96}}) {
          SCOPED_TRACE(std::string(to_string(op)) + " " + std::string(to_string(in)) + " n=" + std::to_string(n) +
                       " blocks=" + std::to_string(c.blocks) + " threads=" + std::to_string(c.threads));
          expect_same_as_model(g, k, p, c);
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 2 * 5 * 5 * 3);
}

// The exact squares of bf16 add into bins that a block flushes whenever its
// threads may have added 2^23 squares (kernels/tree/block_bins.cuh): one or
// two blocks over 3 * 2^23 + 1001 elements flush three to six times, the
// last segment short and ending in the tail. Most values lie in 2^-3..2^4,
// one in eight anywhere down to 2^-60 (bins 8 to 16). mean_var's values go
// to windows of 36 binades (exact_value_window.hpp): those far below go to
// the integer the block's threads share, alone.
TEST(GpuTreeBins, SegmentsOfTheBlocksMatchTheirModels) {
  REQUIRE_GPU();
  const std::int64_t n = 3 * (std::int64_t(1) << 23) + 1001;
  std::uint64_t s = 4242;
  const TypedArray x = make_array(Dtype::bf16, n, [&](auto) {
    const int e = test::mix(s) % 8 == 0 ? int(test::mix(s) % 64) - 60 : int(test::mix(s) % 7) - 3;
    return (1.0 + test::uniform01(s)) * std::exp2(double(e)) * ((test::mix(s) & 1) ? -1 : 1);
  });
  ReductionProblem p;
  p.rows = 1;
  p.cols = n;
  p.x = &x;
  g->upload(p);
  int compared = 0;
  for (Op op : {Op::sumsq, Op::rms, Op::mean_var}) {
    KernelSpec k;
    k.op = op;
    k.in = Dtype::bf16;
    k.out = default_out_dtype(k.in);
    k.acc = Accumulator::exact;
    k.shape = Shape::tree;
    p.op = op;
    for (const LaunchConfig c : {LaunchConfig{1, 32}, LaunchConfig{2, 512}}) {
      SCOPED_TRACE(std::string(to_string(op)) + " blocks=" + std::to_string(c.blocks) +
                   " threads=" + std::to_string(c.threads));
      expect_same_as_model(g, k, p, c);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
}

// Special values: the selections' signed zeros (max.NaN/min.NaN on the GPU,
// spelled out in the model) and NaN through every op and accumulator.
TEST(GpuTreeSpecials, SignedZerosAndNaNMatchTheModels) {
  REQUIRE_GPU();
  for (std::int64_t n : {std::int64_t(33), std::int64_t(4097), (std::int64_t(1) << 20) + 3}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    EXPECT_GT(compare_all(g, Axis::all, 1, n, Shape::tree,
                          [](Dtype d, std::int64_t m, std::uint64_t s) { return signed_zeros(d, m, s, -1); }),
              100);
    EXPECT_GT(compare_all(g, Axis::all, 1, n, Shape::tree,
                          [](Dtype d, std::int64_t m, std::uint64_t s) { return signed_zeros(d, m, s, m / 3); }),
              100);
  }
}

TEST(GpuTreeRows, InnerAndOuterMatchTheirModels) {
  REQUIRE_GPU();
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{7, 1000}, {33, 31}, {3, 4097}, {1, 1}}) {
    EXPECT_GT(compare_all(g, Axis::inner, rows, cols, Shape::tree), 0);
    EXPECT_GT(compare_all(g, Axis::outer, rows, cols, Shape::tree), 0);
  }
}

TEST(GpuAtomic, StaysWithinTheOrderEnvelopeOfItsModel) {
  REQUIRE_GPU();
  EXPECT_GT(compare_all(g, Axis::all, 1, 4097, Shape::atomic), 0);
  EXPECT_GT(compare_all(g, Axis::all, 1, (1 << 20) + 3, Shape::atomic), 0);
}

// 2^31 + 5 fp8 elements: 64-bit indices end to end. The exact sum is one
// integer whatever the order, so the GPU must give RN(sum) computed here.
TEST(GpuTreeLarge, Fp8SumAbove2To31Elements) {
  REQUIRE_GPU();
  const std::int64_t n = (std::int64_t(1) << 31) + 5;
  std::vector<Fp8E4M3> v(static_cast<std::size_t>(n));
  std::int64_t units = 0;  // the exact sum in units of 2^-9, E4M3's least subnormal
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint8_t b = std::uint8_t((i * 37 + (i >> 20)) & 0x77);  // finite, both signs
    v[std::size_t(i)] = Fp8E4M3::from_bits(b ^ (i % 3 == 0 ? 0x80 : 0));
    units += std::int64_t(std::ldexp(v[std::size_t(i)].to_double(), 9));
  }
  const TypedArray x(std::move(v));
  ReductionProblem p;
  p.op = Op::sum;
  p.rows = 1;
  p.cols = n;
  p.x = &x;
  g->upload(p);
  KernelSpec k;
  k.op = Op::sum;
  k.in = Dtype::fp8_e4m3;
  k.out = Dtype::fp64;
  k.acc = Accumulator::exact;
  k.shape = Shape::tree;
  const double want = std::ldexp(double(units), -9);  // |units| < 2^53: exact
  for (const auto& c : launch_configs(k, n)) EXPECT_EQ(g->run(k, c).values.at(0), want);
}

}  // namespace
}  // namespace ulpscope
