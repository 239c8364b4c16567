// The NCCL all-reduce runner (kernels/allreduce/nccl_runner.hpp) on 2 or 4
// GPUs: the exact method is correctly rounded (against MPFR) and the same
// bits for ring and tree and for P = 2 and 4; a rank that never joins ends in
// a timeout, not a hang; refusals are one line. Without NCCL or 2 GPUs the
// GPU tests skip and the refusals are checked.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/binary_format.hpp"
#include "kernels/allreduce/nccl/element_bits.hpp"
#include "kernels/allreduce/nccl_runner.hpp"
#include "reference/exact_real.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope::allreduce {
namespace {

using Tensors = std::vector<std::vector<std::uint8_t>>;


bool is_nan(Dtype d, std::uint32_t b) { return std::isnan(value_of(d, b)); }

// RN(sum) or RN(sum / P) of element i over the ranks, from MPFR (P a power of two here: the division is exact).
std::uint32_t reference_bits(const Tensors& t, Dtype d, std::size_t i, bool mean) {
  ExactReal sum = ExactReal::from_double(value_of(d, bits_at(t[0], d, i)));
  for (std::size_t r = 1; r < t.size(); ++r) sum = exact_add(sum, ExactReal::from_double(value_of(d, bits_at(t[r], d, i))));
  if (mean) mpfr_div_ui(sum.get(), sum.get(), static_cast<unsigned long>(t.size()), MPFR_RNDN);
  return bits_of(d, round_to_format(sum, d));
}

// Rank tensors that stress the exact method: values of a few binades around
// 1 with cancellation, some far below the others (the second round), signed
// zeros, subnormals, the largest values (overflow) and, unless finite_only,
// infinities and NaN.
std::vector<std::uint8_t> draw_tensor(Dtype d, std::size_t n, std::uint64_t seed, bool finite_only) {
  const FormatInfo& info = format_info(d);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<std::uint8_t> t(n * bytes_of(d));
  for (std::size_t i = 0; i < n; ++i) {
    double v;
    const unsigned kind = unsigned(rng() % 64);
    if (kind == 0) v = (rng() & 1) ? -0.0 : 0.0;
    else if (kind == 1) v = info.min_subnormal * double(rng() % 8) * ((rng() & 1) ? -1 : 1);
    else if (kind == 2) v = info.max_finite * ((rng() & 1) ? -1 : 1);
    else if (kind == 3) v = normal(rng) * std::ldexp(1.0, -int(rng() % 40));  // far below: the second round
    else if (kind == 4 && !finite_only) v = (rng() & 1) ? INFINITY : -INFINITY;
    else if (kind == 5 && !finite_only) v = NAN;
    else v = normal(rng);
    const std::uint32_t b = bits_of(d, v);
    std::memcpy(t.data() + i * bytes_of(d), &b, bytes_of(d));
  }
  return t;
}


int gpus_usable() {
  for (int p = 8; p >= 1; --p)
    if (nccl_unavailable(p).empty()) return p;
  return 0;
}

NcclResult run(const Tensors& t, Dtype d, Method m, Algorithm a, bool mean = false) {
  NcclRequest q;
  q.dtype = d;
  q.mean = mean;
  q.method = m;
  q.algorithm = a;
  q.ranks = int(t.size());
  q.n = t[0].size() / bytes_of(d);
  q.inputs = &t;
  q.runs = 2;
  q.repetitions = 2;
  q.timeout_s = 60;
  return run_nccl_allreduce(q);
}

class NcclExactTest : public ::testing::TestWithParam<Dtype> {};

// Exact: every element correctly rounded (MPFR), the same bits for ring and
// tree, every rank and run alike, and the same bits for P = 2 and P = 4 (the
// P = 4 data add c and -c to the P = 2 data: the same exact sums) but where
// the exact sum is zero: -0 + -0 is -0 while -0 + c + -0 + (-c) is +0
// (IEEE 754-2019 6.3), so only the sign of those zeros may differ.
TEST_P(NcclExactTest, CorrectlyRoundedAndIdenticalAcrossAlgorithmsAndRanks) {
  const int gpus = gpus_usable();
  if (gpus < 2) GTEST_SKIP() << nccl_unavailable(2);
  const Dtype d = GetParam();
  const std::size_t n = (std::size_t(1) << 16) + 3;
  const auto a = draw_tensor(d, n, 1, false), b = draw_tensor(d, n, 2, false), c = draw_tensor(d, n, 3, true);
  const Tensors two = {a, b};
  const Tensors four = {a, c, b, negated(d, c)};
  std::vector<std::vector<std::uint8_t>> by_ranks;
  std::size_t second_rounds = 0;
  for (const Tensors* t : {&two, &four}) {
    if (int(t->size()) > gpus) continue;
    std::vector<std::uint8_t> ring;
    for (Algorithm alg : {Algorithm::ring, Algorithm::tree}) {
      const NcclResult r = run(*t, d, Method::exact, alg);
      EXPECT_TRUE(r.ranks_agree);
      EXPECT_EQ(r.distinct_runs, 1);
      second_rounds += r.second_round_elements;
      if (ring.empty()) ring = r.output;
      EXPECT_EQ(r.output, ring) << "P = " << t->size() << ": tree differs from ring";
    }
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t got = bits_at(ring, d, i), want = reference_bits(*t, d, i, false);
      if (is_nan(d, want) ? !is_nan(d, got) : got != want) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << "P = " << t->size();
    by_ranks.push_back(std::move(ring));
  }
  EXPECT_GT(second_rounds, 0u);  // the data reach the second round
  if (by_ranks.size() == 2) {
    std::size_t differ = 0, zeros = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t x = bits_at(by_ranks[0], d, i), y = bits_at(by_ranks[1], d, i);
      if (x == y) continue;
      if (value_of(d, x) == 0 && value_of(d, y) == 0) ++zeros;
      else ++differ;
    }
    EXPECT_EQ(differ, 0u);
    EXPECT_GT(zeros, 0u);  // the data hold such zeros: the exception above is exercised
  }
}

