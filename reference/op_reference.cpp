#include "reference/op_reference.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

#include "reference/exact_sum.hpp"
#include "reference/mpfr_thread_caches.hpp"
#include "reference/round_to_format.hpp"
#include "reference/ziv.hpp"
#include "reference/usable_cores.hpp"

namespace ulpscope {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kParallelExpFrom = std::size_t(1) << 14;

ExactReal special(double v) {  // NaN, +-Inf or a signed zero
  ExactReal r(2);
  mpfr_set_d(r.get(), v, MPFR_RNDN);
  return r;
}

Reference from_ziv(ZivResult z, OutputFormat out) {
  Reference r;
  r.exact = std::move(z.value);
  r.exact_is_exact = z.exact;
  r.rounded = round_to_format(r.exact, out.dtype, out.sat);
  r.exact_decimal = exact_decimal(r.exact, z.exact);
  r.working_precision = z.precision;
  return r;
}

mpfr_exp_t exponent(const ExactReal& v) { return mpfr_get_exp(v.get()); }

// a / b at precision p; b is not zero.
Approximation quotient(const ExactReal& a, const ExactReal& b, mpfr_prec_t p) {
  Approximation r{ExactReal(p)};
  r.exact = mpfr_div(r.value.get(), a.get(), b.get(), MPFR_RNDN) == 0;
  r.error_exponent = exponent(r.value) - p;  // half an ulp
  return r;
}

// sqrt(a / b) at precision p: two roundings of 2^-p each, relative error
// below 2^(1 - p), so below 2^(EXP - p + 1) absolutely.
Approximation root_of_quotient(const ExactReal& a, const ExactReal& b, mpfr_prec_t p) {
  Approximation r{ExactReal(p)};
  ExactReal q(p);
  const int t1 = mpfr_div(q.get(), a.get(), b.get(), MPFR_RNDN);
  const int t2 = mpfr_sqrt(r.value.get(), q.get(), MPFR_RNDN);
  r.exact = t1 == 0 && t2 == 0;
  r.error_exponent = exponent(r.value) - p + 1;
  return r;
}

ExactReal exact_from_int(std::size_t n) { return exact_from_uint(static_cast<unsigned long>(n)); }

// Q / n + eps as (Q + n eps) / n: the numerator exactly.
ExactReal shifted_sumsq(const ExactReal& q, std::size_t n, double eps) {
  return exact_add(q, exact_mul(exact_from_int(n), ExactReal::from_double(eps)));
}

double widened(const TypedArray& x, std::size_t i) { return x.at(i); }

}  // namespace

std::string decimal_of(const Reference& r) {
  return r.exact_decimal.empty() ? exact_decimal(r.exact, r.exact_is_exact) : r.exact_decimal;
}

Reference rounded_reference(ExactReal exact, OutputFormat out) {
  // Built around the value (a default Reference would allocate a number of
  // its own first: a scan makes one Reference an element).
  const double rounded = round_to_format(exact, out.dtype, out.sat);
  return Reference{std::move(exact), true, rounded, {}};
}

Reference exact_reference(ExactReal exact, OutputFormat out) {
  Reference r = rounded_reference(std::move(exact), out);
  r.exact_decimal = exact_decimal(r.exact);
  return r;
}

Reference sum_reference(const TypedArray& x, OutputFormat out) { return exact_reference(exact_sum(x), out); }
Reference dot_reference(const TypedArray& x, const TypedArray& y, OutputFormat out) {
  return exact_reference(exact_dot(x, y), out);
}
Reference sumsq_reference(const TypedArray& x, OutputFormat out) {
  return exact_reference(exact_sumsq(x), out);
}

