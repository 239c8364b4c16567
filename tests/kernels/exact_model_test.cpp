// The exact accumulator's models against MPFR: correctly rounded in every
// order and configuration, and its finishing arithmetic (rounding, division,
// square roots; accumulators/exact_finish.hpp) at hard cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/reducers.hpp"
#include "kernels/model.hpp"
#include "model_test_support.hpp"

namespace ulpscope {
namespace {

using test::make_array;
using test::run1;
using test::spec_of;
using test::whole;

// --- exact: correctly rounded (sum, dot, sumsq, mean, norm2, rms), and the same bits in any order ---

struct ExactCase {
  Dtype in;
  Op op;
};

class ExactModel : public ::testing::TestWithParam<ExactCase> {};

// RN_out(sqrt(S / n + eps)) by MPFR: z = S + n eps exactly, w = z / n rounded
// to odd at 8192 bits, then one correctly rounded square root. w is within
// 2^-8191 of z / n, which moves the root across a rounding boundary of out
// only if the root lies that close to one; these random inputs do not.
double rms_want(const mpfr_t sum, std::int64_t n, double eps, Dtype out) {
  mpfr_t z, w;
  mpfr_init2(z, 8192);
  mpfr_init2(w, 8192);
  mpfr_set_d(w, eps, MPFR_RNDN);
  mpfr_mul_si(w, w, long(n), MPFR_RNDN);  // exact: 53 + 64 bits
  mpfr_add(z, sum, w, MPFR_RNDN);         // exact: both within 8192 bits of each other
  if (mpfr_div_si(w, z, long(n), MPFR_RNDZ) != 0 && mpfr_min_prec(w) < 8192) mpfr_nextabove(w);  // to odd
  const double v = test::round_mpfr_to(w, out, 1, true);
  mpfr_clear(z);
  mpfr_clear(w);
  return v;
}

TEST_P(ExactModel, CorrectlyRoundedInEveryOrderAndConfiguration) {
  const auto [in, op] = GetParam();
  const bool square = op == Op::sumsq || op == Op::norm2 || op == Op::rms;
  for (std::int64_t n : {0, 1, 31, 33, 1023, 4097, 70001}) {
    std::uint64_t s = std::uint64_t(n) * 7 + unsigned(in);
    const FormatInfo& f = format_info(in);
    // Random signs and magnitudes over the whole range, subnormals included,
    // kept clear of overflow so that every output is finite.
    const double top = square ? std::sqrt(f.max_finite / 4) : f.max_finite / 4;
    auto gen = [&](auto) {
      const double e = std::log2(f.min_subnormal) + test::uniform01(s) * (std::log2(top) - std::log2(f.min_subnormal));
      return (test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(e) / std::max(1.0, std::sqrt(double(n)) / 8);
    };
    const TypedArray x = make_array(in, n, gen);
    const TypedArray y = make_array(in, n, gen);
    const TypedArray* yp = op == Op::dot ? &y : nullptr;
    mpfr_t ex;
    test::exact_sum(ex, x, yp, square);
    std::vector<Dtype> outs = {Dtype::fp64, Dtype::fp32, Dtype::bf16, Dtype::fp16};
    if (is_fp8(in)) outs.push_back(in);
    for (Dtype out : outs) {
      // mean: one rounding of the exact quotient, the mean of nothing is NaN
      // (so is the rms of nothing); norm2, rms: one rounding of the exact root.
      double want = op == Op::rms     ? (n == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                : rms_want(ex, n, ReductionProblem{}.eps, out))
                    : op == Op::norm2 ? test::round_mpfr_to(ex, out, 1, true)
                    : op != Op::mean ? test::round_mpfr_to(ex, out)
                    : n == 0         ? std::numeric_limits<double>::quiet_NaN()
                                     : test::round_mpfr_to(ex, out, long(n));
      // fp8 outputs saturate (KernelSpec's default, CUDA's __NV_SATFINITE).
      if (is_fp8(out) && std::isinf(want)) want = std::copysign(format_info(out).max_finite, want);
      SCOPED_TRACE(std::string(to_string(in)) + " " + std::string(to_string(op)) + " n=" + std::to_string(n) +
                   " out=" + std::string(to_string(out)));
      for (Shape shape : {Shape::serial, Shape::tree}) {
        const KernelSpec k = spec_of(op, in, Accumulator::exact, shape, out);
        for (const LaunchConfig& c : launch_configs(k, n)) {
          const double got = run1(k, whole(op, x, yp), c);
          if (std::isnan(want)) EXPECT_TRUE(std::isnan(got));
          else {
            EXPECT_EQ(got, want) << std::hexfloat << got << " vs " << want;
            EXPECT_EQ(std::signbit(got), std::signbit(want));
          }
        }
      }
    }
    // A permutation of the input: same bits.
    if (n > 1 && op != Op::dot) {
      std::vector<double> v(n);
      for (std::int64_t i = 0; i < n; ++i) v[i] = x.at(i);
      std::reverse(v.begin(), v.end());
      std::swap(v[0], v[n / 2]);
      const TypedArray xr = make_array(in, n, [&](auto i) { return v[i]; });
      const KernelSpec k = spec_of(op, in, Accumulator::exact, Shape::tree, Dtype::fp32);
      const auto c = launch_configs(k, n);
      EXPECT_EQ(run1(k, whole(op, xr), c[1]), run1(k, whole(op, x), c[0]));
    }
    mpfr_clear(ex);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, ExactModel,
    ::testing::Values(ExactCase{Dtype::fp32, Op::sum}, ExactCase{Dtype::fp16, Op::sum}, ExactCase{Dtype::bf16, Op::sum},
                      ExactCase{Dtype::fp8_e4m3, Op::sum}, ExactCase{Dtype::fp8_e5m2, Op::sum},
                      ExactCase{Dtype::fp32, Op::dot}, ExactCase{Dtype::fp16, Op::sumsq},
                      ExactCase{Dtype::bf16, Op::dot}, ExactCase{Dtype::fp8_e4m3, Op::sumsq},
                      ExactCase{Dtype::fp8_e5m2, Op::dot}, ExactCase{Dtype::fp32, Op::mean},
                      ExactCase{Dtype::fp16, Op::mean}, ExactCase{Dtype::bf16, Op::mean},
                      ExactCase{Dtype::fp8_e5m2, Op::mean}, ExactCase{Dtype::fp32, Op::norm2},
                      ExactCase{Dtype::fp16, Op::norm2}, ExactCase{Dtype::bf16, Op::norm2},
                      ExactCase{Dtype::fp8_e4m3, Op::norm2}, ExactCase{Dtype::fp32, Op::rms},
                      ExactCase{Dtype::fp16, Op::rms}, ExactCase{Dtype::bf16, Op::rms},
                      ExactCase{Dtype::fp8_e5m2, Op::rms}),
    [](const auto& info) {
      return std::string(to_string(info.param.in)) + "_" + std::string(to_string(info.param.op));
    });

// Hard cases for the final rounding (tests/data/hard_cases/exact_sum_rounding.txt):
// ties, ties broken by a far sticky bit, results in the subnormal range and at
// the overflow threshold, signed zeros.
struct RoundingCase {
  Dtype in, out;
  std::vector<double> x;
  std::string why;
};

std::vector<RoundingCase> read_rounding_cases() {
  const std::string path = std::string(ULPSCOPE_HARD_CASES_DIR) + "/exact_sum_rounding.txt";
  std::ifstream file(path);
  if (!file) ADD_FAILURE() << "cannot read " << path;
  std::vector<RoundingCase> cases;
  for (std::string line; std::getline(file, line);) {
    std::string why;
    if (const auto hash = line.find('#'); hash != std::string::npos) {
      why = line.substr(hash + 1);
      line.resize(hash);
    }
    std::istringstream words(line);
    std::string in, out;
    if (!(words >> in >> out)) continue;  // a comment or a blank line
    const auto din = parse_dtype(in), dout = parse_dtype(out);
    if (!din || !dout) {
      ADD_FAILURE() << path << ": no such format in: " << line;
      continue;
    }
    RoundingCase c{*din, *dout, {}, why};
    for (std::string w; words >> w;) {
      char* end = nullptr;
      c.x.push_back(std::strtod(w.c_str(), &end));
      EXPECT_EQ(*end, '\0') << path << ": not a number: " << w;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(ExactModel, RoundsTiesStickyBitsSubnormalsAndOverflow) {
  const std::vector<RoundingCase> cases = read_rounding_cases();
  EXPECT_GE(cases.size(), 12u);  // the file only grows
  for (const auto& c : cases) {
    const TypedArray x = make_array(c.in, std::int64_t(c.x.size()), [&](auto i) { return c.x[i]; });
    mpfr_t ex;
    test::exact_sum(ex, x, nullptr, false);
    const double want = c.x.size() == 2 && c.x[0] == -0.0 && std::signbit(c.x[0]) && std::signbit(c.x[1])
                            ? -0.0
                            : test::round_mpfr_to(ex, c.out);
    mpfr_clear(ex);
    const KernelSpec k = spec_of(Op::sum, c.in, Accumulator::exact, Shape::tree, c.out);
    for (const auto& cfg : launch_configs(k, x.size())) {
      const double got = run1(k, whole(Op::sum, x), cfg);
      EXPECT_EQ(got, want) << std::hexfloat << got << " vs " << want << " (" << c.why << ")";
      EXPECT_EQ(std::signbit(got), std::signbit(want));
    }
  }
}

// exact mean_var: the mean and the population variance each rounded once,
// against MPFR's (n S2 - S1^2) / n^2 from the exact sums, on inputs over the
// whole range, at a large mean with a small spread (where E[x^2] - E[x]^2
// cancels every digit in floating point) and constant ones (variance +0), in
// every order and launch configuration.
TEST(ExactModel, MeanVarIsCorrectlyRoundedTwice) {
  for (Dtype in : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2})
    for (int dist = 0; dist < 3; ++dist)
      for (std::int64_t n : {0, 1, 2, 31, 33, 1023, 4097}) {
        const FormatInfo& f = format_info(in);
        std::uint64_t s = std::uint64_t(n) * 13 + unsigned(in) * 7 + unsigned(dist);
        const double center = std::exp2(std::floor(std::log2(f.max_finite)) - 3);  // large, in range
        auto gen = [&](auto) {
          if (dist == 2) return center;
          if (dist == 1) return center * (1 + (test::uniform01(s) - 0.5) * 0x1p-4);
          const double e = std::log2(f.min_subnormal) +
                           test::uniform01(s) * (std::log2(f.max_finite / 4) - std::log2(f.min_subnormal));
          return (test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(e);
        };
        const TypedArray x = make_array(in, n, gen);
        mpfr_t s1, s2, num;
        test::exact_sum(s1, x, nullptr, false);
        test::exact_sum(s2, x, nullptr, true);
        mpfr_init2(num, 2 * mpfr_get_prec(s2) + 128);
        mpfr_mul_si(num, s2, long(n), MPFR_RNDN);  // exact: the precision holds it
        mpfr_t sq;
        mpfr_init2(sq, 2 * mpfr_get_prec(s1));
        mpfr_sqr(sq, s1, MPFR_RNDN);  // exact
        ASSERT_EQ(mpfr_sub(num, num, sq, MPFR_RNDN), 0) << "the numerator must be exact";
        ASSERT_GE(mpfr_sgn(num), 0);
        for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
          const double nan = std::numeric_limits<double>::quiet_NaN();
          const double want_mean = n == 0 ? nan : test::round_mpfr_to(s1, out, long(n));
          const double want_var = n == 0 ? nan : test::round_mpfr_to(num, out, long(n * n));
          SCOPED_TRACE(std::string(to_string(in)) + " dist " + std::to_string(dist) + " n=" + std::to_string(n) +
                       " out=" + std::string(to_string(out)));
          if (dist == 2 && n > 0) {
            EXPECT_EQ(want_var, 0.0);
          }
          for (Shape shape : {Shape::serial, Shape::tree}) {
            const KernelSpec k = spec_of(Op::mean_var, in, Accumulator::exact, shape, out);
            ASSERT_FALSE(unsupported(k, Axis::all));
            for (const LaunchConfig& c : launch_configs(k, n)) {
              const auto r = run_model(k, whole(Op::mean_var, x), c);
              for (int j = 0; j < 2; ++j) {
                const double got = r.values.at(j), want = j == 0 ? want_mean : want_var;
                if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << j;
                else EXPECT_EQ(got, want) << (j == 0 ? "mean " : "var ") << std::hexfloat << got << " vs " << want;
              }
            }
          }
        }
        mpfr_clears(s1, s2, num, sq, (mpfr_ptr) nullptr);
      }
}

// The exact mean's division for counts on both sides of 2^32 (divide() has a
// 64-bit path below it and a 128-bit one above), against MPFR.
TEST(ExactModel, MeanDividesCountsOnBothSidesOf2To32) {
  using X = ExactSum<Fp32Format, false>;
  const std::vector<float> terms = {3.0f, 0x1p-149f, -0x1.8p100f, 0x1.fffffep127f, 1e-3f, -7.0f};
  const std::int64_t counts[] = {1, 3, 6, 0xFFFFFFFFll, 0x100000000ll, 0x100000007ll, 205891132094649ll,
                                 (std::int64_t(1) << 62) + 1};
  for (std::size_t m = 1; m <= terms.size(); ++m) {
    auto st = X::start();
    mpfr_t ex;
    mpfr_init2(ex, 8192);
    mpfr_set_zero(ex, 1);
    for (std::size_t i = 0; i < m; ++i) {
      X::add(st, terms[i]);
      mpfr_add_d(ex, ex, double(terms[i]), MPFR_RNDN);  // exact at 8192 bits
    }
    const auto p = X::partial(st);
    for (std::int64_t n : counts)
      for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
        SCOPED_TRACE("terms=" + std::to_string(m) + " n=" + std::to_string(n) + " " + std::string(to_string(out)));
        const double want = test::round_mpfr_to(ex, out, long(n));
        double total = 0;
        EXPECT_EQ(X::round_quotient(p, n, out_format(out), total), want);
        EXPECT_EQ(total, test::round_mpfr_to(ex, Dtype::fp64));  // the sum, from the same magnitude
      }
    mpfr_clear(ex);
  }
}

// The exact root's special cases, answered without rounding the integer
// (round_sqrt, round_rms): sqrt(+0) = +0, sqrt(-0) = -0 (the empty sum),
// sqrt(+inf) = +inf, sqrt(-inf) and sqrt(NaN) NaN, inf - inf NaN (IEEE 754,
// squareRoot); rms of an infinite or NaN sum is its root.
template <class X>
void expect_special_roots() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::vector<double> terms;
    double want;
  };
  const std::vector<Case> cases = {
      {{}, -0.0},         {{0.0}, 0.0},        {{-0.0, 0.0}, 0.0}, {{inf}, inf},       {{4.0, inf}, inf},
      {{-inf}, nan},      {{nan}, nan},        {{inf, -inf}, nan}, {{inf, nan}, nan},  {{4.0}, 2.0},
  };
  for (const Case& c : cases) {
    auto st = X::start();
    for (double t : c.terms) X::add(st, t);
    const auto p = X::partial(st);
    for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
      SCOPED_TRACE(std::to_string(c.terms.size()) + " terms, want " + std::to_string(c.want) + " in " +
                   std::string(to_string(out)));
      const double got = X::round_sqrt(p, out_format(out));
      if (std::isnan(c.want)) {
        EXPECT_TRUE(std::isnan(got));
      } else {
        EXPECT_EQ(got, c.want);
        EXPECT_EQ(std::signbit(got), std::signbit(c.want));
      }
      if (std::isinf(c.want) || std::isnan(c.want)) {
        double rms = 0.0;
        ASSERT_TRUE(X::round_rms(p, 3, 1e-6, out_format(out), rms));
        if (std::isnan(c.want)) EXPECT_TRUE(std::isnan(rms));
        else EXPECT_EQ(rms, c.want);
      }
    }
  }
}

TEST(ExactModel, RootsOfSpecialSums) {
  expect_special_roots<ExactSum<Fp32Format, true>>();  // the window
  expect_special_roots<ExactSum<Bf16Format, true>>();
  expect_special_roots<ExactSum<Fp16Format, true>>();  // split runs
  expect_special_roots<ExactSum<Fp8E5M2Format, true>>();
}

// X's partial of `terms`, one add each, and their exact sum in ex (set up
// here, 4096 bits: wide enough for every such list of doubles).
template <class X>
typename X::Partial partial_with_exact_sum(const std::vector<double>& terms, mpfr_t ex) {
  auto st = X::start();
  mpfr_init2(ex, 4096);
  mpfr_set_zero(ex, 1);
  for (double t : terms) {
    X::add(st, t);
    mpfr_add_d(ex, ex, t, MPFR_RNDN);
  }
  return X::partial(st);
}

// The exact root where rounding is hardest, against MPFR's correctly rounded
// root of the same integer: (m + 1/2)^2 (a tie between two neighbours of the
// output format, to even), that plus or minus a tiny term (just past the tie
// either way), and m^2 +- tiny (just either side of a representable root);
// m has the output's precision, scaled by powers of two over the integer's
// range. Every term is an exact double: m^2 as a product and its error (fma).
// The random sums of ExactModel land near such a boundary only by chance.
template <class X>
void expect_roots_near_boundaries(Dtype out) {
  const int p = format_info(out).precision;
  std::uint64_t s = 0x5eedu + unsigned(out);
  for (int i = 0; i < 400; ++i) {
    const double m = std::ldexp(double((test::mix(s) >> (64 - p + 1)) | (1ull << (p - 1))), 1 - p);  // [1, 2)
    const int k = -60 + int(test::mix(s) % 120);  // the root's binade
    const double h = (i & 1) ? std::ldexp(1.0, -p) : 0.0;  // half an ulp of m, or none
    const double mk = std::ldexp(m, k), hk = std::ldexp(h, k);
    const double sq = mk * mk, sq_err = std::fma(mk, mk, -sq);
    const int tiny_at = 2 * k - 2 * p - 1 - int(test::mix(s) % 40);
    for (int sign : {-1, 0, 1}) {
      mpfr_t ex;
      const auto part =
          partial_with_exact_sum<X>({sq, sq_err, 2 * mk * hk, hk * hk, sign * std::ldexp(1.0, tiny_at)}, ex);
      const double want = test::round_mpfr_to(ex, out, 1, true);
      SCOPED_TRACE(std::string(to_string(out)) + " m=" + std::to_string(m) + " k=" + std::to_string(k) +
                   " half=" + std::to_string(h != 0) + " tiny=" + std::to_string(sign) + "*2^" +
                   std::to_string(tiny_at));
      EXPECT_EQ(X::round_sqrt(part, out_format(out)), want);
      mpfr_clear(ex);
    }
  }
}

// integer_sqrt (round_sqrt's root of 125-126 bits) by its definition, r^2 <=
// t < (r + 1)^2: at perfect squares, one below and one above them, the
// range's ends and random values.
TEST(ExactModel, IntegerSquareRoots) {
  using X = ExactSum<Fp32Format, true>;
  using u128 = unsigned __int128;
  std::uint64_t s = 0x1507u;
  std::vector<u128> ts = {u128(1) << 124, (u128(1) << 126) - 1};
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t k = (test::mix(s) >> 1) | (1ull << 62);  // [2^62, 2^63): k^2 in [2^124, 2^126)
    const u128 sq = u128(k) * k;
    for (u128 t : {sq, sq - 1, sq + 1, sq + 2 * u128(k)}) ts.push_back(t);
    ts.push_back((u128(test::mix(s)) << 64 | test::mix(s)) >> 2 | u128(1) << 124);
  }
  int failures = 0;
  for (u128 t : ts) {
    if (t >> 124 == 0 || t >> 126 != 0) continue;  // sq + 2k can pass 2^126
    const u128 r = X::integer_sqrt(t);
    if (!(r * r <= t && (r + 1) * (r + 1) > t) && ++failures <= 5)
      ADD_FAILURE() << "t = " << std::hex << std::uint64_t(t >> 64) << ":" << std::uint64_t(t)
                    << ", r = " << std::uint64_t(r);
  }
  EXPECT_EQ(failures, 0);
}

TEST(ExactModel, RootsNearRoundingBoundaries) {
  using X = ExactSum<Fp32Format, true>;  // the window: any double term from 2^-298 up
  for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::bf16, Dtype::fp16}) expect_roots_near_boundaries<X>(out);
}

