// The exact scan's fixed-point accumulators (kernels/scan/fixed_point_sum.hpp,
// wide_fixed_point_sum.hpp) run on the host as a kernel's threads run them:
// each thread adds its elements, the threads' partials are merged in the
// warp's Kogge-Stone order (scan_order.hpp), and each thread adds its
// elements again from its exclusive prefix, reading total() after every
// addition. Every prefix must have the bits of the MPFR-checked reference
// (reference/exact_prefix.hpp's cumsum_rounded), on adversarial inputs
// (cancellation, every binade, ties, sticky bits, overflow and back,
// specials, signed zeros) and random ones; merging in any grouping gives the
// same integer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "formats/binary_format.hpp"
#include "formats/small_float.hpp"
#include "kernels/scan/exact_double_run.hpp"
#include "kernels/scan/fixed_point_sum.hpp"
#include "kernels/scan/scan_order.hpp"
#include "kernels/scan/wide_fixed_point_sum.hpp"
#include "reference/exact_prefix.hpp"

namespace ulpscope {
namespace fixed_point_test {

// One accumulator with its input storage T and output format.
template <class R, class T, Dtype OutDtype>
struct Case {
  using Acc = R;
  using Storage = T;
  static constexpr Dtype out = OutDtype;
};

using Bf16Exact = Case<scan::WideFixedPointSum<Bf16Format, Bf16Format>, Bf16, Dtype::bf16>;
using Fp32Exact = Case<scan::WideFixedPointSum<Fp32Format, Fp32Format>, float, Dtype::fp32>;
using Fp16Exact = Case<scan::FixedPointSum<Fp16Format, Fp16Format>, Fp16, Dtype::fp16>;
using E4M3Exact = Case<scan::FixedPointSum<Fp8E4M3Format, Fp32Format>, Fp8E4M3, Dtype::fp32>;
using E5M2Exact = Case<scan::FixedPointSum<Fp8E5M2Format, Fp32Format>, Fp8E5M2, Dtype::fp32>;

template <class T>
struct FormatOfT {
  using type = typename T::format;
};
template <>
struct FormatOfT<float> {
  using type = Fp32Format;
};
template <class T>
using FormatOf = typename FormatOfT<T>::type;

template <class T>
T of_double(double x) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(x);
  else return T(x);
}
template <class T>
double as_double(T x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else return to_double(x);
}
template <class T>
T of_bits(std::uint32_t b) {
  if constexpr (std::is_same_v<T, float>) return detail::float_from_bits(b);
  else return T::from_bits(b);
}

bool same_bits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The same integer and flags.
template <class P, class = void>
struct HasWords : std::false_type {};
template <class P>
struct HasWords<P, std::void_t<decltype(std::declval<P>().w)>> : std::true_type {};
template <class P>
bool same_state(const P& a, const P& b) {
  if constexpr (HasWords<P>::value) return std::memcmp(a.w, b.w, sizeof a.w) == 0 && a.flags == b.flags;
  else return a.lo == b.lo && a.hi == b.hi && a.flags == b.flags;
}

template <class R>
typename R::Partial merged(typename R::Partial a, const typename R::Partial& b) {
  R::merge(a, b);
  return a;
}

// How often exact_double_run.hpp's shortcut ran, of how many threads.
struct ShortcutCounts {
  int folds = 0, runs = 0, threads = 0;
};

// Every prefix's total() as one warp of `threads` lanes computes them, each
// lane owning `per` consecutive elements of each tile, tiles chained by a
// carry (the warp shape's tile loop). With K > 0 (then per == K), each
// thread first tries the kernels' double shortcut (exact_double_run.hpp) for
// its aggregate and for its outputs, counted in `counts`, and takes the
// integer path where it declines.
template <class R, int K = 0>
std::vector<double> thread_order_prefixes(const std::vector<float>& x, int threads, int per,
                                          ShortcutCounts* counts = nullptr) {
  using P = typename R::Partial;
  std::vector<double> out(x.size());
  const std::size_t tile = std::size_t(threads) * per;
  P carry = R::identity();
  bool has_carry = false;
  // The thread's K items as the kernels hold them (zeros past the end).
  auto held = [&](std::size_t first, float (&r)[K > 0 ? K : 1]) {
    int items = 0;
    for (int j = 0; j < K; ++j) {
      r[j] = first + j < x.size() ? x[first + j] : 0.0f;
      items += first + j < x.size() ? 1 : 0;
    }
    return items;
  };
  for (std::size_t t0 = 0; t0 < x.size(); t0 += tile) {
    std::vector<P> v(std::size_t(threads), R::identity()), exclusive(v);
    std::vector<P> totals(std::size_t(threads / 32), R::identity());
    std::vector<char> has(static_cast<std::size_t>(threads), 0);
    auto items = [&](int t, auto f) {
      for (std::size_t i = t0 + std::size_t(t) * per; i < std::min(x.size(), t0 + std::size_t(t + 1) * per); ++i) f(i);
    };
    for (int t = 0; t < threads; ++t) {
      if constexpr (K > 0) {
        float r[K];
        const std::size_t first = t0 + std::size_t(t) * K;
        if (first < x.size() && scan::double_run::fold<R>(r, held(first, r), v[std::size_t(t)])) {
          ++counts->folds;
          continue;
        }
      }
      auto st = R::start();
      items(t, [&](std::size_t i) { R::add(st, R::term(x[i])); });
      v[std::size_t(t)] = R::partial(st);
    }
    scan::warp_block_scan(v.data(), totals.data(), exclusive.data(), reinterpret_cast<bool*>(has.data()), threads,
                          [](const P& a, const P& b) { return merged<R>(a, b); });
    for (int t = 0; t < threads; ++t) {
      P seed = R::identity();
      bool has_seed = has_carry;
      if (has_carry) seed = carry;
      if (has[std::size_t(t)]) {
        seed = has_carry ? merged<R>(carry, exclusive[std::size_t(t)]) : exclusive[std::size_t(t)];
        has_seed = true;
      }
      if constexpr (K > 0) {
        const std::size_t first = t0 + std::size_t(t) * K;
        if (first >= x.size()) continue;
        ++counts->threads;
        float r[K];
        using Bits = std::conditional_t<std::is_same_v<typename R::out_format, Fp32Format>, float, std::uint16_t>;
        Bits bits[K];
        const int n = held(first, r);
        if (scan::double_run::run<R>(r, n, seed, has_seed, bits)) {
          ++counts->runs;
          for (int j = 0; j < n; ++j) {
            if constexpr (std::is_same_v<Bits, float>) out[first + j] = bits[j];
            else out[first + j] = decode<typename R::out_format>(bits[j]);
          }
          continue;
        }
      }
      auto st = has_seed ? seed : R::start();
      items(t, [&](std::size_t i) {
        R::add(st, R::term(x[i]));
        out[i] = double(R::total(R::partial(st)));
      });
    }
    carry = has_carry ? merged<R>(carry, v[std::size_t(threads - 1)]) : v[std::size_t(threads - 1)];
    has_carry = true;
  }
  return out;
}

template <class C>
void expect_reference_bits(const std::vector<typename C::Storage>& values, const std::string& what,
                           ShortcutCounts* counts = nullptr) {
  using R = typename C::Acc;
  std::vector<float> x;
  for (const auto& v : values) x.push_back(static_cast<float>(as_double(v)));
  const std::vector<double> want = cumsum_rounded(TypedArray(values), OutputFormat{C::out});
  ASSERT_EQ(want.size(), x.size());
  // Serially (one running state), and in three thread orders.
  std::vector<double> serial(x.size());
  auto st = R::start();
  for (std::size_t i = 0; i < x.size(); ++i) {
    R::add(st, R::term(x[i]));
    serial[i] = double(R::total(R::partial(st)));
  }
  const std::vector<std::pair<int, int>> orders = {{32, 1}, {32, 16}, {64, 3}};
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_TRUE(same_bits(serial[i], want[i])) << what << " serial, prefix " << i << ": " << serial[i] << " vs "
                                               << want[i];
  for (const auto& [threads, per] : orders) {
    const std::vector<double> got = thread_order_prefixes<R>(x, threads, per);
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(same_bits(got[i], want[i])) << what << " threads=" << threads << " per=" << per << ", prefix " << i
                                              << ": " << got[i] << " vs " << want[i];
  }
  // The kernels' double shortcut where it runs, at their K of 16 and 32.
  ShortcutCounts c16, c32;
  const std::vector<double> got16 = thread_order_prefixes<R, 16>(x, 32, 16, &c16);
  const std::vector<double> got32 = thread_order_prefixes<R, 32>(x, 64, 32, &c32);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(same_bits(got16[i], want[i])) << what << " shortcut K=16, prefix " << i << ": " << got16[i]
                                              << " vs " << want[i];
    ASSERT_TRUE(same_bits(got32[i], want[i])) << what << " shortcut K=32, prefix " << i << ": " << got32[i]
                                              << " vs " << want[i];
  }
  if (counts != nullptr) *counts = c16;
}