namespace {

// a / b for finite a and b, b nonzero: the rounding certified by Ziv's loop,
// the decimal from the fraction (ziv.hpp: a non-dyadic quotient can be a
// decimal tie, which no interval decides).
Reference quotient_reference(const ExactReal& a, const ExactReal& b, OutputFormat out) {
  Reference r = from_ziv(ziv_round([&](mpfr_prec_t p) { return quotient(a, b, p); }, out.dtype, out.sat,
                                   kZivStartPrecision, mpfr_prec_t(1) << 22, /*decide_decimal=*/false),
                         out);
  if (!r.exact_is_exact) r.exact_decimal = quotient_decimal(a, b);
  return r;
}

Reference mean_from_sum(const ExactReal& s, std::size_t n, OutputFormat out) {
  if (n == 0) return exact_reference(special(kNaN), out);
  if (!mpfr_regular_p(s.get())) return exact_reference(s, out);  // NaN, Inf, signed zero: S / n is S
  return quotient_reference(s, exact_from_int(n), out);
}

}  // namespace

Reference mean_reference(const TypedArray& x, OutputFormat out) {
  return mean_from_sum(exact_sum(x), x.size(), out);
}

Reference norm2_reference(const TypedArray& x, OutputFormat out) {
  const ExactReal q = exact_sumsq(x);
  if (!mpfr_regular_p(q.get())) return exact_reference(q, out);  // NaN, +Inf, +0
  const ExactReal one = exact_from_int(1);
  return from_ziv(ziv_round([&](mpfr_prec_t p) { return root_of_quotient(q, one, p); }, out.dtype, out.sat),
                  out);
}

Reference rms_reference(const TypedArray& x, double eps, OutputFormat out) {
  const std::size_t n = x.size();
  if (n == 0) return exact_reference(special(kNaN), out);
  const ExactReal t = shifted_sumsq(exact_sumsq(x), n, eps);
  if (!mpfr_regular_p(t.get())) {  // NaN, Inf, or zero (all zeros and eps = 0)
    ExactReal r(2);
    mpfr_sqrt(r.get(), t.get(), MPFR_RNDN);
    return exact_reference(r, out);
  }
  if (mpfr_sgn(t.get()) < 0) return exact_reference(special(kNaN), out);  // negative eps
  const ExactReal count = exact_from_int(n);
  return from_ziv(ziv_round([&](mpfr_prec_t p) { return root_of_quotient(t, count, p); }, out.dtype, out.sat),
                  out);
}

MeanVarReference mean_var_reference(const TypedArray& x, OutputFormat out) {
  const std::size_t n = x.size();
  const ExactReal s = exact_sum(x);
  MeanVarReference r{mean_from_sum(s, n, out), exact_reference(special(kNaN), out)};
  if (n == 0) return r;
  const ExactReal q = exact_sumsq(x);
  if (!mpfr_number_p(s.get()) || !mpfr_number_p(q.get())) return r;  // Inf - Inf: NaN
  const ExactReal numerator = exact_variance_numerator(s, q, n);
  if (mpfr_zero_p(numerator.get())) {
    r.variance = exact_reference(special(0.0), out);
    return r;
  }
  r.variance = quotient_reference(numerator, exact_mul(exact_from_int(n), exact_from_int(n)), out);
  return r;
}

namespace {

// IEEE 754-2019 maximum (5.3.1): NaN if either is NaN, and -0 < +0.
double ieee_maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double ieee_minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

template <class Pick>
Reference selection(const TypedArray& x, double identity, Pick pick, bool magnitude, OutputFormat out) {
  double v = identity;
  const std::vector<double> xs = x.to_doubles();
  for (double e : xs) v = pick(v, magnitude ? std::fabs(e) : e);
  return exact_reference(ExactReal::from_double(v), out);
}

}  // namespace

Reference max_reference(const TypedArray& x, OutputFormat out) {
  return selection(x, -HUGE_VAL, ieee_maximum, false, out);
}
Reference min_reference(const TypedArray& x, OutputFormat out) {
  return selection(x, HUGE_VAL, ieee_minimum, false, out);
}
Reference amax_reference(const TypedArray& x, OutputFormat out) {
  return selection(x, 0.0, ieee_maximum, true, out);
}