// The exact mean over P = 2: RN(sum / 2), one rounding.
TEST_P(NcclExactTest, MeanIsCorrectlyRounded) {
  if (gpus_usable() < 2) GTEST_SKIP() << nccl_unavailable(2);
  const Dtype d = GetParam();
  const std::size_t n = 1 << 14;
  const Tensors two = {draw_tensor(d, n, 4, false), draw_tensor(d, n, 5, false)};
  const NcclResult r = run(two, d, Method::exact, Algorithm::ring, true);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t got = bits_at(r.output, d, i), want = reference_bits(two, d, i, true);
    if (is_nan(d, want) ? !is_nan(d, got) : got != want) ++wrong;
  }
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(Formats, NcclExactTest, ::testing::Values(Dtype::fp32, Dtype::fp16, Dtype::bf16),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Every method and protocol either runs (its log names the communicator's
// rings or trees) or is refused in one line.
TEST(NcclRunner, ProtocolsRunOrRefuseInOneLine) {
  if (gpus_usable() < 2) GTEST_SKIP() << nccl_unavailable(2);
  const std::size_t n = 1 << 12;
  const Tensors t = {draw_tensor(Dtype::bf16, n, 6, true), draw_tensor(Dtype::bf16, n, 7, true)};
  for (Method m : {Method::plain, Method::upcast})
    for (Algorithm a : {Algorithm::ring, Algorithm::tree})
      for (Protocol p : {Protocol::simple, Protocol::ll, Protocol::ll128}) {
        NcclRequest q;
        q.dtype = Dtype::bf16;
        q.method = m;
        q.algorithm = a;
        q.protocol = p;
        q.ranks = 2;
        q.n = n;
        q.inputs = &t;
        q.runs = 1;
        q.repetitions = 1;
        q.timeout_s = 60;
        try {
          const NcclResult r = run_nccl_allreduce(q);
          EXPECT_TRUE(r.ranks_agree);
          EXPECT_GT(r.seconds, 0);
          EXPECT_GT(r.nccl_version, 22800);
          EXPECT_NE(r.nccl_log.find("NCCL INFO"), std::string::npos);
        } catch (const std::runtime_error& e) {
          EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
      }
}

// A rank that never joins leaves the others waiting: the runner aborts the
// communicators at the timeout and says so in one line; the GPUs then serve
// the next request.
TEST(NcclRunner, WithheldRankTimesOutInsteadOfHanging) {
  if (gpus_usable() < 2) GTEST_SKIP() << nccl_unavailable(2);
  const std::size_t n = 1 << 12;
  const Tensors t = {draw_tensor(Dtype::fp32, n, 8, true), draw_tensor(Dtype::fp32, n, 9, true)};
  NcclRequest q;
  q.dtype = Dtype::fp32;
  q.ranks = 2;
  q.n = n;
  q.inputs = &t;
  q.runs = 1;
  q.repetitions = 1;
  q.timeout_s = 3;
  q.withhold_rank = 1;
  const auto start = std::chrono::steady_clock::now();
  try {
    run_nccl_allreduce(q);
    ADD_FAILURE() << "a withheld rank did not time out";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish within 3 s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
  q.withhold_rank = -1;
  EXPECT_TRUE(run_nccl_allreduce(q).ranks_agree);
}

// Refused before anything starts, each in one line: more ranks than GPUs,
// a format NCCL's runner does not take, inputs of the wrong size.
TEST(NcclRunner, Refusals) {
  const int gpus = gpus_usable();
  const std::string too_many = nccl_unavailable(gpus + 1);
  EXPECT_FALSE(too_many.empty());
  EXPECT_EQ(too_many.find('\n'), std::string::npos);
#if defined(ULPSCOPE_HAVE_NCCL)
  if (gpus > 0) {
    EXPECT_NE(too_many.find("GPUs"), std::string::npos) << too_many;
  }
#else
  EXPECT_NE(too_many.find("built without NCCL"), std::string::npos) << too_many;
#endif
  const Tensors t(std::size_t(gpus + 1), std::vector<std::uint8_t>(64 * 2));
  NcclRequest q;
  q.dtype = Dtype::bf16;
  q.ranks = gpus + 1;
  q.n = 64;
  q.inputs = &t;
  EXPECT_THROW(run_nccl_allreduce(q), std::runtime_error);
  q.dtype = Dtype::fp8_e4m3;
  EXPECT_THROW(run_nccl_allreduce(q), std::runtime_error);
  q.dtype = Dtype::fp32;  // 64 fp32 values are 256 bytes, not 128
  q.ranks = 1;
  const Tensors one(1, std::vector<std::uint8_t>(64 * 2));
  q.inputs = &one;
  try {
    run_nccl_allreduce(q);
    ADD_FAILURE() << "inputs of the wrong size were taken";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace ulpscope::allreduce
