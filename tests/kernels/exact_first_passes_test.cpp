// The exact first passes of the GPU (digits outside the state, bins of squares,
// value windows: accumulators/exact_binned_squares.hpp, exact_value_window.hpp)
// give the same integers as the accumulator's own.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
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

// The GPU's first pass keeps the digits in shared memory (LimbsOutside,
// exact_sum.hpp): the same stream of values, vectors and single ones, gives
// the same partial as the digits in the state, for every format and term kind
// and mean_var's two sums, through spills of every kind (runs filled, the
// window moved, checked additions that would round, infinities and NaN). The
// slice lies between inaccessible pages (GuardedSlice): any access outside it
// faults.
// A value of F: anywhere in the format (an infinity or NaN one time in
// eight that the code gives one), or in [1/16, 16) where runs stay exact.
template <class F>
float value_of(std::uint64_t& s, bool narrow) {
  if (narrow) {
    const double v = (test::mix(s) & 1 ? -1.0 : 1.0) * std::exp2(test::uniform01(s) * 8 - 4);
    return float(decode<F>(encode<F>(v, Saturation::satfinite)));
  }
  for (;;) {
    float x;
    if constexpr (F::bits == 32) x = std::bit_cast<float>(std::uint32_t(test::mix(s)));
    else x = float(decode<F>(std::uint32_t(test::mix(s) % (1u << F::bits))));
    if (std::isfinite(x) || test::mix(s) % 8 == 0) return x;
  }
}

template <int D>
void expect_same_integer(const LongInteger<D>& a, const LongInteger<D>& b, int trial) {
  for (int k = 0; k < D; ++k) ASSERT_EQ(a.limb[k], b.limb[k]) << "trial " << trial << " digit " << k;
  ASSERT_EQ(a.flags, b.flags) << "trial " << trial;
}
template <class P1, class P2>
void expect_same_integer(const ExactMomentsPartial<P1, P2>& a, const ExactMomentsPartial<P1, P2>& b, int trial) {
  expect_same_integer(a.p1, b.p1, trial);
  expect_same_integer(a.p2, b.p2, trial);
}

