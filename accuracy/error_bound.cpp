#include "accuracy/error_bound.hpp"

#include <algorithm>
#include <cmath>

namespace ulpscope {
namespace {

struct Arithmetic {
  double u;    // unit roundoff 2^-p
  double eta;  // half the smallest subnormal: the absolute error of a product that underflows
};

Arithmetic arithmetic_of(Dtype d) {
  const FormatInfo& f = format_info(d);
  return {std::ldexp(1.0, -f.precision), f.min_subnormal / 2};
}

// Where each accumulator rounds (kernels/accumulator.hpp, kAccumulators).
Arithmetic accumulator_arithmetic(Accumulator a, Dtype in) {
  switch (facts_of(a).rounds_in) {
    case RoundsIn::input_format: return arithmetic_of(in);
    case RoundsIn::fp32: return arithmetic_of(Dtype::fp32);
    case RoundsIn::fp64: return arithmetic_of(Dtype::fp64);
    case RoundsIn::nowhere: return {0.0, 0.0};
  }
  return arithmetic_of(in);
}

// gamma_k = k u / (1 - k u) (Higham 2002, Lemma 3.1); nullopt when k u >= 1
// and the bound says nothing.
std::optional<double> gamma(double k, double u) {
  if (k * u >= 1.0) return std::nullopt;
  return k * u / (1.0 - k * u);
}

// |s_hat - sum t| for a sum of terms t with sum|t| = A and |sum t| = S, each
// term going through at most d roundings on its way to the result.
std::optional<double> summation_error(Accumulator acc, const Arithmetic& ar, double d, double A, double S) {
  if (acc == Accumulator::exact) return 0.0;
  const auto gd = gamma(d, ar.u);
  if (!gd) return std::nullopt;
  if (acc == Accumulator::kahan) {
    // Neumaier's compensated summation, the form kernels/accumulators uses:
    // every addition's error q_k is formed exactly and added into c. With
    // sum x = s + sum q_k exactly, |c - sum q_k| <= gamma_2d sum|q_k| (c's own
    // tree is at most twice as deep, merges adding two compensations), and
    // sum|q_k| <= u sum_k |s_k| <= gamma_d (1 + gamma_d) A; the final s + c
    // rounds once. So |E| <= u S + (1 + u) gamma_2d gamma_d (1 + gamma_d) A:
    // Ogita, Rump, Oishi 2005, Prop. 4.5 (Sum2: u|s| + gamma_{n-1}^2 sum|p_i|)
    // with its argument carried to a tree of depth d. The leading term is
    // u S, not Kahan's 2u A (Higham 2002, sec. 4.3, eq. (4.8)), because the
    // compensation also covers terms larger than the running sum.
    const auto g2d = gamma(2 * d, ar.u);
    if (!g2d) return std::nullopt;
    return ar.u * S + (1 + ar.u) * *g2d * *gd * (1 + *gd) * A;
  }
  // Recursive summation: |E| <= gamma_{n-1} sum|x_i| (Higham 2002, sec. 4.2,
  // eq. (4.4)); any order in which no term passes through more than d
  // additions: gamma_d sum|x_i| (ibid.; pairwise summation, d = ceil(log2 n),
  // eq. (4.6)).
  return *gd * A;
}

// Products x_i y_i rounded once each in the accumulator's arithmetic:
// |fl(xy) - xy| <= u |xy| + eta (Higham 2002, sec. 2.1, the model with
// gradual underflow), so the terms t_hat summed have sum|t_hat| <= A (1 + u)
// + n eta and the products cost P = u A + n eta. Exact accumulators take
// products exactly.
struct ProductTerms {
  double P, A, S;
};
ProductTerms rounded_products(Accumulator acc, const Arithmetic& ar, double n, double A, double S) {
  if (acc == Accumulator::exact) return {0.0, A, S};
  const double P = ar.u * A + n * ar.eta;
  return {P, A * (1 + ar.u) + n * ar.eta, S + P};
}

// The division of a mean, s_hat / n or s_hat * (1/n): at most two roundings,
// in fp32 or wider (value_t of every accumulator; the naive one may divide in
// its own, narrower format).
double division_u(Accumulator acc, const Arithmetic& ar) {
  return std::max(acc == Accumulator::exact ? 0.0 : ar.u, arithmetic_of(Dtype::fp32).u);
}

// |mean_hat - S/n| from the sum's error E: (E/n)(1 + gamma_2) + gamma_2 |S|/n + eta.
std::optional<double> mean_error(Accumulator acc, const Arithmetic& ar, double n, double S, double E) {
  const double ud = division_u(acc, ar);
  const auto g2 = gamma(2, ud);
  return (E / n) * (1 + *g2) + *g2 * std::abs(S) / n + arithmetic_of(Dtype::fp32).eta;
}

// The sum of squared deviations S of mean_var's variance.
std::optional<double> deviations_error(const BoundInputs& b, const Arithmetic& ar, double d) {
  const double n = double(b.n), S = std::max(b.sum_sq_dev, 0.0);
  // kappa S = sqrt(S^2 + n mean^2 S), finite where S = 0 (all values equal).
  const double kappa_S = std::sqrt(S * S + n * b.mean * b.mean * S);
  const auto g = gamma(d + 3, ar.u);
  if (!g) return std::nullopt;
  if (b.acc == Accumulator::two_pass) {
    // Two-pass: the mean m_hat = m + eps, then sum (x_i - m_hat)^2 with each
    // term rounded in the subtraction, the square and its at most d additions
    // (d + 2 <= d + 3 roundings). As sum (x_i - m) = 0, sum (x_i - m_hat)^2 =
    // S + n eps^2 exactly, so |S_hat - S| <= gamma_{d+3} (S + n eps^2) + n eps^2
    // + n eta (Higham 2002, sec. 1.9 and problem 1.10; Chan, Golub, LeVeque
    // 1983, sec. 4: relative error n u + n^2 kappa^2 u^2, whose second term is
    // the n eps^2 here).
    const auto sum_err = summation_error(Accumulator::fp32, ar, d, b.sum_abs, std::abs(b.sum));
    if (!sum_err) return std::nullopt;
    const auto eps = mean_error(b.acc, ar, n, b.sum, *sum_err);
    return *g * (S + n * *eps * *eps) + n * *eps * *eps + n * ar.eta;
  }
  // Welford's update with Chan's merge: Chan, Golub, LeVeque 1983, Table 1,
  // relative error of order n kappa u for the updating algorithm (log2(n)
  // kappa u pairwise). First order, our constants: the running mean's error
  // after k steps is at most about (k/2) u |mean| + 2u mean|x - mean|, and
  // each update's product carries twice it times |x_k - mean|; with
  // Cauchy-Schwarz that sums to d kappa u S + 4u S, and the accumulation of S
  // adds gamma_{d+3} S. Doubled for the second-order terms left out: this one
  // bound is first order, not rigorous.
  return 2 * (*g * S + d * ar.u * kappa_S + 4 * ar.u * S) + n * ar.eta;
}

}  // namespace

std::optional<double> error_bound(const BoundInputs& b) {
  if (b.n < 0 || b.depth < 0) return std::nullopt;
  const Arithmetic ar = accumulator_arithmetic(b.acc, b.in);
  const Arithmetic out = arithmetic_of(b.out);
  const double n = double(b.n), d = double(b.depth);
  const double A = b.sum_abs, S = std::abs(b.sum);
  // The final rounding to the output format of a value of magnitude at most v:
  // u_out v + eta_out, which is at least half an ulp of it, subnormals included.
  auto with_final_rounding = [&](std::optional<double> e, double exact_magnitude) -> std::optional<double> {
    if (!e) return std::nullopt;
    return *e + out.u * (exact_magnitude + *e) + out.eta;
  };
  switch (b.op) {
    case Op::sum: return with_final_rounding(summation_error(b.acc, ar, d, A, S), S);
    case Op::mean: {
      const auto e = summation_error(b.acc, ar, d, A, S);
      if (!e || n == 0) return std::nullopt;
      return with_final_rounding(mean_error(b.acc, ar, n, S, *e), S / n);
    }
    case Op::dot:
    case Op::sumsq: {
      const ProductTerms t = rounded_products(b.acc, ar, n, A, S);
      const auto e = summation_error(b.acc, ar, d, t.A, t.S);
      if (!e) return std::nullopt;
      return with_final_rounding(t.P + *e, S);
    }
    case Op::norm2: {
      // |sqrt(s_hat) - sqrt(S)| = |s_hat - S| / (sqrt(s_hat) + sqrt(S)) <=
      // min(E / sqrt(S), sqrt(E)), then the square root rounds once.
      const ProductTerms t = rounded_products(b.acc, ar, n, A, S);
      const auto e = summation_error(b.acc, ar, d, t.A, t.S);
      if (!e) return std::nullopt;
      const double E = t.P + *e, root = std::sqrt(S);
      const double arg = S > 0 ? std::min(E / root, std::sqrt(E)) : std::sqrt(E);
      return with_final_rounding(arg + division_u(b.acc, ar) * (root + arg), root);
    }
    case Op::max:
    case Op::min:
    case Op::amax:
      // A selection rounds nothing: only the final rounding (b.sum = the exact result).
      return with_final_rounding(0.0, S);
    case Op::mean_var: {
      if (b.component == 0) {
        // Two-pass sums, then divides. Welford's running mean m_k = m_{k-1} +
        // (x_k - m_{k-1})/k errs by at most about (k/2) u |mean| + 4u mean|x|
        // after k steps (each step's error shrinks by j/k by step k), within
        // gamma_{d+4} A / n: that one is first order.
        const double dm = b.acc == Accumulator::welford ? d + 4 : d;
        const auto e = summation_error(b.acc == Accumulator::exact ? b.acc : Accumulator::fp32, ar, dm, A, S);
        if (!e || n == 0) return std::nullopt;
        return with_final_rounding(mean_error(b.acc, ar, n, S, *e), S / n);
      }
      if (n == 0) return std::nullopt;
      const double var = std::max(b.sum_sq_dev, 0.0) / n;
      if (b.acc == Accumulator::exact) return with_final_rounding(0.0, var);
      if (b.acc != Accumulator::two_pass && b.acc != Accumulator::welford) return std::nullopt;
      const auto es = deviations_error(b, ar, d);
      if (!es) return std::nullopt;
      // The division by n: two roundings at most.
      const auto g2 = gamma(2, division_u(b.acc, ar));
      return with_final_rounding((*es / n) * (1 + *g2) + *g2 * var, var);
    }
    default: return std::nullopt;
  }
}

std::optional<double> bound_ratio(double result, const ExactReal& exact, const BoundInputs& b) {
  if (!std::isfinite(result) || exact.is_nan() || exact.is_inf()) return std::nullopt;
  const auto bound = error_bound(b);
  if (!bound) return std::nullopt;
  ExactReal diff(128);
  mpfr_d_sub(diff.get(), result, exact.get(), MPFR_RNDN);
  const double err = std::abs(diff.to_double());
  if (*bound == 0) return err == 0 ? 0.0 : HUGE_VAL;
  return err / *bound;
}

}  // namespace ulpscope
