#pragma once
// docs/spec.md, "Metrics": ULP error, correct rounding, relative error, condition
// numbers and reproducibility counts of kernel results against exact
// references. The a-priori error bounds and the bound ratio are in
// error_bound.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/dtype.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope {

// ulp_F(r) = 2^(max(e, emin) - p + 1), e = floor(log2|r|), for the exact r;
// ulp_F(0) is the smallest subnormal (docs/spec.md, "Metrics"). Returned as the
// exponent of that power of two. r must be finite.
int ulp_exponent(const ExactReal& r, Dtype out);

// |y - r| / ulp_F(r), with |y - r| computed in MPFR at 128 bits, so a relative
// difference of 1e-30 is still measured. Both NaN, or the same infinity: 0.
// Overflow is scored as IEEE 754 rounds (2019, sec. 7.4): where the finite r
// rounds past the largest finite value, RN_F(r) under `sat` (an infinity, NaN
// for fp8_e4m3 without saturation, the largest value when saturated) is the
// correct result, 0 ULPs. Underflow needs no rule: a zero is at most half
// ulp_F(0) from an r that rounds to it. nullopt where the result or the
// reference is not finite and they differ, or where r overflows and y is not
// its rounding, with the reason in *note ("NaN result for a finite
// reference", "finite result where the correctly rounded one is +inf (its
// exact value overflows fp16)", "finite result for an infinite reference", ...).
std::optional<double> ulp_error(double y, const ExactReal& r, Dtype out, std::string* note = nullptr,
                                Saturation sat = Saturation::nosat);
// ulp_error always through MPFR, the definition written out; ulp_error
// takes a path in double arithmetic where that gives the same number (most
// outputs), and the tests hold the two together.
std::optional<double> ulp_error_through_mpfr(double y, const ExactReal& r, Dtype out, std::string* note = nullptr,
                                             Saturation sat = Saturation::nosat);

// The worst of several ULP errors. A missing one (a non-finite mismatch) is
// worst of all: value becomes nullopt for good and note says where and why.
struct WorstOutputError {
  std::optional<double> value;
  std::string note;
  void add(std::optional<double> e, const std::string& why, const std::string& where);

 private:
  bool missing_ = false;
};

// docs/spec.md, "Row statistics and the accumulator's own error": the
// accumulator's own error max_i e_i / s_i, from the ULP errors e_i of a
// kernel's outputs and their conditioning scales s_i >= 1
// (accuracy/ideal_kernel.hpp, conditioning_scales). nullopt where some e_i
// is (a non-finite mismatch), or there are no outputs.
std::optional<double> accumulator_ulp_error(const std::vector<std::optional<double>>& errors,
                                            const std::vector<double>& scales);

// Whether y is RN_F(r), bit for bit: -0 differs from +0, any NaN equals any NaN.
bool correctly_rounded(double y, double rn_r);

// |v - r| / |r| for the accumulator's own value v (before its final rounding).
// r = 0: 0 when v = 0, else nullopt (no relative error). Non-finite: 0 when
// both are NaN or the same infinity, else nullopt.
std::optional<double> rel_error(double v, const ExactReal& r);

// Condition number of a sum, sum|t_i| / |sum t_i| (Higham 2002, sec. 4.2: the
// relative error bound of any summation is the absolute bound over |sum|);
// of a dot product, with t_i = x_i y_i (Higham 2002, sec. 3.1). +Inf when the
// sum is exactly zero and sum|t_i| > 0; nullopt when sum|t_i| = 0 (no terms,
// or all zero) or either is not finite.
std::optional<double> condition_sum(const ExactReal& sum_abs, const ExactReal& sum);
inline std::optional<double> condition_dot(const ExactReal& sum_abs_products, const ExactReal& dot) {
  return condition_sum(sum_abs_products, dot);
}

// Condition number of the variance, kappa = sqrt(1 + n mean^2 / S) with
// S = sum (x_i - mean)^2 (Chan, Golub, LeVeque, "Algorithms for computing the
// sample variance: analysis and recommendations", Amer. Statist. 37(3), 1983,
// sec. 3), from the exact sum x and sum x^2: kappa^2 = n sum x^2 / (n sum x^2 -
// (sum x)^2). +Inf when S = 0 but sum x^2 > 0 (all values equal); nullopt for
// n = 0, all zeros, or non-finite sums.
std::optional<double> condition_variance(const ExactReal& sum, const ExactReal& sum_squares, std::int64_t n);

// S = sum (x_i - mean)^2 = sum x^2 - (sum x)^2 / n, exactly (then rounded to
// double): the ingredient of the variance bounds. nullopt for n = 0 or non-finite sums.
std::optional<double> sum_squared_deviations(const ExactReal& sum, const ExactReal& sum_squares, std::int64_t n);

// Reproducibility: how many different results among runs (each run one
// vector of outputs), comparing bits: NaN payloads and signs are not told
// apart, -0 and +0 are. 0 for no runs.
int distinct_results(const std::vector<std::vector<double>>& runs);
int distinct_results(const std::vector<double>& runs);  // one output per run
// A 64-bit digest of one run's outputs under the same equality (its bits,
// NaNs alike), so that large runs are compared without being kept: two
// different results share a digest with probability about 2^-64. The same
// digest as the device computes (kernels/output_digest.hpp).
std::uint64_t results_digest(const std::vector<double>& outputs);
// How many different digests (0 for none).
int distinct_digests(std::vector<std::uint64_t> digests);

}  // namespace ulpscope
