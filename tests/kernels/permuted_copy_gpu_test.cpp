// The GPU backend's permuted copies (GpuBackend::use_permutation) are the
// host's (ProblemPermutation on the host, as the CPU backend permutes), for
// every kind of problem: whole arrays, rows, columns and the norms' columns
// with their gamma and beta. Skips without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "formats/typed_array.hpp"
#include "kernels/gpu_backend.hpp"
#include "accuracy/metrics.hpp"
#include "kernels/index_permutation.hpp"
#include "gpu_test_backend.hpp"

namespace ulpscope {
namespace {

TypedArray counting(std::int64_t n, float offset) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i)] = float(i) + offset;  // exact below 2^24
  return TypedArray(std::move(v));
}

// The bytes of one array of the problem as the backend's run() reads it.
std::vector<float> read_back(GpuBackend& g, int which, std::int64_t count) {
  const auto bytes = g.run_launch(
      [which, count](const GpuBackend::UploadedArrays& a, void* out, void* stream) {
        const void* src[] = {a.x, a.y, a.gamma, a.beta};
        cudaMemcpyAsync(out, src[which], std::size_t(count) * sizeof(float), cudaMemcpyDeviceToDevice,
                        static_cast<cudaStream_t>(stream));
      },
      std::size_t(count) * sizeof(float), "read back");
  std::vector<float> v(static_cast<std::size_t>(count));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(GpuPermutedCopy, EqualsTheHostPermutation) {
  REQUIRE_GPU();
  const std::int64_t rows = 33, cols = 1001;  // neither a power of two
  const TypedArray x = counting(rows * cols, 0), y = counting(rows * cols, 0.5f);
  const TypedArray gamma = counting(cols, 0.25f), beta = counting(cols, 0.75f);
  struct Case {
    Op op;
    Axis axis;
  };
  for (const Case c : {Case{Op::dot, Axis::all}, Case{Op::dot, Axis::inner}, Case{Op::dot, Axis::outer},
                       Case{Op::layernorm, Axis::inner}}) {
    ReductionProblem p;
    p.op = c.op;
    p.axis = c.axis;
    p.rows = c.axis == Axis::all ? 1 : rows;
    p.cols = c.axis == Axis::all ? rows * cols : cols;
    p.x = &x;
    p.y = c.op == Op::dot ? &y : nullptr;
    if (c.op == Op::layernorm) {
      p.gamma = &gamma;
      p.beta = &beta;
    }
    g->upload(p);
    for (std::uint64_t seed : {1u, 2u}) {
      g->use_permutation(seed);
      const ProblemPermutation perm(c.axis, c.op == Op::layernorm, p.rows, p.cols, seed);
      const auto gx = read_back(*g, 0, rows * cols);
      for (std::int64_t i = 0; i < rows * cols; ++i)
        ASSERT_EQ(gx[std::size_t(i)], float(perm.source(i))) << "x[" << i << "], axis " << int(c.axis);
      if (c.op == Op::dot) {
        const auto gy = read_back(*g, 1, rows * cols);
        for (std::int64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(gy[std::size_t(i)], float(perm.source(i)) + 0.5f);
      } else {
        const auto gg = read_back(*g, 2, cols), gb = read_back(*g, 3, cols);
        for (std::int64_t k = 0; k < cols; ++k) {
          ASSERT_EQ(gg[std::size_t(k)], float(perm.column(k)) + 0.25f);
          ASSERT_EQ(gb[std::size_t(k)], float(perm.column(k)) + 0.75f);
        }
      }
    }
    g->use_permutation(std::nullopt);
    const auto back = read_back(*g, 0, rows * cols);
    for (std::int64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(back[std::size_t(i)], float(i)) << "not restored";
  }
}

// The digest made on the device (GpuBackend::run_digested) is the host's
// results_digest of the same outputs; a permuted norm's outputs are digested
// where they go back to, so an order-independent kernel gives the unpermuted
// run's digest; and only the rows asked for come back.
TEST(GpuOutputDigest, EqualsTheHostDigest) {
  REQUIRE_GPU();
  const std::int64_t rows = 33, cols = 1001;
  std::vector<float> xs(std::size_t(rows * cols)), gs(std::size_t(cols), 1.0f), bs(std::size_t(cols), 0.0f);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = float(int(i * 7919 % 2003) - 1001) / 64.0f;
  const TypedArray x(std::move(xs)), gamma(std::move(gs)), beta(std::move(bs));
  ReductionProblem p;
  p.op = Op::layernorm;
  p.axis = Axis::inner;
  p.rows = rows;
  p.cols = cols;
  p.x = &x;
  p.gamma = &gamma;
  p.beta = &beta;
  g->upload(p);
  // The exact accumulator rounds once whatever the order: permuting a row's
  // columns moves its outputs without changing them.
  const KernelSpec spec{Op::layernorm, Dtype::fp32, Dtype::fp32, Accumulator::exact, Shape::tree};
  const ReductionResult all = g->run(spec, LaunchConfig{});
  ASSERT_EQ(all.values.size(), std::size_t(rows * cols));
  const auto whole = g->run_digested(spec, LaunchConfig{}, nullptr, cols);
  EXPECT_EQ(whole.digest, results_digest(all.values));
  EXPECT_EQ(whole.copied.values, all.values);

  const std::vector<std::int64_t> some = {0, 17, 32};
  const auto part = g->run_digested(spec, LaunchConfig{}, &some, cols);
  EXPECT_EQ(part.digest, whole.digest);
  ASSERT_EQ(part.copied.values.size(), some.size() * std::size_t(cols));
  for (std::size_t k = 0; k < some.size(); ++k)
    for (std::int64_t j = 0; j < cols; ++j)
      ASSERT_EQ(part.copied.values[k * std::size_t(cols) + std::size_t(j)],
                all.values[std::size_t(some[k] * cols + j)]);

  g->use_permutation(std::uint64_t(3));
  const ReductionResult permuted = g->run(spec, LaunchConfig{});
  const std::vector<std::int64_t> none;
  const auto digested = g->run_digested(spec, LaunchConfig{}, &none, cols);
  EXPECT_TRUE(digested.copied.values.empty());
  const ProblemPermutation perm(Axis::inner, true, rows, cols, 3);
  std::vector<double> back(permuted.values.size());
  for (std::int64_t i = 0; i < rows * cols; ++i) back[std::size_t(perm.source(i))] = permuted.values[std::size_t(i)];
  EXPECT_EQ(digested.digest, results_digest(back));
  EXPECT_EQ(digested.digest, whole.digest);
  EXPECT_NE(results_digest(permuted.values), whole.digest) << "the permutation moved nothing";
  g->use_permutation(std::nullopt);
}

}  // namespace
}  // namespace ulpscope
