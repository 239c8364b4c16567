// GpuBackend: upload, run, time, the yardsticks, the cub shapes against exact
// sums, out-of-memory and unavailable kernels reported as such. Skips (with
// the reason) where there is no CUDA device; the availability checks run
// everywhere.
#include "kernels/gpu_backend.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "formats/typed_array.hpp"
#include "kernels/counter_rng.hpp"

namespace ulpscope {
namespace {

// Inputs on a grid of 2^-24 in (-1, 1), rounded to the format: every value is
// k * 2^-24 with an integer k (fp16, bf16 and fp8 roundings of such a value
// stay on that grid), so sums, sums of squares and dot products are exact in
// __int128 and the reference needs no MPFR.
constexpr double kGrid = 1.0 / 16777216.0;  // 2^-24

TypedArray grid_values(Dtype d, std::int64_t n, std::uint64_t seed) {
  TypedArray a(d, std::size_t(n));
  std::visit(
      [&](auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        for (auto& e : v) {
          const auto k = std::int64_t(splitmix64(seed) >> 39) - (std::int64_t(1) << 24);  // [-2^24, 2^24)
          e = T(double(k) * kGrid);
        }
      },
      a.data());
  return a;
}

__int128 grid_units(double x, int power) {  // x * 2^(24 * power), exact
  return __int128(std::llround(std::ldexp(x, 24 * power)));
}

struct Exact {
  double value;     // the exact result, rounded once to double
  double abs_sum;   // sum |terms|, for the error bound
};

// sum / sumsq / dot of whole arrays or of one reduction of a [rows, cols] view.
Exact exact_reduce(Op op, const std::vector<double>& x, const std::vector<double>& y,
                   const std::vector<std::int64_t>& indices) {
  __int128 s = 0;
  long double abs_sum = 0;
  const int power = (op == Op::sumsq || op == Op::dot) ? 2 : 1;
  for (std::int64_t i : indices) {
    const double xi = x[std::size_t(i)];
    __int128 t = 0;
    if (op == Op::sumsq) t = grid_units(xi, 1) * grid_units(xi, 1);
    else if (op == Op::dot) t = grid_units(xi, 1) * grid_units(y[std::size_t(i)], 1);
    else t = grid_units(xi, 1);
    s += t;
    abs_sum += (long double)(t < 0 ? -t : t);
  }
  const long double scale = std::ldexp(1.0L, -24 * power);
  return {double((long double)s * scale), double(abs_sum * scale)};
}

// gamma_k = k u / (1 - k u): the bound on any order of k floating-point
// additions (Higham, Accuracy and Stability of Numerical Algorithms, 2002,
// eq. (4.4) and Lemma 3.1), and on a k-term dot product (eq. (3.4)).
double gamma(std::int64_t k, int precision) {
  const double ku = double(k) * std::ldexp(1.0, -precision);
  return ku / (1 - ku);
}

int precision_of(Accumulator acc, Dtype in) {
  if (acc == Accumulator::fp64) return 53;
  if (acc == Accumulator::naive) return in == Dtype::fp16 ? 11 : in == Dtype::bf16 ? 8 : 24;
  return 24;
}

std::vector<std::int64_t> all_indices(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i)] = i;
  return v;
}

class GpuBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = GpuBackend::open(&why_not_).release();
  }
  static void TearDownTestSuite() {
    delete backend_;
    backend_ = nullptr;
  }
  void SetUp() override {
    if (backend_ == nullptr) GTEST_SKIP() << "no CUDA device: " << why_not_;
  }
  static GpuBackend& gpu() { return *backend_; }

  static inline GpuBackend* backend_ = nullptr;
  static inline std::string why_not_;
};

TEST(GpuBackendAvailability, OpenSaysWhyNotWhenItFails) {
  std::string why;
  auto b = GpuBackend::open(&why);
  if (b == nullptr) EXPECT_FALSE(why.empty());
  else EXPECT_GT(b->info().sm_count, 0);
}

TEST(GpuBackendAvailability, SerialIsACpuShape) {
  const auto why = GpuBackend::shape_unavailable(Shape::serial);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("CPU"), std::string::npos) << *why;
}

