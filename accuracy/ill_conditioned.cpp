#include "accuracy/ill_conditioned.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "accuracy/counter_rng.hpp"
#include "accuracy/distribution.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope {
namespace {

// An exact running sum of doubles (or of products of two doubles of at most
// 24 significant bits each, exact in 53). `bits` must cover the span of the
// terms' exponents plus log2 of their count; an addition that rounds anyway
// would be a bug and throws.
class ExactSum {
 public:
  explicit ExactSum(mpfr_prec_t bits) : v_(bits), product_(64) {}
  void add(double d) {
    if (mpfr_add_d(v_.get(), v_.get(), d, MPFR_RNDN) != 0) throw std::logic_error("ExactSum: an addition rounded");
  }
  void add_product(double a, double b) {
    mpfr_set_d(product_.get(), a, MPFR_RNDN);
    if (mpfr_mul_d(product_.get(), product_.get(), b, MPFR_RNDN) != 0)
      throw std::logic_error("ExactSum: a product rounded");
    if (mpfr_add(v_.get(), v_.get(), product_.get(), MPFR_RNDN) != 0)
      throw std::logic_error("ExactSum: an addition rounded");
  }
  double to_double() const { return v_.to_double(); }
  const ExactReal& value() const { return v_; }

 private:
  ExactReal v_, product_;
};

// Enough bits for any sum of n values of the input formats (fp32's span is
// 2^-149 .. 2^128) or of their pairwise products, and for up to 2^40 terms.
constexpr mpfr_prec_t kSumBits = 128 + 149 + 40 + 8;
constexpr mpfr_prec_t kDotBits = 2 * (128 + 149) + 40 + 8;

std::optional<double> ratio(const ExactSum& abs_sum, const ExactSum& sum) {
  if (abs_sum.value().is_zero()) return std::nullopt;
  if (sum.value().is_zero()) return HUGE_VAL;
  ExactReal q(53);
  mpfr_div(q.get(), abs_sum.value().get(), sum.value().get(), MPFR_RNDN);
  return std::abs(q.to_double());
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

// floor(log2 |v|) for a finite nonzero double, exactly (no libm rounding).
int exponent_of(double v) { return std::ilogb(v); }

// Integer e on the straight line from a (k = 0) to b (k = steps).
int interpolate(int a, int b, std::int64_t k, std::int64_t steps) {
  return a + int(std::floor(double(b - a) * double(k) / double(steps)));
}

}  // namespace

IllConditionedInput generate_ill_conditioned(double condition, Dtype dtype, std::int64_t n, std::uint64_t seed,
                                             bool dot) {
  if (!(condition >= 1.0)) throw std::invalid_argument("a condition number is at least 1");
  IllConditionedInput out;
  if (n <= 0) {
    out.note = "n = 0: no condition number";
    return out;
  }
  const FormatInfo& f = format_info(dtype);
  const int p = f.precision;
  const int sub = f.emin - p + 1;  // exponent of the smallest subnormal
  const double min_sub = f.min_subnormal;
  // b = log2(condition), rounded up; integer, from the bits (no libm).
  const int b = exponent_of(condition) + 1;
  int log2n = 1;
  while ((std::int64_t(1) << log2n) < n) ++log2n;

  // Largest exponent: any sum of the values (dot: of the products) stays below
  // half the format's maximum, so that a naive accumulator in the input format
  // meets cancellation, not overflow. fp8 inputs are accumulated wider (their
  // sums go to fp32, SPEC.md "Ops"), so there only the values must fit.
  const bool narrow = is_fp8(dtype);
  const int e_room = narrow ? f.emax - 1 : f.emax - log2n - 2;
  int e_top = dot ? std::min((b + 3) / 4, narrow ? e_room : (e_room - 1) / 2)
                        : std::min((b + 1) / 2, e_room);
  // And the aim T = sum|x| / condition, about n * 2^e_top / condition, must
  // itself be a value of the format (it is not for fp8 with large n and a
  // small condition).
  const int e_aim_room = exponent_of(condition * f.max_finite / double(2 * n)) - 1;
  if (!dot && e_aim_room >= f.emin) e_top = std::min(e_top, e_aim_room);
  const int spread = dot ? (b + 3) / 4 : (b + 1) / 2;
  const int e_first_lo = std::max(e_top - spread, f.emin);

  const CounterRng rng(seed, 0x111C0 + (dot ? 1 : 0));
  auto draw = [&](std::uint64_t i, int slot, int e) {  // +-[1, 2) * 2^e, rounded to the format
    const std::uint64_t c = i * kDrawsPerElement + std::uint64_t(slot) * 4;
    const double m = 1.0 + rng.uniform(c);
    const double v = m * detail::exact_pow2(e);
    return round_into_format((rng.bits(c + 1) & 1) ? -v : v, dtype);
  };
  auto draw_exponent = [&](std::uint64_t i, int slot, int lo, int hi) {
    return lo + int(rng.below(i * kDrawsPerElement + std::uint64_t(slot) * 4 + 2, std::uint64_t(hi - lo + 1)));
  };
  auto random_sign = [&](std::uint64_t i) { return (rng.bits(i * kDrawsPerElement + 40) & 1) ? -1.0 : 1.0; };

  out.x.resize(std::size_t(n));
  if (dot) out.y.resize(std::size_t(n));
  ExactSum sum(dot ? kDotBits : kSumBits), abs_sum(dot ? kDotBits : kSumBits);
  double abs_approx = 0;  // sum|x| (dot: |x*y|) so far, for aiming only
  auto take = [&](std::int64_t i, double x, double y) {
    out.x[std::size_t(i)] = x;
    if (dot) {
      out.y[std::size_t(i)] = y;
      sum.add_product(x, y);
      abs_sum.add_product(std::abs(x), std::abs(y));
      abs_approx += std::abs(x * y);
    } else {
      sum.add(x);
      abs_sum.add(std::abs(x));
      abs_approx += std::abs(x);
    }
  };

  // First half: random values, exponents uniform in [e_first_lo, e_top].
  const std::int64_t n1 = std::max<std::int64_t>(1, n / 2);
  for (std::int64_t i = 0; i < n1; ++i) {
    const double x = draw(std::uint64_t(i), 0, draw_exponent(std::uint64_t(i), 0, e_first_lo, e_top));
    const double y = dot ? draw(std::uint64_t(i), 1, draw_exponent(std::uint64_t(i), 1, e_first_lo, e_top)) : 0;
    take(i, x, y);
  }
  // The final sum aimed at: T = sum|x| / condition, but not below the
  // smallest subnormal (every sum of format values is a multiple of it).
  bool range_limited = false;
  auto aim = [&](double abs_total) {
    double t = abs_total / condition;
    if (t < min_sub) {
      range_limited = true;
      t = min_sub;
    }
    return t;
  };
  // Second half: value i brings the exact sum to about +-2^e_i, e_i falling
  // on a straight line from the top to just above the aim; the last value
  // brings it to +-T itself (GenDot's loop, with the end aimed at T).
  const int e_start = dot ? 2 * e_top : e_top;
  const std::int64_t steps = n - n1;
  for (std::int64_t k = 1; k <= steps; ++k) {
    const std::int64_t i = n1 + k - 1;
    const double s = sum.to_double();
    const bool last = k == steps;
    // The last value adds about |s| to sum|x|.
    const double t = aim(abs_approx + (last ? std::abs(s) : 0.0));
    double target;
    if (last) {
      target = random_sign(std::uint64_t(i)) * t;
    } else {
      const int e = interpolate(e_start, exponent_of(t) + 1, k, steps);
      target = random_sign(std::uint64_t(i)) * (1.0 + rng.uniform(std::uint64_t(i) * kDrawsPerElement + 41)) *
               detail::exact_pow2(std::max(e, sub));
    }
    if (!dot) {
      take(i, round_into_format(target - s, dtype), 0);
    } else {
      // x about the square root of the product aimed at, y solving for it.
      const int ex = std::clamp(exponent_of(std::max(std::abs(target - s), min_sub)) / 2, f.emin, f.emax - 1);
      const double x = draw(std::uint64_t(i), 0, ex);
      take(i, x, round_into_format((target - s) / x, dtype));
    }
  }

  // Shuffle (x and y alike) so that the structure is not in the order.
  const CounterRng order(seed, 0x5F1E11C0);
  for (std::size_t i = out.x.size(); i > 1; --i) {
    const std::size_t j = std::size_t(order.below(i, i));
    std::swap(out.x[i - 1], out.x[j]);
    if (dot) std::swap(out.y[i - 1], out.y[j]);
  }

  out.achieved = ratio(abs_sum, sum);
  out.note = "condition reached " + (out.achieved ? short_number(*out.achieved) : std::string("undefined")) +
             " (asked " + short_number(condition) + ")";
  if (range_limited)
    out.note += ": " + std::string(to_string(dtype)) +
                "'s range allows no smaller sum (the smallest subnormal) below these magnitudes";
  if (n < 3) out.note += ": n = " + std::to_string(n) + " is too small to aim";
  return out;
}

std::optional<double> exact_condition_sum(std::span<const double> x) {
  // Any doubles: their whole exponent range.
  ExactSum sum(2200), abs_sum(2200);
  for (double v : x) {
    if (!std::isfinite(v)) return std::nullopt;
    sum.add(v);
    abs_sum.add(std::abs(v));
  }
  return ratio(abs_sum, sum);
}

std::optional<double> exact_condition_dot(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw std::invalid_argument("dot: x and y differ in length");
  ExactSum sum(kDotBits), abs_sum(kDotBits);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return std::nullopt;
    sum.add_product(x[i], y[i]);
    abs_sum.add_product(std::abs(x[i]), std::abs(y[i]));
  }
  return ratio(abs_sum, sum);
}

}  // namespace ulpscope
