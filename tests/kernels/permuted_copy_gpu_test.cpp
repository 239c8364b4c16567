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

}  // namespace
}  // namespace ulpscope