// The exact mean and rms where rounding is hardest, against MPFR: sums of
// n (m + h) 2^k (mean) and n (m + h)^2 2^2k (rms, eps = 0) plus or minus a
// tiny term or none, h half an ulp of m or none, so that the quotient by n
// (and its root) lies on a tie, just past it, or just beside a representable
// value. The tiny term reaches 150-200 bits below the sum's top, beyond the
// 128 bits that round_sqrt takes from the integer, where only the sticky bit
// (the remainder, the digits below) decides. Every term is an exact double:
// n t as a product and its error (fma), (m + h)^2 as m^2 (a product and its
// error), 2 m h and h^2.
template <class X>
void expect_quotients_near_boundaries(Dtype out, bool root) {
  const int p = format_info(out).precision;
  std::uint64_t s = 0x9e37u + unsigned(out) + (root ? 100u : 0u);
  const std::vector<std::int64_t> ns = {3, 7, 1000003, (std::int64_t(1) << 32) + 15};
  for (int i = 0; i < 400; ++i) {
    const std::int64_t n = ns[i % ns.size()];
    const double h = (i / ns.size()) % 2 ? std::ldexp(1.0, -p) : 0.0;
    const int k = root ? int(test::mix(s) % 60) : -20 + int(test::mix(s) % 60);
    const double m = std::ldexp(double((test::mix(s) >> (64 - p + 1)) | (1ull << (p - 1))), 1 - p);  // [1, 2)
    const double mk = std::ldexp(m, k), hk = std::ldexp(h, k);
    std::vector<double> parts = {mk, hk};  // the value, or its square's parts
    if (root) parts = {mk * mk, std::fma(mk, mk, -mk * mk), 2 * mk * hk, hk * hk};
    std::vector<double> terms;
    for (double t : parts) {
      const double big = t * double(n);
      terms.push_back(big);
      terms.push_back(std::fma(t, double(n), -big));
    }
    const int tiny_at = (root ? 2 * k - 2 * p - 4 - int(test::mix(s) % 150) : k - p - 1 - int(test::mix(s) % 200));
    for (int sign : {-1, 0, 1}) {
      std::vector<double> ts = terms;
      if (sign != 0) ts.push_back(sign * std::ldexp(1.0, tiny_at));
      mpfr_t ex;
      const auto part = partial_with_exact_sum<X>(ts, ex);
      SCOPED_TRACE(std::string(to_string(out)) + (root ? " rms" : " mean") + " n=" + std::to_string(n) +
                   " m=" + std::to_string(m) + " k=" + std::to_string(k) + " half=" + std::to_string(h != 0) +
                   " tiny=" + std::to_string(sign) + "*2^" + std::to_string(tiny_at));
      if (root) {
        double got = 0.0;
        ASSERT_TRUE(X::round_rms(part, n, 0.0, out_format(out), got));
        EXPECT_EQ(got, rms_want(ex, n, 0.0, out));
      } else {
        double total = 0.0;
        EXPECT_EQ(X::round_quotient(part, n, out_format(out), total), test::round_mpfr_to(ex, out, long(n)));
      }
      mpfr_clear(ex);
    }
  }
}

