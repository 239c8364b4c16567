#include "reference/exact_prefix.hpp"

#include "reference/exact_accumulator.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope {
namespace {

// The accumulator's read-out carries every bit from 2^-1074 up; the prefix
// keeps only the bits its value has (exactly: mpfr_min_prec counts them).
ExactReal trimmed(ExactReal v) {
  if (mpfr_regular_p(v.get())) mpfr_prec_round(v.get(), std::max<mpfr_prec_t>(2, mpfr_min_prec(v.get())), MPFR_RNDN);
  return v;
}

// f(exact prefix i) for every i, in index order.
template <class F>
void for_each_prefix(const TypedArray& x, F&& f) {
  ExactAccumulator acc;
  visit_typed(x, [&](const auto& v) {
    for (const auto& value : v) {
      acc.add(to_double(value));  // exact: every input value is a double
      f(trimmed(acc.value()));
    }
  });
}

}  // namespace

std::vector<Reference> cumsum_reference(const TypedArray& x, OutputFormat out) {
  std::vector<Reference> r;
  r.reserve(x.size());
  for_each_prefix(x, [&](ExactReal prefix) { r.push_back(exact_reference(std::move(prefix), out)); });
  return r;
}

std::vector<double> cumsum_rounded(const TypedArray& x, OutputFormat out) {
  std::vector<double> r;
  r.reserve(x.size());
  for_each_prefix(x, [&](const ExactReal& prefix) { r.push_back(round_to_format(prefix, out.dtype, out.sat)); });
  return r;
}

}  // namespace ulpscope