Reference logsumexp_reference(const TypedArray& x, OutputFormat out) {
  // The terms that add something are the values other than -Inf (exp = 0).
  const std::vector<double> v = x.to_doubles();
  bool pos_inf = false;
  std::size_t terms = 0;
  double m = -HUGE_VAL;
  for (double e : v) {
    if (std::isnan(e)) return exact_reference(special(kNaN), out);
    if (e == HUGE_VAL) pos_inf = true;
    if (e == -HUGE_VAL) continue;
    ++terms;
    m = std::max(m, e);
  }
  if (pos_inf) return exact_reference(special(HUGE_VAL), out);
  if (terms == 0) return exact_reference(special(-HUGE_VAL), out);
  // One term: log(exp(x)) = x. Otherwise the result is transcendental
  // (Lindemann-Weierstrass: distinct exponentials of algebraic numbers are
  // linearly independent), so Ziv's loop ends without an exactness test.
  if (terms == 1) return exact_reference(ExactReal::from_double(m), out);
  const ExactReal mx = ExactReal::from_double(m);
  const double log2n = std::log2(double(terms));
  auto evaluate = [&](mpfr_prec_t p) {
    // L = m + log(sum exp(x_i - m)); the sum S is at least 1 (the term of m).
    // Terms below 2^-(p + log2 n + 2) are dropped (-Inf among them):
    // together they change S by less than 2^-(p+2) relative to it. The terms
    // are added a block at a time into partial sums of p + 64 bits: all
    // terms are positive, so each of the at most n block additions is off by
    // less than 2^-(p+64) of S, together less than 2^-(p+24) of S for any
    // n below 2^40. Then (each other rounding 2^-p): exp's roundings, the
    // final mpfr_sum, the partial sums and the dropped part leave S with a
    // relative error below 2^(2-p); log turns it into an absolute error
    // below 2^(3-p); log and the final addition add half an ulp each.
    const double cutoff = -(double(p) + log2n + 2) * std::log(2.0) - 1;
    const mpfr_prec_t wide = p + 64;
    // The exponentials, shared out over the cores for long arrays (MPFR
    // keeps its caches per thread when built thread-safe, as Debian's is);
    // mpfr_sum rounds the exact sum of its arguments once, whatever their
    // order. A block's terms are reused, so memory does not grow with n.
    auto exps = [&](std::size_t begin, std::size_t end, ExactReal& partial) {
      constexpr std::size_t kBlock = 1024;
      ExactReal d(320);  // x_i - m is exact at 320 bits: fp32's range spans 277
      std::vector<ExactReal> block;
      block.reserve(kBlock);
      for (std::size_t k = 0; k < kBlock; ++k) block.emplace_back(p);
      std::vector<mpfr_ptr> ptrs(kBlock + 1);
      ExactReal next(wide);
      std::size_t used = 0;
      auto flush = [&] {
        ptrs[0] = partial.get();
        for (std::size_t k = 0; k < used; ++k) ptrs[k + 1] = block[k].get();
        mpfr_sum(next.get(), ptrs.data(), used + 1, MPFR_RNDN);
        mpfr_swap(next.get(), partial.get());
        used = 0;
      };
      for (std::size_t i = begin; i < end; ++i) {
        if (v[i] - m < cutoff) continue;
        mpfr_set_d(d.get(), v[i], MPFR_RNDN);
        mpfr_sub(d.get(), d.get(), mx.get(), MPFR_RNDN);
        mpfr_exp(block[used].get(), d.get(), MPFR_RNDN);
        if (++used == kBlock) flush();
      }
      if (used > 0) flush();
    };
    const std::size_t parts =
        v.size() >= kParallelExpFrom && mpfr_buildopt_tls_p()
            ? std::clamp<std::size_t>(v.size() / kParallelExpFrom, 1, usable_cores())
            : 1;
    std::vector<ExactReal> partials;
    for (std::size_t k = 0; k < parts; ++k) {
      partials.emplace_back(wide);
      mpfr_set_zero(partials.back().get(), 1);
    }
    std::vector<std::thread> workers;
    for (std::size_t k = 1; k < parts; ++k)
      workers.emplace_back([&, k] {
        free_mpfr_caches_at_thread_exit();
        exps(v.size() * k / parts, v.size() * (k + 1) / parts, partials[k]);
      });
    exps(0, v.size() / parts, partials[0]);
    for (auto& w : workers) w.join();
    std::vector<mpfr_ptr> ptrs;
    for (auto& part : partials) ptrs.push_back(part.get());
    ExactReal s(p), l(p);
    mpfr_sum(s.get(), ptrs.data(), ptrs.size(), MPFR_RNDN);
    mpfr_log(l.get(), s.get(), MPFR_RNDN);
    Approximation a{ExactReal(p)};
    mpfr_add(a.value.get(), mx.get(), l.get(), MPFR_RNDN);
    mpfr_exp_t top = 3;
    if (mpfr_regular_p(l.get())) top = std::max(top, exponent(l));
    if (mpfr_regular_p(a.value.get())) top = std::max(top, exponent(a.value));
    a.error_exponent = top - p + 2;
    return a;
  };
  return from_ziv(ziv_round(evaluate, out.dtype, out.sat), out);
}

