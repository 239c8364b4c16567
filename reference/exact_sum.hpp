#pragma once
// Exact sums of the input formats: sum x, sum |x|, sum x^2, sum x*y,
// sum |x*y| and n*sum(x^2) - (sum x)^2, with no rounding at all (docs/spec.md,
// "References"). The result is an ExactReal holding every bit; NaN and the
// infinities follow IEEE 754 (NaN, or +Inf with -Inf, gives NaN), and an
// exact zero is -0 only when every term was -0.
//
// Same bits whatever the order of the input: the accumulation is exact.
#include <span>

#include "formats/typed_array.hpp"
#include "reference/exact_accumulator.hpp"
#include "reference/exact_real.hpp"

namespace ulpscope {

// Which terms are summed.
enum class Terms : std::uint8_t {
  value,              // x_i
  magnitude,          // |x_i|       (the condition number of a sum: sum|x| / |sum x|)
  square,             // x_i^2
  product,            // x_i * y_i
  product_magnitude,  // |x_i * y_i| (the condition number of a dot product)
};

// Adds the terms of x (and y, for the product kinds; same length) to acc.
// Every term is exact in double (products of two input values included), so
// this is exact. Arrays of 2^21 elements or more are split over up to
// max_threads threads (the result is the same bits: nothing is rounded).
// T is float, Fp16, Bf16, Fp8E4M3 or Fp8E5M2.
inline constexpr unsigned kDefaultReferenceThreads = 2;
template <class T>
void accumulate(Terms terms, std::span<const T> x, std::span<const T> y, ExactAccumulator& acc,
                unsigned max_threads = kDefaultReferenceThreads);

// The exact sum of the terms. y is needed by the product kinds only; it must
// have x's format and length (std::invalid_argument otherwise).
ExactReal exact_reduce(Terms terms, const TypedArray& x, const TypedArray* y = nullptr);

inline ExactReal exact_sum(const TypedArray& x) { return exact_reduce(Terms::value, x); }
inline ExactReal exact_abs_sum(const TypedArray& x) { return exact_reduce(Terms::magnitude, x); }
inline ExactReal exact_sumsq(const TypedArray& x) { return exact_reduce(Terms::square, x); }
inline ExactReal exact_dot(const TypedArray& x, const TypedArray& y) {
  return exact_reduce(Terms::product, x, &y);
}
inline ExactReal exact_abs_dot(const TypedArray& x, const TypedArray& y) {
  return exact_reduce(Terms::product_magnitude, x, &y);
}

// n * sum(x^2) - (sum x)^2, exactly: n^2 times the population variance
// (Chan, Golub, LeVeque 1983, eq. 1.2b, without its cancellation since
// nothing is rounded).
ExactReal exact_variance_numerator(const TypedArray& x);
ExactReal exact_variance_numerator(const ExactReal& sum, const ExactReal& sumsq, std::size_t n);

}  // namespace ulpscope
