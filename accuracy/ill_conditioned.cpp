#include "accuracy/ill_conditioned.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kernels/counter_rng.hpp"
#include "accuracy/distribution.hpp"
#include "reference/exact_accumulator.hpp"
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
  void set(const ExactReal& r) {
    if (mpfr_set(v_.get(), r.get(), MPFR_RNDN) != 0) throw std::logic_error("ExactSum: a value rounded");
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

std::optional<double> ratio(const ExactReal& abs_sum, const ExactReal& sum) {
  if (abs_sum.is_zero()) return std::nullopt;
  if (sum.is_zero()) return HUGE_VAL;
  ExactReal q(53);
  mpfr_div(q.get(), abs_sum.get(), sum.get(), MPFR_RNDN);
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

// Chooses v_i so that the terms t_i = w_i v_i (w = 1 for a sum; w = x for
// the y of a dot product) have sum|t| / |sum t| = condition: the first half
// of the positions random, with exponents spread over [v_top - spread, v_top];
// then each further v_i brings the exact sum so far to about +-2^e_k, e_k
// falling on a straight line from the top to just above the aim T = sum|t| /
// condition, and the last one (processed last: the largest |w|) brings it to
// +-T (GenDot's loop, with the end aimed). Every v_i is rounded to the format.
struct Terms {
  const std::vector<double>* w = nullptr;  // nullptr: all 1
  int w_top = 0;                           // floor(log2 max|w|)
  int v_top = 0, spread = 0;
  double min_aim = 0;  // no sum of such terms is smaller (but zero) than this
};

struct Cancelled {
  std::vector<double> v;
  std::optional<double> achieved;
  bool range_limited = false;
};

Cancelled cancel(const Terms& t, double condition, Dtype dtype, std::int64_t n, const CounterRng& rng) {
  const FormatInfo& f = format_info(dtype);
  const int sub = f.emin - f.precision + 1;
  auto w = [&](std::int64_t i) { return t.w ? (*t.w)[std::size_t(i)] : 1.0; };
  auto draw = [&](std::int64_t i, int e) {  // +-[1, 2) * 2^e, rounded to the format
    const std::uint64_t c = std::uint64_t(i) * kDrawsPerElement;
    const double v = (1.0 + rng.uniform(c)) * detail::exact_pow2(e);
    return round_into_format((rng.bits(c + 1) & 1) ? -v : v, dtype);
  };
  auto draw_first_half = [&](std::int64_t i) {
    const int lo = std::max(t.v_top - t.spread, f.emin);
    const int hi = std::max(t.v_top, lo);
    return draw(i, lo + int(rng.below(std::uint64_t(i) * kDrawsPerElement + 2, std::uint64_t(hi - lo + 1))));
  };

  Cancelled out;
  out.v.resize(std::size_t(n));
  // The running sum is read at every cancelling step (MPFR); sum|t| only at
  // the end (the long accumulator, several times faster to add to).
  ExactSum sum(t.w ? kDotBits : kSumBits);
  ExactAccumulator abs_sum;
  double abs_approx = 0;  // sum|t| so far, for aiming only
  auto take = [&](std::int64_t i, double v) {
    out.v[std::size_t(i)] = v;
    sum.add_product(w(i), v);
    abs_sum.add(std::abs(w(i) * v));  // exact: at most 48 significant bits, no underflow
    abs_approx += std::abs(w(i) * v);
  };

  // The first half's sum is read only once, when the cancelling starts.
  const std::int64_t n1 = std::max<std::int64_t>(1, n / 2);
  ExactAccumulator head;
  for (std::int64_t i = 0; i < n1; ++i) {
    const double v = draw_first_half(i);
    out.v[std::size_t(i)] = v;
    head.add(w(i) * v);  // exact, as below
    abs_sum.add(std::abs(w(i) * v));
    abs_approx += std::abs(w(i) * v);
  }
  sum.set(head.value());
  // The cancelling positions, the one with the largest |w| last (a small w
  // would need a v beyond the format's range to aim precisely); zero w cannot
  // cancel anything and gets a random v.
  std::vector<std::int64_t> order;
  for (std::int64_t i = n1; i < n; ++i) {
    if (w(i) == 0) take(i, draw_first_half(i));
    else order.push_back(i);
  }
  if (t.w && !order.empty()) {
    const auto largest = std::max_element(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return std::abs(w(a)) < std::abs(w(b));
    });
    std::rotate(largest, largest + 1, order.end());
  }
  auto aim = [&](double abs_total) {
    double a = abs_total / condition;
    if (a < t.min_aim) {
      out.range_limited = true;
      a = t.min_aim;
    }
    return a;
  };
  const std::int64_t steps = std::int64_t(order.size());
  for (std::int64_t k = 1; k <= steps; ++k) {
    const std::int64_t i = order[std::size_t(k - 1)];
    const std::uint64_t c = std::uint64_t(i) * kDrawsPerElement;
    const double sign = (rng.bits(c + 40) & 1) ? -1.0 : 1.0;
    const double s = sum.to_double();
    const bool last = k == steps;
    // The last term adds about |s| to sum|t|.
    const double a = aim(abs_approx + (last ? std::abs(s) : 0.0));
    double target = sign * a;
    if (!last) {
      const int e = interpolate(t.w_top + t.v_top, exponent_of(a) + 1, k, steps);
      target = sign * (1.0 + rng.uniform(c + 41)) * detail::exact_pow2(std::max(e, t.w ? 2 * sub : sub));
    }
    take(i, round_into_format((target - s) / w(i), dtype));
  }
  out.achieved = ratio(abs_sum.value(), sum.value());
  return out;
}

std::string reached(std::optional<double> achieved) {
  return achieved ? short_number(*achieved) : std::string("undefined");
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
  // b = log2(condition), rounded up; integer, from the bits (no libm).
  const int b = exponent_of(condition) + 1;
  int log2n = 1;
  while ((std::int64_t(1) << log2n) < n) ++log2n;
  // Any partial sum of the values (dot: of the products) stays below half the
  // format's maximum, so that a naive accumulator in the input format meets
  // cancellation, not overflow. fp8 inputs are accumulated wider (their sums
  // go to fp32, docs/spec.md "Ops"), so there only the values must fit.
  const bool narrow = is_fp8(dtype);
  const int e_room = narrow ? f.emax - 1 : f.emax - log2n - 2;

  // x: a sum with the asked condition. Its aim T = sum|x| / condition, about
  // n 2^top / condition, must itself be a value of the format (it is not for
  // fp8 with large n and a small condition).
  Terms xs;
  xs.v_top = std::min((b + 1) / 2, e_room);
  const int e_aim_room = exponent_of(condition * f.max_finite / double(2 * n)) - 1;
  if (e_aim_room >= f.emin) xs.v_top = std::min(xs.v_top, e_aim_room);
  xs.spread = (b + 1) / 2;
  xs.min_aim = f.min_subnormal;
  Cancelled x = cancel(xs, condition, dtype, n, CounterRng(seed, 0x111C0));
  // Shuffle so that the structure is not in the order.
  const CounterRng order(seed, 0x5F1E11C0);
  for (std::size_t i = x.v.size(); i > 1; --i) std::swap(x.v[i - 1], x.v[order.below(i, i)]);
  out.x = std::move(x.v);
  out.achieved = x.achieved;
  out.note = "condition reached " + reached(out.achieved) + " (asked " + short_number(condition) + ")";
  bool range_limited = x.range_limited;

  if (dot) {
    // y: with x as it is, the products x_i y_i get the asked condition.
    Terms ys;
    ys.w = &out.x;
    double top = 0;
    for (double v : out.x) top = std::max(top, std::abs(v));
    ys.w_top = top > 0 ? exponent_of(top) : 0;
    const int product_room = narrow ? 2 * (f.emax - 1) : e_room;
    ys.v_top = std::clamp(std::min(0, product_room - ys.w_top - 1), f.emin, f.emax - 1);
    ys.spread = (b + 1) / 2;
    ys.min_aim = f.min_subnormal * f.min_subnormal;
    Cancelled y = cancel(ys, condition, dtype, n, CounterRng(seed, 0x111C1));
    out.y = std::move(y.v);
    out.achieved_dot = y.achieved;
    out.note += "; dot x.y reached " + reached(out.achieved_dot);
    range_limited = range_limited || y.range_limited;
  }
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
  return ratio(abs_sum.value(), sum.value());
}

std::optional<double> exact_condition_dot(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw std::invalid_argument("dot: x and y differ in length");
  ExactSum sum(kDotBits), abs_sum(kDotBits);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return std::nullopt;
    sum.add_product(x[i], y[i]);
    abs_sum.add_product(std::abs(x[i]), std::abs(y[i]));
  }
  return ratio(abs_sum.value(), sum.value());
}

}  // namespace ulpscope