namespace {

void check_affine(std::size_t n, std::span<const double> gamma, std::span<const double> beta) {
  if ((!gamma.empty() && gamma.size() != n) || (!beta.empty() && beta.size() != n))
    throw std::invalid_argument("norm reference: gamma and beta need one value per element");
}

// y_i = a_i / sqrt(w / c) + b_i for every element, each by Ziv's loop; the
// root is shared between the elements at each precision. a_i is exact.
// Errors: the root has a relative error below 2^(1-p), the quotient adds
// 2^-p: z = a/r is within 2^(EXP(z) - p + 2); the addition of b adds half an
// ulp of y.
std::vector<Reference> scaled_by_root(const std::vector<ExactReal>& a, const ExactReal& w,
                                      const ExactReal& c, std::span<const double> beta, OutputFormat out) {
  std::vector<Reference> refs;
  refs.reserve(a.size());
  std::vector<std::pair<mpfr_prec_t, Approximation>> roots;  // the root at each precision used so far
  auto root_at = [&](mpfr_prec_t p) -> const Approximation& {
    for (auto& [q, r] : roots)
      if (q == p) return r;
    roots.emplace_back(p, root_of_quotient(w, c, p));
    return roots.back().second;
  };
  for (std::size_t i = 0; i < a.size(); ++i) {
    const ExactReal b = ExactReal::from_double(beta.empty() ? 0.0 : beta[i]);
    auto evaluate = [&](mpfr_prec_t p) {
      const Approximation& r = root_at(p);
      ExactReal z(p);
      const int tz = mpfr_div(z.get(), a[i].get(), r.value.get(), MPFR_RNDN);
      Approximation y{ExactReal(p)};
      // rmsnorm has no beta: y = z keeps the sign of a -0 (z + 0 would not).
      const int ty = beta.empty() ? mpfr_set(y.value.get(), z.get(), MPFR_RNDN)
                                  : mpfr_add(y.value.get(), z.get(), b.get(), MPFR_RNDN);
      y.exact = r.exact && tz == 0 && ty == 0;
      mpfr_exp_t top = mpfr_regular_p(z.get()) ? exponent(z) + 2 : mpfr_get_emin();
      if (mpfr_regular_p(y.value.get())) top = std::max(top, exponent(y.value));
      y.error_exponent = top - p + 1;
      if (mpfr_zero_p(z.get())) y.exact = ty == 0;  // a_i = 0: y = b
      return y;
    };
    refs.push_back(from_ziv(ziv_round(evaluate, out.dtype, out.sat), out));
  }
  return refs;
}

// Every element NaN, or IEEE's a_i / Inf, when the row's statistics are not
// finite (or the root is 0, as for a row of zeros with eps = 0: 0/0).
std::vector<Reference> degenerate_norm(const std::vector<ExactReal>& a, const ExactReal& root_arg,
                                       std::span<const double> beta, OutputFormat out) {
  std::vector<Reference> refs;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ExactReal r(2), y(2);
    mpfr_sqrt(r.get(), root_arg.get(), MPFR_RNDN);
    ExactReal q(64);
    mpfr_div(q.get(), a[i].get(), r.get(), MPFR_RNDN);  // finite / Inf = 0; 0 / 0 = NaN
    mpfr_set_prec(y.get(), 64);
    if (beta.empty()) mpfr_set(y.get(), q.get(), MPFR_RNDN);
    else mpfr_add_d(y.get(), q.get(), beta[i], MPFR_RNDN);
    refs.push_back(exact_reference(y, out));
  }
  return refs;
}

}  // namespace

