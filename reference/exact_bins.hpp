#pragma once
// Exponent-indexed integer bins for the exact sum (reference/exact_sum.cpp):
// the input formats' bit layouts, and the bins that add a block's values, or
// its products, as integers per sign and exponent without rounding.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "formats/small_float.hpp"
#include "reference/exact_accumulator.hpp"

namespace ulpscope::exact_sum_detail {

// The bits of an input type, as binary_format.hpp describes them.
template <class T> struct Layout;
template <>
struct Layout<float> {
  using bits = std::uint32_t;
  static constexpr int width = 32, man_bits = 23, bias = 127;
  static constexpr int limit_exponent = 128;           // every finite |x| < 2^128
  static constexpr bits special_from = 0x7F800000u;  // Inf, NaN
};
template <class F>
struct Layout<SmallFloat<F>> {
  using bits = typename F::storage;
  static constexpr int width = F::bits, man_bits = F::man_bits, bias = F::bias;
  static constexpr int limit_exponent = F::emax + 1;
  // The smallest magnitude pattern that is Inf or NaN (E4M3: only NaN).
  static constexpr bits special_from = F::has_infinity ? F::inf_bits : F::nan_bits;
};

inline std::uint32_t bits_of(float v) { return std::bit_cast<std::uint32_t>(v); }
template <class F>
inline typename F::storage bits_of(SmallFloat<F> v) { return v.bits; }

template <class T>
constexpr typename Layout<T>::bits kMagnitudeMask =
    static_cast<typename Layout<T>::bits>((std::uint64_t(1) << (Layout<T>::width - 1)) - 1);

// For blocks whose terms span too many binades: exponent-indexed integer bins
// (one bin per sign and exponent field, the significand added as an integer;
// ExBLAS, Collange et al. 2015). The bins keep a count in their top bits, so
// the hidden bit need not be computed per element: bin = count * 2^41 +
// sum of fraction fields, valid for fewer than 2^18 additions per bin.
template <class T, bool Magnitude>
class ExponentBins {
  using L = Layout<T>;
  static constexpr int kIndexBits = L::width - L::man_bits;  // sign + exponent field
  static constexpr int kCopies = 4;                          // breaks store-to-load chains
  static constexpr std::uint64_t kCountUnit = std::uint64_t(1) << 41;
  static constexpr std::size_t kFlushAfter = std::size_t(1) << 18;

 public:
  ExponentBins() { clear(); }
  void add(const T* x, std::size_t n, ExactAccumulator& acc) {
    if (pending_ + n >= kFlushAfter) flush(acc);
    pending_ += n;
    const std::uint64_t frac_mask = (std::uint64_t(1) << L::man_bits) - 1;
    const auto index_mask = Magnitude ? kMagnitudeMask<T> : typename L::bits(~typename L::bits(0));
    std::size_t i = 0;
    for (; i + kCopies <= n; i += kCopies)
      for (int c = 0; c < kCopies; ++c) {
        const auto u = bits_of(x[i + c]);
        bins_[c][(u & index_mask) >> L::man_bits] += (u & frac_mask) | kCountUnit;
      }
    for (; i < n; ++i) {
      const auto u = bits_of(x[i]);
      bins_[0][(u & index_mask) >> L::man_bits] += (u & frac_mask) | kCountUnit;
    }
  }
  void flush(ExactAccumulator& acc) {
    constexpr int field_bits = kIndexBits - 1;
    for (std::size_t idx = 0; idx < (std::size_t(1) << kIndexBits); ++idx) {
      std::uint64_t v = 0;
      for (int c = 0; c < kCopies; ++c) v += bins_[c][idx];
      if (v == 0) continue;
      const std::uint64_t count = v >> 41, frac_sum = v & (kCountUnit - 1);
      const bool negative = (idx >> field_bits) != 0;
      const int field = int(idx & ((1u << field_bits) - 1));
      // Finite values only reach here (blocks with Inf or NaN take the exact
      // scalar path), so field is a finite exponent.
      const std::uint64_t m = field == 0 ? frac_sum : frac_sum + (count << L::man_bits);
      if (m == 0) {
        acc.add_zeros(negative, count);
        continue;
      }
      const int e = std::max(field, 1) - L::bias - L::man_bits;
      acc.add_scaled(negative ? -std::int64_t(m) : std::int64_t(m), e);
    }
    clear();
  }