TEST(GpuBackendAvailability, UnavailableKernelsSayWhy) {
  KernelSpec kahan{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::kahan, Shape::cub};
  KernelSpec fp8_naive{Op::sum, Dtype::fp8_e4m3, Dtype::fp32, Accumulator::naive, Shape::cub};
  KernelSpec layernorm{Op::layernorm, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::cub};
  KernelSpec det_rows{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, Shape::cub_deterministic};
  KernelSpec fine{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::cub};
  for (const auto& s : {kahan, fp8_naive, layernorm}) {
    const auto why = GpuBackend::unavailable(s, Axis::all);
    ASSERT_TRUE(why.has_value()) << to_string(s.op) << " " << to_string(s.acc);
    EXPECT_FALSE(why->empty());
  }
  EXPECT_TRUE(GpuBackend::unavailable(det_rows, Axis::inner).has_value());
  // Where CUDA is built, a plain cub sum is available; where it is not,
  // everything GPU says so.
  const auto cub_why = GpuBackend::shape_unavailable(Shape::cub);
  EXPECT_EQ(GpuBackend::unavailable(fine, Axis::all).has_value(), cub_why.has_value());
}

TEST_F(GpuBackendTest, DeviceInfoIsRead) {
  const DeviceInfo& d = gpu().info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GT(d.memory_bytes, d.l2_bytes);
  EXPECT_GE(d.cc_major, 5);
}

// One row of the table: a kernel on a whole array of n elements.
struct WholeCase {
  Op op;
  Dtype in;
  Accumulator acc;
  std::int64_t n;
};

std::string name_of(const WholeCase& c) {
  return std::string(to_string(c.op)) + "_" + std::string(to_string(c.in)) + "_" + std::string(to_string(c.acc)) +
         "_n" + std::to_string(c.n);
}

class CubWholeArray : public GpuBackendTest, public ::testing::WithParamInterface<WholeCase> {};

TEST_P(CubWholeArray, WithinTheBoundOfAnyOrder) {
  const WholeCase c = GetParam();
  const TypedArray x = grid_values(c.in, c.n, 11 + std::uint64_t(c.n));
  const TypedArray y = grid_values(c.in, c.n, 97 + std::uint64_t(c.n));
  ReductionProblem p;
  p.op = c.op;
  p.cols = c.n;
  p.x = &x;
  p.y = takes_second_input(c.op) ? &y : nullptr;
  gpu().upload(p);
  // The naive accumulator's output is its own format; otherwise fp64, so
  // that the bound is the accumulation's alone.
  const Dtype out = c.acc == Accumulator::naive ? c.in : Dtype::fp64;
  const KernelSpec spec{c.op, c.in, out, c.acc, Shape::cub};
  const ReductionResult r = gpu().run(spec, {});
  ASSERT_EQ(r.values.size(), 1u);

  const auto xs = x.to_doubles(), ys = y.to_doubles();
  if (is_selection(c.op)) {
    double want = c.op == Op::min ? INFINITY : -INFINITY;
    for (double v : xs) {
      const double a = c.op == Op::amax ? std::fabs(v) : v;
      want = c.op == Op::min ? std::min(want, a) : std::max(want, a);
    }
    if (c.op == Op::amax && c.n == 0) want = 0;
    EXPECT_EQ(r.values[0], want);
    return;
  }
  const Op base = (c.op == Op::mean) ? Op::sum : (c.op == Op::norm2 || c.op == Op::rms) ? Op::sumsq : c.op;
  const Exact e = exact_reduce(base, xs, ys, all_indices(c.n));
  const int p_acc = precision_of(c.acc, c.in);
  // Squares and products are rounded once more than plain terms.
  const std::int64_t k = (base == Op::sum) ? c.n - 1 : c.n;
  ASSERT_LT(double(c.n) * std::ldexp(1.0, -p_acc), 0.5) << "n too long for a meaningful gamma_n bound";
  double want = e.value, bound = gamma(std::max<std::int64_t>(k, 0), p_acc) * e.abs_sum;
  if (c.op == Op::mean) {
    want = e.value / double(c.n);
    bound = gamma(c.n, p_acc) * e.abs_sum / double(c.n);
  }
  EXPECT_LE(std::fabs(r.values[0] - want), bound)
      << "result " << r.values[0] << " exact " << want << " sum|x| " << e.abs_sum;
  if (out == Dtype::fp64) {
    ASSERT_EQ(r.unrounded.size(), 1u);
    EXPECT_EQ(r.unrounded[0], r.values[0]);  // widening to fp64 rounds nothing
  }
}