TEST(ExactModel, QuotientsAndRootsNearRoundingBoundaries) {
  using X = ExactSum<Fp32Format, true>;
  for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::bf16, Dtype::fp16}) {
    expect_quotients_near_boundaries<X>(out, false);  // mean
    expect_quotients_near_boundaries<X>(out, true);   // rms
  }
}

// The exact variance where rounding is hardest, for counts on both sides of
// 2^32 (the division's 64-bit and 128-bit paths): S1 = 2^j n and S2 =
// 2^(2j) n + t n + tiny, so that var = (n S2 - S1^2) / n^2 = t + tiny / n
// with t a tie between two neighbours of the output format or a
// representable value, and tiny = 0 or just past it either way. The variance
// divides only the numerator's top digits (exact_moments.hpp): these cases
// need its sticky bit (the digits under them and both remainders) to be
// right. Against MPFR's RN((S2 - 2^(2j) n) / n), the same quotient.
TEST(ExactModel, VarianceNearRoundingBoundaries) {
  using R = ExactMomentsReducer<Fp32Format>;
  using A1 = R::A1;
  using A2 = R::A2;
  using V = ExactVariance<A1, A2>;
  const std::vector<std::int64_t> ns = {1, 3, 1000003, (std::int64_t(1) << 32) - 1, (std::int64_t(1) << 32) + 15,
                                        (std::int64_t(1) << 40) + 3};
  for (Dtype out : {Dtype::fp64, Dtype::fp32, Dtype::fp16}) {
    const int p = format_info(out).precision;
    std::uint64_t s = 0x7a11u + unsigned(out);
    for (int i = 0; i < 240; ++i) {
      const std::int64_t n = ns[i % ns.size()];
      const double h = (i / ns.size()) % 2 ? std::ldexp(1.0, -p) : 0.0;
      const int k = -14 + int(test::mix(s) % 28), j = -10 + int(test::mix(s) % 20);
      const double m = std::ldexp(double((test::mix(s) >> (64 - p + 1)) | (1ull << (p - 1))), 1 - p);  // [1, 2)
      const double mk = std::ldexp(m, k), hk = std::ldexp(h, k), dn = double(n);
      const double c1 = std::ldexp(std::floor(std::ldexp(dn, -24)), 24), c0 = dn - c1;  // n in float-sized chunks
      const int tiny_at = k - p - 1 - int(test::mix(s) % 120);
      for (int sign : {-1, 0, 1}) {
        mpfr_t ex1, ex2, d;
        const auto p1 = partial_with_exact_sum<A1>({std::ldexp(c1, j), std::ldexp(c0, j)}, ex1);
        std::vector<double> sq = {std::ldexp(dn, 2 * j)};
        for (double part : {mk, hk}) {  // t n, each part's product with n (below 2^41) and its error exactly
          sq.push_back(part * dn);
          sq.push_back(std::fma(part, dn, -part * dn));
        }
        if (sign != 0) sq.push_back(sign * std::ldexp(1.0, tiny_at));
        const auto p2 = partial_with_exact_sum<A2>(sq, ex2);
        mpfr_init2(d, 4096);
        mpfr_set_d(d, std::ldexp(dn, 2 * j), MPFR_RNDN);
        ASSERT_EQ(mpfr_sub(d, ex2, d, MPFR_RNDN), 0);  // S2 - 2^(2j) n = t n + tiny, exactly
        SCOPED_TRACE(std::string(to_string(out)) + " n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     " k=" + std::to_string(k) + " j=" + std::to_string(j) + " half=" + std::to_string(h != 0) +
                     " tiny=" + std::to_string(sign) + "*2^" + std::to_string(tiny_at));
        double in_fp64 = 0.0;
        EXPECT_EQ(V::round(p1, p2, n, out_format(out), in_fp64),
                  test::round_mpfr_to(d, out, long(n)));
        EXPECT_EQ(in_fp64, test::round_mpfr_to(d, Dtype::fp64, long(n)));
        mpfr_clears(ex1, ex2, d, (mpfr_ptr) nullptr);
      }
    }
  }
}