template <class C>
class FixedPointScan : public ::testing::Test {};
using AllExact = ::testing::Types<Bf16Exact, Fp32Exact, Fp16Exact, E4M3Exact, E5M2Exact>;
TYPED_TEST_SUITE(FixedPointScan, AllExact);

template <class C>
class WideFixedPointScan : public ::testing::Test {};
using WideExact = ::testing::Types<Bf16Exact, Fp32Exact>;
TYPED_TEST_SUITE(WideFixedPointScan, WideExact);

// The format's landmarks as In values.
template <class T>
struct Landmarks {
  using F = FormatOf<T>;
  static double max() { return F::max_finite(); }
  static double least() { return F::min_subnormal(); }
  static double min_normal() { return F::min_normal(); }
  static double ulp_of_one() { return F::pow2(-F::man_bits); }
  static double ulp_at_max() { return F::pow2(F::emax - F::man_bits); }
};

TYPED_TEST(WideFixedPointScan, AdversarialPrefixesAreTheReferences) {
  using T = typename TypeParam::Storage;
  using L = Landmarks<T>;
  auto v = [](std::initializer_list<double> d) {
    std::vector<T> r;
    for (double e : d) r.push_back(of_double<T>(e));
    return r;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const double big = as_double(of_double<T>(1e38));
  const double u = L::ulp_of_one();
  struct Named {
    std::string name;
    std::vector<T> x;
  };
  std::vector<Named> cases = {
      {"cancellation", v({big, 1.0, -big, -1.0, big, L::least(), -big})},
      {"extremes", v({L::max(), -L::max(), L::least(), -L::least(), L::max(), L::least(), -L::max()})},
      // 1 + u/2 is a tie (to even: 1), one least subnormal more or less decides it.
      {"ties and sticky", v({1.0, u / 2, L::least(), -L::least(), -L::least(), u / 2, u / 2})},
      {"negative ties", v({-1.0, -u / 2, -L::least(), L::least(), L::least(), -u / 2})},
      {"tie at the top", v({L::max() / 2, L::ulp_at_max() / 4, L::least(), -L::least(), -L::least()})},
      // The largest finite plus half its ulp ties to the even side: 2^128, an infinity.
      {"overflow and back",
       v({L::max(), L::ulp_at_max() / 2, -L::ulp_at_max() / 2, L::ulp_at_max() / 4, L::max(), -L::max(), -L::max(),
          -L::max(), L::max(), L::least()})},
      {"next binade", v({2.0 - u, u / 2, u / 4, -u / 4, -u / 2, 1.0 - u / 2, u / 4})},
      {"subnormal results", v({L::least(), L::least(), 3 * L::least(), L::min_normal(), -L::min_normal(),
                               -5 * L::least(), -L::least()})},
      {"signed zeros", v({-0.0, -0.0, 0.0, -0.0, -L::least(), L::least(), -0.0})},
      {"all negative zeros", v({-0.0, -0.0, -0.0})},
      {"infinities", v({1.0, inf, -L::max(), -L::max(), 2.0})},
      {"negative infinity", v({1.0, -inf, L::max(), L::max()})},
      {"both infinities", v({inf, 1.0, -inf, 1.0})},
      {"nan", v({1.0, std::numeric_limits<double>::quiet_NaN(), 2.0})},
  };
  {
    Named every{"every binade", {}};
    std::mt19937 g(11);
    for (std::uint32_t field = 0; field < 255; ++field)
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t man = std::uint32_t(g()) & FormatOf<T>::man_mask;
        const std::uint32_t sign = (g() & 1) ? FormatOf<T>::sign_mask : 0u;
        every.x.push_back(of_bits<T>(sign | (field << FormatOf<T>::man_bits) | man));
      }
    cases.push_back(every);
  }
  // A tie at Out's precision decided by one bit far below it, that bit the
  // lowest or the highest of each 32-bit word of the integer in turn (where
  // it is below the tie): the sticky bit wherever the window falls.
  using R = typename TypeParam::Acc;
  for (double base : {1.0, std::ldexp(1.0, 100)})
    for (int j = 0; j < R::kWords; ++j)
      for (int bit : {0, 31}) {
        const double s = std::ldexp(1.0, R::kLow + 32 * j + bit), half = base * u / 2;
        if (s >= half / 4) continue;
        for (double sign : {1.0, -1.0})
          cases.push_back({"sticky bit " + std::to_string(32 * j + bit) + " under a tie at " + std::to_string(base),
                           v({sign * base, sign * half, sign * s, -sign * s, -sign * s, sign * s, sign * half})});
      }
  {
    Named tiny{"many least subnormals", {}};
    for (int i = 0; i < 5000; ++i) tiny.x.push_back(of_double<T>(L::least()));
    for (int i = 0; i < 100; ++i) tiny.x.push_back(of_double<T>(1.0));
    for (int i = 0; i < 5000; ++i) tiny.x.push_back(of_double<T>(-L::least()));
    cases.push_back(tiny);
  }
  {
    Named alternating{"alternating signs", {}};
    for (int i = 0; i < 3000; ++i) {
      const double m = 1.0 + (i % 7) * u;
      alternating.x.push_back(of_double<T>((i % 2 ? -1.0 : 1.0) * std::ldexp(m, (i * 37) % 250 - 125)));
    }
    cases.push_back(alternating);
  }
  for (const auto& c : cases) expect_reference_bits<TypeParam>(c.x, c.name);
}