std::vector<WholeCase> whole_cases() {
  std::vector<WholeCase> v;
  for (std::int64_t n : {0, 1, 31, 33, 1023, 4097, (1 << 20) + 3})
    for (Accumulator a : {Accumulator::fp32, Accumulator::fp64}) v.push_back({Op::sum, Dtype::fp32, a, n});
  for (Dtype d : {Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2})
    for (Accumulator a : {Accumulator::fp32, Accumulator::fp64}) v.push_back({Op::sum, d, a, 4097});
  // Accumulating in the input's own format (CUB's Sum on __half): arrays
  // short enough that n u stays near 0.1 (fp16 u = 2^-11, bf16 u = 2^-8),
  // where gamma_n is a bound worth checking.
  v.push_back({Op::sum, Dtype::fp16, Accumulator::naive, 200});
  v.push_back({Op::sum, Dtype::bf16, Accumulator::naive, 25});
  v.push_back({Op::sumsq, Dtype::fp16, Accumulator::naive, 200});
  for (Op op : {Op::mean, Op::sumsq, Op::dot})
    for (Dtype d : {Dtype::fp32, Dtype::bf16}) v.push_back({op, d, Accumulator::fp32, 33333});
  for (Op op : {Op::max, Op::min, Op::amax})
    for (Dtype d : {Dtype::fp32, Dtype::fp16, Dtype::fp8_e5m2}) v.push_back({op, d, Accumulator::fp32, 4097});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Table, CubWholeArray, ::testing::ValuesIn(whole_cases()),
                         [](const auto& info) { return name_of(info.param); });

// norm2 and rms: our finish (a square root) after CUB's sum of squares,
// checked against the exact sum of squares.
TEST_F(GpuBackendTest, Norm2AndRmsFinishTheSumOfSquares) {
  const std::int64_t n = 5000;
  const TypedArray x = grid_values(Dtype::fp32, n, 5);
  ReductionProblem p;
  p.op = Op::sumsq;
  p.cols = n;
  p.x = &x;
  p.eps = 1e-6;
  gpu().upload(p);
  const Exact e = exact_reduce(Op::sumsq, x.to_doubles(), {}, all_indices(n));
  const KernelSpec norm2{Op::norm2, Dtype::fp32, Dtype::fp64, Accumulator::fp64, Shape::cub};
  const KernelSpec rms{Op::rms, Dtype::fp32, Dtype::fp64, Accumulator::fp64, Shape::cub};
  const double rel = 1e-13;  // fp64: a few roundings of 2^-53 each
  EXPECT_NEAR(gpu().run(norm2, {}).values.at(0), std::sqrt(e.value), rel * std::sqrt(e.value));
  const double want_rms = std::sqrt(e.value / double(n) + p.eps);
  EXPECT_NEAR(gpu().run(rms, {}).values.at(0), want_rms, rel * want_rms);
}

// Rows and columns through cub::DeviceSegmentedReduce.
TEST_F(GpuBackendTest, SegmentedRowsAndColumns) {
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{5, 33}, {33, 5}, {1, 1000}, {7, 1}}) {
    const TypedArray x = grid_values(Dtype::fp16, rows * cols, std::uint64_t(rows * 1000 + cols));
    const auto xs = x.to_doubles();
    for (Axis axis : {Axis::inner, Axis::outer}) {
      ReductionProblem p;
      p.op = Op::sum;
      p.axis = axis;
      p.rows = rows;
      p.cols = cols;
      p.x = &x;
      gpu().upload(p);
      const KernelSpec spec{Op::sum, Dtype::fp16, Dtype::fp64, Accumulator::fp32, Shape::cub};
      const ReductionResult r = gpu().run(spec, {});
      const std::int64_t count = axis == Axis::inner ? rows : cols;
      const std::int64_t length = axis == Axis::inner ? cols : rows;
      ASSERT_EQ(std::int64_t(r.values.size()), count);
      for (std::int64_t i = 0; i < count; ++i) {
        std::vector<std::int64_t> idx;
        for (std::int64_t j = 0; j < length; ++j) idx.push_back(axis == Axis::inner ? i * cols + j : j * cols + i);
        const Exact e = exact_reduce(Op::sum, xs, {}, idx);
        EXPECT_LE(std::fabs(r.values[std::size_t(i)] - e.value), gamma(length - 1, 24) * e.abs_sum)
            << to_string(axis) << " [" << rows << ", " << cols << "] reduction " << i;
      }
    }
  }
}

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// cub_deterministic (CCCL's RFA sum): the same bits on every run, and for a
// permutation of the input, since its binned accumulation does not depend on
// the order (Demmel, Ahrens, Nguyen, TOMS 2020).
TEST_F(GpuBackendTest, CubDeterministicGivesTheSameBits) {
  if (auto why = GpuBackend::shape_unavailable(Shape::cub_deterministic)) GTEST_SKIP() << *why;
  const std::int64_t n = (1 << 20) + 3;
  TypedArray x = grid_values(Dtype::fp32, n, 2024);
  const KernelSpec spec{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, Shape::cub_deterministic};
  ReductionProblem p;
  p.cols = n;
  p.x = &x;
  gpu().upload(p);
  const double first = gpu().run(spec, {}).values.at(0);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(bits_of(gpu().run(spec, {}).values.at(0)), bits_of(first));
  const Exact e = exact_reduce(Op::sum, x.to_doubles(), {}, all_indices(n));
  EXPECT_LE(std::fabs(first - e.value), gamma(n - 1, 24) * e.abs_sum);

  auto& v = x.as<float>();
  std::reverse(v.begin(), v.end());
  gpu().upload(p);
  EXPECT_EQ(bits_of(gpu().run(spec, {}).values.at(0)), bits_of(first)) << "reversed input";
}

