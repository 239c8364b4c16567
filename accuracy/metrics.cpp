#include "accuracy/metrics.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "formats/round_to_dtype.hpp"
#include "kernels/output_digest.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope {
namespace {

// Differences are taken at this precision: a correctly rounded 128-bit
// |y - r| has a relative error of 2^-128, whatever the cancellation.
constexpr mpfr_prec_t kDifferenceBits = 128;

std::string format_name(Dtype d) { return std::string(to_string(d)); }

// |y - r| as an MPFR number (y finite, r finite).
ExactReal abs_difference(double y, const ExactReal& r) {
  ExactReal d(kDifferenceBits);
  mpfr_d_sub(d.get(), y, r.get(), MPFR_RNDN);
  mpfr_abs(d.get(), d.get(), MPFR_RNDN);
  return d;
}

// 0 when y and r are the same non-finite value, nullopt (with a reason) when
// exactly one of them is non-finite or they are different non-finite values;
// an empty optional<optional> when both are finite.
std::optional<std::optional<double>> compare_non_finite(double y, const ExactReal& r, Dtype out, std::string* note) {
  auto fail = [&](std::string why) -> std::optional<std::optional<double>> {
    if (note) *note = std::move(why);
    return std::optional<double>{};
  };
  const bool y_finite = std::isfinite(y);
  const bool r_finite = !r.is_nan() && !r.is_inf();
  if (y_finite && r_finite) return std::nullopt;
  if (r.is_nan()) {
    if (std::isnan(y)) return std::optional<double>(0.0);
    return fail(std::string(y_finite ? "finite" : "infinite") + " result for a NaN reference");
  }
  if (r.is_inf()) {
    if (std::isinf(y) && std::signbit(y) == r.signbit()) return std::optional<double>(0.0);
    if (std::isnan(y)) return fail("NaN result for an infinite reference");
    return fail(std::string(y_finite ? "finite" : "opposite infinite") + " result for an infinite reference");
  }
  if (std::isnan(y)) return fail("NaN result for a finite reference");
  std::string why = "infinite result for a finite reference";
  const double rn = round_to_dtype(r.to_double(), out, Saturation::nosat);
  if (std::isinf(rn) && std::signbit(rn) == std::signbit(y))
    why += " (its exact value overflows " + format_name(out) + " too)";
  return fail(std::move(why));
}

std::string value_name(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  return fmt::format("{}", v);
}

// Where the finite r rounds past out's largest finite value: 0 when y is that
// rounding under sat, nullopt (with a reason) when it is not; an empty
// optional<optional> when r does not overflow, or overflows into a saturated
// value that y is not (measured as any finite result).
std::optional<std::optional<double>> compare_overflow(double y, const ExactReal& r, Dtype out, Saturation sat,
                                                      std::string* note) {
  const FormatInfo& f = format_info(out);
  if (r.is_nan() || r.is_inf() || (mpfr_cmp_d(r.get(), f.max_finite) <= 0 && mpfr_cmp_d(r.get(), -f.max_finite) >= 0))
    return std::nullopt;  // the common case costs two comparisons
  if (std::isfinite(round_to_format(r, out, Saturation::nosat))) return std::nullopt;  // rounds to the largest value
  const double rn = round_to_format(r, out, sat);
  if (correctly_rounded(y, rn)) return std::optional<double>(0.0);
  if (std::isfinite(rn)) return std::nullopt;  // saturated: another finite y is measured as usual
  const std::string what = std::isnan(y) ? "NaN" : !std::isinf(y) ? "finite" : "opposite infinite";
  if (note)
    *note = fmt::format("{} result where the correctly rounded one is {} (its exact value overflows {})", what,
                        value_name(rn), format_name(out));
  return std::optional<double>{};
}

std::uint64_t result_key(double v) { return output_key(v); }

}  // namespace

