// ulpscope::exact::reduce (kernels/exact.hpp) on device arrays: every output
// equals the correctly rounded reference that compute_problem_reference
// certifies with MPFR, for whole arrays and rows, in every input format, with
// the default output format and fp64, on adversarial and special inputs and
// the ugly sizes; bad requests are refused before any CUDA call. The GPU
// cases skip without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy/distribution.hpp"
#include "accuracy/problem_reference.hpp"
#include "kernels/exact.hpp"
#include "gpu_test_backend.hpp"
#include "model_test_support.hpp"

namespace ulpscope {
// Named, not anonymous: the unity build puts several test files in one unit.
namespace exact_ops_test {

using test::same_bits;

struct Case {
  exact::Reduction r;
  Op op;
};
constexpr Case kCases[] = {{exact::Reduction::sum, Op::sum},     {exact::Reduction::mean, Op::mean},
                           {exact::Reduction::dot, Op::dot},     {exact::Reduction::sumsq, Op::sumsq},
                           {exact::Reduction::norm2, Op::norm2}, {exact::Reduction::mean_var, Op::mean_var}};

// A device copy of a host array (host null: uninitialised), freed at scope exit.
struct DeviceCopy {
  void* p = nullptr;
  DeviceCopy(const void* host, std::size_t bytes) {
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) throw std::runtime_error("cudaMalloc");
    if (host && bytes && cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy");
  }
  ~DeviceCopy() { cudaFree(p); }
};

// The device outputs of format d, widened exactly.
std::vector<double> read_back(const void* device, Dtype d, std::size_t count) {
  if (d == Dtype::fp64) {
    std::vector<double> v(count);
    EXPECT_EQ(cudaMemcpy(v.data(), device, count * 8, cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
  TypedArray a(d, count);
  void* host = std::visit([](auto& v) -> void* { return v.data(); }, a.data());
  EXPECT_EQ(cudaMemcpy(host, device, a.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  return a.to_doubles();
}

int check(const DistributionSpec& dist, Dtype in, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  const GeneratedInput gen = generate(dist, in, rows * cols, 3, /*with_y=*/true);
  const DeviceCopy x(gen.x.raw(), gen.x.bytes()), y(gen.y->raw(), gen.y->bytes());
  ReductionProblem p;
  p.axis = rows == 1 ? Axis::all : Axis::inner;
  p.rows = rows;
  p.cols = cols;
  p.x = &gen.x;
  p.y = &*gen.y;
  int compared = 0;
  for (const Case& c : kCases)
    for (Dtype out : {default_out_dtype(in), Dtype::fp64}) {
      SCOPED_TRACE(dist.name() + " " + std::string(to_string(in)) + " -> " + std::string(to_string(out)) + " " +
                   std::string(to_string(c.op)) + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols));
      p.op = c.op;
      const ProblemReference ref = compute_problem_reference(p, out, Saturation::satfinite);
      const std::size_t count = std::size_t(rows) * exact::outputs_per_row(c.r);
      EXPECT_EQ(count, ref.outputs.size());
      // The outputs, then a guard that the finishing pass, which stores them
      // in their own format, must leave alone.
      const std::size_t bytes = count * std::size_t(format_info(out).bits / 8), guard = 64;
      const DeviceCopy result(nullptr, bytes + guard);
      EXPECT_EQ(cudaMemset(result.p, 0xA5, bytes + guard), cudaSuccess);
      exact::reduce({c.r, x.p, y.p, in, rows, cols, result.p, out}, stream);
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      const std::vector<double> got = read_back(result.p, out, count);
      std::vector<unsigned char> after(guard);
      EXPECT_EQ(cudaMemcpy(after.data(), static_cast<char*>(result.p) + bytes, guard, cudaMemcpyDeviceToHost),
                cudaSuccess);
      EXPECT_EQ(std::count(after.begin(), after.end(), 0xA5), std::ptrdiff_t(guard)) << "written past the outputs";
      for (std::size_t i = 0; i < count && i < ref.outputs.size(); ++i)
        EXPECT_TRUE(same_bits(got[i], ref.outputs[i].rounded))
            << std::hexfloat << "got " << got[i] << ", correctly rounded " << ref.outputs[i].rounded << " (exact "
            << decimal_of(ref.outputs[i]) << ") at " << ref.component_name(i);
      ++compared;
      if (::testing::Test::HasFailure()) return compared;
    }
  return compared;
}

TEST(ExactOps, EveryOutputIsTheCorrectlyRoundedReference) {
  REQUIRE_GPU();
  (void)g;
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  int compared = 0;
  const DistributionSpec dists[] = {{Distribution::normal, std::nullopt},
                                    {Distribution::ill_conditioned, 1e30},
                                    {Distribution::log_uniform, std::nullopt},
                                    {Distribution::exact_cancellation, std::nullopt},
                                    {Distribution::near_max, std::nullopt},
                                    {Distribution::with_nan, std::nullopt},
                                    {Distribution::negative_zeros, std::nullopt}};
  struct Size {
    std::int64_t rows, cols;
  };
  for (const DistributionSpec& d : dists)
    for (Dtype in : kInputDtypes)
      for (const Size s : {Size{1, 0}, Size{1, 1}, Size{1, 33}, Size{1, 1000003}, Size{33, 1000}, Size{2, 1}}) {
        compared += check(d, in, s.rows, s.cols, stream);
        if (HasFailure()) break;
      }
  cudaStreamDestroy(stream);
  EXPECT_GT(compared, 0);
}

TEST(ExactOps, BadRequestsAreRefusedBeforeAnyCudaCall) {
  char dummy[8] = {};
  const auto refused = [&](exact::Arguments a) {
    try {
      exact::reduce(a, nullptr);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused({exact::Reduction::sum, dummy, nullptr, Dtype::fp32, -1, 4, dummy, Dtype::fp32}),
            "exact::reduce: rows and cols must not be negative");
  EXPECT_EQ(refused({exact::Reduction::sum, dummy, nullptr, Dtype::fp64, 1, 4, dummy, Dtype::fp64}),
            "exact::reduce: fp64 is an output format only");
  EXPECT_EQ(refused({exact::Reduction::sum, nullptr, nullptr, Dtype::fp32, 1, 4, dummy, Dtype::fp32}),
            "exact::reduce: x is null");
  EXPECT_EQ(refused({exact::Reduction::dot, dummy, nullptr, Dtype::fp32, 1, 4, dummy, Dtype::fp32}),
            "exact::reduce: dot needs y");
  EXPECT_EQ(refused({exact::Reduction::sum, dummy, nullptr, Dtype::fp32, 1, 4, nullptr, Dtype::fp32}),
            "exact::reduce: out is null");
}

}  // namespace exact_ops_test
}  // namespace ulpscope
