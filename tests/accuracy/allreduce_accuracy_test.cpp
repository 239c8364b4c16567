// The all-reduce family's scoring (accuracy/allreduce_problem.hpp): the exact
// references cross-checked against MPFR sums computed here, element by
// element; the growth of the error with P in bf16 (plain ring, upcast,
// exact); reproducibility across algorithms and the ranks' order.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "accuracy/allreduce_problem.hpp"
#include "formats/round_to_dtype.hpp"

namespace ulpscope {
namespace {

using allreduce::Algorithm;
using allreduce::Method;
using allreduce::Protocol;

AllreduceProblem problem(Dtype d, int ranks, std::int64_t n, Distribution dist, bool mean = false) {
  AllreduceProblem p;
  p.dtype = d;
  p.ranks = ranks;
  p.n = n;
  p.distribution.d = dist;
  p.seed = 3;
  p.mean = mean;
  return p;
}

AllreduceMethod method(Method m, Algorithm a, int ranks, Protocol proto = Protocol::simple) {
  return {m, a, proto, allreduce::default_topology(ranks)};
}

// Each element's sum (mean) of the ranks' values in MPFR at 2048 bits (every
// fp32 sum of up to 2^20 terms is exact there: 277 + 20 bits), rounded once
// by MPFR: fp32 through mpfr_get_flt (subnormals included), the 16-bit
// formats by rounding the significand (their sums of normal inputs are
// multiples of the smallest subnormal, so no subnormal rounding arises).
std::vector<double> mpfr_allreduce(const AllreduceProblem& p) {
  std::vector<double> out(static_cast<std::size_t>(p.n));
  std::vector<double> v(1);
  mpfr_t sum;
  mpfr_init2(sum, 2048);
  for (std::int64_t e = 0; e < p.n; ++e) {
    mpfr_set_zero(sum, 1);
    for (int r = 0; r < p.ranks; ++r) {
      rank_values(p, r, e, v);
      mpfr_add_d(sum, sum, v[0], MPFR_RNDN);
    }
    if (p.mean) mpfr_div_ui(sum, sum, static_cast<unsigned long>(p.ranks), MPFR_RNDN);
    if (p.dtype == Dtype::fp32) {
      out[static_cast<std::size_t>(e)] = static_cast<double>(mpfr_get_flt(sum, MPFR_RNDN));
    } else {
      mpfr_t r;
      mpfr_init2(r, 2048);
      mpfr_set(r, sum, MPFR_RNDN);
      mpfr_prec_round(r, format_info(p.dtype).precision, MPFR_RNDN);
      out[static_cast<std::size_t>(e)] = mpfr_get_d(r, MPFR_RNDN);
      mpfr_clear(r);
    }
  }
  mpfr_clear(sum);
  return out;
}

TEST(AllreduceReference, ExactMethodIsMpfrsCorrectlyRoundedSum) {
  struct Case {
    Dtype d;
    int ranks;
    Distribution dist;
    bool mean;
  };
  const std::vector<Case> cases = {
      {Dtype::fp32, 37, Distribution::log_uniform, false},  // every binade, subnormals: the whole accumulator
      {Dtype::fp32, 37, Distribution::log_uniform, true},
      {Dtype::fp32, 300, Distribution::normal, true},
      {Dtype::bf16, 64, Distribution::normal, false},
      {Dtype::fp16, 5, Distribution::normal, false},
  };
  for (const Case& c : cases) {
    const AllreduceProblem p = problem(c.d, c.ranks, 40, c.dist, c.mean);
    const std::vector<double> mpfr = mpfr_allreduce(p);
    const AllreduceScore s = score_allreduce(p, method(Method::exact, Algorithm::ring, c.ranks), &mpfr, 1);
    EXPECT_EQ(s.matches_model, true) << to_string(c.d) << " P=" << c.ranks << " mean=" << c.mean;
    EXPECT_TRUE(s.correctly_rounded);
    ASSERT_TRUE(s.profile.max_ulp_error);
    EXPECT_LE(*s.profile.max_ulp_error, 0.5);
  }
}

TEST(AllreduceGrowth, Bf16RingErrorGrowsWithPUpcastAndExactDoNot) {
  // U[0, 1): no cancellation, so the error is the roundings' alone. Plain bf16
  // rounds P - 1 times at the partial's magnitude; upcast rounds in fp32 and
  // once in bf16; exact rounds once.
  std::vector<double> plain_max;
  for (int ranks : {2, 16, 128}) {
    const AllreduceProblem p = problem(Dtype::bf16, ranks, 2048, Distribution::uniform);
    const AllreduceScore plain = score_allreduce(p, method(Method::plain, Algorithm::ring, ranks), nullptr, 2);
    const AllreduceScore upcast = score_allreduce(p, method(Method::upcast, Algorithm::ring, ranks), nullptr, 2);
    const AllreduceScore exact = score_allreduce(p, method(Method::exact, Algorithm::ring, ranks), nullptr, 2);
    ASSERT_TRUE(plain.profile.max_ulp_error && upcast.profile.max_ulp_error && exact.profile.max_ulp_error);
    plain_max.push_back(*plain.profile.max_ulp_error);
    EXPECT_LT(*upcast.profile.max_ulp_error, 0.51) << "P=" << ranks;  // 0.5 + (P - 1) 2^-24 / 2^-8 at most
    EXPECT_LE(*exact.profile.max_ulp_error, 0.5);
    EXPECT_EQ(exact.profile.share_correctly_rounded, 1.0);
    if (ranks == 2) EXPECT_TRUE(plain.correctly_rounded);  // one addition, one rounding
    else EXPECT_LT(plain.profile.share_correctly_rounded, upcast.profile.share_correctly_rounded);
  }
  EXPECT_LT(plain_max[0], plain_max[1]);
  EXPECT_LT(plain_max[1], plain_max[2]);
  EXPECT_GT(plain_max[2], 4.0);
}

TEST(AllreduceReproducibility, ExactIsTheSameBitsForAnyOrderPlainIsNot) {
  AllreduceProblem p = problem(Dtype::bf16, 8, 4096, Distribution::normal);
  AllreduceProblem reversed = p;
  reversed.holder.resize(8);
  std::iota(reversed.holder.rbegin(), reversed.holder.rend(), 0);
  const auto digest = [](const AllreduceProblem& q, Method m, Algorithm a, Protocol proto) {
    return score_allreduce(q, method(m, a, q.ranks, proto), nullptr, 2).profile.digest;
  };
  const std::string exact = digest(p, Method::exact, Algorithm::ring, Protocol::simple);
  EXPECT_EQ(exact, digest(p, Method::exact, Algorithm::tree, Protocol::ll));
  EXPECT_EQ(exact, digest(reversed, Method::exact, Algorithm::ring, Protocol::simple));
  const std::string ring = digest(p, Method::plain, Algorithm::ring, Protocol::simple);
  EXPECT_NE(ring, digest(p, Method::plain, Algorithm::tree, Protocol::simple));
  EXPECT_NE(ring, digest(reversed, Method::plain, Algorithm::ring, Protocol::simple));
  EXPECT_NE(ring, exact);
}

TEST(AllreduceInputs, RanksHaveTheirOwnStreamsAndBits) {
  const AllreduceProblem p = problem(Dtype::fp16, 3, 16, Distribution::normal);
  std::vector<double> a(16), b(16);
  rank_values(p, 0, 0, a);
  rank_values(p, 1, 0, b);
  EXPECT_NE(a, b);
  EXPECT_EQ(rank_bits(p, 0).size(), 32u);
  EXPECT_NE(rank_seed(1, 0), rank_seed(1, 1));
  EXPECT_NE(rank_seed(1, 0), rank_seed(2, 0));
  AllreduceProblem sorted = p;
  sorted.distribution.d = Distribution::sorted_ascending;  // not elementwise: a rank's slice needs the whole array
  EXPECT_THROW(rank_values(sorted, 0, 0, a), std::invalid_argument);
}

}  // namespace
}  // namespace ulpscope
