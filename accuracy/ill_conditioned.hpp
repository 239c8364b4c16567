#pragma once
// Ill-conditioned sums and dot products with a chosen condition number, after
// Ogita, Rump, Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6),
// 2005, Algorithm 6.1 (GenDot): half the values random with exponents spread
// over half the range, then each further value chosen against the exact sum so
// far so that the sum shrinks step by step (for a dot product: each y_i
// against x_i as it is); the last value is chosen to make
// sum|x| / |sum x| the asked number. Every value is rounded to the input
// format as it is chosen; the sums are kept exactly (MPFR) and the condition
// actually reached is computed exactly at the end.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/dtype.hpp"

namespace ulpscope {

// x alone is an ill-conditioned sum, whether or not y is asked for; y is then
// chosen, with x as it is, so that the dot product x.y has the same condition.
struct IllConditionedInput {
  std::vector<double> x, y;            // y only for a dot product; values of the input format
  std::optional<double> achieved;      // sum|x| / |sum x|, exactly; nullopt for n = 0
  std::optional<double> achieved_dot;  // sum|x_i y_i| / |sum x_i y_i|, exactly, when y was asked for
  std::string note;  // "condition reached 9.6e15 (asked 1e16); dot x.y reached 1.1e16", and why it fell short
};

IllConditionedInput generate_ill_conditioned(double condition, Dtype dtype, std::int64_t n, std::uint64_t seed,
                                             bool dot);

// sum|x_i| / |sum x_i| and sum|x_i y_i| / |sum x_i y_i|, computed exactly and
// rounded once: +Inf for an exactly zero sum of nonzero terms, nullopt for an
// empty input, a zero input, or a non-finite value.
std::optional<double> exact_condition_sum(std::span<const double> x);
std::optional<double> exact_condition_dot(std::span<const double> x, std::span<const double> y);

}  // namespace ulpscope
