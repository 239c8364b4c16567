// The scan shapes' order (kernels/scan/scan_order.hpp) and CPU models
// (kernels/scan/scan_model.hpp): the groupings pinned as expressions, every
// element covered once in place (integer data, where any order is exact),
// the exact accumulator equal to the one-pass reference on every shape and
// launch, and the serial running values written out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "formats/round_to_dtype.hpp"
#include "formats/small_float.hpp"
#include "kernels/model.hpp"
#include "kernels/scan/scan_model.hpp"
#include "kernels/scan/scan_order.hpp"
#include "reference/exact_prefix.hpp"
#include "scan_test_values.hpp"

namespace ulpscope {
namespace {

// A merge that spells its grouping: the order pinned as text.
std::string join(const std::string& a, const std::string& b) { return "(" + a + " " + b + ")"; }

std::vector<std::string> lanes(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(std::to_string(i));
  return v;
}

TEST(ScanOrder, KoggeStoneGroupsByDoublingOffsets) {
  auto v = lanes(32);
  scan::kogge_stone_inclusive(v.data(), 32, join);
  EXPECT_EQ(v[0], "0");
  EXPECT_EQ(v[1], "(0 1)");
  EXPECT_EQ(v[2], "(0 (1 2))");
  EXPECT_EQ(v[3], "((0 1) (2 3))");
  EXPECT_EQ(v[5], "((0 1) ((2 3) (4 5)))");
  // Lane 7 after offsets 1, 2, 4: ((0 1) (2 3)) then ((4 5) (6 7)).
  EXPECT_EQ(v[7], "(((0 1) (2 3)) ((4 5) (6 7)))");
}

TEST(ScanOrder, BrentKungSweepsUpThenDown) {
  auto s = lanes(8);
  std::vector<std::string> exclusive(8);
  bool has[8];
  scan::brent_kung_block_scan(s.data(), exclusive.data(), has, 8, join);
  EXPECT_EQ(s[7], "(((0 1) (2 3)) ((4 5) (6 7)))");  // the up-sweep's root
  EXPECT_EQ(s[3], "((0 1) (2 3))");
  EXPECT_EQ(s[5], "(((0 1) (2 3)) (4 5))");        // down-sweep d = 2
  EXPECT_EQ(s[2], "((0 1) 2)");                      // down-sweep d = 1
  EXPECT_EQ(s[6], "((((0 1) (2 3)) (4 5)) 6)");
  EXPECT_FALSE(has[0]);
  EXPECT_TRUE(has[4]);
  EXPECT_EQ(exclusive[4], s[3]);
}

TEST(ScanOrder, WarpBlockScanPrefixesWarpsWithTheirTotalsScan) {
  auto v = lanes(64);
  std::vector<std::string> totals(2), exclusive(64);
  bool has[64];
  scan::warp_block_scan(v.data(), totals.data(), exclusive.data(), has, 64, join);
  auto warp_scan = lanes(64);
  scan::kogge_stone_inclusive(warp_scan.data(), 32, join);
  scan::kogge_stone_inclusive(warp_scan.data() + 32, 32, join);
  EXPECT_EQ(exclusive[1], warp_scan[0]);
  EXPECT_EQ(exclusive[32], warp_scan[31]);                     // lane 0 of warp 1: warp 0's total
  EXPECT_EQ(exclusive[33], join(warp_scan[31], warp_scan[32]));  // then its own lane 0
  EXPECT_EQ(v[63], join(warp_scan[31], warp_scan[63]));
}

TEST(ScanOrder, LookbackWindowIsOneWarpTree) {
  auto v = lanes(32);
  const std::string r = scan::window_reduce(v.data(), join);
  // Offset 16 first: lane j takes lane j + 16, then j + 8, ...: a fixed
  // strided tree whose first merge is (0 16) and last joins lane 1's side.
  EXPECT_EQ(r.substr(0, 10), "(((((0 16)");
  EXPECT_NE(r.find("(15 31)"), std::string::npos);
  EXPECT_EQ(r.find("(0 1)"), std::string::npos);
  EXPECT_EQ(std::count(r.begin(), r.end(), '('), 31);
}

// The whole window: lane j folds slots j, j + 32, j + 64, ... from the
// first (coalesced loads), then the 32 lanes join by the tree above; every
// slot takes part once.
TEST(ScanOrder, LookbackWindowFoldsEachLanesSlotsThenTheWarpTree) {
  auto slots = lanes(scan::kLookbackWindow);
  const std::string r = scan::lookback_window_reduce(slots.data(), join);
  std::vector<std::string> folded;
  for (int j = 0; j < scan::kWarpSize; ++j) {
    std::string f = std::to_string(j);
    for (int m = 1; m < scan::kWindowSlotsPerLane; ++m) f = join(f, std::to_string(j + m * scan::kWarpSize));
    folded.push_back(f);
  }
  EXPECT_EQ(r, scan::window_reduce(folded.data(), join));
  // Five levels of tree and M - 1 folds of lane 0 open with slot 0, then 32.
  const int opening = 5 + scan::kWindowSlotsPerLane - 1;
  EXPECT_EQ(r.substr(0, std::size_t(opening) + 5), std::string(std::size_t(opening), '(') + "0 32)");
  EXPECT_EQ(std::count(r.begin(), r.end(), '('), scan::kLookbackWindow - 1);
}

ReductionProblem problem_of(const TypedArray& x, Axis axis, std::int64_t rows, std::int64_t cols) {
  ReductionProblem p;
  p.op = Op::cumsum;
  p.axis = axis;
  p.rows = rows;
  p.cols = cols;
  p.x = &x;
  return p;
}

constexpr Shape kModelled[] = {Shape::serial, Shape::warp, Shape::block, Shape::reduce_then_scan, Shape::lookback};

// Small integers: every partial sum is exact in fp32, so any grouping gives
// the exact prefix; a misplaced, lost or doubled element shows.
TEST(ScanModel, EveryShapeCoversEveryElementOnceInPlace) {
  // 700001 with 64 threads: 684 tiles, past the look-back window's 512.
  for (std::int64_t n : {0, 1, 31, 33, 2047, 2049, 70001, 700001}) {
    std::vector<float> v(static_cast<std::size_t>(n));
    std::mt19937 g(static_cast<std::uint32_t>(n));
    for (auto& e : v) e = float(int(g() % 7) - 3);
    const TypedArray x(v);
    std::vector<double> want(v.size());
    double s = 0;
    for (std::size_t i = 0; i < v.size(); ++i) want[i] = s += v[i];
    for (Shape shape : kModelled) {
      const KernelSpec spec{Op::cumsum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, shape};
      const auto p = problem_of(x, Axis::all, 1, n);
      for (const LaunchConfig& cfg : launch_configs(spec, n)) {
        SCOPED_TRACE(::testing::Message() << to_string(shape) << " n=" << n << " threads=" << cfg.threads
                                          << " blocks=" << cfg.blocks);
        const ReductionResult r = run_model(spec, p, cfg);
        ASSERT_EQ(r.values.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(r.values[i], want[i]) << "element " << i;
      }
    }
  }
}

TEST(ScanModel, RowsAreScannedOnTheirOwn) {
  const std::int64_t rows = 3, cols = 4097;
  std::vector<float> v(std::size_t(rows * cols), 1.0f);
  const TypedArray x(v);
  for (Shape shape : kModelled) {
    const KernelSpec spec{Op::cumsum, Dtype::fp32, Dtype::fp32, Accumulator::kahan, shape};
    const ReductionResult r = run_model(spec, problem_of(x, Axis::inner, rows, cols), launch_configs(spec, cols)[0]);
    ASSERT_EQ(r.values.size(), v.size());
    for (std::int64_t row = 0; row < rows; ++row)
      for (std::int64_t c : {std::int64_t(0), std::int64_t(2048), cols - 1})
        EXPECT_EQ(r.values[std::size_t(row * cols + c)], double(c + 1)) << to_string(shape) << " row " << row;
  }
}

// exact: every prefix correctly rounded, the same bits on every shape and
// launch. Into the default output the model runs the kernels' fixed-point
// integer in each shape's order (fixed_point_sum.hpp for fp16 and fp8,
// wide_fixed_point_sum.hpp for bf16 and fp32), checked here against the
// reference's one-pass prefixes: values of every binade, cancellation to
// exact zeros, prefixes of -0, overflow past the largest finite value, NaN
// and infinities. Other outputs take the reference's prefixes themselves.
template <class T>
TypedArray exact_case(std::size_t n, std::uint64_t seed, bool specials) {
  std::mt19937_64 g(seed);
  std::vector<T> v;
  const double big = format_info(TypedArray(std::vector<T>{}).dtype()).max_finite;
  v.push_back(T(-0.0));
  v.push_back(T(-0.0));
  while (v.size() < n) {
    const std::uint64_t r = g();
    if (r % 17 == 0) {
      v.push_back(T(big));
    } else if (r % 17 == 1 && v.size() > 3) {
      v.push_back(T(-to_double(v[v.size() - 2])));  // cancels an earlier value
    } else {
      v.push_back(T::from_bits(std::uint32_t(r >> 20) & ((1u << T::format::bits) - 1)));  // any pattern
      if (!specials && !std::isfinite(to_double(v.back()))) v.back() = T(1.0);
    }
  }
  return TypedArray(v);
}

TEST(ScanModel, ExactIsTheReferenceOnEveryShapeAndLaunch) {
  std::vector<std::pair<TypedArray, Dtype>> cases;
  cases.emplace_back(exact_case<Fp16>(20000, 5, false), Dtype::fp16);
  cases.emplace_back(exact_case<Fp16>(3000, 6, true), Dtype::fp16);
  cases.emplace_back(exact_case<Fp8E4M3>(9000, 7, false), Dtype::fp32);
  cases.emplace_back(exact_case<Fp8E5M2>(9000, 8, true), Dtype::fp32);
  for (Dtype wide : {Dtype::bf16, Dtype::fp32}) {
    cases.emplace_back(test::hard_wide_values(wide, 9000, 9, false), wide);
    cases.emplace_back(test::hard_wide_values(wide, 3000, 10, true), wide);
  }
  {
    std::vector<Bf16> b;
    std::mt19937 g(5);
    std::normal_distribution<double> d(1.0, 3.0);
    for (int i = 0; i < 5000; ++i) b.push_back(Bf16(d(g)));
    cases.emplace_back(TypedArray(b), Dtype::fp32);  // not the default output: the reference path
  }
  for (const auto& [x, out] : cases) {
    const std::int64_t n = std::int64_t(x.size());
    const std::vector<double> want = cumsum_rounded(x, OutputFormat{out});
    for (Shape shape : kModelled) {
      const KernelSpec spec{Op::cumsum, x.dtype(), out, Accumulator::exact, shape};
      EXPECT_EQ(scan::has_fixed_point_scan(spec), out == default_out_dtype(x.dtype()));
      for (const LaunchConfig& cfg : launch_configs(spec, n)) {
        const ReductionResult r = run_model(spec, problem_of(x, Axis::all, 1, n), cfg);
        ASSERT_EQ(r.values.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i)
          ASSERT_TRUE(std::memcmp(&r.values[i], &want[i], sizeof(double)) == 0 ||
                      (std::isnan(r.values[i]) && std::isnan(want[i])))
              << to_string(x.dtype()) << ' ' << to_string(shape) << " threads=" << cfg.threads << " element " << i
              << ": " << r.values[i] << " vs " << want[i];
      }
    }
  }
}

// serial naive on fp16: the running value rounded to fp16 after every
// addition, written out here with the format's own rounding.
TEST(ScanModel, SerialNaiveIsTheRunningValueInTheInputFormat) {
  std::vector<Fp16> v;
  for (int i = 0; i < 5000; ++i) v.push_back(Fp16(0.7 + (i % 13) * 0.01));
  const TypedArray x(v);
  const KernelSpec spec{Op::cumsum, Dtype::fp16, Dtype::fp16, Accumulator::naive, Shape::serial};
  const ReductionResult r = run_model(spec, problem_of(x, Axis::all, 1, 5000), LaunchConfig{1, 1});
  double s = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    s = round_to_dtype(s + to_double(v[i]), Dtype::fp16);
    ASSERT_EQ(r.values[i], s) << "element " << i;
  }
  EXPECT_LT(r.values.back(), 2100.0);  // stuck near 2048, where the fp16 ulp is 2
}

// run_model_into reuses a result's arrays: whatever they held before (a
// longer scan, an exact one without running values, statistics), the outputs
// are run_model's, bit for bit, and nothing stale is left.
TEST(ScanModel, RunIntoAReusedResultGivesRunModelsOutputs) {
  ReductionResult reused;
  reused.values.assign(100000, 7.0);
  reused.unrounded.assign(100000, 7.0);
  reused.statistics.assign(3, 7.0);
  for (std::int64_t n : {70001, 33, 0, 4097}) {
    std::vector<float> v(static_cast<std::size_t>(n));
    std::mt19937 g(static_cast<std::uint32_t>(n) + 1);
    for (auto& e : v) e = float(int(g() % 2001) - 1000) / 64.0f;
    const TypedArray x(v);
    for (Accumulator acc : {Accumulator::fp32, Accumulator::kahan, Accumulator::exact}) {
      const KernelSpec spec{Op::cumsum, Dtype::fp32, Dtype::fp32, acc, Shape::lookback};
      const auto p = problem_of(x, Axis::all, 1, n);
      for (const LaunchConfig& cfg : launch_configs(spec, n)) {
        SCOPED_TRACE(::testing::Message() << to_string(acc) << " n=" << n << " threads=" << cfg.threads);
        const ReductionResult want = run_model(spec, p, cfg);
        run_model_into(spec, p, cfg, 0, reused);
        ASSERT_EQ(reused.values.size(), want.values.size());
        for (std::size_t i = 0; i < want.values.size(); ++i)
          ASSERT_EQ(std::bit_cast<std::uint64_t>(reused.values[i]), std::bit_cast<std::uint64_t>(want.values[i]))
              << "output " << i;
        EXPECT_EQ(reused.unrounded, want.unrounded);
        EXPECT_TRUE(reused.statistics.empty());
      }
    }
  }
}

// lookback's default launch follows how its tiles publish their partials
// (ScanPolicy::lookback_threads): 256 threads where every partial fits the
// packed status words, 512 for the exact scan's wide integer of bf16 and
// fp32; every launch list still moves T through 512, 256, 128 and 64.
TEST(ScanModel, LookbackDefaultFollowsHowItsPartialsArePublished) {
  const std::int64_t n = std::int64_t(1) << 24;
  for (Accumulator acc : {Accumulator::naive, Accumulator::fp32, Accumulator::fp64, Accumulator::kahan,
                          Accumulator::exact})
    for (Dtype in : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2}) {
      const KernelSpec spec{Op::cumsum, in, default_out_dtype(in), acc, Shape::lookback};
      SCOPED_TRACE(::testing::Message() << to_string(acc) << " " << to_string(in));
      const bool wide = acc == Accumulator::exact && (in == Dtype::bf16 || in == Dtype::fp32);
      const std::vector<LaunchConfig> c = launch_configs(spec, n);
      ASSERT_EQ(c.size(), 4u);
      EXPECT_EQ(c[0].threads, wide ? 512 : 256);
      std::vector<int> threads;
      for (const LaunchConfig& cfg : c) {
        threads.push_back(cfg.threads);
        const std::int64_t tile = std::int64_t(cfg.threads) * (format_info(in).bits == 16 ? 32 : 16);
        EXPECT_EQ(cfg.blocks, (n + tile - 1) / tile);  // one block a tile
      }
      std::sort(threads.begin(), threads.end());
      EXPECT_EQ(threads, (std::vector<int>{64, 128, 256, 512}));
    }
}

TEST(ScanModel, UnsupportedCombinationsSayWhy) {
  const KernelSpec tree{Op::cumsum, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::tree};
  EXPECT_NE(unsupported(tree, Axis::all).value_or("").find("does not scan"), std::string::npos);
  const KernelSpec pairwise{Op::cumsum, Dtype::fp16, Dtype::fp16, Accumulator::pairwise, Shape::warp};
  EXPECT_TRUE(unsupported(pairwise, Axis::all).has_value());
  const KernelSpec outer{Op::cumsum, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::warp};
  EXPECT_TRUE(unsupported(outer, Axis::outer).has_value());
  const KernelSpec sum_warp{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::warp};
  EXPECT_NE(unsupported(sum_warp, Axis::all).value_or("").find("scan shape"), std::string::npos);
  const KernelSpec cub{Op::cumsum, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::cub};
  EXPECT_TRUE(unsupported(cub, Axis::all).has_value());  // no CPU model
  EXPECT_FALSE(unsupported(outer, Axis::inner).has_value());
}

}  // namespace
}  // namespace ulpscope
