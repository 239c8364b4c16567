// exp (of x <= 0) and log of kernels/elementary.hpp against MPFR: their error
// in ulps over a sweep of each function's domain, special values exact.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <limits>

#include "kernels/elementary.hpp"
#include "model_test_support.hpp"

namespace ulpscope {
namespace {

template <class T>
double ulps(T got, double x, int (*f)(mpfr_t, const mpfr_t, mpfr_rnd_t)) {
  mpfr_t a;
  mpfr_init2(a, 200);
  mpfr_set_d(a, x, MPFR_RNDN);
  f(a, a, MPFR_RNDN);
  const double want = test::round_mpfr_to(a, sizeof(T) == 4 ? Dtype::fp32 : Dtype::fp64);
  mpfr_sub_d(a, a, double(got), MPFR_RNDN);
  const double err = std::fabs(mpfr_get_d(a, MPFR_RNDN));
  mpfr_clear(a);
  const double u = ulp_in(want, sizeof(T) == 4 ? Dtype::fp32 : Dtype::fp64);
  return err / u;
}

template <class T>
void sweep(T lo, T hi, int steps, bool is_exp, double max_ulps) {
  double worst = 0;
  for (int i = 0; i <= steps; ++i) {
    const T x = T(lo + (hi - lo) * (double(i) / steps));
    const T y = is_exp ? elementary::exp_nonpositive(x) : elementary::log(x);
    const double e = ulps(y, double(x), is_exp ? mpfr_exp : mpfr_log);
    worst = std::max(worst, e);
  }
  EXPECT_LT(worst, max_ulps) << (is_exp ? "exp" : "log") << " over [" << lo << ", " << hi << "]";
}

TEST(Elementary, ExpAndLogWithinTheirUlps) {
  // exp: degree-6 (fp32) and degree-12 (fp64) polynomials good to 2^-26.5 and
  // 2^-56.5, evaluated by Horner's rule in the format: about an ulp of rounding.
  sweep<float>(-87.0f, 0.0f, 40000, true, 1.5);
  sweep<float>(-0.5f, 0.0f, 20000, true, 1.5);  // |r| < ln(2)/2 around k = 0 and 1
  sweep<float>(-87.0f, -80.0f, 20000, true, 1.5);  // near the clamp: 2^k near the smallest normal
  sweep<double>(-708.0, -700.0, 20000, true, 1.5);
  sweep<double>(-708.0, 0.0, 40000, true, 1.5);
  sweep<double>(-0.5, 0.0, 20000, true, 1.5);
  sweep<float>(1e-30f, 100.0f, 20000, false, 4.0);
  sweep<float>(0.5f, 2.0f, 20000, false, 4.0);
  sweep<double>(1e-300, 1e10, 20000, false, 4.0);
  sweep<double>(0.5, 2.0, 20000, false, 4.0);
}

TEST(Elementary, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  // e^0 is exactly 1 (a maximum's own term); below the clamp, the clamp's value.
  EXPECT_EQ(elementary::exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(elementary::exp_nonpositive(-0.0f), 1.0f);
  EXPECT_EQ(elementary::exp_nonpositive(0.0), 1.0);
  const float e87 = elementary::exp_nonpositive(-87.0f);
  EXPECT_GE(e87, std::numeric_limits<float>::min());
  EXPECT_EQ(elementary::exp_nonpositive(-87.5f), e87);
  EXPECT_EQ(elementary::exp_nonpositive(-inf), e87);
  const double e708 = elementary::exp_nonpositive(-708.0);
  EXPECT_GE(e708, std::numeric_limits<double>::min());
  EXPECT_EQ(elementary::exp_nonpositive(-double(inf)), e708);
  EXPECT_EQ(elementary::log(1.0f), 0.0f);
  EXPECT_EQ(elementary::log(0.0f), -inf);
  EXPECT_EQ(elementary::log(inf), inf);
  EXPECT_TRUE(std::isnan(elementary::log(-1.0f)));
  EXPECT_EQ(elementary::log(1.0), 0.0);
}

}  // namespace
}  // namespace ulpscope