// merge must keep limbs bounded (it carries after every merge): partials with
// uncarried limbs just below 2^61, merged again and again (eight such merges
// overflow a 64-bit limb if nothing carries), keep the value.
TEST(ExactModel, MergeCarriesBeforeLimbsOverflow) {
  using X = ExactSum<Fp16Format, false>;
  X::Partial big = X::identity();
  for (int k = 0; k < X::digits - 1; ++k) big.limb[k] = (std::int64_t(1) << 61) - 1 - k;  // uncarried digits
  big.limb[X::digits - 1] = -3;  // and a negative top digit
  auto st = X::start();
  for (float v : {1.5f, -0.25f, 0x1p-24f, 65504.0f}) X::add(st, v);
  X::Partial acc = X::partial(st);
  mpfr_t want, t;
  mpfr_inits2(4096, want, t, (mpfr_ptr) nullptr);
  mpfr_set_d(want, 1.5 - 0.25 + 0x1p-24 + 65504.0, MPFR_RNDN);  // exact
  for (int rep = 0; rep < 40; ++rep) {
    X::merge(acc, big);
    for (int k = 0; k < X::digits; ++k) {
      mpfr_set_si(t, long(big.limb[k]), MPFR_RNDN);
      mpfr_mul_2si(t, t, X::low + 32 * k, MPFR_RNDN);
      mpfr_add(want, want, t, MPFR_RNDN);  // exact at 4096 bits
    }
    for (int k = 0; k < X::digits; ++k) {
      ASSERT_LT(acc.limb[k], std::int64_t(1) << 62) << "limb " << k << " after " << rep + 1 << " merges";
      ASSERT_GE(acc.limb[k], k < X::digits - 1 ? 0 : -(std::int64_t(1) << 62));
    }
    for (Dtype out : {Dtype::fp64, Dtype::fp32})
      ASSERT_EQ(X::round(acc, out_format(out)), test::round_mpfr_to(want, out)) << "after " << rep + 1 << " merges";
  }
  mpfr_clears(want, t, (mpfr_ptr) nullptr);
}