TEST_F(GpuBackendTest, OutOfMemoryIsReportedAndTheBackendStillWorks) {
  try {
    gpu().time_cub_sum_fp32(std::int64_t(1) << 42, 1, 1);  // 16 TiB of floats
    FAIL() << "a 16 TiB allocation succeeded";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory: needs"), std::string::npos) << e.what();
  }
  const TypedArray x = grid_values(Dtype::fp32, 1000, 3);
  ReductionProblem p;
  p.cols = 1000;
  p.x = &x;
  gpu().upload(p);
  const KernelSpec spec{Op::sum, Dtype::fp32, Dtype::fp64, Accumulator::fp64, Shape::cub};
  const Exact e = exact_reduce(Op::sum, x.to_doubles(), {}, all_indices(1000));
  EXPECT_NEAR(gpu().run(spec, {}).values.at(0), e.value, gamma(999, 53) * e.abs_sum);
}

TEST_F(GpuBackendTest, UnavailableKernelsThrowTheirReason) {
  const TypedArray x = grid_values(Dtype::fp32, 100, 3);
  ReductionProblem p;
  p.cols = 100;
  p.x = &x;
  gpu().upload(p);
  const KernelSpec kahan{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::kahan, Shape::cub};
  EXPECT_THROW(gpu().run(kahan, {}), GpuError);
  const KernelSpec dot{Op::dot, Dtype::fp32, Dtype::fp32, Accumulator::fp32, Shape::cub};
  EXPECT_THROW(gpu().run(dot, {}), GpuError);  // no y uploaded
  const KernelSpec wrong_format{Op::sum, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::cub};
  EXPECT_THROW(gpu().run(wrong_format, {}), GpuError);
}

TEST_F(GpuBackendTest, UploadChecksShapes) {
  const TypedArray x = grid_values(Dtype::fp32, 100, 3);
  const TypedArray y = grid_values(Dtype::fp32, 99, 4);
  ReductionProblem p;
  p.op = Op::dot;
  p.cols = 100;
  p.x = &x;
  p.y = &y;
  EXPECT_THROW(gpu().upload(p), GpuError);
  p.y = nullptr;
  p.cols = 101;
  EXPECT_THROW(gpu().upload(p), GpuError);
}

TEST_F(GpuBackendTest, TimingGivesPositiveNumbers) {
  const std::int64_t n = 1 << 20;
  const TypedArray x = grid_values(Dtype::fp32, n, 8);
  ReductionProblem p;
  p.cols = n;
  p.x = &x;
  gpu().upload(p);
  const KernelSpec spec{Op::sum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, Shape::cub};
  const auto t = gpu().time(spec, {}, 2, 5);
  EXPECT_GT(t.median_ms, 0);
  EXPECT_GT(t.gbps, 0);
  EXPECT_EQ(t.timed_runs, 5);
  EXPECT_EQ(t.bytes_per_run, std::size_t(n) * 4);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);
  EXPECT_TRUE(t.exceeds_l2) << t.copies << " copies of 4 MiB";
  const auto sum = gpu().time_cub_sum_fp32(n, 2, 5);
  EXPECT_GT(sum.gbps, 0);
  EXPECT_TRUE(sum.exceeds_l2);
  const auto copy = gpu().time_copy(std::size_t(1) << 24, 2, 5);
  EXPECT_GT(copy.gbps, 0);
  EXPECT_EQ(copy.bytes_per_run, std::size_t(2) << 24);
}

}  // namespace
}  // namespace ulpscope
