#pragma once
// The reference value of every op of docs/spec.md ("Ops"), correctly rounded to
// the output format. Sums, dot products and sums of squares are exact
// (exact_sum.hpp); the rest is one division, square root, exp or log away
// from exact values and is evaluated with Ziv's strategy (ziv.hpp).
//
// Definitions (what production kernels compute, as exact real functions):
//   mean      S / n                                 (S = sum x, Q = sum x^2)
//   norm2     sqrt(Q)
//   rms       sqrt(Q / n + eps)                     eps inside the root
//   mean_var  mean S / n, population variance (n Q - S^2) / n^2
//   logsumexp log(sum exp(x_i))                     -inf terms add nothing
//   rmsnorm   y_i = x_i / sqrt(Q / n + eps) * gamma_i
//   layernorm y_i = (x_i - S / n) / sqrt(var + eps) * gamma_i + beta_i
//             = (n x_i - S) * gamma_i / sqrt(n Q - S^2 + n^2 eps) + beta_i
//   max, min  IEEE 754-2019 maximum / minimum: NaN wins, -0 < +0
//   amax      max |x_i|
// eps, gamma and beta are taken at their exact double values (a kernel
// that uses 1e-6f passes double(1e-6f)).
// Special values: NaN anywhere gives NaN; +Inf with -Inf in a sum gives NaN;
// an empty array gives the sum's identity (sum, dot, sumsq, norm2: +0), NaN
// where a mean of nothing is needed (mean, rms, mean_var), -Inf (max,
// logsumexp), +Inf (min) and +0 (amax).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/dtype.hpp"
#include "formats/typed_array.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope {

struct Reference {
  // The exact value (sums: exactly; nonlinear ops: at the precision that
  // certified the rounding, at least 128 bits, relative error below 2^-140;
  // exact_decimal then has 40 correctly rounded digits).
  ExactReal exact;
  bool exact_is_exact = true;
  double rounded = 0;         // RN_out(exact), NaN and Inf as IEEE
  // docs/spec.md: >= 40 significant digits, or exact when shorter. Empty in
  // a scan's references (one an element, of which a cell reports one):
  // decimal_of writes it when it is asked for.
  std::string exact_decimal;
  mpfr_prec_t working_precision = 0;  // Ziv's last precision; 0 when no rounding was needed
};

// r.exact_decimal, or the exact value's decimal where it was left empty.
std::string decimal_of(const Reference& r);

// Where the reference is rounded to.
struct OutputFormat {
  Dtype dtype = Dtype::fp32;
  Saturation sat = Saturation::nosat;  // fp8 outputs only
};

// The Reference of an exact value: its rounding to out, and no decimal (the
// many references of a scan; decimal_of writes one when it is asked for).
Reference rounded_reference(ExactReal exact, OutputFormat out);

Reference sum_reference(const TypedArray& x, OutputFormat out);
Reference mean_reference(const TypedArray& x, OutputFormat out);
Reference dot_reference(const TypedArray& x, const TypedArray& y, OutputFormat out);
Reference sumsq_reference(const TypedArray& x, OutputFormat out);
Reference norm2_reference(const TypedArray& x, OutputFormat out);
Reference rms_reference(const TypedArray& x, double eps, OutputFormat out);
struct MeanVarReference {
  Reference mean, variance;
};
MeanVarReference mean_var_reference(const TypedArray& x, OutputFormat out);
Reference max_reference(const TypedArray& x, OutputFormat out);
Reference min_reference(const TypedArray& x, OutputFormat out);
Reference amax_reference(const TypedArray& x, OutputFormat out);
Reference logsumexp_reference(const TypedArray& x, OutputFormat out);
// One Reference per element; gamma and beta have x's length or are empty
// (gamma = 1, beta = 0).
std::vector<Reference> rmsnorm_reference(const TypedArray& x, std::span<const double> gamma, double eps,
                                         OutputFormat out);
std::vector<Reference> layernorm_reference(const TypedArray& x, std::span<const double> gamma,
                                           std::span<const double> beta, double eps, OutputFormat out);

// A Reference for a value that needs no rounding beyond RN_out (an exact sum).
Reference exact_reference(ExactReal exact, OutputFormat out);

// Row-wise ops on [rows, cols] (row-major): the values one reduction sees.
// kernels/reduction.hpp's Axis::inner and Axis::outer; reference/ does not
// depend on kernels/.
enum class Along : std::uint8_t {
  inner,  // reduction j is row j (cols values)
  outer,  // reduction j is column j (rows values, stride cols)
};
std::int64_t line_count(std::int64_t rows, std::int64_t cols, Along along);
TypedArray line_of(const TypedArray& x, std::int64_t rows, std::int64_t cols, Along along, std::int64_t j);

// f(line) for every reduction of x, in order: e.g.
//   for_each_line(x, rows, cols, Along::inner, [&](const TypedArray& row) { return sum_reference(row, out); })
template <class F>
auto for_each_line(const TypedArray& x, std::int64_t rows, std::int64_t cols, Along along, F&& f) {
  std::vector<decltype(f(x))> out;
  const std::int64_t lines = line_count(rows, cols, along);
  out.reserve(static_cast<std::size_t>(lines));
  for (std::int64_t j = 0; j < lines; ++j) out.push_back(f(line_of(x, rows, cols, along, j)));
  return out;
}

}  // namespace ulpscope
