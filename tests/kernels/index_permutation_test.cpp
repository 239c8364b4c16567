// The permutations of the order-reproducibility runs (kernels/index_permutation.hpp):
// bijections of every size, each reduction permuted within itself, the norms'
// columns the same way in every row.
#include "kernels/index_permutation.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace ulpscope {
namespace {

std::vector<std::uint64_t> image(std::uint64_t n, std::uint64_t seed) {
  const IndexPermutation perm(n, seed);
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = 0; i < n; ++i) out.push_back(perm(i));
  return out;
}

TEST(IndexPermutation, IsABijectionAtUglySizes) {
  for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 31ull, 33ull, 1000ull, 1023ull, 4097ull, 65539ull, (1ull << 20) + 3}) {
    for (std::uint64_t seed : {1ull, 2ull, 0xDEADBEEFull}) {
      const auto img = image(n, seed);
      std::vector<bool> seen(n, false);
      for (std::uint64_t v : img) {
        ASSERT_LT(v, n) << "n " << n;
        ASSERT_FALSE(seen[v]) << "n " << n << " seed " << seed << ": " << v << " twice";
        seen[v] = true;
      }
    }
  }
}

TEST(IndexPermutation, SeedsGiveDifferentShuffledOrders) {
  const std::uint64_t n = 4097;
  const auto a = image(n, 1), b = image(n, 2);
  EXPECT_NE(a, b);
  // Far from the identity: a uniform permutation has one fixed point on average.
  int fixed = 0;
  for (std::uint64_t i = 0; i < n; ++i) fixed += a[i] == i;
  EXPECT_LT(fixed, 12);
  // The same seed is the same order (the GPU and the host must agree).
  EXPECT_EQ(a, image(n, 1));
}

TEST(ProblemPermutation, KeepsEachReductionItsOwnElements) {
  const std::int64_t rows = 7, cols = 33;
  for (Axis axis : {Axis::all, Axis::inner, Axis::outer}) {
    for (bool columns_only : {false, true}) {
      if (columns_only && axis != Axis::inner) continue;  // the norms are row-wise
      const ProblemPermutation perm(axis, columns_only, axis == Axis::all ? 1 : rows,
                                    axis == Axis::all ? rows * cols : cols, 5);
      std::set<std::int64_t> sources;
      for (std::int64_t i = 0; i < rows * cols; ++i) {
        const std::int64_t s = perm.source(i);
        ASSERT_GE(s, 0);
        ASSERT_LT(s, rows * cols);
        sources.insert(s);
        if (axis == Axis::inner) {
          EXPECT_EQ(s / cols, i / cols) << "an element left its row";
        }
        if (axis == Axis::outer) {
          EXPECT_EQ(s % cols, i % cols) << "an element left its column";
        }
        if (columns_only) {
          EXPECT_EQ(s % cols, perm.column(i % cols)) << "rows permuted differently";
        }
      }
      EXPECT_EQ(sources.size(), std::size_t(rows * cols)) << "not a bijection, axis " << int(axis);
    }
  }
  // Row-wise reductions each get their own permutation.
  const ProblemPermutation inner(Axis::inner, false, rows, cols, 5);
  bool differ = false;
  for (std::int64_t k = 0; k < cols; ++k) differ |= inner.source(k) % cols != inner.source(cols + k) % cols;
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace ulpscope