int ulp_exponent(const ExactReal& r, Dtype out) {
  const FormatInfo& f = format_info(out);
  if (r.is_zero()) return f.emin - f.precision + 1;
  // MPFR's exponent E puts |r| in [2^(E-1), 2^E): floor(log2|r|) = E - 1.
  const int e = int(mpfr_get_exp(r.get())) - 1;
  return std::max(e, f.emin) - f.precision + 1;
}

namespace {

// ulp_error's value in double arithmetic where it is the same number as
// through MPFR; nullopt where it may not be. r must be exactly a double rd
// (at most 53 bits, none below the least subnormal), y and rd finite, and
// |rd| not past out's largest finite value (no overflow rule applies).
// Their exponents at most 64 apart put the exact y - rd within 118 bits, so
// abs_difference's 128 bits round nothing and MPFR's result is
// RN(|y - rd| / 2^e) = RN(|y - rd|) * 2^-e: the IEEE subtraction's, scaled
// exactly while the quotient is a normal double (or an exact zero).
std::optional<double> ulp_error_in_double(double y, const ExactReal& r, Dtype out) {
  if (!std::isfinite(y) || !mpfr_number_p(r.get())) return std::nullopt;
  const double rd = r.to_double();
  if (mpfr_cmp_d(r.get(), rd) != 0) return std::nullopt;  // r is not a double
  if (!(std::abs(rd) <= format_info(out).max_finite)) return std::nullopt;
  if (y != 0 && rd != 0 && std::abs(std::ilogb(y) - std::ilogb(rd)) > 64) return std::nullopt;
  const double difference = std::abs(y - rd);
  if (!std::isfinite(difference)) return std::nullopt;
  const double q = std::ldexp(difference, -ulp_exponent(r, out));
  if (difference != 0 && !(q >= std::numeric_limits<double>::min() && q <= std::numeric_limits<double>::max()))
    return std::nullopt;
  return q;
}

}  // namespace

std::optional<double> ulp_error(double y, const ExactReal& r, Dtype out, std::string* note, Saturation sat) {
  // Most outputs of a long scan or of any sum of narrow values: one
  // subtraction instead of three MPFR operations and an allocation.
  if (const auto fast = ulp_error_in_double(y, r, out)) return fast;
  return ulp_error_through_mpfr(y, r, out, note, sat);
}

std::optional<double> ulp_error_through_mpfr(double y, const ExactReal& r, Dtype out, std::string* note,
                                             Saturation sat) {
  if (auto overflow = compare_overflow(y, r, out, sat, note)) return *overflow;
  if (auto special = compare_non_finite(y, r, out, note)) return *special;
  ExactReal d = abs_difference(y, r);
  mpfr_div_2si(d.get(), d.get(), ulp_exponent(r, out), MPFR_RNDN);  // exact: a power of two
  return d.to_double();
}

void WorstOutputError::add(std::optional<double> e, const std::string& why, const std::string& where) {
  if (missing_) return;
  if (!e) {
    missing_ = true;
    value.reset();
    note = where.empty() ? why : where + ": " + why;
  } else if (!value || *e > *value) {
    value = e;
  }
}

std::optional<double> accumulator_ulp_error(const std::vector<std::optional<double>>& errors,
                                            const std::vector<double>& scales) {
  if (errors.empty() || errors.size() != scales.size()) return std::nullopt;
  double worst = 0;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) return std::nullopt;
    worst = std::max(worst, *errors[i] / scales[i]);
  }
  return worst;
}

bool correctly_rounded(double y, double rn_r) {
  if (std::isnan(y) || std::isnan(rn_r)) return std::isnan(y) && std::isnan(rn_r);
  return std::bit_cast<std::uint64_t>(y) == std::bit_cast<std::uint64_t>(rn_r);
}

std::optional<double> rel_error(double v, const ExactReal& r) {
  if (auto special = compare_non_finite(v, r, Dtype::fp64, nullptr)) return *special;
  if (r.is_zero()) return v == 0 ? std::optional<double>(0.0) : std::nullopt;
  ExactReal d = abs_difference(v, r);
  mpfr_div(d.get(), d.get(), r.get(), MPFR_RNDN);
  return std::abs(d.to_double());
}

