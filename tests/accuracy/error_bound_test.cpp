#include "accuracy/error_bound.hpp"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "accuracy/distribution.hpp"
#include "accuracy/metrics.hpp"
#include "formats/round_to_dtype.hpp"

namespace ulpscope {
namespace {

constexpr double kU32 = 0x1p-24;

// The exact sum of doubles, as an ExactReal (mpfr_sum at 2200 bits: exact for
// values of the input formats and their products).
ExactReal exact_sum(const std::vector<double>& v) {
  std::vector<mpfr_t> t(v.size());
  std::vector<mpfr_ptr> ptrs(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    mpfr_init2(t[i], 53);
    mpfr_set_d(t[i], v[i], MPFR_RNDN);
    ptrs[i] = t[i];
  }
  ExactReal s(2200);
  mpfr_sum(s.get(), ptrs.data(), v.size(), MPFR_RNDN);
  for (auto& x : t) mpfr_clear(x);
  return s;
}

BoundInputs sum_inputs(Accumulator acc, Dtype in, Dtype out, std::int64_t n, std::int64_t depth, double sum_abs,
                       double sum) {
  BoundInputs b;
  b.op = Op::sum;
  b.acc = acc;
  b.in = in;
  b.out = out;
  b.n = n;
  b.depth = depth;
  b.sum_abs = sum_abs;
  b.sum = sum;
  return b;
}

TEST(ErrorBound, RecursiveSumOfTwoValuesByHand) {
  // fl(1 + 2^-24) = 1 in fp32 (a tie, to even): error 2^-24.
  const double A = 1 + kU32;
  const BoundInputs b = sum_inputs(Accumulator::fp32, Dtype::fp32, Dtype::fp32, 2, 1, A, A);
  // gamma_1 A, then the final rounding u_out (S + E) + eta_out.
  const double gamma1 = kU32 / (1 - kU32);
  const double E = gamma1 * A;
  EXPECT_DOUBLE_EQ(*error_bound(b), E + kU32 * (A + E) + 0x1p-150);
  const float s = 1.0f + float(kU32);
  ASSERT_EQ(s, 1.0f);
  const ExactReal r = exact_sum({1.0, kU32});
  EXPECT_NEAR(*bound_ratio(s, r, b), 0.5, 1e-6);
}

TEST(ErrorBound, DeletedCompensationShowsAboveOne) {
  // 1 followed by 1024 values 2^-24: plain fp32 recursive summation loses
  // every one (ties to even), 2^-14 in all; gamma_1024 (1 + 2^-14) just covers it.
  std::vector<double> v(1025, kU32);
  v[0] = 1.0;
  float s = 0;
  for (double x : v) s += float(x);
  ASSERT_EQ(s, 1.0f);
  const ExactReal r = exact_sum(v);
  const double A = 1 + 1024 * kU32;
  const auto as_fp32 = bound_ratio(s, r, sum_inputs(Accumulator::fp32, Dtype::fp32, Dtype::fp32, 1025, 1024, A, A));
  ASSERT_TRUE(as_fp32.has_value());
  EXPECT_LE(*as_fp32, 1.0);
  EXPECT_GT(*as_fp32, 0.99);
  // The same bits claimed as Kahan: far above 1.
  const auto as_kahan = bound_ratio(s, r, sum_inputs(Accumulator::kahan, Dtype::fp32, Dtype::fp32, 1025, 1024, A, A));
  ASSERT_TRUE(as_kahan.has_value());
  EXPECT_GT(*as_kahan, 100.0);
  // Neumaier's sum gets it exactly: ratio 0.
  float sum = 0, c = 0;
  for (double xd : v) {
    const float x = float(xd), t = sum + x;
    c += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  EXPECT_EQ(*bound_ratio(sum + c, r, sum_inputs(Accumulator::kahan, Dtype::fp32, Dtype::fp32, 1025, 1024, A, A)), 0.0);
}

TEST(ErrorBound, ExactIsTheFinalRoundingOnly) {
  const ExactReal r = exact_sum({1.0, 0x1p-30});
  const BoundInputs b = sum_inputs(Accumulator::exact, Dtype::fp32, Dtype::fp32, 2, 1, 1 + 0x1p-30, 1 + 0x1p-30);
  EXPECT_DOUBLE_EQ(*error_bound(b), kU32 * (1 + 0x1p-30) + 0x1p-150);
  EXPECT_LE(*bound_ratio(1.0, r, b), 1.0);                // RN_fp32 of the exact sum
  EXPECT_GT(*bound_ratio(1.0 + 0x1p-23, r, b), 1.0);      // one ulp off
  // max, min, amax round nothing: an exact selection has ratio 0.
  BoundInputs m = b;
  m.op = Op::max;
  m.sum = 3.0;
  EXPECT_EQ(*bound_ratio(3.0, exact_sum({3.0}), m), 0.0);
}

TEST(ErrorBound, UndefinedOrVacuous) {
  // naive fp16, 3000 terms in serial order: 2999 * 2^-11 >= 1, gamma says nothing.
  EXPECT_FALSE(error_bound(sum_inputs(Accumulator::naive, Dtype::fp16, Dtype::fp16, 3000, 2999, 3000, 3000)));
  BoundInputs b = sum_inputs(Accumulator::fp32, Dtype::fp32, Dtype::fp32, 4, 3, 4, 4);
  EXPECT_TRUE(error_bound(b).has_value());
  for (Op op : {Op::logsumexp, Op::rms, Op::rmsnorm, Op::layernorm}) {
    b.op = op;
    EXPECT_FALSE(error_bound(b).has_value()) << to_string(op);
  }
  b.op = Op::mean_var;
  b.component = 1;
  b.acc = Accumulator::kahan;  // no variance bound derived for it
  EXPECT_FALSE(error_bound(b).has_value());
  b = sum_inputs(Accumulator::fp32, Dtype::fp32, Dtype::fp32, 4, 3, 4, 4);
  EXPECT_FALSE(bound_ratio(HUGE_VAL, exact_sum({1, 1, 1, 1}), b).has_value());
  EXPECT_FALSE(bound_ratio(NAN, exact_sum({1, 1, 1, 1}), b).has_value());
}

// --- the bounds against honest serial implementations, on the distributions ---

struct SerialRun {
  Accumulator acc;
  Op op;
  int component;
  double result;
  std::int64_t depth;
};

int ceil_log2(std::int64_t n) {
  int k = 0;
  while ((std::int64_t(1) << k) < n) ++k;
  return k;
}

float pairwise(const std::vector<double>& v, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return float(v[lo]);
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  return pairwise(v, lo, mid) + pairwise(v, mid, hi);
}

std::vector<SerialRun> serial_runs(const std::vector<double>& x, const std::vector<double>& y, Dtype in) {
  const std::int64_t n = std::int64_t(x.size());
  std::vector<SerialRun> runs;
  // naive: the running sum rounded to the input format (exact in double
  // first for fp16 and fp8, whose sums of two fit in 53 bits).
  if (in != Dtype::fp32 && in != Dtype::bf16) {
    double s = 0;
    for (double v : x) s = round_to_dtype(s + v, in);
    runs.push_back({Accumulator::naive, Op::sum, 0, s, n - 1});
  }
  float s32 = 0, dot = 0;
  double s64 = 0;
  float ks = 0, kc = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = float(x[i]);
    s32 += v;
    s64 += x[i];
    dot += v * float(y[i]);
    const float t = ks + v;
    kc += std::abs(ks) >= std::abs(v) ? (ks - t) + v : (v - t) + ks;
    ks = t;
  }
  runs.push_back({Accumulator::fp32, Op::sum, 0, s32, n - 1});
  runs.push_back({Accumulator::fp64, Op::sum, 0, double(float(s64)), n - 1});
  runs.push_back({Accumulator::kahan, Op::sum, 0, ks + kc, n - 1});
  runs.push_back({Accumulator::fp32, Op::dot, 0, dot, n - 1});
  runs.push_back({Accumulator::fp32, Op::mean, 0, s32 / float(n), n - 1});
  if (n > 0) runs.push_back({Accumulator::pairwise, Op::sum, 0, pairwise(x, 0, x.size()), ceil_log2(n)});
  // Welford, and two-pass on the serial fp32 mean.
  float mean = 0, m2 = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = float(x[i]), d = v - mean;
    mean += d / float(i + 1);
    m2 += d * (v - mean);
  }
  runs.push_back({Accumulator::welford, Op::mean_var, 0, mean, n - 1});
  runs.push_back({Accumulator::welford, Op::mean_var, 1, m2 / float(n), n - 1});
  const float m = s32 / float(n);
  float ss = 0;
  for (double v : x) ss += (float(v) - m) * (float(v) - m);
  runs.push_back({Accumulator::two_pass, Op::mean_var, 0, m, n - 1});
  runs.push_back({Accumulator::two_pass, Op::mean_var, 1, ss / float(n), n - 1});
  return runs;
}

class BoundsHold : public ::testing::TestWithParam<Dtype> {};

TEST_P(BoundsHold, ForHonestSerialAccumulatorsOnEveryDistribution) {
  const Dtype in = GetParam();
  std::map<std::string, std::pair<double, std::string>> worst;  // per accumulator and op
  int checked = 0;
  for (const auto& [d, name] : kDistributionNames) {
    // NaN and Inf have no bound ratio; near_max overflows by design.
    if (d == Distribution::with_nan || d == Distribution::with_inf || d == Distribution::inf_minus_inf ||
        d == Distribution::near_max)
      continue;
    for (std::int64_t n : {1, 33, 1000, 4096}) {
      const GeneratedInput g = generate({d, std::nullopt}, in, n, 31, true);
      const std::vector<double> x = g.x.to_doubles(), y = g.y->to_doubles();
      std::vector<double> abs_x(x.size()), xy(x.size()), abs_xy(x.size()), sq(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        abs_x[i] = std::abs(x[i]);
        xy[i] = x[i] * y[i];  // exact in double: at most 48 bits
        abs_xy[i] = std::abs(xy[i]);
        sq[i] = x[i] * x[i];
      }
      const ExactReal sum = exact_sum(x), dot = exact_sum(xy), sumsq = exact_sum(sq);
      const double sum_abs = exact_sum(abs_x).to_double(), dot_abs = exact_sum(abs_xy).to_double();
      ExactReal mean(2300), var(64);
      mpfr_div_si(mean.get(), sum.get(), long(n), MPFR_RNDN);
      const double S = *sum_squared_deviations(sum, sumsq, n);
      mpfr_set_d(var.get(), S / double(n), MPFR_RNDN);
      ExactReal var_exact(2300);
      {
        // n S = n sum x^2 - (sum x)^2, exactly; var = S / n at 2300 bits.
        ExactReal a(2300), b2(2300);
        mpfr_mul_si(a.get(), sumsq.get(), long(n), MPFR_RNDN);
        mpfr_sqr(b2.get(), sum.get(), MPFR_RNDN);
        mpfr_sub(var_exact.get(), a.get(), b2.get(), MPFR_RNDN);
        mpfr_div_si(var_exact.get(), var_exact.get(), long(n) * long(n), MPFR_RNDN);
      }
      for (const SerialRun& r : serial_runs(x, y, in)) {
        BoundInputs b = sum_inputs(r.acc, in, Dtype::fp32, n, r.depth, sum_abs, sum.to_double());
        b.op = r.op;
        b.component = r.component;
        const ExactReal* ref = &sum;
        if (r.op == Op::dot) {
          b.sum_abs = dot_abs;
          b.sum = dot.to_double();
          ref = &dot;
        } else if (r.op == Op::mean || (r.op == Op::mean_var && r.component == 0)) {
          ref = &mean;
        } else if (r.op == Op::mean_var) {
          b.sum_sq_dev = S;
          b.mean = mean.to_double();
          ref = &var_exact;
        }
        const auto ratio = bound_ratio(r.result, *ref, b);
        if (!ratio) continue;  // overflowed (log_uniform's sums), or a vacuous gamma
        ++checked;
        const std::string algo = std::string(to_string(r.acc)) + " " + std::string(to_string(r.op)) +
                                 (r.op == Op::mean_var ? (r.component ? " variance" : " mean") : "");
        const std::string where = std::string(name) + " n=" + std::to_string(n);
        EXPECT_LE(*ratio, 1.0) << algo << " on " << where;
        auto& w = worst[algo];
        if (*ratio >= w.first) w = {*ratio, where};
      }
    }
  }
  EXPECT_GT(checked, 300);
  std::printf("  %s: %d ratios; the largest of each:", std::string(to_string(in)).c_str(), checked);
  for (const auto& [algo, w] : worst) std::printf(" %s %.2g (%s);", algo.c_str(), w.first, w.second.c_str());
  std::printf("\n");
}

INSTANTIATE_TEST_SUITE_P(Formats, BoundsHold, ::testing::ValuesIn(kInputDtypes),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace ulpscope
