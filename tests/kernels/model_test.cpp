// The CPU models (kernels/model.hpp): end-to-end facts of the textbook
// algorithms, the tree order against an independent re-implementation, every
// combination, selections, rows, norms, logsumexp and the launch configurations.
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
using test::run1;
using test::spec_of;
using test::whole;

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