std::optional<double> condition_sum(const ExactReal& sum_abs, const ExactReal& sum) {
  if (sum_abs.is_nan() || sum_abs.is_inf() || sum.is_nan() || sum.is_inf()) return std::nullopt;
  if (sum_abs.is_zero()) return std::nullopt;
  if (sum.is_zero()) return HUGE_VAL;
  ExactReal q(53);
  mpfr_div(q.get(), sum_abs.get(), sum.get(), MPFR_RNDN);
  return std::abs(q.to_double());
}

namespace {

// n sum x^2 - (sum x)^2, exactly: n * S.
std::optional<ExactReal> n_times_deviations(const ExactReal& sum, const ExactReal& sum_squares, std::int64_t n,
                                            ExactReal* n_sumsq) {
  if (n <= 0 || sum.is_nan() || sum.is_inf() || sum_squares.is_nan() || sum_squares.is_inf()) return std::nullopt;
  const mpfr_prec_t p2 = 2 * sum.precision() + 2;
  ExactReal a(sum_squares.precision() + 64), b(p2);
  mpfr_mul_si(a.get(), sum_squares.get(), long(n), MPFR_RNDN);  // exact: 64 more bits
  mpfr_sqr(b.get(), sum.get(), MPFR_RNDN);                       // exact: twice the bits
  // Correctly rounded to 128 bits more than either operand holds: exact
  // unless their exponents are far apart, and then far finer than a double.
  ExactReal diff(std::max(a.precision(), b.precision()) + 128);
  mpfr_sub(diff.get(), a.get(), b.get(), MPFR_RNDN);
  if (n_sumsq) *n_sumsq = a;
  return diff;
}

}  // namespace

std::optional<double> condition_variance(const ExactReal& sum, const ExactReal& sum_squares, std::int64_t n) {
  ExactReal n_sumsq;
  const auto ns = n_times_deviations(sum, sum_squares, n, &n_sumsq);
  if (!ns || n_sumsq.is_zero()) return std::nullopt;
  if (ns->is_zero()) return HUGE_VAL;
  ExactReal q(64);
  mpfr_div(q.get(), n_sumsq.get(), ns->get(), MPFR_RNDN);
  mpfr_sqrt(q.get(), q.get(), MPFR_RNDN);
  return q.to_double();
}

std::optional<double> sum_squared_deviations(const ExactReal& sum, const ExactReal& sum_squares, std::int64_t n) {
  auto ns = n_times_deviations(sum, sum_squares, n, nullptr);
  if (!ns) return std::nullopt;
  mpfr_div_si(ns->get(), ns->get(), long(n), MPFR_RNDN);
  return ns->to_double();
}

int distinct_results(const std::vector<std::vector<double>>& runs) {
  std::vector<std::vector<std::uint64_t>> keys;
  for (const auto& r : runs) {
    std::vector<std::uint64_t> k(r.size());
    std::transform(r.begin(), r.end(), k.begin(), result_key);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(std::move(k));
  }
  return int(keys.size());
}

std::uint64_t results_digest(const std::vector<double>& outputs) {
  std::uint64_t h = digest_start(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) h += digest_term(i, output_key(outputs[i]));
  return h;
}

int distinct_digests(std::vector<std::uint64_t> digests) {
  std::sort(digests.begin(), digests.end());
  return int(std::unique(digests.begin(), digests.end()) - digests.begin());
}

int distinct_results(const std::vector<double>& runs) {
  std::vector<std::uint64_t> k(runs.size());
  std::transform(runs.begin(), runs.end(), k.begin(), result_key);
  std::sort(k.begin(), k.end());
  return int(std::unique(k.begin(), k.end()) - k.begin());
}

}  // namespace ulpscope
