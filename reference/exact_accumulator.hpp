#pragma once
// A long fixed-point accumulator (Kulisch 1981; Neal 2015, "small
// superaccumulator"): every double, and every m * 2^e with m a 64-bit integer,
// is added without error; the value is read out exactly as an ExactReal.
//
// Layout: kLimbs signed 64-bit limbs, limb k holding a 32-bit digit of weight
// 2^(32k + kLowestExponent). An addition spreads its bits over at most three
// limbs, each gaining less than 2^32 in magnitude, so 2^30 additions fit
// before the carries are propagated.
#include <array>
#include <cstdint>

#include "reference/exact_real.hpp"

namespace ulpscope {

class ExactAccumulator {
 public:
  // The weight of the lowest bit: the smallest double subnormal.
  static constexpr int kLowestExponent = -1074;
  static constexpr int kLimbBits = 32;
  // Doubles reach 2^1024; 2^64 terms add 64 bits; one limb of headroom.
  static constexpr int kLimbs = (1024 - kLowestExponent + 64) / kLimbBits + 2;

  // IEEE 754 semantics for the specials: NaN, or +Inf with -Inf, gives NaN.
  void add(double x);
  // m * 2^e, exactly; e >= kLowestExponent. Counts as a nonzero term when m != 0.
  void add_scaled(std::int64_t m, int e);
  // count terms equal to zero (the sign matters: IEEE's sum of only -0 is -0).
  void add_zeros(bool negative, std::uint64_t count);
  void merge(const ExactAccumulator& other);

  // The exact sum, at the precision of its own bits (from its lowest nonzero
  // bit to its highest: mpfr_min_prec of the value). An exact zero is -0
  // when every term was -0 (and there was at least one), +0 otherwise (IEEE
  // 754-2019, 6.3).
  ExactReal value() const;

  bool has_nan() const { return nan_ || (pos_inf_ && neg_inf_); }

 private:
  void add_digits(std::int64_t m, int e);
  void normalize();

  std::array<std::int64_t, kLimbs> limb_{};
  std::uint32_t adds_since_normalize_ = 0;
  bool nan_ = false, pos_inf_ = false, neg_inf_ = false;
  bool saw_term_ = false, saw_non_negative_zero_ = false;
};

}  // namespace ulpscope