 private:
  void clear() {
    std::memset(bins_, 0, sizeof bins_);
    pending_ = 0;
  }
  alignas(64) std::uint64_t bins_[kCopies][std::size_t(1) << kIndexBits];
  std::size_t pending_ = 0;
};

// The same for products: the two significands' product (at most 2p bits,
// 48 for fp32) is added as an integer to the bin of its sign and exponent
// sum (the scheme ExBLAS uses for dot products). 2^16 products fit a bin.
template <class T, bool Magnitude>
class ProductBins {
  using L = Layout<T>;
  static constexpr int kFieldBits = L::width - 1 - L::man_bits;
  static constexpr std::size_t kExponentSums = std::size_t(2) << kFieldBits;  // 0 .. 2 * max field
  static constexpr int kCopies = 4;
  static constexpr std::size_t kFlushAfter = std::size_t(1) << (64 - 2 * (L::man_bits + 1));

 public:
  ProductBins() { clear(); }
  void add(const T* x, const T* y, std::size_t n, ExactAccumulator& acc) {
    std::size_t i = 0;
    while (i < n) {
      const std::size_t len = std::min(n - i, kFlushAfter - pending_);
      add_some(x + i, y + i, len);
      pending_ += len;
      i += len;
      if (pending_ == kFlushAfter) flush(acc);
    }
  }
  void flush(ExactAccumulator& acc) {
    // Four copies may exceed 2^64 together: each is added on its own.
    for (int c = 0; c < kCopies; ++c)
      for (int sign = 0; sign < 2; ++sign)
        for (std::size_t es = 0; es < kExponentSums; ++es)
          if (bins_[c][sign][es] != 0) add_bin(bins_[c][sign][es], sign, es, acc);
    // Zero products leave no trace in the bins; their signs matter when
    // every term is zero (all -0 gives -0).
    if (pending_ != 0) acc.add_zeros(!saw_not_negative_zero_, 1);
    clear();
  }

 private:
  static void add_bin(std::uint64_t b, int sign, std::size_t es, ExactAccumulator& acc) {
    // value = b * 2^(es - 2 (bias + man_bits)); subnormal fields count as 1 (see add_some).
    const int e = int(es) - 2 * (L::bias + L::man_bits);
    const std::int64_t lo = std::int64_t(b & 0xFFFFFFFFu), hi = std::int64_t(b >> 32);
    acc.add_scaled(sign ? -lo : lo, e);
    if (hi != 0) acc.add_scaled(sign ? -hi : hi, e + 32);
  }
  void add_some(const T* x, const T* y, std::size_t n) {
    const std::uint64_t frac_mask = (std::uint64_t(1) << L::man_bits) - 1;
    const std::uint32_t field_mask = (1u << kFieldBits) - 1;
    auto add_one = [&](std::size_t i, int copy) {
      const std::uint32_t ux = bits_of(x[i]), uy = bits_of(y[i]);
      const std::uint32_t fx = (ux >> L::man_bits) & field_mask, fy = (uy >> L::man_bits) & field_mask;
      const std::uint64_t mx = (ux & frac_mask) | (std::uint64_t(fx != 0) << L::man_bits);
      const std::uint64_t my = (uy & frac_mask) | (std::uint64_t(fy != 0) << L::man_bits);
      const int sign = Magnitude ? 0 : int(((ux ^ uy) >> (L::width - 1)) & 1);
      const std::uint64_t p = mx * my;
      bins_[copy][sign][std::max(fx, 1u) + std::max(fy, 1u)] += p;
      saw_not_negative_zero_ |= (p != 0) | (sign == 0);
    };
    std::size_t i = 0;
    for (; i + kCopies <= n; i += kCopies)
      for (int c = 0; c < kCopies; ++c) add_one(i + c, c);
    for (; i < n; ++i) add_one(i, 0);
  }
  void clear() {
    std::memset(bins_, 0, sizeof bins_);
    pending_ = 0;
    saw_not_negative_zero_ = false;
  }
  alignas(64) std::uint64_t bins_[kCopies][2][kExponentSums];
  std::size_t pending_ = 0;
  bool saw_not_negative_zero_ = false;
};

}  // namespace ulpscope::exact_sum_detail