// Random patterns of the input format (specials now and then) and normal(1,
// 3) values, at sizes around the warp and the tile.
TYPED_TEST(FixedPointScan, RandomPrefixesAreTheReferences) {
  using T = typename TypeParam::Storage;
  using F = FormatOf<T>;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(4097)})
    for (bool specials : {false, true}) {
      std::mt19937_64 g(n * 2 + specials);
      std::normal_distribution<double> d(1.0, 3.0);
      std::vector<T> x;
      for (std::size_t i = 0; i < n; ++i) {
        if (g() % 2) {
          x.push_back(of_double<T>(d(g)));
          continue;
        }
        T t = of_bits<T>(std::uint32_t(g()) & ((F::bits == 32 ? 0u : 1u << F::bits) - 1u));
        if (!specials && !std::isfinite(as_double(t))) t = of_double<T>(-2.5);
        x.push_back(t);
      }
      expect_reference_bits<TypeParam>(x, "n=" + std::to_string(n) + (specials ? " with specials" : ""));
    }
}

// exact_double_run.hpp's cut of a seed with bits far below the thread's
// items (at K = 16, thread 0 holds elements 0 .. 15, thread 1 the next 16,
// thread 2 the last 16): the remainder L only breaks ties (a prefix just
// above or below a midpoint of Out, where a tie would go the other way) and
// the shortcut runs; where the items cancel the seed down to L's size, the
// outputs are too small for the cut and the thread takes the integer path.
// Both ways the bits are the reference's.
TYPED_TEST(WideFixedPointScan, ShortcutCutsTheSeedBelowItsItems) {
  using T = typename TypeParam::Storage;
  using L = Landmarks<T>;
  const double tiny = std::ldexp(1.0, -100), u = L::ulp_of_one();
  auto at = [](std::initializer_list<std::pair<int, double>> placed) {
    std::vector<T> r(48, of_double<T>(0.0));
    for (const auto& [i, v] : placed) r[std::size_t(i)] = of_double<T>(v);
    return r;
  };
  struct Named {
    std::string name;
    std::vector<T> x;
    int shortcuts;  // threads expected to run in double, of 3
  };
  const std::vector<Named> cases = {
      {"just above a tie", at({{0, tiny}, {16, 1.0}, {17, 1.0 + u}}), 3},
      {"just below a tie", at({{0, -tiny}, {16, 1.0}, {17, 1.0 + 3 * u}}), 3},
      {"a negative seed", at({{0, -tiny}, {16, -1.0}, {32, 2.0}, {33, 1.0 + 3 * u}}), 3},
      {"cancelled down to the remainder", at({{0, tiny}, {16, 1048576.0}, {32, -1048576.0}}), 2},
  };
  for (const auto& c : cases) {
    ShortcutCounts counts;
    expect_reference_bits<TypeParam>(c.x, c.name, &counts);
    EXPECT_EQ(counts.threads, 3) << c.name;
    EXPECT_EQ(counts.runs, c.shortcuts) << c.name;
  }
}