// The exact mean's digit step (divide_step: a double estimate of the quotient
// and one correction) against the integer division, at quotients and
// remainders on their bounds (0, 1, n - 1; quotients up to 2^32 - 1, where the
// estimate is least precise) and at random, for divisors up to 2^32 - 1.
TEST(ExactModel, DivideStepMatchesIntegerDivision) {
  using X = ExactSum<Fp32Format, false>;
  std::mt19937_64 rng(12);
  std::vector<std::uint64_t> divisors = {1, 2, 3, 7, 641, 65537, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFB,
                                         0xFFFFFFFF};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 0xFFFFFFFFull);
  std::int64_t checked = 0;
  for (std::uint64_t n : divisors) {
    const double inv = rn::div(1.0, double(n));
    std::vector<std::uint64_t> quotients = {0, 1, 2, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};
    for (int i = 0; i < 20; ++i) quotients.push_back(rng() & 0xFFFFFFFF);
    for (std::uint64_t q : quotients)
      for (std::uint64_t r : {std::uint64_t(0), std::uint64_t(1), n - 1, rng() % n}) {
        if (r >= n) continue;
        const std::uint64_t cur = q * n + r;  // below n 2^32
        std::uint64_t rem = ~0ull;
        ASSERT_EQ(X::divide_step(cur, n, inv, rem), cur / n) << "cur=" << cur << " n=" << n;
        ASSERT_EQ(rem, cur % n) << "cur=" << cur << " n=" << n;
        ++checked;
      }
  }
  EXPECT_GT(checked, 20000);
}

// --- the tree order against an independent re-implementation ------------

}  // namespace
}  // namespace ulpscope
