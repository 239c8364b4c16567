// The scan kernels (kernels/scan/scan_dispatch.hpp) against their CPU models
// (kernels/scan/scan_model.hpp), bit for bit: every modelled shape, every
// accumulator with a kernel, every launch configuration, whole arrays and
// rows, and the look-back run again for the same bits. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats/binary_format.hpp"
#include "formats/small_float.hpp"
#include "kernels/cuda/device_shape.hpp"
#include "kernels/scan/scan_dispatch.hpp"
#include "kernels/scan/scan_model.hpp"
#include "kernels/scan/scan_order.hpp"
#include "reference/exact_prefix.hpp"
#include "scan_test_values.hpp"

namespace ulpscope {
namespace {

std::size_t element_bytes(Dtype d) { return std::size_t(format_info(d).bits / 8); }

// The kernel's outputs (fp32, fp16 or bf16 storage) widened to double.
std::vector<double> decode_outputs(const unsigned char* bytes, Dtype d, std::size_t count) {
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (d == Dtype::fp32) {
      float f;
      std::memcpy(&f, bytes + 4 * i, 4);
      out[i] = f;
    } else {
      std::uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      out[i] = d == Dtype::fp16 ? decode<Fp16Format>(h) : decode<Bf16Format>(h);
    }
  }
  return out;
}

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

// v rounded to format d.
TypedArray typed(Dtype d, const std::vector<double>& v) {
  switch (d) {
    case Dtype::fp32: {
      std::vector<float> f(v.begin(), v.end());
      return TypedArray(f);
    }
    case Dtype::fp16: { std::vector<Fp16> f; for (double e : v) f.push_back(Fp16(e)); return TypedArray(f); }
    case Dtype::bf16: { std::vector<Bf16> f; for (double e : v) f.push_back(Bf16(e)); return TypedArray(f); }
    case Dtype::fp8_e4m3: { std::vector<Fp8E4M3> f; for (double e : v) f.push_back(Fp8E4M3(e)); return TypedArray(f); }
    default: { std::vector<Fp8E5M2> f; for (double e : v) f.push_back(Fp8E5M2(e)); return TypedArray(f); }
  }
}

// n values of normal(1, 3) in format d (a positive drift, so that running
// values grow and round).
TypedArray values_of(Dtype d, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> dist(1.0, 3.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = dist(g);
  return typed(d, v);
}

const void* bytes_of(const TypedArray& a) {
  return std::visit([](const auto& v) { return static_cast<const void*>(v.data()); }, a.data());
}

struct DeviceRun {
  void* x = nullptr;
  void* out = nullptr;
  void* ws = nullptr;
  ~DeviceRun() {
    cudaFree(x);
    cudaFree(out);
    cudaFree(ws);
  }
};

// The kernel's outputs widened to double, or an empty vector after a failure.
std::vector<double> run_on_gpu(const KernelSpec& spec, const ReductionProblem& p, const LaunchConfig& cfg) {
  DeviceRun d;
  const std::size_t n = std::size_t(p.rows * p.cols);
  const std::size_t in_bytes = n * element_bytes(spec.in), out_bytes = n * element_bytes(spec.out);
  DeviceProblem dp;
  dp.op = Op::cumsum;
  dp.axis = p.axis;
  dp.in = spec.in;
  dp.rows = p.rows;
  dp.cols = p.cols;
  if (cudaMalloc(&d.x, std::max<std::size_t>(in_bytes, 1)) != cudaSuccess) return {};
  if (cudaMalloc(&d.out, std::max<std::size_t>(out_bytes, 1)) != cudaSuccess) return {};
  cudaMemcpy(d.x, bytes_of(*p.x), in_bytes, cudaMemcpyHostToDevice);
  dp.x = d.x;
  const std::size_t ws_bytes = scan::workspace_bytes(spec, dp, cfg);
  if (ws_bytes > 0 && cudaMalloc(&d.ws, ws_bytes) != cudaSuccess) return {};
  scan::launch(spec, dp, cfg, DeviceWorkspace{d.ws, ws_bytes}, d.out, nullptr);
  if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) return {};
  std::vector<unsigned char> host(out_bytes);
  cudaMemcpy(host.data(), d.out, out_bytes, cudaMemcpyDeviceToHost);
  return decode_outputs(host.data(), spec.out, n);
}

bool same_bits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::vector<double> cumsum_rounded_lines(const ReductionProblem& p, Dtype out) {
  if (p.axis == Axis::all) return cumsum_rounded(*p.x, OutputFormat{out});
  std::vector<double> all;
  for (std::int64_t row = 0; row < p.rows; ++row) {
    const auto v = cumsum_rounded(line_of(*p.x, p.rows, p.cols, Along::inner, row), OutputFormat{out});
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

constexpr Shape kKernelShapes[] = {Shape::warp, Shape::block, Shape::reduce_then_scan, Shape::lookback};
constexpr Accumulator kKernelAccumulators[] = {Accumulator::naive, Accumulator::fp32, Accumulator::fp64,
                                               Accumulator::kahan, Accumulator::exact};

// `exact`: the reference's prefixes of p into spec.out where the caller has
// them (one MPFR pass per array, not one per launch), else computed here.
void expect_model_bits(const KernelSpec& spec, const ReductionProblem& p, const LaunchConfig& cfg,
                       const std::vector<double>* exact = nullptr) {
  SCOPED_TRACE(::testing::Message() << to_string(spec.in) << ' ' << to_string(spec.acc) << ' '
                                    << to_string(spec.shape) << " axis=" << to_string(p.axis) << " rows=" << p.rows
                                    << " cols=" << p.cols << " threads=" << cfg.threads << " blocks=" << cfg.blocks);
  const std::vector<double> got = run_on_gpu(spec, p, cfg);
  ReductionResult want = scan::run_model(spec, p, cfg);
  if (spec.acc == Accumulator::exact) {  // and the exact scan is the reference's, too
    const std::vector<double> own = exact == nullptr ? cumsum_rounded_lines(p, spec.out) : std::vector<double>{};
    const std::vector<double>& reference = exact == nullptr ? own : *exact;
    EXPECT_TRUE(reference.size() == want.values.size() &&
                std::equal(want.values.begin(), want.values.end(), reference.begin(), same_bits));
  }
  ASSERT_EQ(got.size(), want.values.size()) << "the launch failed";
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(same_bits(got[i], want.values[i])) << "element " << i << ": gpu " << got[i] << ", model "
                                                   << want.values[i];
}

// The cumsum of the whole of x (n elements) as one line.
ReductionProblem whole_array(const TypedArray& x, std::int64_t n) {
  ReductionProblem p;
  p.op = Op::cumsum;
  p.axis = Axis::all;
  p.rows = 1;
  p.cols = n;
  p.x = &x;
  return p;
}

TEST(ScanGpu, EveryShapeAccumulatorAndLaunchMatchesItsModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (Dtype in : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2})
    for (std::int64_t n : {std::int64_t(1), std::int64_t(33), std::int64_t(4097), (std::int64_t(1) << 20) + 3}) {
      const TypedArray x = values_of(in, n, std::uint64_t(n));
      const ReductionProblem p = whole_array(x, n);
      const std::vector<double> exact = cumsum_rounded_lines(p, default_out_dtype(in));
      for (Accumulator acc : kKernelAccumulators)
        for (Shape shape : kKernelShapes) {
          const KernelSpec spec{Op::cumsum, in, default_out_dtype(in), acc, shape};
          ASSERT_TRUE(acc != Accumulator::exact || scan::has_fixed_point_scan(spec));
          ASSERT_FALSE(scan::gpu_unavailable(spec, Axis::all).has_value());
          for (const LaunchConfig& cfg : scan::launch_configs(spec, n, current_device_shape().sm_count))
            expect_model_bits(spec, p, cfg, &exact);
        }
    }
}

// The exact cumsum of the whole of x (n values of format in) on every shape
// and launch: the model's bits and the reference's.
void expect_exact_scan_bits(Dtype in, const TypedArray& x, std::int64_t n) {
  const ReductionProblem p = whole_array(x, n);
  const std::vector<double> exact = cumsum_rounded_lines(p, in);
  for (Shape shape : kKernelShapes) {
    const KernelSpec spec{Op::cumsum, in, in, Accumulator::exact, shape};
    for (const LaunchConfig& cfg : scan::launch_configs(spec, n, current_device_shape().sm_count))
      expect_model_bits(spec, p, cfg, &exact);
  }
}

// The 320-bit integer of the exact scan of bf16 and fp32 (its carries, its
// sticky bit, its specials) on the device against its model and the
// reference, on every shape and launch.
TEST(ScanGpu, WideExactScanMatchesOnHardValues) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (Dtype in : {Dtype::bf16, Dtype::fp32})
    for (bool specials : {false, true})
      for (std::int64_t n : {std::int64_t(4097), (std::int64_t(1) << 16) + 5}) {
        expect_exact_scan_bits(in, test::hard_wide_values(in, n, std::uint64_t(n) + specials, specials), n);
      }
}

// The exact scan's double shortcut (kernels/scan/exact_double_run.hpp) cuts
// a thread's seed below its items and keeps what is cut as a sticky bit:
// here every third thread of K adds +-2^-100 to the seed (it stays in the
// prefix, or cancels), the next one lands its prefix on a midpoint of the
// output (2 + u, u the ulp of 1) so that only the far bits break the tie,
// and the one after takes the prefix back. On every shape and launch, the
// bits of the model and of the reference.
TEST(ScanGpu, ExactScanBreaksTiesByBitsFarBelow) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (Dtype in : {Dtype::bf16, Dtype::fp32, Dtype::fp16}) {
    const int k = scan::ScanPolicy::items_per_thread(int(element_bytes(in)));
    const double u = std::ldexp(1.0, 1 - format_info(in).precision);
    const double tiny = in == Dtype::fp16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -100);
    std::vector<double> v;
    for (int block = 0; block < 700; ++block) {
      std::vector<double> three(std::size_t(3 * k), 0.0);
      three[0] = block % 3 == 2 ? -tiny : tiny;
      three[std::size_t(k)] = 1.0;
      three[std::size_t(k) + 1] = block % 2 ? 1.0 + u : 1.0 + 3 * u;
      three[std::size_t(2 * k)] = -1.0;
      three[std::size_t(2 * k) + 1] = -three[std::size_t(k) + 1];
      v.insert(v.end(), three.begin(), three.end());
    }
    expect_exact_scan_bits(in, typed(in, v), std::int64_t(v.size()));
  }
}