// On ordinary data (normal and uniform values, rows of a few thousand) the
// shortcut runs for nearly every thread, so the kernels' speed is its speed;
// on random bit patterns with specials it must decline for some.
TYPED_TEST(FixedPointScan, ShortcutRunsOnOrdinaryData) {
  using T = typename TypeParam::Storage;
  using F = FormatOf<T>;
  std::mt19937_64 g(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int kind = 0; kind < 2; ++kind) {
    std::vector<T> x;
    for (int i = 0; i < 8192; ++i) x.push_back(of_double<T>(kind == 0 ? normal(g) : uniform(g)));
    ShortcutCounts counts;
    expect_reference_bits<TypeParam>(x, kind == 0 ? "normal" : "uniform", &counts);
    EXPECT_GE(counts.runs, counts.threads * 9 / 10) << (kind == 0 ? "normal" : "uniform");
    EXPECT_GE(counts.folds, counts.threads * 9 / 10) << (kind == 0 ? "normal" : "uniform");
  }
  std::vector<T> wild;
  for (int i = 0; i < 4096; ++i) wild.push_back(of_bits<T>(std::uint32_t(g()) & ((F::bits == 32 ? 0u : 1u << F::bits) - 1u)));
  ShortcutCounts counts;
  expect_reference_bits<TypeParam>(wild, "random patterns", &counts);
  EXPECT_LT(counts.runs, counts.threads);
}