// Memory for one thread's digits between two inaccessible pages, at the
// start of its page (AtEnd false) or ending at its end (true): a read or
// write outside the slice, even one that adds zero, faults.
class GuardedSlice {
 public:
  GuardedSlice(std::size_t limbs, bool at_end) {
    page_ = std::size_t(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = limbs * sizeof(std::int64_t);
    if (bytes > page_) throw std::logic_error("a slice larger than a page");
    base_ = static_cast<char*>(mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    if (mprotect(base_, page_, PROT_NONE) != 0 || mprotect(base_ + 2 * page_, page_, PROT_NONE) != 0)
      throw std::runtime_error("mprotect failed");
    limbs_ = reinterpret_cast<std::int64_t*>(base_ + page_ + (at_end ? page_ - bytes : 0));
  }
  ~GuardedSlice() { munmap(base_, 3 * page_); }
  GuardedSlice(const GuardedSlice&) = delete;
  GuardedSlice& operator=(const GuardedSlice&) = delete;
  std::int64_t* limbs() const { return limbs_; }

 private:
  std::size_t page_;
  char* base_;
  std::int64_t* limbs_;
};

template <class F, class R, class Outside, int W>
void expect_digits_outside_give_the_same_partial() {
  static_assert(Outside::limbs_outside > 0 && R::limbs_outside == 0);
  static_assert(std::is_same_v<typename R::Partial, typename Outside::Partial>);
  std::uint64_t s = 4242;
  const typename R::Params pr{};
  for (int trial = 0; trial < 40; ++trial) {
    const GuardedSlice memory(Outside::limbs_outside, trial % 2 == 0);
    auto in = R::start();
    auto out = Outside::start();
    Outside::place_limbs(out, memory.limbs());
    // Past the longest run (fp16 values: 2^13 terms) one trial in eight;
    // narrow values (long exact runs, small sums) in odd trials.
    const int n = trial % 8 == 0 ? 20000 + int(test::mix(s) % 1000) : int(test::mix(s) % 600);
    const bool narrow = trial % 4 == 1 || trial % 4 == 2;
    float x[W], y[W];
    for (int i = 0; i < n;) {
      const int w = test::mix(s) % 3 == 0 ? 1 : W;
      for (int j = 0; j < w; ++j) {
        x[j] = value_of<F>(s, narrow);
        y[j] = value_of<F>(s, narrow);
      }
      i += w;
      if constexpr (R::template adds_groups<W>) {
        if (w == W) {
          R::template add_group<W>(in, x, y, pr);
          // The tree kernels' fp8 values come as doubles (add_values_by).
          if constexpr (Outside::template takes_values_by<W>) {
            Outside::template add_values_by<W>(out, [&](int j) { return double(x[j]); });
            continue;
          }
          Outside::template add_group<W>(out, x, y, pr);
          continue;
        }
      }
      for (int j = 0; j < w; ++j) {
        R::add(in, x[j], y[j], pr);
        Outside::add(out, x[j], y[j], pr);
      }
    }
    expect_same_integer(R::partial(in), Outside::partial(out), trial);
    if (testing::Test::HasFatalFailure()) return;
  }
}

template <class F, int W>
void expect_digits_outside_for_format() {
  using Sum = ExactSum<F, false>;
  using Sq = ExactSum<F, true>;
  using Dot = ExactSum<F, true, false>;
  expect_digits_outside_give_the_same_partial<F, SumReducer<Sum, TermKind::value>,
                                              SumReducer<typename Sum::WithLimbsOutside, TermKind::value>, W>();
  expect_digits_outside_give_the_same_partial<F, SumReducer<Sq, TermKind::square>,
                                              SumReducer<typename Sq::WithLimbsOutside, TermKind::square>, W>();
  expect_digits_outside_give_the_same_partial<F, SumReducer<Dot, TermKind::product>,
                                              SumReducer<typename Dot::WithLimbsOutside, TermKind::product>, W>();
  expect_digits_outside_give_the_same_partial<F, ExactMomentsReducer<F>, ExactMomentsReducer<F, true>, W>();
}

// mean_var's values as doubles (add_values_by, the tree kernels' path for
// fp8) through runs that would outgrow their length without a spill: seven
// of the largest values to one light one, the light ones alternately the
// smallest value (its bit in the values' run, and its square's in an unsplit
// squares' run) and, where squares are split, the one whose square is the
// split's grid 2^S (its bit in the squares' hi run), three runs' worth of the
// longer run that fits in memory; the same integers as value-by-value adds.
template <class F, int W>
void expect_moments_values_by_spill_in_time() {
  using R = ExactMomentsReducer<F, true>;
  static_assert(R::template takes_values_by<W>);
  const GuardedSlice memory(R::limbs_outside, false);
  auto by = R::start();
  R::place_limbs(by, memory.limbs());
  auto one = ExactMomentsReducer<F>::start();
  constexpr bool split = R::A2::template double_split_groups<W>;
  const double big = F::max_finite(), tiny = F::min_subnormal();
  const double grid = split ? std::ldexp(1.0, R::A2::split_at / 2) : tiny;
  if (split) {
    ASSERT_EQ(grid * grid, std::ldexp(1.0, R::A2::split_at));
  }
  // (e4m3's values' run, 2^30 terms, is too long to fill here: the squares'.)
  const std::uint32_t runs =
      R::A1::fast_every <= (1u << 22) ? std::max(R::A1::fast_every, R::A2::fast_every) : R::A2::fast_every;
  std::vector<double> x(std::size_t(runs) * 3 + W);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 8 != 7 ? big : ((i / 8) % 2 ? tiny : grid);
  for (std::size_t k = 0; k + W <= x.size(); k += W)
    R::template add_values_by<W>(by, [&](int j) { return x[k + j]; });
  for (double v : x) ExactMomentsReducer<F>::add(one, float(v), 0.0f, {});
  expect_same_integer(ExactMomentsReducer<F>::partial(one), R::partial(by), 0);
}

TEST(ExactAccumulator, MomentsValuesAsDoublesSpillInTime) {
  expect_moments_values_by_spill_in_time<Fp16Format, 8>();
  expect_moments_values_by_spill_in_time<Fp8E5M2Format, 16>();
  expect_moments_values_by_spill_in_time<Fp8E4M3Format, 16>();
}

TEST(ExactAccumulator, DigitsOutsideTheStateGiveTheSamePartial) {
  expect_digits_outside_for_format<Fp32Format, 4>();
  expect_digits_outside_for_format<Fp16Format, 8>();
  expect_digits_outside_for_format<Bf16Format, 8>();
  expect_digits_outside_for_format<Fp8E4M3Format, 16>();
  expect_digits_outside_for_format<Fp8E5M2Format, 16>();
}

// x dealt to the states st as a block's threads take it: each value to a
// random state, 16 at once through A::add_group<16> (three turns in four,
// where the segment has room) or one through A::add, flush() after every
// `segment` values and at the end.
template <class A, class Flush>
void deal_in_segments(const std::vector<float>& x, std::vector<typename A::State>& st, std::size_t segment,
                      std::uint64_t& s, Flush flush) {
  std::size_t i = 0, in_segment = 0;
  while (i < x.size()) {
    auto& mine = st[test::mix(s) % st.size()];
    if (test::mix(s) % 4 != 0 && i + 16 <= x.size() && in_segment + 16 <= segment) {
      A::template add_group<16>(mine, x.data() + i);
      i += 16;
      in_segment += 16;
    } else {
      A::add(mine, x[i++]);
      ++in_segment;
    }
    if (in_segment == segment) {
      flush();
      in_segment = 0;
    }
  }
  flush();
}

// The squares of bf16 in bins of double (exact_binned_squares.hpp; the tree
// kernels' first pass of exact sumsq, norm2, rms of bf16, block_bins.cuh)
// give the integer of one deposit per square, and the partial of the reducer
// the models run (SumReducer of the same Acc), when a block's threads add
// them in segments of at most `segment` squares (run_terms at most), each
// followed by a flush as the GPU's: gather_warp for every warp and lane, then
// spill_warps for every lane, then the 32 integers merged. Cases: no terms,
// -0 alone, zeros, infinities, NaN, subnormals, each bin's largest and
// smallest squares, a bin filled three times over in segments of run_terms
// (a longer segment loses the light squares' last bit), random values of
// every field in random segments, in groups and one at a time; the bins
// strided wider than the block, the memory between them left alone, every
// bin left at -0.
template <class B, class Acc>
void expect_binned_squares(const std::vector<float>& x, int threads, std::size_t segment, std::uint64_t& s,
                           const std::string& what) {
  using Integer = typename B::Integer;
  constexpr int kLanes = 32;
  constexpr double kUntouched = 12.5;
  const unsigned stride = unsigned(threads) + 32;
  std::vector<double> memory(std::size_t(B::bins) * stride, kUntouched);
  std::vector<std::int64_t> digits(std::size_t(kLanes) * Integer::digits + 1, 77);
  std::vector<typename B::State> st(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) B::place_bins(st[std::size_t(t)], memory.data() + t, stride);
  std::vector<typename Integer::State> lane(kLanes, Integer::start());
  for (int l = 0; l < kLanes; ++l) Integer::place_limbs(lane[std::size_t(l)], digits.data() + l * Integer::digits);
  auto flush = [&] {
    for (int w = 0; w < threads / kLanes; ++w)
      for (int l = 0; l < kLanes; ++l) B::gather_warp(memory.data(), stride, l, w);
    for (int l = 0; l < kLanes; ++l) B::spill_warps(memory.data(), stride, threads / kLanes, l, lane[std::size_t(l)]);
  };
  deal_in_segments<B>(x, st, segment, s, flush);
  auto got = Acc::identity();
  for (int l = 0; l < kLanes; ++l) Acc::merge(got, Integer::partial(lane[std::size_t(l)]));
  auto model = Acc::start();
  for (float v : x) add_product<Acc>(model, v, v);
  auto ref = Acc::identity();
  for (float v : x) Acc::deposit(ref, double(v) * double(v));
  Acc::carry(ref);
  expect_same_sum<Acc>(got, ref, what);
  if (testing::Test::HasFatalFailure()) return;
  expect_same_sum<Acc>(Acc::partial(model), ref, what + ": the model");
  if (testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(digits.back(), 77) << what << ": memory after the digits";
  for (std::size_t k = 0; k < memory.size(); ++k) {
    if (k % stride >= std::size_t(threads)) {
      ASSERT_EQ(memory[k], kUntouched) << what << ": memory between the bins";
    } else {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(memory[k]), std::bit_cast<std::uint64_t>(-0.0)) << what << ": a bin left";
    }
  }
}

TEST(ExactAccumulator, BinnedSquaresGiveTheSameInteger) {
  using F = Bf16Format;
  using Acc = ExactSum<F, true>;
  using B = ExactBinnedSquares<F, Acc>;
  static_assert(B::bins == 32 && B::run_terms == (1u << 23));
  // The tree kernels' segments: the most vectors of W per thread that, with
  // a tail element, keep a block's squares within run_terms.
  for (int threads = 32; threads <= 512; threads += 32)
    for (int w : {1, 4, 8}) {
      const std::int64_t v = B::segment_vectors(threads, w);
      EXPECT_LE((v * w + 1) * threads, std::int64_t(B::run_terms)) << threads << " threads, " << w;
      EXPECT_GT(((v + 1) * w + 1) * threads, std::int64_t(B::run_terms)) << threads << " threads, " << w;
    }
  auto bf = [](std::uint32_t bits) { return float(decode<F>(bits)); };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::uint64_t s = 8128;
  std::vector<std::vector<float>> cases = {
      {}, {-0.0f}, {-0.0f, 0.0f, -0.0f}, {inf}, {-inf, 1.0f}, {nan, 2.0f}, {inf, -inf}, {bf(1), bf(0x7F), bf(0x80)},
      {bf(F::max_bits), bf(F::max_bits), bf(1), -bf(F::max_bits)}};
  // Each bin's extremes: the largest value of its top field, the least
  // significant square of its bottom one.
  std::vector<float> extremes;
  for (std::uint32_t b = 0; b < 32; ++b) {
    const std::uint32_t top = std::min<std::uint32_t>(8 * b + 7, 254), bottom = 8 * b;
    extremes.push_back(bf(top << 7 | 0x7F));
    extremes.push_back(-bf(bottom << 7 | 1));
  }
  cases.push_back(extremes);
  const std::size_t specials = cases.size();
  // Bins filled three times over: seven of the bin's largest squares to one
  // whose square is an odd multiple of its quantum.
  for (std::uint32_t b : {0u, 15u, 16u, 31u}) {
    const float heavy = bf(std::min<std::uint32_t>(8 * b + 7, 254) << 7 | 0x7F), light = bf((8 * b) << 7 | 1);
    std::vector<float> c(std::size_t(B::run_terms) * 3 + 17);
    for (std::size_t k = 0; k < c.size(); ++k) c[k] = k % 8 == 7 ? light : heavy;
    cases.push_back(std::move(c));
  }
  const std::size_t filled = cases.size();
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> c(test::mix(s) % (trial % 10 == 0 ? 40000 : 700));
    for (auto& v : c) {
      v = bf(std::uint32_t(test::mix(s) % (1u << F::bits)));
      if (trial % 4 != 0 && !std::isfinite(v)) v = bf(F::max_bits);  // specials in one trial in four
    }
    cases.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const int threads = 32 * int(1 + k % 3);
    const std::size_t segment = k < specials || (k >= filled && k % 2 == 0)
                                    ? 1 + test::mix(s) % 300
                                    : (k < filled ? B::run_terms : B::run_terms - test::mix(s) % 100);
    expect_binned_squares<B, Acc>(cases[k], threads, segment, s,
                                  "case " + std::to_string(k) + " threads " + std::to_string(threads) + " segment " +
                                      std::to_string(segment));
    if (testing::Test::HasFatalFailure()) return;
  }
}

// The values of bf16 in runs on windows that follow the data, their spills
// into one integer that a block's threads share (exact_value_window.hpp;
// the tree kernels' first pass of exact mean_var of bf16, block_bins.cuh)
// give the integer of one deposit per value, and the partial of the
// accumulator the models run (Acc's checked additions), when `threads`
// states take the values in random turns, in groups of 16 and one at a
// time, every run spilled and the integer carried after each segment of
// `segment` values, as the GPU's flushes do. The words after the integer are
// left alone.
template <class V, class Acc>
void expect_value_window(const std::vector<float>& x, int threads, std::size_t segment, std::uint64_t& s,
                         const std::string& what) {
  std::vector<std::int64_t> words(V::words + 1, 77);
  V::zero_integer(words.data(), 0, 1);
  std::vector<typename V::State> st(static_cast<std::size_t>(threads), V::start());
  for (auto& t : st) V::place_integer(t, words.data());
  auto flush = [&] {
    for (auto& t : st) V::spill_run(t);
    V::carry_integer(words.data());
  };
  deal_in_segments<V>(x, st, segment, s, flush);
  ASSERT_EQ(words.back(), 77) << what << ": memory after the integer";
  auto got = V::partial_of(words.data());
  Acc::carry(got);
  auto ref = Acc::identity();
  for (float v : x) Acc::deposit(ref, double(v));
  Acc::carry(ref);
  auto model = Acc::start();
  for (float v : x) Acc::add(model, Acc::term(v));
  expect_same_sum<Acc>(got, ref, what);
  if (testing::Test::HasFatalFailure()) return;
  expect_same_sum<Acc>(Acc::partial(model), ref, what + ": the model");
}

TEST(ExactAccumulator, ValueWindowsGiveTheSameInteger) {
  using F = Bf16Format;
  using Acc = ExactSum<F, false>;
  using V = ExactValueWindow<F, Acc>;
  static_assert(V::kWidth == 36 && V::kHeadroom == 9 && V::run_terms == 1024);
  auto bf = [](std::uint32_t bits) { return float(decode<F>(bits)); };
  auto p2 = [](int e) { return float(std::ldexp(1.0, e)); };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::uint64_t s = 6174;
  std::vector<std::vector<float>> cases = {
      {},
      {-0.0f},
      {-0.0f, 0.0f, -0.0f},
      {inf},
      {-inf, 1.0f},
      {nan, 2.0f},
      {inf, -inf},
      {1.0f, -1.0f},
      {bf(1), bf(0x7F), bf(0x80), -bf(1)},
      {bf(F::max_bits), bf(F::max_bits), bf(1), -bf(F::max_bits)},
      // The window's binades from a first value 2^0: 2^-26 .. 2^9, so in,
      // in, below; then above, moving them to 2^-16 .. 2^19: in, below.
      {1.0f, p2(9) * 1.9921875f, p2(-26), p2(-27) * 1.9921875f, -p2(10), p2(-16), p2(-17) * 1.5f},
      // Rising (each moves the window) and falling (each below it).
      {p2(-120), p2(-90), p2(-60), p2(-30), p2(0), p2(30), p2(60), p2(90), p2(120)},
      {p2(120), p2(90), p2(60), p2(30), p2(0), -p2(-30), p2(-60), p2(-90), p2(-120), bf(1)},
  };
  const std::size_t specials = cases.size();
  // Runs filled three times over with the window's largest values and its
  // least significant bit: 2^9 (1 + 127/128) and 2^-26 + 2^-33 (the grid
  // 2^S); again with 2^-27 + 2^-34, just below the window (in a run, it
  // would round).
  for (const float light : {p2(-26) * 1.0078125f, p2(-27) * 1.0078125f}) {
    std::vector<float> c(std::size_t(V::run_terms) * 3 + 17);
    for (std::size_t k = 0; k < c.size(); ++k) c[k] = k == 0 ? 1.0f : (k % 8 == 7 ? light : p2(9) * 1.9921875f);
    cases.push_back(std::move(c));
  }
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> c(test::mix(s) % (trial % 10 == 0 ? 40000 : 700));
    const bool everywhere = trial % 2 == 0;  // every field, else mostly 2^-4 .. 2^4 and a few far below
    for (auto& v : c) {
      if (everywhere) {
        v = bf(std::uint32_t(test::mix(s) % (1u << F::bits)));
        if (trial % 4 != 0 && !std::isfinite(v)) v = bf(F::max_bits);  // specials in one trial in four
      } else {
        const int e = test::mix(s) % 64 == 0 ? int(test::mix(s) % 100) - 130 : int(test::mix(s) % 9) - 4;
        v = bf(std::uint32_t(test::mix(s) & 0x807F) | std::uint32_t(std::max(e + 127, 0)) << 7);
      }
    }
    cases.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const bool filling = k >= specials && k < specials + 2;
    const int threads = filling ? 1 : 1 + int(k % 5) * 7;  // one thread fills the runs
    const std::size_t segment =
        filling ? std::size_t(1) << 23 : (k < specials || k % 2 == 0 ? 1 + test::mix(s) % 3000 : std::size_t(1) << 23);
    expect_value_window<V, Acc>(cases[k], threads, segment, s,
                                "case " + std::to_string(k) + " threads " + std::to_string(threads) + " segment " +
                                    std::to_string(segment));
    if (testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace ulpscope