TEST(ScanGpu, RowsMatchTheirModels) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const TypedArray x = values_of(Dtype::fp16, 8 * 4097, 3);
  ReductionProblem p;
  p.op = Op::cumsum;
  p.axis = Axis::inner;
  p.rows = 8;
  p.cols = 4097;
  p.x = &x;
  for (Accumulator acc : kKernelAccumulators)
    for (Shape shape : kKernelShapes) {
      const KernelSpec spec{Op::cumsum, Dtype::fp16, Dtype::fp16, acc, shape};
      for (const LaunchConfig& cfg : scan::launch_configs(spec, p.cols, current_device_shape().sm_count)) expect_model_bits(spec, p, cfg);
    }
}

// Thousands of tiles wait on their windows; the fixed window gives the same
// bits on every run, whatever the order the tiles finish in.
TEST(ScanGpu, LookbackGivesTheModelsBitsRunAfterRun) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const std::int64_t n = std::int64_t(1) << 22;
  const TypedArray x = values_of(Dtype::fp32, n, 9);
  ReductionProblem p;
  p.op = Op::cumsum;
  p.rows = 1;
  p.cols = n;
  p.x = &x;
  const KernelSpec spec{Op::cumsum, Dtype::fp32, Dtype::fp32, Accumulator::fp32, Shape::lookback};
  const LaunchConfig cfg = scan::launch_configs(spec, n, current_device_shape().sm_count).back();  // 64 threads: 4096 tiles, 8 windows
  for (int run = 0; run < 5; ++run) expect_model_bits(spec, p, cfg);
}

TEST(ScanGpu, UnavailableKernelsSayWhy) {
  const KernelSpec exact{Op::cumsum, Dtype::bf16, Dtype::fp32, Accumulator::exact, Shape::lookback};
  EXPECT_TRUE(scan::gpu_unavailable(exact, Axis::all).has_value());  // not bf16's default output
  const KernelSpec serial{Op::cumsum, Dtype::fp16, Dtype::fp16, Accumulator::fp32, Shape::serial};
  EXPECT_TRUE(scan::gpu_unavailable(serial, Axis::all).has_value());
  const KernelSpec wide{Op::cumsum, Dtype::fp16, Dtype::fp32, Accumulator::fp32, Shape::warp};
  EXPECT_TRUE(scan::gpu_unavailable(wide, Axis::all).has_value());
}

}  // namespace
}  // namespace ulpscope