std::vector<Reference> rmsnorm_reference(const TypedArray& x, std::span<const double> gamma, double eps,
                                         OutputFormat out) {
  const std::size_t n = x.size();
  check_affine(n, gamma, {});
  if (n == 0) return {};
  std::vector<ExactReal> a;  // x_i * gamma_i, exactly
  for (std::size_t i = 0; i < n; ++i)
    a.push_back(exact_mul(ExactReal::from_double(widened(x, i)),
                          ExactReal::from_double(gamma.empty() ? 1.0 : gamma[i])));
  const ExactReal t = shifted_sumsq(exact_sumsq(x), n, eps);
  if (!mpfr_regular_p(t.get()) || mpfr_sgn(t.get()) < 0) return degenerate_norm(a, t, {}, out);
  return scaled_by_root(a, t, exact_from_int(n), {}, out);
}

std::vector<Reference> layernorm_reference(const TypedArray& x, std::span<const double> gamma,
                                           std::span<const double> beta, double eps, OutputFormat out) {
  const std::size_t n = x.size();
  check_affine(n, gamma, beta);
  if (n == 0) return {};
  const ExactReal s = exact_sum(x), q = exact_sumsq(x);
  const ExactReal count = exact_from_int(n);
  std::vector<ExactReal> a;  // (n x_i - S) * gamma_i, exactly
  for (std::size_t i = 0; i < n; ++i) {
    const ExactReal d = exact_sub(exact_mul(count, ExactReal::from_double(widened(x, i))), s);
    a.push_back(exact_mul(d, ExactReal::from_double(gamma.empty() ? 1.0 : gamma[i])));
  }
  // n^2 (var + eps) = n Q - S^2 + n^2 eps
  ExactReal w = special(kNaN);
  if (mpfr_number_p(s.get()) && mpfr_number_p(q.get()))
    w = exact_add(exact_variance_numerator(s, q, n),
                  exact_mul(exact_mul(count, count), ExactReal::from_double(eps)));
  if (!mpfr_regular_p(w.get()) || mpfr_sgn(w.get()) < 0) return degenerate_norm(a, w, beta, out);
  return scaled_by_root(a, w, exact_from_int(1), beta, out);
}

std::int64_t line_count(std::int64_t rows, std::int64_t cols, Along along) {
  return along == Along::inner ? rows : cols;
}

TypedArray line_of(const TypedArray& x, std::int64_t rows, std::int64_t cols, Along along, std::int64_t j) {
  if (rows < 0 || cols < 0 || static_cast<std::size_t>(rows * cols) != x.size())
    throw std::invalid_argument("row-wise reference: the array does not have rows * cols values");
  if (j < 0 || j >= line_count(rows, cols, along))
    throw std::out_of_range("row-wise reference: no such row or column");
  return visit_typed(x, [&](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    std::vector<T> line;
    if (along == Along::inner) {
      line.assign(v.begin() + j * cols, v.begin() + (j + 1) * cols);
    } else {
      line.reserve(static_cast<std::size_t>(rows));
      for (std::int64_t i = 0; i < rows; ++i) line.push_back(v[static_cast<std::size_t>(i * cols + j)]);
    }
    return TypedArray(std::move(line));
  });
}

}  // namespace ulpscope
