#pragma once
// max, min and amax: selection rounds nothing, so every order gives the same
// value. NaN anywhere gives NaN (unlike fmaxf, which drops it: docs/spec.md,
// "Ops"); between equal zeros max keeps +0 and min keeps -0 (IEEE 754-2019
// maximum and minimum, rounded_arith.hpp), so the result does not depend on
// the order either, nor does which NaN comes out (the canonical one).
#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

enum class Extremum { max, min, amax };

template <Extremum K>
struct ExtremumOf {
  using term_t = float;
  using value_t = float;
  struct State {
    float v;
  };
  using Partial = State;
  ULPSCOPE_HD static float empty() {
    const float inf = static_cast<float>(detail::double_from_bits(0x7FF0000000000000ull));
    return K == Extremum::max ? -inf : (K == Extremum::min ? inf : 0.0f);
  }
  ULPSCOPE_HD static State start() { return {empty()}; }
  ULPSCOPE_HD static Partial identity() { return {empty()}; }
  ULPSCOPE_HD static term_t term(float x) { return K == Extremum::amax ? rn::abs(x) : x; }
  ULPSCOPE_HD static float select(float a, float b) {
    return K == Extremum::min ? rn::minimum(a, b) : rn::maximum(a, b);
  }
  ULPSCOPE_HD static void add(State& st, term_t t) { st.v = select(st.v, t); }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { a.v = select(a.v, b.v); }
  ULPSCOPE_HD static value_t total(const Partial& p) { return p.v; }
};

}  // namespace ulpscope
