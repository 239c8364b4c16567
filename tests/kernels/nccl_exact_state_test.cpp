// The exact all-reduce's per-element arithmetic (kernels/allreduce/nccl/
// exact_state.hpp) on the CPU, with NCCL's two all-reduces played by a max
// and a wrapping integer sum in a shuffled rank order: every result against
// MPFR's correctly rounded sum (or mean) of the P values, for every P the
// state takes. The GPU runs the same functions (nccl_allreduce_gpu_test.cpp).
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/allreduce/nccl/exact_state.hpp"
#include "reference/exact_real.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope::allreduce {
namespace {

// RN(sum of the values) or RN(sum / P), from MPFR. For P not a power of two
// the quotient is taken 70 bits past the sum's precision, truncated: a
// non-dyadic quotient lies at least 2^lsb / P from every midpoint of the
// output format, farther than the truncation, so one rounding of it is
// RN(sum / P).
template <class S>
std::uint32_t reference_bits(const std::vector<std::uint32_t>& column, bool mean) {
  ExactReal sum = ExactReal::from_double(decode<typename S::Format>(column[0]));
  for (std::size_t r = 1; r < column.size(); ++r)
    sum = exact_add(sum, ExactReal::from_double(decode<typename S::Format>(column[r])));
  if (mean) {
    const auto p = static_cast<unsigned long>(column.size());
    ExactReal q(sum.precision() + 70);
    mpfr_div_ui(q.get(), sum.get(), p, MPFR_RNDZ);
    sum = q;
  }
  return encode<typename S::Format>(round_to_format(sum, S::dtype));
}

bool is_nan_bits(std::uint32_t b, std::uint32_t field_mask, std::uint32_t man_mask) {
  return (b & field_mask) == field_mask && (b & man_mask) != 0;
}

// NCCL's part: the max of the exponent bytes, then the integers' sum in
// the given rank order (unsigned: wrapping, as NCCL's ncclUint32/64 sum).
template <class S>
std::uint32_t all_reduce_one(const std::vector<std::uint32_t>& column, const std::vector<int>& order, bool mean,
                             bool& second) {
  using Word = std::conditional_t<S::word_bits == 32, std::uint32_t, std::uint64_t>;
  const int ranks = int(column.size());
  const int k = S::window_binades(ranks);
  std::uint8_t top = 0;
  for (std::uint32_t b : column) top = std::max(top, S::exponent_byte(b));
  Word total = 0;
  for (int r : order) total = Word(total + Word(S::window_word(column[r], top, k)));
  const std::uint32_t bits = S::finish(total, top, k, ranks, mean, second);
  if (!second) return bits;
  // The second round: the column as an all-gather leaves it (stride 1 here).
  std::vector<typename S::storage> gathered(column.begin(), column.end());
  return S::exact_of_values(gathered.data(), 1, ranks, mean);
}

// Values of a format's bit patterns drawn to stress the window: one shared
// binade with cancellation, a spread of a few binades around the window's
// edge, uniform bit patterns (every exponent, subnormals, infinities, NaN),
// the largest values (overflow), and signed zeros.
template <class S>
std::vector<std::uint32_t> draw_column(std::mt19937_64& rng, int ranks, int kind) {
  using F = typename S::Format;
  const int k = S::window_binades(ranks);
  std::vector<std::uint32_t> col(ranks);
  auto bits_of = [&](int field, std::uint32_t man, bool neg) {
    return (neg ? F::sign_mask : 0u) | (std::uint32_t(field) << F::man_bits) | (man & F::man_mask);
  };
  const int base = int(F::exp_all_ones / 2);
  for (int r = 0; r < ranks; ++r) {
    const std::uint32_t man = std::uint32_t(rng());
    const bool neg = rng() & 1;
    switch (kind) {
      case 0: col[r] = bits_of(base, man, neg); break;
      case 1: col[r] = bits_of(base - int(rng() % std::uint64_t(k + 4)), man, neg); break;
      case 2: col[r] = std::uint32_t(rng()) & ((F::sign_mask << 1) - 1u); break;
      case 3: col[r] = bits_of(int(F::exp_all_ones) - 1 - int(rng() % 2), man, false); break;
      case 4: col[r] = (rng() & 1) ? F::sign_mask : 0u; break;
      case 5: col[r] = bits_of(int(rng() % 3), man, neg); break;  // subnormals and the least normals
      default: col[r] = bits_of(base, man, neg);
    }
  }
  // A value of the largest binade with low bits set beside a small one: the
  // small one's bits fall below the window (the second round).
  if (kind == 1 && ranks > 1 && (rng() & 1)) col[1] = bits_of(base - k - 2, F::man_mask, true);
  return col;
}

struct Case {
  Dtype dtype;
  int ranks;
  bool mean;
};

class ExactStateTest : public ::testing::TestWithParam<Case> {};

template <class S>
void check_case(const Case& c) {
  using F = typename S::Format;
  std::mt19937_64 rng(std::uint64_t(c.ranks) * 1000 + unsigned(c.dtype) * 10 + c.mean);
  const std::uint32_t field_mask = F::exp_all_ones << F::man_bits;
  int seconds = 0, checked = 0;
  for (int kind = 0; kind < 6; ++kind) {
    for (int i = 0; i < 1500; ++i) {
      const std::vector<std::uint32_t> col = draw_column<S>(rng, c.ranks, kind);
      std::vector<int> order(c.ranks);
      std::iota(order.begin(), order.end(), 0);
      bool second = false;
      const std::uint32_t got = all_reduce_one<S>(col, order, c.mean, second);
      std::shuffle(order.begin(), order.end(), rng);
      bool second_shuffled = false;
      const std::uint32_t shuffled = all_reduce_one<S>(col, order, c.mean, second_shuffled);
      const std::uint32_t want = reference_bits<S>(col, c.mean);
      seconds += second;
      ++checked;
      ASSERT_EQ(shuffled, got) << "rank order changed the bits, kind " << kind;
      ASSERT_EQ(second_shuffled, second);
      if (is_nan_bits(want, field_mask, F::man_mask)) {
        ASSERT_TRUE(is_nan_bits(got, field_mask, F::man_mask)) << "kind " << kind << " got " << std::hex << got;
      } else {
        std::string values;
        for (std::uint32_t b : col) values += std::to_string(decode<F>(b)) + " ";
        ASSERT_EQ(got, want) << "kind " << kind << ", values " << values << "second round " << second;
      }
    }
  }
  // The draws reach both paths.
  EXPECT_GT(seconds, 0);
  EXPECT_LT(seconds, checked);
}

TEST_P(ExactStateTest, CorrectlyRoundedInAnyRankOrder) {
  const Case c = GetParam();
  switch (c.dtype) {
    case Dtype::fp32: check_case<ExactFp32>(c); break;
    case Dtype::fp16: check_case<ExactFp16>(c); break;
    case Dtype::bf16: check_case<ExactBf16>(c); break;
    default: FAIL();
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (Dtype d : {Dtype::fp32, Dtype::fp16, Dtype::bf16})
    for (int p : {1, 2, 3, 4, 5, 8, 31})
      for (bool mean : {false, true}) out.push_back({d, p, mean});
  out.push_back({Dtype::fp32, 63, false});
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllFormats, ExactStateTest, ::testing::ValuesIn(cases()), [](const auto& info) {
  return std::string(to_string(info.param.dtype)) + "_P" + std::to_string(info.param.ranks) +
         (info.param.mean ? "_mean" : "_sum");
});

// The same exact sum over more ranks gives the same bits: a, b against a,
// c, b, -c (c finite) for P = 2 and 4, with only the sign of a zero sum
// allowed to differ (-0 + -0 is -0; -0 + c + -0 + (-c) is +0, IEEE 754-2019
// 6.3).
template <class S>
void check_across_ranks() {
  using F = typename S::Format;
  std::mt19937_64 rng(77);
  int zeros = 0;
  for (int kind = 0; kind < 6; ++kind)
    for (int i = 0; i < 2000; ++i) {
      const std::vector<std::uint32_t> ab = draw_column<S>(rng, 2, kind);
      std::uint32_t c = draw_column<S>(rng, 1, kind)[0];
      if (S::field_of(c) == F::exp_all_ones) c = 0;  // finite
      const std::vector<std::uint32_t> four = {ab[0], c, ab[1], c ^ F::sign_mask};
      bool second = false;
      const std::uint32_t x = all_reduce_one<S>(ab, {0, 1}, false, second);
      const std::uint32_t y = all_reduce_one<S>(four, {2, 0, 3, 1}, false, second);
      if (x == y) continue;
      ASSERT_TRUE(decode<F>(x) == 0 && decode<F>(y) == 0) << std::hex << x << " " << y;
      ++zeros;
    }
  EXPECT_GT(zeros, 0);
}

TEST(ExactStateAcrossRanks, SameExactSumSameBits) {
  check_across_ranks<ExactFp32>();
  check_across_ranks<ExactFp16>();
  check_across_ranks<ExactBf16>();
}

// The window's arithmetic leaves room for the count: P fitted values sum to
// below 2^(C - 1), and the count's field holds every P the state takes.
TEST(ExactStateLimits, WindowAndCountFit) {
  EXPECT_EQ(ExactFp32::window_binades(4), 31);
  EXPECT_EQ(ExactBf16::window_binades(4), 16);
  EXPECT_EQ(ExactFp16::window_binades(4), 13);
  EXPECT_EQ(ExactBf16::max_ranks, 31);
  EXPECT_EQ(ExactFp32::max_ranks, 63);
  EXPECT_GE(ExactFp16::window_binades(ExactFp16::max_ranks), 0);
}

}  // namespace
}  // namespace ulpscope::allreduce
