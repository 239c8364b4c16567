#pragma once
// The permuted copies of a problem (docs/spec.md, "Metrics": distinct results
// across permutations of the input). Each index is mapped on its own, so the
// host's threads and the device's compute the same permutation in parallel,
// without the sequential draws of a Fisher-Yates shuffle.
//
// IndexPermutation is a keyed bijection of [0, n): a four-round Feistel
// network on the smallest even number of bits that covers n, walked along
// its cycle until it lands back in [0, n) (Black and Rogaway, "Ciphers with
// arbitrary finite domains", CT-RSA 2002; at most four steps on average,
// since the network's domain is less than 4n). The round function is
// SplitMix64's finaliser (kernels/counter_rng.hpp).
#include <cstdint>

#include "formats/host_device.hpp"
#include "kernels/counter_rng.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

class IndexPermutation {
 public:
  ULPSCOPE_HD IndexPermutation(std::uint64_t n, std::uint64_t seed) : n_(n), key_(mix64(seed ^ kGoldenGamma)) {
    int bits = 0;
    while (bits < 64 && (std::uint64_t(1) << bits) < n) ++bits;
    half_ = (bits + 1) / 2;
    mask_ = (std::uint64_t(1) << half_) - 1;
  }

  // The element that lands at position i (i < n).
  ULPSCOPE_HD std::uint64_t operator()(std::uint64_t i) const {
    if (n_ < 2) return i;
    do i = feistel(i);
    while (i >= n_);
    return i;
  }

 private:
  ULPSCOPE_HD std::uint64_t feistel(std::uint64_t x) const {
    std::uint64_t left = x >> half_, right = x & mask_;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t next = left ^ (mix64(key_ + (round + 1) * kGoldenGamma + right) & mask_);
      left = right;
      right = next;
    }
    return (left << half_) | right;
  }

  std::uint64_t n_, key_, mask_;
  int half_;
};

// How a problem's elements are permuted: a whole-array reduction over all n;
// a row-wise reduction within each of its reductions (each with its own
// permutation); the norms, whose outputs are per element and whose gamma and
// beta are per column, by one permutation of the columns applied to every row
// (and to gamma and beta).
class ProblemPermutation {
 public:
  ULPSCOPE_HD ProblemPermutation(Axis axis, bool columns_only, std::int64_t rows, std::int64_t cols,
                                 std::uint64_t seed)
      : axis_(axis),
        columns_only_(columns_only),
        rows_(rows),
        cols_(cols),
        seed_(seed),
        one_(std::uint64_t(columns_only ? cols : rows * cols), seed) {}

  // The element of the original array that lands at flat index i.
  ULPSCOPE_HD std::int64_t source(std::int64_t i) const {
    if (columns_only_) return i - i % cols_ + column(i % cols_);
    if (axis_ == Axis::all) return std::int64_t(one_(std::uint64_t(i)));
    const std::int64_t row = i / cols_, col = i % cols_;
    if (axis_ == Axis::inner) return row * cols_ + within(row, cols_, col);
    return within(col, rows_, row) * cols_ + col;
  }
  // The column that lands at column k (the norms' gamma and beta).
  ULPSCOPE_HD std::int64_t column(std::int64_t k) const { return std::int64_t(one_(std::uint64_t(k))); }

 private:
  // Element k of reduction g, of `length`: each reduction its own permutation.
  ULPSCOPE_HD std::int64_t within(std::int64_t g, std::int64_t length, std::int64_t k) const {
    return std::int64_t(IndexPermutation(std::uint64_t(length), seed_ + std::uint64_t(g) * 0x632BE59BD9B4E019ull)(
        std::uint64_t(k)));
  }

  Axis axis_;
  bool columns_only_;
  std::int64_t rows_, cols_;
  std::uint64_t seed_;
  IndexPermutation one_;  // the whole array's (axis all) or the columns' (the norms)
};

}  // namespace ulpscope