// Partials of the same terms merged in any grouping: the same integer and
// flags (the same words), so the same total.
TYPED_TEST(FixedPointScan, MergeOrderDoesNotMatter) {
  using T = typename TypeParam::Storage;
  using R = typename TypeParam::Acc;
  using P = typename R::Partial;
  std::mt19937_64 g(3);
  std::vector<float> x;
  for (int i = 0; i < 600; ++i) {
    const T t = of_bits<T>(std::uint32_t(g()) & ((FormatOf<T>::bits == 32 ? 0u : 1u << FormatOf<T>::bits) - 1u));
    x.push_back(std::isfinite(as_double(t)) ? static_cast<float>(as_double(t)) : 0.5f);
  }
  std::vector<P> parts;
  for (std::size_t i = 0; i < x.size();) {
    auto st = R::start();
    for (std::size_t k = 1 + g() % 40; k > 0 && i < x.size(); --k, ++i) R::add(st, R::term(x[i]));
    parts.push_back(R::partial(st));
  }
  P left = R::identity(), right = R::identity();
  for (const P& p : parts) left = merged<R>(left, p);
  for (std::size_t k = parts.size(); k > 0; --k) right = merged<R>(parts[k - 1], right);
  std::vector<P> tree = parts;
  while (tree.size() > 1) {
    std::vector<P> next;
    for (std::size_t k = 0; k + 1 < tree.size(); k += 2) next.push_back(merged<R>(tree[k], tree[k + 1]));
    if (tree.size() % 2) next.push_back(tree.back());
    tree = next;
  }
  for (const P& p : {right, tree[0]}) {
    EXPECT_TRUE(same_state(p, left));
    EXPECT_TRUE(same_bits(double(R::total(p)), double(R::total(left))));
  }
}

// The headroom: 2^40 copies of the largest finite value do not wrap around
// (an infinity of the right sign); as many negated cancel them to +0; one
// more term is then exact.
TYPED_TEST(WideFixedPointScan, HeadroomHoldsTwoToTheFortyLargestValues) {
  using R = typename TypeParam::Acc;
  using P = typename R::Partial;
  using L = Landmarks<typename TypeParam::Storage>;
  P pos = R::start(), neg = R::start();
  R::add(pos, float(L::max()));
  R::add(neg, float(-L::max()));
  for (int d = 0; d < 40; ++d) {
    pos = merged<R>(pos, pos);
    neg = merged<R>(neg, neg);
    ASSERT_EQ(double(R::total(pos)), std::numeric_limits<double>::infinity()) << "2^" << d + 1 << " terms";
    ASSERT_EQ(double(R::total(neg)), -std::numeric_limits<double>::infinity()) << "2^" << d + 1 << " terms";
  }
  P zero = merged<R>(pos, neg);
  EXPECT_TRUE(same_bits(double(R::total(zero)), 0.0));
  R::add(zero, float(L::least()));
  EXPECT_EQ(double(R::total(zero)), L::least());
}

}  // namespace fixed_point_test
}  // namespace ulpscope
