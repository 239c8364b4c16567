#pragma once
// welford: running mean and sum of squared deviations in fp32 by Welford's
// update (Welford 1962), threads merged by Chan, Golub and LeVeque's formula
// (1979; Chan et al. 1983, eq. 2.1). Counts are exact integers, rounded to
// fp32 where they enter the arithmetic.
#include <cstdint>

#include "formats/host_device.hpp"
#include "kernels/quotient_by_count.hpp"
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
  // W values at once (W a multiple of 4), the same result as W adds, which
  // is what the host runs. On the device the quotients d / n come from the
  // table of reciprocals (quotient_by_count.hpp) instead of a division (a
  // reciprocal on the MUFU pipe, its refinement and a range check for every
  // element), when every count of the group is in the table and every
  // deviation is at least kQuotientMin in magnitude; the mean ends finite
  // only if every deviation was finite. Otherwise the group is added again by
  // add from the state before it (zero deviations, as in constant data,
  // included: the identity holds for them, but one minimum is cheaper).
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x) {
    static_assert(W % 4 == 0, "groups of float4 reciprocals");
#if defined(__CUDA_ARCH__)
    if (st.n % 4 == 0 && st.n + W <= kCountReciprocals) {
      const auto* y4 = reinterpret_cast<const float4*>(kDeviceCountReciprocals.reciprocal + st.n);
      float n = __int2float_rn(static_cast<int>(st.n));
      float mean = st.mean, m2 = st.m2, least = __int_as_float(0x7f800000);
#pragma unroll
      for (int j = 0; j < W; j += 4) {
        const float4 y4j = __ldg(y4 + j / 4);
        const float y[4] = {y4j.x, y4j.y, y4j.z, y4j.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          n = rn::add(n, 1.0f);
          const float d = rn::sub(x[j + k], mean);
          least = fminf(least, rn::abs(d));
          mean = rn::add(mean, quotient_by_count(d, n, y[k]));
          m2 = rn::add(m2, rn::mul(d, rn::sub(x[j + k], mean)));
        }
      }
      if (least >= kQuotientMin && rn::abs(mean) < __int_as_float(0x7f800000)) {
        st = {st.n + W, mean, m2};
        return;
      }
    }
#endif
    for (int j = 0; j < W; ++j) add(st, x[j]);
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
