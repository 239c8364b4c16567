#pragma once
// welford: running mean and sum of squared deviations in fp32 by Welford's
// update (Welford 1962), threads merged by Chan, Golub and LeVeque's formula
// (1979; Chan et al. 1983, eq. 2.1). Counts are exact integers, rounded to
// fp32 where they enter the arithmetic.
#include <cstdint>

#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

struct WelfordMoments {
  using term_t = float;
  using value_t = float;
  struct State {
    std::int64_t n;
    float mean, m2;
  };
  using Partial = State;
  ULPSCOPE_HD static State start() { return {0, 0.0f, 0.0f}; }
  ULPSCOPE_HD static Partial identity() { return start(); }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static void add(State& st, float x) {
    st.n += 1;
    const float d = rn::sub(x, st.mean);
    st.mean = rn::add(st.mean, rn::div(d, rn::to_float(st.n)));
    st.m2 = rn::add(st.m2, rn::mul(d, rn::sub(x, st.mean)));
  }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    if (b.n == 0) return;
    if (a.n == 0) {
      a = b;
      return;
    }
    const std::int64_t n = a.n + b.n;
    const float fn = rn::to_float(n);
    const float d = rn::sub(b.mean, a.mean);
    a.mean = rn::add(a.mean, rn::mul(d, rn::div(rn::to_float(b.n), fn)));
    const float w = rn::div(rn::mul(rn::to_float(a.n), rn::to_float(b.n)), fn);
    a.m2 = rn::add(rn::add(a.m2, b.m2), rn::mul(rn::mul(d, d), w));
    a.n = n;
  }
};

}  // namespace ulpscope
