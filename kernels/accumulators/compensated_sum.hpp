#pragma once
// kahan: compensated summation in fp32 in Neumaier's form, which also
// compensates when the new term is larger than the running sum (Neumaier 1974;
// Higham 2002, section 4.3). Threads merge by the same step applied to their
// sums, and add their compensations (the two-sum of the sums' error included).
#include <type_traits>

#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

// ExactProducts: the product of two input values is exact in float (fp16 and
// fp8 inputs: ExactLayout's float_products), so add_product can fuse it into
// TwoSum (Knuth 1969), whose error is the same exact value as the ordered
// Fast2Sum's, as two FMAs: one instruction a term fewer than a rounded
// product and add (the fp8 sums of squares are issue-bound on the H100).
template <bool ExactProducts>
struct KahanSumOf {
  using term_t = float;
  using value_t = float;
  struct State {
    float s, c;
  };
  using Partial = State;
  ULPSCOPE_HD static State start() { return {-0.0f, -0.0f}; }
  ULPSCOPE_HD static Partial identity() { return {-0.0f, -0.0f}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static term_t product(float x, float y) { return rn::mul(x, y); }
  // The rounding error of s + t, exact when no overflow (Fast2Sum on the
  // ordered operands; Dekker 1971).
  ULPSCOPE_HD static float sum_error(float s, float t, float sum) {
    return rn::abs(s) >= rn::abs(t) ? rn::add(rn::sub(s, sum), t) : rn::add(rn::sub(t, sum), s);
  }
  ULPSCOPE_HD static void add(State& st, term_t t) {
    const float sum = rn::add(st.s, t);
    st.c = rn::add(st.c, sum_error(st.s, t, sum));
    st.s = sum;
  }
  // x * y for an exact product: s + xy = sum + e exactly (TwoSum with b = xy;
  // xy - bp is fma(x, y, -bp), rounded once as rn::sub(xy, bp) would be).
  template <bool E = ExactProducts, std::enable_if_t<E, int> = 0>
  ULPSCOPE_HD static void add_product(State& st, float x, float y) {
    const float sum = rn::fma(x, y, st.s);
    const float bp = rn::sub(sum, st.s);
    st.c = rn::add(st.c, rn::add(rn::sub(st.s, rn::sub(sum, bp)), rn::fma(x, y, -bp)));
    st.s = sum;
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    const float sum = rn::add(a.s, b.s);
    a.c = rn::add(rn::add(a.c, b.c), sum_error(a.s, b.s, sum));
    a.s = sum;
  }
  ULPSCOPE_HD static value_t total(const Partial& p) { return rn::add(p.s, p.c); }
};

using KahanSum = KahanSumOf<false>;

}  // namespace ulpscope
